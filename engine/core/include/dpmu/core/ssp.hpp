#pragma once
/// @file ssp.hpp
/// Sufficient-statistic perturbation of the Gram matrix G = D'D (Peña & Barrientos 2024, JMLR 25,
/// §5, §5.1, §5.3; docs/methods.md §5.1–§5.7): the Laplace (ε-DP) and Wishart ((ε, δ)-DP; Sheffet 2019,
/// "Old techniques in differentially private linear regression", ALT, Algorithm 2) perturbations,
/// hard thresholding (Bickel & Levina 2008), ridge regularisation, and the rejection-sampling
/// confidence sets of §5.1 with their histograms.
///
/// Matrices are (p+1)×(p+1), predictors first, response last. Random functions take the
/// generator explicitly (template `Rng`, e.g. RngStream); simulation noise is not for releases.

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/progress.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/secure_noise.hpp"

namespace dpmu::core {

/// Which perturbation of G.
enum class SspMechanismKind {
  laplace,  ///< E symmetric, iid Laplace(0, Δ1/ε) on j ≥ j' (ε-DP)
  wishart,  ///< E = M − E[M], M ~ W_{p+1}(k, B² I) (Sheffet 2019 Alg. 2; (ε, δ)-DP, 0 < ε < 1)
};

/// "laplace" | "wishart". @throws std::invalid_argument otherwise.
SspMechanismKind parse_ssp_mechanism(std::string_view name);
/// The spelling accepted by parse_ssp_mechanism. Deterministic.
std::string_view to_string(SspMechanismKind kind);

/// Public parameters of one perturbation of G.
///
/// Two ways to fix the noise scale: (a) the paper's reading (PB §5), bounds [lower, upper] on every
/// entry of the *centred* data matrix D, Δ1 = (p+1)(p+2)(l² ∨ u²) and B² = (p+1)(l² ∨ u²) — used to
/// reproduce the paper's simulations; (b) the sensitivities derived by SspRelease from public bounds
/// on the raw values (release.hpp), stored in noise_l1_sensitivity / noise_row_norm_squared, which
/// then take precedence (lower/upper are ignored). Real releases always use (b).
struct SspMechanism {
  SspMechanismKind kind = SspMechanismKind::laplace;
  int p = 1;                                     ///< predictors (G is (p+1)×(p+1))
  double lower = -1.0;                           ///< l < 0 (reading a)
  double upper = 1.0;                            ///< u > 0 (reading a)
  double epsilon = 1.0;                          ///< > 0 (Wishart: < 1)
  double delta = 0.0;                            ///< Wishart only: in (0, 1]
  std::optional<double> noise_l1_sensitivity;    ///< Δ1 of G's unique entries (reading b)
  std::optional<double> noise_row_norm_squared;  ///< Wishart B² (reading b)
};

/// Validate: p ≥ 1; l < 0 < u finite (reading a) or positive finite sensitivities (reading b);
/// ε > 0 finite; Wishart: 0 < ε < 1 and 0 < δ ≤ 1.
/// @throws std::domain_error naming the parameter (format of checks.hpp).
void check_ssp_mechanism(const SspMechanism& m);

/// The L1 sensitivity of G's unique entries that fixes the Laplace scale: noise_l1_sensitivity if
/// set, else the paper's l1_sensitivity(p, lower, upper). @throws as check_ssp_mechanism.
double ssp_l1_sensitivity(const SspMechanism& m);

/// L1 sensitivity of the (p+1)(p+2)/2 unique entries of G (paper §5): (p+1)(p+2)(l² ∨ u²).
/// @throws std::domain_error for p < 1 or invalid bounds. Deterministic.
double l1_sensitivity(int p, double lower, double upper);

/// Laplace scale b = Δ1/ε of the Laplace perturbation. @throws as check_ssp_mechanism.
double ssp_laplace_scale(const SspMechanism& m);

/// Wishart perturbation parameters (Sheffet 2019 Alg. 2 as used in paper §5).
struct WishartParameters {
  int dimension = 2;                ///< d = p + 1
  double degrees_of_freedom = 0.0;  ///< k = ⌊p + 1 + 28 log(4/δ)/ε²⌋
  double scale = 0.0;               ///< B² (noise_row_norm_squared, or (p+1)(l² ∨ u²)); M ~ W_d(k, B² I)
};

/// @throws as check_ssp_mechanism (requires kind == wishart). Deterministic.
WishartParameters ssp_wishart_parameters(const SspMechanism& m);

/// Draw M ~ W_d(k, scale·I) by the Bartlett decomposition: M = scale·A A', A lower triangular
/// with A_ii = √χ²_{k−i} (i = 0..d−1) and A_ij ~ N(0,1) for i > j. O(d²) draws.
/// Requires d ≥ 1, k > d − 1, scale > 0 (unchecked). Draws from `rng`.
template <class Rng>
Eigen::MatrixXd wishart_sample(Rng& rng, int d, double k, double scale) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(d, d);
  for (int i = 0; i < d; ++i) {
    a(i, i) = std::sqrt(chi_square(rng, k - i));
    for (int j = 0; j < i; ++j) a(i, j) = standard_normal(rng);
  }
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(d, d);
  m.selfadjointView<Eigen::Lower>().rankUpdate(a, scale);
  return m.selfadjointView<Eigen::Lower>();
}

