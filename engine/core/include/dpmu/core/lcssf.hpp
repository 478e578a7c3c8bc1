#pragma once
/// @file lcssf.hpp
/// Differentially private model selection with penalised and constrained likelihood:
/// Lei, Charest, Slavković, Smith & Fienberg (2018), "Differentially private model selection
/// with penalized and constrained likelihood", J. R. Stat. Soc. A 181, arXiv 1607.04204
/// ("LCSSF"). Specification: docs/methods.md §6 and §8 A21–A22.
///
/// Only fragments of LCSSF are available; every display formula is lost. What is implemented
/// here follows docs/methods.md §6, whose tags are repeated in each comment:
///   [text] stated in the LCSSF fragments, [R] reconstructed by us, [U] unknown (placeholder).
/// Every [U] constant is a named field of LcssfSettings with a documented default, and
/// `reconstruction_labels()` lists the labels that outputs must carry.
///
/// Models are bitmasks (bit j = predictor j included, ModelMask as elsewhere in dpmu);
/// the candidate class is all 2^d subsets, enumerated in increasing mask order 0, 1, …, 2^d − 1.
/// The linear model has no intercept (LCSSF §2 as quoted in docs/methods.md §6.1).
///
/// Pure: no I/O, no threads; random functions take the generator explicitly.

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/model_space.hpp"  // ModelMask, model_size
#include "dpmu/core/random.hpp"

