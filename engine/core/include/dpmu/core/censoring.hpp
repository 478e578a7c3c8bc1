#pragma once
/// @file censoring.hpp
/// Censoring of statistics to [L, U] (paper §1.3: T^c = (T ∨ L) ∧ U) and the conversion of
/// limits given as posterior probabilities (paper §4.5 guidelines).

#include <algorithm>

namespace dpmu::core {

/// Censoring limits L < U on the log scale of a statistic (log B10, log I10 or 2 log Λ10).
struct CensoringLimits {
  double lower;  ///< L
  double upper;  ///< U
  /// Width Δ = U − L: the sensitivity of one censored statistic.
  double width() const { return upper - lower; }
};

/// (x ∨ L) ∧ U. NaN stays NaN.
inline double censor(double x, const CensoringLimits& limits) {
  return std::min(std::max(x, limits.lower), limits.upper);
}

/// Validate L < U, both finite. @throws std::domain_error naming `function`.
void check_censoring_limits(const char* function, const CensoringLimits& limits);

/// Limits on the log Bayes factor equivalent to censoring the posterior probability of H1 at
/// [p_lower, p_upper] given P(H0): L = logit(p_lower) − log((1−P(H0))/P(H0)), likewise U.
/// @throws std::domain_error unless 0 < p_lower < p_upper < 1 and 0 < P(H0) < 1.
CensoringLimits censoring_limits_from_posterior_probabilities(double p_lower, double p_upper,
                                                              double prior_probability_h0);

}  // namespace dpmu::core