/// Symmetric d×d matrix with iid Laplace(0, scale) entries on and below the diagonal,
/// mirrored above (paper §5). Draws (d(d+1)/2 variates, column-major lower triangle).
template <class Rng>
Eigen::MatrixXd symmetric_laplace_matrix(Rng& rng, int d, double scale) {
  Eigen::MatrixXd e(d, d);
  for (int j = 0; j < d; ++j) {
    for (int i = j; i < d; ++i) {
      e(i, j) = laplace(rng, scale);
      e(j, i) = e(i, j);
    }
  }
  return e;
}

// ---- One unit per SSP mechanism: what differs between them, in one place ----
//
// Each unit has its kind and spelling, the validation of its parameters, its centred noise draw,
// the quantile of |E_ij| that fixes the threshold (threshold_value) and how a release describes it
// (SspRelease). Code that depends on the mechanism calls visit_ssp_mechanism and uses the unit; a
// new mechanism is one unit, one SspMechanismKind value, one entry in SspMechanismUnits and one
// case in visit_ssp_mechanism (the compiler flags a missed case: -Werror=switch).

/// ε-DP: E symmetric with iid Laplace(0, Δ1/ε) entries on and below the diagonal (paper §5).
struct SspLaplaceMechanism {
  static constexpr SspMechanismKind kind = SspMechanismKind::laplace;
  static constexpr std::string_view name = "laplace";
  /// Validates noise_l1_sensitivity (reading b). @throws std::domain_error naming it.
  static void check_sensitivity(const char* fn, const SspMechanism& m);
  /// ε-DP: nothing beyond ε > 0 (δ is not used).
  static void check_privacy(const char* fn, const SspMechanism& m);
  /// The release's privacy parameters (SspRelease): δ = 0. @throws std::domain_error.
  static void check_release_privacy(const char* fn, double epsilon, double delta);
  template <class Rng>
  static Eigen::MatrixXd noise(const SspMechanism& m, Rng& rng);
  /// x with P(|E_ij| ≤ x) = target, target in [0, 1): −b log(1 − target).
  static double absolute_quantile(const SspMechanism& m, double target);
  /// The sensitivity a release reports, and how it names it.
  static constexpr std::string_view sensitivity_name = "l1_sensitivity";
  static double sensitivity(const SspMechanism& m) { return *m.noise_l1_sensitivity; }
  static constexpr std::string_view description =
      "Laplace noise on the (p+1)(p+2)/2 unique entries of the centred Gram matrix (PB Sec. 5)";
  /// A real release draws exact discrete Laplace noise per unique entry (SecureNoiseSampler).
  static constexpr bool exact_discrete_laplace = true;
  static constexpr std::string_view secure_sampler =
      "exact discrete Laplace on a grid from the kernel CSPRNG (Canonne, Kamath & Steinke 2020); the "
      "rounding to the grid is charged to the sensitivity";
};

