// Charging releases to a privacy-budget ledger: one implementation for every front end.
#include "dpmu/api/ledger.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace dpmu::api {

void check_ledger_options(const LedgerOptions& o, bool secure_release) {
  if (!o.budget.empty() && o.path.empty()) {
    throw std::invalid_argument("a budget (--budget / budget =) needs a ledger (--ledger FILE / ledger =)");
  }
  if (o.path.empty()) return;
  if (!secure_release) {
    throw std::invalid_argument(
        "a ledger records real releases only: drop the seed / non-private option (a simulation is not charged to "
        "a budget), or drop the ledger");
  }
  if (!o.budget.empty()) runtime::parse_budget(o.budget);
}

std::optional<LedgerCharge> charge_release(const LedgerOptions& o, const std::string& command,
                                           std::string_view data_bytes, const core::PrivacyGuarantee& g,
                                           const nlohmann::json& released) {
  if (o.path.empty()) return std::nullopt;
  if (!std::isfinite(g.epsilon)) {
    throw std::invalid_argument("ledger: this release has no valid epsilon (see privacy), so it cannot be charged");
  }
  std::optional<runtime::Budget> budget;
  if (!o.budget.empty()) budget = runtime::parse_budget(o.budget);
  runtime::LedgerLock lock(o.path, budget);  // creates a missing ledger with the budget
  LedgerCharge c;
  c.created = lock.created();
  lock.check(g.epsilon, g.delta, c.created ? std::nullopt : budget);
  runtime::LedgerEntry e;
  e.command = command;
  e.data_file = o.data_label;
  e.data_fingerprint = lock.fingerprint(data_bytes);
  e.epsilon = g.epsilon;
  e.delta = g.delta;
  e.released = released;
  lock.append(e);
  c.path = o.path;
  c.data_fingerprint = e.data_fingerprint;
  c.epsilon = g.epsilon;
  c.delta = g.delta;
  c.budget = lock.ledger().budget();
  c.total = lock.ledger().total();
  return c;
}

std::string matrix_bytes(const Eigen::Ref<const Eigen::MatrixXd>& x, const std::vector<std::string>& names) {
  std::string out = "dpmu matrix v1\n" + std::to_string(x.rows()) + " " + std::to_string(x.cols()) + "\n";
  for (const auto& n : names) out += n + "\n";
  out.reserve(out.size() + static_cast<std::size_t>(x.size()) * sizeof(double));
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const double v = x(i, j);
      char b[sizeof(double)];
      std::memcpy(b, &v, sizeof v);
      out.append(b, sizeof b);
    }
  }
  return out;
}

nlohmann::ordered_json to_json(const LedgerCharge& c) {
  return {{"ledger", c.path},
          {"data_fingerprint", c.data_fingerprint},
          {"epsilon", c.epsilon},
          {"delta", c.delta},
          {"total_epsilon", c.total.epsilon},
          {"total_delta", c.total.delta},
          {"releases", c.total.releases},
          {"budget_epsilon", c.budget.epsilon},
          {"budget_delta", c.budget.delta},
          {"created", c.created}};
}

}  // namespace dpmu::api
