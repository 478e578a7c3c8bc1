// Calibration metrics (dpmu/core/calibration_metrics.hpp; docs/bma.md "Calibration metrics"): coverage,
// the Brier score and the reliability table against hand-computed values, and the reliability table
// of a perfectly calibrated (and of a miscalibrated) synthetic predictor under a fixed seed.
#include "dpmu/core/calibration_metrics.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "dpmu/core/random.hpp"

namespace core = dpmu::core;

TEST_CASE("interval_covers: closed interval, NaN never covers", "[calibration_metrics]") {
  CHECK(core::interval_covers(-1.0, 1.0, 0.0) == 1.0);
  CHECK(core::interval_covers(-1.0, 1.0, -1.0) == 1.0);  // ends included
  CHECK(core::interval_covers(-1.0, 1.0, 1.0) == 1.0);
  CHECK(core::interval_covers(-1.0, 1.0, 1.0000001) == 0.0);
  CHECK(core::interval_covers(0.0, 0.0, 0.0) == 1.0);  // a point mass at 0 covers a zero coefficient
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(core::interval_covers(nan, 1.0, 0.0) == 0.0);
  CHECK(core::interval_covers(-1.0, 1.0, nan) == 0.0);
}

TEST_CASE("brier_score: hand-computed values, probability targets, errors", "[calibration_metrics]") {
  // (0.2 − 0)² + (0.9 − 1)² + (0.5 − 1)² = 0.04 + 0.01 + 0.25 = 0.30, over 3
  CHECK(core::brier_score(Eigen::Vector3d(0.2, 0.9, 0.5), Eigen::Vector3d(0, 1, 1)) == Approx(0.1).epsilon(1e-15));
  CHECK(core::brier_score(Eigen::Vector2d(1, 0), Eigen::Vector2d(1, 0)) == 0.0);  // perfect
  CHECK(core::brier_score(Eigen::Vector2d(0, 1), Eigen::Vector2d(1, 0)) == 1.0);  // worst
  // against probabilities: the mean squared distance, ((0.3 − 0.1)² + (0.6 − 0.6)²)/2 = 0.02
  CHECK(core::brier_score(Eigen::Vector2d(0.3, 0.6), Eigen::Vector2d(0.1, 0.6)) == Approx(0.02).epsilon(1e-14));
  CHECK_THROWS_AS(core::brier_score(Eigen::Vector2d(0.3, 0.6), Eigen::Vector3d(0, 1, 0)), std::invalid_argument);
  CHECK_THROWS_AS(core::brier_score(Eigen::VectorXd(0), Eigen::VectorXd(0)), std::invalid_argument);
}

TEST_CASE("reliability_bin: half-open equal bins, 1 in the last, rounding and NaN", "[calibration_metrics]") {
  CHECK(core::reliability_bin(0.0, 10) == 0);
  CHECK(core::reliability_bin(0.0999, 10) == 0);
  CHECK(core::reliability_bin(0.1, 10) == 1);
  CHECK(core::reliability_bin(0.55, 10) == 5);
  CHECK(core::reliability_bin(0.95, 10) == 9);
  CHECK(core::reliability_bin(1.0, 10) == 9);
  CHECK(core::reliability_bin(std::nextafter(1.0, 0.0), 10) == 9);
  CHECK(core::reliability_bin(-1e-13, 10) == 0);       // rounding below 0
  CHECK(core::reliability_bin(1.0 + 1e-13, 10) == 9);  // rounding above 1
  CHECK(core::reliability_bin(1.1, 10) == -1);
  CHECK(core::reliability_bin(-0.1, 10) == -1);
  CHECK(core::reliability_bin(std::numeric_limits<double>::quiet_NaN(), 10) == -1);
  CHECK(core::reliability_bin(0.7, 1) == 0);
  CHECK(core::reliability_bin(0.5, 2) == 1);
  CHECK_THROWS_AS(core::reliability_bin(0.5, 0), std::invalid_argument);
  // every bin k of 10 holds its left edge k/10 (as the double nearest to it)
  for (int k = 0; k < 10; ++k) CHECK(core::reliability_bin(k / 10.0, 10) == k);
}

