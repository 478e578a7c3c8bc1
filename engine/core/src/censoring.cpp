#include "dpmu/core/censoring.hpp"

#include <cmath>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/log_math.hpp"

namespace dpmu::core {

void check_censoring_limits(const char* function, const CensoringLimits& limits) {
  check_ordered_limits(function, "lower censoring limit", limits.lower, "upper censoring limit", limits.upper);
}

CensoringLimits censoring_limits_from_posterior_probabilities(double p_lower, double p_upper,
                                                              double prior_probability_h0) {
  constexpr const char* fn = "censoring_limits_from_posterior_probabilities";
  check_open_interval(fn, "lower posterior probability", p_lower, 0.0, 1.0);
  check_open_interval(fn, "upper posterior probability", p_upper, 0.0, 1.0);
  check_open_interval(fn, "prior_probability_h0", prior_probability_h0, 0.0, 1.0);
  if (!(p_lower < p_upper)) {
    throw_domain(fn, "lower posterior probability", p_lower, "smaller than the upper one, " + format_value(p_upper));
  }
  const double log_prior_odds = std::log1p(-prior_probability_h0) - std::log(prior_probability_h0);
  return {logit(p_lower) - log_prior_odds, logit(p_upper) - log_prior_odds};
}

}  // namespace dpmu::core
