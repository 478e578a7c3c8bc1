// The DP F-test of Alabi & Vadhan (2022): zCDP conversion, sensitivities against the authors'
// noise scales, the F statistic from moments against the classical F and against the authors'
// simple-regression formula, a brute-force sensitivity check, and the nominal level of the
// parametric-bootstrap test.
#include "dpmu/core/dp_f_test.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dpmu/core/audit.hpp"
#include "dpmu/core/test_of_tests.hpp"

using namespace dpmu::core;

namespace {

DpFTestSettings settings(std::size_t n, int p0, int q, double rho, std::vector<ColumnBounds> bounds) {
  DpFTestSettings s;
  s.rho = rho;
  s.n = n;
  s.p0 = p0;
  s.q = q;
  s.bounds = std::move(bounds);
  return s;
}

}  // namespace

TEST_CASE("zCDP to (epsilon, delta): rho + 2 sqrt(rho log(1/delta)) and its inverse", "[dpf]") {
  // scipy: 0.5 + 2*sqrt(0.5*log(1e6)) and the rho grid at delta = 1e-6
  CHECK(zcdp_to_epsilon(0.5, 1e-6) == Approx(5.756521769756932).epsilon(1e-14));
  CHECK(zcdp_to_epsilon(0.005, 1e-6) == Approx(0.5306521769756932).epsilon(1e-14));
  CHECK(zcdp_to_epsilon(50.0, 1e-6) == Approx(102.56521769756932).epsilon(1e-14));
  for (double eps : {1e-6, 0.1, 1.0, 7.5, 100.0}) {
    for (double delta : {1e-10, 1e-6, 0.01})
      CHECK(zcdp_to_epsilon(zcdp_rho_for_epsilon(eps, delta), delta) == Approx(eps).epsilon(1e-12));
  }
  CHECK_THROWS_AS(zcdp_to_epsilon(0.5, 0.0), std::domain_error);
  CHECK_THROWS_AS(zcdp_rho_for_epsilon(-1.0, 1e-6), std::domain_error);
}

TEST_CASE("DP F-test: moment sensitivities and noise scales are the authors' for bounds [-D, D]", "[dpf]") {
  // dp_lr_testing.py (lin): rho/5 per moment; sd of x-bar and y-bar sqrt(2 D^2 / (rho_i n^2)), of mean x^2
  // and mean y^2 sqrt(D^4 / (2 rho_i n^2)), of mean xy sqrt(2 D^4 / (rho_i n^2)).
  const double D = 2.0, rho = 0.5;
  const std::size_t n = 300;
  const DpFTestRelease rel(settings(n, 1, 1, rho, {{-D, D}}));
  REQUIRE(rel.released_moments() == 5);
  const double ri = rho / 5.0, nn = static_cast<double>(n);
  const Eigen::MatrixXd& sd = rel.noise_sd();
  CHECK(sd(0, 0) == 0.0);
  CHECK(sd(0, 1) == Approx(std::sqrt(2 * D * D / (ri * nn * nn))));
  CHECK(sd(0, 2) == Approx(std::sqrt(2 * D * D / (ri * nn * nn))));
  CHECK(sd(1, 1) == Approx(std::sqrt(std::pow(D, 4) / (2 * ri * nn * nn))));
  CHECK(sd(2, 2) == Approx(std::sqrt(std::pow(D, 4) / (2 * ri * nn * nn))));
  CHECK(sd(1, 2) == Approx(std::sqrt(2 * std::pow(D, 4) / (ri * nn * nn))));
  const PrivacyGuarantee g = rel.privacy(1e-6);
  CHECK(g.epsilon == Approx(zcdp_to_epsilon(rho, 1e-6)));
  CHECK(g.delta == 1e-6);
  CHECK(g.sensitivity == Approx(2 * D * D / nn));
}

TEST_CASE("DP F-test: the statistic from exact moments is the classical partial F", "[dpf]") {
  RngStream rng(5, 1, 0, StreamPurpose::data);
  const std::size_t n = 60;
  // p0 = 2 (intercept + 1 common), q = 2: rows (common, tested1, tested2, y), all inside wide bounds
  Eigen::MatrixXd rows(n, 4);
  for (std::size_t i = 0; i < n; ++i) {
    rows(i, 0) = standard_normal(rng);
    rows(i, 1) = standard_normal(rng);
    rows(i, 2) = 0.5 * rows(i, 0) + standard_normal(rng);
    rows(i, 3) = 1.0 + 0.3 * rows(i, 0) + 0.2 * rows(i, 1) + standard_normal(rng);
  }
  const DpFTestRelease rel(settings(n, 2, 2, 1.0, {{-100.0, 100.0}}));
  const double f = rel.f_statistic(rel.confidential_moments(rows));
  Eigen::MatrixXd common(n, 2);
  common.col(0).setOnes();
  common.col(1) = rows.col(0);
  const PartialFTest classical = partial_f_test(common, rows.middleCols(1, 2), rows.col(3));
  CHECK(f == Approx(classical.f).epsilon(1e-9));
}

