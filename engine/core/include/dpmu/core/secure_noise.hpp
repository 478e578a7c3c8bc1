#pragma once
/// @file secure_noise.hpp
/// Noise for real data releases that resists the floating-point attack on textbook Laplace
/// and Gaussian samplers (Mironov 2012, "On significance of the least significant bits for
/// differential privacy", CCS). The value is rounded to a power-of-two grid and integer noise is
/// added with the exact samplers of Canonne, Kamath & Steinke (2020, "The discrete Gaussian for
/// differential privacy", NeurIPS; Algorithms 1–3), which use integer arithmetic only. Every output
/// is an exact multiple of the grid, so no pattern of low-order bits exists to leak.
///
/// Privacy accounting (docs/decisions.md): rounding to the grid g changes the sensitivity from Δ
/// to at most Δ_int = ⌈Δ/g⌉ + 1 grid units.
///  * Laplace: integer scale t = ⌈Δ_int/ε⌉, so the discrete Laplace is (Δ_int/t ≤ ε)-DP exactly.
///  * Gaussian: σ² in grid units s = ⌈(σ/g)²⌉ with σ the analytic Gaussian σ for sensitivity
///    Δ_int·g; the exact δ of the discrete Gaussian (CKS Theorem 7, by summation) is checked ≤ δ and
///    s is increased by 1% steps until it is.
/// The grid is g = 2^(⌊log2(scale)⌋ − 40) (Laplace) or 2^(⌊log2 σ⌋ − 10) (Gaussian): the extra
/// noise is a relative 2^-39 (Laplace) or about 0.2% of σ (Gaussian).

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "dpmu/core/mechanisms.hpp"
#include "dpmu/core/random.hpp"

