// Bounded model searches (docs/bma.md "Cost of the model search"): the MCMC table of stored models
// is capped without changing the chain or its averages, the iteration bound, and the progress
// callback (core/progress.hpp) of the enumeration and of MCMC, including a throw that stops them.
#include <catch2/catch.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bma_test_data.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/progress.hpp"
#include "dpmu/core/random.hpp"

using namespace dpmu::core;
using dpmu::test::centred_gram;
using dpmu::test::simulate;

namespace {

struct Stop : std::runtime_error {
  Stop() : std::runtime_error("stop") {}
};

/// Every report of a search, in order.
struct Recorder {
  std::vector<Progress> reports;
  std::vector<std::string> phases;
  ProgressCallback callback() {
    return [this](const Progress& p) {
      reports.push_back(p);
      phases.emplace_back(p.phase);
    };
  }
};

}  // namespace

TEST_CASE("MCMC: a table capped at 16 models gives the same chain and averages, storing at most 16", "[bma][mcmc]") {
  // p = 14 noise-heavy predictors: the chain visits hundreds of distinct models.
  const Eigen::MatrixXd d = simulate(80, 14, 7, {0.3, 0.0, 0.2});
  const Eigen::MatrixXd g = centred_gram(d);
  const auto cp = parse_coefficient_prior("zellner-siow");
  const auto mp = parse_model_prior("beta-binomial:1,1");
  McmcOptions opt;
  opt.max_iterations = 20000;
  opt.min_iterations = 20000;
  McmcDiagnostics full_diag;
  RngStream rng1(5, 0, 0, StreamPurpose::noise);
  const BmaResult full = bayesian_model_averaging_mcmc(g, 80, cp, mp, rng1, opt, &full_diag);
  REQUIRE(full_diag.models_visited > 100);
  CHECK(full_diag.evaluations_unstored == 0);
  McmcOptions capped = opt;
  capped.max_models = 16;
  McmcDiagnostics cap_diag;
  RngStream rng2(5, 0, 0, StreamPurpose::noise);
  const BmaResult cap = bayesian_model_averaging_mcmc(g, 80, cp, mp, rng2, capped, &cap_diag);
  CHECK(cap_diag.models_visited <= 16);
  CHECK(cap_diag.evaluations_unstored > 0);
  // Same chain: the same iterations, acceptances and inclusion counts; the same moments up to the
  // order of summation.
  CHECK(cap_diag.iterations == full_diag.iterations);
  CHECK(cap_diag.acceptance_rate == full_diag.acceptance_rate);
  for (int j = 0; j < 14; ++j) {
    CHECK(cap.posterior_inclusion_probability(j) == full.posterior_inclusion_probability(j));
    CHECK(cap.model_averaged_coefficients(j) == Approx(full.model_averaged_coefficients(j)).margin(1e-12));
    CHECK(cap.posterior_sd(j) == Approx(full.posterior_sd(j)).margin(1e-12));
  }
  CHECK(cap.intercept_sd == Approx(full.intercept_sd).epsilon(1e-12));
  // The listed models are stored ones (at most 16, the first 16 distinct models of the chain);
  // the iterations spent at unstored models count as omitted mass of the intervals.
  CHECK(cap.models_evaluated + cap.models_rank_deficient <= 16);
  CHECK(cap.credible_intervals.omitted_mass >= full.credible_intervals.omitted_mass);
  CHECK_THROWS_AS(
      [&] {
        McmcOptions zero = opt;
        zero.max_models = 0;
        RngStream r(5, 0, 0, StreamPurpose::noise);
        return bayesian_model_averaging_mcmc(g, 80, cp, mp, r, zero);
      }(),
      std::domain_error);
}

