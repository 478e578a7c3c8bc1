#pragma once
/// @file noise_aware_sampler.hpp
/// Noise-aware Bayesian model averaging from a released Gram matrix by data augmentation
/// (docs/methods.md §5.12): a Markov chain over the confidential centred Gram matrix G = S (in the
/// units of the release G*), the model γ and Zellner's g, with the coefficients β, the error
/// variance σ² and the design covariance Σ_x integrated out analytically, targeting
///     p(S, γ, g | G*) ∝ p_E(G* − S) · p(S | γ, g) · p(γ) π(g),
/// p_E the mechanism's exact noise density (Laplace on the unique entries, or the Wishart law of
/// G* − S + kB²I) and p(S | γ, g) the exact law of the centred sufficient statistics of the normal
/// linear model with Gaussian rows (Wishart design, Zellner prior, inverse-gamma σ²,
/// inverse-Wishart Σ_x). β and σ² are drawn from their exact conditionals at every saved
/// iteration. Several chains from dispersed starts; split-R̂ and ESS (Vehtari et al. 2021) of every
/// reported quantity; never falls back to a plug-in answer: `converged` says whether to trust it.
///
/// Following Bernstein & Sheldon (2019, NeurIPS, "Differentially private Bayesian linear
/// regression") — the sufficient statistics as latent variables given the model parameters — with
/// model averaging added, the statistics' exact (not asymptotic normal) laws, and the noise density
/// used exactly in slice updates (Neal 2003) instead of a scale-mixture augmentation. Pure: no I/O,
/// no threads; all randomness from the RngStream passed in.

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/mcmc_diagnostics.hpp"
#include "dpmu/core/model_space.hpp"
#include "dpmu/core/progress.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"

