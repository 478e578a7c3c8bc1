// Subsample and aggregate (paper §4): partitions, censoring, the release, intervals and
// critical values.
#include "dpmu/core/subsample_and_aggregate.hpp"

#include <boost/math/distributions/chi_squared.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/information_criteria.hpp"
#include "dpmu/core/linear_model.hpp"
#include "dpmu/core/log_math.hpp"

using Catch::Matchers::Contains;
using namespace dpmu::core;

TEST_CASE("balanced partitions: sizes differ by at most one and cover every row once", "[subsample]") {
  CHECK(subset_sizes(200, 10) == std::vector<std::size_t>(10, 20));
  CHECK(subset_sizes(10, 3) == std::vector<std::size_t>{4, 3, 3});
  RngStream rng(3, 0, 0, StreamPurpose::noise);
  for (std::size_t m : {1, 2, 7, 13}) {
    const auto part = random_partition(101, m, rng);
    REQUIRE(part.size() == m);
    std::set<std::size_t> seen;
    std::size_t lo = 1000, hi = 0;
    for (const auto& g : part) {
      lo = std::min(lo, g.size());
      hi = std::max(hi, g.size());
      seen.insert(g.begin(), g.end());
    }
    CHECK(hi - lo <= 1);
    CHECK(seen.size() == 101);
    CHECK(*seen.rbegin() == 100);
  }
  CHECK_THROWS_WITH(subset_sizes(5, 0), Contains("between 1 and n = 5"));
}

TEST_CASE("the number of subsets is checked against p + p0 + 1 with the largest admissible M", "[subsample]") {
  CHECK(largest_admissible_num_subsets(200, 1, 2) == 40);  // b = 5 > 4
  CHECK_NOTHROW(check_num_subsets(200, 40, 1, 2));
  CHECK_THROWS_WITH(check_num_subsets(200, 41, 1, 2), Contains("largest admissible M is 40"));
  CHECK_THROWS_WITH(check_num_subsets(200, 0, 1, 2), Contains("M is 0"));
}

TEST_CASE("censoring and limits from posterior probabilities", "[subsample]") {
  const CensoringLimits lim{-1.0, 2.0};
  CHECK(censor(-5.0, lim) == -1.0);
  CHECK(censor(5.0, lim) == 2.0);
  CHECK(censor(0.5, lim) == 0.5);
  CHECK(std::isnan(censor(std::nan(""), lim)));
  const auto c = censoring_limits_from_posterior_probabilities(0.01, 0.99, 0.5);
  CHECK(c.lower == Approx(-std::log(99.0)));
  CHECK(c.upper == Approx(std::log(99.0)));
  // the limits map back to the probabilities under any prior odds
  const auto d = censoring_limits_from_posterior_probabilities(0.25, 0.75, 0.8);
  CHECK(posterior_probability_h1(d.lower, 0.8) == Approx(0.25));
  CHECK(posterior_probability_h1(d.upper, 0.8) == Approx(0.75));
  CHECK_THROWS_WITH(censoring_limits_from_posterior_probabilities(0.9, 0.1, 0.5), Contains("smaller than the upper"));
  CHECK_THROWS_WITH(censoring_limits_from_posterior_probabilities(0.0, 0.1, 0.5), Contains("is 0"));
  CHECK_THROWS_WITH(check_censoring_limits("f", CensoringLimits{1.0, 1.0}), Contains("lower censoring limit is 1"));
}

