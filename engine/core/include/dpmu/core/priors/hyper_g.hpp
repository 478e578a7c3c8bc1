#pragma once
/// @file priors/hyper_g.hpp
/// The hyper-g and hyper-g/n priors (Liang et al. 2008 §2.3; paper Eq. 3), a > 2:
///   hyper-g:   π(g) = (a−2)/2 (1+g)^{−a/2},          log π(e^t) + t = log c − (a/2) log(1+e^t) + t;
///   hyper-g/n: π(g) = (a−2)/(2n) (1+g/n)^{−a/2},     log π(e^t) + t = log c − (a/2) log(1+e^{t−log n}) + t.
/// Both are proper on g > 0.

#include <cmath>
#include <limits>
#include <string_view>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/priors/unit.hpp"

namespace dpmu::core::priors {

struct HyperG {
  static constexpr PriorKind kind = PriorKind::hyper_g;
  static constexpr std::string_view name = "hyper-g";
  static constexpr Family family = Family::mixture;
  static constexpr bool fine_trapezoid_step = false;

  /// a finite and > 2. @throws std::domain_error naming a.
  static void check(const Prior& prior) {
    if (!(std::isfinite(prior.a) && prior.a > 2.0)) throw_domain("check_prior", "a", prior.a, "finite and > 2");
  }

  HyperG(const Prior& prior, double /*n*/, int /*p*/, int /*p0*/)
      : half_a(0.5 * prior.a),
        log_const(std::log(0.5 * (prior.a - 2.0))),
        log_scale(std::log(2.0) - std::log(prior.a - 2.0)) {}

  /// log c = log((a−2)/2).
  double log_constant() const { return log_const; }
  double lower_limit() const { return -std::numeric_limits<double>::infinity(); }
  /// 40 below log(2/(a−2)): for large a the prior concentrates at g ≈ 2/a, so the quadratures
  /// start below it and a = 1e300 gives log B ≈ 0 (the limit a → ∞: g → 0, B → 1).
  double mode_lower_limit() const { return log_scale - 40.0; }

  template <class At>
  double log_density(const At& x) const {
    return log_const - half_a * x.softplus() + x.t;
  }
  template <class At>
  LogDensityDerivatives derivatives(const At& /*x*/, double logistic_t) const {
    const double s = logistic_t;
    return {-half_a * s + 1.0, -half_a * s * (1.0 - s)};
  }

  double half_a;     ///< a/2
  double log_const;  ///< log c
  double log_scale;  ///< log(2/(a−2))
};

struct HyperGN {
  static constexpr PriorKind kind = PriorKind::hyper_g_n;
  static constexpr std::string_view name = "hyper-g-n";
  static constexpr Family family = Family::mixture;
  /// The kink of (1 + g/n)^{−a/2} near g = n needs the trapezoid step 1/16 at every n.
  static constexpr bool fine_trapezoid_step = true;

  /// As HyperG (a finite and > 2).
  static void check(const Prior& prior) { HyperG::check(prior); }

  HyperGN(const Prior& prior, double n, int /*p*/, int /*p0*/)
      : half_a(0.5 * prior.a),
        log_n(std::log(n)),
        log_const(std::log(0.5 * (prior.a - 2.0) / n)),
        log_scale(std::log(2.0) + std::log(n) - std::log(prior.a - 2.0)) {}

  /// log c = log((a−2)/(2n)).
  double log_constant() const { return log_const; }
  double lower_limit() const { return -std::numeric_limits<double>::infinity(); }
  /// 40 below log(2n/(a−2)) (the prior concentrates at g ≈ 2n/a for large a; as HyperG).
  double mode_lower_limit() const { return log_scale - 40.0; }

  template <class At>
  double log_density(const At& x) const {
    return log_const - half_a * log1p_exp(x.t - log_n) + x.t;
  }
  template <class At>
  LogDensityDerivatives derivatives(const At& x, double /*logistic_t*/) const {
    const double sn = logistic(x.t - log_n);
    return {-half_a * sn + 1.0, -half_a * sn * (1.0 - sn)};
  }

  double half_a;     ///< a/2
  double log_n;      ///< log n
  double log_const;  ///< log c
  double log_scale;  ///< log(2n/(a−2))
};

}  // namespace dpmu::core::priors