TEST_CASE("DP F-test: for simple regression the statistic is the authors' formula on the same noisy moments", "[dpf]") {
  RngStream rng(6, 1, 0, StreamPurpose::data);
  const std::size_t n = 200;
  Eigen::MatrixXd rows(n, 2);
  for (std::size_t i = 0; i < n; ++i) {
    rows(i, 0) = standard_normal(rng);
    rows(i, 1) = 0.3 * rows(i, 0) + standard_normal(rng);
  }
  const DpFTestRelease rel(settings(n, 1, 1, 0.5, {{-2.0, 2.0}}));
  RngStream noise_rng(6, 2, 0, StreamPurpose::noise);
  NoiseSource noise = NoiseSource::simulation(noise_rng);
  const DpFTestOutput out = rel.release(rows, noise);
  const Eigen::MatrixXd& m = out.moments;
  const double nn = static_cast<double>(n);
  const double xm = m(0, 1), ym = m(0, 2), x2m = m(1, 1), xym = m(1, 2), y2m = m(2, 2);
  const double cov = xym - xm * ym, var = x2m - xm * xm;
  const double b1 = cov / var, b2 = ym - b1 * xm;
  const double s2_num =
      nn * y2m + nn * b2 * b2 - 2 * nn * ym * b2 - 2 * nn * xym * b1 + 2 * nn * xm * b1 * b2 + nn * x2m * b1 * b1;
  const double f_authors = (nn - 2) * b1 * b1 * nn * var / s2_num;
  CHECK(out.statistic == Approx(f_authors).epsilon(1e-9));
  REQUIRE(out.confidential_moments);
  CHECK((out.moments - *out.confidential_moments).norm() > 0.0);
  CHECK(out.moments(0, 0) == 1.0);
}

TEST_CASE("DP F-test: every moment moves by at most its sensitivity over neighbouring data sets (brute force)",
          "[dpf][release]") {
  // Asymmetric bounds; every row replaced by every combination of candidate raw values (inside, on and
  // far outside the bounds). The bound of every entry must hold and be attained.
  const std::size_t n = 5;
  const std::vector<ColumnBounds> b{{-1.0, 3.0}, {0.5, 2.0}, {-4.0, -1.0}};
  const DpFTestRelease rel(settings(n, 2, 1, 1.0, b));
  Eigen::MatrixXd rows(n, 3);
  rows << 0.2, 1.0, -2.0, 2.5, 0.7, -3.5, -0.4, 1.9, -1.5, 1.0, 1.2, -2.2, 0.0, 0.6, -1.1;
  const std::vector<std::vector<double>> candidates{{-50.0, -1.0, 0.0, 1.0, 3.0, 9.0, NAN},
                                                    {0.0, 0.5, 1.1, 2.0, 7.0, INFINITY},
                                                    {-9.0, -4.0, -2.5, -1.0, 0.0, -INFINITY}};
  const Eigen::MatrixXd base = rel.confidential_moments(rows);
  Eigen::MatrixXd worst = Eigen::MatrixXd::Zero(4, 4);
  for (std::size_t i = 0; i < n; ++i) {
    for (double a : candidates[0]) {
      for (double c : candidates[1]) {
        for (double y : candidates[2]) {
          // a neighbour of the base data and, to reach both extremes, a pair of neighbours
          Eigen::MatrixXd r = rows;
          r.row(i) << a, c, y;
          worst = worst.cwiseMax((rel.confidential_moments(r) - base).cwiseAbs());
        }
      }
    }
  }
  // pairs of neighbours that differ only in row 0, both rows arbitrary
  for (double a1 : candidates[0]) {
    for (double c1 : candidates[1]) {
      for (double y1 : candidates[2]) {
        Eigen::MatrixXd r1 = rows;
        r1.row(0) << a1, c1, y1;
        const Eigen::MatrixXd m1 = rel.confidential_moments(r1);
        for (double a2 : candidates[0]) {
          for (double c2 : candidates[1]) {
            for (double y2 : candidates[2]) {
              Eigen::MatrixXd r2 = rows;
              r2.row(0) << a2, c2, y2;
              worst = worst.cwiseMax((rel.confidential_moments(r2) - m1).cwiseAbs());
            }
          }
        }
      }
    }
  }
  const Eigen::MatrixXd& s = rel.sensitivities();
  for (int j = 0; j < 4; ++j) {
    for (int l = 0; l < 4; ++l) {
      INFO("entry (" << j << ", " << l << "): worst " << worst(j, l) << ", sensitivity " << s(j, l));
      CHECK(worst(j, l) <= s(j, l) * (1 + 1e-12));
      CHECK(worst(j, l) == Approx(s(j, l)).margin(1e-12));
    }
  }
}

