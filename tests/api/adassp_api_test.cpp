// `dpmu bma --method adassp` through the release API (api::adassp): the public-bound standardisation
// and its back-transformation against values computed by hand, the release against the core's on
// that design, the three kinds of fields, checks before any charge, and the ledger's tight
// accountant on AdaSSP's Gaussian-DP record.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>

#include "../runtime/temp_dir.hpp"
#include "dpmu/api/adassp.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/core/composition.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/runtime/ledger.hpp"

using namespace dpmu;

namespace {

/// n rows (x1, x2, y) with x in [0, 10], y = 2 + 0.5 x1 − 0.25 x2 + N(0, 0.5²), clamped to [−5, 15].
Eigen::MatrixXd rows(int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 10.0);
  std::normal_distribution<double> z(0.0, 0.5);
  Eigen::MatrixXd m(n, 3);
  for (int i = 0; i < n; ++i) {
    m(i, 0) = u(rng);
    m(i, 1) = u(rng);
    m(i, 2) = std::clamp(2.0 + 0.5 * m(i, 0) - 0.25 * m(i, 1) + z(rng), -5.0, 15.0);
  }
  return m;
}

api::AdaSspRequest request(double eps, double delta) {
  api::AdaSspRequest q;
  q.epsilon = eps;
  q.delta = delta;
  q.bounds = {{0.0, 10.0}, {0.0, 10.0}, {-5.0, 15.0}};
  return q;
}

}  // namespace

TEST_CASE("api: AdaSSP's design is the public-bound standardisation, and the release is the core's on it",
          "[api][adassp]") {
  const Eigen::MatrixXd data = rows(300, 1);
  api::AdaSspRequest q = request(1.0, 1e-6);
  q.seed = 11;
  const auto out = api::adassp(data, {"x1", "x2"}, "y", q);
  // By hand: z = (x - 5)/5 for the predictors, w = (y - 5)/10, an intercept column of ones.
  Eigen::MatrixXd design(300, 3);
  Eigen::VectorXd w(300);
  for (int i = 0; i < 300; ++i) {
    design(i, 0) = 1.0;
    design(i, 1) = (data(i, 0) - 5.0) / 5.0;
    design(i, 2) = (data(i, 1) - 5.0) / 5.0;
    w(i) = (data(i, 2) - 5.0) / 10.0;
  }
  core::AdaSspSettings s;
  s.epsilon = 1.0;
  s.delta = 1e-6;
  s.n = 300;
  s.d = 3;
  s.bound_x = std::sqrt(3.0);
  s.bound_y = 1.0;
  const core::AdaSspRelease release(s);
  core::RngStream stream(11, core::fnv1a_64("dpmu bma --method adassp"), 0, core::StreamPurpose::noise);
  core::NoiseSource noise = core::NoiseSource::simulation(stream);
  const core::AdaSspOutput ref = release.release(design, w, noise);
  CHECK(out["lambda_min_noisy"].get<double>() == ref.lambda_min_noisy);
  CHECK(out["ridge"].get<double>() == ref.ridge);
  CHECK(out["released_gram"][2][1].get<double>() == ref.gram(2, 1));
  CHECK(out["released_xty"]["x2"].get<double>() == ref.xty(2));
  CHECK(out["coefficients_standardized"]["x1"].get<double>() == ref.coefficients(1));
  // Data units: slope_j = h_y theta_j / h_j, intercept = c_y + h_y theta_0 - sum slope_j c_j.
  const double b1 = 10.0 * ref.coefficients(1) / 5.0, b2 = 10.0 * ref.coefficients(2) / 5.0;
  CHECK(out["coefficients"]["x1"].get<double>() == Approx(b1).epsilon(1e-14));
  CHECK(out["coefficients"]["x2"].get<double>() == Approx(b2).epsilon(1e-14));
  CHECK(out["coefficients"]["(intercept)"].get<double>() ==
        Approx(5.0 + 10.0 * ref.coefficients(0) - 5.0 * b1 - 5.0 * b2).epsilon(1e-14));
  // A seeded run is a simulation: not private, with its confidential diagnostics.
  CHECK(out["private"] == false);
  CHECK(out["diagnostics"]["clamped_values"] == 0);
  CHECK(out["settings"]["method"] == "adassp");
  CHECK(out["privacy"]["gdp_mu"].get<double>() == Approx(release.gdp_mu()).epsilon(1e-15));
  CHECK_FALSE(out.contains("posterior_inclusion_probabilities"));
}

TEST_CASE("api: AdaSSP's coefficients tend to least squares on the raw data as epsilon grows", "[api][adassp]") {
  // Independent value: ordinary least squares of y on [1, x1, x2] in the data's units (QR).
  const Eigen::MatrixXd data = rows(2000, 2);
  Eigen::MatrixXd x(2000, 3);
  x.col(0).setOnes();
  x.rightCols(2) = data.leftCols(2);
  const Eigen::VectorXd ols = x.colPivHouseholderQr().solve(data.col(2));
  api::AdaSspRequest q = request(1e6, 0.5);
  q.seed = 5;
  const auto out = api::adassp(data, {"x1", "x2"}, "y", q);
  // sigma per unit sensitivity at (eps/3, delta/3) ~ 1e-6: the noise moves the solution by ~1e-6.
  CHECK(out["coefficients"]["(intercept)"].get<double>() == Approx(ols(0)).margin(1e-4));
  CHECK(out["coefficients"]["x1"].get<double>() == Approx(ols(1)).margin(1e-4));
  CHECK(out["coefficients"]["x2"].get<double>() == Approx(ols(2)).margin(1e-4));
}

