// AdaSSP (Wang 2018, Algorithm 2): the (epsilon, delta) accounting against independently computed
// analytic-Gaussian scales, a brute-force check of the three replace-one sensitivities, and the MSE
// trend on the author's synthetic setting (yuxiangw/optimal_dp_linear_regression, exp_simulation.m).
#include "dpmu/core/adassp.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/mechanisms.hpp"
#include "dpmu/core/random.hpp"

using namespace dpmu::core;

namespace {

AdaSspSettings ada(std::size_t n, int d, double eps, double delta) {
  AdaSspSettings s;
  s.n = n;
  s.d = d;
  s.epsilon = eps;
  s.delta = delta;
  return s;
}

}  // namespace

TEST_CASE("AdaSSP accounting: three analytic Gaussians at (eps/3, delta/3) with the replace-one sensitivities",
          "[adassp]") {
  // Independent values (scipy brentq on Balle & Wang's Theorem 8, eps = 1/3, delta = 1e-6/3):
  // sigma = 12.4712287009 per unit of L2 sensitivity.
  const AdaSspRelease rel(ada(100, 3, 1.0, 1e-6));
  const AdaSspSensitivities s = rel.sensitivities();
  CHECK(s.lambda_min == 1.0);
  CHECK(s.gram == Approx(std::sqrt(2.0)));
  CHECK(s.xty == 2.0);
  CHECK(rel.sigma_lambda() == Approx(12.4712287009).epsilon(1e-9));
  CHECK(rel.sigma_gram() == Approx(17.6369807683).epsilon(1e-9));
  CHECK(rel.sigma_xty() == Approx(24.9424574019).epsilon(1e-9));
  // each part spends delta/3 at eps/3; the whole (eps, delta) by basic composition
  CHECK(analytic_gaussian_delta(rel.sigma_lambda(), 1.0 / 3.0, s.lambda_min) == Approx(1e-6 / 3.0).epsilon(1e-6));
  CHECK(analytic_gaussian_delta(rel.sigma_gram(), 1.0 / 3.0, s.gram) == Approx(1e-6 / 3.0).epsilon(1e-6));
  CHECK(analytic_gaussian_delta(rel.sigma_xty(), 1.0 / 3.0, s.xty) == Approx(1e-6 / 3.0).epsilon(1e-6));
  const PrivacyGuarantee g = rel.privacy();
  CHECK(g.epsilon == 1.0);
  CHECK(g.delta == 1e-6);
  // eta = sigma_XX sqrt(d log(2 d^2 / 0.05)) (Wang's eigenvalue bound with this sigma)
  CHECK(rel.eta() == Approx(17.6369807683 * std::sqrt(3.0 * std::log(2.0 * 9.0 / 0.05))).epsilon(1e-9));
  // bounds scale the sensitivities
  AdaSspSettings b = ada(100, 3, 1.0, 1e-6);
  b.bound_x = 2.0;
  b.bound_y = 5.0;
  const AdaSspRelease rb(b);
  CHECK(rb.sensitivities().lambda_min == 4.0);
  CHECK(rb.sensitivities().xty == 20.0);
  CHECK(rb.sigma_xty() == Approx(10.0 * 24.9424574019).epsilon(1e-9));
}

TEST_CASE("AdaSSP's ledger record: one Gaussian of mu = sqrt(3) mu(eps/3, delta/3), within its (eps, delta)",
          "[adassp][ledger]") {
  // mu of one part: 1/12.4712287009 (the scipy root above, per unit sensitivity); composed exactly
  // (GDP): sqrt(3) times it = 0.1388837338
  const AdaSspRelease rel(ada(100, 3, 1.0, 1e-6));
  const double mu = std::sqrt(3.0) / 12.4712287009;
  CHECK(rel.gdp_mu() == Approx(mu).epsilon(1e-9));
  const PrivacyGuarantee g = rel.privacy();
  CHECK(g.noise_kind == "gaussian");
  CHECK(g.sensitivity / g.noise_scale == Approx(mu).epsilon(1e-9));
  // The exact privacy profile of the composition lies below basic composition's (eps, delta) ...
  CHECK(gaussian_dp_delta(mu, 1.0) <= 1e-6);
  // ... and is far tighter: delta(eps = 1) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
  // (Dong, Roth & Su 2022, Cor. 2.13) = 9.196729529e-15 at mu = 0.1388837338 (scipy.stats.norm).
  CHECK(gaussian_dp_delta(mu, 1.0) == Approx(9.196729529e-15).epsilon(1e-6));
  // Changing the bounds leaves mu unchanged (each sigma scales with its sensitivity).
  AdaSspSettings b = ada(100, 3, 1.0, 1e-6);
  b.bound_x = 2.0;
  b.bound_y = 5.0;
  CHECK(AdaSspRelease(b).gdp_mu() == Approx(mu).epsilon(1e-9));
}