TEST_CASE("DP F-test: settings are checked", "[dpf]") {
  CHECK_THROWS_AS(DpFTestRelease(settings(3, 1, 1, 1.0, {{-1, 1}})), std::domain_error);
  CHECK_THROWS_AS(DpFTestRelease(settings(30, 1, 1, 0.0, {{-1, 1}})), std::domain_error);
  CHECK_THROWS_AS(DpFTestRelease(settings(30, 1, 1, 1.0, {{1, -1}})), std::domain_error);
  CHECK_THROWS_AS(DpFTestRelease(settings(30, 1, 1, 1.0, {{-1, 1}, {-1, 1}, {-1, 1}})), std::invalid_argument);
  const DpFTestRelease ok(settings(30, 1, 1, 1.0, {{-1, 1}}));
  CHECK_THROWS_AS(ok.confidential_moments(Eigen::MatrixXd::Zero(30, 3)), std::invalid_argument);
  CHECK_THROWS_AS(ok.privacy(0.0), std::domain_error);
}

TEST_CASE("DP F-test: Monte Carlo p-value orders NaN statistics below every number", "[dpf]") {
  const std::vector<double> null{1.0, 2.0, std::nan(""), 5.0};
  CHECK(DpFTestRelease::monte_carlo_p_value(3.0, null) == Approx(2.0 / 5.0));
  CHECK(DpFTestRelease::monte_carlo_p_value(std::nan(""), null) == Approx(5.0 / 5.0));
  CHECK(DpFTestRelease::monte_carlo_p_value(10.0, null) == Approx(1.0 / 5.0));
}

TEST_CASE("DP F-test holds its nominal level under H0 (parametric bootstrap from private estimates)",
          "[dpf][statistical]") {
  // alpha = 0.05, K = 10/alpha = 200 null data sets per test. Criterion of the issue: the type-I error
  // within [alpha/2, 3 alpha/2] (at R = 4000 replicates this is ±7.3 Monte Carlo SEs of 0.0034).
  //  * simple regression (the authors' setting): n = 200, rho = 0.5, x, y ~ N(0, 1) independent,
  //    bounds [-2, 2]; R = 4000.
  //  * nested multivariate: n = 300, p0 = 2 (intercept + 1 common), q = 2, rho = 12.5 (one of the
  //    authors' budgets), bounds [-3, 3], y = 1 + 0.5 x_common + N(0, 1); R = 1000 (±3.6 SEs of 0.0069).
  // (Where the noise swamps the moments - e.g. n = 150, p0 = 2, q = 2, rho = 1, when a third of the noisy
  // moment matrices are not positive definite - the test is conservative: docs/methods.md.)
  struct Case {
    std::size_t n;
    int p0, q;
    double rho;
    double bound;
    int reps;
  };
  for (const Case c : {Case{200, 1, 1, 0.5, 2.0, 4000}, Case{300, 2, 2, 12.5, 3.0, 1000}}) {
    const DpFTestRelease rel(settings(c.n, c.p0, c.q, c.rho, {{-c.bound, c.bound}}));
    const int k = c.p0 - 1 + c.q;
    int rejected = 0;
    for (int r = 0; r < c.reps; ++r) {
      RngStream data(31, static_cast<std::uint64_t>(c.p0), static_cast<std::uint64_t>(r), StreamPurpose::data);
      Eigen::MatrixXd rows(c.n, k + 1);
      for (std::size_t i = 0; i < c.n; ++i) {
        for (int j = 0; j < k; ++j) rows(i, j) = standard_normal_ziggurat(data);
        rows(i, k) = (c.p0 > 1 ? 1.0 + 0.5 * rows(i, 0) : 0.0) + standard_normal_ziggurat(data);
      }
      RngStream noise_rng(32, static_cast<std::uint64_t>(c.p0), static_cast<std::uint64_t>(r), StreamPurpose::noise);
      NoiseSource noise = NoiseSource::simulation(noise_rng);
      const DpFTestOutput out = rel.release(rows, noise);
      RngStream null_rng(33, static_cast<std::uint64_t>(c.p0), static_cast<std::uint64_t>(r),
                         StreamPurpose::calibration);
      const auto null = rel.null_statistics(out.moments, 200, null_rng);
      rejected += DpFTestRelease::monte_carlo_p_value(out.statistic, null) <= 0.05 ? 1 : 0;
    }
    const double rate = static_cast<double>(rejected) / c.reps;
    INFO("n = " << c.n << ", p0 = " << c.p0 << ", q = " << c.q << ": type-I error " << rate);
    CHECK(rate >= 0.025);
    CHECK(rate <= 0.075);
  }
}