TEST_CASE("the mechanism of a release follows Δ/(Mε) and docs/methods.md A2", "[subsample]") {
  const CensoringLimits lim{0.0, 7.0};
  const auto lap = subsample_and_aggregate_mechanism(1.0, 0.0, lim, 10);
  CHECK(lap.name() == "laplace");
  CHECK(lap.scale() == Approx(0.7));
  const auto exact = subsample_and_aggregate_mechanism(1.0, 0.25, lim, 10);
  CHECK(exact.scale() == Approx(analytic_gaussian_sigma(1.0, 0.25, 0.7)));
  const auto literal = subsample_and_aggregate_mechanism(1.0, 0.25, lim, 10, GaussianCalibration::paper_literal);
  // printed variance α²Δ²/(2Mε) = M × exact variance
  CHECK(literal.scale() * literal.scale() == Approx(10 * exact.scale() * exact.scale()));
  CHECK(literal.calibration() == "analytic-gaussian-paper-literal");
  CHECK_THROWS_WITH(subsample_and_aggregate_mechanism(1.0, 1.0, lim, 10), Contains("delta is 1"));
  CHECK_THROWS_WITH(subsample_and_aggregate_mechanism(0.0, 0.0, lim, 10), Contains("epsilon is 0"));
  CHECK_THROWS_AS(subsample_and_aggregate_mechanism(1.0, 0.0, CensoringLimits{3.0, 1.0}, 10), std::domain_error);
}

TEST_CASE("with zero noise, M = 1 and wide limits the release equals the non-private statistic", "[subsample]") {
  Eigen::MatrixXd common = Eigen::MatrixXd::Ones(50, 1);
  Eigen::MatrixXd x(50, 2);
  Eigen::VectorXd y(50);
  for (int i = 0; i < 50; ++i) {
    x(i, 0) = std::sin(i);
    x(i, 1) = std::cos(3 * i);
    y(i) = 0.3 * x(i, 0) + std::sin(7.0 * i);
  }
  RngStream rng(1, 0, 0, StreamPurpose::noise);
  const auto part = random_partition(50, 1, rng);
  const auto fit = fit_nested_models(common, x, y);
  for (PriorKind kind : {PriorKind::g_prior, PriorKind::zellner_siow, PriorKind::bic, PriorKind::lr}) {
    Prior prior;
    prior.kind = kind;
    const auto t = subset_statistics(common, x, y, part, prior);
    REQUIRE(t.size() == 1);
    const double expected = kind == PriorKind::lr ? two_log_likelihood_ratio(fit.log_one_minus_r_squared, 50)
                                                  : log_statistic(prior, fit.log_one_minus_r_squared, 50, 2, 1);
    CHECK(t[0] == Approx(expected).epsilon(1e-12));
    CHECK(mean_censored(t, CensoringLimits{-1e6, 1e6}) == t[0]);
  }
}

TEST_CASE("aggregate_and_release censors, averages, adds one noise draw and censors again", "[subsample]") {
  const std::vector<double> t{-10.0, 0.5, 1.5, 10.0};
  const CensoringLimits lim{-1.0, 2.0};
  const auto mech = ScalarMechanism::laplace(1.0, lim.width() / 4);
  RngStream a(9, 9, 9, StreamPurpose::noise), b(9, 9, 9, StreamPurpose::noise);
  const auto rel = aggregate_and_release(t, lim, mech, a);
  CHECK(rel.mean_censored == Approx((-1.0 + 0.5 + 1.5 + 2.0) / 4));
  CHECK(rel.noise == mech.sample(b));
  CHECK(rel.noisy_statistic == rel.mean_censored + rel.noise);
  CHECK(rel.released_statistic == censor(rel.noisy_statistic, lim));
  const std::vector<double> with_nan{1.0, std::nan("")};
  CHECK_THROWS_WITH(aggregate_and_release(with_nan, lim, mech, a), Contains("NaN"));
}

TEST_CASE("the §4.2 interval is [T̃ ∓ q] intersected with [L, U]", "[subsample]") {
  const CensoringLimits lim{0.0, 7.0};
  const auto mech = ScalarMechanism::laplace(1.0, 0.7);
  const double q = 0.7 * std::log(1 / 0.05);
  const auto iv = mechanism_uncertainty_interval(3.0, lim, mech, 0.05);
  CHECK(iv.lower == Approx(3.0 - q));
  CHECK(iv.upper == Approx(3.0 + q));
  const auto clipped = mechanism_uncertainty_interval(-0.5, lim, mech, 0.05);
  CHECK(clipped.lower == 0.0);
  CHECK(clipped.upper == Approx(-0.5 + q));
}

