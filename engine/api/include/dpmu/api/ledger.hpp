#pragma once
/// @file ledger.hpp
/// Charging a release to a privacy-budget ledger (dpmu/runtime/ledger.hpp; docs/privacy.md "The
/// ledger"): the one implementation that the `dpmu` command and the R and Python packages call.
/// The charge is made after every check has passed and before any noise is drawn, under the
/// ledger's lock, on a keyed fingerprint of exactly the bytes that are analysed; a release that
/// would exceed the budget is refused (runtime::BudgetExceeded) and nothing is released.

#include <Eigen/Dense>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
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
  runtime::LedgerTotal total;  ///< the ledger's total after this release
  bool created = false;        ///< the ledger was created by this release
};

/// Option checks that need no data (call them first): a budget needs a ledger and parses; a
/// seeded or non-private run is not a release and cannot be charged.
/// @throws std::invalid_argument naming the option.
void check_ledger_options(const LedgerOptions& options, bool secure_release);

/// Charge one release of `guarantee` on the data `data_bytes` (the bytes analysed) to the ledger,
/// under its lock: fingerprint, budget check, append. Does nothing and returns nullopt without a
/// ledger. `command` names the front end and the release ("dpmu bma", "R dpmu::test", ...).
/// @throws runtime::BudgetExceeded (nothing is charged), std::invalid_argument (no finite ε, a bad
///   or raised per-call budget), std::runtime_error (the ledger cannot be read or written).
std::optional<LedgerCharge> charge_release(const LedgerOptions& options, const std::string& command,
                                           std::string_view data_bytes, const core::PrivacyGuarantee& guarantee,
                                           const nlohmann::json& released);

/// The bytes that identify data held in memory (R and Python): a version tag, the shape, the
/// column names and the doubles of the n×k matrix in column-major order.
std::string matrix_bytes(const Eigen::Ref<const Eigen::MatrixXd>& columns, const std::vector<std::string>& names);

/// A charge as JSON, as every front end prints it: {"path", "epsilon", "delta", "total_epsilon",
/// "total_delta", "releases", "budget_epsilon", "budget_delta", "created"} — not the data's
/// fingerprint (it would link outputs computed from the same data; it stays in the ledger file).
nlohmann::ordered_json to_json(const LedgerCharge& charge);

/// Create a ledger with its budget "EPS[,DELTA]" (runtime::init_ledger). @throws as there.
void ledger_init(const std::string& path, const std::string& budget);

/// Record a new budget "EPS[,DELTA]" with a reason (an explicit, recorded act).
void ledger_set_budget(const std::string& path, const std::string& budget, const std::string& reason);

/// A ledger as JSON (what `dpmu ledger FILE` prints): {"ledger", "created", "composition",
/// "budget", "budget_changes", "spent", "remaining", "entries", "data_sets": {fingerprint:
/// {"data_files", "releases", "epsilon", "delta", "release_list"}}}. @throws as runtime::read_ledger.
nlohmann::ordered_json ledger_summary(const std::string& path);

}  // namespace dpmu::api
