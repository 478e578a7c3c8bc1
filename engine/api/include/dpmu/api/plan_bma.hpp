#pragma once
/// @file plan_bma.hpp
/// Planning a private model-averaging release before any budget is spent (docs/bma.md "Planning a
/// release: dpmu plan-bma"): the coverage of the credible intervals of each β_j, the Brier score of
/// the PIPs, the mean PIPs and P(true model) of the plug-in and the noise-aware analysis, with
/// their Monte Carlo SEs, simulated from public quantities only (n, the assumed β and σ, the public
/// bounds, ε, δ, the mechanism and the priors) by the experiment ssp_calibration
/// (docs/methods.md §5.11). The one implementation behind `dpmu plan-bma` and the R and Python
/// plan_bma().

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dpmu/core/progress.hpp"

namespace dpmu::api {

/// Settings of plan_bma(). Spellings as `dpmu plan-bma --help`; errors name the option as
/// "--option" (the packages rename them to their arguments).
struct PlanBmaRequest {
  std::int64_t n = 0;                               ///< rows (public)
  std::optional<std::int64_t> p;                    ///< predictors (set by coefficients when they are given)
  std::optional<std::int64_t> true_model_size;      ///< built-in design: |T| (default 0)
  std::optional<double> signal_z;                   ///< built-in design: z (default 7)
  std::optional<std::vector<double>> coefficients;  ///< the assumed β (length p); unset: the built-in design
  std::optional<double> sigma;                      ///< the assumed error SD (> 0); unset: sqrt(8/3)/z
  std::optional<std::vector<double>> bounds;  ///< l,u or l1,u1,...,l(p+1),u(p+1) as `dpmu bma --bounds`; unset: (-2, 2)
  std::string mechanism = "laplace";          ///< laplace | wishart
  double epsilon = 0.0;                       ///< > 0 (wishart: < 1)
  std::optional<double> delta;                ///< wishart only, in (0, 1); unset: 1/n
  std::string prior = "g_prior";              ///< coefficient prior (as ssp_calibration's)
  std::string model_prior = "beta-binomial:1,1";  ///< prior over models
  std::int64_t noise_aware_draws = 100;  ///< noise-aware: the sampler's warm-up and first batch per chain, per release
  std::uint64_t replicates = 200;        ///< simulated releases, 10 to 100000
  std::uint64_t seed = 1;                ///< of the simulation
  std::string uncertainty = "both";      ///< reported analyses: both | plug-in | noise-aware
  /// Called before each simulated release ({r, replicates, "plan-replicates"}): the R and Python
  /// packages check for an interrupt there (it may throw to stop the plan; nothing is spent).
  core::ProgressCallback progress;
};

/// The plan as the JSON `dpmu plan-bma` prints: "private": false, the simulation (experiment,
/// replicates, seed), the settings, the assumed truth (β, σ, T), and for each reported analysis
/// ("plug_in", "noise_aware") the coverage of the 50/80/95 % intervals, the 95 % width, the PIPs
/// (vectors over β_j), the Brier score, P(true model) and the reliability tables of the PIPs and of
/// the model probabilities (mean counts per replicate), each {mean, mc_se} (vectors also with their
/// component "labels": beta1..betap, or the probability bins); then the noise-aware diagnostics. Reads no data, touches
/// no ledger: not a release.
/// @throws std::invalid_argument naming the option ("--coefficients: ...") before any simulation;
/// std::runtime_error if a replicate fails.
nlohmann::ordered_json plan_bma(const PlanBmaRequest& request);

}  // namespace dpmu::api
