#include "dpmu/core/subsample_and_aggregate.hpp"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <numeric>

#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/information_criteria.hpp"
#include "dpmu/core/linear_model.hpp"
#include "dpmu/core/priors.hpp"

namespace dpmu::core {

StatisticScale statistic_scale(PriorKind kind) {
  if (kind == PriorKind::lr) return StatisticScale::two_log_likelihood_ratio;
  if (is_bayesian(kind)) return StatisticScale::log_bayes_factor;
  return StatisticScale::log_information_criterion;
}

std::string to_string(StatisticScale scale) {
  switch (scale) {
    case StatisticScale::log_bayes_factor:
      return "log_bayes_factor";
    case StatisticScale::log_information_criterion:
      return "log_information_criterion";
    case StatisticScale::two_log_likelihood_ratio:
      return "two_log_likelihood_ratio";
  }
  throw_invalid("to_string", "StatisticScale value " + std::to_string(static_cast<int>(scale)) + " is not a scale");
}

std::vector<std::size_t> subset_sizes(std::size_t n, std::size_t num_subsets) {
  if (num_subsets == 0 || num_subsets > n) {
    throw_domain("subset_sizes", "num_subsets (M)", static_cast<double>(num_subsets),
                 "between 1 and n = " + std::to_string(n));
  }
  std::vector<std::size_t> sizes(num_subsets, n / num_subsets);
  for (std::size_t i = 0; i < n % num_subsets; ++i) ++sizes[i];
  return sizes;
}

std::size_t largest_admissible_num_subsets(std::size_t n, int p, int p0) {
  // every b_i ≥ ⌊n/M⌋ must exceed p + p0 + 1
  return n / static_cast<std::size_t>(p + p0 + 2);
}

void check_num_subsets(std::size_t n, std::size_t num_subsets, int p, int p0) {
  const std::size_t largest = largest_admissible_num_subsets(n, p, p0);
  if (num_subsets < 1 || num_subsets > largest) {
    throw_domain("check_num_subsets", "the number of subsets M", static_cast<double>(num_subsets),
                 "between 1 and " + std::to_string(largest) + ": with n = " + std::to_string(n) +
                     " rows each subset needs more than p + p0 + 1 = " + std::to_string(p + p0 + 1) +
                     " rows, so the largest admissible M is " + std::to_string(largest));
  }
}

std::vector<std::vector<std::size_t>> random_partition(std::size_t n, std::size_t num_subsets, RngStream& rng) {
  const auto sizes = subset_sizes(n, num_subsets);
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  for (std::size_t i = n; i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_index(rng, i));
    std::swap(perm[i - 1], perm[j]);
  }
  std::vector<std::vector<std::size_t>> out(num_subsets);
  std::size_t pos = 0;
  for (std::size_t s = 0; s < num_subsets; ++s) {
    out[s].assign(perm.begin() + static_cast<std::ptrdiff_t>(pos),
                  perm.begin() + static_cast<std::ptrdiff_t>(pos + sizes[s]));
    pos += sizes[s];
  }
  return out;
}

double subset_statistic(const Prior& prior, double log_one_minus_r_squared, double b, int p, int p0) {
  if (prior.kind == PriorKind::lr) {
    if (!(std::isfinite(b) && b > static_cast<double>(p + p0))) {
      throw_domain("subset_statistic", "subset size", b, "> p + p0 = " + std::to_string(p + p0));
    }
    return two_log_likelihood_ratio(log_one_minus_r_squared, b);
  }
  return log_statistic(prior, log_one_minus_r_squared, b, p, p0);
}

double mean_censored(std::span<const double> subset_statistics, const CensoringLimits& limits) {
  if (subset_statistics.empty()) throw std::invalid_argument("mean_censored: no subset statistics");
  double sum = 0.0;
  for (double t : subset_statistics) {
    if (std::isnan(t)) throw std::invalid_argument("mean_censored: a subset statistic is NaN");
    sum += censor(t, limits);
  }
  return sum / static_cast<double>(subset_statistics.size());
}

