#include "dpmu/core/information_criteria.hpp"

#include <cmath>

#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/log_math.hpp"
#include "dpmu/core/priors.hpp"

namespace dpmu::core {

double two_log_likelihood_ratio(double log_one_minus_r_squared, double n) {
  constexpr const char* fn = "two_log_likelihood_ratio";
  if (!(std::isfinite(log_one_minus_r_squared) && log_one_minus_r_squared <= 0.0)) {
    throw_domain(fn, "log_one_minus_r_squared", log_one_minus_r_squared, "finite and <= 0");
  }
  check_positive_finite(fn, "n", n);
  return -n * log_one_minus_r_squared;
}

double log_information_criterion(PriorKind kind, double log_one_minus_r_squared, double n, int p) {
  constexpr const char* fn = "log_information_criterion";
  if (is_bayesian(kind)) {
    throw_invalid(fn, "'" + std::string(to_string(kind)) + "' is a prior on g; use log_bayes_factor");
  }
  if (p < 0) throw_domain(fn, "p", p, ">= 0");
  if (!(std::isfinite(n) && n > 1.0)) throw_domain(fn, "n", n, "finite and > 1");
  const double half_deviance = 0.5 * two_log_likelihood_ratio(log_one_minus_r_squared, n);
  return visit_prior_kind(kind, [&](auto unit) -> double {
    using Unit = typename decltype(unit)::type;
    if constexpr (priors::is_information_criterion<Unit>) {
      return half_deviance - Unit::penalty(n, p);
    } else {
      throw_invalid(fn, "'" + std::string(Unit::name) + "' is a prior on g; use log_bayes_factor");
    }
  });
}

double log_statistic(const Prior& prior, double log_one_minus_r_squared, double n, int p, int p0) {
  if (is_bayesian(prior.kind)) return log_bayes_factor(prior, log_one_minus_r_squared, n, p, p0);
  if (!(std::isfinite(n) && n > static_cast<double>(p + p0))) {
    throw_domain("log_statistic", "n", n, "finite and > p + p0 = " + std::to_string(p + p0));
  }
  return log_information_criterion(prior.kind, log_one_minus_r_squared, n, p);
}

double posterior_probability_h1(double log_statistic, double prior_probability_h0) {
  constexpr const char* fn = "posterior_probability_h1";
  check_open_interval(fn, "prior_probability_h0", prior_probability_h0, 0.0, 1.0);
  if (std::isnan(log_statistic)) throw_domain(fn, "log_statistic", log_statistic, "a number");
  const double log_prior_odds = std::log1p(-prior_probability_h0) - std::log(prior_probability_h0);
  return logistic(log_statistic + log_prior_odds);
}

}  // namespace dpmu::core
