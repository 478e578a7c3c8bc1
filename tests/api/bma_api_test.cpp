// api::bma (engine/api): the library entry point of the bindings against BAS's reference values
// (tests/reference/bma_bas_reference.json), predictions against their definition, and releases
// reproducible by seed and free of unreleased values (no means).
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpmu/api/bma.hpp"
#include "dpmu/api/bma_pipeline.hpp"
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

TEST_CASE("api::bma non-private equals BAS's PIPs and means, intercept = mean of y", "[api][bma]") {
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
  s.uncertainty = "plug-in";  // the paper's analysis (bic is not a prior of the noise-aware sampler)
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
  // A non-private fit has no privacy noise to integrate over: refused as the CLI refuses it (it was
  // silently accepted through R and Python).
  s.always_include.clear();
  s.uncertainty = "noise-aware";
  CHECK_THROWS_WITH(api::bma(h.x, h.y, h.names, "read", s), Catch::Contains("non-private fit (no epsilon) has none"));
  // The draws are checked in 64 bits: 2^32 + 20 is not 20.
  s.privacy = api::PrivacySettings{};
  s.privacy->epsilon = 1.0;
  s.privacy->bounds = {{0.0, 100.0}};
  s.seed = 1;
  s.noise_aware_draws = (std::int64_t{1} << 32) + 20;
  CHECK_THROWS_WITH(api::bma(h.x, h.y, h.names, "read", s),
                    Catch::Contains("noise_aware_draws must be a whole number in [20, 100000], got 4294967316"));
}

TEST_CASE("api::reanalyse: a release re-analysed equals analyse() of its released matrix, nothing else changes",
          "[api][bma]") {
  const Hsb h = hsb();
  api::BmaSettings s;
  s.prior = "zellner-siow";
  s.uncertainty = "plug-in";  // analyse() of the released matrix is the plug-in analysis
  s.seed = 7;
  api::PrivacySettings ps;
  ps.epsilon = 1.0;
  ps.bounds = {{0.0, 100.0}};
  ps.ridge_draws = 500;
  ps.threshold = 0.9;
  s.privacy = ps;
  const std::vector<std::string> names{"female", "write", "math", "science"};
  const api::BmaFit fit = api::bma(h.x.rightCols(4), h.y, names, "read", s);
  api::BmaSettings t = fit.analysis;
  t.prior = "bic";
  t.model_prior = "uniform";
  t.credible_level = 0.9;
  const api::BmaFit re = api::reanalyse(fit, t);
  // = analyse() of the same regularised released matrix with the same n, scales and search
  api::AnalysisPlan plan;
  plan.prior = core::parse_coefficient_prior("bic", std::nullopt, 3.0);
  plan.model_prior = core::parse_model_prior("uniform");
  plan.options.credible_level = 0.9;
  api::Search search;
  search.seed = fit.seed;
  const api::BmaSummary want = api::analyse(fit.release->regularized.matrix, static_cast<double>(fit.n), plan,
                                            fit.release->column_scale, search, names, "read", true, std::nullopt);
  CHECK(re.posterior.posterior_inclusion_probability == want.posterior_inclusion_probability);
  CHECK(re.posterior.posterior_mean == want.posterior_mean);
  CHECK(re.posterior.lower == want.lower);
  REQUIRE(re.thresholded);
  const api::BmaSummary want_t =
      api::analyse(fit.release->thresholded_regularized->matrix, static_cast<double>(fit.n), plan,
                   fit.release->column_scale, search, names, "read", true, std::nullopt);
  CHECK(re.thresholded->posterior_inclusion_probability == want_t.posterior_inclusion_probability);
  // = a fresh seeded release with the new settings (noise and ridge do not depend on them)
  api::BmaSettings fresh_settings = t;
  fresh_settings.seed = 7;
  fresh_settings.privacy = ps;
  const api::BmaFit fresh = api::bma(h.x.rightCols(4), h.y, names, "read", fresh_settings);
  CHECK(re.posterior.posterior_inclusion_probability == fresh.posterior.posterior_inclusion_probability);
  CHECK(re.release->released_gram == fit.release->released_gram);
  CHECK(api::privacy_json(re) == api::privacy_json(fit));
  CHECK(re.prior == "bic");
  CHECK_FALSE(re.data_statistics);
  // what may not change
  api::BmaSettings bad = t;
  bad.privacy = ps;
  CHECK_THROWS_WITH(api::reanalyse(fit, bad), Catch::Contains("privacy settings"));
  bad = t;
  bad.seed = fit.seed + 1;
  CHECK_THROWS_WITH(api::reanalyse(fit, bad), Catch::Contains("seed"));
  bad = t;
  bad.ledger.path = "/tmp/x.ledger";
  CHECK_THROWS_WITH(api::reanalyse(fit, bad), Catch::Contains("ledger"));
  CHECK_THROWS_AS(api::reanalyse(api::BmaFit{}, t), std::invalid_argument);
}