std::vector<double> subset_statistics(const Eigen::Ref<const Eigen::MatrixXd>& common,
                                      const Eigen::Ref<const Eigen::MatrixXd>& tested,
                                      const Eigen::Ref<const Eigen::VectorXd>& response,
                                      const std::vector<std::vector<std::size_t>>& partition, const Prior& prior,
                                      std::optional<double> failure_value, std::size_t* failed_subsets) {
  if (failed_subsets) *failed_subsets = 0;
  std::vector<double> out;
  out.reserve(partition.size());
  for (std::size_t s = 0; s < partition.size(); ++s) {
    const auto& rows = partition[s];
    const auto b = static_cast<Eigen::Index>(rows.size());
    Eigen::MatrixXd c(b, common.cols()), x(b, tested.cols());
    Eigen::VectorXd y(b);
    for (Eigen::Index i = 0; i < b; ++i) {
      const auto r = static_cast<Eigen::Index>(rows[static_cast<std::size_t>(i)]);
      c.row(i) = common.row(r);
      x.row(i) = tested.row(r);
      y(i) = response(r);
    }
    double t = 0.0;
    try {
      const NestedFit fit = fit_nested_models(c, x, y);
      t = subset_statistic(prior, fit.log_one_minus_r_squared, static_cast<double>(b), static_cast<int>(tested.cols()),
                           static_cast<int>(common.cols()));
      if (std::isnan(t)) throw std::domain_error("the statistic is not a number");
    } catch (const std::logic_error& e) {  // invalid_argument and domain_error
      if (!failure_value) {
        throw std::invalid_argument("subset " + std::to_string(s + 1) + " of " + std::to_string(partition.size()) +
                                    " (" + std::to_string(b) + " rows): " + e.what() +
                                    "; use fewer subsets (smaller M)");
      }
      t = *failure_value;
      if (failed_subsets) ++*failed_subsets;
    }
    out.push_back(t);
  }
  return out;
}

ScalarMechanism subsample_and_aggregate_mechanism(double epsilon, double delta, const CensoringLimits& limits,
                                                  std::size_t num_subsets, GaussianCalibration calibration) {
  constexpr const char* fn = "subsample_and_aggregate_mechanism";
  check_positive_finite(fn, "epsilon", epsilon);
  check_half_open_interval(fn, "delta", delta, 0.0, 1.0);
  check_censoring_limits(fn, limits);
  if (num_subsets < 1) throw_domain(fn, "num_subsets (M)", 0.0, ">= 1");
  const double m = static_cast<double>(num_subsets);
  const double sensitivity = limits.width() / m;
  if (delta == 0.0) return ScalarMechanism::laplace(epsilon, sensitivity);
  if (calibration == GaussianCalibration::exact) return ScalarMechanism::gaussian(epsilon, delta, sensitivity);
  const double sigma = std::sqrt(m) * analytic_gaussian_sigma(epsilon, delta, sensitivity);
  return ScalarMechanism::gaussian_with_sigma(epsilon, delta, sensitivity, sigma, "analytic-gaussian-paper-literal");
}

Interval noise_interval(double noisy_statistic, const ScalarMechanism& mechanism, double alpha) {
  check_open_interval("noise_interval", "alpha", alpha, 0.0, 1.0);
  const double q = mechanism.noise_quantile(1.0 - alpha / 2.0);
  return {noisy_statistic - q, noisy_statistic + q};
}

Interval mechanism_uncertainty_interval(double noisy_statistic, const CensoringLimits& limits,
                                        const ScalarMechanism& mechanism, double alpha) {
  check_open_interval("mechanism_uncertainty_interval", "alpha", alpha, 0.0, 1.0);
  const Interval c = noise_interval(noisy_statistic, mechanism, alpha);
  return {censor(c.lower, limits), censor(c.upper, limits)};
}

