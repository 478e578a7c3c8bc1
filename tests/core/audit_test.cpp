// The empirical privacy auditor: Clopper–Pearson limits against closed forms, a correct Laplace
// mechanism passes and comes close to its ε, deliberately broken mechanisms (half the noise;
// the paper's centre-then-clamp SSP path with an outlier) are flagged, and the fixed SSP release
// passes on the worst case built from its bounds.
#include "dpmu/core/audit.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/ssp.hpp"

using namespace dpmu::core;

namespace {
std::vector<Eigen::VectorXd> scalar_laplace(double centre, double scale, int n, std::uint64_t seed) {
  RngStream rng(seed, 0, 0, StreamPurpose::noise);
  std::vector<Eigen::VectorXd> out;
  for (int i = 0; i < n; ++i) out.push_back(Eigen::VectorXd::Constant(1, centre + laplace(rng, scale)));
  return out;
}

}  // namespace

TEST_CASE("unique_entries: the lower triangle of a symmetric matrix, column by column", "[audit]") {
  Eigen::Matrix3d g;
  g << 1, 2, 3, 2, 4, 5, 3, 5, 6;
  Eigen::VectorXd want(6);
  want << 1, 2, 3, 4, 5, 6;
  CHECK(unique_entries(g) == want);
  CHECK(unique_entries(Eigen::MatrixXd::Constant(1, 1, 7.0)).size() == 1);
}

TEST_CASE("Clopper-Pearson one-sided limits", "[audit]") {
  // k = 0: upper = 1 − α^(1/n); k = n: lower = α^(1/n) (closed forms).
  CHECK(clopper_pearson_upper(0, 10, 0.05) == Approx(1 - std::pow(0.05, 0.1)).epsilon(1e-12));
  CHECK(clopper_pearson_lower(10, 10, 0.05) == Approx(std::pow(0.05, 0.1)).epsilon(1e-12));
  CHECK(clopper_pearson_lower(0, 10, 0.05) == 0.0);
  CHECK(clopper_pearson_upper(10, 10, 0.05) == 1.0);
  const double lo = clopper_pearson_lower(30, 100, 0.025), hi = clopper_pearson_upper(30, 100, 0.025);
  CHECK(lo < 0.3);
  CHECK(hi > 0.3);
  CHECK(lo == Approx(0.2124).margin(1e-3));  // the exact 95% interval of 30/100 is [0.2124, 0.3998]
  CHECK(hi == Approx(0.3998).margin(1e-3));
  CHECK_THROWS_AS(clopper_pearson_lower(3, 2, 0.05), std::domain_error);
}

TEST_CASE("the auditor passes a correct Laplace mechanism and flags one with half the noise", "[audit][statistical]") {
  // ε = 1, sensitivity 1: releases Lap(0, 1) vs Lap(1, 1). A valid 95% lower bound exceeds the true
  // ε with probability ≤ 0.05; with fixed seeds the run is deterministic. Half the noise (true ε = 2)
  // must be flagged: the lower bound exceeds the claimed 1.
  AuditOptions o;
  const auto a = scalar_laplace(0.0, 1.0, 20000, 1), b = scalar_laplace(1.0, 1.0, 20000, 2);
  const AuditResult good = audit_releases(a, b, o);
  INFO("correct: " << good.epsilon_lower_bound << " estimate " << good.epsilon_estimate << " " << good.event);
  CHECK(good.epsilon_lower_bound <= 1.0);
  CHECK(good.epsilon_lower_bound > 0.6);  // the audit has power
  const auto c = scalar_laplace(0.0, 0.5, 20000, 3), d = scalar_laplace(1.0, 0.5, 20000, 4);
  const AuditResult bad = audit_releases(c, d, o);
  INFO("half noise: " << bad.epsilon_lower_bound << " " << bad.event);
  CHECK(bad.epsilon_lower_bound > 1.0);
}

TEST_CASE("the auditor flags the paper's centre-then-clamp SSP path and passes the release layer",
          "[audit][statistical]") {
  // Old path (centre by the raw mean, clamp the centred values into [-1, 1], Laplace with the
  // paper's Δ1 = (p+1)(p+2) for p = 1) on data with one outlier row, claimed ε = 1.
  const int n = 30;
  Eigen::MatrixXd d(n, 2);
  RngStream rng(5, 0, 0, StreamPurpose::data);
  for (Eigen::Index i = 0; i < d.size(); ++i) d(i) = uniform_open01(rng) - 0.5;
  Eigen::MatrixXd e = d;
  e.row(0) << 1e3, -1e3;
  SspMechanism paper;
  paper.p = 1;
  paper.lower = -1.0;
  paper.upper = 1.0;
  paper.epsilon = 1.0;
  const auto old_release = [&](const Eigen::MatrixXd& x, std::uint64_t seed, int count) {
    Eigen::MatrixXd c = x;
    c.rowwise() -= c.colwise().mean();
    const Eigen::MatrixXd g = gram_matrix(c, -1.0, 1.0, false);
    RngStream s(seed, 0, 0, StreamPurpose::noise);
    std::vector<Eigen::VectorXd> out;
    for (int i = 0; i < count; ++i) out.push_back(unique_entries(noisy_gram_matrix(g, paper, s)));
    return out;
  };
  const AuditResult old = audit_releases(old_release(d, 1, 4000), old_release(e, 2, 4000), AuditOptions{});
  INFO("old path: " << old.epsilon_lower_bound);
  CHECK(old.epsilon_lower_bound > 1.0);

  // The release layer on the worst case its bounds allow (every row at the lower corner, one row at
  // the upper corner): consistent with ε = 1.
  SspReleaseSettings s;
  s.p = 1;
  s.n = n;
  s.bounds = {{-1.0, 1.0}};
  const SspRelease release(s);
  Eigen::MatrixXd lo = Eigen::MatrixXd::Constant(n, 2, -1.0), hi = lo;
  hi.row(0) << 1.0, 1.0;
  const auto draw = [&](const Eigen::MatrixXd& x, std::uint64_t seed, int count) {
    std::vector<Eigen::VectorXd> out;
    for (int i = 0; i < count; ++i) {
      RngStream st(seed, 0, static_cast<std::uint64_t>(i), StreamPurpose::noise);
      NoiseSource src = NoiseSource::simulation(st);
      out.push_back(unique_entries(release.release(x, src).released_gram));
    }
    return out;
  };
  const AuditResult fixed = audit_releases(draw(lo, 3, 4000), draw(hi, 4, 4000), AuditOptions{});
  INFO("release layer: " << fixed.epsilon_lower_bound << " estimate " << fixed.epsilon_estimate);
  CHECK(fixed.epsilon_lower_bound <= 1.0);
  CHECK(fixed.epsilon_lower_bound > 0.2);
}

TEST_CASE("the auditor rejects malformed input", "[audit]") {
  const auto a = scalar_laplace(0.0, 1.0, 10, 1);
  CHECK_THROWS_WITH(audit_releases(a, a, AuditOptions{}), Catch::Contains("at least 20"));
  const auto b = scalar_laplace(0.0, 1.0, 30, 1), c = scalar_laplace(0.0, 1.0, 31, 1);
  CHECK_THROWS_WITH(audit_releases(b, c, AuditOptions{}), Catch::Contains("different numbers"));
  AuditOptions bad;
  bad.confidence = 1.0;
  CHECK_THROWS_AS(audit_releases(b, b, bad), std::domain_error);
}
