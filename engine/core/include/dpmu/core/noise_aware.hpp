#pragma once
/// @file noise_aware.hpp
/// Noise-aware model averaging from a released Gram matrix (docs/methods.md §5.11; docs/bma.md
/// "Uncertainty"). The plug-in analysis treats the released G* = G + E (plus a ridge) as if it were
/// the data's Gram matrix: its intervals and probabilities carry the sampling uncertainty only. The
/// noise-aware analysis integrates over the confidential G given G*: with a flat prior on the set
/// 𝒢 of Gram matrices the public bounds allow (admissible_gram), the posterior of G is
///     p(G | G*) ∝ p_E(G* − G) · 1[G ∈ 𝒢],
/// p_E the mechanism's known noise law, and the posterior of (γ, β) given G* is the average of the
/// exact per-G posteriors over it (the model's likelihood depends on the data only through G).
/// Draws from p(G | G*) come by rejection: G^(m) = G* − E^(m) with a fresh E^(m) ~ p_E, kept when
/// admissible; the kept draws are independent and exactly distributed (no burn-in, no chain).
/// Post-processing of the release only: no extra budget and no access to the confidential data.
///
/// References: Bernstein & Sheldon (2019, NeurIPS, "Differentially private Bayesian linear
/// regression") — noise-aware posteriors treating the sufficient statistics as latent; Ferrando,
/// Wang & Sheldon (2022, AISTATS) — re-drawing the mechanism's noise for calibrated intervals;
/// Kazan & Reiter (2024) — priors that respect the clamping bounds. Pure: no I/O, no threads.

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/progress.hpp"
#include "dpmu/core/ssp.hpp"