TEST_CASE("api::reanalyse of a non-private fit equals bma() with the new settings, release keeps no data",
          "[api][bma]") {
  const Hsb h = hsb();
  api::BmaSettings s;
  const api::BmaFit fit = api::bma(h.x, h.y, h.names, "read", s);
  REQUIRE(fit.data_statistics);
  api::BmaSettings t = fit.analysis;
  t.prior = "hyper-g";
  t.a = 4.0;
  t.always_include = {"math"};
  const api::BmaFit re = api::reanalyse(fit, t);
  const api::BmaFit fresh = api::bma(h.x, h.y, h.names, "read", t);
  CHECK((re.posterior.posterior_inclusion_probability - fresh.posterior.posterior_inclusion_probability)
            .cwiseAbs()
            .maxCoeff() < 1e-14);
  CHECK(*re.posterior.intercept == *fresh.posterior.intercept);
}

TEST_CASE("api::predict_with_se: one g-prior model gives the closed-form t posterior of the mean", "[api][bma]") {
  const Hsb h = hsb();
  api::BmaSettings s;
  s.prior = "g-prior";
  s.g = 30.0;
  s.always_include = {"write", "math"};
  const Eigen::MatrixXd x = h.x.middleCols(5, 2);  // write, math
  const api::BmaFit fit = api::bma(x, h.y, {"write", "math"}, "read", s);
  const double n = static_cast<double>(h.y.size());
  const double sh = 30.0 / 31.0;
  const Eigen::MatrixXd xc = x.rowwise() - x.colwise().mean();
  const Eigen::VectorXd yc = h.y.array() - h.y.mean();
  const Eigen::MatrixXd xtx = xc.transpose() * xc;
  const Eigen::VectorXd b = xtx.ldlt().solve(xc.transpose() * yc);
  const double ssy = yc.squaredNorm();
  const double r2 = (xc * b).squaredNorm() / ssy;
  Eigen::MatrixXd nx(2, 2);
  nx << 30, 35, 70, 75;
  const auto r = api::predict_with_se(fit, nx, api::Estimator::bma, 0.9, true);
  for (Eigen::Index i = 0; i < 2; ++i) {
    const Eigen::VectorXd d = (nx.row(i) - x.colwise().mean()).transpose();
    const double hv = d.dot(xtx.ldlt().solve(d));
    const double mse = ssy * (1 - sh * r2) / (n - 1);
    CHECK(r.fit(i) == Approx(h.y.mean() + sh * d.dot(b)).epsilon(1e-12));
    CHECK(r.se_fit(i) == Approx(std::sqrt(mse * (1 / n + sh * hv))).epsilon(1e-10));
    CHECK(r.se_pred(i) == Approx(std::sqrt(mse * (1 + 1 / n + sh * hv))).epsilon(1e-10));
    CHECK(r.upper(i) - r.fit(i) == Approx(r.fit(i) - r.lower(i)).epsilon(1e-9));
  }
  CHECK(r.models == 1);
  CHECK_THROWS_AS(api::predict_with_se(fit, nx, api::Estimator::bma, 1.0, true), std::domain_error);
}

TEST_CASE("api::non_private_gram: a column shifted by 1e12 gives the R² of the unshifted column (several blocks)",
          "[api][bma]") {
  // Integer data: x + 1e12 is exact, so the shifted and unshifted data have the same R². n = 10^5
  // rows span 25 blocks of the Gram accumulator, whose merge of block means lost the digits of
  // x + 1e12 before the columns were centred first (R² off by about 1e-9).
  const Eigen::Index n = 100000;
  Eigen::MatrixXd raw(n, 3);
  for (Eigen::Index i = 0; i < n; ++i) {
    raw(i, 0) = static_cast<double>((i * 7919) % 101);
    raw(i, 1) = static_cast<double>((i * 104729) % 97);
    raw(i, 2) = 3.0 * raw(i, 0) + 2.0 * raw(i, 1) + static_cast<double>((i * 31337) % 53);
  }
  // Reference: the centred cross-products in exact integer arithmetic, n S_jk = n sum x_j x_k -
  // sum x_j sum x_k (below 2^53), then R² = s_xy' S_xx^-1 s_xy / s_yy.
  Eigen::Matrix3d s;
  for (int j = 0; j < 3; ++j) {
    for (int k = 0; k < 3; ++k) {
      std::int64_t sjk = 0, sj = 0, sk = 0;
      for (Eigen::Index i = 0; i < n; ++i) {
        const auto a = static_cast<std::int64_t>(raw(i, j)), b = static_cast<std::int64_t>(raw(i, k));
        sjk += a * b;
        sj += a;
        sk += b;
      }
      s(j, k) = static_cast<double>(n * sjk - sj * sk);
    }
  }
  const auto r_squared = [](const Eigen::Matrix3d& g) {
    const Eigen::Vector2d b = g.topLeftCorner<2, 2>().ldlt().solve(g.col(2).head<2>());
    return g.col(2).head<2>().dot(b) / g(2, 2);
  };
  const double reference = r_squared(s);
  const std::vector<std::string> names{"x", "z", "y"};
  for (const double shift : {0.0, 1e12, -3e13}) {
    INFO("x + " << shift);
    Eigen::MatrixXd shifted = raw;
    shifted.col(0).array() += shift;
    const api::NonPrivateGram g = api::non_private_gram(shifted, names);
    CHECK(r_squared(g.gram) == Approx(reference).epsilon(1e-13));
    // The shifted values themselves are rounded to the spacing of doubles near the shift (1.2e-4 at
    // 1e12, 3.9e-3 at 3e13), so their mean agrees with mean(x) + shift to about 1e-13 relative.
    CHECK(g.means(0) == Approx(raw.col(0).mean() + shift).epsilon(1e-12));
  }
}