NullDistribution simulate_null_distribution(const Prior& prior, std::span<const std::size_t> sizes, int p, int p0,
                                            const CensoringLimits& limits, const ScalarMechanism& mechanism,
                                            std::size_t num_simulations, RngStream& rng,
                                            const ProgressCallback& progress) {
  constexpr const char* fn = "simulate_null_distribution";
  if (num_simulations < 1) throw_domain(fn, "num_simulations", 0.0, ">= 1");
  if (sizes.empty()) throw_invalid(fn, "no subsets");
  check_censoring_limits(fn, limits);
  for (std::size_t b : sizes) {
    if (b <= static_cast<std::size_t>(p + p0)) {
      throw_domain(fn, "a subset size", static_cast<double>(b), "> p + p0 = " + std::to_string(p + p0));
    }
  }
  NullDistribution out;
  out.sorted_statistics.resize(num_simulations);
  std::vector<double> t(sizes.size());
  std::size_t at_upper = 0;
  for (std::size_t r = 0; r < num_simulations; ++r) {
    if (r % kProgressInterval == 0) report_progress(progress, r, num_simulations, "null-simulation");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const double b = static_cast<double>(sizes[i]);
      const double x = standard_gamma(rng, 0.5 * p);
      const double y = standard_gamma(rng, 0.5 * (b - p - p0));
      const double log_q = std::log(y) - std::log(x + y);  // log(1 − R²), R² ~ Beta(p/2, (b−p−p0)/2)
      t[i] = subset_statistic(prior, std::min(log_q, 0.0), b, p, p0);
    }
    const auto release = aggregate_and_release(t, limits, mechanism, rng);
    out.sorted_statistics[r] = release.released_statistic;
    if (release.released_statistic >= limits.upper) ++at_upper;
  }
  std::sort(out.sorted_statistics.begin(), out.sorted_statistics.end());
  out.probability_at_upper = static_cast<double>(at_upper) / static_cast<double>(num_simulations);
  return out;
}

CriticalValue corrected_critical_value(const NullDistribution& null, double alpha, const CensoringLimits& limits) {
  constexpr const char* fn = "corrected_critical_value";
  check_open_interval(fn, "alpha", alpha, 0.0, 1.0);
  const auto& x = null.sorted_statistics;
  if (x.empty()) throw_invalid(fn, "the null distribution is empty");
  const double n = static_cast<double>(x.size());
  const double q = 1.0 - alpha;
  const auto at = [&](double one_based) {
    const auto k = static_cast<std::size_t>(std::clamp(one_based, 1.0, n));
    return x[k - 1];
  };
  CriticalValue cv;
  cv.significance_level = alpha;
  cv.value = at(std::ceil(n * q));
  const double half = 1.959963984540054 * std::sqrt(n * q * (1.0 - q));
  cv.mcse = (at(std::ceil(n * q + half)) - at(std::floor(n * q - half))) / (2.0 * 1.959963984540054);
  cv.at_upper_limit = cv.value >= limits.upper;
  cv.randomization_probability =
      cv.at_upper_limit && null.probability_at_upper > 0.0 ? std::min(1.0, alpha / null.probability_at_upper) : 0.0;
  return cv;
}

double rejection_probability(const CriticalValue& critical_value, double released_statistic,
                             const CensoringLimits& limits) {
  if (released_statistic > critical_value.value) return 1.0;
  if (critical_value.at_upper_limit && released_statistic >= limits.upper) {
    return critical_value.randomization_probability;
  }
  return 0.0;
}

CensoringLimits default_censoring_limits(PriorKind kind, int p, double prior_probability_h0) {
  if (kind == PriorKind::lr) {
    const std::vector<std::size_t> one{1};
    return {0.0, 2.0 * uncorrected_critical_value(PriorKind::lr, one, p, 0.05)};
  }
  return censoring_limits_from_posterior_probabilities(0.01, 0.99, prior_probability_h0);
}

double uncorrected_critical_value(PriorKind kind, std::span<const std::size_t> sizes, int p, double alpha) {
  constexpr const char* fn = "uncorrected_critical_value";
  check_open_interval(fn, "alpha", alpha, 0.0, 1.0);
  if (is_bayesian(kind)) throw_invalid(fn, "Bayes factors have no frequentist critical value");
  if (p < 1) throw_domain(fn, "p", p, ">= 1");
  const double chi2 = boost::math::quantile(boost::math::complement(boost::math::chi_squared(p), alpha));
  if (kind == PriorKind::lr) return chi2;
  return visit_prior_kind(kind, [&](auto unit) -> double {
    using Unit = typename decltype(unit)::type;
    if constexpr (priors::is_information_criterion<Unit>) {
      double penalty = 0.0;
      for (std::size_t b : sizes) penalty += Unit::penalty(static_cast<double>(b), p);
      return 0.5 * chi2 - penalty / static_cast<double>(sizes.size());
    } else {
      throw_invalid(fn, "Bayes factors have no frequentist critical value");
    }
  });
}

}  // namespace dpmu::core