TEST_CASE("AdaSSP: replace-one sensitivities hold and are attained (brute force)", "[adassp][release]") {
  const std::size_t n = 4;
  const int d = 2;
  const AdaSspRelease rel(ada(n, d, 1.0, 1e-6));
  Eigen::MatrixXd x(n, d);
  x << 1.0, 0.0, 1.0, 0.0, 0.6, 0.8, 0.0, 1.0;
  Eigen::VectorXd y(n);
  y << 0.5, -1.0, 0.2, 1.0;
  // candidate rows: unit vectors in several directions, the origin, far outside (clipped)
  std::vector<std::pair<Eigen::Vector2d, double>> cands;
  for (double a : {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0}) {
    const Eigen::Vector2d u(std::cos(a * 0.785398163397448), std::sin(a * 0.785398163397448));
    for (double yy : {-1.0, 0.0, 1.0, 30.0}) cands.emplace_back(u, yy);
    cands.emplace_back(50.0 * u, -7.0);
  }
  cands.emplace_back(Eigen::Vector2d::Zero(), 0.3);
  double worst_lambda = 0, worst_gram = 0, worst_xty = 0;
  for (const auto& [u1, y1] : cands) {
    Eigen::MatrixXd x1 = x;
    Eigen::VectorXd v1 = y;
    x1.row(0) = u1.transpose();
    v1(0) = y1;
    Eigen::MatrixXd g1;
    Eigen::VectorXd c1;
    rel.clipped_statistics(x1, v1, g1, c1);
    const double l1 = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(g1).eigenvalues()(0);
    for (const auto& [u2, y2] : cands) {
      Eigen::MatrixXd x2 = x;
      Eigen::VectorXd v2 = y;
      x2.row(0) = u2.transpose();
      v2(0) = y2;
      Eigen::MatrixXd g2;
      Eigen::VectorXd c2;
      rel.clipped_statistics(x2, v2, g2, c2);
      const double l2 = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(g2).eigenvalues()(0);
      worst_lambda = std::max(worst_lambda, std::abs(l1 - l2));
      worst_gram = std::max(worst_gram, (unique_entries(g1) - unique_entries(g2)).norm());
      worst_xty = std::max(worst_xty, (c1 - c2).norm());
    }
  }
  const AdaSspSensitivities s = rel.sensitivities();
  CHECK(worst_lambda <= s.lambda_min * (1 + 1e-12));
  CHECK(worst_gram <= s.gram * (1 + 1e-12));
  CHECK(worst_xty <= s.xty * (1 + 1e-12));
  CHECK(worst_gram == Approx(s.gram).margin(1e-12));  // x = e1 replaced by x = e2
  CHECK(worst_xty == Approx(s.xty).margin(1e-12));    // x y replaced by (-x) y
  CHECK(worst_lambda > 0.5 * s.lambda_min);
}

TEST_CASE("AdaSSP: settings and shapes are checked and diagnostics are only in simulation", "[adassp]") {
  CHECK_THROWS_AS(AdaSspRelease(ada(10, 2, 0.0, 1e-6)), std::domain_error);
  CHECK_THROWS_AS(AdaSspRelease(ada(10, 2, 1.0, 0.0)), std::domain_error);
  CHECK_THROWS_AS(AdaSspRelease(ada(10, 0, 1.0, 1e-6)), std::domain_error);
  const AdaSspRelease rel(ada(10, 2, 1.0, 1e-6));
  RngStream r(1, 1, 0, StreamPurpose::noise);
  NoiseSource noise = NoiseSource::simulation(r);
  CHECK_THROWS_AS(rel.release(Eigen::MatrixXd::Zero(9, 2), Eigen::VectorXd::Zero(9), noise), std::invalid_argument);
  const AdaSspOutput out = rel.release(Eigen::MatrixXd::Identity(10, 2), Eigen::VectorXd::Ones(10), noise);
  CHECK(out.diagnostics.has_value());
  CHECK(out.ridge >= 0.0);
  CHECK(out.lambda_min_noisy >= 0.0);
  CHECK(out.gram.isApprox(out.gram.transpose()));
}

