#include "dpmu/core/g_priors.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

#include "dpmu/core/checks.hpp"

namespace dpmu::core {

namespace {
constexpr std::array<std::pair<PriorKind, std::string_view>, 8> kNames{{
    {PriorKind::g_prior, "g-prior"},
    {PriorKind::zellner_siow, "zellner-siow"},
    {PriorKind::hyper_g, "hyper-g"},
    {PriorKind::hyper_g_n, "hyper-g-n"},
    {PriorKind::robust, "robust"},
    {PriorKind::bic, "bic"},
    {PriorKind::aic, "aic"},
    {PriorKind::lr, "lr"},
}};
}  // namespace

bool is_bayesian(PriorKind kind) { return kind != PriorKind::bic && kind != PriorKind::aic && kind != PriorKind::lr; }

std::string_view to_string(PriorKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::vector<std::string> prior_kind_names() {
  std::vector<std::string> out;
  for (const auto& entry : kNames) out.emplace_back(entry.second);
  return out;
}

PriorKind parse_prior_kind(std::string_view name) {
  std::string s(name);
  for (char& c : s) {
    if (c == '_') c = '-';
  }
  for (const auto& [k, spelled] : kNames) {
    if (s == spelled) return k;
  }
  std::string accepted;
  for (const auto& entry : kNames) {
    if (!accepted.empty()) accepted += ", ";
    accepted += entry.second;
  }
  throw_invalid("parse_prior_kind",
                "unknown prior '" + std::string(name) + "'; use one of " + accepted + " (or with _ for -)");
}

void check_prior(const Prior& prior) {
  constexpr const char* fn = "check_prior";
  if (prior.g.has_value()) check_positive_finite(fn, "g", *prior.g);
  if (prior.kind == PriorKind::hyper_g || prior.kind == PriorKind::hyper_g_n) {
    if (!(std::isfinite(prior.a) && prior.a > 2.0)) throw_domain(fn, "a", prior.a, "finite and > 2");
  }
}

double log_mixture_prior_constant(const Prior& prior, double n, int p, int p0) {
  switch (prior.kind) {
    case PriorKind::zellner_siow:
      return 0.5 * std::log(0.5 * n) - 0.5 * std::log(std::numbers::pi);
    case PriorKind::hyper_g:
      return std::log(0.5 * (prior.a - 2.0));
    case PriorKind::hyper_g_n:
      return std::log(0.5 * (prior.a - 2.0) / n);
    case PriorKind::robust:
      return std::log(0.5) + 0.5 * std::log((n + 1.0) / static_cast<double>(p + p0));
    default:
      return 0.0;
  }
}

double log_prior_mode_lower_limit(const Prior& prior, double n) {
  switch (prior.kind) {
    case PriorKind::hyper_g:
      return std::log(2.0) - std::log(prior.a - 2.0) - 40.0;
    case PriorKind::hyper_g_n:
      return std::log(2.0) + std::log(n) - std::log(prior.a - 2.0) - 40.0;
    default:
      return std::numeric_limits<double>::infinity();
  }
}

}  // namespace dpmu::core
