#include "release_ledger.hpp"

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <system_error>

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

ReleaseLedger::ReleaseLedger(const LedgerOptions& o, const std::string& command, const std::string& data_file,
                             const core::PrivacyGuarantee& g, bool secure_release, const nlohmann::json& released)
    : data_file_(data_file) {
  check_options(o, data_file_, secure_release);
  if (o.ledger.empty()) return;
  if (!std::isfinite(g.epsilon)) {
    throw std::invalid_argument("--ledger: this release has no valid epsilon (see privacy), so it cannot be charged");
  }
  std::optional<runtime::Budget> budget;
  if (!o.budget.empty()) budget = runtime::parse_budget(o.budget);
  runtime::LedgerLock lock(o.ledger);
  fingerprint_ = runtime::sha256_file(data_file_);
  lock.check(fingerprint_, data_file_, g.epsilon, g.delta, budget);
  runtime::LedgerEntry e;
  e.command = command;
  e.data_file = data_file_;
  e.data_fingerprint = fingerprint_;
  e.epsilon = g.epsilon;
  e.delta = g.delta;
  e.released = released;
  lock.append(std::move(e));
}

void ReleaseLedger::check_options(const LedgerOptions& o, const std::string& data_file, bool secure_release) {
  if (!o.budget.empty() && o.ledger.empty()) throw std::invalid_argument("--budget needs --ledger FILE");
  if (o.ledger.empty()) return;
  if (!secure_release) {
    throw std::invalid_argument(
        "--ledger records real releases only: drop --seed / --non-private (a simulation "
        "is not charged to a budget)");
  }
  if (!o.budget.empty()) runtime::parse_budget(o.budget);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(data_file, ec)) {
    throw std::invalid_argument("--ledger: --data '" + data_file +
                                "' must be a regular file (its SHA-256 identifies the data set in the ledger)");
  }
}

void ReleaseLedger::verify_unchanged() const {
  if (fingerprint_.empty()) return;
  if (runtime::sha256_file(data_file_) != fingerprint_) {
    throw std::runtime_error("--data '" + data_file_ +
                             "' changed during the release; the release was charged to its earlier content");
  }
}

}  // namespace dpmu::cli
