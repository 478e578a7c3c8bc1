#pragma once
/// @file priors/zellner_siow.hpp
/// The Zellner–Siow prior, 1/g ~ Gamma(1/2, rate n/2) (Liang et al. 2008 §2.2; paper Eq. 3):
///   π(g) = (n/2)^{1/2}/Γ(1/2) g^{−3/2} e^{−n/(2g)},  so  log π(e^t) + t = log c − t/2 − (n/2) e^{−t}.
/// Proper on g > 0. Its BAS-compatible variant is ZellnerSiowLaplace.

#include <cmath>
#include <limits>
#include <numbers>
#include <string_view>

#include "dpmu/core/priors/unit.hpp"

namespace dpmu::core::priors {

struct ZellnerSiow {
  static constexpr PriorKind kind = PriorKind::zellner_siow;
  static constexpr std::string_view name = "zellner-siow";
  static constexpr Family family = Family::mixture;
  static constexpr bool fine_trapezoid_step = false;

  /// No parameters (the rate n/2 is the data's).
  static void check(const Prior& /*prior*/) {}

  ZellnerSiow(const Prior& /*prior*/, double n, int /*p*/, int /*p0*/)
      : half_n(0.5 * n), log_const(0.5 * std::log(0.5 * n) - 0.5 * std::log(std::numbers::pi)) {}

  /// log c = (1/2) log(n/2) − log Γ(1/2).
  double log_constant() const { return log_const; }
  double lower_limit() const { return -std::numeric_limits<double>::infinity(); }
  double mode_lower_limit() const { return std::numeric_limits<double>::infinity(); }

  template <class At>
  double log_density(const At& x) const {
    return log_const - 0.5 * x.t - half_n * x.exp_minus_t();
  }
  template <class At>
  LogDensityDerivatives derivatives(const At& x, double /*logistic_t*/) const {
    const double e = half_n * x.exp_minus_t();
    return {-0.5 + e, -e};
  }

  double half_n;     ///< n/2
  double log_const;  ///< log c
};

/// R package BAS's Laplace approximation to the Zellner–Siow evidence of a model with an intercept
/// (`bas.lm(prior = "ZS-null")`; `LogBF_ZS_null`, `E_ZS_approx_null`), computed by
/// zellner_siow_laplace (model_space.hpp). The BAS-compatible variant of ZellnerSiow: a
/// CoefficientPrior may carry it only with the prior it approximates (check_coefficient_prior).
struct ZellnerSiowLaplace {
  using approximates = ZellnerSiow;
  static constexpr std::string_view name = "zellner-siow-laplace";
};

}  // namespace dpmu::core::priors
