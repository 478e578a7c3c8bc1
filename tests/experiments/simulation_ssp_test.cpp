// ssp_simulation (paper §5.2.1): data generator, streamed Gram matrix, PMSE, metric wiring,
// config errors; statistical checks of the block RNG and of the design (SNR, response range).
#include "dpmu/experiments/simulation_ssp.hpp"

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dpmu/core/block_random.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "run_replicate.hpp"

namespace ex = dpmu::experiments;
namespace core = dpmu::core;
namespace rt = dpmu::runtime;

namespace {

// A cell with every parameter at its default, overridden by `values`.
rt::Cell make_cell(const std::vector<std::pair<std::string, rt::ParameterValue>>& values) {
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_simulation");
  std::vector<std::pair<std::string, rt::ParameterValue>> all = values;
  std::vector<std::string> data_factors;
  for (const auto& spec : e.parameters()) {
    if (spec.data_factor) data_factors.push_back(spec.name);
    bool given = false;
    for (const auto& [n, v] : values) given = given || n == spec.name;
    if (!given && spec.default_value) all.emplace_back(spec.name, *spec.default_value);
  }
  return rt::Cell(all, data_factors);
}

std::size_t metric_size(const rt::Cell& c) {
  std::size_t s = 0;
  for (const auto& m : rt::find_experiment("ssp_simulation").metrics(c)) s += m.size;
  return s;
}

std::string validation_error(const rt::Cell& c) {
  try {
    rt::find_experiment("ssp_simulation").validate(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("simulation_design: b and sigma give SNR 1/2 (docs/methods.md A6)", "[ssp_simulation]") {
  for (int t : {1, 3, 9}) {
    const auto d = ex::simulation_design(9, t, 7.0);
    CHECK(d.coefficient == Approx(1.0 / (7.0 * std::sqrt(t))).epsilon(1e-15));
    CHECK(d.sigma == Approx(std::sqrt(8.0 / 3.0) / 7.0).epsilon(1e-15));
    // SNR = Var(x'beta)/sigma^2 with Var(x_j) = 4/3 for U(-2, 2)
    CHECK((4.0 / 3.0) * d.coefficient * d.coefficient * t / (d.sigma * d.sigma) == Approx(0.5).epsilon(1e-14));
  }
  CHECK(ex::simulation_design(2, 0, 7.0).coefficient == 0.0);
  CHECK_THROWS_WITH(ex::simulation_design(0, 0, 7.0), Catch::Contains("p is 0"));
  CHECK_THROWS_WITH(ex::simulation_design(2, 3, 7.0), Catch::Contains("true_model_size is 3"));
  CHECK_THROWS_WITH(ex::simulation_design(2, -1, 7.0), Catch::Contains("true_model_size"));
  CHECK_THROWS_WITH(ex::simulation_design(2, 1, 0.0), Catch::Contains("z is 0"));
}

TEST_CASE("simulate_gram_matrix: streamed G equals the materialised centred D'D", "[ssp_simulation]") {
  // n = 1000 (partial 256-row block) and n = 20 001 (crosses the 16 384-row partial sum).
  for (std::uint64_t n : {1000ULL, 20001ULL}) {
    for (int t : {0, 4, 9}) {
      const auto d = ex::simulation_design(9, t, 7.0);
      Eigen::MatrixXd rows;
      const auto sim = ex::simulate_gram_matrix(d, n, 11, 22 + n, &rows);
      REQUIRE(rows.rows() == static_cast<Eigen::Index>(n));
      const Eigen::MatrixXd c = rows.rowwise() - rows.colwise().mean();
      const Eigen::MatrixXd brute = c.transpose() * c;
      CHECK((sim.gram - brute).cwiseAbs().maxCoeff() <= 1e-11 * brute.cwiseAbs().maxCoeff());
      CHECK(sim.redrawn_rows == 0);
      // rows within bounds; y = X beta + sigma w with the declared beta
      CHECK(rows.cwiseAbs().maxCoeff() < 2.0);
    }
  }
  // deterministic in the key, different for another key
  const auto d = ex::simulation_design(2, 1, 7.0);
  CHECK(ex::simulate_gram_matrix(d, 777, 1, 2).gram == ex::simulate_gram_matrix(d, 777, 1, 2).gram);
  CHECK(ex::simulate_gram_matrix(d, 777, 1, 2).gram != ex::simulate_gram_matrix(d, 777, 1, 3).gram);
  CHECK_THROWS_WITH(ex::simulate_gram_matrix(d, 1, 1, 2), Catch::Contains("n is 1"));
}

TEST_CASE("simulate_gram_matrix: out-of-range responses are redrawn from the same stream", "[ssp_simulation]") {
  // z = 1 makes |y| >= 2 frequent (sd(y) = 2/z = 2): every row must still lie in (-2, 2).
  const auto d = ex::simulation_design(2, 2, 1.0);
  Eigen::MatrixXd rows;
  const auto sim = ex::simulate_gram_matrix(d, 5000, 5, 6, &rows);
  CHECK(sim.redrawn_rows > 500);
  CHECK(rows.col(2).cwiseAbs().maxCoeff() < 2.0);
  const Eigen::MatrixXd c = rows.rowwise() - rows.colwise().mean();
  CHECK((sim.gram - c.transpose() * c).cwiseAbs().maxCoeff() <= 1e-11 * sim.gram.cwiseAbs().maxCoeff());
}

TEST_CASE("predictive_mse from G equals the brute-force n^-1 ||V beta - V beta_hat||^2", "[ssp_simulation]") {
  const auto d = ex::simulation_design(6, 3, 7.0);
  Eigen::MatrixXd rows;
  const std::uint64_t n = 3000;
  const auto sim = ex::simulate_gram_matrix(d, n, 3, 4, &rows);
  const Eigen::MatrixXd v = (rows.rowwise() - rows.colwise().mean()).leftCols(6);
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(6);
  beta.head(3).setConstant(d.coefficient);
  Eigen::VectorXd est(6);
  est << 0.01, -0.02, 0.03, 0.5, -0.1, 0.0;
  const double brute = (v * beta - v * est).squaredNorm() / static_cast<double>(n);
  CHECK(ex::predictive_mse(sim.gram, static_cast<double>(n), beta, est) == Approx(brute).epsilon(1e-12));
  CHECK(ex::predictive_mse(sim.gram, static_cast<double>(n), beta, beta) == 0.0);
  CHECK_THROWS_WITH(ex::predictive_mse(sim.gram, 3000.0, beta, est.head(5)), Catch::Contains("length p"));
}

TEST_CASE("ssp_simulation: bad config values give clear errors", "[ssp_simulation]") {
  const auto base = [](std::vector<std::pair<std::string, rt::ParameterValue>> extra) {
    std::vector<std::pair<std::string, rt::ParameterValue>> v = {
        {"n", std::int64_t{5000}}, {"p", std::int64_t{2}}, {"true_model_size", std::int64_t{1}}};
    for (auto& e : extra) {
      for (auto& x : v) {
        if (x.first == e.first) x.second = e.second;
      }
      bool found = false;
      for (auto& x : v) found = found || x.first == e.first;
      if (!found) v.push_back(e);
    }
    return make_cell(v);
  };
  CHECK(validation_error(base({})).empty());
  CHECK_THAT(validation_error(base({{"true_model_size", std::int64_t{3}}})),
             Catch::Contains("true_model_size: 3 exceeds p = 2"));
  CHECK_THAT(validation_error(base({{"n", std::int64_t{4}}})),
             Catch::Contains("n: round(n * n_scale) = 4 must be >= p + 3"));
  CHECK_THAT(validation_error(base({{"epsilons", std::string("0.5,abc")}})), Catch::Contains("epsilons: 'abc'"));
  CHECK_THAT(validation_error(base({{"epsilons", std::string("0.5,-1")}})), Catch::Contains("not a positive number"));
  CHECK_THAT(validation_error(base({{"epsilons", std::string("0.5,1.5")}})),
             Catch::Contains("Wishart mechanism needs epsilon < 1"));
  CHECK(validation_error(base({{"epsilons", std::string("1.5")}, {"mechanisms", std::string("laplace")}})).empty());
  CHECK_THAT(validation_error(base({{"mechanisms", std::string("laplace,gauss")}})),
             Catch::Contains("mechanisms: 'gauss'"));
  CHECK_THAT(validation_error(base({{"priors", std::string("zellner_siow,foo")}})), Catch::Contains("priors: 'foo'"));
  CHECK_THAT(validation_error(base({{"model_prior", std::string("dirichlet")}})), Catch::Contains("model_prior:"));
  CHECK_THAT(validation_error(base({{"lower", 1.0}})), Catch::Contains("lower < 0 < upper"));
  CHECK_THAT(validation_error(base({{"threshold_reference", std::string("signed")}, {"threshold_percentile", 0.3}})),
             Catch::Contains("threshold_percentile"));
}

TEST_CASE("ssp_simulation: metric layout and the non-private variant equal a direct BMA on the same data",
          "[ssp_simulation]") {
  const auto cell = make_cell({{"n", std::int64_t{4000}},
                               {"p", std::int64_t{6}},
                               {"true_model_size", std::int64_t{3}},
                               {"laplace_ridge_draws", std::int64_t{500}}});
  const auto& e = rt::find_experiment("ssp_simulation");
  REQUIRE_NOTHROW(e.validate(cell));
  const std::size_t k = 2 * (1 + 2 * 2 * 2);  // priors × (non-private + ε × mechanism × threshold)
  REQUIRE(metric_size(cell) == 6 * k + 1);
  const auto prepared = dpmu_test::prepare_cell(e, cell, 7);
  const auto calib = e.calibration_outputs_erased(cell, prepared.get());
  REQUIRE(calib[0].first == "variant_prior");
  REQUIRE(calib[0].second.size() == k);
  CHECK(calib[2].second[0] == 0.0);  // mechanism code of variant 0 (non-private)
  CHECK(calib[2].second[1] == 1.0);  // laplace
  CHECK(calib[3].second[2] == 1.0);  // thresholded
  const std::vector<double> out = dpmu_test::run_replicate(e, cell, 7, 3, prepared);
  for (double x : out) CHECK((std::isfinite(x) || std::isnan(x)));
  // direct: same keys, same G
  core::RngStream data2(7, cell.data_id(), 3, core::StreamPurpose::data);
  const std::uint64_t k0 = data2(), k1 = data2();
  const auto d = ex::simulation_design(6, 3, 7.0);
  const auto sim = ex::simulate_gram_matrix(d, 4000, k0, k1);
  const auto zs = core::parse_coefficient_prior("zellner-siow", 4000.0);
  const auto res = core::bayesian_model_averaging(sim.gram, 4000.0, zs, core::parse_model_prior("beta-binomial:1,1"));
  CHECK(out[k] == Approx(std::exp(res.log_posterior_probability(7))).epsilon(1e-12));
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(6);
  beta.head(3).setConstant(d.coefficient);
  CHECK(out[0] == Approx(ex::predictive_mse(sim.gram, 4000.0, beta, res.model_averaged_coefficients)).epsilon(1e-12));
  CHECK(out[3 * k] == Approx(res.posterior_inclusion_probability.head(3).mean()).epsilon(1e-12));
  CHECK(out[4 * k] == Approx(res.posterior_inclusion_probability.tail(3).mean()).epsilon(1e-12));
  CHECK(std::isnan(out[5 * k]));  // no ridge for the non-private variant
  CHECK(out[6 * k] == 0.0);       // redrawn rows
  // DP PMSE is positive and the probabilities are probabilities
  for (std::size_t v = 0; v < k; ++v) {
    CHECK(out[v] >= 0.0);
    CHECK(out[k + v] >= 0.0);
    CHECK(out[k + v] <= 1.0 + 1e-12);
  }
}

TEST_CASE("ssp_simulation: with epsilon -> infinity the DP variants equal the non-private one", "[ssp_simulation]") {
  // epsilon = 1e9: Laplace scale 48/1e9, ridge ~ 5e-7, threshold ~ 1.4e-7 (tiny against G ~ n).
  const auto cell = make_cell({{"n", std::int64_t{5000}},
                               {"p", std::int64_t{6}},
                               {"true_model_size", std::int64_t{3}},
                               {"epsilons", std::string("1e9")},
                               {"mechanisms", std::string("laplace")},
                               {"priors", std::string("zellner_siow,bic")},
                               {"laplace_ridge_draws", std::int64_t{200}}});
  const auto& e = rt::find_experiment("ssp_simulation");
  const std::size_t k = 2 * 3;
  const std::vector<double> out = dpmu_test::run_replicate(e, cell, 9, 0);
  for (std::size_t prior = 0; prior < 2; ++prior) {
    const std::size_t v0 = prior * 3;
    for (std::size_t v = v0 + 1; v < v0 + 3; ++v) {
      CHECK(out[k + v] == Approx(out[k + v0]).margin(1e-6));         // prob_true_model
      CHECK(out[v] == Approx(out[v0]).epsilon(1e-4).margin(1e-15));  // predictive_mse
    }
  }
}

TEST_CASE("simulation design by simulation: Var(x'beta), Var(y) and SNR 1/2", "[statistical][ssp_simulation]") {
  // n = 10^6 rows, p = 2, |T| = 2. Sample moments from the centred G:
  //  V'V/n diagonal -> 4/3 (sd of the mean of x^2: sqrt(64/45/n));
  //  Z'Z/n -> Var(y) = 4 b^2 |T| (y ~ near-normal: sd of the sample variance <= Var(y) sqrt(2.2/n));
  //  beta'(V'V/n)beta / sigma^2 -> 1/2 (relative sd <= sqrt(2.2/n) as a quadratic form of near-normal x'beta).
  // Tolerance 5.3 sd per check (false-failure 1.2e-7 each, 4 checks).
  const std::uint64_t n = 1000000;
  const auto d = ex::simulation_design(2, 2, 7.0);
  const auto sim = ex::simulate_gram_matrix(d, n, 99, 100);
  const double nn = static_cast<double>(n);
  for (int j = 0; j < 2; ++j) CHECK(std::abs(sim.gram(j, j) / nn - 4.0 / 3.0) < 5.3 * std::sqrt(64.0 / 45.0 / nn));
  const double var_y = 4.0 * d.coefficient * d.coefficient * 2.0;
  CHECK(std::abs(sim.gram(2, 2) / nn / var_y - 1.0) < 5.3 * std::sqrt(2.2 / nn));
  Eigen::Vector2d beta(d.coefficient, d.coefficient);
  const double snr = beta.dot(sim.gram.topLeftCorner(2, 2) * beta) / nn / (d.sigma * d.sigma);
  CHECK(std::abs(snr / 0.5 - 1.0) < 5.3 * std::sqrt(2.2 / nn));
  CHECK(sim.redrawn_rows == 0);  // P(|y| >= 2) < 3e-12 per row
}

TEST_CASE("ssp_simulation: the Monte Carlo ridge depends on the mechanism's public parameters only",
          "[ssp_simulation]") {
  // Same (p, epsilon, l, u): equal ridge for different n, |T| and calibration streams; another
  // epsilon gives another ridge (variant 1 = Laplace, epsilon 0.5 non-thresholded; 5 = epsilon 0.9).
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_simulation");
  const auto ridge = [&](std::int64_t n, std::int64_t t, std::uint64_t seed) {
    const auto cell = make_cell({{"n", n},
                                 {"p", std::int64_t{2}},
                                 {"true_model_size", t},
                                 {"laplace_ridge_draws", std::int64_t{300}},
                                 {"priors", std::string("bic")}});
    const auto prepared = dpmu_test::prepare_cell(e, cell, seed);
    const auto outputs = e.calibration_outputs_erased(cell, prepared.get());
    std::vector<double> r;
    for (const auto& o : outputs) {
      if (o.first == "regularization") r = o.second;
    }
    return r;
  };
  const auto a = ridge(5000, 1, 1), b = ridge(100000, 0, 2);
  REQUIRE(a.size() == 9);
  CHECK(a[1] == b[1]);
  CHECK(a[5] == b[5]);
  CHECK(a[1] > a[5]);  // more noise at epsilon 0.5 than 0.9
  CHECK(a[1] > 0.0);
}