TEST_CASE("MCMC: the iteration bound is stated and kept", "[bma][mcmc]") {
  CHECK(default_mcmc_max_iterations(10) == 1000000);
  CHECK(default_mcmc_max_iterations(40) == 4000000);
  CHECK(default_mcmc_max_iterations(63) == 4000000);  // was 10^5·p = 6.3·10^6
  const Eigen::MatrixXd g = centred_gram(simulate(60, 6, 3, {0.5}));
  McmcOptions opt;
  opt.max_iterations = 1500;
  opt.tolerance = 1e-12;  // never met: the bound stops the chain
  McmcDiagnostics diag;
  RngStream rng(2, 0, 0, StreamPurpose::noise);
  bayesian_model_averaging_mcmc(g, 60, parse_coefficient_prior("g-prior"), ModelPrior{}, rng, opt, &diag);
  CHECK(diag.iterations == 1500);
  CHECK(diag.max_iterations == 1500);
  CHECK_FALSE(diag.converged);
}

TEST_CASE("Progress: the enumeration reports models walked of 2^f, in order, ending at the total", "[bma][progress]") {
  const Eigen::MatrixXd g = centred_gram(simulate(100, 12, 4, {0.4, 0.2}));
  Recorder rec;
  BmaOptions opt;
  opt.progress = rec.callback();
  opt.always_included = 1;  // f = 11 free predictors
  const BmaResult with = bayesian_model_averaging(g, 100, parse_coefficient_prior("zellner-siow"), ModelPrior{}, opt);
  REQUIRE(rec.reports.size() >= 3);
  for (std::size_t i = 0; i < rec.reports.size(); ++i) {
    CHECK(rec.phases[i] == "enumeration");
    CHECK(rec.reports[i].total == 2048);
    if (i > 0) CHECK(rec.reports[i].done >= rec.reports[i - 1].done);
  }
  CHECK(rec.reports.front().done == 0);
  CHECK(rec.reports.back().done == 2048);
  // Reports only: the answer is the same without them.
  opt.progress = nullptr;
  const BmaResult without =
      bayesian_model_averaging(g, 100, parse_coefficient_prior("zellner-siow"), ModelPrior{}, opt);
  CHECK(with.posterior_inclusion_probability == without.posterior_inclusion_probability);
}

TEST_CASE("Progress: MCMC reports iterations of the bound, then the summary of visited models", "[bma][progress]") {
  const Eigen::MatrixXd g = centred_gram(simulate(100, 10, 6, {0.4, 0.2}));
  Recorder rec;
  McmcOptions opt;
  opt.max_iterations = 5000;
  opt.min_iterations = 5000;
  opt.progress = rec.callback();
  McmcDiagnostics diag;
  RngStream rng(8, 0, 0, StreamPurpose::noise);
  bayesian_model_averaging_mcmc(g, 100, parse_coefficient_prior("zellner-siow"), ModelPrior{}, rng, opt, &diag);
  std::size_t i = 0;
  std::uint64_t last = 0;
  for (; i < rec.reports.size() && rec.phases[i] == "mcmc"; ++i) {
    CHECK(rec.reports[i].total == 5000);
    CHECK(rec.reports[i].done >= last);
    last = rec.reports[i].done;
  }
  CHECK(i >= 5);  // the start, every 1024 iterations, the end
  CHECK(last == diag.iterations);
  REQUIRE(i < rec.reports.size());
  for (; i < rec.reports.size(); ++i) CHECK(rec.phases[i] == "mcmc-summary");
  CHECK(rec.reports.back().done == rec.reports.back().total);
  CHECK(rec.reports.back().total <= diag.models_visited);
}

TEST_CASE("Progress: a throw from the callback stops the search at once", "[bma][progress]") {
  const Eigen::MatrixXd g = centred_gram(simulate(100, 14, 9, {0.4}));
  int calls = 0;
  const ProgressCallback stop_at_third = [&calls](const Progress&) {
    if (++calls == 3) throw Stop();
  };
  BmaOptions eopt;
  eopt.progress = stop_at_third;
  CHECK_THROWS_AS(bayesian_model_averaging(g, 100, parse_coefficient_prior("zellner-siow"), ModelPrior{}, eopt), Stop);
  CHECK(calls == 3);
  calls = 0;
  McmcOptions mopt;
  mopt.progress = stop_at_third;
  RngStream rng(1, 0, 0, StreamPurpose::noise);
  CHECK_THROWS_AS(
      bayesian_model_averaging_mcmc(g, 100, parse_coefficient_prior("zellner-siow"), ModelPrior{}, rng, mopt), Stop);
  CHECK(calls == 3);
}
