#pragma once
/// @file bma.hpp
/// Bayesian model averaging and selection from a Gram matrix (Peña & Barrientos 2024, JMLR 25,
/// §5 and §5.5 "plug-in" inference; docs/methods.md §1, §2.5): full enumeration of the 2^p models by
/// a Gray-code walk with sweep-operator updates, posterior model probabilities, posterior
/// inclusion probabilities, model-averaged coefficients, highest-probability and
/// median-probability models; posterior SDs, credible intervals and the intercept's posterior
/// (docs/bma.md "Coefficients"); at most kMaxPredictors predictors (a model is a 64-bit mask).

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/model_space.hpp"
#include "dpmu/core/progress.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/t_mixture.hpp"

namespace dpmu::core {

/// The most predictors a model space can have: a model is a ModelMask (64 bits) and the samplers
/// shift 1 by up to p, so p ≤ 63. Full enumeration is limited further (p ≤ 30; ≤ 24 keeping all
/// 2^p weights); beyond that, MCMC (bayesian_model_averaging_mcmc).
inline constexpr int kMaxPredictors = 63;

/// Options of bayesian_model_averaging.
struct BmaOptions {
  ModelMask always_included = 0;  ///< predictors forced into every model; the model prior is over the others
  /// Groups of predictors kept together (BAS's force.heredity: a factor's dummy columns): a model
  /// holding some but not all of a group has probability 0, and the model prior is renormalised
  /// over the admissible models (prior inclusion probabilities included). Enumeration only.
  std::vector<ModelMask> heredity_groups;
  /// BAS's force.heredity for interactions: a model holding any column of `term` must hold every
  /// column of `parents` (the term's lower-order terms, e.g. the main effects of an interaction);
  /// other models have probability 0 and the model prior is renormalised as for heredity_groups.
  struct HeredityParents {
    ModelMask term = 0;
    ModelMask parents = 0;
  };
  std::vector<HeredityParents> heredity_parents;
  int p0 = 1;                             ///< common columns removed by centring (1 = intercept)
  int top_models = 10;                    ///< how many of the most probable models to report
  bool keep_all_models = true;            ///< fill BmaResult::log_posterior_probability (2^p doubles)
  double collinearity_tolerance = 1e-10;  ///< pivot ≤ tol·G_jj marks a rank-deficient model
  int refresh_interval = 1024;            ///< rebuild the sweep state from G every this many models
  /// Level of the model-averaged credible intervals in (0, 1); 0: none (BmaResult::credible_intervals).
  double credible_level = 0.95;
  /// The intervals and the best predictive model use the most probable models up to this
  /// cumulative posterior probability, at most interval_max_models of them; the rest is
  /// CredibleIntervals::omitted_mass, a bound on the error of the interval's CDF.
  double interval_mass = 1.0 - 1e-7;
  int interval_max_models = 4096;
  /// Pruning of negligible models (docs/bma.md "Pruning negligible models"); +inf (the default):
  /// every model is integrated. For the mixtures of g-priors with the exact evidence (Zellner–Siow,
  /// hyper-g, hyper-g/n, robust: one quadrature per model) a model is skipped when an upper bound
  /// of its log posterior weight, log π(γ) + sup_g log L_γ(g) ≥ log π(γ) + log B_γ0 (the evidence
  /// of a proper mixture is an average of the g-prior likelihood L_γ(g)), is below the largest
  /// weight found so far minus this margin. Skipped models get weight 0 (−inf in
  /// log_posterior_probability; counted in BmaResult::models_negligible). Their total posterior
  /// share is below 2^p e^{−margin}: model and inclusion probabilities move by at most that much,
  /// means by at most that share of the skipped models' coefficient scale (SDs by a little more:
  /// a variance moves by about the share times the squared spread). CredibleIntervals'
  /// omitted_mass does not include this share. negligible_log_odds_for() gives the margin for a
  /// stated share. Ignored for the other priors.
  double negligible_log_odds = std::numeric_limits<double>::infinity();
  /// Reports (progress.hpp), phase "enumeration": models walked of 2^f (f free predictors), about
  /// every kProgressInterval models. A throw from it stops the enumeration.
  ProgressCallback progress;
};

/// The pruning margin (BmaOptions::negligible_log_odds) whose error bound 2^p e^{−margin} equals
/// `relative_error`: p log 2 − log(relative_error). @throws std::domain_error unless
/// relative_error ∈ (0, 1) and p ≥ 0.
inline double negligible_log_odds_for(int p, double relative_error) {
  check_open_interval("negligible_log_odds_for", "relative_error", relative_error, 0.0, 1.0);
  if (p < 0) throw_domain("negligible_log_odds_for", "p", p, ">= 0");
  return p * std::numbers::ln2 - std::log(relative_error);
}

/// Model-averaged equal-tailed credible intervals (docs/bma.md "Credible intervals"): quantiles
/// (1 ∓ level)/2 of the exact posterior of each coefficient, a mixture over models of a point mass
/// at 0 (models without the predictor) and Student t distributions (one per node of the posterior
/// of the shrinkage, ShrinkagePosterior), inverted by TMixture (t_mixture.hpp): the lightest
/// components up to τ = 1e-10 of the mass dropped, exact t CDFs, a safeguarded Newton root to
/// ~1e-12 relative. Each end's probability level is within omitted_mass of the requested one.
/// Slopes of the centred predictors in the scale of G.
struct CredibleIntervals {
  double level = 0.0;  ///< 0: not computed
  Eigen::VectorXd lower;
  Eigen::VectorXd upper;
  double intercept_lower = 0.0;  ///< interval of α − ȳ (add the mean of the response): G has no means
  double intercept_upper = 0.0;
  /// Posterior probability of the models (and quadrature nodes below 1e-11) left out of the
  /// mixture, which is renormalised over the rest, plus the largest share TMixture dropped from
  /// one coefficient's mixture (≤ TMixture::kDefaultTau = 1e-10): |CDF error| ≤ omitted_mass.
  double omitted_mass = 0.0;
  std::uint64_t models = 0;  ///< models in the mixture
};

/// One model in a BmaResult.
struct ModelSummary {
  ModelMask model = 0;
  int model_size = 0;
  double log_prior_probability = 0.0;      ///< natural log
  double log_marginal = 0.0;               ///< log B_γ0 or log I_γ0 (natural log)
  double log_posterior_probability = 0.0;  ///< natural log, normalised
  double posterior_probability = 0.0;
  double r_squared = 0.0;
  double shrinkage = 0.0;  ///< E[g/(1+g) | Y, γ] (1 for information criteria)
};

/// Results of model averaging; vectors have length p in predictor order.
struct BmaResult {
  int p = 0;
  Eigen::VectorXd posterior_inclusion_probability;
  Eigen::VectorXd prior_inclusion_probability;
  Eigen::VectorXd model_averaged_coefficients;  ///< Σ_γ P(γ|D) s_γ β̂_γ (zero outside γ)
  ModelMask highest_posterior_model = 0;
  ModelMask median_probability_model = 0;  ///< PIP_j ≥ 1/2 (Barbieri & Berger 2004)
  double expected_model_size = 0.0;        ///< Σ_j PIP_j
  std::vector<ModelSummary> top_models;    ///< decreasing posterior probability
  /// log P(γ | D) indexed by the mask (size 2^p when keep_all_models; −inf for excluded models).
  Eigen::VectorXd log_posterior_probability;
  std::uint64_t models_evaluated = 0;          ///< admissible models visited (exact fits included)
  std::uint64_t models_rank_deficient = 0;     ///< excluded: G[γ,γ] (numerically) singular
  std::uint64_t models_heredity_excluded = 0;  ///< excluded: part of a heredity group (BmaOptions)
  std::uint64_t models_exact_fit = 0;          ///< R² = 1 (g-prior only: finite limit; see ExactFitError)
  /// Skipped by BmaOptions::negligible_log_odds (weight 0; not in models_evaluated).
  std::uint64_t models_negligible = 0;