TEST_CASE("AdaSSP: MSE trend on the author's synthetic setting", "[adassp][statistical]") {
  // Wang's exp_simulation.m: d = 10, theta ~ N(0, I) scaled to norm 1/sqrt(2), rows x ~ N(0, I) scaled to
  // norm 1 (= B_X), y = x'theta + 0.1 (U - 1/2) (|y| <= 0.76 <= B_Y = 1), delta = 1/n^1.1, n = 20 * 2^k,
  // error ||theta_hat - theta||^2 averaged over R = 40 data sets per n.
  //  * eps = 1: the MSE falls with n; in the privacy-dominated range it falls like n^-2 (noise of order 1
  //    on X'X and X'y against X'X ~ (n/d) I): log-log slope between n = 5120 and 81920 in [-2.4, -1.6]
  //    (the mean of 40 errors has a relative SE below 25 %, i.e. ±0.1 on the slope per end point).
  //  * adaptivity at small n (eps = 0.1, n = 40): the ridge keeps the error near the trivial predictor's
  //    ||theta||^2 = 0.5 (at most 2x it), where plain SSP would be dominated by the noise.
  const int d = 10, R = 40;
  RngStream theta_rng(51, 0, 0, StreamPurpose::data);
  Eigen::VectorXd theta(d);
  for (int j = 0; j < d; ++j) theta(j) = standard_normal(theta_rng);
  theta /= theta.norm() * std::sqrt(2.0);
  const auto mse = [&](std::size_t n, double eps) {
    double sum = 0.0;
    for (int r = 0; r < R; ++r) {
      RngStream data(52, n, static_cast<std::uint64_t>(r), StreamPurpose::data);
      Eigen::MatrixXd x(n, d);
      Eigen::VectorXd y(n);
      for (std::size_t i = 0; i < n; ++i) {
        for (int j = 0; j < d; ++j) x(i, j) = standard_normal_ziggurat(data);
        x.row(i) /= x.row(i).norm();
        y(i) = x.row(i).dot(theta) + 0.1 * (uniform_open01(data) - 0.5);
      }
      const AdaSspRelease rel(ada(n, d, eps, std::pow(static_cast<double>(n), -1.1)));
      RngStream noise_rng(53, n, static_cast<std::uint64_t>(r), StreamPurpose::noise);
      NoiseSource noise = NoiseSource::simulation(noise_rng);
      sum += (rel.release(x, y, noise).coefficients - theta).squaredNorm();
    }
    return sum / R;
  };
  std::vector<double> errs;
  const std::vector<std::size_t> ns{1280, 5120, 20480, 81920};
  for (std::size_t n : ns) errs.push_back(mse(n, 1.0));
  INFO("eps = 1 MSE at n = 1280, 5120, 20480, 81920: " << errs[0] << ", " << errs[1] << ", " << errs[2] << ", "
                                                       << errs[3]);
  for (std::size_t i = 1; i < errs.size(); ++i) CHECK(errs[i] < errs[i - 1]);
  const double slope = std::log(errs[3] / errs[1]) / std::log(81920.0 / 5120.0);
  INFO("slope " << slope);
  CHECK(slope > -2.4);
  CHECK(slope < -1.6);
  const double small = mse(40, 0.1);
  INFO("eps = 0.1, n = 40: MSE " << small);
  CHECK(small < 2.0 * 0.5);
}

TEST_CASE("AdaSSP: the release from the statistics of in-bound rows equals the release from the rows", "[adassp]") {
  // Rows within the bounds (no clipping): release_statistics(X'X, X'y) with the same noise stream
  // must give release(X, y) bit for bit (the simulation study releases from G this way).
  AdaSspSettings s = ada(200, 3, 0.7, 1e-6);
  s.bound_x = 2.0 * std::sqrt(3.0);
  s.bound_y = 2.0;
  const AdaSspRelease rel(s);
  RngStream data(7, 1, 0, StreamPurpose::data);
  Eigen::MatrixXd x(200, 3);
  Eigen::VectorXd y(200);
  for (Eigen::Index i = 0; i < 200; ++i) {
    for (int j = 0; j < 3; ++j) x(i, j) = 4.0 * uniform_open01(data) - 2.0;
    y(i) = 4.0 * uniform_open01(data) - 2.0;
  }
  Eigen::MatrixXd xtx;
  Eigen::VectorXd xty;
  std::size_t clipped = 0, clipped_y = 0;
  rel.clipped_statistics(x, y, xtx, xty, &clipped, &clipped_y);
  REQUIRE(clipped == 0);
  REQUIRE(clipped_y == 0);
  RngStream r1(3, 2, 0, StreamPurpose::noise), r2(3, 2, 0, StreamPurpose::noise);
  NoiseSource n1 = NoiseSource::simulation(r1), n2 = NoiseSource::simulation(r2);
  const AdaSspOutput from_rows = rel.release(x, y, n1);
  const AdaSspOutput from_statistics = rel.release_statistics(xtx, xty, n2);
  CHECK(from_rows.lambda_min_noisy == from_statistics.lambda_min_noisy);
  CHECK(from_rows.ridge == from_statistics.ridge);
  CHECK(from_rows.gram == from_statistics.gram);
  CHECK(from_rows.xty == from_statistics.xty);
  CHECK(from_rows.coefficients == from_statistics.coefficients);
  CHECK(from_statistics.diagnostics->clipped_rows == 0);
  // shapes and finiteness are checked
  CHECK_THROWS_AS(rel.release_statistics(Eigen::MatrixXd::Identity(2, 2), Eigen::VectorXd::Zero(2), n2),
                  std::invalid_argument);
  Eigen::MatrixXd bad = xtx;
  bad(0, 1) = std::nan("");
  CHECK_THROWS_AS(rel.release_statistics(bad, xty, n2), std::domain_error);
}

