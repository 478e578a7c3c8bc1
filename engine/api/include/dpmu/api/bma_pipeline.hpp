#pragma once
/// @file bma_pipeline.hpp
/// The steps of api::bma() (dpmu/api/bma.hpp), exposed for the `dpmu bma` command, which adds its
/// report, ledger, confidence sets and synthetic data around them: one implementation of each step.

#include <Eigen/Dense>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dpmu/api/bma.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/ssp.hpp"

namespace dpmu::api {

/// The names of the predictors in a model, in predictor order.
std::vector<std::string> model_names(core::ModelMask m, const std::vector<std::string>& names);

/// The centred Gram matrix of the confidential data (non-private analyses) and the column scales.
/// Scale invariance: PIPs, Bayes factors and R² do not depend on the scale of any column, so each
/// column is divided by the power of two 2^e with max |x_j| in [2^(e−1), 2^e) before the Gram matrix
/// (exact: no rounding), then centred (twice: the second pass removes the rounding of the first
/// mean) and scaled again by a power of two, and the slopes are multiplied back (summarise). Columns
/// of magnitude 1e-300 or 1e300 then give the answers of unit-scale ones instead of overflowing or
/// underflowing in G, and a column such as x + 1e12 the answers of x (to about 1e-14 of R²). A
/// constant column is centred to exactly 0. @throws std::invalid_argument for a constant response.
struct NonPrivateGram {
  Eigen::MatrixXd gram;   ///< of the centred, scaled columns
  Eigen::VectorXd scale;  ///< column j of the data minus its mean = scale(j) × column j of the scaled data
  Eigen::VectorXd means;  ///< column means of the data (response last)
};
NonPrivateGram non_private_gram(const Eigen::MatrixXd& raw, const std::vector<std::string>& columns);

/// How models are searched.
struct Search {
  bool mcmc = false;
  double tolerance = 0.005;
  std::uint64_t seed = 1;
  std::uint64_t stream = 0;
  std::uint64_t max_iterations = 0;                        ///< MCMC iteration bound (0: the core's default)
  std::uint64_t max_models = core::kDefaultMcmcMaxModels;  ///< MCMC table of stored models
  core::ProgressCallback progress;                         ///< reports of the search (may throw to stop it)
};

/// Up-front checks of an MCMC search's bounds for p predictors (docs/bma.md "Cost of the model
/// search"): max_models >= 1, and the memory they imply (max_models stored models, the stopping
/// rule's snapshots) must fit in this machine's memory. `models_option` / `iterations_option` name
/// the options in the message (e.g. "--mcmc-max-models" or "mcmc_max_models").
/// @throws std::invalid_argument naming the option.
void check_search_bounds(const Search& search, std::size_t p, const std::string& models_option,
                         const std::string& iterations_option);

/// The parsed priors and options of an analysis.
struct AnalysisPlan {
  core::CoefficientPrior prior;
  core::ModelPrior model_prior;
  core::BmaOptions options;
};

/// Enumeration or MCMC (stream "bma/mcmc" of search.seed). @throws as the core functions.
core::BmaResult run_search(const Eigen::MatrixXd& gram, double n, const core::CoefficientPrior& prior,
                           const core::ModelPrior& mp, const core::BmaOptions& opt, const Search& search,
                           core::McmcDiagnostics* diag);

/// A core result in the units of the data (slopes × scale(y)/scale(j)); `response_mean` is the
/// intercept's posterior mean (nullopt for a release).
BmaSummary summarise(const core::BmaResult& r, const Eigen::VectorXd& scale, const std::vector<std::string>& names,
                     std::optional<double> response_mean);

/// run_search + summarise, with an exact fit under a prior that gives it infinite evidence
/// explained in terms of the predictors (std::domain_error; docs/decisions.md).
BmaSummary analyse(const Eigen::MatrixXd& gram, double n, const AnalysisPlan& plan, const Eigen::VectorXd& scale,
                   const Search& search, const std::vector<std::string>& names, const std::string& response,
                   bool release, std::optional<double> response_mean);

/// The largest number of draws of the noise-aware analysis (per release; the plan's and the study's
/// too): its work and memory grow linearly in it, and 10^5 gives Monte Carlo errors far below the
/// posterior's own spread.
inline constexpr std::int64_t kMaxNoiseAwareDraws = 100000;

/// The noise-aware draws option, checked in 64 bits before any work: an integer in
/// [20, kMaxNoiseAwareDraws]. @param option the option's name in the caller's words
/// ("--noise-aware-draws", "noise_aware_draws"). @throws std::invalid_argument naming it.
void check_noise_aware_draws(std::int64_t draws, const std::string& option);

/// The most predictors of the noise-aware analysis (the sampler's limit; cost grows as 2^p up to
/// p = 10, then linearly in p per single-site sweep: docs/performance.md).
inline constexpr int kMaxNoiseAwarePredictors = 30;

/// The noise-aware analysis's restrictions, checked before any budget is spent: prior zellner-siow
/// or g-prior, no forced or grouped predictors, no MCMC search option, p ≤ kMaxNoiseAwarePredictors,
/// n > p + 2. `front` "cli" names the command's options, anything else the packages' arguments.
/// @throws std::invalid_argument saying what to change (or to ask for the plug-in analysis).
void check_noise_aware_plan(const AnalysisPlan& plan, int p, double n, bool mcmc, const std::string& front);

/// The noise-aware analysis of a release (core::noise_aware_sampler; docs/methods.md §5.12): a
/// Markov chain over the confidential Gram matrix, the model and Zellner's g given G* (the
/// release's exact noise law, release.mechanism(); priors on the design and σ² from the public bound
/// widths, core::default_augmented_prior), 4 chains from the stream "bma/noise-aware" of `seed`,
/// `draws` warm-up sweeps and saved draws per chain, extended until every R̂ ≤ 1.01 and ESS ≥ 400
/// (at most 16×). Never the plug-in answer: a chain that has not converged reports no intervals,
/// noise_aware->converged = false and a warning in `messages`. Only released statistics and public
/// settings are used: post-processing. @throws std::invalid_argument as check_noise_aware_draws and
/// check_noise_aware_plan; std::domain_error for an exact fit in a draw.
BmaSummary noise_aware_analysis(const BmaRelease& rel, double n, const AnalysisPlan& plan, const Search& search,
                                std::int64_t draws, const std::vector<std::string>& names, const std::string& response,
                                std::vector<std::string>& messages);

/// Messages naming the constant and collinear predictors (non-private analyses only: in a release
/// the collinearity of the columns is confidential).
std::vector<std::string> rank_deficient_messages(const std::vector<core::RankDeficientColumn>& deficient,
                                                 const std::vector<std::string>& names);

/// Messages counting excluded models and exact fits (in a release, of the released matrix).
std::vector<std::string> excluded_model_messages(const BmaSummary& r, bool release);

}  // namespace dpmu::api

