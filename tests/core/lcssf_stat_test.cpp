// LCSSF selection mechanisms: selection frequencies against their exact probabilities.
// Each test uses a fixed seed; chi-square goodness of fit after pooling bins with expected
// count < 5, rejected at the 1 − 1e-6 quantile, so the false-failure probability of each check
// is ≤ 1e-6 (asymptotically; every pooled bin has expected count ≥ 5). Binomial checks use
// |count − Nδ| ≤ 5.3 sd (two-sided normal tail 1.2e-7).
#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dpmu/core/lcssf.hpp"
#include "dpmu/core/random.hpp"

using namespace dpmu::core;

namespace {

struct ChiSquare {
  double statistic = 0.0;
  double critical_value = 0.0;
  int bins = 0;
};

ChiSquare chi_square_test(const std::vector<long>& counts, const std::vector<double>& probabilities) {
  long n = 0;
  for (long c : counts) n += c;
  ChiSquare out;
  double pooled_expected = 0.0, pooled_count = 0.0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double e = probabilities[i] * static_cast<double>(n);
    if (e < 5.0) {
      pooled_expected += e;
      pooled_count += static_cast<double>(counts[i]);
      continue;
    }
    out.statistic += (counts[i] - e) * (counts[i] - e) / e;
    ++out.bins;
  }
  if (pooled_expected >= 5.0) {
    out.statistic += (pooled_count - pooled_expected) * (pooled_count - pooled_expected) / pooled_expected;
    ++out.bins;
  } else if (pooled_count > 3.0 * pooled_expected + 10.0) {
    out.statistic = 1e300;  // many draws where almost none are expected
  }
  out.critical_value =
      boost::math::quantile(boost::math::complement(boost::math::chi_squared(std::max(1, out.bins - 1)), 1e-6));
  return out;
}

Eigen::MatrixXd g_x;
Eigen::VectorXd g_y;

void make_data(int n) {
  RngStream rng(424242, 9, 0, StreamPurpose::data);
  g_x.resize(n, 3);
  g_y.resize(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < 3; ++j) g_x(i, j) = 2.0 * uniform_open01(rng) - 1.0;
    g_y(i) = g_x(i, 0) + 0.5 * g_x(i, 1) + standard_normal(rng);
  }
}

}  // namespace

TEST_CASE("report-noisy-min frequencies match the exact probabilities", "[lcssf][statistical]") {
  const std::vector<double> q{0.0, 0.5, 1.0, 1.5, 3.0, 4.0, 6.0, 10.0};
  const double b = 1.5;
  const auto p = report_noisy_min_probabilities(q, b);
  const long draws = 100000;
  std::vector<long> counts(q.size(), 0);
  RngStream rng(1001, 1, 0, StreamPurpose::noise);
  for (long i = 0; i < draws; ++i) ++counts[report_noisy_min(q, b, rng)];
  const auto t = chi_square_test(counts, p);
  INFO("chi2=" << t.statistic << " bins=" << t.bins);
  CHECK(t.bins >= 6);
  CHECK(t.statistic < t.critical_value);
}

TEST_CASE("exponential-mechanism frequencies match the softmax", "[lcssf][statistical]") {
  const std::vector<double> q{0.0, 0.5, 1.0, 1.5, 3.0, 4.0, 6.0, 10.0};
  const auto lp = exponential_mechanism_log_probabilities(q, 1.0, 0.5);
  std::vector<double> p;
  for (double v : lp) p.push_back(std::exp(v));
  const long draws = 100000;
  std::vector<long> counts(q.size(), 0);
  RngStream rng(1002, 1, 0, StreamPurpose::noise);
  for (long i = 0; i < draws; ++i) ++counts[sample_log_probabilities(lp, rng)];
  const auto t = chi_square_test(counts, p);
  INFO("chi2=" << t.statistic << " bins=" << t.bins);
  CHECK(t.bins >= 5);
  CHECK(t.statistic < t.critical_value);
}

