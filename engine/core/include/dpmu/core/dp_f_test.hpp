#pragma once
/// @file dp_f_test.hpp
/// The DP F-test of Alabi & Vadhan (2022, "Hypothesis testing for differentially private linear
/// regression", NeurIPS; JMLR 24, 2023; docs/methods.md "DP F-test"), for nested normal linear
/// models H0: y ~ 1 + common against H1: y ~ 1 + common + tested:
///  1. clip every raw value into its public bounds [l_j, u_j];
///  2. release the J = D(D+1)/2 − 1 unique entries of the moment matrix M = (1/n) Σ_i z_i z_i',
///     z_i = (1, v_i, y_i) ∈ R^D (D = k + 2, k predictors), each with its own Gaussian noise
///     N(0, s_j²/(2ρ/J)), s_j the range of its summand over the box divided by n: the budget ρ (zCDP;
///     Bun & Steinke 2016) split equally over the released moments, as the authors do (their code
///     splits ρ/5 over x̄, ȳ, mean x², mean xy, mean y² for simple linear regression);
///  3. the F statistic from the noisy moments (RSS of each model from the Schur complement of M);
///  4. a parametric-bootstrap null: K data sets simulated under H0 from the PRIVATE estimates (predictor
///     means and covariance, H0 coefficients and residual variance, all from the noisy M), the private
///     statistic recomputed on each with fresh noise, and the Monte Carlo p-value
///     (1 + #{F_k ≥ F})/(K + 1) (the authors take K = 10/α).
/// Steps 3–4 are post-processing of the released moments. (ε, δ) from ρ by
/// ε = ρ + 2√(ρ log(1/δ)) (Bun & Steinke 2016, Proposition 1.3).
///
/// Neighbouring relation: same public n, one row replaced. Pure: no I/O, no threads.

#include <Eigen/Dense>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "dpmu/core/random.hpp"
#include "dpmu/core/release.hpp"

namespace dpmu::core {

/// ε of the (ε, δ)-DP guarantee implied by ρ-zCDP: ρ + 2√(ρ log(1/δ)) (Bun & Steinke 2016, Prop. 1.3).
/// @throws std::domain_error unless ρ > 0 finite and δ ∈ (0, 1).
double zcdp_to_epsilon(double rho, double delta);

/// The ρ whose zcdp_to_epsilon(ρ, δ) is ε: (√(log(1/δ) + ε) − √(log(1/δ)))².
/// @throws std::domain_error unless ε > 0 finite and δ ∈ (0, 1).
double zcdp_rho_for_epsilon(double epsilon, double delta);

/// Public settings of a DP F-test release.
struct DpFTestSettings {
  double rho = 0.5;  ///< zCDP budget of the released moments, > 0
  std::size_t n = 0;
  int p0 = 1;  ///< H0 columns with the intercept (common predictors = p0 − 1)
  int q = 1;   ///< tested predictors
  /// k + 1 = p0 − 1 + q + 1 bounds: common predictors, tested predictors, response (or one pair for all).
  std::vector<ColumnBounds> bounds;
};

/// One release of the noisy moments and the statistic computed from them.
struct DpFTestOutput {
  Eigen::MatrixXd moments;  ///< D×D noisy M (M(0,0) = 1 exactly), released
  double statistic = 0.0;   ///< F from the noisy moments (released; +inf: noisy RSS1 ≤ 0; NaN: singular)
  std::optional<Eigen::MatrixXd> confidential_moments;  ///< simulation mode only
};

/// The DP F-test release (see the file comment).
///
/// Sensitivity of each released moment (replace one row): z_j z_l of the replaced row moves within
/// the range of the product over the box, so the entry of M moves by at most s_jl = range/n: for the
/// constant and a column, (u_l − l_l)/n; for a square, (max(l², u²) − min over [l, u] of v²)/n; for a
/// product of two columns, (max − min of the four corner products)/n (the product is bilinear). With
/// σ_jl = s_jl/√(2ρ/J), each entry is (ρ/J)-zCDP and the J entries ρ-zCDP by composition.
class DpFTestRelease {
 public:
  /// @throws std::domain_error / std::invalid_argument naming the field: ρ ≤ 0, n ≤ p0 + q + 1,
  ///   p0 < 1, q < 1, bounds count not 1 or k + 1, a bound pair not finite with l < u.
  explicit DpFTestRelease(DpFTestSettings settings);
  const DpFTestSettings& settings() const { return settings_; }
  /// D = p0 + q + 1 (constant, predictors, response).
  int dimension() const { return settings_.p0 + settings_.q + 1; }
  /// J, the released moments.
  int released_moments() const { return dimension() * (dimension() + 1) / 2 - 1; }
  /// D×D sensitivities s_jl (0 at (0, 0)).
  const Eigen::MatrixXd& sensitivities() const { return sensitivity_; }
  /// D×D noise standard deviations σ_jl (0 at (0, 0)).
  const Eigen::MatrixXd& noise_sd() const { return sigma_; }
  /// (ε, δ) with ε = zcdp_to_epsilon(ρ, δ); the sensitivity reported is the largest s_jl (named
  /// "max_moment_sensitivity"; every σ_jl is in noise_sd()). @throws std::domain_error for δ ∉ (0, 1).
  PrivacyGuarantee privacy(double delta) const;

