#pragma once
/// @file ledger.hpp
/// Charging a release to a privacy-budget ledger (dpmu/runtime/ledger.hpp; docs/privacy.md "The
/// ledger"): the one implementation that the `dpmu` command and the R and Python packages call.
/// The charge is checked before any work and made once the release is computed and before any of
/// it is delivered, under the ledger's lock, on a keyed fingerprint of exactly the bytes that are
/// analysed; a release that would exceed the budget is refused (runtime::BudgetExceeded) and
/// nothing is released.

#include <signal.h>

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dpmu/core/release.hpp"
#include "dpmu/runtime/ledger.hpp"

namespace dpmu::api {

/// Where a release is charged.
struct LedgerOptions {
  std::string path;  ///< the ledger file; empty: the release is not charged to any ledger
  /// "EPS" or "EPS,DELTA". A missing ledger is created with it (the budget is then fixed); for an
  /// existing ledger it is a per-call limit, which may only be lower than the ledger's budget.
  std::string budget;
  std::string data_label;  ///< the data's name in the ledger (a file path, a data-frame name)
};

/// What a release was charged.
struct LedgerCharge {
  std::string path;
  std::string data_fingerprint;  ///< keyed (HMAC-SHA256 under the ledger's key)
  double epsilon = 0.0;
  double delta = 0.0;
  runtime::Budget budget;      ///< the ledger's budget in force
  runtime::LedgerTotal total;  ///< the ledger's basic-composition total after this release
  bool created = false;        ///< the ledger was created by this release
  runtime::Accountant accountant = runtime::Accountant::basic;  ///< the ledger's accountant
  /// The total after this release under the ledger's accountant (runtime::accountant_total_json).
  nlohmann::ordered_json accounted;
};

/// The ledger's record of a release's mechanism (kind, sensitivity, noise scale, neighbouring
/// relation) from its guarantee; nullopt when the guarantee has no noise_kind (the release is then
/// accounted by basic composition).
std::optional<runtime::MechanismRecord> mechanism_record(const core::PrivacyGuarantee& guarantee);

/// Option checks that need no data (call them first): a budget needs a ledger and parses; a
/// seeded or non-private run is not a release and cannot be charged.
/// @throws std::invalid_argument naming the option.
void check_ledger_options(const LedgerOptions& options, bool secure_release);

/// A release's charge: checked before the release's work, made after it (docs/privacy.md "The
/// ledger"; docs/reliability.md "Validation before any budget is spent").
///
/// Use: construct it after the settings are validated and before any work (it refuses a release
/// that the ledger, as it stands, cannot afford: budget exceeded, no valid ε, a damaged ledger or
/// a missing key); draw the release's noise through draw_and_commit(), which charges it at once —
/// before anything computed from the noisy statistics exists, so no message, progress line, file,
/// return value, exit code or interrupt can reveal a function of them uncharged (docs/privacy.md
/// "Charge first, then speak"). commit() takes the ledger's lock, checks the budget again (another
/// release may have been charged meanwhile) and appends the entry; a release refused there is
/// discarded unseen. A release that fails before the noise is drawn spends nothing; one whose noise
/// was drawn is charged even if its analysis then fails or is interrupted ("charged, not delivered").
class ReleaseCharge {
 public:
  /// @param command names the front end and the release ("dpmu bma", "R dpmu::test", ...).
  /// @param released what the release makes public (field names), recorded in the ledger.
  /// @throws runtime::BudgetExceeded, std::invalid_argument (no finite ε, a bad or raised per-call
  ///   budget), std::runtime_error (the ledger cannot be read, is damaged, its key is missing).
  ReleaseCharge(LedgerOptions options, std::string command, const core::PrivacyGuarantee& guarantee,
                nlohmann::json released);
  /// Charge the release on the bytes analysed (fingerprinted under the ledger's key). Does nothing
  /// and returns nullopt without a ledger. Once only. @throws as the constructor, and
  /// std::logic_error on a second call.
  std::optional<LedgerCharge> commit(std::string_view data_bytes);

  /// Draw the release's noise and charge it as one step: runs `draw()` — which must draw the noise
  /// and do nothing observable — then commit(data_bytes). In a process that called
  /// defer_interrupts_around_charges() (the `dpmu` command) the interrupt signals are blocked from
  /// before the draw until the entry is in the ledger, so a signal in between is delivered after the
  /// charge (the process then ends with "charged, not delivered"). @returns draw()'s result; the
  /// charge is charge() afterwards. @throws as commit() (the drawn noise is then discarded unseen).
  template <class Draw>
  std::invoke_result_t<Draw&> draw_and_commit(Draw&& draw, std::string_view data_bytes) {
    const InterruptDeferral deferral;
    std::invoke_result_t<Draw&> result = draw();
    charge_ = commit(data_bytes);
    deferral.charged(charge_ ? charge_->path : std::string());
    return result;
  }