namespace dpmu::core {

/// The priors of the data-augmentation model (docs/methods.md §5.12 "Model").
struct AugmentedModelPrior {
  /// Zellner's g: zellner-siow (g ~ InvGamma(1/2, n/2), integrated by the chain) or g-prior (g
  /// fixed: `g`, default n). Other kinds are refused.
  Prior coefficient;
  double sigma2_shape = 1.0;     ///< a0 > 0 of σ² ~ InvGamma(a0, b0) (a proper prior is required: §5.12)
  double sigma2_scale = 1.0;     ///< b0 > 0
  double design_df = 0.0;        ///< ν0 > p − 1 of Σ_x ~ InvWishart(ν0, Ψ0)
  Eigen::MatrixXd design_scale;  ///< Ψ0, p × p symmetric positive definite
};

/// The default priors from public information (docs/methods.md §5.12 "Default priors"): with
/// column widths w (p + 1 of them, in the units of G), Σ_x ~ InvWishart(p + 2, diag(w_j²/16)) (prior
/// mean diag(w_j²/16): a column spread over its box with SD w_j/4), σ² ~ InvGamma(1, w_y²/16)
/// (scale of the residual SD about w_y/4), and `coefficient` as given.
/// @throws std::domain_error for a width that is not positive and finite, std::invalid_argument
/// for fewer than 2 widths.
AugmentedModelPrior default_augmented_prior(const Eigen::Ref<const Eigen::VectorXd>& widths, const Prior& coefficient);

/// Options of the sampler.
struct NoiseAwareSamplerOptions {
  int chains = 4;                ///< ≥ 2 (R̂ needs several chains)
  int warmup = 1000;             ///< per chain: slice widths adapted, draws discarded
  int iterations = 1000;         ///< per chain, first batch of saved draws (≥ 20)
  int max_iterations = 16000;    ///< per chain: saved draws extended (§5.12) until converged or this
  double max_rhat = 1.01;        ///< convergence: every monitored R̂ ≤ this
  double min_ess = 400.0;        ///< convergence: every monitored bulk ESS ≥ this
  int enumeration_limit = 10;    ///< p ≤ this: γ | g, S drawn exactly over all 2^p models; else single-site Gibbs
  double credible_level = 0.95;  ///< equal-tailed intervals from the draws (0: none)
  int top_models = 10;
  bool keep_draws = false;  ///< fill NoiseAwareSamplerResult::beta_draws, sigma2_draws, inclusion_draws
  /// Reports "noise-aware-warmup" (sweeps of chains × warmup) and "noise-aware-sampling" (saved
  /// sweeps of the current target chains × per-chain draws) about every 64 sweeps; may throw to stop.
  ProgressCallback progress;
};

/// One monitored quantity.
struct MonitoredQuantity {
  std::string name;  ///< "beta[j]", "sigma2", "pip[j]", "log_G[j,j]"
  ChainSummary summary;
};

/// The sampler's answer.
struct NoiseAwareSamplerResult {
  /// PIPs (Rao–Blackwellised: averages of P(γ_j = 1 | g, S) over draws), model probabilities
  /// (averages of P(γ | g, S) with enumeration, visit frequencies otherwise), posterior means
  /// (averages of E[β | γ, g, S]) and SDs of β, equal-tailed credible intervals from the pooled β
  /// draws, HPM/MPM/BPM and their coefficients E[β | G*, γ]. Slopes in the units of G*.
  BmaResult posterior;
  Eigen::VectorXd pip_mc_se;   ///< MC SEs of the PIPs
  Eigen::VectorXd mean_mc_se;  ///< MC SEs of the posterior means
  double sigma2_mean = 0.0;
  double sigma2_mc_se = 0.0;
  std::vector<MonitoredQuantity> monitored;  ///< β_j, σ², PIP_j, log G_jj
  double max_rhat = 0.0;
  double min_ess = 0.0;
  bool converged = false;  ///< every R̂ ≤ max_rhat and every ESS ≥ min_ess
  std::string reason;      ///< why not converged (empty when converged)
  int chains = 0;
  int warmup = 0;
  int iterations = 0;  ///< saved draws per chain
  double log_density_evaluations = 0.0;
  /// Pooled draws (keep_draws): rows = chains × iterations (chain by chain).
  Eigen::MatrixXd beta_draws;
  Eigen::VectorXd sigma2_draws;
  Eigen::MatrixXd inclusion_draws;  ///< Rao–Blackwellised P(γ_j = 1 | ·) per draw
};

/// The noise-aware BMA sampler of a release G* (docs/methods.md §5.12).
/// @param released_gram G* (no ridge), (p+1)×(p+1), response last, in the units of the mechanism.
/// @param mechanism its noise law (ssp_noise: Laplace scale Δ1/ε, or Wishart W(k, B²I) − kB²I).
/// @param n rows (public), n > p + 2. @param prior the priors (default_augmented_prior).
/// @param model_prior the prior over models. @param rng the stream (public post-processing randomness).
/// Cost per iteration: O(p²) slice updates of the (p+1)(p+2)/2 entries in two coordinate systems,
/// each a few Cholesky factorisations of (p+1)², plus 2^p model fits (enumeration) or 2p (Gibbs).
/// @throws std::invalid_argument for shapes, p > 30 or a coefficient prior other than g-prior /
/// zellner-siow; std::domain_error for invalid options, priors, n ≤ p + 2 or a non-finite G*.
NoiseAwareSamplerResult noise_aware_sampler(const Eigen::Ref<const Eigen::MatrixXd>& released_gram,
                                            const SspMechanism& mechanism, double n, const AugmentedModelPrior& prior,
                                            const ModelPrior& model_prior, RngStream& rng,
                                            const NoiseAwareSamplerOptions& options = {});

// ---- The pieces, exposed for tests (docs/methods.md §5.12 "Conditionals") ----

/// log p(S | γ, g) of the collapsed model up to a constant depending only on (n, p, priors):
///   ((n−p−2)/2) log|XX| − ((n−1+ν0)/2) log|Ψ0+XX| − ½ log|XX| + (ν/2 − 1) log R
///   − (|γ|/2) log(1+g) − (a0 + (n−1)/2) log(b0 + (yy − s Q_γ)/2),
/// ν = n − 1 − p, R = yy − Xy'XX⁻¹Xy, s = g/(1+g), Q_γ = Xy_γ'XX_γγ⁻¹Xy_γ. −inf outside the support
/// (S not positive definite). Relative values are exact both in S (fixed γ, g) and in (γ, g) (fixed S).
double augmented_log_density(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, ModelMask model, double g,
                             const AugmentedModelPrior& prior);

/// log p_E(G* − S) up to a constant: −Σ_{i≤j} |E_ij|/b (Laplace), or, with M = G* − S + kB²I,
/// ((k − d − 1)/2) log|M| − tr(M)/(2B²) (Wishart; −inf unless M is positive definite).
double mechanism_log_density(const SspMechanism& mechanism, const Eigen::Ref<const Eigen::MatrixXd>& released_gram,
                             const Eigen::Ref<const Eigen::MatrixXd>& gram);

/// One univariate slice-sampling update (Neal 2003, Ann. Statist. 31:705, §4: stepping out with at
/// most `max_steps` steps of width `width`, then shrinkage) of x0 under the log density `log_f`
/// (−inf outside the support; log_f(x0) finite). Returns the new point; adds the evaluations made to
/// `evaluations`. Leaves the target invariant for any width > 0.
template <class LogF>
double slice_sample(double x0, double log_f0, LogF&& log_f, double width, RngStream& rng, int max_steps,
                    double& evaluations, double* log_f_new = nullptr) {
  const double level = log_f0 + std::log(uniform_open01(rng));
  double lo = x0 - width * uniform_open01(rng);
  double hi = lo + width;
  int j = static_cast<int>(std::floor(max_steps * uniform_open01(rng)));
  int k = max_steps - 1 - j;
  while (j-- > 0) {
    evaluations += 1.0;
    if (!(log_f(lo) > level)) break;
    lo -= width;
  }
  while (k-- > 0) {
    evaluations += 1.0;
    if (!(log_f(hi) > level)) break;
    hi += width;
  }
  for (;;) {
    const double x = lo + (hi - lo) * uniform_open01(rng);
    const double fx = log_f(x);
    evaluations += 1.0;
    if (fx > level) {
      if (log_f_new) *log_f_new = fx;
      return x;
    }
    if (x < x0) {
      lo = x;
    } else {
      hi = x;
    }
    if (!(hi - lo > 0.0)) {  // floating-point exhaustion: stay
      if (log_f_new) *log_f_new = log_f0;
      return x0;
    }
  }
}

/// The conditional log weights log p(γ) − (|γ|/2) log(1+g) − (a0 + (n−1)/2) log(b0 + (yy − s Q_γ)/2)
/// of all 2^p models (index = mask) given g and S; unnormalised. Rank-deficient XX_γγ: −inf.
Eigen::VectorXd augmented_model_log_weights(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n, double g,
                                            const AugmentedModelPrior& prior, const ModelPrior& model_prior);

}  // namespace dpmu::core