TEST_CASE("Algorithm 1 selection frequencies match report-noisy-min probabilities of its scores",
          "[lcssf][statistical]") {
  make_data(60);
  LcssfSettings s;
  s.radius = 1.5;
  s.penalty = 2.0;
  s.data_bound = 1.0;  // clamps Y into [−1, 1] (counted)
  const double epsilon = 4.0;
  RngStream first(7, 7, 0, StreamPurpose::noise);
  const auto ref = lcssf_algorithm1(g_x, g_y, s, epsilon, first);
  CHECK(ref.clamped_y_entries > 0);
  CHECK(ref.clamped_x_entries == 0);
  const auto p = report_noisy_min_probabilities(ref.scores, ref.laplace_scale);
  const long runs = 20000;
  std::vector<long> counts(ref.models.size(), 0);
  for (long i = 0; i < runs; ++i) {
    RngStream rng(7, 7, static_cast<std::uint64_t>(i), StreamPurpose::noise);
    ++counts[lcssf_algorithm1(g_x, g_y, s, epsilon, rng).selected];  // models are 0..7 in order
  }
  const auto t = chi_square_test(counts, p);
  INFO("chi2=" << t.statistic << " bins=" << t.bins);
  CHECK(t.bins >= 4);
  CHECK(t.statistic < t.critical_value);
}

TEST_CASE(
    "Algorithm 2: the variance release undershoots with probability delta, and the selection is the "
    "exponential mechanism",
    "[lcssf][statistical]") {
  make_data(60);
  LcssfSettings s;
  s.radius = 1.5;
  s.penalty = 1.0;
  s.data_bound = 1.0;
  const double epsilon = 2.0, delta = 0.1;
  const ClampedData cd = clamp_to_data_bound(g_x, g_y, s.data_bound, s.delta_kind);
  const auto models = all_models(3);
  const auto rss = constrained_rss(cd.x, cd.y, models, s.radius);
  const double s0 = *std::min_element(rss.begin(), rss.end()) / 60.0;
  const long runs = 20000;
  long above = 0;
  for (long i = 0; i < runs; ++i) {
    RngStream rng(8, 8, static_cast<std::uint64_t>(i), StreamPurpose::noise);
    above += lcssf_algorithm2(g_x, g_y, s, epsilon, delta, rng).released_variance > s0;
  }
  const double sd = std::sqrt(runs * delta * (1 - delta));
  CHECK(std::abs(above - runs * delta) <= 5.3 * sd);

  // With a floor above every plausible ŝ (P(ŝ > floor) = ½e^{−40}), τ² is the floor and the
  // selection law is exactly the softmax of the truncated scores.
  const double b = rss_l1_sensitivity(1.0, s.radius, s.delta_kind) / (60.0 * epsilon);
  s.variance_floor = s0 + 40.0 * b;
  const auto scores = profile_likelihood_scores(rss, models, 60, s.penalty, s.variance_floor);
  const double dl =
      profile_likelihood_l1_sensitivity(rss_l1_sensitivity(1.0, s.radius, s.delta_kind), s.variance_floor);
  const auto lp = exponential_mechanism_log_probabilities(scores, epsilon, dl);
  std::vector<double> p;
  for (double v : lp) p.push_back(std::exp(v));
  std::vector<long> counts(models.size(), 0);
  for (long i = 0; i < runs; ++i) {
    RngStream rng(9, 9, static_cast<std::uint64_t>(i), StreamPurpose::noise);
    const auto out = lcssf_algorithm2(g_x, g_y, s, epsilon, delta, rng);
    REQUIRE(out.variance_truncation == s.variance_floor);
    ++counts[out.selected];
  }
  const auto t = chi_square_test(counts, p);
  INFO("chi2=" << t.statistic << " bins=" << t.bins);
  CHECK(t.bins >= 3);
  CHECK(t.statistic < t.critical_value);
}