namespace dpmu::core {

namespace {
// log(1 − R²) for R² = X1/(X1+X2), X1 ~ χ²_p(λ), X2 ~ χ²_{b−p−p0}: exact in log space.
double draw_log_one_minus_r_squared(RngStream& rng, double lambda, int p, double b, int p0) {
  const double z = standard_normal(rng) + std::sqrt(lambda);
  const double x1 = z * z + (p > 1 ? chi_square(rng, p - 1) : 0.0);
  const double x2 = chi_square(rng, b - p - p0);
  return std::min(0.0, std::log(x2) - std::log(x1 + x2));
}
}  // namespace

std::vector<TestPlanResult> plan_test(const Prior& prior, std::size_t n, int p, int p0, double epsilon, double delta,
                                      GaussianCalibration calibration, std::span<const TestPlanSetting> settings,
                                      double r_squared, std::size_t simulations, RngStream& rng) {
  constexpr const char* fn = "plan_test";
  if (settings.empty()) throw_invalid(fn, "no candidate settings");
  if (simulations < 10) throw_invalid(fn, "at least 10 simulations are needed");
  if (!(r_squared < 1.0) || std::isnan(r_squared)) throw_domain(fn, "r_squared", r_squared, "< 1 (negative: under H0)");
  const bool null = r_squared < 0.0;
  const double nd = static_cast<double>(n);
  const double theta = null ? 0.0 : std::max(0.0, r_squared / (1.0 - r_squared) - p / (nd - p - p0));
  // Target: 𝒯 on all n rows at the given R², or its null mean by simulation.
  double target = 0.0;
  if (null) {
    double sum = 0.0;
    for (std::size_t r = 0; r < simulations; ++r) {
      sum += subset_statistic(prior, draw_log_one_minus_r_squared(rng, 0.0, p, nd, p0), nd, p, p0);
    }
    target = sum / static_cast<double>(simulations);
  } else {
    target = subset_statistic(prior, std::log1p(-r_squared), nd, p, p0);
  }
  std::vector<TestPlanResult> out;
  for (const auto& s : settings) {
    check_num_subsets(n, s.num_subsets, p, p0);
    const auto mech = subsample_and_aggregate_mechanism(epsilon, delta, s.limits, s.num_subsets, calibration);
    const auto sizes = subset_sizes(n, s.num_subsets);
    std::vector<double> t(sizes.size());
    double sum = 0, sum2 = 0, se_sum = 0, se_sum2 = 0, rel_sum = 0;
    std::size_t at_upper = 0;
    for (std::size_t r = 0; r < simulations; ++r) {
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const double b = static_cast<double>(sizes[i]);
        t[i] = subset_statistic(prior, draw_log_one_minus_r_squared(rng, b * theta, p, b, p0), b, p, p0);
      }
      const auto rel = aggregate_and_release(t, s.limits, mech, rng);
      const double e = rel.noisy_statistic - target;
      sum += rel.noisy_statistic;
      sum2 += rel.noisy_statistic * rel.noisy_statistic;
      se_sum += e * e;
      se_sum2 += e * e * e * e;
      rel_sum += (rel.released_statistic - target) * (rel.released_statistic - target);
      if (rel.released_statistic >= s.limits.upper) ++at_upper;
    }
    const double k = static_cast<double>(simulations);
    TestPlanResult res;
    res.setting = s;
    res.target = target;
    const double mean = sum / k;
    res.bias = mean - target;
    res.variance = (sum2 - k * mean * mean) / (k - 1.0);
    res.mse = se_sum / k;
    res.mse_mcse = std::sqrt(std::max(0.0, se_sum2 / k - res.mse * res.mse) / k);
    res.released_mse = rel_sum / k;
    res.probability_at_upper = static_cast<double>(at_upper) / k;
    out.push_back(res);
  }
  return out;
}

}  // namespace dpmu::core
