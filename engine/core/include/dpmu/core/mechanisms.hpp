#pragma once
/// @file mechanisms.hpp
/// Additive noise mechanisms for scalar statistics (paper §2, §4): Laplace (ε-DP) and the
/// analytic Gaussian mechanism ((ε, δ)-DP; Balle & Wang 2018, "Improving the Gaussian
/// mechanism for differential privacy: analytical calibration and optimal denoising", ICML,
/// Theorem 8 and Algorithm 1). Calibration functions are pure and deterministic; sampling
/// takes the generator explicitly.

#include <cmath>
#include <string>
#include <string_view>

#include "dpmu/core/random.hpp"

namespace dpmu::core {

/// Laplace scale b = l1_sensitivity / epsilon (docs/methods.md §3.2).
/// @throws std::domain_error unless both are finite and > 0.
double laplace_scale(double epsilon, double l1_sensitivity);

/// Smallest σ such that T + N(0, σ²) is (ε, δ)-DP for a query of L2 sensitivity Δ2:
/// the root of Φ(Δ2/(2σ) − εσ/Δ2) − e^ε Φ(−Δ2/(2σ) − εσ/Δ2) = δ (BW Theorem 8), found by
/// BW Algorithm 1 (doubling then TOMS 748 root finding), evaluated in log space so any ε > 0
/// works (e^ε Φ(−x) is computed as exp(ε + log Φ(−x))).
/// @param epsilon > 0 finite. @param delta in (0, 1). @param l2_sensitivity > 0 finite.
/// @return σ (same units as the statistic). @throws std::domain_error for invalid arguments.
double analytic_gaussian_sigma(double epsilon, double delta, double l2_sensitivity);

/// Inverse of analytic_gaussian_sigma: the δ for which N(0, σ²) noise is (ε, δ)-DP (BW Thm 8).
/// @throws std::domain_error for non-positive or non-finite arguments.
double analytic_gaussian_delta(double sigma, double epsilon, double l2_sensitivity);

/// The privacy profile of μ-Gaussian differential privacy (Dong, Roth & Su 2022, JRSS B, Corollary
/// 2.13): δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), the smallest δ for which a μ-GDP mechanism is
/// (ε, δ)-DP. A Gaussian mechanism N(0, σ²) of L2 sensitivity Δ2 is exactly μ-GDP with μ = Δ2/σ,
/// so analytic_gaussian_delta(σ, ε, Δ2) = gaussian_dp_delta(Δ2/σ, ε). Evaluated in log space.
/// @param mu > 0 finite. @param epsilon ≥ 0 finite. @return δ in [0, 1).
/// @throws std::domain_error for arguments outside those ranges.
double gaussian_dp_delta(double mu, double epsilon);

/// log Φ(x) for the standard normal CDF, accurate for x down to -1e150 (asymptotic series
/// below -30) and returning log1p(-Φ(-x)) on the right.
double log_normal_cdf(double x);

/// How the Gaussian σ of a subsample-and-aggregate release was chosen (docs/methods.md A2).
enum class GaussianCalibration {
  exact,          ///< BW σ for the L2 sensitivity of the released average, Δ/M (default)
  paper_literal,  ///< the variance printed in paper §4, α²Δ²/(2Mε): M times the exact variance
};

/// Parse "exact" or "paper-literal" ('_' accepted for '-').
/// @throws std::invalid_argument naming the accepted spellings.
GaussianCalibration parse_gaussian_calibration(std::string_view name);

/// A scalar additive-noise mechanism: knows its sensitivity, ε, δ and noise law; samples noise
/// from a caller-supplied generator; gives noise quantiles; describes itself. Validates once at
/// construction; sampling is unchecked.
class ScalarMechanism {
 public:
  enum class Kind { laplace, gaussian };

  /// Laplace(0, l1_sensitivity/epsilon): ε-DP. @throws std::domain_error for invalid parameters.
  static ScalarMechanism laplace(double epsilon, double l1_sensitivity);

  /// Analytic Gaussian with the exact BW σ: (ε, δ)-DP. @throws std::domain_error.
  static ScalarMechanism gaussian(double epsilon, double delta, double l2_sensitivity);

  /// Gaussian with a caller-chosen σ ≥ the exact BW σ (still (ε, δ)-DP; e.g. the paper's
  /// printed variance). @throws std::domain_error if σ is smaller than the exact value.
  static ScalarMechanism gaussian_with_sigma(double epsilon, double delta, double l2_sensitivity, double sigma,
                                             std::string calibration);

  Kind kind() const { return kind_; }
  double epsilon() const { return epsilon_; }
  double delta() const { return delta_; }
  /// L1 sensitivity for Laplace, L2 sensitivity for Gaussian (they coincide for scalars).
  double sensitivity() const { return sensitivity_; }
  /// Laplace scale b or Gaussian σ.
  double scale() const { return scale_; }
  /// Standard deviation of the noise (√2 b for Laplace, σ for Gaussian).
  double noise_sd() const;
  /// "laplace" or "gaussian".
  std::string name() const;
  /// How the scale was calibrated: "laplace", "analytic-gaussian-exact", or the label given.
  const std::string& calibration() const { return calibration_; }

  /// Quantile of the noise distribution at probability prob ∈ (0, 1).
  /// @throws std::domain_error for prob outside (0, 1).
  double noise_quantile(double prob) const;

  /// One noise draw (consumes the generator). Deterministic given the generator state.
  template <class Rng>
  double sample(Rng& rng) const {
    switch (kind_) {
      case Kind::laplace:
        return core::laplace(rng, scale_);
      case Kind::gaussian:
        return scale_ * standard_normal(rng);
    }
    return 0.0;
  }

 private:
  ScalarMechanism(Kind kind, double epsilon, double delta, double sensitivity, double scale, std::string calibration)
      : kind_(kind),
        epsilon_(epsilon),
        delta_(delta),
        sensitivity_(sensitivity),
        scale_(scale),
        calibration_(std::move(calibration)) {}
  Kind kind_;
  double epsilon_;
  double delta_;
  double sensitivity_;
  double scale_;
  std::string calibration_;
};

}  // namespace dpmu::core
