#pragma once
/// @file ledger.hpp
/// A privacy-budget ledger: an append-only file with one JSON object per line that accounts for the
/// privacy loss spent on ONE confidential data set, so that a release that would exceed the
/// ledger's budget is refused before anything of it is delivered, whichever front end (the `dpmu` command,
/// the R or the Python package) makes it. Format and guarantees: docs/privacy.md, "The ledger".
///
/// The file. Line 1 is the header, written when the ledger is created (`dpmu ledger init`, or the
/// first release with a budget): {"dpmu_ledger": 2, "created", "budget": {"epsilon", "delta"} or
/// {"rho"}, "accountant", "key_id"} ("accountant" absent: basic, as every ledger of dpmu before the
/// accountants). Every later line is a release {"time", "command", "data_file",
/// "data_fingerprint", "epsilon", "delta", "released", "mechanism"} ("mechanism" absent in entries
/// of an earlier dpmu: such a release is accounted by basic composition) or a budget change
/// {"time", "budget_change": {"epsilon", "delta"} or {"rho"}, "reason"}. The budget in force is
/// the header's, replaced by each budget change in order: changing a budget is an explicit,
/// recorded act (`dpmu ledger set-budget`); a per-call budget may only be lower than it.
///
/// Totals. A ledger stands for one data set: its budget bounds the total privacy loss of EVERY
/// release charged to it, whatever file, data frame or column selection each came from, under the
/// ledger's accountant (all hold for mechanisms chosen adaptively; docs/privacy.md "Accountants"):
///  * basic (the default, conservative): Σ ε ≤ budget ε and Σ δ ≤ budget δ;
///  * tight: ε at the budget's δ by exact Gaussian-DP composition of the Gaussian releases, the
///    optimal composition of the pure ε-DP ones (Kairouz, Oh & Viswanath), the budget's δ split
///    between the two families optimally, plus basic composition of every other release
///    (core::tight_composition) ≤ budget ε;
///  * zcdp: Σ ρ ≤ budget ρ (Gaussian μ²/2, pure ε²/2; a release with neither cannot be charged).
/// Charging releases of different data to one ledger can only over-count.
///
/// Fingerprints. Each release line records a keyed fingerprint of exactly the bytes analysed:
/// HMAC-SHA256 under a 256-bit key drawn from the kernel CSPRNG when the ledger is created and kept
/// in a separate file FILE.key (mode 0600). The header holds only the key's id (a hash prefix).
/// Someone who sees the ledger but not the key cannot confirm a guess of the data (an unkeyed
/// SHA-256 would let anyone who knows all rows but one test guesses of the last).
///
/// Concurrency and crashes. A release holds a LedgerLock (flock(2), exclusive) from its check to
/// its append, so concurrent releases on one ledger serialize and cannot overspend together. A line
/// is written with one write(2) to an O_APPEND descriptor and fsync()ed; a line that is not a
/// complete, valid entry (a crash mid-write, a hand edit), a missing header (a ledger of dpmu < 0.2
/// or another file), a missing or foreign key file make the ledger unusable until fixed: it is
/// never silently skipped or reset. flock may not lock across machines on network file systems;
/// keep a ledger on a local disk or use it from one machine.

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dpmu/core/composition.hpp"
#include "dpmu/runtime/sha256.hpp"

