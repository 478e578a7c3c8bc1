#include "dpmu/core/g_priors.hpp"

#include <cctype>
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

std::string canonical_prior_name(std::string_view name) {
  std::string s(name);
  for (char& c : s) {
    if (c == '_') c = '-';
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (s == "jzs") return "zellner-siow";
  if (s == "zs-null") return "zellner-siow-laplace";
  return s;
}

std::string unsupported_bas_prior(std::string_view name) {
  const std::string s = canonical_prior_name(name);
  if (s == "hyper-g-laplace")
    return "BAS's hyper-g-laplace (a Laplace approximation) is not implemented; hyper-g is exact";
  if (s == "zs-full") return "BAS's ZS-full is not implemented; zellner-siow (JZS) is the exact Zellner-Siow prior";
  if (s == "eb-local" || s == "eb-global") return "BAS's empirical-Bayes " + std::string(name) + " is not implemented";
  return "";
}

PriorKind parse_prior_kind(std::string_view name) {
  const std::string s = canonical_prior_name(name);
  std::optional<PriorKind> found;
  std::string accepted;
  for_each_prior_unit([&](auto unit) {
    using Unit = typename decltype(unit)::type;
    if (s == Unit::name) found = Unit::kind;
    if (!accepted.empty()) accepted += ", ";
    accepted += Unit::name;
  });
  if (found) return *found;
  const std::string bas = unsupported_bas_prior(name);
  throw_invalid("parse_prior_kind", "unknown prior '" + std::string(name) + "'" +
                                        (bas.empty() ? "" : " (" + bas + ")") + "; use one of " + accepted +
                                        " (any case, _ for -; BAS's spellings BIC, AIC, g-prior, hyper-g, hyper-g-n "
                                        "and JZS for zellner-siow are accepted)");
}

void check_prior(const Prior& prior) {
  priors::GPrior::check(prior);  // g, whenever it is set
  visit_prior_kind(prior.kind, [&](auto unit) { decltype(unit)::type::check(prior); });
}

}  // namespace dpmu::core
