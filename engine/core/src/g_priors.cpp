#include "dpmu/core/g_priors.hpp"

#include <optional>
#include <string>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/priors.hpp"

namespace dpmu::core {

bool is_bayesian(PriorKind kind) {
  return visit_prior_kind(kind,
                          [](auto unit) { return !priors::is_information_criterion<typename decltype(unit)::type>; });
}

std::string_view to_string(PriorKind kind) {
  return visit_prior_kind(kind, [](auto unit) { return decltype(unit)::type::name; });
}

std::vector<std::string> prior_kind_names() {
  std::vector<std::string> out;
  for_each_prior_unit([&](auto unit) { out.emplace_back(decltype(unit)::type::name); });
  return out;
}

PriorKind parse_prior_kind(std::string_view name) {
  std::string s(name);
  for (char& c : s) {
    if (c == '_') c = '-';
  }
  std::optional<PriorKind> found;
  std::string accepted;
  for_each_prior_unit([&](auto unit) {
    using Unit = typename decltype(unit)::type;
    if (s == Unit::name) found = Unit::kind;
    if (!accepted.empty()) accepted += ", ";
    accepted += Unit::name;
  });
  if (found) return *found;
  throw_invalid("parse_prior_kind",
                "unknown prior '" + std::string(name) + "'; use one of " + accepted + " (or with _ for -)");
}

void check_prior(const Prior& prior) {
  priors::GPrior::check(prior);  // g, whenever it is set
  visit_prior_kind(prior.kind, [&](auto unit) { decltype(unit)::type::check(prior); });
}

}  // namespace dpmu::core
