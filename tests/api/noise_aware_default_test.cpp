// The noise-aware analysis as the default of a release (docs/bma.md "Uncertainty", docs/methods.md
// §5.12): api::bma of a release runs the data-augmentation sampler unless the plug-in analysis is
// asked for; it never falls back; at a vanishing noise it equals the non-private BMA within Monte
// Carlo error; at a swamping noise a pure-noise predictor's PIP stays near its prior inclusion
// probability; its restrictions are refused before any budget is spent.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../runtime/temp_dir.hpp"
#include "dpmu/api/bma.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/runtime/ledger.hpp"

using namespace dpmu;
using Catch::Matchers::Contains;

namespace {

struct Data {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

// x_j ~ U(-1, 1) (p of them), y = 1·x1 + 0.3·x2 + N(0, 0.5²): x3.. are pure noise.
Data simulate(int n, int p, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> e(0.0, 0.5);
  Data d;
  d.x.resize(n, p);
  d.y.resize(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < p; ++j) d.x(i, j) = u(gen);
    d.y(i) = d.x(i, 0) + 0.3 * d.x(i, 1) + e(gen);
  }
  return d;
}

const std::vector<std::string> kNames{"x1", "x2", "x3"};

api::BmaSettings release_settings(double epsilon, std::uint64_t seed) {
  api::BmaSettings s;
  s.seed = seed;
  api::PrivacySettings ps;
  ps.epsilon = epsilon;
  ps.bounds = {{-1.0, 1.0}, {-1.0, 1.0}, {-1.0, 1.0}, {-4.0, 4.0}};
  ps.ridge_draws = 200;
  s.privacy = ps;
  return s;
}

}  // namespace

TEST_CASE("api::bma: a release is noise-aware by default and at epsilon 1e6 it equals the non-private BMA",
          "[api][bma][noise-aware]") {
  const Data d = simulate(2000, 3, 11);
  api::BmaSettings np;
  const api::BmaFit exact = api::bma(d.x, d.y, kNames, "y", np);
  REQUIRE(exact.posterior.uncertainty == "exact");

  const api::BmaFit fit = api::bma(d.x, d.y, kNames, "y", release_settings(1e6, 5));
  REQUIRE(fit.posterior.uncertainty == "noise-aware");
  REQUIRE(fit.posterior.noise_aware);
  const auto& na = *fit.posterior.noise_aware;
  CHECK(na.sampler == "data-augmentation");
  CHECK(na.chains == 4);
  CHECK(na.converged == (na.max_rhat <= 1.01 && na.min_ess >= 400.0));
  REQUIRE(na.converged);
  CHECK(na.reason.empty());
  CHECK(fit.posterior.credible_level == 0.95);
  // The two posteriors differ only in the proper priors on σ² and the design (§5.12), negligible at
  // n = 2000: agreement within 4 Monte Carlo SEs plus 0.01 (PIPs) / 1 % (means).
  for (int j = 0; j < 3; ++j) {
    INFO("predictor " << kNames[static_cast<std::size_t>(j)]);
    const double pip = fit.posterior.posterior_inclusion_probability(j);
    CHECK(std::abs(pip - exact.posterior.posterior_inclusion_probability(j)) <= 4.0 * na.pip_mc_se(j) + 0.01);
    const double m = fit.posterior.posterior_mean(j);
    const double m0 = exact.posterior.posterior_mean(j);
    CHECK(std::abs(m - m0) <= 4.0 * na.mean_mc_se(j) + 0.01 * std::abs(m0) + 1e-3);
    // the interval of the signal predictors covers the non-private posterior mean
    if (j < 2) {
      CHECK(fit.posterior.lower(j) < m0);
      CHECK(m0 < fit.posterior.upper(j));
    }
  }
  // the error variance: 0.25 by construction
  CHECK(na.sigma2 == Approx(0.25).epsilon(0.1));
  // A density of the t mixture of G* + rI would be the plug-in posterior under the noise-aware name
  // (it was drawn before, with a mass different from the PIP): refused, and the plug-in
  // re-analysis of the same release draws it.
  const Eigen::VectorXd grid = Eigen::VectorXd::LinSpaced(11, -1.0, 2.0);
  CHECK_THROWS_WITH(api::coefficient_density(fit, 0, grid), Contains("uncertainty plug-in"));
  api::BmaSettings plug = fit.analysis;
  plug.uncertainty = "plug-in";
  const api::BmaFit again = api::reanalyse(fit, plug);
  CHECK(again.posterior.uncertainty == "plug-in");
  CHECK_NOTHROW(api::coefficient_density(again, 0, grid));
}

