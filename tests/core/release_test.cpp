// The release layer: sensitivities proved in release.hpp checked by brute force over neighbouring
// data sets (including rows far outside the bounds and at the corners), the guarantee each type
// derives, diagnostics only in simulation mode, the secure samplers' grid, failed subsets and
// singular submodels handled without an error.
#include "dpmu/core/release.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"

using namespace dpmu::core;

namespace {

double unique_l1(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  double s = 0.0;
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    for (Eigen::Index i = j; i < a.rows(); ++i) s += std::abs(a(i, j) - b(i, j));
  }
  return s;
}

/// Every data set of n rows whose entries come from `values[j]` per column, as row indices into
/// the grid of rows; calls f(rows) for each.
std::vector<Eigen::RowVectorXd> grid_rows(const std::vector<std::vector<double>>& values) {
  std::vector<Eigen::RowVectorXd> out{Eigen::RowVectorXd(0)};
  for (const auto& col : values) {
    std::vector<Eigen::RowVectorXd> next;
    for (const auto& r : out) {
      for (double v : col) {
        Eigen::RowVectorXd e(r.size() + 1);
        e << r, v;
        next.push_back(e);
      }
    }
    out = std::move(next);
  }
  return out;
}

/// Brute force: max over data sets of n rows from the grid and over one-row replacements of the
/// L1 change of the unique entries of the release's confidential Gram matrix.
double brute_force_ssp_sensitivity(const SspRelease& release, const std::vector<std::vector<double>>& values, int n) {
  const auto rows = grid_rows(values);
  const auto k = static_cast<int>(rows.size());
  int total = 1;
  for (int i = 0; i < n; ++i) total *= k;
  std::vector<Eigen::MatrixXd> grams(static_cast<std::size_t>(total));
  Eigen::MatrixXd data(n, static_cast<Eigen::Index>(values.size()));
  for (int code = 0; code < total; ++code) {
    int c = code;
    for (int i = 0; i < n; ++i, c /= k) data.row(i) = rows[static_cast<std::size_t>(c % k)];
    grams[static_cast<std::size_t>(code)] = release.confidential_gram(data);
  }
  double worst = 0.0;
  int power = 1;
  for (int i = 0; i < n; ++i, power *= k) {
    for (int code = 0; code < total; ++code) {
      const int digit = (code / power) % k;
      for (int r = digit + 1; r < k; ++r) {  // each unordered pair once
        const int other = code + (r - digit) * power;
        worst =
            std::max(worst, unique_l1(grams[static_cast<std::size_t>(code)], grams[static_cast<std::size_t>(other)]));
      }
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("SSP release: the L1 sensitivity of clamp-then-centre holds and is attained (brute force)", "[release]") {
  // Raw values on a grid that includes points far outside the bounds (clamped) and the corners.
  SECTION("p = 1, n = 3, different bounds per column") {
    SspReleaseSettings s;
    s.p = 1;
    s.n = 3;
    s.bounds = {{0.0, 1.0}, {-2.0, 3.0}};
    const SspRelease release(s);
    const double want = (2.0 / 3.0) * 0.5 * ((1.0 + 5.0) * (1.0 + 5.0) + 1.0 + 25.0);
    const double exact = release.l1_sensitivity() - release.rounding_allowance();
    CHECK(exact == Approx(want).epsilon(1e-15));
    CHECK(release.rounding_allowance() < 1e-12 * exact);
    const double got = brute_force_ssp_sensitivity(release, {{-4, 0, 0.3, 1, 9}, {-50, -2, 0.5, 3, 70}}, 3);
    CHECK(got <= release.l1_sensitivity());
    CHECK(got >= exact * (1 - 1e-12));  // attained at the corners
  }
  SECTION("p = 2, n = 4, rescaled") {
    SspReleaseSettings s;
    s.p = 2;
    s.n = 4;
    s.bounds = {{-1.0, 1.0}, {10.0, 20.0}, {-5.0, 0.0}};
    s.rescale = true;
    const SspRelease release(s);
    const double exact = release.l1_sensitivity() - release.rounding_allowance();
    CHECK(exact == Approx((3.0 / 4.0) * 6.0).epsilon(1e-15));
    const double got = brute_force_ssp_sensitivity(release, {{-9, 1}, {10, 13, 1e6}, {-1e9, 0}}, 4);
    CHECK(got <= release.l1_sensitivity());
    CHECK(got >= exact * (1 - 1e-12));
  }
}

TEST_CASE("the paper's centre-then-clamp procedure violates its own sensitivity (the defect the release fixes)",
          "[release]") {
  // Centre by the raw sample mean, then clamp into [l, u] = [-1, 1], G = D'D: Δ1 = (p+1)(p+2)·1 = 6
  // for p = 1. One outlier row moves the mean and so every centred row.
  const int n = 5;
  Eigen::MatrixXd d(n, 2);
  d << 0.1, -0.2, -0.3, 0.4, 0.5, -0.1, -0.2, 0.3, 0.0, 0.1;
  Eigen::MatrixXd e = d;
  e.row(0) << 1000.0, -1000.0;
  const auto paper_gram = [](Eigen::MatrixXd x) {
    x.rowwise() -= x.colwise().mean();
    return gram_matrix(x, -1.0, 1.0, false);
  };
  const double paper_sensitivity = l1_sensitivity(1, -1.0, 1.0);
  CHECK(unique_l1(paper_gram(d), paper_gram(e)) > paper_sensitivity);
  SspReleaseSettings s;
  s.p = 1;
  s.n = n;
  s.bounds = {{-1.0, 1.0}};
  const SspRelease release(s);
  CHECK(unique_l1(release.confidential_gram(d), release.confidential_gram(e)) <= release.l1_sensitivity());
}

TEST_CASE("SSP release: guarantee, diagnostics only in simulation, secure Laplace on a grid", "[release]") {
  SspReleaseSettings s;
  s.p = 2;
  s.n = 50;
  s.bounds = {{-1.0, 1.0}};
  s.epsilon = 0.7;
  const SspRelease release(s);
  const PrivacyGuarantee g = release.privacy();
  CHECK(g.epsilon == 0.7);
  CHECK(g.delta == 0.0);
  CHECK(g.sensitivity_name == "l1_sensitivity");
  CHECK(g.sensitivity == Approx((49.0 / 50.0) * 0.5 * (36.0 + 12.0)).epsilon(1e-9));
  CHECK(g.sensitivity - release.rounding_allowance() == Approx((49.0 / 50.0) * 0.5 * (36.0 + 12.0)).epsilon(1e-15));
  CHECK(ssp_laplace_scale(release.mechanism()) == Approx(g.sensitivity / 0.7).epsilon(1e-15));
  RngStream data_rng(3, 1, 0, StreamPurpose::data);
  Eigen::MatrixXd x(50, 3);
  for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = 3.0 * (uniform_open01(data_rng) - 0.5);
  RngStream stream(5, 1, 0, StreamPurpose::noise);
  NoiseSource sim = NoiseSource::simulation(stream);
  const SspOutput a = release.release(x, sim);
  REQUIRE(a.diagnostics);
  CHECK(a.diagnostics->clamped_entries > 0);
  CHECK(a.diagnostics->gram.isApprox(release.confidential_gram(x)));
  // A secure source (here backed by Philox for determinism): no diagnostics, symmetric, on a grid.
  RngStream bits(6, 1, 0, StreamPurpose::noise);
  NoiseSource secure = NoiseSource::secure([&bits] { return bits(); });
  const SspOutput b = release.release(x, secure);
  CHECK_FALSE(b.diagnostics);
  CHECK((b.released_gram - b.released_gram.transpose()).cwiseAbs().maxCoeff() == 0.0);
  CHECK(b.sampler.find("discrete Laplace") != std::string::npos);
}

TEST_CASE("secure SSP Laplace noise has the Laplace spread of the derived scale", "[release][statistical]") {
  // 2 000 secure releases of a fixed data set; the unique entry (1,0)'s noise has variance 2b²;
  // tolerance 5 SEs of the sample variance (Var(s²) ≈ 5σ⁴/N for the Laplace law): false-failure
  // probability below 1e-6.
  SspReleaseSettings s;
  s.p = 1;
  s.n = 20;
  s.bounds = {{-1.0, 1.0}};
  s.epsilon = 1.0;
  const SspRelease release(s);
  Eigen::MatrixXd x(20, 2);
  for (Eigen::Index i = 0; i < 20; ++i) x.row(i) << std::sin(i), std::cos(3.0 * i);
  const Eigen::MatrixXd g = release.confidential_gram(x);
  RngStream bits(77, 0, 0, StreamPurpose::noise);
  NoiseSource secure = NoiseSource::secure([&bits] { return bits(); });
  const int n = 2000;
  double sum2 = 0.0;
  for (int r = 0; r < n; ++r) {
    const Eigen::MatrixXd gs = release.release(x, secure).released_gram;
    sum2 += (gs(1, 0) - g(1, 0)) * (gs(1, 0) - g(1, 0));
  }
  const double b = release.l1_sensitivity();
  const double var = 2 * b * b;
  CHECK(std::abs(sum2 / n - var) < 5 * var * std::sqrt(5.0 / n));
}

TEST_CASE("SSP release settings are validated with clear errors", "[release]") {
  SspReleaseSettings s;
  s.p = 2;
  s.n = 10;
  s.bounds = {{0.0, 1.0}, {0.0, 1.0}};
  CHECK_THROWS_WITH(SspRelease(s), Catch::Contains("give one pair for every column or p + 1 = 3 pairs"));
  s.bounds = {{1.0, 1.0}};
  CHECK_THROWS_WITH(SspRelease(s), Catch::Contains("bounds of column 1 (upper - lower) is 0"));
  s.bounds = {{0.0, 1.0}};
  s.n = 3;
  CHECK_THROWS_WITH(SspRelease(s), Catch::Contains("n (rows) is 3, but must be > p + 1 = 3"));
  s.n = 10;
  s.delta = 0.1;
  CHECK_THROWS_WITH(SspRelease(s), Catch::Contains("0 for the Laplace mechanism"));
  s.mechanism = SspMechanismKind::wishart;
  s.epsilon = 0.5;
  s.delta = 0.0;
  CHECK_THROWS_WITH(SspRelease(s), Catch::Contains("delta is 0"));
  s.delta = 1e-6;
  const SspRelease w(s);
  CHECK(w.privacy().sensitivity_name == "wishart_row_norm_squared");
  CHECK(w.privacy().sensitivity == Approx(0.9 * 3.0).epsilon(1e-15));
  CHECK(w.privacy().sampler.find("NOT hardened") != std::string::npos);
}

TEST_CASE("test release: failed subsets get the public value, the sensitivity holds for adversarial rows",
          "[release]") {
  // y = 1 + x + noise, n = 60, M = 6; the tested column is binary and rare, so some subsets have a
  // constant x (rank-deficient): they contribute failure_value() and the release goes on.
  const int n = 60;
  Eigen::MatrixXd common = Eigen::MatrixXd::Ones(n, 1);
  Eigen::MatrixXd tested(n, 1);
  Eigen::VectorXd y(n);
  RngStream rng(11, 0, 0, StreamPurpose::data);
  for (int i = 0; i < n; ++i) {
    tested(i, 0) = (i % 20 == 3) ? 1.0 : 0.0;
    y(i) = 1.0 + tested(i, 0) + standard_normal(rng);
  }
  SubsampleAggregateSettings s;
  s.prior.kind = PriorKind::g_prior;
  s.epsilon = 1.0;
  s.num_subsets = 6;
  s.limits = {-std::log(99.0), std::log(99.0)};
  s.n = n;
  s.p = 1;
  s.p0 = 1;
  const SubsampleAggregateRelease release(s);
  CHECK(release.privacy().sensitivity == Approx(2 * std::log(99.0) / 6).epsilon(1e-15));
  CHECK(release.failure_value() == censor(subset_statistic(s.prior, 0.0, 10.0, 1, 1), s.limits));
  RngStream a(4, 0, 0, StreamPurpose::noise);
  NoiseSource sim = NoiseSource::simulation(a);
  const auto out = release.release(common, tested, y, sim);
  REQUIRE(out.diagnostics);
  CHECK(out.diagnostics->failed_subsets >= 1);
  // Same noise stream on neighbours (same partition, same noise): T̃ moves by at most (U − L)/M,
  // for an outlier, a row making its subset an exact fit, and a row breaking a constant subset.
  const std::vector<std::pair<double, double>> replacements{{1e6, -1e9}, {0.0, 1.0}, {1.0, 1e3}, {0.0, 0.0}};
  for (int row : {0, 3, 17, 59}) {
    for (const auto& [xv, yv] : replacements) {
      Eigen::MatrixXd t2 = tested;
      Eigen::VectorXd y2 = y;
      t2(row, 0) = xv;
      y2(row) = yv;
      RngStream s1(9, 0, 0, StreamPurpose::noise), s2(9, 0, 0, StreamPurpose::noise);
      NoiseSource n1 = NoiseSource::simulation(s1), n2 = NoiseSource::simulation(s2);
      const double d =
          release.release(common, tested, y, n1).noisy_statistic - release.release(common, t2, y2, n2).noisy_statistic;
      CHECK(std::abs(d) <= release.privacy().sensitivity * (1 + 1e-12));
    }
  }
  // A secure source: no diagnostics, the value on the sampler's grid.
  RngStream bits(8, 0, 0, StreamPurpose::noise);
  NoiseSource secure = NoiseSource::secure([&bits] { return bits(); });
  const auto sec = release.release(common, tested, y, secure);
  CHECK_FALSE(sec.diagnostics);
  CHECK(std::fmod(sec.noisy_statistic / sec.grid, 1.0) == 0.0);
}

TEST_CASE("selection release: singular submodels are handled, the guarantee follows the settings", "[release]") {
  const int n = 40;
  Eigen::MatrixXd x(n, 3);
  Eigen::VectorXd y(n);
  RngStream rng(21, 0, 0, StreamPurpose::data);
  for (int i = 0; i < n; ++i) {
    x(i, 0) = standard_normal(rng);
    x(i, 1) = x(i, 0);  // duplicated column: every model with both is singular
    x(i, 2) = standard_normal(rng);
    y(i) = 0.8 * x(i, 0) + standard_normal(rng);
  }
  LcssfReleaseSettings s;
  s.lcssf.radius = 2.0;
  s.lcssf.penalty = 1.0;
  s.lcssf.data_bound = 3.0;
  s.epsilon = 1.0;
  s.n = n;
  s.d = 3;
  const LcssfRelease release(s);
  CHECK(release.rss_l1_sensitivity() == Approx(9.0 * 9.0 + 1e-10 * n * 9.0 * 4.0).epsilon(1e-15));
  RngStream a(1, 0, 0, StreamPurpose::noise);
  NoiseSource sim = NoiseSource::simulation(a);
  const LcssfOutput out = release.release(x, y, sim);
  REQUIRE(out.diagnostics);
  CHECK(out.diagnostics->singular_models == 2);
  RngStream bits(2, 0, 0, StreamPurpose::noise);
  NoiseSource secure = NoiseSource::secure([&bits] { return bits(); });
  CHECK_FALSE(release.release(x, y, secure).diagnostics);
  s.algorithm = 2;
  s.delta = 1e-6;
  const LcssfRelease two(s);
  CHECK(two.privacy().epsilon == 2.0);
  CHECK(two.privacy().delta == 1e-6);
  const LcssfOutput o2 = two.release(x, y, secure);
  CHECK(o2.variance_truncation >= s.lcssf.variance_floor);
  s.algorithm = 1;
  s.delta = 0.0;
  s.lcssf.delta_kind = LcssfDelta::one_pR_2;
  CHECK(std::isinf(LcssfRelease(s).privacy().epsilon));  // not a valid DP calibration for r = 3 > 1
}

TEST_CASE("SSP release: bounds with a large offset do not break the sensitivity in floating point", "[release]") {
  // Found by an audit: bounds [1e16, 1e16 + 2] (a large offset against the width), 1000 rows at the
  // upper corner vs the same with one row at the lower corner. Centring the raw values lost every
  // digit and the computed Gram matrices differed by ~4000 against a bound of 12; with the shift by
  // the public lower bound the difference is the exact one.
  const int n = 1000;
  SspReleaseSettings s;
  s.p = 1;
  s.n = n;
  s.bounds = {{1e16, 1e16 + 2.0}};
  const SspRelease release(s);
  Eigen::MatrixXd up = Eigen::MatrixXd::Constant(n, 2, 1e16 + 2.0), down = up;
  down.row(0) << 1e16, 1e16;
  const double d = unique_l1(release.confidential_gram(up), release.confidential_gram(down));
  CHECK(d <= release.l1_sensitivity());
  CHECK(d >= 0.99 * (release.l1_sensitivity() - release.rounding_allowance()));
  // n = 10^5 rows in several blocks at a realistic offset: the change stays within the bound.
  const int m = 100000;
  SspReleaseSettings t = s;
  t.n = m;
  t.bounds = {{1e9, 1e9 + 1.0}, {-3.0, 5.0}};
  const SspRelease big(t);
  RngStream rng(2, 0, 0, StreamPurpose::data);
  Eigen::MatrixXd x(m, 2);
  for (int i = 0; i < m; ++i) x.row(i) << 1e9 + uniform_open01(rng), 8.0 * uniform_open01(rng) - 3.0;
  Eigen::MatrixXd y = x;
  y.row(m / 2) << 1e9 + 1.0, -3.0;
  CHECK(unique_l1(big.confidential_gram(x), big.confidential_gram(y)) <= big.l1_sensitivity());
}