namespace dpmu::core {

/// Bernoulli(exp(−γ)) for γ = num/den ∈ [0, 1] exactly (CKS Algorithm 1): K = the first k with
/// A_k = 0, A_k ~ Bernoulli(γ/k); return K odd. num ≤ den, den ≥ 1; uniform_index draws only.
template <class Rng>
bool bernoulli_exp_minus_unit(Rng& rng, std::uint64_t num, std::uint64_t den) {
  std::uint64_t k = 1;
  while (num > 0 && uniform_index(rng, den * k) < num) ++k;
  return (k % 2) == 1;
}

/// Bernoulli(exp(−num/den)) exactly for any γ = num/den ≥ 0 (den ≥ 1):
/// e^{−γ} = (e^{−1})^{⌊γ⌋} e^{−(γ−⌊γ⌋)} (CKS Algorithm 1 and its extension).
template <class Rng>
bool bernoulli_exp_minus(Rng& rng, uint128_t num, std::uint64_t den) {
  const uint128_t whole = num / den;
  for (uint128_t i = 0; i < whole; ++i) {
    if (!bernoulli_exp_minus_unit(rng, 1, 1)) return false;
  }
  return bernoulli_exp_minus_unit(rng, static_cast<std::uint64_t>(num % den), den);
}

/// Discrete Laplace on the integers, P(X = x) ∝ exp(−|x|/t), integer t ≥ 1 (CKS Algorithm 2).
template <class Rng>
std::int64_t discrete_laplace(Rng& rng, std::uint64_t t) {
  for (;;) {
    const std::uint64_t u = uniform_index(rng, t);
    if (!bernoulli_exp_minus(rng, u, t)) continue;
    std::uint64_t v = 0;
    while (bernoulli_exp_minus_unit(rng, 1, 1)) ++v;
    const std::uint64_t x = u + t * v;
    const bool negative = (rng() & 1U) != 0;
    if (negative && x == 0) continue;
    return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}

/// Discrete Gaussian on the integers, P(X = x) ∝ exp(−x²/(2s)), integer variance parameter
/// s ≥ 1 (CKS Algorithm 3, with t = ⌊√s⌋ + 1).
template <class Rng>
std::int64_t discrete_gaussian(Rng& rng, std::uint64_t s) {
  const auto t = static_cast<std::uint64_t>(std::floor(std::sqrt(static_cast<double>(s)))) + 1;
  const uint128_t den128 = static_cast<uint128_t>(2) * s * t * t;
  if (den128 >> 63) throw std::domain_error("discrete_gaussian: variance parameter too large");
  const auto den = static_cast<std::uint64_t>(den128);
  for (;;) {
    const std::int64_t y = discrete_laplace(rng, t);
    const auto ay = static_cast<uint128_t>(y < 0 ? -y : y);
    const uint128_t yt = ay * t;
    const uint128_t diff = yt > s ? yt - s : s - yt;
    if (bernoulli_exp_minus(rng, diff * diff, den)) return y;
  }
}

/// Exact δ(ε) of the discrete Gaussian N_Z(0, s) for integer sensitivity d (CKS Theorem 7):
/// δ = P[Z > εs/d − d/2] − e^ε P[Z > εs/d + d/2], by summation of the normalised pmf.
double discrete_gaussian_delta(std::uint64_t s, double epsilon, std::uint64_t sensitivity);

/// How many discrete-Gaussian calibrations (the search for the integer variance s with exact
/// δ(ε) ≤ δ) this process has computed; identical calibrations are memoised and counted once.
std::size_t discrete_gaussian_calibrations();

/// Result of a secure noise addition.
struct SecureNoise {
  double value;         ///< released value (an exact multiple of grid)
  double grid;          ///< grid spacing g (a power of two)
  double noise_scale;   ///< Laplace scale t·g or Gaussian σ √s·g actually used
  std::string sampler;  ///< "discrete-laplace" or "discrete-gaussian"
};

/// Secure noise for one mechanism: calibrates the grid and the integer noise parameter once (see the
/// file comment), then adds noise to any number of values.
class SecureNoiseSampler {
 public:
  /// @param dimension number of coordinates the mechanism's sensitivity covers (a vector query
  ///   released coordinate-wise with independent noise). Rounding each coordinate to the grid adds
  ///   at most one grid unit per coordinate to the L1 sensitivity, so Δ_int = ⌈Δ/g⌉ + dimension.
  ///   Only the Laplace mechanism supports dimension > 1.
  /// @param value_bound a public bound on |value| (0: none). The grid is made at least
  ///   2^(⌈log2 value_bound⌉ − 50) so that every value in range fits (|value/g| < 2^52); a coarser grid
  ///   only coarsens the noise lattice, the privacy calibration accounts for it.
  /// @throws std::invalid_argument for dimension 0 or a Gaussian with
  ///   dimension > 1; std::domain_error if calibration fails.
  explicit SecureNoiseSampler(const ScalarMechanism& mechanism, std::size_t dimension = 1, double value_bound = 0.0);

  /// value + noise with at least the (ε, δ) guarantee of the mechanism; the result is an exact multiple
  /// of grid(). @throws std::invalid_argument for a non-finite value; std::domain_error if |value/g| ≥ 2^52.
  template <class Rng>
  SecureNoise add(double value, Rng& rng) const;

  double grid() const { return grid_; }
  /// Laplace scale t·g or Gaussian σ √s·g actually used (≥ the mechanism's).
  double noise_scale() const;

 private:
  bool laplace_;
  double grid_;
  std::uint64_t integer_scale_;  // t (Laplace) or s (Gaussian)
};

template <class Rng>
SecureNoise SecureNoiseSampler::add(double value, Rng& rng) const {
  if (!std::isfinite(value)) throw std::invalid_argument("SecureNoiseSampler::add: the value is not finite");
  const double units = std::nearbyint(value / grid_);
  if (std::abs(units) >= 0x1.0p52) {
    throw std::domain_error("SecureNoiseSampler::add: value too large for the noise grid");
  }
  const std::int64_t z = laplace_ ? discrete_laplace(rng, integer_scale_) : discrete_gaussian(rng, integer_scale_);
  SecureNoise out;
  out.grid = grid_;
  out.noise_scale = noise_scale();
  out.sampler = laplace_ ? "discrete-laplace" : "discrete-gaussian";
  out.value = (units + static_cast<double>(z)) * grid_;
  return out;
}

}  // namespace dpmu::core
