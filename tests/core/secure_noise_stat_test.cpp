// Exact discrete samplers (Canonne, Kamath & Steinke 2020) and the secure release path.
// Statistical checks: N draws with fixed seeds; thresholds at 5 binomial SDs or chi-square
// p = 1e-6 (false-failure probability ≤ 1e-6 each).
#include <boost/math/distributions/chi_squared.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "dpmu/core/secure_noise.hpp"

using namespace dpmu::core;

namespace {
double chi2_threshold(int df) {
  return boost::math::quantile(boost::math::complement(boost::math::chi_squared(df), 1e-6));
}
// Chi-square GOF of integer draws against an unnormalised log pmf on [-w, w] (tails pooled).
template <class Draw, class LogPmf>
void check_integer_law(Draw draw, LogPmf log_pmf, int w, int n) {
  std::vector<double> p(static_cast<std::size_t>(2 * w + 3), 0.0);  // [0] = < -w, [last] = > w
  double total = 0;
  for (int x = -50 * w; x <= 50 * w; ++x) {
    const double v = std::exp(log_pmf(x));
    total += v;
    const int idx = x < -w ? 0 : (x > w ? 2 * w + 2 : x + w + 1);
    p[static_cast<std::size_t>(idx)] += v;
  }
  std::vector<double> counts(p.size(), 0.0);
  for (int i = 0; i < n; ++i) {
    const auto x = static_cast<long>(draw());
    const long idx = x < -w ? 0 : (x > w ? 2 * w + 2 : x + w + 1);
    counts[static_cast<std::size_t>(idx)] += 1;
  }
  double chi2 = 0;
  int df = -1;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double e = n * p[i] / total;
    if (e < 5) continue;
    chi2 += (counts[i] - e) * (counts[i] - e) / e;
    ++df;
  }
  INFO("chi2 " << chi2 << " df " << df);
  CHECK(chi2 < chi2_threshold(df));
}
}  // namespace

TEST_CASE("Bernoulli(exp(-gamma)) is exact", "[secure_noise][statistical]") {
  RngStream rng(21, 0, 0, StreamPurpose::noise);
  const int n = 200000;
  const std::pair<std::uint64_t, std::uint64_t> cases[] = {{0, 1}, {3, 10}, {1, 1}, {5, 2}, {7, 3}};
  for (const auto& [num, den] : cases) {
    const double p = std::exp(-static_cast<double>(num) / den);
    int hits = 0;
    for (int i = 0; i < n; ++i) hits += bernoulli_exp_minus(rng, num, den) ? 1 : 0;
    INFO("gamma " << num << "/" << den);
    CHECK(std::abs(hits - n * p) <= 5 * std::sqrt(n * p * (1 - p)) + 1e-9);
  }
}

TEST_CASE("discrete Laplace and discrete Gaussian follow their pmfs", "[secure_noise][statistical]") {
  RngStream rng(22, 0, 0, StreamPurpose::noise);
  check_integer_law([&] { return discrete_laplace(rng, 3); }, [](int x) { return -std::abs(x) / 3.0; }, 12, 200000);
  check_integer_law([&] { return discrete_gaussian(rng, 10); }, [](int x) { return -x * x / 20.0; }, 10, 200000);
  check_integer_law([&] { return discrete_gaussian(rng, 1); }, [](int x) { return -x * x / 2.0; }, 4, 100000);
}

TEST_CASE("the discrete Gaussian delta approaches the continuous one and is checked", "[secure_noise]") {
  // σ = 1000 grid units, sensitivity 1000: almost continuous
  const double cont = analytic_gaussian_delta(1000.0, 1.0, 1000.0);
  const double disc = discrete_gaussian_delta(1000000, 1.0, 1000);
  CHECK(disc == Approx(cont).epsilon(1e-3));
  // δ decreases in s
  CHECK(discrete_gaussian_delta(2000000, 1.0, 1000) < disc);
}