TEST_CASE("DP F-test: power grows with n and with rho", "[dpf][statistical]") {
  // Simple regression y = 0.3 x + N(0, 1), bounds [-2, 2], K = 200, R = 300 per point: the power at
  // (n = 800, rho = 0.5) exceeds that at (n = 100, rho = 0.5) and at (n = 800, rho = 0.005) by more than
  // 4 SEs of the difference (SE <= sqrt(2 * 0.25 / 300) = 0.041).
  const auto power = [](std::size_t n, double rho) {
    const DpFTestRelease rel(settings(n, 1, 1, rho, {{-2.0, 2.0}}));
    int rejected = 0;
    const int R = 300;
    for (int r = 0; r < R; ++r) {
      RngStream data(41, n, static_cast<std::uint64_t>(r), StreamPurpose::data);
      Eigen::MatrixXd rows(n, 2);
      for (std::size_t i = 0; i < n; ++i) {
        rows(i, 0) = standard_normal_ziggurat(data);
        rows(i, 1) = 0.3 * rows(i, 0) + standard_normal_ziggurat(data);
      }
      RngStream noise_rng(42, n, static_cast<std::uint64_t>(r), StreamPurpose::noise);
      NoiseSource noise = NoiseSource::simulation(noise_rng);
      const DpFTestOutput out = rel.release(rows, noise);
      RngStream null_rng(43, n, static_cast<std::uint64_t>(r), StreamPurpose::calibration);
      rejected +=
          DpFTestRelease::monte_carlo_p_value(out.statistic, rel.null_statistics(out.moments, 200, null_rng)) <= 0.05
              ? 1
              : 0;
    }
    return static_cast<double>(rejected) / R;
  };
  const double small_n = power(100, 0.5), large_n = power(800, 0.5), tiny_rho = power(800, 0.005);
  INFO("power: n=100 rho=0.5 " << small_n << ", n=800 rho=0.5 " << large_n << ", n=800 rho=0.005 " << tiny_rho);
  CHECK(large_n - small_n > 4 * 0.041);
  CHECK(large_n - tiny_rho > 4 * 0.041);
}

TEST_CASE("DP F-test: empirical audit of the moment release at worst-case neighbours", "[dpf][statistical]") {
  // Simple regression, n = 20, bounds [-1, 1], rho = 0.5 (epsilon = 5.76 at delta = 1e-6). D and D' differ
  // in one row moved between opposite corners, (1, 1) -> (-1, 1), which moves the x mean and the xy
  // moment by their full sensitivities. 20 000 releases each; the 95 % lower bound on epsilon must not
  // exceed the claim (fixed seeds).
  const std::size_t n = 20;
  const DpFTestRelease rel(settings(n, 1, 1, 0.5, {{-1.0, 1.0}}));
  Eigen::MatrixXd d1 = Eigen::MatrixXd::Zero(n, 2);
  d1.row(0) << 1.0, 1.0;
  Eigen::MatrixXd d2 = d1;
  d2.row(0) << -1.0, 1.0;
  const auto unique = [](const Eigen::MatrixXd& m) {
    Eigen::VectorXd v(5);
    v << m(0, 1), m(0, 2), m(1, 1), m(1, 2), m(2, 2);
    return v;
  };
  std::vector<Eigen::VectorXd> a, b;
  RngStream r1(71, 1, 0, StreamPurpose::noise), r2(71, 2, 0, StreamPurpose::noise);
  NoiseSource n1 = NoiseSource::simulation(r1), n2 = NoiseSource::simulation(r2);
  for (int i = 0; i < 20000; ++i) {
    a.push_back(unique(rel.release(d1, n1).moments));
    b.push_back(unique(rel.release(d2, n2).moments));
  }
  AuditOptions o;
  o.delta = 1e-6;
  const double claim = rel.privacy(1e-6).epsilon;
  const AuditResult res = audit_releases(a, b, o);
  INFO("epsilon lower bound " << res.epsilon_lower_bound << " against the claim " << claim);
  CHECK(res.epsilon_lower_bound <= claim);
  CHECK(res.epsilon_lower_bound > 0.0);
}
