// ssp_calibration (experiments/ssp_calibration.cpp; docs/methods.md §5.11): one replicate of a private cell equals
// the plug-in and noise-aware analyses of the same release rebuilt here from the engine's streams;
// bad configs are refused with the key named.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/noise_aware.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/experiments/simulation_gram.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "run_replicate.hpp"

namespace ex = dpmu::experiments;
namespace core = dpmu::core;
namespace rt = dpmu::runtime;

TEST_CASE("ssp_calibration: a Laplace cell equals the plug-in and noise-aware analyses of the same release",
          "[ssp_calibration]") {
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_calibration");
  const auto cell = dpmu_test::cell_with_defaults(e, {{"n", std::int64_t{5000}},
                                                      {"p", std::int64_t{2}},
                                                      {"true_model_size", std::int64_t{1}},
                                                      {"mechanism", std::string("laplace")},
                                                      {"epsilon", 1.0},
                                                      {"noise_aware_draws", std::int64_t{40}},
                                                      {"ridge_draws", std::int64_t{300}}});
  REQUIRE_NOTHROW(e.validate(cell));
  const std::vector<double> out = dpmu_test::run_replicate(e, cell, 13, 4);
  REQUIRE(out.size() == 28);  // per method 3 coverages, width, PIP (2 each), Brier, P(T); then 4 scalars
  // The same release, rebuilt: the data set of the data stream, G* from the cell's noise stream.
  core::RngStream data(13, cell.data_id(), 4, core::StreamPurpose::data);
  const std::uint64_t k0 = data(), k1 = data();
  const auto d = ex::simulation_design(2, 1, 7.0);
  const auto sim = ex::sample_gram_matrix(d, 5000, k0, k1);
  const core::SspMechanism m{.kind = core::SspMechanismKind::laplace,
                             .p = 2,
                             .lower = -2.0,
                             .upper = 2.0,
                             .epsilon = 1.0,
                             .delta = 0.0,
                             .noise_l1_sensitivity = std::nullopt,
                             .noise_row_norm_squared = std::nullopt};
  core::RngStream noise(13, cell.cell_id(), 4, core::StreamPurpose::noise);
  const Eigen::MatrixXd gstar = core::noisy_gram_matrix(sim.gram, m, noise);
  const std::string key = "calibration_ridge:2:1:300";
  core::RngStream ridge_rng(20240521, core::fnv1a_64(key), 0, core::StreamPurpose::calibration);
  const double ridge = core::monte_carlo_regularization(m, ridge_rng, 300);
  const auto reg = core::regularize(gstar, ridge);
  const auto prior = core::parse_coefficient_prior("g_prior", 5000.0);
  const auto mp = core::parse_model_prior("beta-binomial:1,1");
  const Eigen::Vector2d beta(d.coefficient, 0.0);
  const double levels[3] = {0.5, 0.8, 0.95};
  // plug-in: bayesian_model_averaging of G* + rI at each level
  for (int l = 0; l < 3; ++l) {
    core::BmaOptions o;
    o.credible_level = levels[l];
    const auto r = core::bayesian_model_averaging(reg.matrix, 5000.0, prior, mp, o);
    for (int j = 0; j < 2; ++j) {
      const auto& ci = r.credible_intervals;
      CHECK(out[static_cast<std::size_t>(2 * l + j)] == (ci.lower(j) <= beta(j) && beta(j) <= ci.upper(j) ? 1.0 : 0.0));
      if (l == 2) CHECK(out[6 + j] == Approx(ci.upper(j) - ci.lower(j)).epsilon(1e-9));
      if (l == 2) CHECK(out[8 + j] == Approx(r.posterior_inclusion_probability(j)).margin(1e-13));
    }
    if (l == 2) {
      const auto& pip = r.posterior_inclusion_probability;
      CHECK(out[10] == Approx(0.5 * ((pip(0) - 1) * (pip(0) - 1) + pip(1) * pip(1))).margin(1e-13));
      CHECK(out[11] == Approx(std::exp(r.log_posterior_probability(1))).margin(1e-13));
    }
  }
  // noise-aware: the draws continue the cell's noise stream after G*
  core::NoiseAwareOptions opt;
  opt.draws = 40;
  opt.max_proposals = 20000;
  opt.min_accepted = 20;
  opt.bma.credible_level = 0.0;
  opt.bma.top_models = 0;
  opt.extra_levels = {0.5, 0.8, 0.95};
  const Eigen::VectorXd bound = core::gram_diagonal_bounds(5000.0, Eigen::VectorXd::Constant(3, 4.0));
  const auto na = core::noise_aware_bma(gstar, m, bound, 5000.0, prior, mp, reg.matrix, noise, opt);
  REQUIRE_FALSE(na.fallback);
  for (int l = 0; l < 3; ++l) {
    for (int j = 0; j < 2; ++j) {
      const auto& ci = na.extra_intervals[static_cast<std::size_t>(l)];
      CHECK(out[static_cast<std::size_t>(12 + 2 * l + j)] ==
            (ci.lower(j) <= beta(j) && beta(j) <= ci.upper(j) ? 1.0 : 0.0));
    }
  }
  CHECK(out[20] == na.posterior.posterior_inclusion_probability(0));
  CHECK(out[21] == na.posterior.posterior_inclusion_probability(1));
  CHECK(out[24] == 40.0);
  CHECK(out[25] == Approx(40.0 / na.proposals));
  CHECK(out[26] == 0.0);
  CHECK(out[27] == na.pip_mc_se.maxCoeff());
}

