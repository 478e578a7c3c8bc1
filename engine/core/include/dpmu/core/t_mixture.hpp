#pragma once
/// @file t_mixture.hpp
/// Quantiles of a mixture of a point mass at 0 and location-scale Student t distributions, the
/// model-averaged posterior of a regression coefficient (docs/bma.md "Credible intervals").
/// Fast and exact up to a stated error: the lightest components of total relative weight ≤ τ are
/// dropped (|CDF error| ≤ τ), the t CDF is a finite series for integer ν (exact to rounding), and
/// the root of F(x) = q is found by a safeguarded Newton iteration from a moment-based guess.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dpmu::core {

/// The distribution function (and density) of a standard Student t with ν > 0 degrees of freedom.
/// For integer ν ≤ kSeriesMaxDof: the finite trigonometric series of Abramowitz & Stegun 26.7.3–4
/// (Horner in cos²θ, θ = atan(t/√ν); about 1e-16·ν/2 absolute error); otherwise Boost's
/// incomplete-beta CDF in double precision.
class StudentT {
 public:
  static constexpr double kSeriesMaxDof = 1000.0;
  /// @throws std::domain_error unless ν > 0 is finite.
  explicit StudentT(double degrees_of_freedom);
  double degrees_of_freedom() const { return nu_; }
  /// 2 T_ν(z) − 1 = sign(z) P(|T| ≤ |z|) (the CDF is (1 + a)/2; the absolute error is what counts).
  double centred_cdf(double z) const;
  double cdf(double z) const { return 0.5 + 0.5 * centred_cdf(z); }
  double pdf(double z) const;

 private:
  friend class TMixture;  // its hot loop inlines the series
  double nu_;
  bool series_ = false;
  bool odd_ = false;
  double sqrt_nu_ = 0.0;
  double log_norm_ = 0.0;             // log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(νπ)
  std::vector<double> coefficients_;  // series coefficients in cos²θ, highest power first
};

/// One location-scale Student t component.
struct TComponent {
  double weight = 0.0;
  double location = 0.0;
  double scale = 1.0;
  double degrees_of_freedom = 1.0;
};

/// The mixture P = (point_mass δ_0 + Σ w_c t_ν_c(μ_c, σ_c)) / (point_mass + Σ w_c), prepared for
/// quantiles: components with weight ≤ 0 are ignored; the lightest components whose total weight
/// is at most `tau` times the total mass are dropped and the rest renormalised, so the CDF differs
/// from the full mixture's by at most dropped_mass() ≤ tau everywhere. quantile() caches F(0⁻)
/// and counts evaluations: one object is not for concurrent use.
class TMixture {
 public:
  /// The default τ of the credible intervals (BmaResult's CredibleIntervals::omitted_mass counts it).
  static constexpr double kDefaultTau = 1e-10;

  TMixture(double point_mass, const std::vector<TComponent>& components, double tau = kDefaultTau);

  /// Normalised CDF at x (the point mass counts for x ≥ 0).
  double cdf(double x) const;
  /// The q-quantile inf{x : F(x) ≥ q}, q ∈ (0, 1): 0 when q falls in the jump at 0 (with the
  /// mixture's point mass); otherwise the root of the continuous CDF on that side of 0, to about
  /// 2^-42 relative (or 1e-14 of the mixture's SD). Its probability level is within dropped_mass()
  /// (plus rounding, ~1e-13) of q for the full mixture.
  double quantile(double q) const;
  /// Share of the total mass dropped by the τ rule (≤ τ).
  double dropped_mass() const { return dropped_; }
  std::size_t components() const;  ///< components kept
  /// Mixture CDF evaluations made so far by quantile() (each one pass over the kept components).
  std::uint64_t evaluations() const { return evaluations_; }

 private:
  struct Group {
    StudentT t;
    std::vector<double> weight;  // normalised
    std::vector<double> location;
    std::vector<double> inv_scale;  // 1/σ
  };
  /// The continuous part of the normalised CDF at x and its density.
  void continuous(double x, double& cdf, double* pdf) const;
  /// U consecutive components of a series group (w, loc, inv point at the first) added to a_sum
  /// (and their density to *f_sum unless null), in order.
  template <std::size_t U>
  static void series_block(const StudentT& t, double x, const double* w, const double* loc, const double* inv,
                           double norm, double half_nu1, double& a_sum, double* f_sum);

  std::vector<Group> groups_;
  double point_mass_ = 0.0;  // normalised
  double continuous_mass_ = 0.0;
  double mean_ = 0.0;
  double sd_ = 0.0;
  double dropped_ = 0.0;
  mutable double below_zero_ = -1.0;  // cached F(0⁻), < 0: not yet computed
  mutable std::uint64_t evaluations_ = 0;
};

}  // namespace dpmu::core
