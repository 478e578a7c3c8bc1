// api::bma (engine/api): the library entry point of the bindings against BAS's reference values
// (tests/reference/bma_bas_reference.json), predictions against their definition, and releases
// reproducible by seed and free of unreleased values (no means).
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpmu/api/bma.hpp"
#include "dpmu/runtime/data_table.hpp"

using namespace dpmu;

namespace {
struct Hsb {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  std::vector<std::string> names{"female", "race", "ses", "schtyp", "prog", "write", "math", "science", "socst"};
};

Hsb hsb() {
  Hsb h;
  std::vector<std::string> cols = h.names;
  cols.push_back("read");
  const auto t = runtime::read_csv(std::string(DPMU_TEST_DATA_DIR) + "/hsb2.csv", cols);
  const Eigen::MatrixXd d = t.matrix(cols);
  h.x = d.leftCols(9);
  h.y = d.col(9);
  return h;
}
}  // namespace

TEST_CASE("api::bma non-private equals BAS's PIPs and means; intercept = mean of y", "[api][bma]") {
  std::ifstream in(std::string(DPMU_TEST_REFERENCE_DIR) + "/bma_bas_reference.json");
  const auto ref = nlohmann::json::parse(in)["configurations"][2];  // hsb2 JZS beta-binomial(1,1)
  REQUIRE(ref["prior"] == "JZS");
  const Hsb h = hsb();
  api::BmaSettings s;
  s.prior = "zellner-siow";
  const api::BmaFit fit = api::bma(h.x, h.y, h.names, "read", s);
  for (int j = 0; j < 9; ++j) {
    CHECK(fit.posterior.posterior_inclusion_probability(j) ==
          Approx(ref["posterior_inclusion_probabilities"][j].get<double>()).margin(1e-6));
    CHECK(fit.posterior.posterior_mean(j) == Approx(ref["posterior_means"][j].get<double>()).margin(1e-6));
    CHECK(fit.posterior.posterior_sd(j) > 0.0);
  }
  REQUIRE(fit.posterior.intercept);
  CHECK(*fit.posterior.intercept == Approx(h.y.mean()).epsilon(1e-14));
  CHECK(*fit.posterior.intercept_lower < *fit.posterior.intercept);
  CHECK(!fit.release);
  CHECK(fit.search == "enumeration");
  // predictions: ȳ + (x − x̄)'β for each estimator; at x̄ every estimator predicts ȳ
  const Eigen::MatrixXd at_mean = fit.predictor_means.transpose();
  for (auto e : {api::Estimator::bma, api::Estimator::hpm, api::Estimator::mpm, api::Estimator::bpm}) {
    CHECK(api::predict(fit, at_mean, e)(0) == Approx(h.y.mean()).epsilon(1e-13));
  }
  const Eigen::VectorXd pred = api::predict(fit, h.x.topRows(3), api::Estimator::bma);
  const Eigen::VectorXd want =
      ((h.x.topRows(3).rowwise() - fit.predictor_means.transpose()) * fit.posterior.posterior_mean).array() +
      h.y.mean();
  CHECK((pred - want).cwiseAbs().maxCoeff() < 1e-12);
  CHECK(api::parse_estimator("HPM") == api::Estimator::hpm);
  CHECK_THROWS_AS(api::parse_estimator("best"), std::invalid_argument);
}

TEST_CASE("api::bma release: reproducible by seed, not private with a seed, no means", "[api][bma]") {
  const Hsb h = hsb();
  api::BmaSettings s;
  s.prior = "bic";
  s.seed = 7;
  api::PrivacySettings ps;
  ps.epsilon = 1.0;
  ps.bounds = {{0.0, 100.0}};
  ps.ridge_draws = 500;
  s.privacy = ps;
  const api::BmaFit a = api::bma(h.x.leftCols(3), h.y, {"female", "race", "ses"}, "read", s);
  const api::BmaFit b = api::bma(h.x.leftCols(3), h.y, {"female", "race", "ses"}, "read", s);
  CHECK_FALSE(a.is_private);
  REQUIRE(a.release);
  CHECK(a.release->released_gram == b.release->released_gram);
  CHECK(a.posterior.posterior_inclusion_probability == b.posterior.posterior_inclusion_probability);
  CHECK_FALSE(a.posterior.intercept);
  CHECK(a.predictor_means.size() == 0);
  CHECK_THROWS_AS(api::predict(a, h.x.leftCols(3).topRows(1)), std::invalid_argument);
  CHECK(a.release->privacy.epsilon == 1.0);
}

TEST_CASE("api::bma: bad input is refused with a message naming it", "[api][bma]") {
  const Hsb h = hsb();
  api::BmaSettings s;
  CHECK_THROWS_WITH(api::bma(h.x, h.y.head(10), h.names, "read", s), Catch::Contains("rows"));
  Eigen::MatrixXd x = h.x;
  x(3, 2) = std::nan("");
  CHECK_THROWS_WITH(api::bma(x, h.y, h.names, "read", s), Catch::Contains("'ses' has missing"));
  s.always_include = {"nosuch"};
  CHECK_THROWS_WITH(api::bma(h.x, h.y, h.names, "read", s), Catch::Contains("'nosuch'"));
}