  // ---- Coefficients (docs/bma.md "Coefficients"): slopes of the centred predictors in the scale
  // of G; the intercept is α = ȳ + (its deviation), ȳ being the caller's (G holds no means).
  /// sqrt(Var[β_j | D]) of the model-averaged posterior under the stated priors (exact within each
  /// model; +inf when a model with the predictor has ≤ 2 residual degrees of freedom).
  Eigen::VectorXd posterior_sd;
  /// BAS's `coef.bas` postsd: sqrt(Σ P(γ|D) (sd_γj² + m_γj²) − m_j²) with sd_γj² = E[s]·mse_γ·V_jj
  /// (mse_γ = RSS_γ/(n − p0 − |γ|); no E[s] for bic/aic), m_γj = E[s]·β̂_γj.
  Eigen::VectorXd posterior_sd_bas;
  double intercept_sd = 0.0;      ///< sqrt(Var[α | D]) (its mean is ȳ in every model)
  double intercept_sd_bas = 0.0;  ///< BAS: sqrt(Σ P(γ|D) mse_γ/n)
  CredibleIntervals credible_intervals;
  /// The model whose posterior-mean fit is closest to the BMA fit on the data,
  /// argmin_γ (m_γ − m)' G_xx (m_γ − m) over the models of the credible intervals (Clyde's "BPM").
  ModelMask best_predictive_model = 0;
  /// E[β | D, γ] (length p, zero outside γ) of the highest-probability, median-probability and best
  /// predictive models: the coefficients of their predictions. NaN when that model is rank deficient.
  Eigen::VectorXd highest_posterior_model_coefficients;
  Eigen::VectorXd median_probability_model_coefficients;
  Eigen::VectorXd best_predictive_model_coefficients;
};

/// Prior inclusion probability of each predictor: 1 for the forced ones; for the free ones
/// prior_inclusion_probability(model_prior) (model_space.hpp: 1/2 uniform, w bernoulli, a/(a+b)
/// beta-binomial). @throws as check_model_prior.
Eigen::VectorXd prior_inclusion_probabilities(const ModelPrior& model_prior, ModelMask always_included, int p);

/// The posterior of the coefficients within one model γ (docs/bma.md "Coefficients"): with the
/// g-prior β_γ | σ², g ~ N(0, g σ² G_γγ^{-1}), flat priors on the intercept and log σ, and
/// s = g/(1+g), V = G_γγ^{-1}, ν = n − p0:
///   β_γ | D, g ~ t_ν(s β̂, s·S(s)/ν·V), S(s) = G_yy (1 − s R²), α − ȳ | D, g ~ t_ν(0, S(s)/(ν n)),
/// so E[β_γ | D] = E[s] β̂ and Var[β_j | D] = G_yy (E[s] − R² E[s²])/(ν − 2)·V_jj + Var[s]·β̂_j².
/// bic/aic/lr (as BAS: a flat prior on β, ν = n − p0 − |γ|): β_γ | D ~ t_ν(β̂, RSS/ν·V).
struct ModelCoefficientPosterior {
  ModelMask model = 0;
  double degrees_of_freedom = 0.0;        ///< ν of the Student t distributions
  Eigen::VectorXd mean;                   ///< length p, zero outside γ
  Eigen::VectorXd sd;                     ///< exact posterior SD (length p; +inf for ν ≤ 2)
  Eigen::VectorXd sd_bas;                 ///< BAS's conditional SD sqrt(E[s]·mse·V_jj)
  double intercept_sd = 0.0;              ///< exact posterior SD of α
  double intercept_sd_bas = 0.0;          ///< BAS: sqrt(mse/n)
  Eigen::VectorXd ols;                    ///< β̂ (length p, zero outside γ)
  Eigen::VectorXd inverse_gram_diagonal;  ///< V_jj (length p, zero outside γ)
  double r_squared = 0.0;
  ShrinkagePosterior shrinkage;  ///< the posterior of s given D and γ
};

/// ModelCoefficientPosterior of one model from G. @param gram (p+1)×(p+1), response last.
/// @throws std::domain_error when G[γ,γ] is rank deficient or n ≤ |γ| + p0; ExactFitError for an
/// exact fit under a prior other than the g-prior; as log_model_marginal otherwise.
ModelCoefficientPosterior model_coefficient_posterior(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n,
                                                      ModelMask model, const CoefficientPrior& prior, int p0 = 1);

/// Models with weights, for summarise_models.
struct WeightedModel {
  ModelMask model = 0;
  double probability = 0.0;
};

/// The last step of bayesian_model_averaging(_mcmc): credible intervals at `level` (0: none) from
/// the mixture over `models` (renormalised; `omitted_mass` is added to the reported bound), the
/// best predictive model among them, and the coefficients of the highest-probability,
/// median-probability and best predictive models. Needs result.model_averaged_coefficients,
/// highest_posterior_model and median_probability_model. Deterministic.
void summarise_models(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, const CoefficientPrior& prior, int p0,
                      const std::vector<WeightedModel>& models, double omitted_mass, double level, BmaResult& result);

/// The model-averaged posterior of the coefficients as mixtures (docs/bma.md "Credible intervals"):
/// for each slope j a point mass at 0 (the weight of the models without j) and Student t components
/// (one per model with j and node of its shrinkage posterior), and the intercept's t components. The
/// weights need not sum to 1 (TMixture renormalises), so posteriors from several Gram matrices can be
/// pooled by adding each with its share (noise_aware.hpp: a mixture over draws of G).
struct CoefficientMixture {
  explicit CoefficientMixture(int p)
      : slopes(static_cast<std::size_t>(p)), slope_point_mass(static_cast<std::size_t>(p), 0.0) {}
  std::vector<std::vector<TComponent>> slopes;  ///< p lists
  std::vector<double> slope_point_mass;         ///< p weights of β_j = 0
  std::vector<TComponent> intercept;            ///< of α − ȳ
  /// Weight left out: quadrature nodes whose weight (probability × node weight) is below
  /// kMixtureNodeFloor, plus whatever the caller adds for models left out.
  double omitted_mass = 0.0;
};

/// Components lighter than this go to CoefficientMixture::omitted_mass.
inline constexpr double kMixtureNodeFloor = 1e-11;

/// Add one model's coefficient posterior with weight `probability` (its posterior probability, times
/// the share of its Gram matrix when pooling): for every node (s_i, w_i) of post.shrinkage a
/// component t_ν(s_i β̂_j, sqrt(s_i S(s_i)/ν V_jj)) of weight probability·w_i for each j in the
/// model (g-priors; S(s) = G_yy (1 − s R²)), t_ν(β̂_j, sqrt(RSS/ν V_jj)) for bic/aic/lr, the
/// intercept's t_ν(0, sqrt(S/(ν n))), and `probability` to the point mass of each j outside the
/// model. @param gram_yy G_yy of the Gram matrix post was computed from. Deterministic; no checks.
void add_model_components(const ModelCoefficientPosterior& post, double gram_yy, double n,
                          const CoefficientPrior& prior, double probability, CoefficientMixture& mix);

/// Equal-tailed intervals at each of `levels` ∈ (0, 1), in that order, from the quantiles
/// (1 ∓ level)/2 of each mixture (TMixture with its default τ). Each coefficient's mixture is built
/// once and inverted at every level (its F(0⁻) is shared by all of them): the same intervals as one
/// call per level, bit for bit, without re-sorting the components or recomputing F(0⁻) per level. omitted_mass =
/// mix.omitted_mass + the largest share TMixture dropped (capped at 1); `models` is left 0 for the caller. No levels:
/// none (no mixture is built). @throws std::domain_error for a level outside (0, 1).
std::vector<CredibleIntervals> mixture_credible_intervals(const CoefficientMixture& mix,
                                                          const std::vector<double>& levels);
/// The intervals at one level: mixture_credible_intervals(mix, {level}).front().
CredibleIntervals mixture_credible_intervals(const CoefficientMixture& mix, double level);

/// 1 − R² at or below this (relative to G_yy) is an exact fit: it is below the rounding error of a
/// Cholesky factorisation of G (about (|γ|+1)·ε_mach·G_yy), so R² = 1 cannot be told apart from it.
inline constexpr double kExactFitTolerance = 256.0 * std::numeric_limits<double>::epsilon();

/// How one model fits, from G (classify_model_fit).
enum class GramFitKind {
  full_rank,       ///< G[γ,γ] PD and 1 − R² > kExactFitTolerance: an ordinary model
  exact_fit,       ///< G[γ,γ] PD, G[γ∪y] singular: |1 − R²| ≤ kExactFitTolerance, R² = 1
  rank_deficient,  ///< a pivot of G[γ,γ] ≤ tol·G_jj (collinear or constant predictors), or G[γ∪y]
                   ///< clearly indefinite (1 − R² < −kExactFitTolerance: a noisy G*, no data set's Gram matrix)
};

/// One model's fit from G, classified. For exact_fit, log_one_minus_r_squared = −inf, r_squared = 1
/// and the coefficients solve G[γ,γ] β = G[γ,y]; for rank_deficient only `kind` is meaningful.
struct GramModelFit {
  GramFitKind kind = GramFitKind::rank_deficient;
  double log_one_minus_r_squared = 0.0;
  double r_squared = 0.0;
  Eigen::VectorXd coefficients;  ///< length |γ|, predictors in increasing index order
};

/// Cholesky of G[γ,γ] in index order with the pivot test of the enumeration (pivot ≤ tol·G_jj:
/// rank deficient), then RSS = G_yy − z'z with L z = G[γ,y]: |RSS| ≤ kExactFitTolerance·G_yy is an
/// exact fit (a model whose G[γ∪y] is singular while G[γ,γ] is PD fits y exactly; it is not a
/// rank-deficient model); RSS below −kExactFitTolerance·G_yy means G[γ∪y] is indefinite, which no
/// data set gives (only a noisy G*), and the model is excluded as rank deficient.
/// @throws as fit_model_from_gram for bad shapes. Deterministic.
GramModelFit classify_model_fit(const Eigen::Ref<const Eigen::MatrixXd>& gram, ModelMask model,
                                double collinearity_tolerance = 1e-10);

/// A model fits the response exactly (R² = 1) and the prior on β gives it infinite evidence
/// (every mixture of g-priors — zellner-siow, hyper-g, hyper-g-n, robust — and bic/aic/lr, whose
/// integrands or penalised likelihoods diverge as 1 − R² → 0). The posterior over models then has
/// no answer; the caller names the predictors of model() in its message. (The g-prior has the
/// finite limit log B = ((n − p0 − k)/2) log(1 + g) and never throws this.)
class ExactFitError : public std::domain_error {
 public:
  ExactFitError(ModelMask model, const std::string& what) : std::domain_error(what), model_(model) {}
  ModelMask model() const { return model_; }

