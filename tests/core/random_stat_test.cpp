// Samplers of random.hpp: determinism of streams, and distribution checks with fixed seeds.
// Each statistical check states N and its false-failure probability (two-sided normal
// tail at z = 5: about 6e-7 per check, Monte Carlo errors from the exact variances).
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dpmu/core/block_random.hpp"
#include "dpmu/core/random.hpp"

using dpmu::core::RngStream;
using dpmu::core::StreamPurpose;

namespace {
constexpr double kZ = 5.0;

struct Moments {
  double mean = 0, var = 0, m4 = 0;
};
template <class F>
Moments moments(F&& draw, int n) {
  std::vector<double> x(n);
  for (auto& v : x) v = draw();
  Moments m;
  for (double v : x) m.mean += v;
  m.mean /= n;
  for (double v : x) {
    const double d = v - m.mean;
    m.var += d * d;
    m.m4 += d * d * d * d;
  }
  m.var /= (n - 1);
  m.m4 /= n;
  return m;
}
}  // namespace

TEST_CASE("streams are pure functions of their identifiers", "[random]") {
  RngStream a(42, 7, 3, StreamPurpose::noise), b(42, 7, 3, StreamPurpose::noise);
  for (int i = 0; i < 100; ++i) REQUIRE(a() == b());
  RngStream c(42, 7, 3, StreamPurpose::data), d(42, 7, 4, StreamPurpose::noise), e(43, 7, 3, StreamPurpose::noise);
  RngStream f(42, 7, 3, StreamPurpose::noise);
  const auto x = f();
  CHECK(c() != x);
  CHECK(d() != x);
  CHECK(e() != x);
  CHECK(dpmu::core::fnv1a_64("") == 14695981039346656037ULL);
  CHECK(dpmu::core::fnv1a_64("a") == 0xaf63dc4c8601ec8cULL);  // published FNV-1a test vector
}

TEST_CASE("uniform_open01 never returns 0 or 1 and uniform_index is unbiased", "[random][statistical]") {
  RngStream rng(1, 2, 3, StreamPurpose::data);
  const int n = 200000;
  std::vector<int> counts(7, 0);
  for (int i = 0; i < n; ++i) {
    const double u = dpmu::core::uniform_open01(rng);
    REQUIRE(u > 0.0);
    REQUIRE(u < 1.0);
    counts[dpmu::core::uniform_index(rng, 7)]++;
  }
  // chi-square goodness of fit, 6 df, threshold at p = 1e-6
  double chi2 = 0;
  for (int c : counts) chi2 += (c - n / 7.0) * (c - n / 7.0) / (n / 7.0);
  CHECK(chi2 < boost::math::quantile(boost::math::complement(boost::math::chi_squared(6), 1e-6)));
}

namespace {
// N(0, 1) checks on a sample: mean and variance within kZ standard errors, chi-square GOF on
// ~2 N^0.4 equiprobable bins (Stan's assert_matches_quantiles) at p = 1e-6, and the two-sided
// tail beyond 3.4426 (where the ziggurat's base strip ends and its exact tail sampler starts;
// P = 5.76e-4) within kZ binomial standard errors.
void check_standard_normal_sample(const std::vector<double>& x) {
  const int n = static_cast<int>(x.size());
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= n;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= n - 1;
  CHECK(std::abs(mean) < kZ / std::sqrt(n));
  CHECK(std::abs(var - 1.0) < kZ * std::sqrt(2.0 / n));
  const int bins = static_cast<int>(2 * std::pow(n, 0.4));
  std::vector<int> counts(bins, 0);
  const boost::math::normal nd;
  double tail = 0;
  for (double v : x) {
    int b = static_cast<int>(boost::math::cdf(nd, v) * bins);
    counts[std::min(b, bins - 1)]++;
    if (std::abs(v) > 3.4426) tail += 1;
  }
  double chi2 = 0;
  for (int c : counts) chi2 += (c - double(n) / bins) * (c - double(n) / bins) / (double(n) / bins);
  CHECK(chi2 < boost::math::quantile(boost::math::complement(boost::math::chi_squared(bins - 1), 1e-6)));
  const double pt = 2.0 * boost::math::cdf(boost::math::complement(nd, 3.4426));
  CHECK(std::abs(tail / n - pt) < kZ * std::sqrt(pt * (1 - pt) / n));
}
}  // namespace

TEST_CASE("standard_normal matches N(0,1) (moments, chi-square GOF, tail)", "[random][statistical]") {
  RngStream rng(11, 0, 0, StreamPurpose::data);
  std::vector<double> x(200000);
  for (auto& v : x) v = dpmu::core::standard_normal(rng);
  check_standard_normal_sample(x);
}

TEST_CASE("standard_normal_ziggurat matches N(0,1) on both generators", "[random][statistical]") {
  // N = 10^6 each: the ziggurat's tail and wedge paths are exercised (≈ 576 tail draws).
  std::vector<double> x(1000000);
  RngStream rng(12, 0, 0, StreamPurpose::data);
  for (auto& v : x) v = dpmu::core::standard_normal_ziggurat(rng);
  check_standard_normal_sample(x);
  dpmu::core::Xoshiro256ppX4 fast(12, 1);
  for (auto& v : x) v = dpmu::core::standard_normal_ziggurat(fast);
  check_standard_normal_sample(x);
}

TEST_CASE("laplace has mean 0 and variance 2 b^2", "[random][statistical]") {
  RngStream rng(5, 0, 0, StreamPurpose::noise);
  const int n = 400000;
  const double b = 2.5;
  const auto m = moments([&] { return dpmu::core::laplace(rng, b); }, n);
  const double var = 2 * b * b;
  CHECK(std::abs(m.mean) < kZ * std::sqrt(var / n));
  // Var of the sample variance ≈ (μ4 - σ⁴)/n with μ4 = 24 b⁴ for the Laplace law
  CHECK(std::abs(m.var - var) < kZ * std::sqrt((24 * b * b * b * b - var * var) / n));
}

TEST_CASE("gamma, chi-square and beta have their exact means and variances", "[random][statistical]") {
  RngStream rng(9, 0, 0, StreamPurpose::calibration);
  const int n = 200000;
  for (double shape : {0.3, 1.0, 2.5, 40.0}) {
    const auto m = moments([&] { return dpmu::core::standard_gamma(rng, shape); }, n);
    INFO("shape " << shape);
    CHECK(std::abs(m.mean - shape) < kZ * std::sqrt(shape / n));
    // Var(s²) ≈ (μ4 - σ⁴)/n, μ4 = 3a² + 6a for Gamma(a, 1)
    CHECK(std::abs(m.var - shape) < kZ * std::sqrt((3 * shape * shape + 6 * shape - shape * shape) / n));
  }
  const auto c = moments([&] { return dpmu::core::chi_square(rng, 3.0); }, n);
  CHECK(std::abs(c.mean - 3.0) < kZ * std::sqrt(6.0 / n));
  const double a = 0.5, b = 49.5;  // the null law of R² for p = 1, b_i - p - p0 = 99
  const auto bt = moments([&] { return dpmu::core::beta(rng, a, b); }, n);
  const double mean = a / (a + b), var = a * b / ((a + b) * (a + b) * (a + b + 1));
  CHECK(std::abs(bt.mean - mean) < kZ * std::sqrt(var / n));
}
