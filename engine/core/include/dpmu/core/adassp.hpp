#pragma once
/// @file adassp.hpp
/// AdaSSP, adaptive sufficient-statistic perturbation for linear regression (Wang 2018, "Revisiting
/// differentially private linear regression: optimal and adaptive prediction & estimation in
/// unbounded domain", UAI, Algorithm 2; docs/methods.md "AdaSSP"): release a noisy smallest
/// eigenvalue of X'X, choose the ridge λ from it, release X'X and X'y with Gaussian noise, and
/// return θ̂ = (X̂'X + λI)^{-1} X̂'y. The budget (ε, δ) is split in three equal parts (ε/3, δ/3), one
/// per released quantity, composed by basic composition (four with release_yty).
///
/// Neighbouring relation: same public n, one row replaced (Wang's analysis is for add/remove; the
/// sensitivities below are the replace-one ones). Rows are first clipped: x to Euclidean norm ≤ B_X
/// (scaled down), y to [−B_Y, B_Y]. Pure: no I/O, no threads.

#include <Eigen/Dense>
#include <cstddef>
#include <limits>
#include <optional>

#include "dpmu/core/release.hpp"

namespace dpmu::core {

/// Public settings of an AdaSSP release.
struct AdaSspSettings {
  double epsilon = 1.0;   ///< > 0
  double delta = 1e-6;    ///< ∈ (0, 1)
  std::size_t n = 0;      ///< rows (public)
  int d = 1;              ///< predictors (no intercept is added: include a column of ones if wanted)
  double bound_x = 1.0;   ///< B_X: bound on ‖x_i‖₂ (rows are scaled down to it)
  double bound_y = 1.0;   ///< B_Y: bound on |y_i| (clamped)
  double failure = 0.05;  ///< ϱ of Wang's eigenvalue bound η (his varrho = 0.05)
  /// Also release y'y (a fourth Gaussian release; the budget split in four, (ε/4, δ/4) each), so the
  /// released statistics form a whole Gram matrix [X̂'X + λI, X̂'y; ·, ŷ'y] that model averaging can
  /// analyse ("AdaSSP plug-in" BMA; docs/methods.md §11.3). Not part of Wang's algorithm.
  bool release_yty = false;
};

/// Replace-one sensitivities of the three released quantities.
struct AdaSspSensitivities {
  double lambda_min = 0.0;  ///< of λ_min(X'X): B_X² (Weyl: X'X moves by x̃x̃' − xx', eigenvalues in [−B_X², B_X²])
  double gram = 0.0;  ///< L2 of the unique entries of X'X: √2 B_X² (‖x̃x̃' − xx'‖_F² ≤ ‖x̃‖⁴ + ‖x‖⁴)
  double xty = 0.0;  ///< L2 of X'y: 2 B_X B_Y
  double yty = 0.0;  ///< of y'y: B_Y² (y_i² ∈ [0, B_Y²]); used only with release_yty
};

/// Confidential by-products; simulation mode only.
struct AdaSspDiagnostics {
  double lambda_min = 0.0;       ///< λ_min(X'X) of the clipped data
  Eigen::VectorXd ols;           ///< the non-private least-squares fit of the clipped data (NaN if singular)
  std::size_t clipped_rows = 0;  ///< rows whose x was scaled down
  std::size_t clipped_responses = 0;
};

/// One release.
struct AdaSspOutput {
  double lambda_min_noisy = 0.0;  ///< λ̃_min = max(λ_min + σ_λ Z − σ_λ √log(6/δ), 0) (released)
  double ridge = 0.0;             ///< λ = max(0, η − λ̃_min) (post-processing)
  Eigen::MatrixXd gram;           ///< X'X + E, E symmetric Gaussian (released)
  Eigen::VectorXd xty;            ///< X'y + e (released)
  Eigen::VectorXd coefficients;   ///< θ̂ = (gram + λI)^{-1} xty (post-processing)
  double yty = std::numeric_limits<double>::quiet_NaN();  ///< y'y + N(0, σ_yy²) (released; release_yty only)
  std::optional<AdaSspDiagnostics> diagnostics;
};

/// AdaSSP (see the file comment). Each release is the analytic Gaussian mechanism (Balle & Wang 2018)
/// at (ε/3, δ/3) for its sensitivity: σ_λ, σ_XX, σ_Xy. Wang's constants keep their form with these σ:
/// the shift that makes λ̃_min a lower bound with high probability is σ_λ √log(6/δ), and the bound on
/// the operator norm of the Gram noise is η = σ_XX √(d log(2d²/ϱ)).
class AdaSspRelease {
 public:
  /// @throws std::domain_error naming the field (ε ≤ 0, δ ∉ (0, 1), n < 1, d < 1, bounds ≤ 0, ϱ ∉ (0, 1)).
  explicit AdaSspRelease(AdaSspSettings settings);
  const AdaSspSettings& settings() const { return settings_; }
  AdaSspSensitivities sensitivities() const;
  double sigma_lambda() const { return sigma_lambda_; }
  double sigma_gram() const { return sigma_gram_; }
  double sigma_xty() const { return sigma_xty_; }
  double sigma_yty() const { return sigma_yty_; }  ///< 0 unless release_yty
  /// η = σ_XX √(d log(2d²/ϱ)).
  double eta() const;
  /// μ of the release as μ-GDP: the three Gaussian mechanisms composed exactly,
  /// √((Δ_λ/σ_λ)² + (Δ_XX/σ_XX)² + (Δ_Xy/σ_Xy)²) = √3 μ(ε/3, δ/3) (Dong, Roth & Su 2022, Cor. 3.3).
  double gdp_mu() const;
  /// (ε, δ) = 3 × (ε/3, δ/3) by basic composition; recorded for the ledger's tight accountant as one
  /// Gaussian mechanism of μ = gdp_mu() (noise_kind "gaussian", noise_scale = sensitivity/μ).
  PrivacyGuarantee privacy() const;

