// ssp_simulation (paper §5.2.1): data generator, streamed Gram matrix, PMSE, metric wiring,
// config errors; statistical checks of the block RNG and of the design (SNR, response range).
#include "dpmu/experiments/simulation_ssp.hpp"

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "dpmu/core/adassp.hpp"
#include "dpmu/core/block_random.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/experiments/simulation_cost.hpp"
#include "dpmu/experiments/simulation_gram.hpp"
#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "run_replicate.hpp"

namespace ex = dpmu::experiments;
namespace core = dpmu::core;
namespace rt = dpmu::runtime;

namespace {

// A cell with every parameter at its default, overridden by `values`.
rt::Cell make_cell(const std::vector<std::pair<std::string, rt::ParameterValue>>& values) {
  ex::register_builtin_experiments();
  return dpmu_test::cell_with_defaults(rt::find_experiment("ssp_simulation"), values);
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

// The data set of `cell`'s data key in replicate `replicate` of master seed `seed`, by hand: the
// two keys from the cell's data stream, then the exact sampler of G (what generate() does).
ex::SimulatedGram cell_gram(const rt::Cell& cell, std::uint64_t seed, std::uint64_t replicate,
                            const ex::SimulationDesign& design, std::uint64_t n) {
  core::RngStream data(seed, cell.data_id(), replicate, core::StreamPurpose::data);
  const std::uint64_t k0 = data(), k1 = data();
  return ex::sample_gram_matrix(design, n, k0, k1);
}

/// AdaSSP as the adassp / adassp-bma cells of the tests below set it up: (0.5, 1/n) with n = 3000,
/// p = 6 and the paper's reading of the bounds [-2, 2] (B_X = sqrt(6) * 2, B_Y = 2).
dpmu::core::AdaSspSettings cell_adassp_settings(bool release_yty) {
  dpmu::core::AdaSspSettings s;
  s.epsilon = 0.5;
  s.delta = 1.0 / 3000.0;
  s.n = 3000;
  s.d = 6;
  s.bound_x = std::sqrt(6.0) * 2.0;
  s.bound_y = 2.0;
  s.release_yty = release_yty;
  return s;
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
    std::vector<std::pair<std::string, rt::ParameterValue>> v = {{"n", std::int64_t{5000}},
                                                                 {"p", std::int64_t{2}},
                                                                 {"true_model_size", std::int64_t{1}},
                                                                 {"mechanism", std::string("laplace")},
                                                                 {"epsilon", 0.5},
                                                                 {"prior", std::string("zellner_siow")}};
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
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(validation_error(base({})).empty());
  CHECK_THAT(validation_error(base({{"true_model_size", std::int64_t{3}}})),
             Catch::Contains("true_model_size: 3 exceeds p = 2"));
  CHECK_THAT(validation_error(base({{"n", std::int64_t{4}}})),
             Catch::Contains("n: round(n * n_scale) = 4 must be >= p + 3"));
  CHECK_THAT(validation_error(base({{"mechanism", std::string("wishart")}, {"epsilon", 1.5}})),
             Catch::Contains("epsilon: the Wishart mechanism needs epsilon < 1"));
  CHECK(validation_error(base({{"epsilon", 1.5}})).empty());  // Laplace takes any epsilon > 0
  CHECK_THAT(validation_error(base({{"epsilon", inf}})), Catch::Contains("epsilon: mechanism laplace needs a privacy"));
  CHECK(validation_error(base({{"mechanism", std::string("none")}, {"epsilon", inf}})).empty());
  CHECK_THAT(validation_error(base({{"mechanism", std::string("none")}})),
             Catch::Contains("epsilon: the non-private analysis (mechanism none) has no privacy budget"));
  CHECK_THAT(
      validation_error(base({{"mechanism", std::string("none")}, {"epsilon", inf}, {"thresholded", std::int64_t{1}}})),
      Catch::Contains("thresholded: the non-private analysis"));
  CHECK_THAT(validation_error(base({{"prior", std::string("foo")}})), Catch::Contains("prior: 'foo'"));
  CHECK_THAT(validation_error(base({{"model_prior", std::string("dirichlet")}})), Catch::Contains("model_prior:"));
  CHECK_THAT(validation_error(base({{"lower", 1.0}})), Catch::Contains("lower < 0 < upper"));
  CHECK_THAT(validation_error(base({{"threshold_reference", std::string("signed")}, {"threshold_percentile", 0.3}})),
             Catch::Contains("threshold_percentile"));
  CHECK_THAT(validation_error(
                 base({{"share_predictors", std::string("true_model_size")}, {"generator", std::string("rows")}})),
             Catch::Contains("share_predictors: sharing predictors needs generator: sufficient_statistics"));
  CHECK(validation_error(base({{"share_predictors", std::string("p_true_model_size_and_n")}})).empty());
  CHECK_THAT(validation_error(base({{"n", std::int64_t{3000000000}}})),
             Catch::Contains("n: round(n * n_scale) = 3000000000 exceeds 2^31"));
  CHECK(validation_error(base({{"n", std::int64_t{3000000000}}, {"generator", std::string("rows")}})).empty());
}

TEST_CASE("ssp_simulation: the non-private cell equals a direct BMA on the same data", "[ssp_simulation]") {
  const auto cell = make_cell({{"n", std::int64_t{4000}},
                               {"p", std::int64_t{6}},
                               {"true_model_size", std::int64_t{3}},
                               {"mechanism", std::string("none")},
                               {"prior", std::string("zellner_siow")}});
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_simulation");
  REQUIRE_NOTHROW(e.validate(cell));
  REQUIRE(metric_size(cell) == 7);
  const std::vector<double> out = dpmu_test::run_replicate(e, cell, 7, 3);
  // direct: the data stream of the cell's data key, the same G
  const auto d = ex::simulation_design(6, 3, 7.0);
  const auto sim = cell_gram(cell, 7, 3, d, 4000);
  const auto zs = core::parse_coefficient_prior("zellner-siow", 4000.0);
  const auto res = core::bayesian_model_averaging(sim.gram, 4000.0, zs, core::parse_model_prior("beta-binomial:1,1"));
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(6);
  beta.head(3).setConstant(d.coefficient);
  CHECK(out[0] == Approx(ex::predictive_mse(sim.gram, 4000.0, beta, res.model_averaged_coefficients)).epsilon(1e-12));
  CHECK(out[1] == Approx(std::exp(res.log_posterior_probability(7))).epsilon(1e-12));
  CHECK(out[3] == Approx(res.posterior_inclusion_probability.head(3).mean()).epsilon(1e-12));
  CHECK(out[4] == Approx(res.posterior_inclusion_probability.tail(3).mean()).epsilon(1e-12));
  CHECK(std::isnan(out[5]));  // no ridge without a mechanism
  CHECK(out[6] == 0.0);       // redrawn rows
}

TEST_CASE("ssp_simulation: a private cell equals the mechanism applied to the same G with the cell's noise stream",
          "[ssp_simulation]") {
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_simulation");
  for (const std::string mechanism : {"laplace", "wishart"}) {
    for (std::int64_t thresholded : {0, 1}) {
      const auto cell = make_cell({{"n", std::int64_t{3000}},
                                   {"p", std::int64_t{2}},
                                   {"true_model_size", std::int64_t{1}},
                                   {"mechanism", mechanism},
                                   {"epsilon", 0.5},
                                   {"thresholded", thresholded},
                                   {"prior", std::string("bic")},
                                   {"laplace_ridge_draws", std::int64_t{300}}});
      REQUIRE_NOTHROW(e.validate(cell));
      const auto prepared = dpmu_test::prepare_cell(e, cell, 11);
      const std::vector<double> out = dpmu_test::run_replicate(e, cell, 11, 2, prepared);
      double ridge = 0, threshold = 0;
      for (const auto& [name, v] : e.calibration_outputs_erased(cell, prepared.get())) {
        if (name == "regularization") ridge = v[0];
        if (name == "threshold") threshold = v[0];
      }
      CHECK(ridge > 0.0);
      CHECK((thresholded != 0 ? threshold > 0.0 : std::isnan(threshold)));
      const auto d = ex::simulation_design(2, 1, 7.0);
      const auto sim = cell_gram(cell, 11, 2, d, 3000);
      const core::SspMechanism m{.kind = core::parse_ssp_mechanism(mechanism),
                                 .p = 2,
                                 .lower = -2.0,
                                 .upper = 2.0,
                                 .epsilon = 0.5,
                                 .delta = mechanism == "wishart" ? 1.0 / 3000.0 : 0.0};
      core::RngStream noise(11, cell.cell_id(), 2, core::StreamPurpose::noise);
      const Eigen::MatrixXd gstar = core::noisy_gram_matrix(sim.gram, m, noise);
      const auto released = core::regularize(thresholded != 0 ? core::hard_threshold(gstar, threshold) : gstar, ridge);
      const auto res = core::bayesian_model_averaging(released.matrix, 3000.0, core::parse_coefficient_prior("bic"),
                                                      core::parse_model_prior("beta-binomial:1,1"));
      Eigen::VectorXd beta = Eigen::VectorXd::Zero(2);
      beta(0) = d.coefficient;
      CHECK(out[0] == ex::predictive_mse(sim.gram, 3000.0, beta, res.model_averaged_coefficients));
      CHECK(out[1] == std::exp(res.log_posterior_probability(1)));
      CHECK(out[5] == (released.fallback ? 1.0 : 0.0));
    }
  }
}

TEST_CASE("ssp_simulation: with epsilon -> infinity the private cells approach the non-private one",
          "[ssp_simulation]") {
  // epsilon = 1e9: Laplace scale 48/1e9, ridge ~ 5e-7, threshold ~ 1.4e-7 (tiny against G ~ n).
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_simulation");
  for (const std::string prior : {"zellner_siow", "bic"}) {
    const auto cell = [&](const std::string& mechanism, double epsilon, std::int64_t thresholded) {
      return make_cell({{"n", std::int64_t{5000}},
                        {"p", std::int64_t{6}},
                        {"true_model_size", std::int64_t{3}},
                        {"mechanism", mechanism},
                        {"epsilon", epsilon},
                        {"thresholded", thresholded},
                        {"prior", prior},
                        {"laplace_ridge_draws", std::int64_t{200}}});
    };
    const auto g = dpmu_test::run_replicate(e, cell("none", std::numeric_limits<double>::infinity(), 0), 9, 0);
    for (std::int64_t thr : {0, 1}) {
      const auto dp = dpmu_test::run_replicate(e, cell("laplace", 1e9, thr), 9, 0);
      CHECK(dp[1] == Approx(g[1]).margin(1e-6));                 // prob_true_model
      CHECK(dp[0] == Approx(g[0]).epsilon(1e-4).margin(1e-15));  // predictive_mse
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
  // Same (mechanism, p, epsilon, l, u): equal ridge for different n, |T|, prior, thresholding and
  // calibration streams; another epsilon gives another ridge.
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_simulation");
  const auto ridge = [&](std::int64_t n, std::int64_t t, double epsilon, const std::string& prior,
                         std::int64_t thresholded, std::uint64_t seed) {
    const auto cell = make_cell({{"n", n},
                                 {"p", std::int64_t{2}},
                                 {"true_model_size", t},
                                 {"laplace_ridge_draws", std::int64_t{300}},
                                 {"mechanism", std::string("laplace")},
                                 {"epsilon", epsilon},
                                 {"thresholded", thresholded},
                                 {"prior", prior}});
    const auto prepared = dpmu_test::prepare_cell(e, cell, seed);
    for (const auto& o : e.calibration_outputs_erased(cell, prepared.get())) {
      if (o.first == "regularization") return o.second.at(0);
    }
    return std::nan("");
  };
  const double a = ridge(5000, 1, 0.5, "bic", 0, 1);
  CHECK(a == ridge(100000, 0, 0.5, "zellner_siow", 1, 2));
  CHECK(a > ridge(5000, 1, 0.9, "bic", 0, 1));  // more noise at epsilon 0.5 than 0.9
  CHECK(a > 0.0);
}

TEST_CASE("ssp_simulation: the Laplace ridge is computed once per mechanism and shared by its cells",
          "[experiments][ssp]") {
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_simulation");
  auto cell_of = [](std::int64_t n, std::int64_t t, const std::string& prior, std::int64_t thresholded, double eps) {
    return make_cell({{"n", n},
                      {"p", std::int64_t{2}},
                      {"true_model_size", t},
                      {"mechanism", std::string("laplace")},
                      {"epsilon", eps},
                      {"thresholded", thresholded},
                      {"prior", prior},
                      {"laplace_ridge_draws", std::int64_t{300}}});
  };
  auto ridge_of = [&](const rt::Cell& cell, rt::SharedCalibration& shared) {
    auto calibration = rt::calibration_stream(11, cell);
    const auto prepared = e.prepare_erased(cell, calibration, shared);
    for (const auto& [name, v] : e.calibration_outputs_erased(cell, prepared.get()))
      if (name == "regularization") return v[0];
    return std::nan("");
  };
  rt::SharedCalibration shared;
  // n, |T|, prior and thresholding differ: one key, one ridge, equal to each cell's own.
  const std::vector<rt::Cell> same = {cell_of(3000, 1, "bic", 0, 0.5), cell_of(9000, 0, "zellner_siow", 1, 0.5),
                                      cell_of(5000, 2, "bic", 1, 0.5)};
  std::vector<double> ridges;
  for (const auto& c : same) ridges.push_back(ridge_of(c, shared));
  // one ridge, and one threshold that the two thresholded cells share (the Laplace threshold, like
  // the ridge, depends on the mechanism's public parameters only)
  CHECK(shared.size() == 2);
  for (std::size_t i = 0; i < same.size(); ++i) {
    rt::SharedCalibration alone;
    CHECK(ridges[i] == ridge_of(same[i], alone));  // bit-identical to computing it alone
    CHECK(ridges[i] == ridges[0]);
  }
  const double other = ridge_of(cell_of(3000, 1, "bic", 0, 0.9), shared);  // another epsilon: another key
  CHECK(shared.size() == 3);
  CHECK(other < ridges[0]);  // larger epsilon, smaller noise, smaller ridge
}

TEST_CASE("ssp_simulation: the ETA cost model prices quadrature priors by the prior's unit", "[experiments][ssp]") {
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_simulation");
  auto cost = [&](const std::string& prior) {
    return e.analyse_cost(make_cell({{"n", std::int64_t{5000}},
                                     {"p", std::int64_t{6}},
                                     {"true_model_size", std::int64_t{3}},
                                     {"mechanism", std::string("none")},
                                     {"prior", prior}}));
  };
  for (const std::string prior : {"zellner_siow", "zellner-siow", "hyper-g", "hyper_g_n", "robust"})
    CHECK(cost(prior) == ex::ssp_analyse_cost(6, true));
  for (const std::string prior : {"bic", "aic", "lr", "g-prior", "zellner-siow-laplace"})
    CHECK(cost(prior) == ex::ssp_analyse_cost(6, false));
}

TEST_CASE("ssp_simulation: shared predictors run as generation groups, a replayed cell gets the run's numbers",
          "[ssp_simulation]") {
  dpmu::experiments::register_builtin_experiments();
  const std::string config = R"(experiment: ssp_simulation
master_seed: 5
replicates: 4
block_size: 2
parameters:
  model_prior: "beta-binomial:1,1"
  laplace_ridge_draws: 200
  share_predictors: p_true_model_size_and_n
  negligible_model_share: 1.0e-17
grid:
  - zip: {p: [2, 2, 3], true_model_size: [0, 1, 2]}
    n: [300, 1000]
    mechanism: none
    prior: [zellner_siow, bic]
  - zip: {p: [2, 2, 3], true_model_size: [0, 1, 2]}
    n: [300, 1000]
    mechanism: laplace
    epsilon: 0.9
    prior: zellner_siow
)";
  const auto s = rt::parse_study(config, "shared.yaml");
  REQUIRE(s.cells.size() == 18);
  REQUIRE(s.data_groups.size() == 1);  // every p, |T| and n share one predictor stream
  // cells of one data key see the same data set; cells of another data key their own response
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    const auto& e = *s.experiment;
    for (std::uint64_t r : {std::uint64_t{0}, std::uint64_t{3}}) {
      const auto alone = dpmu_test::run_replicate(e, s.cells[c], s.master_seed, r);
      // the same cell run with every data key of the group: run_one_replicate over all data cells
      std::vector<rt::Cell> data_cells;
      std::size_t index = 0;
      for (std::size_t d = 0; d < s.cells.size(); ++d) {
        const rt::Cell dc = s.cells[d].data_cell();
        bool seen = false;
        for (const auto& x : data_cells) seen = seen || x.key() == dc.key();
        if (!seen) data_cells.push_back(dc);
      }
      for (std::size_t i = 0; i < data_cells.size(); ++i)
        if (data_cells[i].key() == s.cells[c].data_key()) index = i;
      const auto prepared = dpmu_test::prepare_cell(e, s.cells[c], s.master_seed);
      const auto metrics = e.metrics(s.cells[c]);
      std::vector<double> out(alone.size());
      rt::CellReplicate one;
      one.cell = &s.cells[c];
      one.prepared = prepared.get();
      one.metrics = metrics;
      one.out = out;
      one.data_index = index;
      rt::run_one_replicate(e, data_cells, s.master_seed, r, std::span<rt::CellReplicate>(&one, 1));
      REQUIRE(one.failure_stage.empty());
      INFO("cell " << c << ", replicate " << r);
      for (std::size_t k = 0; k < out.size(); ++k) {
        CHECK((out[k] == alone[k] || (std::isnan(out[k]) && std::isnan(alone[k]))));
      }
    }
  }
}

TEST_CASE("ssp_simulation: an adassp cell is AdaSSP's release from the same G with the cell's noise stream",
          "[ssp_simulation][adassp]") {
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_simulation");
  const auto cell = [](double epsilon, double delta) {
    return make_cell({{"n", std::int64_t{3000}},
                      {"p", std::int64_t{6}},
                      {"true_model_size", std::int64_t{3}},
                      {"mechanism", std::string("adassp")},
                      {"epsilon", epsilon},
                      {"adassp_delta", delta},
                      {"prior", std::string("zellner_siow")}});
  };
  const auto c = cell(0.5, 0.0);
  REQUIRE_NOTHROW(e.validate(c));
  REQUIRE(metric_size(c) == 7);
  const std::vector<double> out = dpmu_test::run_replicate(e, c, 13, 4);
  // by hand: the cell's G, AdaSSP at (0.5, 1/n) with B_X = sqrt(6) * 2, B_Y = 2, the cell's noise stream
  const auto d = ex::simulation_design(6, 3, 7.0);
  const auto sim = cell_gram(c, 13, 4, d, 3000);
  const core::AdaSspSettings s = cell_adassp_settings(false);
  core::RngStream noise(13, c.cell_id(), 4, core::StreamPurpose::noise);
  core::NoiseSource source = core::NoiseSource::simulation(noise);
  const auto ada =
      core::AdaSspRelease(s).release_statistics(sim.gram.topLeftCorner(6, 6), sim.gram.col(6).head(6), source);
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(6);
  beta.head(3).setConstant(d.coefficient);
  CHECK(out[0] == ex::predictive_mse(sim.gram, 3000.0, beta, ada.coefficients));
  for (int k = 1; k <= 5; ++k) CHECK(std::isnan(out[static_cast<std::size_t>(k)]));  // no models, no ridge fallback
  // epsilon -> infinity: AdaSSP's estimate tends to least squares on the full model, whose PMSE is
  // that of the full-model OLS fit of the same G (an independent computation by LDLT). The analytic
  // Gaussian's sigma falls only as epsilon^(-1/2): at epsilon = 1e9 sigma_XX ~ 1.3e-3 on entries
  // ~ 4e3 and the ridge is 0 (lambda_min ~ 4e3 > eta ~ 9e-3), so the PMSE (~1.5e-4, a squared
  // difference) moves by ~1e-5 relative; 1e-3 leaves room, a wrong estimate is off by O(1).
  const auto big = dpmu_test::run_replicate(e, cell(1e9, 0.0), 13, 4);
  const Eigen::VectorXd ols = sim.gram.topLeftCorner(6, 6).ldlt().solve(sim.gram.col(6).head(6));
  CHECK(big[0] == Approx(ex::predictive_mse(sim.gram, 3000.0, beta, ols)).epsilon(1e-3));
  CHECK(big[0] != out[0]);
  // a thresholded AdaSSP cell is refused before any work
  CHECK_THAT(validation_error(make_cell({{"n", std::int64_t{3000}},
                                         {"p", std::int64_t{2}},
                                         {"true_model_size", std::int64_t{1}},
                                         {"mechanism", std::string("adassp")},
                                         {"epsilon", 0.5},
                                         {"thresholded", std::int64_t{1}},
                                         {"prior", std::string("bic")}})),
             Catch::Contains("thresholded: the paper's thresholding is not part of AdaSSP"));
}

TEST_CASE("ssp_simulation: an adassp-bma cell is model averaging on AdaSSP's statistics with y'y",
          "[ssp_simulation][adassp]") {
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_simulation");
  const auto cell = [](const std::string& mechanism, double epsilon) {
    return make_cell({{"n", std::int64_t{3000}},
                      {"p", std::int64_t{6}},
                      {"true_model_size", std::int64_t{3}},
                      {"mechanism", mechanism},
                      {"epsilon", epsilon},
                      {"prior", std::string("zellner_siow")}});
  };
  const auto c = cell("adassp-bma", 0.5);
  REQUIRE_NOTHROW(e.validate(c));
  const std::vector<double> out = dpmu_test::run_replicate(e, c, 13, 4);
  // by hand: AdaSSP at (0.5, 1/n) with y'y (four parts), G* = [X'X* + lambda I, X'y*; ., y'y*], the
  // paper's analysis of it (Zellner-Siow, beta-binomial(1, 1)) with the section 5.4 PD fallback
  const auto d = ex::simulation_design(6, 3, 7.0);
  const auto sim = cell_gram(c, 13, 4, d, 3000);
  const core::AdaSspSettings s = cell_adassp_settings(true);
  core::RngStream noise(13, c.cell_id(), 4, core::StreamPurpose::noise);
  core::NoiseSource source = core::NoiseSource::simulation(noise);
  const auto ada = core::AdaSspRelease(s).release_statistics(sim.gram.topLeftCorner(6, 6), sim.gram.col(6).head(6),
                                                             source, sim.gram(6, 6));
  Eigen::MatrixXd gstar(7, 7);
  gstar.topLeftCorner(6, 6) = ada.gram + ada.ridge * Eigen::MatrixXd::Identity(6, 6);
  gstar.col(6).head(6) = ada.xty;
  gstar.row(6).head(6) = ada.xty.transpose();
  gstar(6, 6) = ada.yty;
  const core::RegularizedGram reg = core::regularize(gstar, 0.0);
  core::BmaOptions opts;
  opts.credible_level = 0.0;
  opts.keep_all_models = true;
  const core::BmaResult res =
      core::bayesian_model_averaging(reg.matrix, 3000.0, core::parse_coefficient_prior("zellner_siow"),
                                     core::parse_model_prior("beta-binomial:1,1"), opts);
  CHECK(out[1] == Approx(std::exp(res.log_posterior_probability(7))).epsilon(1e-12));  // models 1, 2, 3 = mask 7
  CHECK(out[5] == (reg.fallback ? 1.0 : 0.0));
  for (int k = 0; k <= 4; ++k) CHECK(std::isfinite(out[static_cast<std::size_t>(k)]));
  // epsilon -> infinity: the non-private analysis of the same data set (mechanism none)
  const auto big = dpmu_test::run_replicate(e, cell("adassp-bma", 1e9), 13, 4);
  const auto none = dpmu_test::run_replicate(e,
                                             make_cell({{"n", std::int64_t{3000}},
                                                        {"p", std::int64_t{6}},
                                                        {"true_model_size", std::int64_t{3}},
                                                        {"mechanism", std::string("none")},
                                                        {"prior", std::string("zellner_siow")}}),
                                             13, 4);
  CHECK(big[1] == Approx(none[1]).margin(1e-3));  // P(true model)
  CHECK(big[3] == Approx(none[3]).margin(1e-3));  // mean PIP of the active predictors
}
