#pragma once
/// @file information_criteria.hpp
/// Information criteria and likelihood ratios of nested normal linear models
/// (Peña & Barrientos 2024, §3.1 and §4.1 Eq. 4), and the test statistic that
/// dispatches between them and the Bayes factors of bayes_factor.hpp.

#include "dpmu/core/g_priors.hpp"

namespace dpmu::core {

/// log I10 of paper Eq. (4): I10 = n^{-ρ/2} Λ10 with Λ10 = (1 - R²)^{-n/2}, i.e.
///   log I10 = -(n/2) log(1 - R²) - (ρ/2) log n,
/// ρ = p (bic), 2p/log n (aic, so the penalty is p), 0 (lr).
/// @param kind bic, aic or lr. @param log_one_minus_r_squared log(1 - R²) ≤ 0 (natural log).
/// @param n rows (> 1). @param p tested columns (≥ 0).
/// @throws std::invalid_argument for a Bayesian prior; std::domain_error for invalid numbers.
/// Deterministic; natural-log scale.
double log_information_criterion(PriorKind kind, double log_one_minus_r_squared, double n, int p);

/// 2 log Λ10 = -n log(1 - R²), the likelihood-ratio (deviance) statistic (docs/methods.md §2.4).
/// @throws std::domain_error for log(1 - R²) > 0 or non-finite, n ≤ 0.
double two_log_likelihood_ratio(double log_one_minus_r_squared, double n);

/// The paper's log statistic: log B10 (Eq. 3) for Bayesian priors, log I10 (Eq. 4) for bic/aic/lr.
/// Arguments and errors as log_bayes_factor / log_information_criterion. Natural log.
double log_statistic(const Prior& prior, double log_one_minus_r_squared, double n, int p, int p0);

/// P(H1 | D) = o10 B10 / (1 + o10 B10), o10 = (1 - P(H0))/P(H0), computed as the logistic of the
/// log posterior odds, so it is exact for |log B10| up to ~1e300 (paper §3.1).
/// @param log_statistic log B10 (or log I10). @param prior_probability_h0 in (0, 1).
/// @throws std::domain_error for NaN log_statistic or P(H0) outside (0, 1).
double posterior_probability_h1(double log_statistic, double prior_probability_h0);

}  // namespace dpmu::core