TEST_CASE("ssp_calibration: a given beta, sigma and bounds (dpmu plan-bma's design)", "[ssp_calibration]") {
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_calibration");
  const auto cell = dpmu_test::cell_with_defaults(e, {{"n", std::int64_t{3000}},
                                                      {"p", std::int64_t{3}},
                                                      {"true_model_size", std::int64_t{2}},
                                                      {"coefficients", std::vector<double>{0.5, 0.0, -0.3}},
                                                      {"sigma", 1.0},
                                                      {"bounds", std::vector<double>{-1, 2, 0, 5, -3, 3, -20, 20}},
                                                      {"mechanism", std::string("none")},
                                                      {"noise_aware_draws", std::int64_t{40}}});
  REQUIRE_NOTHROW(e.validate(cell));
  const std::vector<double> out = dpmu_test::run_replicate(e, cell, 5, 0);
  REQUIRE(out.size() == 2 * (3 * 3 + 3 + 3 + 2) + 4);
  // The non-private analysis of the data set of the data stream, rebuilt with the given design.
  core::RngStream data(5, cell.data_id(), 0, core::StreamPurpose::data);
  const std::uint64_t k0 = data(), k1 = data();
  ex::SimulationDesign d = ex::simulation_design(3, 2, 7.0);
  d.coefficients = {0.5, 0.0, -0.3};
  d.sigma = 1.0;
  d.widths = {3.0, 5.0, 6.0};
  const auto sim = ex::sample_gram_matrix(d, 3000, k0, k1);
  const auto r = core::bayesian_model_averaging(sim.gram, 3000.0, core::parse_coefficient_prior("g_prior", 3000.0),
                                                core::parse_model_prior("beta-binomial:1,1"), {});
  const Eigen::VectorXd& pip = r.posterior_inclusion_probability;
  for (int j = 0; j < 3; ++j) CHECK(out[static_cast<std::size_t>(12 + j)] == Approx(pip(j)).margin(1e-12));
  // T = {1, 3}: the Brier score against (1, 0, 1) and P(T) at mask 0b101
  CHECK(out[15] ==
        Approx(((pip(0) - 1) * (pip(0) - 1) + pip(1) * pip(1) + (pip(2) - 1) * (pip(2) - 1)) / 3).margin(1e-12));
  CHECK(out[16] == Approx(std::exp(r.log_posterior_probability(5))).margin(1e-12));
  // a wrong length, a count of non-zero entries other than |T|, and bad bounds are refused
  const auto refused = [&](std::vector<std::pair<std::string, rt::ParameterValue>> v, const std::string& key) {
    v.insert(v.end(), {{"n", std::int64_t{1000}}, {"p", std::int64_t{2}}, {"mechanism", std::string("none")}});
    CHECK_THROWS_WITH(e.validate(dpmu_test::cell_with_defaults(e, std::move(v))), Catch::Contains(key));
  };
  refused({{"true_model_size", std::int64_t{1}}, {"coefficients", std::vector<double>{1.0}}}, "coefficients");
  refused({{"true_model_size", std::int64_t{1}}, {"coefficients", std::vector<double>{1.0, 1.0}}}, "true_model_size");
  refused({{"true_model_size", std::int64_t{1}}, {"bounds", std::vector<double>{0.0, 1.0, 2.0}}}, "bounds");
  refused({{"true_model_size", std::int64_t{1}}, {"bounds", std::vector<double>{1.0, 1.0}}}, "bounds");
  refused({{"true_model_size", std::int64_t{1}}, {"delta", 0.1}}, "delta");
}

TEST_CASE("ssp_calibration: bad config values are refused naming the key", "[ssp_calibration]") {
  ex::register_builtin_experiments();
  const auto& e = rt::find_experiment("ssp_calibration");
  const auto refused = [&](std::vector<std::pair<std::string, rt::ParameterValue>> v, const std::string& key) {
    const auto cell = dpmu_test::cell_with_defaults(e, std::move(v));
    CHECK_THROWS_WITH(e.validate(cell), Catch::Contains(key));
  };
  refused({{"n", std::int64_t{1000}},
           {"p", std::int64_t{2}},
           {"true_model_size", std::int64_t{3}},
           {"mechanism", std::string("none")}},
          "true_model_size");
  refused({{"n", std::int64_t{1000}},
           {"p", std::int64_t{2}},
           {"true_model_size", std::int64_t{1}},
           {"mechanism", std::string("wishart")},
           {"epsilon", 1.0}},
          "epsilon");
  refused({{"n", std::int64_t{1000}},
           {"p", std::int64_t{2}},
           {"true_model_size", std::int64_t{1}},
           {"mechanism", std::string("laplace")}},
          "epsilon");
}
