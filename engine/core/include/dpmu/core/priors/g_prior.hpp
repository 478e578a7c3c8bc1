#pragma once
/// @file priors/g_prior.hpp
/// Zellner's g-prior with a fixed g (paper Eq. 3 without a mixture; Liang et al. 2008 §2.1): the
/// Bayes factor has a closed form (bayes_factor.cpp), so the unit holds only g.

#include <string_view>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/priors/unit.hpp"

namespace dpmu::core::priors {

struct GPrior {
  static constexpr PriorKind kind = PriorKind::g_prior;
  static constexpr std::string_view name = "g-prior";
  static constexpr Family family = Family::fixed_g;

  /// g > 0 finite if set (unset: g = n, the unit-information choice).
  /// @throws std::domain_error naming g.
  static void check(const Prior& prior) {
    if (prior.g.has_value()) check_positive_finite("check_prior", "g", *prior.g);
  }

  GPrior(const Prior& prior, double n, int /*p*/, int /*p0*/) : g(prior.g.value_or(n)) {}

  double g;  ///< the fixed g (per subset of b_i rows: g = b_i when unset)
};

}  // namespace dpmu::core::priors