TEST_CASE("noise_interval is T~ ± η_{1−α/2} by hand, and the §4.2 release interval censors its end points",
          "[subsample]") {
  const CensoringLimits lim{0.0, 7.0};
  const auto laplace = ScalarMechanism::laplace(1.0, 0.7);  // b = 0.7
  const auto iv = noise_interval(-0.5, laplace, 0.05);
  CHECK(iv.lower == Approx(-0.5 - 0.7 * std::log(20.0)));
  CHECK(iv.upper == Approx(-0.5 + 0.7 * std::log(20.0)));
  const auto cut = mechanism_uncertainty_interval(-0.5, lim, laplace, 0.05);
  CHECK(cut.lower == 0.0);
  CHECK(cut.upper == iv.upper);
  const auto gauss = ScalarMechanism::gaussian_with_sigma(1.0, 0.5, 0.1, 2.0, "test");  // σ = 2; Φ⁻¹(0.995)
  const auto g = noise_interval(1.0, gauss, 0.01);
  CHECK(g.lower == Approx(1.0 - 2.0 * 2.5758293035489004).epsilon(1e-12));
  CHECK(g.upper == Approx(1.0 + 2.0 * 2.5758293035489004).epsilon(1e-12));
  CHECK_THROWS_WITH(noise_interval(1.0, gauss, 1.0), Catch::Contains("alpha"));
}

TEST_CASE("uncorrected critical values are χ² quantiles on each statistic's scale", "[subsample]") {
  const std::vector<std::size_t> sizes{100, 100};
  CHECK(uncorrected_critical_value(PriorKind::lr, sizes, 1, 0.05) == Approx(3.841458820694124));
  CHECK(uncorrected_critical_value(PriorKind::lr, sizes, 1, 0.01) == Approx(6.634896601021214));
  CHECK(uncorrected_critical_value(PriorKind::aic, sizes, 2, 0.05) == Approx(0.5 * 5.991464547107979 - 2));
  CHECK(uncorrected_critical_value(PriorKind::bic, sizes, 1, 0.05) ==
        Approx(0.5 * 3.841458820694124 - 0.5 * std::log(100.0)));
  CHECK_THROWS_AS(uncorrected_critical_value(PriorKind::g_prior, sizes, 1, 0.05), std::invalid_argument);
}

TEST_CASE("corrected critical values reproduce χ² when M = 1, ε → ∞ and no censoring binds",
          "[subsample][statistical]") {
  // One subset of b = 5000 rows, p = 2: 2 log Λ → χ²_2 (Wilks), zero noise, limits far away.
  // N = 2e5 null draws; the quantile's MCSE is ≈ 0.02; we allow 5 MCSE plus the O(p(p+p0)/b)
  // finite-sample shift of the exact law (≈ 0.006).
  Prior lr;
  lr.kind = PriorKind::lr;
  const std::vector<std::size_t> sizes{5000};
  const CensoringLimits lim{0.0, 1e3};
  RngStream rng(17, 0, 0, StreamPurpose::calibration);
  const auto null = simulate_null_distribution(lr, sizes, 2, 1, lim, ScalarMechanism::laplace(1e15, 1.0), 200000, rng);
  for (double alpha : {0.05, 0.01}) {
    const auto cv = corrected_critical_value(null, alpha, lim);
    const double chi2 = boost::math::quantile(boost::math::complement(boost::math::chi_squared(2), alpha));
    INFO("alpha " << alpha << " corrected " << cv.value << " ± " << cv.mcse << " chi2 " << chi2);
    CHECK(cv.mcse > 0.0);
    CHECK(std::abs(cv.value - chi2) < 5 * cv.mcse + 0.01);
    CHECK_FALSE(cv.at_upper_limit);
  }
  CHECK(null.probability_at_upper == 0.0);
}

TEST_CASE("the atom at U makes the critical value U when noise is huge", "[subsample]") {
  Prior lr;
  lr.kind = PriorKind::lr;
  const std::vector<std::size_t> sizes{100, 100};
  const CensoringLimits lim{0.0, 7.0};
  RngStream rng(5, 0, 0, StreamPurpose::calibration);
  const auto mech = subsample_and_aggregate_mechanism(0.01, 0.0, lim, 2);
  const auto null = simulate_null_distribution(lr, sizes, 1, 2, lim, mech, 5000, rng);
  CHECK(null.probability_at_upper > 0.3);
  const auto cv = corrected_critical_value(null, 0.05, lim);
  CHECK(cv.value == 7.0);
  CHECK(cv.at_upper_limit);
}

