#pragma once
/// @file bma.hpp
/// The library entry point of Bayesian model averaging for the `dpmu bma` command and the R and
/// Python packages (one implementation of the glue between a data matrix and the core): the
/// non-private analysis of the confidential data, or a differentially private release of the Gram
/// matrix of the centred data by sufficient-statistic perturbation and model averaging on it
/// (Peña & Barrientos 2024, §5; docs/bma.md). Every number in a BmaFit of a release is computed
/// from the released matrix only (post-processing), except the diagnostics named as such.

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dpmu/api/ledger.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/release.hpp"

namespace dpmu::api {

/// The release of a private analysis (docs/privacy.md): the SSP mechanism and its public inputs.
struct PrivacySettings {
  double epsilon = 0.0;               ///< > 0 (wishart: < 1)
  std::optional<double> delta;        ///< wishart only (required there), in (0, 1)
  std::string mechanism = "laplace";  ///< laplace | wishart
  std::vector<core::ColumnBounds>
      bounds;            ///< public bounds on the raw values: 1 (every column) or p + 1 (predictors, then the response)
  bool rescale = false;  ///< divide each column by its bound width before centring
  std::optional<double> ridge;                   ///< ridge r added to the diagonal of G*; unset: automatic
  int ridge_draws = 100000;                      ///< Monte Carlo draws of the automatic Laplace ridge (>= 100)
  std::optional<double> threshold;               ///< also the hard-thresholded analysis at this percentile
  std::string threshold_reference = "absolute";  ///< absolute | signed
};

/// Settings of bma(). Spellings as `dpmu bma --help`.
struct BmaSettings {
  std::string prior = "zellner-siow";  ///< zellner-siow | zellner-siow-laplace | g-prior | hyper-g | hyper-g-n | robust
                                       ///< | bic | aic | lr
  std::optional<double> g;             ///< fixed g of the g-prior (unset: n)
  double a = 3.0;                      ///< hyper-g / hyper-g-n parameter, > 2
  std::string model_prior = "beta-binomial:1,1";  ///< beta-binomial:A,B | uniform | bernoulli:W
  std::vector<std::string> always_include;        ///< predictors forced into every model
  /// Groups of predictors kept together (BAS's force.heredity; e.g. a factor's dummy columns): models
  /// with part of a group get probability 0 and the model prior is renormalised over the others.
  /// Full enumeration only (at most 24 predictors).
  std::vector<std::vector<std::string>> heredity_groups;
  /// BAS's force.heredity for interactions: pairs (term's columns, parents' columns); a model with
  /// any column of the term holds every parent column (core::BmaOptions::heredity_parents).
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> heredity_parents;
  int top_models = 10;  ///< models listed in BmaSummary::models
  bool mcmc = false;    ///< sample models by MCMC (automatic beyond 24 predictors and when n ≤ p + 1)
  double mcmc_tolerance = 0.005;
  /// Iteration bound of the MCMC search (0: core::default_mcmc_max_iterations(p), 10^5·p up to 4·10^6).
  std::uint64_t mcmc_max_iterations = 0;
  /// Distinct models the MCMC search stores, >= 1 (memory ≤ this × core::kMcmcBytesPerStoredModel;
  /// core::McmcOptions::max_models). A bound whose memory this machine lacks is refused up front.
  std::uint64_t mcmc_max_models = core::kDefaultMcmcMaxModels;
  /// Progress of the model searches (core/progress.hpp): the R and Python packages check for an
  /// interrupt in it and throw to stop the call; nothing is charged then (the charge is made after
  /// the analysis). Not kept in BmaFit::analysis.
  core::ProgressCallback progress;
  double credible_level = 0.95;  ///< of the credible intervals, in (0, 1); 0: none
  /// Reproducible simulation noise, ridge calibration and MCMC (a release with a seed is not private:
  /// BmaFit::is_private = false). Unset: secure noise for a release, and a fresh seed from the kernel
  /// CSPRNG for every random step (BmaFit::seed reports it).
  std::optional<std::uint64_t> seed;
  std::optional<PrivacySettings> privacy;  ///< nullopt: non-private (exact analysis of the data)
  /// A release's uncertainty: "noise-aware" (the default: noise_aware_analysis, sampling and privacy
  /// noise; docs/methods.md §5.12) or "plug-in" (the paper's analysis: G* + rI analysed as the data's
  /// Gram matrix). Post-processing: the same release, budget and privacy record either way. Ignored
  /// by a non-private fit.
  /// Empty: the default (noise-aware for a release, exact for a non-private fit).
  std::string uncertainty;
  /// Noise-aware: warm-up sweeps and first batch of saved draws per chain (extended until converged,
  /// up to 16×), in [20, kMaxNoiseAwareDraws].
  std::int64_t noise_aware_draws = 1000;
  LedgerOptions ledger;         ///< where a real release is charged (empty path: nowhere)
  std::string command = "bma";  ///< the front end's name, for the ledger
};

/// One of the most probable models.
struct BmaModel {
  std::vector<std::string> predictors;
  double posterior_probability = 0.0;
  double log_posterior_probability = 0.0;
  double log_prior_probability = 0.0;
  double log_marginal = 0.0;  ///< log Bayes factor against the null model (or log I for bic/aic/lr)
  double r_squared = 0.0;
  double shrinkage = 0.0;  ///< E[g/(1+g) | D, γ]
};

/// Model averaging in the original scale of the data. Vectors have one entry per predictor.
struct BmaSummary {
  Eigen::VectorXd posterior_inclusion_probability;
  Eigen::VectorXd prior_inclusion_probability;
  Eigen::VectorXd posterior_mean;    ///< model-averaged E[β_j | D] (0 in models without j)
  Eigen::VectorXd posterior_sd;      ///< exact model-averaged posterior SD (docs/bma.md "Coefficients")
  Eigen::VectorXd posterior_sd_bas;  ///< BAS's coef.bas postsd (an approximation; same mean)
  /// The intercept α with centred predictors: posterior mean ȳ in every model. Non-private only (a
  /// release publishes no means); its SDs come from the Gram matrix and are given in both paths.
  std::optional<double> intercept;
  double intercept_sd = 0.0;
  double intercept_sd_bas = 0.0;
  double credible_level = 0.0;  ///< 0: no intervals
  Eigen::VectorXd lower;        ///< equal-tailed model-averaged credible intervals of the slopes
  Eigen::VectorXd upper;
  std::optional<double> intercept_lower;  ///< non-private only (needs ȳ)
  std::optional<double> intercept_upper;
  double interval_omitted_mass = 0.0;  ///< bound on the error of the intervals' CDF
  std::uint64_t interval_models = 0;   ///< models in the intervals' mixture
  std::vector<std::string> highest_posterior_model;
  std::vector<std::string> median_probability_model;
  std::vector<std::string> best_predictive_model;
  /// E[β | D, γ] of those models (their predictions' slopes; NaN for a rank-deficient model).
  Eigen::VectorXd highest_posterior_model_coefficients;
  Eigen::VectorXd median_probability_model_coefficients;
  Eigen::VectorXd best_predictive_model_coefficients;
  double expected_model_size = 0.0;
  std::vector<BmaModel> models;  ///< the most probable, decreasing
  std::uint64_t models_evaluated = 0;
  std::uint64_t models_rank_deficient = 0;
  std::uint64_t models_exact_fit = 0;
  std::optional<core::McmcDiagnostics> mcmc;
  /// Which uncertainty the SDs, intervals and probabilities carry (docs/bma.md "Uncertainty"):
  /// "exact" (a non-private fit: sampling uncertainty of the data), "plug-in" (a release analysed as if
  /// G* + rI were the data's Gram matrix: sampling only, not the privacy noise) or "noise-aware"
  /// (averaged over the confidential G given G*: sampling and privacy noise).
  std::string uncertainty = "exact";
  /// Noise-aware only: the Markov chain of core::noise_aware_sampler (docs/methods.md §5.12). It
  /// never falls back to the plug-in analysis: when it has not converged `converged` is false,
  /// `reason` says why and no credible intervals are reported.
  struct NoiseAware {
    std::string sampler = "data-augmentation";  ///< docs/methods.md §5.12
    int chains = 0;
    int warmup = 0;               ///< sweeps per chain discarded
    int draws_per_chain = 0;      ///< saved draws per chain (extended until converged)
    int max_draws_per_chain = 0;  ///< the limit of that extension
    double max_rhat = 0.0;        ///< largest split-R̂ of the monitored quantities (Vehtari et al. 2021)
    double min_ess = 0.0;         ///< smallest bulk ESS of the monitored quantities
    bool converged = false;       ///< max_rhat ≤ 1.01 and min_ess ≥ 400
    std::string reason;           ///< why not converged (empty when converged)
    Eigen::VectorXd pip_mc_se;    ///< Monte Carlo SE of each PIP
    Eigen::VectorXd mean_mc_se;   ///< of each posterior mean (data units)
    double sigma2 = 0.0;          ///< posterior mean of the error variance (data units)
    double sigma2_mc_se = 0.0;
  };
  std::optional<NoiseAware> noise_aware;
};

/// What a release published besides the summaries (absent for a non-private fit).
struct BmaRelease {
  core::SspReleaseSettings settings;  ///< mechanism, bounds, ε, δ, n, p, rescale (public)
  core::PrivacyGuarantee privacy;
  Eigen::MatrixXd released_gram;  ///< G* (predictors, then the response), scaled columns
  Eigen::VectorXd column_scale;   ///< column j of the data = column_scale(j) × scaled column j
  double ridge_requested = 0.0;
  std::string ridge_method;
  core::RegularizedGram regularized;  ///< G* + rI actually analysed
  std::optional<core::RegularizedGram> thresholded_regularized;
  std::optional<double> threshold_value;
  int off_diagonal_entries_zeroed = 0;
  /// Diagnostic (simulation mode only: a seeded, non-private run): clamped values.
  std::optional<std::uint64_t> clamped_entries;
};

/// Non-private fits only: the statistics of the confidential data that re-analysis (reanalyse) and
/// the predictive standard errors (predict_with_se) need. Kept inside the C++ fit: the bindings never
/// convert it (R holds it behind an external pointer), and a release never fills it.
struct BmaDataStatistics {
  Eigen::MatrixXd gram;   ///< (p+1)×(p+1) centred Gram matrix of the scaled columns (response last)
  Eigen::VectorXd scale;  ///< column j of the data = scale(j) × scaled column j (p + 1)
  Eigen::VectorXd means;  ///< column means of the data (p + 1, response last)
};

/// The result of bma().
struct BmaFit {
  bool is_private = false;  ///< a release with secure noise (false for non-private and seeded runs)
  std::string response;
  std::vector<std::string> predictors;
  std::vector<std::string> always_include;
  std::size_t n = 0;
  std::string prior;        ///< canonical spelling
  std::optional<double> g;  ///< the g of the g-prior (n when unset)
  double a = 3.0;
  std::string model_prior;                ///< canonical spelling
  std::string search;                     ///< "enumeration" | "mcmc"
  std::uint64_t seed = 0;                 ///< the seed used (fresh secure when not given)
  BmaSummary posterior;                   ///< the analysis (of G, or of the released G* + rI)
  std::optional<BmaSummary> thresholded;  ///< release with PrivacySettings::threshold
  std::optional<BmaRelease> release;
  std::optional<LedgerCharge> ledger;  ///< what the release was charged (a real release with a ledger)
  /// Non-private only: column means (predictors), for predict().
  Eigen::VectorXd predictor_means;
  /// Messages for the user ("warning: ..." / "note: ..."), in order; the CLI prints them on stderr.
  std::vector<std::string> messages;
  /// The analysis settings behind `posterior` (privacy, ledger and seed cleared; fit.seed is the
  /// search's seed): what reanalyse() starts from.
  BmaSettings analysis;
  /// Non-private only (std::nullopt for every release): see BmaDataStatistics.
  std::optional<BmaDataStatistics> data_statistics;
};

/// Bayesian model averaging of y on the columns of x (n × p, names `predictors`), non-private or
/// through a release (settings.privacy). Rows are observations; no missing values (NaN is refused).
/// p ≤ core::kMaxPredictors (63); enumeration up to 24 predictors, MCMC beyond and when n ≤ p + 1
/// (then only models with n > |γ| + 1 have positive probability).
/// @throws std::invalid_argument / std::domain_error with a message naming the input (bad settings,
/// shapes, a constant response, an exact fit under a prior that gives it infinite evidence).
BmaFit bma(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
           const std::vector<std::string>& predictors, const std::string& response, const BmaSettings& settings);

/// The privacy fields of a fit as the release report types them (api::ReleaseReport):
/// {"private", "private_reason", "privacy"}; "privacy" is null for a non-private fit (its guarantee
/// with the noise scale of its mechanism otherwise; for a seeded fit "sampler" says simulation).
nlohmann::ordered_json privacy_json(const BmaFit& fit);

/// Which coefficients a prediction uses.
enum class Estimator {
  bma,  ///< model-averaged posterior mean
  hpm,  ///< highest-probability model
  mpm,  ///< median-probability model
  bpm,  ///< best predictive model
};

/// "bma" | "hpm" | "mpm" | "bpm" (upper case accepted). @throws std::invalid_argument.
Estimator parse_estimator(const std::string& name);

/// Posterior mean of the response at new points (rows of new_x, columns as fit.predictors):
/// ȳ + (x − x̄)'β with β of `estimator` (BmaSummary). Non-private fits only (a release has no means).
/// @throws std::invalid_argument for a release or a wrong number of columns.
Eigen::VectorXd predict(const BmaFit& fit, const Eigen::Ref<const Eigen::MatrixXd>& new_x,
                        Estimator estimator = Estimator::bma);

/// Re-analysis of a fit under other analysis settings (BAS's update.bas): the same statistics, a new
/// model search. For a release (fit.release) the statistics are the regularised released matrix
/// G* + rI (fit.release->regularized, and the thresholded copy when the fit has one) with the same n,
/// column scales and ridge: pure post-processing of what was released — no new noise, no ledger
/// charge, fit.release, fit.ledger, fit.is_private and privacy_json(fit) unchanged. The result equals
/// analyse() of the same matrix under `settings` (so a seeded release re-analysed equals a fresh
/// seeded release with the new settings: the noise and ridge streams do not depend on them). For a
/// non-private fit the statistics are fit.data_statistics (the exact Gram matrix of the data).
///
/// May change: prior, g, a, model_prior, always_include, top_models, credible_level, mcmc,
/// mcmc_tolerance. May not: settings.privacy must be unset (the release and its privacy settings —
/// mechanism, ε, δ, bounds, rescale, ridge, threshold — are those of `fit`); settings.ledger.path must
/// be empty (nothing is charged); settings.seed must be unset or equal fit.seed (the seed of the
/// release and of the search are kept). Shapes: the fit's p predictors and n rows.
/// @throws std::invalid_argument for those, for a fit without statistics (a default-constructed
/// BmaFit), and as bma() for bad settings; std::domain_error as analyse().
BmaFit reanalyse(const BmaFit& fit, const BmaSettings& settings);

/// Predictions with standard errors and intervals (BAS's predict.bas with se.fit = TRUE and its
/// confint.pred.bas), non-private fits only. Per model γ, with s_γ = E[g/(1+g) | D, γ] (1 for
/// bic/aic/lr), R²_γ, β̂_γ and V_γ = (X_γ'X_γ)^{-1} of the centred data, x̃ = x − x̄:
///   ŷ_γ = ȳ + s_γ x̃_γ'β̂_γ,
///   mse_γ = SSY (1 − s_γ R²_γ)/df_γ,  df_γ = n − 1 (g-priors), n − 1 − |γ| (bic, aic, lr),
///   se.fit_γ² = mse_γ (1/n + s_γ x̃_γ'V_γ x̃_γ),  se.pred_γ² = mse_γ (1 + 1/n + s_γ x̃_γ'V_γ x̃_γ)
/// (for the g-prior with fixed g, the exact posterior of the mean is ŷ_γ + se.fit_γ·t_{n−1}; for the
/// mixtures of g-priors E[s] is plugged in, as BAS does). hpm / mpm / bpm: that model's values, and
/// the interval ŷ ± t_{df_γ, (1+level)/2}·se. bma: over every model when at most 16 columns are free
/// to enter or leave (2^16 models; exact), else over the 4096 most probable (renormalised;
/// omitted_mass is the rest), or over the `top` most probable when top > 0 (BAS's predict(top = k):
/// then `fit` is their renormalised average too),
///   se.fit² = Σ_γ P(γ|D) se.fit_γ² + Σ_γ P(γ|D) (ŷ_γ − ŷ)²  (BAS's se.bma.fit; se.pred likewise),
/// and the interval is the equal-tailed interval of the mixture Σ_γ P(γ|D) (ŷ_γ + se_γ·t_{df_γ})
/// (exact quantiles; BAS draws from the same mixture and reports an HPD interval). `fit` is
/// predict(fit, new_x, estimator).
struct BmaPrediction {
  Eigen::VectorXd fit;
  Eigen::VectorXd se_fit;
  Eigen::VectorXd se_pred;
  double level = 0.0;     ///< 0: no interval
  Eigen::VectorXd lower;  ///< of the mean (confidence) or of a new observation (prediction)
  Eigen::VectorXd upper;
  double df = 0.0;  ///< df_γ of the single model (NaN for bma)
  std::uint64_t models = 0;
  double omitted_mass = 0.0;
  /// bma only, one row per model of the mixture (most probable first; BAS's Ypred, se.fit, se.pred,
  /// postprobs, df, which): ŷ_γ, se.fit_γ, se.pred_γ at each new row, P(γ|D) renormalised over the
  /// mixture, df_γ and the model's predictors.
  Eigen::MatrixXd model_fit;
  Eigen::MatrixXd model_se_fit;
  Eigen::MatrixXd model_se_pred;
  Eigen::VectorXd model_probability;
  Eigen::VectorXd model_df;
  std::vector<std::vector<std::string>> model_predictors;
};
/// @param level in (0, 1), or 0 for no interval; @param prediction interval of a new observation
/// (true) or of its mean (false). @throws std::invalid_argument for a release, a fit without data
/// statistics, a wrong number of columns, a level outside [0, 1).
BmaPrediction predict_with_se(const BmaFit& fit, const Eigen::Ref<const Eigen::MatrixXd>& new_x, Estimator estimator,
                              double level, bool prediction, std::size_t top = 0);

/// Posterior density of one coefficient (BAS's plot.coef.bas), exact under the fit's priors: a point
/// mass P(β_j = 0 | D) = 1 − PIP_j and, on the grid, the continuous part
///   Σ_{γ ∋ j} P(γ|D) Σ_i w_i t_ν(b; s_i β̂_γj, s_i S(s_i)/ν V_γjj)   (docs/bma.md "Coefficients"),
/// over the nodes (s_i, w_i) of the posterior of the shrinkage, in data units; it integrates to PIP_j
/// (minus omitted_mass at most). coefficient = −1: the intercept (non-private only: it needs ȳ; a
/// mixture of t_ν(ȳ, S(s)/(ν n)), no point mass). Post-processing only: a release's density is
/// computed from its released matrix. Over the most probable models, up to 4096.
struct CoefficientDensity {
  Eigen::VectorXd density;
  double probability_zero = 0.0;
  std::uint64_t models = 0;
  double omitted_mass = 0.0;
  /// Where the continuous part lives (for choosing a grid; computed even for an empty grid): the
  /// smallest and largest quantiles 1e-6 / 1 − 1e-6 of its t components (of weight ≥ 1e-12).
  double range_lower = 0.0;
  double range_upper = 0.0;
};
/// @throws std::invalid_argument for a coefficient out of range, the intercept of a release, a fit
/// without statistics, a noise-aware analysis (a sample of draws, not a t mixture: re-analyse the
/// release with uncertainty plug-in for the paper's densities).
CoefficientDensity coefficient_density(const BmaFit& fit, int coefficient,
                                       const Eigen::Ref<const Eigen::VectorXd>& grid);

}  // namespace dpmu::api