namespace dpmu::runtime {

/// A privacy budget: total epsilon (> 0, finite) and total delta (in [0, 1), default 0), or a zCDP
/// budget rho (> 0, finite; epsilon and delta are then unused).
struct Budget {
  double epsilon = 0.0;
  double delta = 0.0;
  double rho = 0.0;  ///< > 0: a zCDP budget (Bun & Steinke 2016), checked by the zcdp accountant
  bool is_zcdp() const { return rho > 0.0; }
};

/// Parse "EPS", "EPS,DELTA" (e.g. "2" or "2,1e-6") or "rho=RHO" (e.g. "rho=0.5").
/// @throws std::invalid_argument with a message naming --budget and what is expected.
Budget parse_budget(std::string_view text);

/// The budget as text, as parse_budget reads it ("2,1e-06" or "rho=0.5").
std::string budget_text(const Budget& budget);

/// How a ledger adds up its releases (docs/privacy.md, "Accountants"), chosen when it is created
/// and recorded in its header.
enum class Accountant {
  basic,  ///< Σ ε, Σ δ: valid for any releases; the default
  tight,  ///< ε at the budget's δ: GDP for Gaussian, KOV for pure, basic for the rest (mixed by a δ split)
  zcdp,   ///< Σ ρ: for a budget in ρ
};

/// "basic", "tight" or "zcdp".
std::string accountant_name(Accountant accountant);
/// One line saying what the accountant computes (printed with every total).
std::string accountant_description(Accountant accountant);
/// Parse "basic", "tight" or "zcdp". @throws std::invalid_argument naming --accountant.
Accountant parse_accountant(std::string_view text);
/// The accountant a budget implies when none is chosen: zcdp for a ρ budget, else basic.
Accountant default_accountant(const Budget& budget);

/// What a release's noise was, as recorded in its ledger entry (from core::PrivacyGuarantee), so
/// that an accountant can use more than (ε, δ).
struct MechanismRecord {
  std::string kind;              ///< "laplace", "gaussian", "wishart", "report-noisy-min", ...
  std::string sensitivity_name;  ///< "l1_sensitivity", "l2_sensitivity", "wishart_row_norm_squared"
  double sensitivity = 0.0;
  /// Laplace b; Gaussian σ (the analytic-Gaussian σ for (ε, δ, sensitivity)); 0: none.
  double noise_scale = 0.0;
  std::string neighbouring;  ///< the neighbouring relation
  std::string description;   ///< what noise is added to what
};

/// One release recorded in a ledger (one JSON object per line).
struct LedgerEntry {
  std::string time;              ///< UTC, ISO 8601 (filled by append if empty)
  std::string command;           ///< e.g. "dpmu bma", "R dpmu::bma", "Python dpmu.test"
  std::string data_file;         ///< the data's label: a path as given, or a data-frame name
  std::string data_fingerprint;  ///< keyed fingerprint (HMAC-SHA256, 64 hex digits) of the bytes analysed
  double epsilon = 0.0;
  double delta = 0.0;
  nlohmann::json released;  ///< what was released (field names), small
  /// The mechanism (entries of an earlier dpmu have none: basic composition accounts for them).
  /// A Gaussian record must agree with (ε, δ): its μ = sensitivity/noise_scale has δ_μ(ε) ≤ δ.
  std::optional<MechanismRecord> mechanism;
};

/// How the tight and zcdp accountants treat an entry.
enum class EntryFamily {
  gaussian,     ///< a "gaussian" record: μ-GDP with μ = sensitivity/noise_scale
  pure,         ///< a record and δ = 0: ε-DP
  approximate,  ///< no record, or another (ε, δ > 0) mechanism: basic composition
  none,         ///< ε = δ = 0: no privacy loss
};
EntryFamily entry_family(const LedgerEntry& entry);
/// μ of a Gaussian entry (sensitivity/noise_scale). @throws std::invalid_argument otherwise.
double entry_mu(const LedgerEntry& entry);

/// A recorded change of the budget.
struct BudgetChange {
  std::string time;
  Budget budget;
  std::string reason;
};

/// The first line of a ledger.
struct LedgerHeader {
  int version = 2;
  std::string created;
  Budget budget;                              ///< the budget the ledger was created with
  std::string key_id;                         ///< first 16 hex digits of SHA-256 of the key file's contents
  Accountant accountant = Accountant::basic;  ///< how the budget is checked (absent in the file: basic)
};

/// Privacy loss under basic composition.
struct LedgerTotal {
  double epsilon = 0.0;                 ///< sum of the releases' epsilons
  double delta = 0.0;                   ///< sum of the releases' deltas
  std::size_t releases = 0;             ///< number of releases
  std::vector<std::string> data_files;  ///< distinct labels seen, in order of first appearance
};

/// A whole ledger as read.
struct Ledger {
  LedgerHeader header;
  std::vector<LedgerEntry> entries;
  std::vector<BudgetChange> budget_changes;
  /// The budget in force: the last budget change, else the header's.
  Budget budget() const;
  /// The basic-composition total over every release.
  LedgerTotal total() const;
  Accountant accountant() const { return header.accountant; }
};

/// The tight total of `entries` at `delta` (core::tight_composition over the entries' families).
core::CompositionTotal tight_total(const std::vector<LedgerEntry>& entries, double delta);

/// The zCDP total ρ of `entries`, or nullopt (and `why` says which entry) if one has no zCDP bound
/// (an (ε, δ > 0) release that is not Gaussian, or one without a mechanism record).
std::optional<double> zcdp_total(const std::vector<LedgerEntry>& entries, std::string* why = nullptr);

/// The total of `entries` under `accountant` as JSON: {"accountant": description, "epsilon",
/// "delta"} (tight: at `delta`, with the split; ε null when no split reaches δ) or {"accountant",
/// "rho"} (zcdp; null with "why" when it does not apply). Never throws for valid entries.
nlohmann::ordered_json accountant_total_json(Accountant accountant, const std::vector<LedgerEntry>& entries,
                                             double delta);

/// Totals per data fingerprint (for display: which releases used the same bytes). Never throws.
std::map<std::string, LedgerTotal> ledger_totals(const std::vector<LedgerEntry>& entries);

/// The key file of a ledger: PATH.key.
std::string ledger_key_path(const std::string& path);

/// Create a ledger at `path` with `budget` and a fresh key in ledger_key_path(path) (mode 0600).
/// @throws std::invalid_argument if `path` exists and is not empty (a ledger is never reset) or
///   the budget is invalid; std::runtime_error naming the file if it cannot be written.
/// `accountant` (default: default_accountant(budget)) is recorded in the header; a ρ budget goes with
/// the zcdp accountant only, and an (ε, δ) budget with basic or tight.
void init_ledger(const std::string& path, const Budget& budget, std::optional<Accountant> accountant = std::nullopt);

/// Read a ledger (under a shared flock, so a concurrent append is never seen half-written). A line
/// that is not a complete, valid header, entry or budget change (bad JSON, a missing or mistyped
/// field, a fingerprint that is not 64 lowercase hex digits, negative or non-finite epsilon/delta,
/// an empty line, a last line without its newline), or a first line that is not a header, is an
/// error; unknown extra fields are ignored. Do not call it for a file that this thread has locked
/// (it would wait forever): use LedgerLock::ledger().
/// @throws std::runtime_error "ledger FILE line N: ... (the ledger is damaged; fix or restore it,
///   it is never reset)"; "ledger FILE does not exist ..." for a missing or empty file.
Ledger read_ledger(const std::string& path);

/// Thrown when a release would exceed the budget. what() says spent, requested and the budget.
struct BudgetExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Refuse a release of (epsilon, delta) that would take `spent` past `budget` (up to a relative
/// tolerance of 1e-12 for rounding). `per_call_budget` says the budget is a call's --budget.
/// Basic composition. @throws BudgetExceeded naming the ledger `path`, spent, requested and the budget.
void check_release_fits(const Budget& budget, const LedgerTotal& spent, double epsilon, double delta,
                        const std::string& path, bool per_call_budget);

/// Refuse `release` if `spent` plus it would exceed `budget` under `accountant` (relative tolerance
/// 1e-12). @throws BudgetExceeded naming the ledger, the accountant, the totals before and after
/// and the budget; std::invalid_argument if the budget's form does not suit the accountant.
void check_release_fits(Accountant accountant, const Budget& budget, const std::vector<LedgerEntry>& spent,
                        const LedgerEntry& release, const std::string& path, bool per_call_budget);

/// An exclusive lock on a ledger for the duration of one release: open FILE, flock(LOCK_EX)
/// (blocking), read it and its key. A missing or empty FILE is created with `create_budget` (the
/// budget is then fixed); without one it is an error that says how to create the ledger.
/// check() refuses a release that would take the total past the budget in force (or a lower
/// per-call budget); append() writes one line with a single write(2) to an O_APPEND descriptor
/// and fsync()s it.
///
/// Use in a release (api::ReleaseCharge): validate everything and check the budget; compute the
/// release in memory; then `LedgerLock lock(path, budget)`; `fingerprint(bytes)` of the bytes
/// analysed; `check(...)` and `append(...)`; unlock; then deliver the release. Not copyable or movable; the lock is
/// released by the destructor.
class LedgerLock {
 public:
  /// @throws std::runtime_error naming the file if it cannot be opened, created, locked or read,
  ///   is damaged or foreign (as read_ledger), or its key file is missing or does not match.
  /// `create_accountant` is recorded when this lock creates the ledger (default:
  /// default_accountant(*create_budget)).
  explicit LedgerLock(const std::string& path, const std::optional<Budget>& create_budget = std::nullopt,
                      std::optional<Accountant> create_accountant = std::nullopt);
  ~LedgerLock();
  LedgerLock(const LedgerLock&) = delete;
  LedgerLock& operator=(const LedgerLock&) = delete;

  const std::string& path() const { return path_; }
  /// The ledger: as read when the lock was taken, plus what was appended through this lock.
  const Ledger& ledger() const { return ledger_; }
  const std::vector<LedgerEntry>& entries() const { return ledger_.entries; }
  /// True if this lock created the ledger.
  bool created() const { return created_; }

  /// The keyed fingerprint (HMAC-SHA256 under the ledger's key) of `bytes`.
  std::string fingerprint(std::string_view bytes) const;

  /// Refuse a release of (epsilon, delta) with its `mechanism` record if the ledger's total plus it
  /// would exceed the budget in force, or `per_call` when given, under the ledger's accountant (up
  /// to a relative tolerance of 1e-12 for rounding).
  /// @throws BudgetExceeded (spent, requested, budget in what()); std::invalid_argument if epsilon
  ///   or delta is negative or non-finite, the record is invalid, or `per_call` is invalid, of the
  ///   other form (ρ or (ε, δ)) or above the budget in force (a per-call budget may only be lower;
  ///   change the ledger's with `dpmu ledger set-budget`).
  void check(double epsilon, double delta, const std::optional<Budget>& per_call = std::nullopt,
             const std::optional<MechanismRecord>& mechanism = std::nullopt) const;

  /// Record a release: fill `time` (now, UTC) if empty, write one newline-terminated JSON line with a
  /// single write(2), fsync(2) it, and add it to ledger(). A short write is truncated away.
  /// @throws std::invalid_argument if the entry is invalid; std::runtime_error naming the file if
  ///   the write or the fsync fails (the release must then not be published).
  void append(LedgerEntry entry);

  /// Record a new budget (an explicit act, with a reason). @throws as append.
  void change_budget(const Budget& budget, const std::string& reason);

 private:
  void write_line(const std::string& line);
  std::string path_;
  int fd_ = -1;
  bool created_ = false;
  std::string key_;
  Ledger ledger_;
};

}  // namespace dpmu::runtime