  /// The confidential M of the clipped rows. @param rows n×(k+1) raw rows (predictors, response); a
  /// non-finite value is replaced by a bound (+inf: upper; −inf, NaN: lower), never an error.
  /// @throws std::invalid_argument for a shape mismatch.
  Eigen::MatrixXd confidential_moments(const Eigen::Ref<const Eigen::MatrixXd>& rows) const;
  /// M + noise (symmetric, (0, 0) = 1) and the F statistic. Gaussian noise from `noise` (floating point).
  DpFTestOutput release(const Eigen::Ref<const Eigen::MatrixXd>& rows, NoiseSource& noise) const;
  /// The same mechanism on simulated rows with a simulation stream (the null simulation).
  double simulated_statistic(const Eigen::Ref<const Eigen::MatrixXd>& rows, RngStream& rng) const;

  /// F from a moment matrix M (D×D, M(0,0) = 1): RSS_S = n(M_yy − M_yS M_SS^{-1} M_Sy),
  /// F = ((RSS0 − RSS1)/q)/(RSS1/(n − p0 − q)). NaN if M_SS of H1 is not positive definite; +inf if
  /// RSS1 ≤ 0 < RSS0 − RSS1. Deterministic.
  double f_statistic(const Eigen::Ref<const Eigen::MatrixXd>& moments) const;

  /// The parametric-bootstrap null from the released moments: K statistics of data simulated under H0
  /// from the private estimates (rows x ~ N(μ̂, Σ̂) with Σ̂ = n/(n−1)(M_xx − μ̂μ̂') made positive
  /// semi-definite, y = [1 x_common] β̂0 + σ̂0 N(0, 1), β̂0 and σ̂0² = RSS0/(n − p0) from M), each passed
  /// through the same mechanism. @param rng a calibration stream (public randomness).
  std::vector<double> null_statistics(const Eigen::Ref<const Eigen::MatrixXd>& released_moments, std::size_t K,
                                      RngStream& rng) const;

  /// Monte Carlo p-value (1 + #{F_k ≥ F})/(K + 1), NaN statistics ordered below every number.
  static double monte_carlo_p_value(double statistic, const std::vector<double>& null);

 private:
  template <class Rng>
  Eigen::MatrixXd noisy(const Eigen::MatrixXd& m, Rng& rng) const;
  DpFTestSettings settings_;
  Eigen::VectorXd lower_, upper_;
  Eigen::MatrixXd sensitivity_, sigma_;
};

}  // namespace dpmu::core