namespace dpmu::core {

/// Upper bounds of the diagonal of a centred Gram matrix of n rows whose column j lies in an
/// interval of width w_j: Σ_i (x_ij − x̄_j)² ≤ n w_j²/4 (Popoviciu's inequality on the variance).
/// @param widths p + 1 widths (in the units of G), > 0 and finite. @returns n·w_j²/4.
/// @throws std::domain_error for n ≤ 0 or a width that is not positive and finite.
Eigen::VectorXd gram_diagonal_bounds(double n, const Eigen::Ref<const Eigen::VectorXd>& widths);

/// Whether G lies in the admissible set 𝒢 of the public bounds: finite, 0 ≤ G_jj ≤ max_diagonal_j,
/// |G_jk| ≤ sqrt(max_diagonal_j max_diagonal_k) and positive definite (a successful Cholesky
/// factorisation; the singular boundary has probability 0 under the noise law). Symmetry is assumed
/// (the lower triangle is read). @throws std::invalid_argument for mismatched shapes. Deterministic.
bool admissible_gram(const Eigen::Ref<const Eigen::MatrixXd>& gram,
                     const Eigen::Ref<const Eigen::VectorXd>& max_diagonal);

/// Options of the noise-aware analysis.
struct NoiseAwareOptions {
  int draws = 200;        ///< M: accepted draws of G wanted (≥ 1)
  int max_proposals = 0;  ///< proposals at most (0: 100·draws)
  int min_accepted = 0;   ///< fewer accepted draws: fall back to the plug-in (0: min(draws, 20))
  BmaOptions bma;         ///< per draw (enumeration: p ≤ 24); credible_level is the mixture's level
  /// Per draw, the most probable models up to this mass (at most draw_interval_max_models of them)
  /// enter the intervals' mixture; the rest joins CredibleIntervals::omitted_mass (divided by M).
  double draw_interval_mass = 1.0 - 1e-6;
  int draw_interval_max_models = 256;
  /// Further interval levels in (0, 1) from the same mixture, returned in
  /// NoiseAwareResult::extra_intervals (a study's 50/80/95 % intervals at the cost of one mixture).
  std::vector<double> extra_levels;
  /// Reports of the proposals (phase "noise-aware-proposals", every kProgressInterval) and of the
  /// per-draw analyses ("noise-aware-draws", each draw): the R and Python packages check for an
  /// interrupt there (it may throw to stop the analysis).
  ProgressCallback progress;
};

/// Monte Carlo summaries of a noise-aware analysis.
struct NoiseAwareResult {
  BmaResult posterior;    ///< the mixture (or the plug-in analysis of the fallback matrix when fallback)
  int proposals = 0;      ///< noise draws made
  int accepted = 0;       ///< admissible draws kept (the mixture's M)
  bool fallback = false;  ///< fewer than min_accepted: posterior is the plug-in analysis of fallback_gram
  /// Monte Carlo standard errors of the mixture's PIPs and posterior means: the SD across the
  /// accepted draws divided by √M (the draws are independent). Zero-length when fallback.
  Eigen::VectorXd pip_mc_se;
  Eigen::VectorXd mean_mc_se;
  /// Intervals at NoiseAwareOptions::extra_levels, in that order (empty when fallback).
  std::vector<CredibleIntervals> extra_intervals;
};

/// The equal-weight mixture of the exact BMA posteriors of `grams` (the deterministic half of
/// noise_aware_bma): PIPs, model probabilities (log_posterior_probability, when
/// options.bma.keep_all_models) and posterior means are the averages over the draws; posterior SDs
/// come from the averaged second moments (E[β_j²] = mean of sd² + mean²); credible intervals are the
/// quantiles of the pooled mixture (add_model_components with weight P_m(γ)/M, the most probable
/// models of each draw as in NoiseAwareOptions); the highest-probability model is the argmax of the
/// averaged model probabilities and the median-probability model comes from the averaged PIPs; the
/// coefficients of a model are E[β | D*, γ] = Σ_m P_m(γ) E_m[β | γ] / Σ_m P_m(γ); the best
/// predictive model is chosen among the top models and those two (with the averaged G_xx).
/// top_models report the averaged probabilities, with log_marginal, R² and shrinkage of the mean of
/// the draws Ḡ (admissible: 𝒢 is convex). models_evaluated / models_rank_deficient are sums over draws.
/// With one matrix it is bayesian_model_averaging of it (PIPs, means, SDs, models, intervals when
/// the per-draw interval options equal BmaOptions' interval_mass / interval_max_models).
/// @param grams M ≥ 1 matrices (p+1)×(p+1), p ≤ 24. @param details optional: fills pip_mc_se,
/// mean_mc_se (NaN for M = 1) and extra_intervals of a NoiseAwareResult. @throws std::invalid_argument for no matrices
/// or p > 24; as bayesian_model_averaging for each matrix. Deterministic.
BmaResult mix_bma_draws(const std::vector<Eigen::MatrixXd>& grams, double n, const CoefficientPrior& prior,
                        const ModelPrior& model_prior, const NoiseAwareOptions& options,
                        NoiseAwareResult* details = nullptr);

/// Noise-aware model averaging of a release G* (docs/methods.md §5.11): propose E ~ p_E (ssp_noise of
/// `mechanism`) until options.draws admissible G* − E are kept or options.max_proposals are made,
/// then mix_bma_draws of the kept ones. With fewer than min_accepted kept, the posterior is
/// bayesian_model_averaging(fallback_gram) — the release's plug-in analysis (its ridge) — and
/// fallback = true says so.
/// @param released_gram G* (no ridge), (p+1)×(p+1). @param mechanism its noise law in the units of G*.
/// @param max_diagonal p + 1 bounds of admissible_gram (gram_diagonal_bounds of the public bounds).
/// @param fallback_gram the plug-in matrix (G* + rI). Cost: ≤ max_proposals noise draws and Cholesky
/// factorisations of (p+1)², then M enumerations of 2^p models and the interval mixture.
/// @throws std::domain_error for draws < 1, max_proposals < 0, min_accepted < 0, an invalid
/// mechanism, a non-finite G*; std::invalid_argument for shapes; as mix_bma_draws. Draws from `rng`.
template <class Rng>
NoiseAwareResult noise_aware_bma(const Eigen::Ref<const Eigen::MatrixXd>& released_gram, const SspMechanism& mechanism,
                                 const Eigen::Ref<const Eigen::VectorXd>& max_diagonal, double n,
                                 const CoefficientPrior& prior, const ModelPrior& model_prior,
                                 const Eigen::Ref<const Eigen::MatrixXd>& fallback_gram, Rng& rng,
                                 const NoiseAwareOptions& options = {}) {
  constexpr const char* fn = "noise_aware_bma";
  check_ssp_mechanism(mechanism);
  const Eigen::Index d = mechanism.p + 1;
  if (released_gram.rows() != d || released_gram.cols() != d || fallback_gram.rows() != d ||
      fallback_gram.cols() != d || max_diagonal.size() != d) {
    throw_invalid(fn, "released_gram, fallback_gram must be (p+1)x(p+1) and max_diagonal of length p+1, p = " +
                          std::to_string(mechanism.p));
  }
  check_all_finite(fn, "released_gram", released_gram);
  if (options.draws < 1) throw_domain(fn, "draws", options.draws, ">= 1");
  if (options.max_proposals < 0) throw_domain(fn, "max_proposals", options.max_proposals, ">= 0");
  if (options.min_accepted < 0) throw_domain(fn, "min_accepted", options.min_accepted, ">= 0");
  const int max_proposals = options.max_proposals > 0 ? options.max_proposals : 100 * options.draws;
  const int min_accepted = options.min_accepted > 0 ? options.min_accepted : std::min(options.draws, 20);
  NoiseAwareResult out;
  std::vector<Eigen::MatrixXd> kept;
  kept.reserve(static_cast<std::size_t>(options.draws));
  const Eigen::MatrixXd gstar = 0.5 * (released_gram + released_gram.transpose());
  while (out.accepted < options.draws && out.proposals < max_proposals) {
    if (out.proposals % static_cast<int>(kProgressInterval) == 0) {
      report_progress(options.progress, static_cast<std::uint64_t>(out.proposals),
                      static_cast<std::uint64_t>(max_proposals), "noise-aware-proposals");
    }
    Eigen::MatrixXd g = gstar - ssp_noise(mechanism, rng);
    ++out.proposals;
    if (admissible_gram(g, max_diagonal)) {
      kept.push_back(std::move(g));
      ++out.accepted;
    }
  }
  if (out.accepted < min_accepted) {
    out.fallback = true;
    out.posterior = bayesian_model_averaging(fallback_gram, n, prior, model_prior, options.bma);
    return out;
  }
  out.posterior = mix_bma_draws(kept, n, prior, model_prior, options, &out);
  return out;
}

}  // namespace dpmu::core
