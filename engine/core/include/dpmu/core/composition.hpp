#pragma once
/// @file composition.hpp
/// Composition of differentially private releases: the arithmetic behind the privacy-budget
/// ledger's accountants (docs/privacy.md, "Privacy-budget ledger" and "Accountants"). Pure and
/// deterministic; every bound holds for adaptively chosen releases.
///
///  * Gaussian releases: exact composition of Gaussian differential privacy (Dong, Roth & Su 2022,
///    "Gaussian differential privacy", JRSS B 84(1), Corollaries 2.13 and 3.3): releases that are
///    μ_i-GDP are jointly sqrt(Σ μ_i²)-GDP, and μ-GDP is (ε, δ_μ(ε))-DP for every ε ≥ 0
///    (gaussian_dp_delta in mechanisms.hpp).
///  * Pure ε-DP releases: the optimal composition of Kairouz, Oh & Viswanath (2017, "The
///    composition theorem for differential privacy", IEEE Trans. Inf. Theory 63(6); Theorem 3.3)
///    for k releases of one ε, and their bound for heterogeneous ε (Theorem 3.5).
///  * A mixture of Gaussian, pure and other (ε, δ)-DP releases: the δ at which the total is stated
///    is split between the Gaussian and the pure families, each family's ε at its share is added,
///    and the other releases are added by basic composition; the split is optimised numerically
///    (any split gives a valid bound; docs/privacy.md derives it).
///  * zCDP (Bun & Steinke 2016, "Concentrated differential privacy: simplifications, extensions
///    and lower bounds", TCC, Sec. 1.2): ρ adds up under composition; Gaussian noise of
///    L2 sensitivity Δ2 and scale σ is Δ2²/(2σ²)-zCDP; ε-DP implies ε²/2-zCDP.

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace dpmu::core {

/// The smallest ε ≥ 0 for which a μ-GDP mechanism is (ε, δ)-DP: the root of gaussian_dp_delta(μ, ε)
/// = δ (0 when δ ≥ δ_μ(0) = 2Φ(μ/2) − 1; +∞ when δ = 0). Found by TOMS 748 to 52 bits.
/// @param mu > 0 finite. @param delta in [0, 1). @throws std::domain_error otherwise.
double gaussian_dp_epsilon(double mu, double delta);

/// The GDP parameter of the analytic Gaussian mechanism calibrated to (ε, δ) (Balle & Wang 2018):
/// the μ with gaussian_dp_delta(μ, ε) = δ, i.e. Δ2/σ for σ = analytic_gaussian_sigma(ε, δ, Δ2).
/// @param epsilon > 0 finite. @param delta in (0, 1). @throws std::domain_error otherwise.
double analytic_gaussian_mu(double epsilon, double delta);

/// The privacy profile of the k-fold composition of ε0-DP mechanisms (KOV Theorem 3.3, which is
/// the profile of k independent randomized responses): with p = e^ε0/(1 + e^ε0),
///   δ(ε) = Σ_{ℓ=0}^{k} C(k, ℓ) [p^(k−ℓ) (1−p)^ℓ − e^ε p^ℓ (1−p)^(k−ℓ)]_+ ,
/// which at ε = (k − 2i)ε0 is KOV's δ_i = Σ_{ℓ<i} C(k,ℓ)(e^((k−ℓ)ε0) − e^((k−2i+ℓ)ε0))/(1+e^ε0)^k.
/// Terms are evaluated in log space (k up to 10^6). @param epsilon0 > 0 finite. @param k ≥ 1.
/// @param epsilon ≥ 0 finite. @throws std::domain_error otherwise.
double pure_composition_delta(double epsilon0, std::size_t k, double epsilon);

/// The smallest ε for which k ε0-DP releases are jointly (ε, δ)-DP (KOV Theorem 3.3, optimal):
/// the root of pure_composition_delta = δ in [0, kε0] (kε0 when δ = 0).
/// @param delta in [0, 1). @throws std::domain_error for invalid arguments.
double pure_composition_epsilon(double epsilon0, std::size_t k, double delta);

/// KOV Theorem 3.5 for pure releases of heterogeneous ε_ℓ: (ε̃, δ)-DP jointly with
///   ε̃ = min{ Σ ε_ℓ, Σ ε_ℓ(e^ε_ℓ − 1)/(e^ε_ℓ + 1) + sqrt(2 Σ ε_ℓ² log(e + sqrt(Σ ε_ℓ²)/δ)),
///            Σ ε_ℓ(e^ε_ℓ − 1)/(e^ε_ℓ + 1) + sqrt(2 Σ ε_ℓ² log(1/δ)) }   (Σ ε_ℓ when δ = 0).
/// @param epsilons each > 0 finite (empty: 0). @param delta in [0, 1). @throws std::domain_error.
double heterogeneous_pure_composition_epsilon(std::span<const double> epsilons, double delta);

/// Pure releases at δ: the optimal composition when every ε is the same (relative 1e-12),
/// else KOV Theorem 3.5; never above Σ ε. Empty: 0.
double pure_family_epsilon(std::span<const double> epsilons, double delta);

/// The releases of a ledger, by what is known of their privacy.
struct CompositionInput {
  std::vector<double> gaussian_mu;  ///< μ of each Gaussian (GDP) release
  /// (ε, δ) of each Gaussian release: its basic-composition fallback (the total never exceeds the
  /// family's basic sum when the δ share allows it). Same length as gaussian_mu.
  std::vector<std::pair<double, double>> gaussian_epsilon_delta;
  std::vector<double> pure_epsilon;                    ///< ε of each pure ε-DP release
  std::vector<std::pair<double, double>> approximate;  ///< (ε, δ) of every other release
};

/// The tight total of a mixture at one δ, with the split that achieved it.
struct CompositionTotal {
  double epsilon = 0.0;              ///< +∞ if no split reaches δ (e.g. Gaussian releases and δ = 0)
  double delta = 0.0;                ///< the δ the total is stated at (the argument)
  double gaussian_mu = 0.0;          ///< sqrt(Σ μ_i²)
  double gaussian_epsilon = 0.0;     ///< the Gaussian family's ε at its share
  double gaussian_delta = 0.0;       ///< the Gaussian family's share of δ
  double pure_epsilon = 0.0;         ///< the pure family's ε at its share
  double pure_delta = 0.0;           ///< the pure family's share of δ
  double approximate_epsilon = 0.0;  ///< Σ ε of the other releases
  double approximate_delta = 0.0;    ///< Σ δ of the other releases
  bool basic_was_smaller = false;    ///< the basic sum (Σ ε, at Σ δ ≤ δ) was below the split bound
};

/// The tight total of a mixture of releases at δ (see the file comment; docs/privacy.md,
/// "Accountants"): minimise over δ_G + δ_P = δ − Σ δ_approximate, δ_G, δ_P ≥ 0, of
///   ε_G(δ_G) + ε_P(δ_P) + Σ ε_approximate,
/// with ε_G(x) = min(gaussian_dp_epsilon(μ_G, x), Σ ε_G if x ≥ Σ δ_G) and ε_P(y) =
/// pure_family_epsilon(ε's, y); then never above Σ ε of all releases when Σ δ of all ≤ δ.
/// The split is searched on a grid of 161 points (log-spaced towards both ends, plus the basic
/// corners) and refined by golden section; any split is a valid bound, so the search only affects
/// tightness. One release alone: its (ε, δ) when δ equals its δ.
/// @param delta in [0, 1). @throws std::domain_error for invalid inputs (non-finite, negative).
CompositionTotal tight_composition(const CompositionInput& input, double delta);

/// ρ of releases under zCDP: Σ μ_i²/2 + Σ ε_j²/2 (Bun & Steinke 2016, Sec. 1.2).
double zcdp_rho(std::span<const double> gaussian_mu, std::span<const double> pure_epsilon);

}  // namespace dpmu::core
