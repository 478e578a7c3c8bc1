#pragma once
/// @file audit.hpp
/// Empirical privacy auditing: a statistical lower bound on the ε of a mechanism from its outputs
/// on two neighbouring data sets (Jagielski, Ullman & Oprea 2020, "Auditing differentially private
/// machine learning: how private is private SGD?", NeurIPS; Nasr et al. 2021). If a mechanism is
/// (ε, δ)-DP then for every event E, P(M(D) ∈ E) ≤ e^ε P(M(D') ∈ E) + δ, so
///     ε ≥ log((P(M(D) ∈ E) − δ) / P(M(D') ∈ E)).
/// The auditor draws N releases on each data set, chooses a score and an event E = {score > t}
/// (or its complement, in either direction) on the first half of the samples, and bounds the two
/// probabilities on the second half with one-sided Clopper–Pearson limits, each at level
/// (1 − confidence)/2, so the reported bound holds with probability ≥ confidence. A bound above the
/// claimed ε is evidence that the mechanism is not ε-DP; a bound below it is consistent with the
/// claim (an audit cannot prove privacy). Pure; deterministic given the samples.

#include <Eigen/Dense>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace dpmu::core {

/// One-sided Clopper–Pearson bounds for a binomial proportion with k successes in n trials:
/// P(p ≥ lower) ≥ 1 − α and P(p ≤ upper) ≥ 1 − α. lower = 0 if k = 0, upper = 1 if k = n.
/// @throws std::domain_error for n = 0, k > n or α ∉ (0, 1).
double clopper_pearson_lower(std::size_t k, std::size_t n, double alpha);
double clopper_pearson_upper(std::size_t k, std::size_t n, double alpha);

/// How releases (vectors) are reduced to a scalar score.
enum class AuditScore {
  /// Laplace log-likelihood ratio with centres estimated on the selection half:
  /// s(o) = Σ_u |o_u − med'_u| − |o_u − med_u| (med, med' the coordinate-wise medians on D, D').
  /// Most powerful for Laplace noise; usable for any continuous release.
  laplace_likelihood_ratio,
  /// The release is one category (entry 0, e.g. a selected model): s(o) = log((c(o)+1)/(c'(o)+1)),
  /// with c, c' the counts of that category in the selection halves.
  categorical,
};

struct AuditOptions {
  double confidence = 0.95;   ///< of the lower bound, in (0, 1)
  int candidate_events = 50;  ///< thresholds tried on the selection half (quantiles of the pooled scores)
  double delta = 0.0;         ///< the claimed δ (subtracted from P(M(D) ∈ E))
  AuditScore score = AuditScore::laplace_likelihood_ratio;
};

/// The result of one audit.
struct AuditResult {
  double epsilon_lower_bound = 0.0;  ///< ≥ 0; holds with probability ≥ confidence
  double epsilon_estimate = 0.0;     ///< log((p̂ − δ)/q̂) on the evaluation half (may be ±inf)
  double confidence = 0.95;
  std::string event;                      ///< e.g. "score > 1.23 on D vs D'"
  double probability_first = 0.0;         ///< p̂ on the evaluation half
  double probability_second = 0.0;        ///< q̂
  double probability_first_lower = 0.0;   ///< Clopper–Pearson lower bound of p
  double probability_second_upper = 1.0;  ///< Clopper–Pearson upper bound of q
  std::size_t selection_samples = 0;      ///< per data set
  std::size_t evaluation_samples = 0;     ///< per data set
};

/// Audit from N releases on D (`first`) and N on D' (`second`), each a vector of the same length.
/// The first ⌊N/2⌋ of each are used to choose the score and the event, the rest to bound ε.
/// @throws std::invalid_argument for fewer than 20 samples per side, unequal counts or lengths;
///   std::domain_error for invalid options.
AuditResult audit_releases(const std::vector<Eigen::VectorXd>& first, const std::vector<Eigen::VectorXd>& second,
                           const AuditOptions& options);

}  // namespace dpmu::core
