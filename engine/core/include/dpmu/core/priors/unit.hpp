#pragma once
/// @file priors/unit.hpp
/// What every prior unit of priors/*.hpp provides (docs/architecture.md "How to add a prior").
///
/// A unit is a struct, one per PriorKind, constructed from the parameter record `Prior` and the
/// shape of the comparison (n rows, p tested and p0 common columns, intercept counted):
///   static constexpr PriorKind kind;          its enum value
///   static constexpr std::string_view name;   the command-line / config spelling
///   static constexpr Family family;           fixed g, mixture of g-priors, or information criterion
///   static void check(const Prior&);          validates the parameters it uses (std::domain_error)
///   Unit(const Prior&, double n, int p, int p0);
/// Mixtures of g-priors (family == Family::mixture) also provide, in t = log g,
///   double log_constant() const;              log c of π(g) = c·k(g)
///   double lower_limit() const;               lower end of the support in t (−inf if none)
///   double mode_lower_limit() const;          where the prior's mass ends below (+inf if unbounded)
///   template <class At> double log_density(const At& x) const;   log π(e^t) + t
///   template <class At> LogDensityDerivatives derivatives(const At& x, double logistic_t) const;
///   static constexpr bool fine_trapezoid_step; needs step 1/16 at every n (model_space.cpp)
/// where `x` is a LogGAt-like point: x.t, x.softplus() = log(1 + e^t), x.exp_minus_t() = e^{−t}
/// (derivatives() uses x.t and x.exp_minus_t() only).
/// The integrators of bayes_factor.cpp and model_space.cpp compute these pieces their own way
/// (one by one, or from one shared exp(−|t|)), so the unit holds the only copy of each formula.

#include <algorithm>
#include <cmath>

#include "dpmu/core/g_priors.hpp"
#include "dpmu/core/log_math.hpp"

namespace dpmu::core::priors {

/// How a prior enters the Bayes factor of paper Eq. (3) or the statistic of Eq. (4).
enum class Family {
  fixed_g,                ///< Zellner's g-prior: closed-form Bayes factor
  mixture,                ///< a density on g: the Bayes factor is an integral over t = log g
  information_criterion,  ///< bic/aic/lr: I10 of Eq. (4), no prior on g
};

/// First and second derivatives in t of a unit's log_density (the Newton search for the mode in
/// model_space.cpp adds them to those of the likelihood).
struct LogDensityDerivatives {
  double first = 0.0;
  double second = 0.0;
};

/// Upper end, in t = log g, of the search for the mode of the integrand of Eq. (3) for both
/// integrators (bayes_factor.cpp, model_space.cpp): t = 80, or 40 beyond t = log m − log(1 − R²)
/// once R² → 1 moves the likelihood's peak (near g = (m − k)/(k(1 − R²))) out there.
/// @param m n − p0 (> 0). @param log_q log(1 − R²) ≤ 0. Natural log.
inline double log_g_search_upper_limit(double m, double log_q) { return std::max(80.0, std::log(m) - log_q + 40.0); }

/// A point t = log g whose shared pieces are computed one at a time (bayes_factor.cpp, tests).
struct LogGAt {
  double t;
  double softplus() const { return log1p_exp(t); }  ///< log(1 + e^t)
  double exp_minus_t() const { return std::exp(-t); }
};

}  // namespace dpmu::core::priors
