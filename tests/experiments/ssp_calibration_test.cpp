// ssp_calibration (experiments/ssp_calibration.cpp; docs/methods.md §5.11): one replicate of a private cell equals
// the plug-in and noise-aware analyses of the same release rebuilt here from the engine's streams;
// bad configs are refused with the key named.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/calibration_metrics.hpp"
#include "dpmu/core/noise_aware.hpp"
#include "dpmu/core/noise_aware_sampler.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/experiments/simulation_gram.hpp"
#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "dpmu/runtime/results.hpp"
#include "dpmu/runtime/runner.hpp"
#include "run_replicate.hpp"

namespace ex = dpmu::experiments;
namespace core = dpmu::core;
namespace rt = dpmu::runtime;
namespace fs = std::filesystem;

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
                                                      {"augmented_draws", std::int64_t{50}},
                                                      {"ridge_draws", std::int64_t{300}}});
  REQUIRE_NOTHROW(e.validate(cell));
  const std::vector<double> out = dpmu_test::run_replicate(e, cell, 13, 4);
  // per method (plug-in, rejection, augmented) 3 coverages, width, PIP (2 each), Brier, P(T), 2 x 3
  // reliability tables of 10; then the augmented chain's 3 diagnostics and 4 scalars
  REQUIRE(out.size() == 3 * (4 * 2 + 2 + 2 + 60) + 3 + 4);
  const auto plug = [&](const std::string& name) { return dpmu_test::metric_values(e, cell, out, "plug_in_" + name); };
  const auto aware = [&](const std::string& name) {
    return dpmu_test::metric_values(e, cell, out, "noise_aware_" + name);
  };
  const auto scalar = [&](const std::string& name) { return dpmu_test::metric_values(e, cell, out, name)[0]; };
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
      const auto uj = static_cast<std::size_t>(j);
      CHECK(plug(std::string("cover") + (l == 0   ? "50"
                                         : l == 1 ? "80"
                                                  : "95"))[uj] ==
            (ci.lower(j) <= beta(j) && beta(j) <= ci.upper(j) ? 1.0 : 0.0));
      if (l == 2) CHECK(plug("width95")[uj] == Approx(ci.upper(j) - ci.lower(j)).epsilon(1e-9));
      if (l == 2) CHECK(plug("pip")[uj] == Approx(r.posterior_inclusion_probability(j)).margin(1e-13));
    }
    if (l == 2) {
      const auto& pip = r.posterior_inclusion_probability;
      CHECK(plug("brier")[0] == Approx(0.5 * ((pip(0) - 1) * (pip(0) - 1) + pip(1) * pip(1))).margin(1e-13));
      CHECK(plug("prob_true_model")[0] == Approx(std::exp(r.log_posterior_probability(1))).margin(1e-13));
      // reliability tables: PIP_1 (event: in T) and PIP_2 (not), the 4 model probabilities (event: model {1})
      const auto count = plug("pip_bin_count"), events = plug("pip_bin_events");
      CHECK(std::accumulate(count.begin(), count.end(), 0.0) == 2.0);
      CHECK(std::accumulate(events.begin(), events.end(), 0.0) == 1.0);
      CHECK(count[static_cast<std::size_t>(core::reliability_bin(pip(0), 10))] >= 1.0);
      CHECK(events[static_cast<std::size_t>(core::reliability_bin(pip(0), 10))] == 1.0);
      const auto mcount = plug("model_bin_count"), mevents = plug("model_bin_events");
      const auto mpred = plug("model_bin_predicted");
      CHECK(std::accumulate(mcount.begin(), mcount.end(), 0.0) == 4.0);
      CHECK(std::accumulate(mevents.begin(), mevents.end(), 0.0) == 1.0);
      CHECK(std::accumulate(mpred.begin(), mpred.end(), 0.0) == Approx(1.0).margin(1e-12));
      CHECK(mevents[static_cast<std::size_t>(core::reliability_bin(std::exp(r.log_posterior_probability(1)), 10))] ==
            1.0);
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
      CHECK(aware(std::string("cover") + (l == 0   ? "50"
                                          : l == 1 ? "80"
                                                   : "95"))[static_cast<std::size_t>(j)] ==
            (ci.lower(j) <= beta(j) && beta(j) <= ci.upper(j) ? 1.0 : 0.0));
    }
  }
  CHECK(aware("pip")[0] == na.posterior.posterior_inclusion_probability(0));
  CHECK(aware("pip")[1] == na.posterior.posterior_inclusion_probability(1));
  const auto apred = aware("pip_bin_predicted");
  CHECK(std::accumulate(apred.begin(), apred.end(), 0.0) ==
        Approx(na.posterior.posterior_inclusion_probability.sum()).margin(1e-12));
  CHECK(scalar("accepted_draws") == 40.0);
  CHECK(scalar("acceptance_rate") == Approx(40.0 / na.proposals));
  CHECK(scalar("fallback") == 0.0);
  CHECK(scalar("pip_mc_se_max") == na.pip_mc_se.maxCoeff());
  // augmented: the data-augmentation sampler on the same G*, its draws continuing the noise stream
  const Eigen::VectorXd widths = Eigen::VectorXd::Constant(3, 4.0);
  const auto aug_prior = core::default_augmented_prior(widths, prior.prior);
  core::NoiseAwareSamplerOptions so;
  so.iterations = 50;
  so.warmup = 50;
  so.max_iterations = 800;
  so.credible_level = 0.0;
  so.top_models = 0;
  so.keep_draws = true;
  const auto chain = core::noise_aware_sampler(gstar, m, 5000.0, aug_prior, mp, noise, so);
  const auto augmented = [&](const std::string& name) {
    return dpmu_test::metric_values(e, cell, out, "augmented_" + name);
  };
  CHECK(augmented("pip")[0] == chain.posterior.posterior_inclusion_probability(0));
  CHECK(augmented("pip")[1] == chain.posterior.posterior_inclusion_probability(1));
  CHECK(scalar("augmented_converged") == (chain.converged ? 1.0 : 0.0));
  CHECK(scalar("augmented_max_rhat") == chain.max_rhat);
  CHECK(scalar("augmented_min_ess") == chain.min_ess);
  // its 95 % interval: the type-7 quantiles 0.025 and 0.975 of the pooled draws of beta_j
  for (int j = 0; j < 2; ++j) {
    std::vector<double> v(chain.beta_draws.col(j).data(), chain.beta_draws.col(j).data() + chain.beta_draws.rows());
    std::sort(v.begin(), v.end());
    const auto q = [&v](double p) {
      const double h = (static_cast<double>(v.size()) - 1.0) * p;
      const auto lo = static_cast<std::size_t>(std::floor(h));
      return v[lo] + (h - std::floor(h)) * (v[std::min(lo + 1, v.size() - 1)] - v[lo]);
    };
    CHECK(augmented("width95")[static_cast<std::size_t>(j)] == Approx(q(0.975) - q(0.025)).epsilon(1e-12));
    CHECK(augmented("cover95")[static_cast<std::size_t>(j)] ==
          (q(0.025) <= beta(j) && beta(j) <= q(0.975) ? 1.0 : 0.0));
  }
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
  // offsets of the plug-in metrics by name (the layout of e.metrics)
  std::size_t at_pip = 0, at_brier = 0, at_prob = 0, offset = 0;
  for (const auto& m : e.metrics(cell)) {
    if (m.name == "plug_in_pip") at_pip = offset;
    if (m.name == "plug_in_brier") at_brier = offset;
    if (m.name == "plug_in_prob_true_model") at_prob = offset;
    offset += m.size;
  }
  REQUIRE(out.size() == offset);
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
  for (int j = 0; j < 3; ++j) CHECK(out[at_pip + static_cast<std::size_t>(j)] == Approx(pip(j)).margin(1e-12));
  // T = {1, 3}: the Brier score against (1, 0, 1) and P(T) at mask 0b101
  CHECK(out[at_brier] ==
        Approx(((pip(0) - 1) * (pip(0) - 1) + pip(1) * pip(1) + (pip(2) - 1) * (pip(2) - 1)) / 3).margin(1e-12));
  CHECK(out[at_prob] == Approx(std::exp(r.log_posterior_probability(5))).margin(1e-12));
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