/// (ε, δ)-DP, 0 < ε < 1: E = M − k B² I, M ~ W_{p+1}(k, B² I) (Sheffet 2019 Alg. 2; paper §5).
struct SspWishartMechanism {
  static constexpr SspMechanismKind kind = SspMechanismKind::wishart;
  static constexpr std::string_view name = "wishart";
  /// Validates noise_row_norm_squared (reading b). @throws std::domain_error naming it.
  static void check_sensitivity(const char* fn, const SspMechanism& m);
  /// 0 < ε < 1 and 0 < δ ≤ 1. @throws std::domain_error.
  static void check_privacy(const char* fn, const SspMechanism& m);
  /// The release's privacy parameters (SspRelease): ε and δ in (0, 1). @throws std::domain_error.
  static void check_release_privacy(const char* fn, double epsilon, double delta);
  template <class Rng>
  static Eigen::MatrixXd noise(const SspMechanism& m, Rng& rng);
  /// x with P(|E_ij| ≤ x) = target: E_ij =d B²√W·Z, W ~ χ²_k, by quadrature and bisection.
  static double absolute_quantile(const SspMechanism& m, double target);
  static constexpr std::string_view sensitivity_name = "wishart_row_norm_squared";
  static double sensitivity(const SspMechanism& m) { return *m.noise_row_norm_squared; }
  static constexpr std::string_view description =
      "Wishart noise W(k, B^2 I) - k B^2 I on the centred Gram matrix (Sheffet 2019, Alg. 2; PB Sec. 5)";
  /// A real release draws noise() from the kernel CSPRNG (floating point).
  static constexpr bool exact_discrete_laplace = false;
  static constexpr std::string_view secure_sampler =
      "floating-point Bartlett draw from the kernel CSPRNG; NOT hardened against floating-point attacks "
      "(Mironov 2012)";
};

/// The SSP mechanism units in the order of SspMechanismKind.
using SspMechanismUnits = std::tuple<SspLaplaceMechanism, SspWishartMechanism>;

/// f(std::type_identity<Unit>{}) for the unit of `kind`; every case returns the same type.
/// @throws std::invalid_argument for a value that is not an SspMechanismKind.
template <class F>
constexpr decltype(auto) visit_ssp_mechanism(SspMechanismKind kind, F&& f) {
  switch (kind) {
    case SspMechanismKind::laplace:
      return f(std::type_identity<SspLaplaceMechanism>{});
    case SspMechanismKind::wishart:
      return f(std::type_identity<SspWishartMechanism>{});
  }
  throw_invalid("visit_ssp_mechanism",
                "SspMechanismKind value " + std::to_string(static_cast<int>(kind)) + " is not a mechanism");
}

/// f(std::type_identity<Unit>{}) for every SSP mechanism unit, in SspMechanismKind order.
template <class F>
constexpr void for_each_ssp_mechanism(F&& f) {
  [&]<class... Unit>(std::tuple<Unit...>*) {
    (f(std::type_identity<Unit>{}), ...);
  }(static_cast<SspMechanismUnits*>(nullptr));
}

template <class Rng>
Eigen::MatrixXd SspLaplaceMechanism::noise(const SspMechanism& m, Rng& rng) {
  return symmetric_laplace_matrix(rng, m.p + 1, ssp_laplace_scale(m));
}

template <class Rng>
Eigen::MatrixXd SspWishartMechanism::noise(const SspMechanism& m, Rng& rng) {
  const WishartParameters w = ssp_wishart_parameters(m);
  Eigen::MatrixXd e = wishart_sample(rng, m.p + 1, w.degrees_of_freedom, w.scale);
  e.diagonal().array() -= w.degrees_of_freedom * w.scale;
  return e;
}

/// The centred noise matrix E of the mechanism (E[E] = 0): Laplace, or M − k B² I (Wishart).
/// @throws as check_ssp_mechanism. Draws from `rng`.
template <class Rng>
Eigen::MatrixXd ssp_noise(const SspMechanism& m, Rng& rng) {
  check_ssp_mechanism(m);
  return visit_ssp_mechanism(m.kind, [&](auto unit) { return decltype(unit)::type::noise(m, rng); });
}

/// G* = G + E (the only release of the method; paper §5).
/// @param gram (p+1)×(p+1) with p = m.p. @throws std::invalid_argument on shape mismatch,
/// std::domain_error for invalid mechanism parameters or non-finite G. Draws from `rng`.
template <class Rng>
Eigen::MatrixXd noisy_gram_matrix(const Eigen::Ref<const Eigen::MatrixXd>& gram, const SspMechanism& m, Rng& rng) {
  check_ssp_mechanism(m);
  if (gram.rows() != m.p + 1 || gram.cols() != m.p + 1) {
    throw_invalid("noisy_gram_matrix", "gram is " + std::to_string(gram.rows()) + "x" + std::to_string(gram.cols()) +
                                           ", but must be (p+1)x(p+1) with p = " + std::to_string(m.p));
  }
  check_all_finite("noisy_gram_matrix", "gram", gram);
  return gram + ssp_noise(m, rng);
}

/// How the threshold e_λ refers to the off-diagonal noise E_ij.
enum class ThresholdReference {
  absolute,         ///< λ-quantile of |E_ij| (default; docs/decisions.md)
  signed_quantile,  ///< λ-quantile of E_ij, λ ≥ 1/2 (docs/methods.md A9)
};

