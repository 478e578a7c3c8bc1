#pragma once
/// @file bayes_factor.hpp
/// Bayes factors of nested normal linear models under mixtures of g-priors
/// (Peña & Barrientos 2024, JMLR 25, §4.1 Eq. 3; Liang, Paulo, Molina, Clyde &
/// Berger 2008, JASA 103; Bayarri, Berger, Forte & García-Donato 2012, Ann. Statist. 40).
///
/// Notation (docs/methods.md §2.2): n rows, p0 common columns (intercept counted),
/// k = p tested columns, m = n - p0, Q = 1 - R². Everything is on the natural-log scale.

#include "dpmu/core/g_priors.hpp"

namespace dpmu::core {

/// log B10 together with the posterior mean of the shrinkage factor g/(1+g).
struct BayesFactorResult {
  double log_bayes_factor = 0.0;  ///< natural log of B10 (Eq. 3)
  double shrinkage = 0.0;         ///< E[g/(1+g) | Y, H1] in [0, 1]
  /// E[(g/(1+g))² | Y, H1] in [0, 1] (posterior variances of the coefficients, docs/bma.md
  /// "Posterior SDs"); s² for a fixed g, 1 for information criteria, 0 for p = 0.
  double shrinkage_second_moment = 0.0;
};

/// log B10 of paper Eq. (3),
///   B10 = ∫_0^∞ (1+g)^{(n-p-p0)/2} [1 + g(1-R²)]^{-(n-p0)/2} π(g) dg,
/// and the posterior mean of g/(1+g).
///
/// g-prior: closed form. Mixture priors (zellner-siow, hyper-g, hyper-g-n, robust): adaptive
/// Gauss–Kronrod quadrature in t = log g around the mode of the log integrand, on panels whose
/// width doubles away from the peak (docs/methods.md §2.3). The integrand is written as
///   h(t) = -(k/2) log(1+e^t) - (m/2) log(σ(-t) + Q σ(t)) + log π(e^t) + t,
/// which has no cancellation between O(n) terms, so log B10 keeps absolute accuracy ~1e-10
/// for n up to 1e7 and R² in [0, 1 - 1e-12] (|log B10| up to ~1e8, no overflow).
///
/// @param prior   prior on g (bic/aic/lr are rejected: use log_information_criterion).
/// @param log_one_minus_r_squared log(1 - R²) ≤ 0 (natural log; pass the accurate value from
///        fit_nested_models, never log of a rounded 1 - R²).
/// @param n       number of rows (> p + p0); also the scale of g-prior (g = n default),
///                zellner-siow (rate n/2), hyper-g-n and robust priors.
/// @param p       number of tested columns k ≥ 0 (p = 0 gives log B10 = 0, shrinkage 0).
/// @param p0      number of common columns, intercept counted (≥ 0).
/// @throws std::domain_error for non-finite or positive log(1 - R²), n ≤ p + p0, invalid prior
///         parameters; std::invalid_argument for an information criterion.
/// Deterministic.
BayesFactorResult log_bayes_factor_and_shrinkage(const Prior& prior, double log_one_minus_r_squared, double n, int p,
                                                 int p0);

/// log B10 only (same as log_bayes_factor_and_shrinkage(...).log_bayes_factor, cheaper).
double log_bayes_factor(const Prior& prior, double log_one_minus_r_squared, double n, int p, int p0);

/// Natural log of the prior density of g times g, i.e. log π(e^t) + t, for t = log g.
/// -inf outside the support (robust prior below its lower limit). Exposed for tests.
/// @throws as log_bayes_factor.
double log_prior_density_log_g(const Prior& prior, double t, double n, int p, int p0);

/// Lower end of the support of g in t = log g (-inf except for the robust prior, where
/// g > ρ(n+1) - 1 with ρ = 1/(p+p0)).
double log_g_lower_limit(const Prior& prior, double n, int p, int p0);

// ---- Closed forms used as independent test oracles (valid for moderate n·R²) ----

/// Hyper-g closed form (Liang et al. 2008; BAS `logBF_hyperGprior`):
///   log B10 = log((a-2)/(p+a-2)) + log 2F1(m/2, 1; (p+a)/2; R²), m = n - p0.
/// Uses Boost.Math hypergeometric_pFq; overflows for large n·R² (use the quadrature there).
double log_bayes_factor_hyper_g_closed_form(double r_squared, double n, int p, int p0, double a);

/// Robust-prior closed form (Bayarri et al. 2012; BayesVarSel `RobustBF21fun`, generalised to p0):
///   log B10 = -(m/2) log Q - (p/2) log(ρ(n+1)) - log(p+1) + log 2F1((p+1)/2, m/2; (p+3)/2; z),
///   z = (1 - 1/Q)(p+p0)/(n+1) ≤ 0, evaluated through the Pfaff transformation
///   2F1(α, β; γ; z) = (1-z)^{-β} 2F1(γ-α, β; γ; z/(z-1)), whose series has positive terms.
double log_bayes_factor_robust_closed_form(double r_squared, double n, int p, int p0);

}  // namespace dpmu::core