namespace dpmu::core {

/// Largest number of predictors for which all 2^d models are enumerated.
inline constexpr int kMaxEnumeratedPredictors = 20;

// ---------------------------------------------------------------------------------------------
// Constrained least squares (docs/methods.md §6.2 [R])
// ---------------------------------------------------------------------------------------------

/// Solution of min_{‖β‖₁ ≤ R} ‖y − Xβ‖² for one model.
struct ConstrainedLeastSquaresFit {
  Eigen::VectorXd coefficients;  ///< β̂ (k entries, the model's predictors in increasing index order)
  double rss = 0.0;              ///< S = ‖y − Xβ̂‖² (≥ 0)
  double multiplier = 0.0;       ///< λ ≥ 0 of the ℓ1 constraint (0 when the OLS solution is inside)
  bool on_boundary = false;      ///< true iff ‖β̂_OLS‖₁ > R, so ‖β̂‖₁ = R
  int steps = 0;                 ///< homotopy steps taken (0 for OLS)
  double kkt_violation = 0.0;    ///< max KKT residual of the returned β̂ (scaled as the gradient)
};

/// Centre every column of x and y at its mean and scale it to sample sd 1 (n − 1 divisor; a
/// constant column is only centred). Non-private preprocessing, as LCSSF's "standardized" data
/// (Lei et al. 2018 §5): it uses the confidential means and sds and is not covered by the DP
/// guarantee. x: n × d, y: length n, both in place.
void standardize_columns(Eigen::Ref<Eigen::MatrixXd> x, Eigen::Ref<Eigen::VectorXd> y);

/// Exact ℓ1-constrained least squares from sufficient statistics (a lasso in constraint form).
///
/// Minimises f(β) = β'Gβ − 2c'β + yty over ‖β‖₁ ≤ R. If G is positive definite and the OLS
/// solution G⁻¹c has ‖·‖₁ ≤ R, it is returned. Otherwise the solution lies on the boundary
/// and is found exactly by the lasso homotopy (LARS with the lasso modification; Osborne,
/// Presnell & Turlach 2000; Efron, Hastie, Johnstone & Tibshirani 2004): the piecewise-linear
/// path β(λ) = argmin ½β'Gβ − c'β + λ‖β‖₁ is followed from λ = max|c_j| down to the λ at which
/// ‖β(λ)‖₁ = R; each segment is solved in closed form, so the result is exact up to rounding.
/// The KKT conditions (sufficient for this convex problem) are then verified:
/// g = Gβ − c; g_j = −λ sign β_j on the support; |g_j| ≤ λ off it; λ ≥ 0; ‖β‖₁ = R when λ > 0.
///
/// @param gram k×k Gram matrix X'X of the model's predictors (symmetric positive definite;
///   k may be 0). @param xty k-vector X'y. @param yty y'y. @param radius R > 0.
/// @return the fit; rss = yty − 2c'β + β'Gβ clamped at 0.
/// @throws std::invalid_argument for inconsistent sizes; std::domain_error for R ≤ 0 or
///   non-finite input, or if G is not positive definite (a singular design: the minimiser is
///   not unique; LCSSF's setting has n ≥ d continuous predictors).
/// Deterministic.
ConstrainedLeastSquaresFit constrained_least_squares(const Eigen::Ref<const Eigen::MatrixXd>& gram,
                                                     const Eigen::Ref<const Eigen::VectorXd>& xty, double yty,
                                                     double radius);

/// Convenience overload from the data: X n×k, y n-vector. Same method and errors as above.
ConstrainedLeastSquaresFit constrained_least_squares(const Eigen::Ref<const Eigen::MatrixXd>& x,
                                                     const Eigen::Ref<const Eigen::VectorXd>& y, double radius);

/// All models of d predictors in enumeration order (mask 0 … 2^d − 1).
/// @throws std::domain_error unless 0 ≤ d ≤ kMaxEnumeratedPredictors (20). Deterministic.
std::vector<ModelMask> all_models(int num_predictors);

/// Constrained residual sums of squares S_M(D) = min_{β ∈ Θ_M, ‖β‖₁ ≤ R} ‖y − Xβ‖² for every
/// model in `models` (docs/methods.md §6.2 [R]); the empty model has S = ‖y‖².
/// @param x n×d design (no intercept column), @param y n-vector, @param radius R > 0.
/// @return one S per model, in the order of `models`.
/// @throws std::invalid_argument for size mismatches or a model using a predictor ≥ d;
///   std::domain_error for R ≤ 0, non-finite data, d > 20, or a singular submodel design.
/// Deterministic. Cost: one d×d Gram matrix, then O(k³) per model (OLS) plus O(k³) per
/// homotopy step when the constraint is active.
/// @param singular_ridge τ ≥ 0: if > 0, a submodel whose Gram matrix is not positive definite is
///   not an error; its S_M is min_{‖β‖₁ ≤ R} ‖y − Xβ‖² + τ‖β‖² (G + τI is PD), which exceeds the
///   true constrained minimum by at most τR² (a public, data-independent bound).
/// @param singular_models if non-null, receives the number of submodels that needed τ.
std::vector<double> constrained_rss(const Eigen::Ref<const Eigen::MatrixXd>& x,
                                    const Eigen::Ref<const Eigen::VectorXd>& y, std::span<const ModelMask> models,
                                    double radius, double singular_ridge = 0.0, std::size_t* singular_models = nullptr);

// ---------------------------------------------------------------------------------------------
// Data bound, clamping and sensitivity (docs/methods.md §6.1, §6.3)
// ---------------------------------------------------------------------------------------------

/// Which data bound and which sensitivity of S_M are used (docs/methods.md §6.1 readings, §6.6 switch
/// `lcssf_delta`, A21). LCSSF's own constant is [U].
enum class LcssfDelta {
  r2_1pR2,  ///< reading (a): ‖X_i‖_∞ ≤ r, |Y_i| ≤ r; Δ_S = r²(1+R)² (default; a valid bound)
  rpR_2,    ///< reading (b): ‖X_i‖_∞ ≤ 1, |Y_i| ≤ r; Δ_S = (r+R)² (a valid bound)
  one_pR_2  ///< "1pR_2": Δ_S = (1+R)² with the data clamped as in (a) — matches LCSSF's reported
            ///< accuracy (§6.6) but is a valid DP bound only if r ≤ 1 (else labelled not DP)
};

/// Canonical name: "r2_1pR2", "rpR_2", "1pR_2".
std::string to_string(LcssfDelta delta_kind);

/// Parse a canonical name. @throws std::invalid_argument for an unknown name (lists the valid ones).
LcssfDelta lcssf_delta_from_string(std::string_view name);

/// Result of clamping data into the declared bound (docs/architecture.md §3.7: clamp and count, never drop).
struct ClampedData {
  Eigen::MatrixXd x;                  ///< n×d, entries clamped into [−bx, bx]
  Eigen::VectorXd y;                  ///< n, entries clamped into [−r, r]
  std::size_t clamped_x_entries = 0;  ///< number of X entries that were moved
  std::size_t clamped_y_entries = 0;  ///< number of Y entries that were moved
};

/// Bound on |X_ij| under a calibration: r for r2_1pR2 and 1pR_2, 1 for rpR_2 (docs/methods.md §6.1).
double predictor_bound(LcssfDelta delta_kind, double data_bound);

/// Clamp Y into [−r, r] and X into [−predictor_bound, predictor_bound] and count the moves.
/// @throws std::domain_error for r ≤ 0 or non-finite r, NaN/Inf data; std::invalid_argument for
///   size mismatch. Deterministic.
ClampedData clamp_to_data_bound(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                                double data_bound, LcssfDelta delta_kind);

/// Global ℓ1 sensitivity of S_M(D) under replace-one-row neighbours (docs/methods.md §6.3 [R]):
/// r²(1+R)² (r2_1pR2), (r+R)² (rpR_2), (1+R)² (1pR_2; valid only if r ≤ 1). Each squared
/// residual lies in [0, (max|Y − X'β|)²] uniformly over the ℓ1 ball, and one row changes.
/// @throws std::domain_error for r ≤ 0 or R ≤ 0 (or non-finite). Deterministic.
double rss_l1_sensitivity(double data_bound, double radius, LcssfDelta delta_kind);

/// True iff the calibration is a valid DP sensitivity bound for data clamped by
/// clamp_to_data_bound: always for r2_1pR2 and rpR_2; for 1pR_2 only when r ≤ 1.
bool is_valid_dp_calibration(double data_bound, LcssfDelta delta_kind);

// ---------------------------------------------------------------------------------------------
// Scores
// ---------------------------------------------------------------------------------------------

/// Penalised constrained least squares L*(M; D) = c·S_M(D) + φ|M| (docs/methods.md §6.2 [R]; the
/// scale c is [U], default 1/(2σ²) with σ = 1, i.e. 0.5). Same order as `models`.
/// @throws std::invalid_argument for size mismatch; std::domain_error for c ≤ 0, φ < 0 or NaN.
std::vector<double> penalized_least_squares_scores(std::span<const double> rss, std::span<const ModelMask> models,
                                                   double objective_scale, double penalty);

/// Truncated penalised profile likelihood L̃(M; D) = (n/2) log(max(S_M/n, τ²)) + φ|M|
/// (docs/methods.md §6.5 step 2 [R]; untruncated when τ² = 0). Natural log.
/// @throws std::invalid_argument for size mismatch; std::domain_error for n = 0, φ < 0, τ² < 0,
///   or τ² = 0 with some S_M = 0.
std::vector<double> profile_likelihood_scores(std::span<const double> rss, std::span<const ModelMask> models,
                                              std::size_t n, double penalty, double variance_truncation);

/// ℓ1 sensitivity of L̃ with truncation τ² > 0: r²(1+R)²/(2τ²) with the Δ_S of the calibration
/// replacing r²(1+R)² (docs/methods.md §6.5 [R]): |log max(a,τ²) − log max(b,τ²)| ≤ |a − b|/τ².
/// @throws std::domain_error for non-positive or non-finite arguments.
double profile_likelihood_l1_sensitivity(double rss_l1_sensitivity, double variance_truncation);

// ---------------------------------------------------------------------------------------------
// Selection mechanisms and their exact probabilities
// ---------------------------------------------------------------------------------------------

/// Report-noisy-min: argmin_j {q_j + W_j}, W_j iid Laplace(0, b) (docs/methods.md §6.1 [R]).
/// With b = 2Δ/ε it is ε-DP for any score of ℓ1 sensitivity Δ. Ties (probability 0) go to
/// the lower index. Draws scores.size() Laplace variates from `rng` (one 64-bit word each).
/// @throws std::invalid_argument for no scores; std::domain_error for b ≤ 0 or non-finite scores.
template <class Rng>
std::size_t report_noisy_min(std::span<const double> scores, double laplace_scale, Rng& rng);

/// Exact P(report_noisy_min returns j) for iid Laplace(0, b) noise:
/// P_j = ∫ f_b(w) Π_{k≠j} P(W > q_j − q_k + w) dw, by adaptive Gauss–Kronrod (Boost.Math,
/// 15 points) on the pieces between the kinks w ∈ {0} ∪ {q_k − q_j}, truncated to
/// |w| ≤ 60b (neglected mass ≤ e^{−60}); the products are accumulated in log space.
/// Not on the log scale; the result sums to 1 up to quadrature error (~1e-12).
/// Cost O(m² · pieces): meant for m ≲ 64 models.
/// @throws std::invalid_argument for no scores; std::domain_error for b ≤ 0 or non-finite scores.
std::vector<double> report_noisy_min_probabilities(std::span<const double> scores, double laplace_scale);

/// Exponential mechanism for a score to be minimised (McSherry & Talwar 2007):
/// log P(j) = −ε q_j/(2Δ) − log Σ_k exp(−ε q_k/(2Δ)), by log_sum_exp (natural log).
/// ε-DP for a score of ℓ1 sensitivity Δ. Deterministic.
/// @throws std::invalid_argument for no scores; std::domain_error for ε ≤ 0, Δ ≤ 0, non-finite.
std::vector<double> exponential_mechanism_log_probabilities(std::span<const double> scores, double epsilon,
                                                            double l1_sensitivity);

/// Draw an index from natural-log probabilities (normalised or not) by inversion of the CDF
/// computed relative to the largest entry. One uniform draw from `rng`.
/// @throws std::invalid_argument for an empty vector; std::domain_error for NaN or all −∞.
template <class Rng>
std::size_t sample_log_probabilities(std::span<const double> log_probabilities, Rng& rng);

// ---------------------------------------------------------------------------------------------
// Algorithms 1 and 2
// ---------------------------------------------------------------------------------------------

/// How Algorithm 2 selects once τ² is released (docs/methods.md §6.5 [U]).
enum class Alg2Selection {
  exponential_mechanism,  ///< P ∝ exp(−ε L̃/(2Δ_L)) (default)
  noisy_min               ///< argmin L̃ + Laplace(0, 2Δ_L/ε)
};
std::string to_string(Alg2Selection s);
/// @throws std::invalid_argument for a name other than "exponential_mechanism", "noisy_min".
Alg2Selection alg2_selection_from_string(std::string_view name);

/// Tuning parameters and reconstructed constants. Defaults are docs/methods.md A21's.
struct LcssfSettings {
  double radius = 0.0;                          ///< R > 0, ℓ1 bound on β [text]
  double penalty = 0.0;                         ///< φ_n ≥ 0 [text]; on the scale of the score (see objective_scale)
  double data_bound = 0.0;                      ///< r > 0 [text: exists; form U]; must be public for a DP release
  LcssfDelta delta_kind = LcssfDelta::r2_1pR2;  ///< bound reading / sensitivity [U], default (a)
  double objective_scale = 0.5;                 ///< c in L* = c·S + φ|M| [U]; default 1/(2σ²), σ = 1
  double noise_factor = 2.0;                    ///< κ: Algorithm 1 Laplace scale κΔ/ε [U]; 2 is ε-DP for any score
  double variance_floor = 0.01;                 ///< τ²_min > 0, public floor of Algorithm 2's released variance [R]
  Alg2Selection alg2_selection = Alg2Selection::exponential_mechanism;  ///< [U]
  /// τ of constrained_rss for singular submodels (0: a singular submodel is an error). Releases set
  /// it (LcssfRelease) and lcssf_prepare then adds τR² to Δ_S.
  double singular_ridge = 0.0;
};

/// Validate settings for Algorithm 1 (and 2 if `algorithm2`). Names the offending field.
/// @throws std::domain_error for R ≤ 0, φ < 0, r ≤ 0, c ≤ 0, κ ≤ 0, τ²_min ≤ 0, NaN.
void check_lcssf_settings(std::string_view function, const LcssfSettings& settings, bool algorithm2);

/// Labels that every output of a run with these settings must carry: which constants are
/// reconstructions ([R]) or placeholders ([U]) and their values, and whether the release is DP.
std::vector<std::string> reconstruction_labels(const LcssfSettings& settings, int algorithm);

/// Output of Algorithms 1 and 2. Only `selected` (and for Algorithm 2 the released variance)
/// is private; the rest is for research and must not be released.
struct LcssfSelection {
  ModelMask selected = 0;               ///< the private selection M̂
  ModelMask non_private_minimiser = 0;  ///< argmin of the (non-noisy) score — NOT private
  std::vector<ModelMask> models;        ///< candidate class, enumeration order
  std::vector<double> rss;              ///< S_M(D) of the clamped data — NOT private
  std::vector<double> scores;           ///< L* (Alg. 1) or L̃ (Alg. 2) — NOT private
  double rss_l1_sensitivity = 0.0;      ///< Δ_S
  double score_l1_sensitivity = 0.0;    ///< c·Δ_S (Alg. 1) or Δ_L (Alg. 2)
  double laplace_scale = 0.0;           ///< noise scale of the selection step (0 for the exp. mech.)
  std::size_t clamped_x_entries = 0;
  std::size_t clamped_y_entries = 0;
  std::size_t singular_models = 0;  ///< submodels that needed the singular ridge — NOT private
  bool dp_valid = true;             ///< false for 1pR_2 with r > 1
  // Algorithm 2 only
  double released_variance = 0.0;       ///< ŝ (private, ε); may be negative
  double variance_truncation = 0.0;     ///< τ² = max(ŝ, τ²_min)
  double variance_laplace_scale = 0.0;  ///< Δ_S/(nε)
};

/// LCSSF Algorithm 1, "noisy penalized constrained least squares" (ε-DP) [text: name, ε-DP,
/// Laplace noise]; steps [R] (docs/methods.md §6.4): clamp to the bound, S_M for every M of
/// {0,1}^d, L* = c·S + φ|M|, release argmin_M {L*(M) + W_M}, W_M iid Laplace(0, κ·c·Δ_S/ε).
/// @param x n×d (d ≤ 20, no intercept), @param y n. @param epsilon ε > 0.
/// @throws as check_lcssf_settings, constrained_rss and clamp_to_data_bound; std::domain_error
///   for ε ≤ 0 or non-finite. Draws 2^d Laplace variates from `rng`.
template <class Rng>
LcssfSelection lcssf_algorithm1(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                                const LcssfSettings& settings, double epsilon, Rng& rng);

/// "Algorithm-2-like" placeholder of LCSSF Algorithm 2, "noisy penalized profile likelihood",
/// (2ε, δ)-DP [text: name, budget]; steps are docs/methods.md §6.5 [R — not LCSSF's algorithm]:
/// 1. ŝ = min_M S_M/n + Laplace(0, Δ_S/(nε)) − (Δ_S/(nε)) log(1/(2δ)) (P(ŝ > min S/n) ≤ δ);
///    τ² = max(ŝ, τ²_min).
/// 2. L̃(M) = (n/2) log(max(S_M/n, τ²)) + φ|M|, Δ_L = Δ_S/(2τ²).
/// 3. exponential mechanism P ∝ exp(−ε L̃/(2Δ_L)) (or noisy min with Laplace(0, 2Δ_L/ε)).
/// Because of the truncation this placeholder is in fact 2ε-DP; δ only shifts ŝ down.
/// @param delta δ ∈ (0, 1). Other parameters and errors as lcssf_algorithm1.
/// Draws 1 Laplace variate, then 1 uniform (exponential mechanism) or 2^d Laplace variates.
template <class Rng>
LcssfSelection lcssf_algorithm2(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                                const LcssfSettings& settings, double epsilon, double delta, Rng& rng);

/// Deterministic part of Algorithms 1 and 2: validate, clamp to the data bound (counted),
/// S_M for all 2^d models, Δ_S, dp_valid. Fills models, rss, rss_l1_sensitivity, clamp counts.
/// `function` names the caller in error messages. Errors as lcssf_algorithm1.
LcssfSelection lcssf_prepare(std::string_view function, const Eigen::Ref<const Eigen::MatrixXd>& x,
                             const Eigen::Ref<const Eigen::VectorXd>& y, const LcssfSettings& settings, double epsilon,
                             bool algorithm2);

/// Random part of Algorithm 1 on a prepared selection (so a fixed data set's S_M are computed
/// once for many releases): scores, noise scale, report-noisy-min. Same draws as lcssf_algorithm1.
template <class Rng>
LcssfSelection lcssf_release_algorithm1(LcssfSelection prepared, const LcssfSettings& settings, double epsilon,
                                        Rng& rng);

/// Random part of Algorithm 2 on a prepared selection of n rows. Same draws as lcssf_algorithm2.
/// @throws std::domain_error for δ ∉ (0, 1).
template <class Rng>
LcssfSelection lcssf_release_algorithm2(LcssfSelection prepared, std::size_t n, const LcssfSettings& settings,
                                        double epsilon, double delta, Rng& rng);

/// min_M S_M of a prepared selection (confidential). @throws std::invalid_argument if it has no models.
double lcssf_minimum_rss(const LcssfSelection& prepared);
/// Steps 1 (after the noise) to 3 of Algorithm 2: ŝ = noisy_mean_rss − b log(1/(2δ)) with
/// noisy_mean_rss = min S/n + Laplace(b), b = Δ_S/(nε) drawn by the caller (e.g. an exact discrete
/// sampler for a real release), τ² = max(ŝ, τ²_min), then the selection. Draws as
/// lcssf_release_algorithm2 after its first variate. @throws std::domain_error for δ ∉ (0, 1).
template <class Rng>
LcssfSelection lcssf_select_algorithm2(LcssfSelection prepared, std::size_t n, const LcssfSettings& settings,
                                       double epsilon, double delta, double noisy_mean_rss, Rng& rng);
namespace detail {
void check_scores(const char* function, std::span<const double> scores);
std::size_t argmin(std::span<const double> v);
}  // namespace detail

// ------------------------------------------------------------------------ template definitions

template <class Rng>
std::size_t report_noisy_min(std::span<const double> scores, double laplace_scale, Rng& rng) {
  detail::check_scores("report_noisy_min", scores);
  if (!(std::isfinite(laplace_scale) && laplace_scale > 0.0)) {
    throw_domain("report_noisy_min", "laplace_scale", laplace_scale, "finite and > 0");
  }
  std::size_t best = 0;
  double best_value = 0.0;
  for (std::size_t j = 0; j < scores.size(); ++j) {
    const double v = scores[j] + laplace(rng, laplace_scale);
    if (j == 0 || v < best_value) {
      best = j;
      best_value = v;
    }
  }
  return best;
}

template <class Rng>
std::size_t sample_log_probabilities(std::span<const double> log_probabilities, Rng& rng) {
  if (log_probabilities.empty()) throw_invalid("sample_log_probabilities", "log_probabilities is empty");
  double hi = -std::numeric_limits<double>::infinity();
  for (double v : log_probabilities) {
    if (std::isnan(v)) throw_domain("sample_log_probabilities", "a log probability", v, "not NaN");
    if (v > hi) hi = v;
  }
  if (!std::isfinite(hi)) throw_domain("sample_log_probabilities", "the largest log probability", hi, "finite");
  double total = 0.0;
  for (double v : log_probabilities) total += std::exp(v - hi);
  const double u = uniform_open01(rng) * total;
  double cum = 0.0;
  std::size_t last_positive = 0;
  for (std::size_t j = 0; j < log_probabilities.size(); ++j) {
    const double w = std::exp(log_probabilities[j] - hi);
    if (w > 0.0) last_positive = j;
    cum += w;
    if (u < cum) return j;
  }
  return last_positive;  // rounding: u ≥ the accumulated total
}

template <class Rng>
LcssfSelection lcssf_release_algorithm1(LcssfSelection prepared, const LcssfSettings& settings, double epsilon,
                                        Rng& rng) {
  LcssfSelection out = std::move(prepared);
  out.scores = penalized_least_squares_scores(out.rss, out.models, settings.objective_scale, settings.penalty);
  out.score_l1_sensitivity = settings.objective_scale * out.rss_l1_sensitivity;
  out.laplace_scale = settings.noise_factor * out.score_l1_sensitivity / epsilon;
  out.non_private_minimiser = out.models[detail::argmin(out.scores)];
  out.selected = out.models[report_noisy_min(out.scores, out.laplace_scale, rng)];
  return out;
}

template <class Rng>
LcssfSelection lcssf_release_algorithm2(LcssfSelection prepared, std::size_t n, const LcssfSettings& settings,
                                        double epsilon, double delta, Rng& rng) {
  if (!(delta > 0.0 && delta < 1.0)) throw_domain("lcssf_algorithm2", "delta", delta, "in (0, 1)");
  const double nd = static_cast<double>(n);
  const double b = prepared.rss_l1_sensitivity / (nd * epsilon);
  const double noisy = lcssf_minimum_rss(prepared) / nd + laplace(rng, b);
  return lcssf_select_algorithm2(std::move(prepared), n, settings, epsilon, delta, noisy, rng);
}

template <class Rng>
LcssfSelection lcssf_select_algorithm2(LcssfSelection prepared, std::size_t n, const LcssfSettings& settings,
                                       double epsilon, double delta, double noisy_mean_rss, Rng& rng) {
  if (!(delta > 0.0 && delta < 1.0)) throw_domain("lcssf_algorithm2", "delta", delta, "in (0, 1)");
  LcssfSelection out = std::move(prepared);
  const double b = out.rss_l1_sensitivity / (static_cast<double>(n) * epsilon);
  out.variance_laplace_scale = b;
  out.released_variance = noisy_mean_rss - b * std::log(1.0 / (2.0 * delta));
  out.variance_truncation = std::max(out.released_variance, settings.variance_floor);
  out.scores = profile_likelihood_scores(out.rss, out.models, n, settings.penalty, out.variance_truncation);
  out.score_l1_sensitivity = profile_likelihood_l1_sensitivity(out.rss_l1_sensitivity, out.variance_truncation);
  out.non_private_minimiser = out.models[detail::argmin(out.scores)];
  if (settings.alg2_selection == Alg2Selection::noisy_min) {
    out.laplace_scale = 2.0 * out.score_l1_sensitivity / epsilon;
    out.selected = out.models[report_noisy_min(out.scores, out.laplace_scale, rng)];
  } else {
    const std::vector<double> lp =
        exponential_mechanism_log_probabilities(out.scores, epsilon, out.score_l1_sensitivity);
    out.selected = out.models[sample_log_probabilities(lp, rng)];
  }
  return out;
}

template <class Rng>
LcssfSelection lcssf_algorithm1(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                                const LcssfSettings& settings, double epsilon, Rng& rng) {
  return lcssf_release_algorithm1(lcssf_prepare("lcssf_algorithm1", x, y, settings, epsilon, false), settings, epsilon,
                                  rng);
}

template <class Rng>
LcssfSelection lcssf_algorithm2(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                                const LcssfSettings& settings, double epsilon, double delta, Rng& rng) {
  if (!(delta > 0.0 && delta < 1.0)) throw_domain("lcssf_algorithm2", "delta", delta, "in (0, 1)");
  return lcssf_release_algorithm2(lcssf_prepare("lcssf_algorithm2", x, y, settings, epsilon, true),
                                  static_cast<std::size_t>(x.rows()), settings, epsilon, delta, rng);
}

}  // namespace dpmu::core