TEST_CASE("api: an AdaSSP release is private, never refuses data, and checks its options first", "[api][adassp]") {
  Eigen::MatrixXd data = rows(200, 3);
  data(0, 0) = std::nan("");  // becomes the lower bound
  data(1, 2) = 1e300;         // clamped
  data(2, 1) = -INFINITY;     // clamped
  const auto secure = api::adassp(data, {"x1", "x2"}, "y", request(1.0, 1e-6));
  CHECK(secure["private"] == true);
  CHECK_FALSE(secure.contains("diagnostics"));
  CHECK(std::isfinite(secure["coefficients"]["x1"].get<double>()));
  // The same values through the seeded path: 3 clamped values (a diagnostic).
  api::AdaSspRequest seeded = request(1.0, 1e-6);
  seeded.seed = 1;
  CHECK(api::adassp(data, {"x1", "x2"}, "y", seeded)["diagnostics"]["clamped_values"] == 3);

  dpmu::test::TempDir dir("dpmu_adassp_api");
  const std::string ledger = dir / "l.jsonl";
  api::ledger_init(ledger, "5,1e-5");
  auto bad = request(1.0, 1e-6);
  bad.ledger.path = ledger;
  bad.delta.reset();
  CHECK_THROWS_WITH(api::adassp(data, {"x1", "x2"}, "y", bad), Catch::Contains("--delta"));
  bad.delta = 1e-6;
  bad.bounds = {{0.0, 10.0}, {0.0, 10.0}};
  CHECK_THROWS_WITH(api::adassp(data, {"x1", "x2"}, "y", bad), Catch::Contains("3: predictors in order"));
  bad.bounds = {{1.0, 1.0}};
  CHECK_THROWS_WITH(api::adassp(data, {"x1", "x2"}, "y", bad), Catch::Contains("finite l < u"));
  bad.bounds = {{0.0, 15.0}};
  bad.epsilon = -1.0;
  CHECK_THROWS_WITH(api::adassp(data, {"x1", "x2"}, "y", bad), Catch::Contains("--epsilon"));
  // Found by a tester: bounds whose half-width overflows or underflows, a huge epsilon and a delta
  // whose delta/3 underflows gave a charged release of null coefficients (or an internal message)
  // before; now each is refused, naming the option, before any charge.
  bad.epsilon = 0.5;
  bad.bounds = {{-1e308, 1e308}};
  CHECK_THROWS_WITH(api::adassp(data, {"x1", "x2"}, "y", bad), Catch::Contains("--bounds -1e+308,1e+308"));
  bad.bounds = {{0.0, 10.0}, {0.0, 10.0}, {-1e308, 1e308}};
  CHECK_THROWS_WITH(api::adassp(data, {"x1", "x2"}, "y", bad), Catch::Contains("--bounds"));
  bad.bounds = {{0.0, 5e-324}};
  CHECK_THROWS_WITH(api::adassp(data, {"x1", "x2"}, "y", bad), Catch::Contains("--bounds"));
  bad.bounds = {{0.0, 15.0}};
  bad.epsilon = 1e20;
  CHECK_THROWS_WITH(api::adassp(data, {"x1", "x2"}, "y", bad), Catch::Contains("--epsilon"));
  bad.epsilon = 1.0;
  bad.delta = 5e-324;
  CHECK_THROWS_WITH(api::adassp(data, {"x1", "x2"}, "y", bad), Catch::Contains("--delta"));
  CHECK(runtime::read_ledger(ledger).entries.empty());  // nothing charged by a refused request
}

TEST_CASE("api: AdaSSP releases compose as Gaussian-DP under the ledger's tight accountant", "[api][adassp][ledger]") {
  // Four releases at (1, 1e-7): basic composition spends 4, so a budget of (2, 1e-5) refuses the
  // third under the basic accountant; the tight accountant composes mu = sqrt(4) mu_1 and takes
  // all four, at epsilon = gaussian_dp_epsilon(2 mu_1, 1e-5).
  const Eigen::MatrixXd data = rows(200, 4);
  dpmu::test::TempDir dir("dpmu_adassp_ledger");
  for (const std::string accountant : {"basic", "tight"}) {
    const std::string ledger = dir / (accountant + ".jsonl");
    api::ledger_init(ledger, "2,1e-5", accountant);
    api::AdaSspRequest q = request(1.0, 1e-7);
    q.ledger.path = ledger;
    int accepted = 0;
    for (int i = 0; i < 4; ++i) {
      try {
        (void)api::adassp(data, {"x1", "x2"}, "y", q);
        ++accepted;
      } catch (const runtime::BudgetExceeded&) {
      }
    }
    CHECK(accepted == (accountant == "basic" ? 2 : 4));
    if (accountant == "tight") {
      core::AdaSspSettings s = api::adassp_settings(q, 200, 2);
      const double mu1 = core::AdaSspRelease(s).gdp_mu();
      const auto summary = api::ledger_summary(ledger);
      const auto& g = summary["totals"]["tight"]["gaussian"];
      CHECK(g["releases"] == 4);
      CHECK(g["mu"].get<double>() == Approx(2.0 * mu1).epsilon(1e-12));
      CHECK(summary["totals"]["tight"]["epsilon"].get<double>() ==
            Approx(core::gaussian_dp_epsilon(2.0 * mu1, 1e-5)).epsilon(1e-9));
      CHECK(summary["totals"]["tight"]["epsilon"].get<double>() < 1.0);
    }
  }
}