namespace dpmu::runtime {
class SecureRng;
}

namespace dpmu::api {

/// Public-input checks of a release before any data are touched: the bound widths must keep the
/// Gram matrix, its sensitivity and the noise within the range of a double (before constructing the
/// SspRelease), and so must the noise of the constructed release. @throws std::invalid_argument
/// naming --bounds / --epsilon.
void check_release_bounds(const core::SspReleaseSettings& rs);
void check_release_noise(const core::SspRelease& release, const core::SspReleaseSettings& rs);

/// The SSP release of `rs`, checked (check_release_bounds, then the release type's own checks,
/// then check_release_noise): the one place a front end gets an SspRelease from.
core::SspRelease ssp_release(const core::SspReleaseSettings& rs);

/// Warnings a real (secure) release prints: the Wishart sampler is floating point, and a δ above
/// min(1/n², 1e-5). Empty for Laplace with a small δ, and for seeded runs.
std::vector<std::string> release_warnings(const core::SspReleaseSettings& rs, bool secure);

/// The ridge and threshold choices of a release.
struct ReleaseOptions {
  std::optional<double> ridge;  ///< unset: automatic (Monte Carlo for Laplace, analytic for Wishart)
  int ridge_draws = 100000;
  std::optional<double> threshold;
  core::ThresholdReference threshold_reference = core::ThresholdReference::absolute;
  core::ProgressCallback progress;  ///< reports of the Monte Carlo ridge calibration (may throw to stop it)
};

/// Release G* of the raw data (n × (p+1), response last) with `release`, then regularise it (and the
/// hard-thresholded copy): BmaRelease without summaries. Noise from `secure_rng` when it is given
/// (a real release), else from the stream "bma/noise" of `seed`; the ridge calibration from
/// "bma/ridge". The noise is drawn through charge.draw_and_commit(data_bytes): the release is charged
/// before anything is computed from it (docs/privacy.md "Charge first, then speak"). Messages (ridge
/// fallbacks, simulation-mode clamping) are appended to `messages`, for the caller to show after the
/// charge.
BmaRelease release_gram(const Eigen::MatrixXd& raw, const core::SspRelease& release, const ReleaseOptions& options,
                        std::uint64_t seed, runtime::SecureRng* secure_rng, ReleaseCharge& charge,
                        std::string_view data_bytes, std::vector<std::string>& messages);

}  // namespace dpmu::api