/// "absolute" | "signed" (the one spelling of a ThresholdReference in options and configs).
/// @throws std::invalid_argument naming the accepted spellings.
ThresholdReference parse_threshold_reference(std::string_view name);
/// The spelling accepted by parse_threshold_reference.
std::string_view to_string(ThresholdReference reference);

/// Probability with which the default ridges make G* + rI positive definite: the Monte Carlo ridge
/// is the kRidgeConfidence quantile of −eigmin(E) and the Wishart bound uses ν = 1 − kRidgeConfidence
/// (paper §5.2 with the 99th percentile).
inline constexpr double kRidgeConfidence = 0.99;

/// The threshold e_λ, a public constant (paper §5.3; docs/methods.md §5.4 step 1).
/// Laplace: −b log(1 − λ) (absolute) or −b log(2(1 − λ)) (signed). Wishart: E_ij =d B²√W·Z with
/// W ~ χ²_k, Z ~ N(0,1) independent, so P(|E_ij| ≤ x) = E_W[erf(x/(B²√(2W)))]; computed by
/// Gauss–Kronrod over W and bisection (relative accuracy 1e-10). Deterministic.
/// @param percentile λ in (0, 1) ((1/2, 1) for signed). @throws std::domain_error.
double threshold_value(const SspMechanism& m, double percentile,
                       ThresholdReference reference = ThresholdReference::absolute);

/// Hard thresholding: G**_ij = G*_ij·1(i = j or |G*_ij| ≥ threshold) (Bickel & Levina 2008).
/// @throws std::invalid_argument (non-square), std::domain_error (threshold < 0 or NaN).
Eigen::MatrixXd hard_threshold(const Eigen::Ref<const Eigen::MatrixXd>& noisy_gram, double threshold);

/// Sheffet's analytic ridge for the Wishart perturbation, as reconstructed in docs/methods.md §5.4
/// (A10): r_W = B²[k − (max(0, √k − √(p+1) − √(2 log(1/ν))))²], so that G*+r_W I is PD with
/// probability ≥ 1 − ν (Gaussian singular-value bound). @throws std::domain_error (ν ∉ (0,1)).
double wishart_regularization(const SspMechanism& m, double nu = 1.0 - kRidgeConfidence);

/// Monte Carlo ridge: the `quantile` (default 0.99) empirical quantile of −eigmin(E) over `draws`
/// noise matrices (paper §5.2 with docs/methods.md A8). Depends only on public parameters.
/// `progress` (progress.hpp), phase "ridge-calibration": draws done of `draws`, every 256 draws; a
/// throw from it stops the calibration.
/// @throws std::domain_error for draws < 1 or quantile ∉ (0,1). Draws from `rng`.
template <class Rng>
double monte_carlo_regularization(const SspMechanism& m, Rng& rng, int draws, double quantile = kRidgeConfidence,
                                  const ProgressCallback& progress = {}) {
  check_ssp_mechanism(m);
  if (draws < 1) throw_domain("monte_carlo_regularization", "draws", draws, ">= 1");
  check_open_interval("monte_carlo_regularization", "quantile", quantile, 0.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(draws));
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es;
  const auto total = static_cast<std::uint64_t>(draws);
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i % 256 == 0) report_progress(progress, i, total, "ridge-calibration");
    es.compute(ssp_noise(m, rng), Eigen::EigenvaluesOnly);
    v[static_cast<std::size_t>(i)] = -es.eigenvalues()(0);
  }
  report_progress(progress, total, total, "ridge-calibration");
  const auto idx = static_cast<std::size_t>(std::ceil(quantile * draws)) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(idx), v.end());
  return v[idx];
}

/// A_r = A + r I with the PD fallback of docs/methods.md §5.4: if A + rI is not PD (Cholesky fails),
/// r_eff = max(r, −eigmin(A) + 1e-8·|tr(A)|/(p+1)) (post-processing only).
struct RegularizedGram {
  Eigen::MatrixXd matrix;
  double requested = 0.0;       ///< r asked for
  double regularization = 0.0;  ///< r actually added
  bool fallback = false;        ///< true if r had to be raised to reach positive definiteness
};

/// @throws std::invalid_argument (non-square), std::domain_error (r < 0 or non-finite, A non-finite).
RegularizedGram regularize(const Eigen::Ref<const Eigen::MatrixXd>& a, double regularization);

/// True if the symmetric matrix has a successful Cholesky factorisation (numerically PD).
bool is_positive_definite(const Eigen::Ref<const Eigen::MatrixXd>& a);

