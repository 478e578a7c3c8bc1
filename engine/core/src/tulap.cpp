// The Tulap distribution and the DP-UMP binomial test (Awan & Slavković 2018; docs/methods.md
// "Test of Tests").
#include "dpmu/core/tulap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dpmu/core/checks.hpp"

namespace dpmu::core {

namespace {

/// F(t) for t ≤ 0 (Definition 4.1): b^{−[t]}/(1+b)·(b + (t − [t] + 1/2)(1 − b)), b = e^{−ε}.
double tulap_cdf_left(double t, double epsilon) {
  const double k = std::nearbyint(t);  // [t] ≤ 0
  const double b = std::exp(-epsilon);
  const double one_minus_b = -std::expm1(-epsilon);
  // b^{−[t]} = exp(ε [t]) (underflows gracefully to 0 far in the tail)
  return std::exp(epsilon * k) / (1.0 + b) * (b + (t - k + 0.5) * one_minus_b);
}

}  // namespace

double tulap_cdf(double t, double epsilon) {
  if (std::isnan(t)) return t;
  if (t <= 0.0) return tulap_cdf_left(t, epsilon);
  return 1.0 - tulap_cdf_left(-t, epsilon);
}

double tulap_upper_probability(double z, std::span<const double> pmf, double epsilon) {
  // P(x + N ≥ z) = P(N ≥ z − x) = F(x − z) by symmetry; summed from the small terms up.
  double sum = 0.0;
  for (std::size_t x = 0; x < pmf.size(); ++x) {
    if (pmf[x] == 0.0) continue;
    sum += pmf[x] * tulap_cdf(static_cast<double>(x) - z, epsilon);
  }
  return std::clamp(sum, 0.0, 1.0);
}

std::vector<double> binomial_pmf(std::uint64_t trials, double theta) {
  std::vector<double> pmf(trials + 1, 0.0);
  if (theta <= 0.0) {
    pmf[0] = 1.0;
    return pmf;
  }
  if (theta >= 1.0) {
    pmf[trials] = 1.0;
    return pmf;
  }
  const double m = static_cast<double>(trials);
  const double lt = std::log(theta), l1t = std::log1p(-theta);
  const double lgm = std::lgamma(m + 1.0);
  for (std::uint64_t x = 0; x <= trials; ++x) {
    const double xd = static_cast<double>(x);
    pmf[x] = std::exp(lgm - std::lgamma(xd + 1.0) - std::lgamma(m - xd + 1.0) + xd * lt + (m - xd) * l1t);
  }
  return pmf;
}

std::vector<double> poisson_binomial_pmf(std::span<const double> theta) {
  std::vector<double> pmf(theta.size() + 1, 0.0);
  pmf[0] = 1.0;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    const double t = theta[i];
    for (std::size_t x = i + 1; x > 0; --x) pmf[x] = pmf[x] * (1.0 - t) + pmf[x - 1] * t;
    pmf[0] *= 1.0 - t;
  }
  return pmf;
}

double tulap_binomial_p_value(double z, std::uint64_t trials, double theta0, double epsilon) {
  const char* fn = "tulap_binomial_p_value";
  if (trials < 1) throw_domain(fn, "trials", 0.0, "at least 1");
  check_open_interval(fn, "theta0", theta0, 0.0, 1.0);
  check_positive_finite(fn, "epsilon", epsilon);
  check_finite(fn, "z", z);
  const std::vector<double> pmf = binomial_pmf(trials, theta0);
  return tulap_upper_probability(z, pmf, epsilon);
}

double tulap_critical_value(std::uint64_t trials, double theta0, double epsilon, double alpha) {
  check_open_interval("tulap_critical_value", "alpha", alpha, 0.0, 1.0);
  tulap_binomial_p_value(0.0, trials, theta0, epsilon);  // checks
  const std::vector<double> pmf = binomial_pmf(trials, theta0);
  // p(z) decreases from 1 to 0; bracket the root by doubling beyond [0, trials].
  double width = 1.0 + 1.0 / epsilon;
  double lo = -width, hi = static_cast<double>(trials) + width;
  while (tulap_upper_probability(lo, pmf, epsilon) < alpha) lo -= (width *= 2.0);
  width = 1.0 + 1.0 / epsilon;
  while (tulap_upper_probability(hi, pmf, epsilon) > alpha) hi += (width *= 2.0);
  for (int it = 0; it < 200 && hi - lo > 1e-12 * (1.0 + std::abs(lo) + std::abs(hi)); ++it) {
    const double mid = 0.5 * (lo + hi);
    if (tulap_upper_probability(mid, pmf, epsilon) > alpha) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

double tulap_dyadic_epsilon(double epsilon) {
  const char* fn = "tulap_dyadic_epsilon";
  if (!(std::isfinite(epsilon) && epsilon >= 1e-12 && epsilon <= 1000.0)) {
    throw_domain(fn, "epsilon", epsilon, "in [1e-12, 1000]");
  }
  return std::ldexp(std::floor(std::ldexp(epsilon, kTulapEpsilonBits)), -kTulapEpsilonBits);
}

}  // namespace dpmu::core
