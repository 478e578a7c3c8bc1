#include "release_ledger.hpp"

#include <cmath>
#include <stdexcept>

namespace dpmu::cli {

void add_ledger_options(CLI::App* cmd, LedgerOptions& o) {
  const auto* g = "Privacy budget";
  cmd->add_option("--ledger", o.ledger,
                  "Append this release to a ledger FILE (one JSON line per release; see `dpmu ledger`)")
      ->group(g);
  cmd->add_option("--budget", o.budget,
                  "EPS[,DELTA]: refuse the release if the ledger's total for this data file (SHA-256) would "
                  "exceed it (basic composition)")
      ->group(g);
}

ReleaseLedger::ReleaseLedger(const LedgerOptions& o, std::string command, std::string data_file,
                             const core::PrivacyGuarantee& g, bool secure_release)
    : command_(std::move(command)), data_file_(std::move(data_file)), epsilon_(g.epsilon), delta_(g.delta) {
  if (!o.budget.empty() && o.ledger.empty()) throw std::invalid_argument("--budget needs --ledger FILE");
  if (o.ledger.empty()) return;
  if (!secure_release) {
    throw std::invalid_argument(
        "--ledger records real releases only: drop --seed / --non-private (a simulation "
        "is not charged to a budget)");
  }
  if (!std::isfinite(epsilon_)) {
    throw std::invalid_argument("--ledger: this release has no valid epsilon (see privacy), so it cannot be charged");
  }
  std::optional<runtime::Budget> budget;
  if (!o.budget.empty()) budget = runtime::parse_budget(o.budget);
  fingerprint_ = runtime::sha256_file(data_file_);
  lock_ = std::make_unique<runtime::LedgerLock>(o.ledger);
  lock_->check(fingerprint_, data_file_, epsilon_, delta_, budget);
}

void ReleaseLedger::record(const ReleaseReport& report) {
  if (!lock_) return;
  runtime::LedgerEntry e;
  e.command = command_;
  e.data_file = data_file_;
  e.data_fingerprint = fingerprint_;
  e.epsilon = epsilon_;
  e.delta = delta_;
  e.released = report.released_fields();
  lock_->append(std::move(e));
}

}  // namespace dpmu::cli