TEST_CASE("discrete Gaussian calibrations are memoised per process with the same result", "[secure_noise]") {
  // ε, δ chosen for this test only, so no other test in the process has calibrated them.
  const auto m = ScalarMechanism::gaussian(0.8173, 3.1e-6, 2.5);
  const std::size_t before = discrete_gaussian_calibrations();
  const SecureNoiseSampler first(m);
  CHECK(discrete_gaussian_calibrations() == before + 1);
  const SecureNoiseSampler second(m);
  CHECK(discrete_gaussian_calibrations() == before + 1);  // the second release does not recalibrate
  CHECK(second.grid() == first.grid());
  CHECK(second.noise_scale() == first.noise_scale());
  // the memoised integer variance still meets δ exactly (independent check of the calibration)
  const double s = (first.noise_scale() / first.grid()) * (first.noise_scale() / first.grid());
  const auto d_int = static_cast<std::uint64_t>(std::ceil(m.sensitivity() / first.grid()) + 1.0);
  CHECK(discrete_gaussian_delta(static_cast<std::uint64_t>(std::llround(s)), m.epsilon(), d_int) <= m.delta());
  // another mechanism is calibrated anew
  const SecureNoiseSampler other(ScalarMechanism::gaussian(0.8173, 3.2e-6, 2.5));
  CHECK(discrete_gaussian_calibrations() == before + 2);
}

TEST_CASE("secure noise lands on the grid with the right spread", "[secure_noise][statistical]") {
  RngStream rng(23, 0, 0, StreamPurpose::noise);
  const int n = 100000;
  for (const auto& mech : {ScalarMechanism::laplace(0.7, 1.3), ScalarMechanism::gaussian(1.0, 0.25, 0.7)}) {
    double sum = 0, sum2 = 0;
    double grid = 0, used = 0;
    const SecureNoiseSampler sampler(mech);
    for (int i = 0; i < n; ++i) {
      const auto r = sampler.add(2.345, rng);
      grid = r.grid;
      used = r.noise_scale;
      REQUIRE(std::fmod(r.value, r.grid) == 0.0);
      sum += r.value - 2.345;
      sum2 += (r.value - 2.345) * (r.value - 2.345);
    }
    const double sd = mech.noise_sd();
    INFO(mech.name() << " grid " << grid << " used " << used << " nominal " << mech.scale());
    CHECK(used >= mech.scale());
    CHECK(used <= mech.scale() * 1.01);
    CHECK(std::abs(sum / n) < 5 * sd / std::sqrt(n) + grid);
    const double var = sum2 / n;
    const double kurt = mech.kind() == ScalarMechanism::Kind::laplace ? 6.0 : 3.0;  // μ4/σ⁴
    const double target = mech.kind() == ScalarMechanism::Kind::laplace ? 2 * used * used : used * used;
    CHECK(std::abs(var - target) < 5 * target * std::sqrt((kurt - 1) / n));
  }
  CHECK_THROWS_AS(SecureNoiseSampler(ScalarMechanism::laplace(1, 1)).add(std::nan(""), rng), std::invalid_argument);
}

TEST_CASE("vector releases charge the rounding per coordinate, value bounds coarsen the grid", "[secure_noise]") {
  const auto mech = ScalarMechanism::laplace(1.0, 4.0);
  const SecureNoiseSampler one(mech), many(mech, 10);
  CHECK(many.grid() == one.grid());
  CHECK(many.noise_scale() > one.noise_scale());          // 9 more grid units of sensitivity
  CHECK(many.noise_scale() < mech.scale() * (1 + 1e-9));  // … which is negligible
  const SecureNoiseSampler coarse(mech, 1, 1e12);
  CHECK(coarse.grid() >= 1e12 * 0x1.0p-51);
  RngStream rng(24, 0, 0, StreamPurpose::noise);
  CHECK_NOTHROW(coarse.add(9.9e11, rng));
  CHECK_THROWS_AS(SecureNoiseSampler(ScalarMechanism::gaussian(1.0, 0.1, 1.0), 3), std::invalid_argument);
  CHECK_THROWS_AS(SecureNoiseSampler(mech, 0), std::invalid_argument);
}