  /// The charge made by draw_and_commit() (nullopt before it, and without a ledger).
  const std::optional<LedgerCharge>& charge() const { return charge_; }

  /// Blocks the interrupt signals for its lifetime when defer_interrupts_around_charges() was
  /// called (else does nothing); charged() first arms the "charged, not delivered" exit.
  class InterruptDeferral {
   public:
    InterruptDeferral();
    ~InterruptDeferral();
    InterruptDeferral(const InterruptDeferral&) = delete;
    InterruptDeferral& operator=(const InterruptDeferral&) = delete;
    /// The charge is in ledger `path` (empty: no ledger): from now on an interrupt signal ends the
    /// process with a message saying so and exit status 128 + signal.
    void charged(const std::string& path) const;

   private:
    bool active_ = false;
    sigset_t saved_{};  ///< the signal mask before
  };

 private:
  LedgerOptions options_;
  std::string command_;
  core::PrivacyGuarantee guarantee_;
  nlohmann::json released_;
  std::optional<runtime::Budget> budget_;
  bool committed_ = false;
  std::optional<LedgerCharge> charge_;
};

/// Interrupts around charges (docs/privacy.md "Charge first, then speak"). A process that can be
/// stopped by a signal at any point — the `dpmu` command — calls this once with its name. From then
/// on ReleaseCharge::draw_and_commit blocks SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGVTALRM,
/// SIGPROF, SIGXCPU, SIGUSR1 and SIGUSR2 from before the noise is drawn until the charge is in the
/// ledger; after a charge any of them ends the process with "<name>: interrupted after the release was
/// charged to ledger <path>: charged, not delivered" on stderr and exit status 128 + signal. The R and
/// Python packages do not call it: their interrupts are cooperative (checked in progress callbacks,
/// and the release API calls none between the noise draw and the charge).
/// Defined in interrupt_deferral.cpp, which only the `dpmu` command links (its handler calls
/// _exit; the R package leaves that file out).
void defer_interrupts_around_charges(std::string program_name);

namespace detail {
/// Arms the "charged, not delivered" exit: called after a charge, with the message to print and
/// the interrupt signals to catch. Must install async-signal-safe handlers only.
using AfterChargeHandler = void (*)(const std::string& message, const int* signals, std::size_t count);
/// Turns the interrupt deferral on (defer_interrupts_around_charges' implementation).
void set_after_charge_handler(std::string program_name, AfterChargeHandler handler);
}  // namespace detail

/// Charges committed on this thread so far, and the ledger of the last: a front end that meets an
/// error or an interrupt after a charge says the release was charged and not delivered.
struct ThreadCharges {
  std::uint64_t count = 0;
  std::string last_ledger;
};
const ThreadCharges& charges_on_this_thread();
/// The bytes that identify data held in memory (R and Python): a version tag, the shape, the
/// column names and the doubles of the n×k matrix in column-major order.
std::string matrix_bytes(const Eigen::Ref<const Eigen::MatrixXd>& columns, const std::vector<std::string>& names);

/// A charge as JSON, as every front end prints it: {"path", "epsilon", "delta", "total_epsilon",
/// "total_delta", "releases", "budget_epsilon", "budget_delta" (a rho budget: "budget_rho"),
/// "created", "accountant", "accounted_total"} (total_* are basic composition; accounted_total is the ledger's
/// accountant's total, as in ledger_summary's "totals") — not the data's fingerprint (it would link outputs computed
/// from the same data; it stays in the ledger file).
nlohmann::ordered_json to_json(const LedgerCharge& charge);

/// Create a ledger with its budget "EPS[,DELTA]" or "rho=RHO" and its accountant "basic", "tight"
/// or "zcdp" (empty: basic, or zcdp for a rho budget) (runtime::init_ledger). @throws as there.
void ledger_init(const std::string& path, const std::string& budget, const std::string& accountant = "");

/// Record a new budget "EPS[,DELTA]" with a reason (an explicit, recorded act).
void ledger_set_budget(const std::string& path, const std::string& budget, const std::string& reason);

/// A ledger as JSON (what `dpmu ledger FILE` prints): {"ledger", "created", "accountant",
/// "composition", "budget" ({"epsilon", "delta"} or {"rho"}), "budget_changes", "spent" (basic
/// sums and the number of releases), "totals": {"basic": {"accountant", "epsilon", "delta"},
/// "tight": {"accountant", "epsilon", "delta", "gaussian", "pure", "basic_composition"} (at the
/// budget's δ; not for a ρ budget), "zcdp": {"accountant", "rho"} (when every release has a zCDP
/// bound, or the budget is ρ)}, "remaining" (under the ledger's accountant), "entries",
/// "data_sets": {fingerprint: {"data_files", "releases", "epsilon", "delta", "release_list"}}}.
/// @throws as runtime::read_ledger.
nlohmann::ordered_json ledger_summary(const std::string& path);

}  // namespace dpmu::api