TEST_CASE("plan_test reproduces the digamma formula for the splitting bias of 2 log Λ under H0",
          "[subsample][statistical]") {
  // docs/methods.md §4.4: E[2 log Λ] on m rows = m[ψ((m−p0)/2) − ψ((m−p−p0)/2)]; HSB (n = 200, p = 1,
  // p0 = 2): 1.0178 (M = 1) and 1.2110 (M = 10). No censoring (limits far away), ε huge (noise sd 1e-8).
  // N = 40 000 draws; tolerance 5 Monte Carlo SEs of the mean (Var(2 log Λ) ≈ 2).
  Prior lr;
  lr.kind = PriorKind::lr;
  const std::vector<TestPlanSetting> settings{{1, {-1e3, 1e3}}, {10, {-1e3, 1e3}}};
  RngStream rng(31, 0, 0, StreamPurpose::calibration);
  const std::size_t k = 40000;
  const auto res = plan_test(lr, 200, 1, 2, 1e12, 0.0, GaussianCalibration::exact, settings, -1.0, k, rng);
  REQUIRE(res.size() == 2);
  const double se = std::sqrt(2.2 / k);
  CHECK(std::abs(res[0].target - 1.0178) < 5 * se);
  CHECK(std::abs(res[0].bias) < 5 * std::sqrt(2) * se);
  CHECK(std::abs(res[1].bias - (1.2110 - 1.0178)) < 5 * std::sqrt(2.2 / 10 / k + 2.2 / k));
  // the decomposition: mse ≈ bias² + variance (exactly up to the (k−1)/k factor)
  for (const auto& r : res) CHECK(r.mse == Approx(r.bias * r.bias + r.variance * (k - 1.0) / k).epsilon(1e-9));
  // M = 10 averages 10 independent statistics: variance ≈ Var(T_20)/10 < Var(T_200)
  CHECK(res[1].variance < res[0].variance);
}

TEST_CASE("plan_test: more noise means more variance, inadmissible M is rejected", "[subsample]") {
  Prior g;
  const std::vector<TestPlanSetting> settings{{5, {-4.6, 4.6}}};
  RngStream r1(32, 0, 0, StreamPurpose::calibration), r2(32, 0, 0, StreamPurpose::calibration);
  const auto lo = plan_test(g, 200, 1, 1, 8.0, 0.0, GaussianCalibration::exact, settings, 0.05, 4000, r1);
  const auto hi = plan_test(g, 200, 1, 1, 0.5, 0.0, GaussianCalibration::exact, settings, 0.05, 4000, r2);
  // Var(η) = 2 (Δ/(Mε))²: 0.108 at ε = 8 and 27.7 at ε = 0.5
  CHECK(hi[0].variance - lo[0].variance ==
        Approx(2 * std::pow(9.2 / 5 / 0.5, 2) - 2 * std::pow(9.2 / 5 / 8, 2)).epsilon(0.1));
  const std::vector<TestPlanSetting> bad{{100, {-4.6, 4.6}}};
  CHECK_THROWS_WITH(plan_test(g, 200, 1, 1, 1.0, 0.0, GaussianCalibration::exact, bad, 0.05, 100, r1),
                    Contains("largest admissible M is 50"));
}

TEST_CASE("default censoring limits follow the paper's guidelines", "[subsample]") {
  const auto lr = default_censoring_limits(PriorKind::lr, 1, 0.5);
  CHECK(lr.lower == 0.0);
  CHECK(lr.upper == Approx(2 * 3.841458820694124));
  const auto bf = default_censoring_limits(PriorKind::g_prior, 1, 0.5);
  CHECK(bf.lower == Approx(-std::log(99.0)));
  CHECK(bf.upper == Approx(std::log(99.0)));
  const auto shifted = default_censoring_limits(PriorKind::bic, 2, 0.8);
  CHECK(posterior_probability_h1(shifted.upper, 0.8) == Approx(0.99));
}