TEST_CASE("AdaSSP with y'y: four parts at (eps/4, delta/4), y'y's sensitivity B_Y^2, the first three draws unchanged",
          "[adassp][release]") {
  AdaSspSettings s = ada(50, 2, 1.0, 1e-6);
  s.bound_y = 3.0;
  AdaSspSettings s4 = s;
  s4.release_yty = true;
  const AdaSspRelease r3(s), r4(s4);
  CHECK(r4.sensitivities().yty == 9.0);
  // sigma per unit of sensitivity at (1/4, 1e-6/4), and the composition: mu = 2 mu(eps/4, delta/4)
  const double unit = analytic_gaussian_sigma(0.25, 0.25e-6, 1.0);
  CHECK(r4.sigma_yty() == Approx(9.0 * unit).epsilon(1e-12));
  CHECK(r4.sigma_gram() == Approx(std::sqrt(2.0) * unit).epsilon(1e-12));
  CHECK(r4.gdp_mu() == Approx(2.0 / unit).epsilon(1e-12));
  CHECK(r3.sigma_yty() == 0.0);
  CHECK(analytic_gaussian_delta(r4.sigma_yty(), 0.25, 9.0) == Approx(0.25e-6).epsilon(1e-6));
  // brute force over responses in [-B_Y, B_Y] and beyond (clamped): |y'y - y~'y~| <= B_Y^2, attained
  double worst = 0.0;
  for (double a : {-5.0, -3.0, -1.0, 0.0, 0.5, 3.0, 7.0}) {
    for (double b : {-5.0, -3.0, -1.0, 0.0, 0.5, 3.0, 7.0}) {
      const double ca = std::min(std::abs(a), 3.0), cb = std::min(std::abs(b), 3.0);
      worst = std::max(worst, std::abs(ca * ca - cb * cb));
    }
  }
  CHECK(worst == Approx(r4.sensitivities().yty));
  // The release: the first three parts use the same standard normals as without y'y (same stream
  // order), scaled by their own sigma; y'y's noise comes after them.
  Eigen::MatrixXd x(50, 2);
  Eigen::VectorXd y(50);
  for (int i = 0; i < 50; ++i) {
    x(i, 0) = std::cos(0.3 * i) * 0.7;
    x(i, 1) = std::sin(0.2 * i) * 0.6;
    y(i) = 4.0 * std::sin(0.5 * i);  // some beyond B_Y = 3: clamped
  }
  RngStream a(1, 2, 3, StreamPurpose::noise), b(1, 2, 3, StreamPurpose::noise);
  NoiseSource na = NoiseSource::simulation(a), nb = NoiseSource::simulation(b);
  const AdaSspOutput o3 = r3.release(x, y, na), o4 = r4.release(x, y, nb);
  Eigen::MatrixXd xtx;
  Eigen::VectorXd xty;
  r3.clipped_statistics(x, y, xtx, xty);
  CHECK(((o4.gram - xtx) / r4.sigma_gram() - (o3.gram - xtx) / r3.sigma_gram()).cwiseAbs().maxCoeff() < 1e-9);
  CHECK(((o4.xty - xty) / r4.sigma_xty() - (o3.xty - xty) / r3.sigma_xty()).cwiseAbs().maxCoeff() < 1e-9);
  CHECK(std::isnan(o3.yty));
  double yty = 0.0;
  for (int i = 0; i < 50; ++i) yty += std::pow(std::min(std::abs(y(i)), 3.0), 2);
  CHECK(std::isfinite(o4.yty));
  CHECK(std::abs(o4.yty - yty) < 6.0 * r4.sigma_yty());  // a N(0, sigma^2) draw: within 6 sigma
  CHECK(o4.yty != yty);
  // y'y is required with release_yty
  CHECK_THROWS_AS(r4.release_statistics(xtx, xty, nb), std::domain_error);
}