TEST_CASE("ReliabilityTable: counts, events and predicted sums by hand", "[calibration_metrics]") {
  core::ReliabilityTable t(4);
  CHECK(t.add(0.1, false));
  CHECK(t.add(0.2, true));
  CHECK(t.add(0.9, true));
  CHECK(t.add(1.0, true));
  CHECK_FALSE(t.add(std::numeric_limits<double>::quiet_NaN(), true));  // not counted
  CHECK(t.count == std::vector<double>{2, 0, 0, 2});
  CHECK(t.events == std::vector<double>{1, 0, 0, 2});
  CHECK(t.predicted_sum[0] == Approx(0.3));
  CHECK(t.predicted_sum[3] == Approx(1.9));
  CHECK_THROWS_AS(core::ReliabilityTable(0), std::invalid_argument);
}

namespace {

/// Reliability table of N predictions q ~ U(0, 1) whose events are Bernoulli(link(q)).
template <class Link>
core::ReliabilityTable synthetic_table(std::uint64_t seed, int n, Link link, std::vector<double>& variance_sum) {
  core::RngStream rng(seed, 0, 0, core::StreamPurpose::data);
  core::ReliabilityTable t(10);
  variance_sum.assign(10, 0.0);
  for (int i = 0; i < n; ++i) {
    const double q = core::uniform_open01(rng);
    const double truth = link(q);
    const bool event = core::uniform_open01(rng) < truth;
    REQUIRE(t.add(q, event));
    variance_sum[static_cast<std::size_t>(core::reliability_bin(q, 10))] += truth * (1.0 - truth);
  }
  return t;
}

}  // namespace

TEST_CASE("ReliabilityTable: a perfectly calibrated predictor has observed = predicted within binomial error",
          "[calibration_metrics][statistical]") {
  // q ~ U(0, 1), event ~ Bernoulli(q), N = 200 000, seed fixed. In bin k, observed − mean predicted
  // = Σ (1[event_i] − q_i)/count has mean 0 and SD sqrt(Σ q_i (1 − q_i))/count (exact given the q's);
  // each of the 10 bins is checked within 4 of these SDs (a false alarm per bin has probability
  // 6e-5), and against the plug-in binomial SE sqrt(f (1 − f)/count) of the reliability diagram.
  const int n = 200000;
  std::vector<double> var;
  const auto t = synthetic_table(
      20261203, n, [](double q) { return q; }, var);
  CHECK(std::accumulate(t.count.begin(), t.count.end(), 0.0) == n);  // every prediction in one bin
  for (std::size_t k = 0; k < 10; ++k) {
    INFO("bin " << k);
    REQUIRE(t.count[k] > 15000.0);  // about n/10 each
    const double observed = t.events[k] / t.count[k];
    const double predicted = t.predicted_sum[k] / t.count[k];
    CHECK(predicted >= k / 10.0);
    CHECK(predicted < (k + 1) / 10.0);
    CHECK(predicted == Approx((k + 0.5) / 10.0).margin(0.005));  // uniform within the bin
    const double sd = std::sqrt(var[k]) / t.count[k];
    CHECK(std::abs(observed - predicted) < 4.0 * sd);
    const double binomial_se = std::sqrt(observed * (1.0 - observed) / t.count[k]);
    CHECK(std::abs(observed - predicted) < 4.0 * binomial_se + 1e-12);
  }
}

TEST_CASE("ReliabilityTable: a miscalibrated predictor (truth q^2) is told apart in the middle bins",
          "[calibration_metrics][statistical]") {
  // Events ~ Bernoulli(q²): in bin 5 (q in [0.5, 0.6)) the observed frequency is about
  // E(q² | bin) = 0.3033, 0.25 below the predicted 0.55, i.e. > 30 binomial SEs with ~2000 per bin.
  const int n = 20000;
  std::vector<double> var;
  const auto t = synthetic_table(
      7, n, [](double q) { return q * q; }, var);
  const std::size_t k = 5;
  const double observed = t.events[k] / t.count[k];
  const double predicted = t.predicted_sum[k] / t.count[k];
  const double se = std::sqrt(observed * (1.0 - observed) / t.count[k]);
  CHECK(observed == Approx(0.91 / 3.0).margin(4.0 * std::sqrt(var[k]) / t.count[k]));  // ∫ q² over the bin ×10
  CHECK(predicted - observed > 10.0 * se);
}