/// Matrix norms for the confidence set of §5.1.
enum class MatrixNorm {
  frobenius,  ///< √Σ a_ij² over the full symmetric matrix (PB's application; default)
  spectral,   ///< max |eigenvalue| of the symmetrised matrix
  max_abs,    ///< max |a_ij|
};
/// "frobenius" | "spectral" | "max-abs" (or "max"). @throws std::invalid_argument otherwise.
MatrixNorm parse_matrix_norm(std::string_view name);
/// The spelling accepted by parse_matrix_norm.
std::string_view to_string(MatrixNorm norm);
/// ‖a‖ in the given norm (a square). Deterministic.
double matrix_norm(const Eigen::Ref<const Eigen::MatrixXd>& a, MatrixNorm norm);

/// Histogram with K equal-width bins on [t0, tK] = [min, max] (last bin closed), counts and
/// density d_k = count_k / (N (t_k − t_{k−1})) (paper §5.1; docs/methods.md §5.7 step 4). If all values
/// are equal there is one zero-width bin holding every value; its density is reported as 0 and
/// `degenerate = true`. @throws std::domain_error for bins < 1, empty or non-finite values.
struct Histogram {
  std::vector<double> edges;  ///< K + 1
  std::vector<double> counts;
  std::vector<double> density;
  bool degenerate = false;
};
Histogram make_histogram(std::span<const double> values, int bins);

/// Result of the rejection-sampling confidence set.
struct MechanismConfidenceSet {
  double confidence = 0.95;
  double norm_quantile = 0.0;              ///< q̂_{1−α} of ‖E_i‖
  int simulations = 0;                     ///< nsim
  int accepted = 0;                        ///< ‖E_i‖ ≤ q̂
  int positive_definite = 0;               ///< of those, G* − E_i PD (kept)
  std::vector<Eigen::VectorXd> summaries;  ///< T(G_i) of the kept candidates
};

/// Paper §5.1 (docs/methods.md §5.7): draw E_1..E_nsim from the mechanism, q̂ = inf{q : #(‖E_i‖ ≤ q)/nsim
/// ≥ confidence}, keep candidates G_i = G* − E_i with ‖E_i‖ ≤ q̂ that are PD, and return T(G_i).
/// `summary` maps a PD (p+1)×(p+1) matrix to an Eigen::VectorXd (e.g. PIPs or posterior means);
/// if it throws std::domain_error the candidate is counted as not PD.
/// @param noisy_gram the release G* (no ridge). @throws std::domain_error for nsim < 1,
/// confidence ∉ (0,1), invalid mechanism. Draws from `rng`.
template <class Rng, class Summary>
MechanismConfidenceSet mechanism_confidence_set(const Eigen::Ref<const Eigen::MatrixXd>& noisy_gram,
                                                const SspMechanism& m, Rng& rng, int simulations, double confidence,
                                                Summary&& summary, MatrixNorm norm = MatrixNorm::frobenius) {
  constexpr const char* fn = "mechanism_confidence_set";
  check_ssp_mechanism(m);
  if (simulations < 1) throw_domain(fn, "simulations", simulations, ">= 1");
  check_open_interval(fn, "confidence", confidence, 0.0, 1.0);
  if (noisy_gram.rows() != m.p + 1 || noisy_gram.cols() != m.p + 1) throw_invalid(fn, "noisy_gram must be (p+1)x(p+1)");
  std::vector<Eigen::MatrixXd> draws(static_cast<std::size_t>(simulations));
  std::vector<double> norms(static_cast<std::size_t>(simulations));
  for (std::size_t i = 0; i < draws.size(); ++i) {
    draws[i] = ssp_noise(m, rng);
    norms[i] = matrix_norm(draws[i], norm);
  }
  std::vector<double> sorted = norms;
  std::sort(sorted.begin(), sorted.end());
  const auto idx = static_cast<std::size_t>(std::ceil(confidence * simulations - 1e-9)) - 1;
  MechanismConfidenceSet out;
  out.confidence = confidence;
  out.simulations = simulations;
  out.norm_quantile = sorted[std::min(idx, sorted.size() - 1)];
  for (std::size_t i = 0; i < draws.size(); ++i) {
    if (norms[i] > out.norm_quantile) continue;
    ++out.accepted;
    const Eigen::MatrixXd candidate = noisy_gram - draws[i];
    if (!is_positive_definite(candidate)) continue;
    try {
      out.summaries.push_back(summary(candidate));
      ++out.positive_definite;
    } catch (const std::domain_error&) {
    }
  }
  return out;
}

}  // namespace dpmu::core