  /// Clip (x to norm B_X, y to [−B_Y, B_Y]); X'X and X'y of the clipped data. For tests and audits.
  /// @throws std::invalid_argument for shapes; std::domain_error for a non-finite entry.
  void clipped_statistics(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                          Eigen::MatrixXd& xtx, Eigen::VectorXd& xty, std::size_t* clipped_rows = nullptr,
                          std::size_t* clipped_responses = nullptr) const;
  /// The release (floating-point Gaussian noise from `noise`): clipped_statistics, then
  /// release_statistics. Errors as clipped_statistics.
  AdaSspOutput release(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                       NoiseSource& noise) const;
  /// The release from X'X (d × d) and X'y (d) of data whose rows are already within the bounds
  /// (‖x_i‖₂ ≤ B_X, |y_i| ≤ B_Y): the caller's guarantee — e.g. a simulation whose design respects
  /// the public bounds (experiments/simulation_ssp.cpp) — under which it equals release() on the
  /// rows (the sensitivities above hold). The diagnostics, in simulation mode, count no clipping.
  /// @throws std::invalid_argument for shapes; std::domain_error for a non-finite entry.
  /// `yty`: y'y of the same data (required and released with release_yty, after the other three
  /// releases, so their noise does not depend on it; ignored otherwise).
  AdaSspOutput release_statistics(const Eigen::Ref<const Eigen::MatrixXd>& xtx,
                                  const Eigen::Ref<const Eigen::VectorXd>& xty, NoiseSource& noise,
                                  double yty = std::numeric_limits<double>::quiet_NaN()) const;

 private:
  AdaSspSettings settings_;
  double sigma_lambda_ = 0.0, sigma_gram_ = 0.0, sigma_xty_ = 0.0, sigma_yty_ = 0.0;
};

}  // namespace dpmu::core
