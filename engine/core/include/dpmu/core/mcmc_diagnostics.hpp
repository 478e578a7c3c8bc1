#pragma once
/// @file mcmc_diagnostics.hpp
/// Convergence diagnostics of several Markov chains of one scalar quantity, as defined by Vehtari,
/// Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding, and localization: an
/// improved R̂ for assessing convergence of MCMC", Bayesian Analysis 16(2):667–718: split chains,
/// rank normalisation, the folded R̂, and the effective sample size from the multi-chain
/// autocorrelation with Geyer's (1992) initial monotone sequence. Pure; deterministic.

#include <Eigen/Dense>
#include <vector>

namespace dpmu::core {

/// Diagnostics of one scalar quantity over M chains of N draws each.
struct ChainSummary {
  double mean = 0.0;      ///< of all draws
  double sd = 0.0;        ///< of all draws (denominator MN − 1)
  double rhat = 1.0;      ///< max(bulk R̂, folded R̂) of the split, rank-normalised chains (Vehtari et al. §4.2)
  double ess_bulk = 0.0;  ///< ESS of the split, rank-normalised draws (Vehtari et al. §4.3)
  double ess_mean = 0.0;  ///< ESS of the split raw draws: the ESS of the mean
  double mc_se = 0.0;     ///< Monte Carlo SE of `mean`: sd/√ess_mean
};

/// The effective sample size of split chains (columns: chains, rows: draws; ≥ 2 columns, ≥ 4 rows),
/// Vehtari et al. (2021) eqs. (10)–(11) with Stan's estimator: autocovariances per chain (biased,
/// divided by N), ρ̂_t = 1 − (W − mean_m acov_m(t))/var⁺, Geyer's initial positive and monotone
/// sequence, τ̂ = −1 + 2 Σ ρ̂_t, ESS = MN/τ̂ capped at MN log10(MN). A constant input gives MN.
double effective_sample_size(const Eigen::Ref<const Eigen::MatrixXd>& chains);

/// The classic R̂ of chains as given (columns: chains): sqrt(var⁺/W), var⁺ = (N − 1)/N W + B/N.
/// All chains constant and equal: 1; constant chains with different values: +inf.
double potential_scale_reduction(const Eigen::Ref<const Eigen::MatrixXd>& chains);

/// Normal scores of the pooled ranks: Φ⁻¹((r − 3/8)/(S − 1/4)), average ranks for ties (Vehtari et al. eq. (14)).
Eigen::MatrixXd rank_normalise(const Eigen::Ref<const Eigen::MatrixXd>& draws);

/// Each chain (column) split into its first and second halves (the middle draw dropped when N is odd).
Eigen::MatrixXd split_chains(const Eigen::Ref<const Eigen::MatrixXd>& chains);

/// All diagnostics of one quantity. @param chains N × M (N ≥ 4 draws per chain, M ≥ 1 chains).
/// @throws std::invalid_argument for fewer than 4 draws or no chain, std::domain_error for a non-finite draw.
ChainSummary summarise_chains(const Eigen::Ref<const Eigen::MatrixXd>& chains);

}  // namespace dpmu::core
