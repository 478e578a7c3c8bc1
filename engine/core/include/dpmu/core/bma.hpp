#pragma once
/// @file bma.hpp
/// Bayesian model averaging and selection from a Gram matrix (Peña & Barrientos 2024, JMLR 25,
/// §5 and §5.5 "plug-in" inference; METHODS.md §1, §2.5): full enumeration of the 2^p models by
/// a Gray-code walk with sweep-operator updates, posterior model probabilities, posterior
/// inclusion probabilities, model-averaged coefficients, highest-probability and
/// median-probability models.

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "dpmu/core/model_space.hpp"

namespace dpmu::core {

/// Options of bayesian_model_averaging.
struct BmaOptions {
  ModelMask always_included = 0;  ///< predictors forced into every model; the model prior is over the others
  int p0 = 1;                     ///< common columns removed by centring (1 = intercept)
  int top_models = 10;            ///< how many of the most probable models to report
  bool keep_all_models = true;    ///< fill BmaResult::log_posterior_probability (2^p doubles)
  double collinearity_tolerance = 1e-10;  ///< pivot ≤ tol·G_jj marks a rank-deficient model
  int refresh_interval = 1024;    ///< rebuild the sweep state from G every this many models
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
  std::uint64_t models_evaluated = 0;       ///< admissible models visited
  std::uint64_t models_rank_deficient = 0;  ///< excluded: G[γ,γ] (numerically) singular or G[γ∪y] not PD
};

/// R²_γ and OLS of one model from a Gram matrix, by Cholesky of G[S,S], S = γ ∪ {response}
/// (METHODS.md §1): 1 - R² = C_{last,last}² / G_yy, β̂ = G[γ,γ]^{-1} G[γ,y].
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
/// Rank deficiency (a pivot ≤ tol·G_jj, or a non-PD G[γ∪y]) excludes the model (counted).
///
/// @param gram (p+1)×(p+1) symmetric Gram matrix of centred data, response last (confidential G
///        or a regularised DP G*; paper §5). p ≤ 30 (≤ 24 with keep_all_models).
/// @param n public number of rows (> p + p0).
/// @throws std::invalid_argument for bad shapes or p too large; std::domain_error for non-finite
///         entries, G_yy ≤ 0, or when every model is rank deficient. Deterministic.
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

}  // namespace dpmu::core