TEST_CASE("api::bma: at a swamping noise a pure-noise predictor's PIP stays near its prior probability",
          "[api][bma][noise-aware]") {
  // n = 300 at epsilon 0.1: the Laplace noise on X'y (scale ~ 10^3 in the units of G) dwarfs the
  // statistics (|X'y_3| ~ 10), so the release says little about the null predictor x3, whose PIP
  // must stay near its prior 1/2 (beta-binomial(1,1)) instead of being pushed to 0 or 1 as the
  // plug-in analysis does. Five releases; every one in [0.15, 0.85].
  const Data d = simulate(300, 3, 12);
  int plug_in_extreme = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    INFO("seed " << seed);
    api::BmaSettings s = release_settings(0.1, seed);
    const api::BmaFit fit = api::bma(d.x, d.y, kNames, "y", s);
    REQUIRE(fit.posterior.noise_aware);
    CHECK(fit.posterior.uncertainty == "noise-aware");
    CHECK(fit.posterior.prior_inclusion_probability(2) == Approx(0.5));
    const double pip = fit.posterior.posterior_inclusion_probability(2);
    CHECK(pip > 0.15);
    CHECK(pip < 0.85);
    s.uncertainty = "plug-in";
    const api::BmaFit plug = api::bma(d.x, d.y, kNames, "y", s);
    CHECK(plug.posterior.uncertainty == "plug-in");
    CHECK_FALSE(plug.posterior.noise_aware);
    const double q = plug.posterior.posterior_inclusion_probability(2);
    if (q < 0.15 || q > 0.85) ++plug_in_extreme;
  }
  // what the default fixes: the plug-in analysis of the same releases is confidently wrong
  CHECK(plug_in_extreme >= 1);
}

TEST_CASE("api::bma: the noise-aware default's restrictions are refused before any budget is spent",
          "[api][bma][noise-aware]") {
  const Data d = simulate(200, 3, 13);
  dpmu::test::TempDir dir("dpmu_noise_aware_default");
  const std::string ledger = dir / "l.jsonl";
  api::ledger_init(ledger, "10");
  api::BmaSettings s = release_settings(1.0, 1);
  s.seed.reset();  // a real release, charged to the ledger
  s.ledger.path = ledger;
  s.prior = "hyper-g";
  CHECK_THROWS_WITH(api::bma(d.x, d.y, kNames, "y", s),
                    Contains("zellner-siow or g-prior") && Contains("uncertainty = 'plug-in'"));
  s.prior = "zellner-siow";
  s.always_include = {"x1"};
  CHECK_THROWS_WITH(api::bma(d.x, d.y, kNames, "y", s), Contains("forced into every model"));
  s.always_include.clear();
  s.mcmc = true;
  CHECK_THROWS_WITH(api::bma(d.x, d.y, kNames, "y", s), Contains("MCMC"));
  s.mcmc = false;
  CHECK(runtime::read_ledger(ledger).entries.empty());
  // asked for explicitly, the plug-in analysis takes any prior
  s.prior = "hyper-g";
  s.uncertainty = "plug-in";
  const api::BmaFit fit = api::bma(d.x, d.y, kNames, "y", s);
  CHECK(fit.posterior.uncertainty == "plug-in");
  CHECK(runtime::read_ledger(ledger).entries.size() == 1);
  // n > p + 2
  const Data tiny = simulate(5, 3, 14);
  s.prior = "zellner-siow";
  s.uncertainty.clear();
  CHECK_THROWS_WITH(api::bma(tiny.x, tiny.y, kNames, "y", s), Contains("n > p + 2"));
  CHECK(runtime::read_ledger(ledger).entries.size() == 1);
}

TEST_CASE("api::bma: a noise-aware chain that has not converged says so and reports no intervals",
          "[api][bma][noise-aware]") {
  // 20 warm-up sweeps and at most 320 saved draws per chain at p = 3: intervals exist exactly when
  // the chain converged, and a non-converged answer carries its reason and a warning.
  const Data d = simulate(300, 3, 15);
  bool seen_not_converged = false;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    api::BmaSettings s = release_settings(0.3, seed);
    s.noise_aware_draws = 20;
    const api::BmaFit fit = api::bma(d.x, d.y, kNames, "y", s);
    REQUIRE(fit.posterior.noise_aware);
    const auto& na = *fit.posterior.noise_aware;
    CHECK(na.converged == (na.max_rhat <= 1.01 && na.min_ess >= 400.0));
    CHECK(na.converged == (fit.posterior.credible_level > 0.0));
    CHECK(na.converged == na.reason.empty());
    bool warned = false;
    for (const auto& m : fit.messages) warned = warned || m.find("has not converged") != std::string::npos;
    CHECK(warned == !na.converged);
    if (!na.converged) seen_not_converged = true;
  }
  CHECK(seen_not_converged);
}
