#pragma once
/// @file priors/robust.hpp
/// The robust prior of Bayarri, Berger, Forte & García-Donato (2012, Ann. Statist. 40) with
/// a0 = 1/2, b0 = 1, ρ = 1/(p + p0) (paper Eq. 3):
///   π(g) = a0 [ρ(b0+n)]^{a0} (g+b0)^{−(a0+1)} on g > ρ(b0+n) − b0,
/// so log π(e^t) + t = log c − (3/2) log(1+e^t) + t on t > t_min = log(ρ(n+1) − 1). Proper.

#include <cmath>
#include <limits>
#include <string_view>

#include "dpmu/core/priors/unit.hpp"

namespace dpmu::core::priors {

struct Robust {
  static constexpr PriorKind kind = PriorKind::robust;
  static constexpr std::string_view name = "robust";
  static constexpr Family family = Family::mixture;
  static constexpr bool fine_trapezoid_step = false;

  /// No free parameters (a0, b0 and ρ are fixed by Bayarri et al.'s recommendation).
  static void check(const Prior& /*prior*/) {}

  /// @param p + p0 ≥ 1 (ρ = 1/(p + p0)).
  Robust(const Prior& /*prior*/, double n, int p, int p0)
      : log_const(std::log(0.5) + 0.5 * std::log((n + 1.0) / static_cast<double>(p + p0))) {
    const double g_min = (n + 1.0) / static_cast<double>(p + p0) - 1.0;
    t_min = g_min > 0.0 ? std::log(g_min) : -std::numeric_limits<double>::infinity();
  }

  /// log c = log(a0) + a0 log(ρ(b0+n)).
  double log_constant() const { return log_const; }
  /// t_min = log(ρ(n+1) − 1) (−inf if ρ(n+1) ≤ 1).
  double lower_limit() const { return t_min; }
  double mode_lower_limit() const { return std::numeric_limits<double>::infinity(); }

  /// −inf below the support.
  template <class At>
  double log_density(const At& x) const {
    if (x.t < t_min) return -std::numeric_limits<double>::infinity();
    return log_const - 1.5 * x.softplus() + x.t;
  }
  template <class At>
  LogDensityDerivatives derivatives(const At& /*x*/, double logistic_t) const {
    const double s = logistic_t;
    return {-1.5 * s + 1.0, -1.5 * s * (1.0 - s)};
  }

  double log_const;  ///< log c
  double t_min;      ///< lower end of the support in t
};

}  // namespace dpmu::core::priors
