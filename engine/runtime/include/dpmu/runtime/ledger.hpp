#pragma once
/// @file ledger.hpp
/// A privacy-budget ledger: an append-only file with one JSON object per line, one line per
/// differentially private release, so that the privacy loss spent on a data set is tracked across
/// runs of `dpmu` and a release that would exceed a budget is refused before any noise is drawn.
///
/// Releases are grouped by the data set they were computed from, identified by the SHA-256 of the
/// data file's bytes: the same data under another name is charged to the same budget, but any
/// change to the file (one row added, a column reordered) makes a new fingerprint with a fresh
/// total. The ledger cannot see that two files share individuals; that is the user's to manage.
///
/// Composition. Totals use basic (sequential) composition: k releases that are (eps_i, delta_i)-DP
/// on the same data are jointly (sum eps_i, sum delta_i)-DP. This holds for any mechanisms, chosen
/// adaptively, and is what check() enforces. It is loose for many releases: advanced composition
/// (Dwork, Rothblum & Vadhan 2010) gives k (eps, delta)-DP releases a total of
/// (eps sqrt(2k ln(1/delta')) + k eps (e^eps - 1), k delta + delta') for any delta' > 0, which is
/// smaller than k eps once k is large and eps small; and for Gaussian mechanisms zero-concentrated
/// DP (Bun & Steinke 2016) adds the rho_i exactly and converts once, rho -> (rho + 2 sqrt(rho
/// ln(1/delta)), delta), which is tighter still. Neither is implemented: they need the mechanism
/// (or rho) of every release and a choice of delta', and basic composition is always valid.
///
/// Concurrency and crashes. A release holds a LedgerLock (flock(2), exclusive) from its check to
/// its append, so concurrent releases on one ledger serialize and cannot overspend together. A line
/// is written with one write(2) to an O_APPEND descriptor and fsync()ed; a line that is not a
/// complete, valid entry (a crash mid-write, a hand edit) makes the ledger unreadable until it is
/// fixed: it is never silently skipped or reset. flock may not lock across machines on network
/// file systems; keep a ledger on a local disk or use it from one machine.

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dpmu::runtime {

/// SHA-256 of a file's bytes as 64 lowercase hex digits (OpenSSL EVP).
/// @throws std::runtime_error naming the file if it cannot be read.
std::string sha256_file(const std::string& path);

/// A privacy budget: total epsilon (> 0, finite) and total delta (in [0, 1), default 0).
struct Budget {
  double epsilon = 0.0;
  double delta = 0.0;
};

/// Parse "EPS" or "EPS,DELTA" (e.g. "2" or "2,1e-6").
/// @throws std::invalid_argument with a message naming --budget and what is expected.
Budget parse_budget(std::string_view text);

/// One release recorded in a ledger (one JSON object per line).
struct LedgerEntry {
  std::string time;              ///< UTC, ISO 8601 (filled by append if empty)
  std::string command;           ///< e.g. "dpmu bma"
  std::string data_file;         ///< path as given
  std::string data_fingerprint;  ///< sha256 of the data file
  double epsilon = 0.0;
  double delta = 0.0;
  nlohmann::json released;  ///< what was released (field names), small
};

/// Privacy loss spent on one data set (one fingerprint) under basic composition.
struct LedgerTotal {
  double epsilon = 0.0;                 ///< sum of the releases' epsilons
  double delta = 0.0;                   ///< sum of the releases' deltas
  std::size_t releases = 0;             ///< number of releases
  std::vector<std::string> data_files;  ///< distinct file names seen, in order of first appearance
};

/// Totals per data fingerprint under basic (sequential) composition: sum of epsilons, sum of
/// deltas, count, file names. Never throws (beyond allocation).
std::map<std::string, LedgerTotal> ledger_totals(const std::vector<LedgerEntry>& entries);

/// Read every line of a ledger file (under a shared flock, so a concurrent append is never seen
/// half-written). A missing file is an empty ledger. A line that is not a complete, valid entry
/// (bad JSON, a missing or mistyped field, a fingerprint that is not 64 lowercase hex digits,
/// negative or non-finite epsilon/delta, an empty line, a last line without its newline) is an
/// error; unknown extra fields are ignored. Waits while a LedgerLock holds the file, so do not call
/// it for a file that this thread has locked (it would wait forever): use LedgerLock::entries().
/// @throws std::runtime_error "ledger FILE line N: ... (the ledger is damaged; fix or restore it,
///   it is never reset)", or naming the file if it exists but cannot be read.
std::vector<LedgerEntry> read_ledger(const std::string& path);

/// Thrown when a release would exceed the budget. what() says the data file, spent so far,
/// requested, budget.
struct BudgetExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An exclusive lock on a ledger for the duration of one release: open/create FILE,
/// flock(LOCK_EX) (blocking), read it (errors as read_ledger). check() refuses a release (throws
/// BudgetExceeded) when the totals for the fingerprint plus (epsilon, delta) would exceed the
/// budget (a relative tolerance of 1e-12 for rounding); append() writes one line (JSON,
/// newline-terminated) with a single write(2) to an O_APPEND descriptor and fsync()s it, so a crash
/// never leaves half a line that a later read would silently accept.
///
/// Use in a release command: parse options; `LedgerLock lock(path)`; `lock.check(...)` before any
/// noise is drawn (a refused release prints nothing); compute the release; `lock.append(entry)`;
/// print. Not copyable or movable; the lock is released by the destructor.
class LedgerLock {
 public:
  /// Open (creating it, mode 0644) and exclusively lock the ledger at `path`, then read it.
  /// Blocks while another LedgerLock (any process or thread) holds it.
  /// @throws std::runtime_error naming the file if it cannot be opened, created or locked, or if it
  ///   is damaged (as read_ledger).
  explicit LedgerLock(const std::string& path);
  /// Release the lock and close the file.
  ~LedgerLock();
  LedgerLock(const LedgerLock&) = delete;
  LedgerLock& operator=(const LedgerLock&) = delete;

  /// The ledger's path as given.
  const std::string& path() const { return path_; }

  /// Every entry: those read when the lock was taken, then those appended through this lock.
  const std::vector<LedgerEntry>& entries() const { return entries_; }

  /// Refuse a release of (epsilon, delta) on the data set `data_fingerprint` (file `data_file`,
  /// for the message) if the spent totals plus it would exceed `budget` in epsilon or in delta,
  /// up to a relative tolerance of 1e-12. No budget: nothing is refused (the release is only
  /// recorded).
  /// @throws BudgetExceeded (data file, spent, requested, budget in what()); std::invalid_argument
  ///   if epsilon or delta is negative or non-finite or the budget is invalid (see Budget).
  void check(const std::string& data_fingerprint, const std::string& data_file, double epsilon, double delta,
             const std::optional<Budget>& budget) const;

  /// Record a release: fill `time` (now, UTC) if empty, write one newline-terminated JSON line with a
  /// single write(2), fsync(2) it, and add the entry to entries(). A short write is truncated away.
  /// @throws std::invalid_argument if the entry is invalid (as a damaged line would be);
  ///   std::runtime_error naming the file if the write or the fsync fails (the release must then
  ///   not be published; after a failed fsync the line was written and counts in entries(), but it
  ///   may not survive a crash).
  void append(LedgerEntry entry);

 private:
  std::string path_;
  int fd_ = -1;
  std::vector<LedgerEntry> entries_;
};

}  // namespace dpmu::runtime