 private:
  ModelMask model_;
};

/// A smallest-by-elimination model containing `always_included` that fits the response exactly,
/// if any admissible model does: a maximal set of linearly independent predictors (forced ones
/// first, then in index order, by the pivot test) spans every predictor, so some model is an exact
/// fit iff that set is; free predictors are then dropped while the fit stays exact. nullopt when
/// no model is an exact fit or the forced predictors are themselves collinear.
std::optional<ModelMask> find_exact_fit_model(const Eigen::Ref<const Eigen::MatrixXd>& gram,
                                              ModelMask always_included = 0, double collinearity_tolerance = 1e-10);

/// If the prior gives exact fits infinite evidence (see ExactFitError) and some admissible model is
/// an exact fit (find_exact_fit_model), throw ExactFitError naming it; otherwise do nothing.
/// Models with n ≤ |γ| + p0 are not estimable and never evaluated (p > n), so an exact fit found with
/// that many predictors is not an error here (the samplers give such models weight −inf).
void check_finite_evidence(const Eigen::Ref<const Eigen::MatrixXd>& gram, const CoefficientPrior& prior,
                           ModelMask always_included = 0, double collinearity_tolerance = 1e-10, double n = INFINITY,
                           int p0 = 1);

/// One predictor that makes models rank deficient (rank_deficient_columns).
struct RankDeficientColumn {
  int column = 0;                ///< predictor index
  bool constant = false;         ///< G_jj = 0: the centred column is zero (a constant predictor)
  ModelMask collinear_with = 0;  ///< earlier independent predictors it is a combination of
};

/// Predictors that are constant or a linear combination of earlier ones, in index order, by the
/// pivot test of the enumeration (pivot ≤ tol·G_jj after the earlier independent predictors).
/// Every model containing a constant predictor, or a collinear one together with all of
/// `collinear_with`, is rank deficient. Deterministic.
std::vector<RankDeficientColumn> rank_deficient_columns(const Eigen::Ref<const Eigen::MatrixXd>& gram,
                                                        double collinearity_tolerance = 1e-10);

/// R²_γ and OLS of one model from a Gram matrix, by Cholesky of G[S,S], S = γ ∪ {response}
/// (docs/methods.md §1): 1 - R² = C_{last,last}² / G_yy, β̂ = G[γ,γ]^{-1} G[γ,y].
struct ModelFit {
  double log_one_minus_r_squared = 0.0;  ///< natural log
  double r_squared = 0.0;
  Eigen::VectorXd coefficients;  ///< length |γ|, predictors in increasing index order
};

/// Fit one model from G. @param gram (p+1)×(p+1) symmetric, response last. @param model mask over p.
/// @throws std::invalid_argument for a non-square matrix or bits beyond p; std::domain_error if
/// G[S,S] is not positive definite. Deterministic.
ModelFit fit_model_from_gram(const Eigen::Ref<const Eigen::MatrixXd>& gram, ModelMask model);

/// Bayesian model averaging over all models that contain `options.always_included`, by full
/// enumeration: a Gray-code walk over the free predictors, each step one sweep (Dempster 1969;
/// Goodnight 1979) of the (p+1)×(p+1) matrix — O(p²) per model, not a factorisation — with the
/// state rebuilt from G every `refresh_interval` models; a model whose RSS is below 1e-10·G_yy is
/// refitted by Cholesky (full relative precision of 1 - R² near R² = 1).
/// Weights log P(γ) + log B_γ0 (log_model_marginal) are combined with a running log-sum-exp.
/// Rank deficiency (a pivot ≤ tol·G_jj) excludes the model (counted in models_rank_deficient).
/// An exact fit (classify_model_fit: G[γ,γ] PD, R² = 1) is not rank deficient: under the g-prior
/// it gets the finite limit of log B, ((n − p0 − k)/2) log(1 + g) (counted in models_exact_fit);
/// under every other prior its evidence is infinite and ExactFitError is thrown, before the
/// enumeration (check_finite_evidence), naming the model.
///
/// @param gram (p+1)×(p+1) symmetric Gram matrix of centred data, response last (confidential G
///        or a regularised DP G*; paper §5). p ≤ 30 (≤ 24 with keep_all_models).
/// @param n public number of rows (> p + p0).
/// @throws std::invalid_argument for bad shapes or p too large; std::domain_error for non-finite
///         entries, G_yy ≤ 0, a non-finite log marginal (named), or when every model is rank
///         deficient; ExactFitError (a std::domain_error) as above. Deterministic.
BmaResult bayesian_model_averaging(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n,
                                   const CoefficientPrior& prior, const ModelPrior& model_prior,
                                   const BmaOptions& options = {});

/// Posterior inclusion probabilities only (same computation). @throws as bayesian_model_averaging.
Eigen::VectorXd posterior_inclusion_probability(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n,
                                                const CoefficientPrior& prior, const ModelPrior& model_prior,
                                                const BmaOptions& options = {});

/// Model-averaged posterior mean of β (slopes of the centred predictors).
Eigen::VectorXd model_averaged_coefficients(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n,
                                            const CoefficientPrior& prior, const ModelPrior& model_prior,
                                            const BmaOptions& options = {});

/// The model of maximal posterior probability in `result`.
inline ModelMask highest_posterior_model(const BmaResult& result) { return result.highest_posterior_model; }

/// The median-probability model {j : PIP_j ≥ 1/2}.
ModelMask median_probability_model(const Eigen::Ref<const Eigen::VectorXd>& inclusion_probabilities);

/// Log weight log P(γ) + log B_γ0 of one model with its shrinkage and OLS slopes, by Cholesky
/// (classify_model_fit). Used by the MCMC sampler. Rank-deficient models get weight −inf (no
/// throw); an exact fit gets the g-prior's finite limit, or throws ExactFitError for other priors.
struct ModelEvaluation {
  double log_weight = -INFINITY;
  double log_marginal = 0.0;
  double shrinkage = 0.0;
  double r_squared = 0.0;
  Eigen::VectorXd coefficients;         ///< length p, zero outside γ (OLS, not shrunk)
  Eigen::VectorXd posterior_mean;       ///< E[β | D, γ] = E[s]·β̂ (length p)
  Eigen::VectorXd second_moment;        ///< E[β_j² | D, γ] (ModelCoefficientPosterior::sd)
  Eigen::VectorXd second_moment_bas;    ///< sd_bas² + mean²
  double intercept_variance = 0.0;      ///< Var[α | D, γ]
  double intercept_variance_bas = 0.0;  ///< BAS's mse/n
};
ModelEvaluation evaluate_model(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, ModelMask model,
                               const CoefficientPrior& prior, const ModelPrior& model_prior, ModelMask always_included,
                               int p0);

/// The part of evaluate_model the MCMC chain needs for a proposal: the same log weight, log
/// marginal, shrinkage and R² (bit for bit), without the moments (no inverse of G[γ,γ]).
struct ModelWeight {
  double log_weight = -INFINITY;
  double log_marginal = 0.0;
  double shrinkage = 0.0;
  double r_squared = 0.0;
};
ModelWeight evaluate_model_weight(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, ModelMask model,
                                  const CoefficientPrior& prior, const ModelPrior& model_prior,
                                  ModelMask always_included, int p0);

/// Default bound on the distinct models the MCMC sampler stores (McmcOptions::max_models): 2^20.
inline constexpr std::uint64_t kDefaultMcmcMaxModels = 1ULL << 20;

/// Memory of one stored model of the MCMC sampler, an upper bound in bytes: the table entry
/// (mask, log weight, log marginal, shrinkage, R², visit count: 48 B) with its hash-table node and
/// bucket (about 80 B in libstdc++), and the two 16-byte lists of the final summary; measured in
/// docs/performance.md ("Model searches"). Callers check max_models × this against the memory.
inline constexpr double kMcmcBytesPerStoredModel = 256.0;

/// Default iteration bound of the MCMC sampler for p predictors (McmcOptions::max_iterations):
/// 10^5·p, at most 4·10^6 (p = 40). Each iteration costs O(p) when the proposed model is stored, one
/// model evaluation (a Cholesky factorisation, O(|γ|³), and the prior's integral) when it is not;
/// docs/bma.md "Cost of the model search" gives the bound on the time this implies.
inline std::uint64_t default_mcmc_max_iterations(int p) {
  return std::min<std::uint64_t>(100000ULL * static_cast<std::uint64_t>(std::max(p, 1)), 4000000ULL);
}

/// Options of the MCMC sampler over models.
struct McmcOptions {
  ModelMask always_included = 0;
  int p0 = 1;
  std::uint64_t batch = 0;           ///< iterations per convergence check (0: 100·p)
  std::uint64_t min_iterations = 0;  ///< (0: 1000·p, at most the iteration bound)
  std::uint64_t max_iterations = 0;  ///< the iteration bound (0: default_mcmc_max_iterations(p))
  /// At most this many distinct models are stored (≥ 1; memory ≤ max_models ×
  /// kMcmcBytesPerStoredModel). Once the table is full, a model not in it is evaluated again each
  /// time the chain proposes it and is not stored: the chain and the ergodic averages (PIPs, means,
  /// SDs) are unchanged; the top models, the highest-probability model and the visit frequencies of
  /// the credible intervals cover the stored models only (the iterations spent elsewhere join
  /// CredibleIntervals::omitted_mass); McmcDiagnostics::evaluations_unstored counts them.
  std::uint64_t max_models = kDefaultMcmcMaxModels;
  double tolerance = 0.005;  ///< stopping rule on PIPs (see bayesian_model_averaging_mcmc)
  int top_models = 10;
  double credible_level = 0.95;       ///< as BmaOptions
  double interval_mass = 1.0 - 1e-7;  ///< as BmaOptions, of the visit frequencies
  int interval_max_models = 4096;     ///< as BmaOptions
  /// Reports (progress.hpp): phase "mcmc" (iterations of max_iterations), then "mcmc-summary"
  /// (visited stored models re-evaluated for the averages). A throw from it stops the search.
  ProgressCallback progress;
};

/// Summary of an MCMC run (in addition to the BmaResult).
struct McmcDiagnostics {
  std::uint64_t iterations = 0;
  std::uint64_t max_iterations = 0;  ///< the iteration bound in force
  std::uint64_t models_visited = 0;  ///< distinct models evaluated and stored (≤ McmcOptions::max_models)
  /// Evaluations of models that did not fit in the full table (0 unless it filled up).
  std::uint64_t evaluations_unstored = 0;
  double acceptance_rate = 0.0;
  bool converged = false;           ///< stopping rule met before max_iterations
  double max_pip_difference = 0.0;  ///< at the last check
};

/// Metropolis–Hastings over models for p too large to enumerate (Madigan & York 1995 MC³ with
/// swap moves, as in BAS's MCMC): each step proposes, with probability 1/2, flipping one uniformly
/// chosen free predictor (add/delete), otherwise swapping one included and one excluded free
/// predictor (a flip when either set is empty); both proposals are symmetric, so the acceptance
/// probability is min(1, exp(w' − w)) with w = log P(γ) + log B_γ0. Starts at the forced model.
///
/// Estimates are ergodic averages over iterations: PIP_j = fraction of iterations with γ_j = 1,
/// E[β|D] = average of s_γ β̂_γ, E[β_j²|D] = average of E[β_j²|D,γ] (posterior_sd); the credible
/// intervals and the best predictive model use the visit frequencies of the visited models
/// (summarise_models). Models with n ≤ |γ| + p0 (p > n) get weight −inf. top_models lists the most probable visited
/// models with probabilities renormalised over the visited set (as BAS does for sampled models).
///
/// Stopping rule: every `batch` iterations after `min_iterations`, the PIPs estimated from the
/// first and second halves of the run are compared; the run stops when they differ by less than
/// `tolerance` in every coordinate, or at `max_iterations` (converged = false). Draws from `rng`.
///
/// Bounded (docs/bma.md "Cost of the model search"): at most max_iterations iterations and
/// max_models stored models; besides the table, O(p·max_iterations/batch) bytes for the stopping
/// rule (the inclusion counts at the half-way points). Visit counts are kept per stored model and
/// the averages formed at the end by evaluating each visited model once more (phase "mcmc-summary").
/// @throws as bayesian_model_averaging (p ≤ kMaxPredictors, but no bound from n; ExactFitError before
/// the first step, or when the chain reaches an exact fit), std::domain_error for tolerance ≤ 0 or
/// max_models = 0; whatever options.progress throws.
template <class Rng>
BmaResult bayesian_model_averaging_mcmc(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n,
                                        const CoefficientPrior& prior, const ModelPrior& model_prior, Rng& rng,
                                        const McmcOptions& options, McmcDiagnostics* diagnostics = nullptr) {
  constexpr const char* fn = "bayesian_model_averaging_mcmc";
  const Eigen::Index d = gram.rows();
  if (gram.cols() != d || d < 2 || d > kMaxPredictors + 1) {
    throw_invalid(fn, "gram must be square (p+1)x(p+1) with 1 <= p <= " + std::to_string(kMaxPredictors));
  }
  const int p = static_cast<int>(d - 1);
  check_positive_finite(fn, "tolerance", options.tolerance);
  if (options.max_models < 1) throw_domain(fn, "max_models", 0.0, ">= 1");
  check_finite_evidence(gram, prior, options.always_included, 1e-10, n, options.p0);
  std::vector<int> free_idx;
  for (int j = 0; j < p; ++j) {
    if (!((options.always_included >> j) & 1U)) free_idx.push_back(j);
  }
  const auto up = static_cast<std::uint64_t>(p);
  const std::uint64_t batch = options.batch ? options.batch : 100 * up;
  const std::uint64_t max_it = options.max_iterations ? options.max_iterations : default_mcmc_max_iterations(p);
  const std::uint64_t min_it = options.min_iterations ? options.min_iterations : std::min(1000 * up, max_it);
  McmcDiagnostics diag;
  diag.max_iterations = max_it;

  // The table of stored models: what the chain needs (the weight) and the visit count; the
  // moments are formed at the end (one more evaluation per visited model).
  struct Stored {
    double log_weight = -INFINITY;
    double log_marginal = 0.0;
    double shrinkage = 0.0;
    double r_squared = 0.0;
    std::uint64_t visits = 0;
  };
  std::unordered_map<ModelMask, Stored> table;
  const auto evaluate = [&](ModelMask m) {
    return evaluate_model(gram, n, m, prior, model_prior, options.always_included, options.p0);
  };
  // The stored entry of m (evaluated and stored when new and the table has room), or nullptr with
  // `w` set to m's weight when the table is full. Only the weight is computed for a proposal; the
  // moments of an unstored model are computed when the chain moves to it.
  const auto lookup = [&](ModelMask m, ModelWeight& w) -> Stored* {
    const auto it = table.find(m);
    if (it != table.end()) return &it->second;
    w = evaluate_model_weight(gram, n, m, prior, model_prior, options.always_included, options.p0);
    if (table.size() < options.max_models) {
      return &table.emplace(m, Stored{w.log_weight, w.log_marginal, w.shrinkage, w.r_squared, 0}).first->second;
    }
    ++diag.evaluations_unstored;
    return nullptr;
  };
  // The current model: its entry, or (not stored) its full evaluation.
  ModelMask current = options.always_included;
  ModelEvaluation cur_full;
  ModelWeight prop_w;
  Stored* cur = lookup(current, prop_w);
  double cur_w = cur != nullptr ? cur->log_weight : prop_w.log_weight;
  if (!std::isfinite(cur_w)) throw_domain(fn, "log weight of the starting model", cur_w, "finite");
  if (cur == nullptr) cur_full = evaluate(current);

  // Per-iteration inclusion counts (PIPs and the stopping rule); the moments of the iterations at
  // unstored models (the others are formed from the visit counts at the end).
  std::vector<std::uint64_t> incl_count(static_cast<std::size_t>(p), 0);
  Eigen::VectorXd coef_sum = Eigen::VectorXd::Zero(p);
  Eigen::VectorXd second_sum = Eigen::VectorXd::Zero(p);
  Eigen::VectorXd second_bas_sum = Eigen::VectorXd::Zero(p);
  double intercept_sum = 0.0;
  double intercept_bas_sum = 0.0;
  std::uint64_t unstored_iterations = 0;
  // The stopping rule at check k (iteration k·batch) compares the counts after iteration
  // ⌊k·batch/2⌋ with the rest: snapshots of incl_count at ⌊j·batch/2⌋ for the checks to come.
  std::deque<std::pair<std::uint64_t, std::vector<std::uint64_t>>> snapshots;  // (j, counts)
  std::uint64_t next_snapshot = 1;
  const auto snapshot_at = [batch](std::uint64_t j) { return j * batch / 2; };
  while (snapshot_at(next_snapshot) == 0) snapshots.emplace_back(next_snapshot++, incl_count);
  std::uint64_t accepted = 0;
  std::uint64_t it = 0;
  const auto f = static_cast<std::uint64_t>(free_idx.size());
  std::vector<int> in, out;
  report_progress(options.progress, 0, max_it, "mcmc");
  while (it < max_it) {
    if (f > 0) {
      ModelMask proposal = current;
      const bool swap = uniform_open01(rng) < 0.5;
      in.clear();
      out.clear();
      if (swap) {
        for (int j : free_idx) ((current >> j) & 1U ? in : out).push_back(j);
      }
      if (swap && !in.empty() && !out.empty()) {
        proposal ^= 1ULL << in[uniform_index(rng, in.size())];
        proposal ^= 1ULL << out[uniform_index(rng, out.size())];
      } else {
        proposal ^= 1ULL << free_idx[uniform_index(rng, f)];
      }
      Stored* prop = lookup(proposal, prop_w);
      const double w = prop != nullptr ? prop->log_weight : prop_w.log_weight;
      const double log_ratio = w - cur_w;
      if (log_ratio >= 0.0 || std::log(uniform_open01(rng)) < log_ratio) {
        current = proposal;
        cur = prop;
        cur_w = w;
        if (prop == nullptr) cur_full = evaluate(current);
        ++accepted;
      }
    }
    ++it;
    for (int j = 0; j < p; ++j) incl_count[static_cast<std::size_t>(j)] += (current >> j) & 1U;
    if (cur != nullptr) {
      ++cur->visits;
    } else {
      ++unstored_iterations;
      coef_sum += cur_full.posterior_mean;
      second_sum += cur_full.second_moment;
      second_bas_sum += cur_full.second_moment_bas;
      intercept_sum += cur_full.intercept_variance;
      intercept_bas_sum += cur_full.intercept_variance_bas;
    }
    while (snapshot_at(next_snapshot) == it) snapshots.emplace_back(next_snapshot++, incl_count);
    if (it % kProgressInterval == 0) report_progress(options.progress, it, max_it, "mcmc");
    if (it % batch == 0) {
      const std::uint64_t k = it / batch;
      while (!snapshots.empty() && snapshots.front().first < k) snapshots.pop_front();
      if (it >= min_it) {
        const std::uint64_t half = snapshot_at(k);
        const std::vector<std::uint64_t>& first = snapshots.front().second;
        double worst = 0.0;
        for (int j = 0; j < p; ++j) {
          const auto js = static_cast<std::size_t>(j);
          const double a = static_cast<double>(first[js]) / static_cast<double>(half);
          const double b = static_cast<double>(incl_count[js] - first[js]) / static_cast<double>(it - half);
          worst = std::max(worst, std::abs(a - b));
        }
        diag.max_pip_difference = worst;
        if (worst < options.tolerance) {
          diag.converged = true;
          break;
        }
      }
    }
  }
  report_progress(options.progress, it, max_it, "mcmc");
  BmaResult res;
  res.p = p;
  res.posterior_inclusion_probability.resize(p);
  for (int j = 0; j < p; ++j) {
    res.posterior_inclusion_probability(j) =
        static_cast<double>(incl_count[static_cast<std::size_t>(j)]) / static_cast<double>(it);
  }
  const double iterations = static_cast<double>(it);
  // The moments of the visited stored models, weighted by their visits (each evaluated once more).
  {
    std::vector<ModelMask> visited_models;
    for (const auto& [m, s] : table) {
      if (s.visits > 0) visited_models.push_back(m);
    }
    std::sort(visited_models.begin(), visited_models.end());  // a fixed summation order
    const auto total = static_cast<std::uint64_t>(visited_models.size());
    report_progress(options.progress, 0, total, "mcmc-summary");
    for (std::uint64_t i = 0; i < total; ++i) {
      const ModelMask m = visited_models[static_cast<std::size_t>(i)];
      const double c = static_cast<double>(table.at(m).visits);
      const ModelEvaluation e = evaluate(m);
      coef_sum += c * e.posterior_mean;
      second_sum += c * e.second_moment;
      second_bas_sum += c * e.second_moment_bas;
      intercept_sum += c * e.intercept_variance;
      intercept_bas_sum += c * e.intercept_variance_bas;
      if ((i + 1) % kProgressInterval == 0) report_progress(options.progress, i + 1, total, "mcmc-summary");
    }
    report_progress(options.progress, total, total, "mcmc-summary");
  }
  res.model_averaged_coefficients = coef_sum / iterations;
  const Eigen::ArrayXd mean_sq = res.model_averaged_coefficients.array().square();
  res.posterior_sd = (second_sum.array() / iterations - mean_sq).max(0.0).sqrt().matrix();
  res.posterior_sd_bas = (second_bas_sum.array() / iterations - mean_sq).max(0.0).sqrt().matrix();
  res.intercept_sd = std::sqrt(intercept_sum / iterations);
  res.intercept_sd_bas = std::sqrt(intercept_bas_sum / iterations);
  res.expected_model_size = res.posterior_inclusion_probability.sum();
  res.median_probability_model = median_probability_model(res.posterior_inclusion_probability);
  res.prior_inclusion_probability = prior_inclusion_probabilities(model_prior, options.always_included, p);
  std::vector<std::pair<double, ModelMask>> visited;
  double max_w = -INFINITY;
  for (const auto& [m, e] : table) {
    if (std::isfinite(e.log_weight)) {
      visited.emplace_back(e.log_weight, m);
      max_w = std::max(max_w, e.log_weight);
    } else {
      ++res.models_rank_deficient;
    }
  }
  double z = 0.0;
  for (const auto& v : visited) z += std::exp(v.first - max_w);
  const double log_z = max_w + std::log(z);
  std::sort(visited.begin(), visited.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (!visited.empty()) res.highest_posterior_model = visited.front().second;
  for (std::size_t i = 0; i < visited.size() && static_cast<int>(i) < options.top_models; ++i) {
    const Stored& e = table.at(visited[i].second);
    ModelSummary s;
    s.model = visited[i].second;
    s.model_size = model_size(s.model);
    s.log_marginal = e.log_marginal;
    s.log_prior_probability = e.log_weight - e.log_marginal;
    s.log_posterior_probability = e.log_weight - log_z;
    s.posterior_probability = std::exp(s.log_posterior_probability);
    s.r_squared = e.r_squared;
    s.shrinkage = e.shrinkage;
    res.top_models.push_back(s);
  }
  res.models_evaluated = visited.size();
  {
    // Visit frequencies for the intervals and the best predictive model, most visited first; the
    // iterations at unstored models are part of the omitted mass.
    std::vector<WeightedModel> by_frequency;
    for (const auto& [m, s] : table) {
      if (s.visits > 0) by_frequency.push_back({m, static_cast<double>(s.visits) / iterations});
    }
    std::sort(by_frequency.begin(), by_frequency.end(), [](const WeightedModel& a, const WeightedModel& b) {
      return a.probability != b.probability ? a.probability > b.probability : a.model < b.model;
    });
    double kept = 0.0;
    std::size_t used = 0;
    while (used < by_frequency.size() && static_cast<int>(used) < options.interval_max_models &&
           kept < options.interval_mass) {
      kept += by_frequency[used++].probability;
    }
    by_frequency.resize(used);
    summarise_models(gram, n, prior, options.p0, by_frequency, std::max(0.0, 1.0 - kept), options.credible_level, res);
  }
  diag.iterations = it;
  diag.models_visited = table.size();
  diag.acceptance_rate = static_cast<double>(accepted) / static_cast<double>(it);
  if (diagnostics != nullptr) *diagnostics = diag;
  return res;
}

}  // namespace dpmu::core