TEST_CASE("ssp_calibration: the parameters of an assumed design, left at their defaults, keep the published keys",
          "[ssp_calibration]") {
  // coefficients, sigma, bounds and delta came after the calibration study of docs/bma.md was run:
  // at their defaults they are in no key, so configs/calibration.yaml draws what that run drew. The
  // key and id of its first cell as the results file of that run holds them (/cells/key, /cells/cell_id):
  ex::register_builtin_experiments();
  const auto s = rt::parse_study(
      "experiment: ssp_calibration\nmaster_seed: 30\nreplicates: 4\n"
      "grid:\n  - n: [1000]\n    p: [2]\n    true_model_size: [1]\n    mechanism: [none]\n",
      "calibration.yaml");
  REQUIRE(s.cells.size() == 1);
  CHECK(s.cells[0].key() ==
        "epsilon=inf;max_proposals=20000;mechanism=none;min_accepted=20;model_prior=beta-binomial:1,1;n=1000;"
        "noise_aware_draws=100;p=2;prior=g_prior;ridge_draws=20000;signal_z=7;true_model_size=1");
  CHECK(s.cells[0].cell_id() == 0xcb44e0ceb257f74fULL);
  CHECK(s.cells[0].get_real_list("coefficients").empty());  // still there for the experiment
  // Given, they are keyed (and the data factors among them key the data stream).
  const auto d = rt::parse_study(
      "experiment: ssp_calibration\nmaster_seed: 30\nreplicates: 4\nparameters:\n  sigma: 1\n  delta: 1e-6\n"
      "  epsilon: 0.5\ngrid:\n  - n: [1000]\n    p: [2]\n    true_model_size: [1]\n    mechanism: [wishart]\n",
      "design.yaml");
  CHECK_THAT(d.cells[0].key(), Catch::Contains("sigma=1") && Catch::Contains("delta=1e-06"));
  CHECK_THAT(d.cells[0].data_key(), Catch::Contains("sigma=1") && !Catch::Contains("delta"));
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

TEST_CASE("ssp_calibration through the engine: the reliability tables summed over replicates count every prediction",
          "[ssp_calibration][calibration_metrics]") {
  // The summaries hold per-cell means over replicates; mean × n_ok of a bin's count is the table of
  // the cell. Over R replicates of p = 3, |T| = 2: R·p PIPs (R·|T| of them events) and R·2^p model
  // probabilities (R events, predicted probabilities summing to R) per method.
  ex::register_builtin_experiments();
  const int replicates = 12;
  const std::string yaml = "experiment: ssp_calibration\nmaster_seed: 5\nreplicates: " + std::to_string(replicates) +
                           "\nblock_size: 4\nparameters:\n  p: 3\n  true_model_size: 2\n  n: 2000\n"
                           "  noise_aware_draws: 20\n  ridge_draws: 500\ngrid:\n"
                           "  - mechanism: none\n  - mechanism: laplace\n    epsilon: 1\n";
  const auto study = rt::parse_study(yaml, "calibration.yaml");
  const fs::path out = fs::temp_directory_path() / ("dpmu_ssp_calibration_" + std::to_string(::getpid()) + ".h5");
  fs::remove(out);
  rt::RunOptions ro;
  ro.out = out;
  ro.quiet = true;
  REQUIRE(rt::run_study(study, ro).complete);
  const auto r = rt::read_results(out);
  fs::remove(out);
  REQUIRE(r.errors.empty());
  REQUIRE(r.cells.size() == 2);
  const auto total = [&](std::size_t c, const std::string& name) {
    for (std::size_t m = 0; m < r.metrics.size(); ++m) {
      if (r.metrics[m].name != name) continue;
      double sum = 0.0;
      for (std::size_t k = 0; k < r.metrics[m].sizes[c]; ++k) {
        const auto s = rt::summarize_component(r, c, m, k);
        REQUIRE(s.n_ok == replicates);
        sum += s.mean * static_cast<double>(s.n_ok);
      }
      return sum;
    }
    FAIL("no metric " << name);
    return 0.0;
  };
  for (std::size_t c = 0; c < 2; ++c) {
    for (const std::string method : {"plug_in_", "noise_aware_"}) {
      INFO("cell " << c << ", " << method);
      CHECK(total(c, method + "pip_bin_count") == Approx(replicates * 3.0).epsilon(1e-12));
      CHECK(total(c, method + "pip_bin_events") == Approx(replicates * 2.0).epsilon(1e-12));
      CHECK(total(c, method + "model_bin_count") == Approx(replicates * 8.0).epsilon(1e-12));
      CHECK(total(c, method + "model_bin_events") == Approx(replicates * 1.0).epsilon(1e-12));
      CHECK(total(c, method + "model_bin_predicted") == Approx(replicates * 1.0).epsilon(1e-9));
    }
  }
}
