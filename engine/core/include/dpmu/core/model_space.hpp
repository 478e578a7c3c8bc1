#pragma once
/// @file model_space.hpp
/// The space of linear models γ ∈ {0,1}^p (Peña & Barrientos 2024, JMLR 25, §5; docs/methods.md §2.5):
/// model bitmasks, priors over models, the per-model log marginal likelihood (log Bayes factor
/// against the null model) under every prior on the coefficients, and a fast accurate quadrature
/// for the mixture priors used when 2^p models are enumerated.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/g_priors.hpp"
#include "dpmu/core/priors/zellner_siow.hpp"

namespace dpmu::core {

/// A model γ as a bitmask: bit j set ⇔ predictor j (0-based, intercept excluded) is included.
using ModelMask = std::uint64_t;

/// Number of predictors in a model, |γ|.
inline int model_size(ModelMask model) { return __builtin_popcountll(model); }

/// Kind of prior over the model space.
enum class ModelPriorKind {
  uniform,        ///< P(γ) = 2^{-p}
  bernoulli,      ///< independent inclusion with probability w: w^{|γ|} (1-w)^{p-|γ|}
  beta_binomial,  ///< B(|γ|+a, p-|γ|+b)/B(a, b); (1,1) is Scott & Berger's (2010) hierarchical uniform
};

/// A prior over models. Parameters: `w` (bernoulli), `a`, `b` (beta_binomial).
struct ModelPrior {
  ModelPriorKind kind = ModelPriorKind::beta_binomial;
  double w = 0.5;
  double a = 1.0;
  double b = 1.0;
};

/// Parse "uniform", "bernoulli:W" (or "bernoulli(W)"), "beta-binomial:A,B" (or "beta-binomial",
/// meaning (1,1)). @throws std::invalid_argument for an unknown name or malformed numbers,
/// std::domain_error for w ∉ (0,1) or a, b ≤ 0.
ModelPrior parse_model_prior(std::string_view text);

/// The canonical spelling accepted by parse_model_prior (e.g. "beta-binomial:1,1").
std::string to_string(const ModelPrior& prior);

/// Validate parameters. @throws std::domain_error (w ∉ (0,1); a, b not finite and > 0),
/// std::invalid_argument for a kind outside ModelPriorKind (as every function of a ModelPrior).
void check_model_prior(const ModelPrior& prior);

/// log P(γ) for a model that includes `model_size` of the `p` free predictors (natural log).
/// Priors on the size are divided by the number C(p, |γ|) of models of that size, so the
/// probabilities sum to 1 over the 2^p models (docs/methods.md §2.5; BAS `beta_binomial`).
/// @throws std::domain_error for model_size ∉ [0, p] or invalid parameters.
double log_prior_model_probability(const ModelPrior& prior, int model_size, int p);

/// The prior probability that a free predictor is in the model, P(γ_j = 1): 1/2 (uniform), w
/// (bernoulli), a/(a+b) (beta-binomial, the mean of the Beta(a, b) inclusion probability).
/// @throws as check_model_prior.
double prior_inclusion_probability(const ModelPrior& prior);

/// The exact evidence of a prior: its closed form or the quadrature of its density.
struct ExactEvidence {};

/// How a model's evidence is computed: exactly, or by an approximation that belongs to one prior
/// (its unit in priors/*.hpp names the prior it approximates, `Approximation::approximates`).
using EvidenceRule = std::variant<ExactEvidence, priors::ZellnerSiowLaplace>;

/// A prior on the coefficients of each model for model averaging: any Prior of g_priors.hpp with
/// the rule of its evidence — exact, or the Laplace approximation to the Zellner–Siow Bayes factor
/// and shrinkage that R package BAS uses for `bas.lm(prior = "ZS-null")` (`zellner-siow-laplace`,
/// priors::ZellnerSiowLaplace, valid with prior.kind == zellner_siow only: check_coefficient_prior).
struct CoefficientPrior {
  Prior prior;
  EvidenceRule rule = ExactEvidence{};
};

/// Validate the prior's parameters (check_prior) and that an approximate rule belongs to the prior.
/// @throws std::domain_error (parameters), std::invalid_argument (an approximation of another prior).
void check_coefficient_prior(const CoefficientPrior& prior);

/// True iff the evidence of `prior` is computed by an approximation (a BAS-compatible variant).
bool is_approximate(const CoefficientPrior& prior);

/// Parse "g-prior", "zellner-siow", "zellner-siow-laplace", "hyper-g", "hyper-g-n", "robust",
/// "bic", "aic", "lr" (g and a as in Prior; '_' accepted for '-'): a prior_kind_names() spelling
/// with the exact rule, or the name of an approximation (priors::ZellnerSiowLaplace::name).
/// @throws std::invalid_argument for an unknown name, std::domain_error for invalid parameters.
CoefficientPrior parse_coefficient_prior(std::string_view name, std::optional<double> g = std::nullopt, double a = 3.0);

/// The spelling accepted by parse_coefficient_prior.
std::string to_string(const CoefficientPrior& prior);

/// log B_γ0 (paper Eq. 3 with p → |γ|, R² → R²_γ; or log I_γ0 of Eq. 4 for bic/aic/lr) and the
/// shrinkage E[g/(1+g) | Y, γ] (1 for bic/aic/lr, g/(1+g) for the g-prior).
///
/// zellner-siow, hyper-g, hyper-g-n: a fixed-cost rule — the mode t* of the log integrand in
/// t = log g by safeguarded Newton with analytic derivatives, then the trapezoidal rule in u with
/// t = t* + s·sinh(u), s = (-h''(t*))^{-1/2}, step 1/16 in u, truncated where the log integrand has
/// fallen by 42 (double-exponential decay). Tested against log_bayes_factor_and_shrinkage
/// (adaptive Gauss–Kronrod) to 1e-9 absolute in log B and shrinkage for n from 10 to 1e7, except
/// with two residual degrees of freedom (n − p0 − |γ| = 2) as R² → 1, where the ZS rule's error
/// reaches 2e-8 (tests/core/priors_test.cpp).
/// robust: the same rule after t = t_min + e^v (log_bayes_factor_robust_trapezoid). g-prior: closed form.
/// zellner-siow-laplace: BAS's `LogBF_ZS_null` and `E_ZS_approx_null` formulas (Laplace
/// approximation in g with the mode from the cubic score equation; BAS treats n as an integer).
///
/// @param log_one_minus_r_squared log(1 - R²_γ) ≤ 0. @param n rows. @param model_size |γ| ≥ 0.
/// @param p0 common columns (1: intercept). @throws as log_bayes_factor. Deterministic; natural log.
BayesFactorResult log_model_marginal(const CoefficientPrior& prior, double log_one_minus_r_squared, double n,
                                     int model_size, int p0);

/// The limit of log_model_marginal as R²_γ → 1 when it is finite: the g-prior's
/// ((n − p0 − k)/2) log(1 + g) with shrinkage g/(1 + g) (k = 0: 0, 0). nullopt for every other
/// prior: the mixtures of g-priors put mass on g → ∞, where (1 + g)^{(n−p0−k)/2} π(g) is not
/// integrable, and bic/aic/lr are −(n/2) log(1 − R²) + penalty; their evidence is +∞.
/// @throws as log_model_marginal for invalid n, k, p0 or prior parameters.
std::optional<BayesFactorResult> log_model_marginal_exact_fit(const CoefficientPrior& prior, double n, int model_size,
                                                              int p0);

/// True iff log_model_marginal_exact_fit has a finite value for this prior (the g-prior).
bool exact_fit_has_finite_evidence(const CoefficientPrior& prior);

/// The fast mixture-prior rule of log_model_marginal without argument checks on the hot path
/// (exposed for tests and benchmarks). Valid for zellner_siow, hyper_g, hyper_g_n.
BayesFactorResult log_bayes_factor_sinh_trapezoid(const Prior& prior, double log_one_minus_r_squared, double n, int p,
                                                  int p0);

/// The robust prior's log B and shrinkage by the same rule in v with t = t_min + e^v (support
/// g > ρ(n+1) − 1), so the boundary becomes an exponentially decaying tail. Tested against
/// log_bayes_factor_and_shrinkage to 1e-9. Deterministic; no argument checks.
BayesFactorResult log_bayes_factor_robust_trapezoid(double log_one_minus_r_squared, double n, int p, int p0);

/// The posterior of the shrinkage s = g/(1+g) of one model given the data, as a discrete
/// distribution: the nodes of the quadrature of log_model_marginal with their normalised weights
/// (zellner-siow, hyper-g, hyper-g-n, robust: the trapezoid in u of log_bayes_factor_sinh_trapezoid
/// at twice its step), or one point: g/(1+g) for the
/// g-prior, the Laplace-approximate E[s] for zellner-siow-laplace (a plug-in), 1 for bic/aic/lr
/// (no shrinkage), 0 for the null model. Used for the exact credible intervals of the coefficients
/// (docs/bma.md "Credible intervals"). log_one_minus_r_squared = −inf (an exact fit) is accepted for
/// the g-prior only. @throws as log_model_marginal. Deterministic.
struct ShrinkagePosterior {
  std::vector<double> shrinkage;    ///< node values s_i in [0, 1]
  std::vector<double> probability;  ///< weights, summing to 1
};
ShrinkagePosterior shrinkage_posterior(const CoefficientPrior& prior, double log_one_minus_r_squared, double n,
                                       int model_size, int p0);

/// sup over g ≥ 0 of the log likelihood of a model under Zellner's g-prior relative to the null
/// model, log L(g) = ((m − k)/2) log(1 + g) − (m/2) log(1 + g(1 − R²)), m = n − p0 (paper Eq. 3's
/// integrand without π(g)): log L(ĝ) at ĝ = (mR² − k)/(k(1 − R²)) when positive (the local
/// empirical-Bayes g of Liang et al. 2008 §2.4), else 0. Because the Bayes factor of a proper
/// mixture of g-priors is the average B = ∫ L(g) π(g) dg, it is an upper bound of log B_γ0 for
/// Zellner–Siow, hyper-g, hyper-g/n and robust (used to prune negligible models,
/// BmaOptions::negligible_log_odds). Natural log; 0 for k = 0.
double log_likelihood_sup_over_g(double log_one_minus_r_squared, double n, int k, int p0);

/// BAS's Laplace approximation to the ZS log Bayes factor against the null model
/// (`LogBF_ZS_null` with d = k + 1) and to E[g/(1+g) | Y] (`E_ZS_approx_null`), R package BAS
/// 1.7.5 (Clyde 2024). R² in [0, 1); k = 0 gives (0, 0).
BayesFactorResult zellner_siow_laplace(double r_squared, double n, int k);

}  // namespace dpmu::core
