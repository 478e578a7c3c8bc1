#pragma once
/// @file tulap.hpp
/// The Tulap distribution and the differentially private uniformly most powerful (DP-UMP) test of a
/// binomial proportion (Awan & Slavković 2018, "Differentially private uniformly most powerful tests
/// for binomial data", NeurIPS; docs/methods.md "Test of Tests").
///
/// Tulap(m, b), b = e^{−ε} ∈ (0, 1) (their Definition 4.1 with q = 0, no truncation): the law of
/// m + G1 − G2 + U with G1, G2 iid geometric, P(G = k) = (1 − b) b^k (k = 0, 1, …), and
/// U ~ Uniform(−1/2, 1/2), all independent. G1 − G2 is the discrete Laplace law P(k) ∝ b^{|k|}, so
/// for an integer count X of sensitivity 1, Z = X + G1 − G2 + U is ε-DP (the discrete Laplace
/// mechanism; adding U is post-processing). The DP-UMP p-value of H0: θ ≤ θ0 against H1: θ > θ0
/// from Z, X ~ Binomial(m, θ), is p(z) = P_{θ0}(X + N ≥ z) = Σ_x Bin(x; m, θ0) F_N(x − z)
/// (their Algorithm 1 and Theorem 4.5), N ~ Tulap(0, b).
///
/// Pure: no I/O, no threads; samplers take the generator explicitly.

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "dpmu/core/random.hpp"
#include "dpmu/core/secure_noise.hpp"

namespace dpmu::core {

/// CDF of Tulap(0, e^{−ε}) at t (Awan & Slavković 2018, Definition 4.1, q = 0): with [t] the
/// nearest integer, F(t) = b^{−[t]}/(1+b)·(b + (t − [t] + 1/2)(1 − b)) for t ≤ 0 and
/// 1 − F(−t) for t > 0 (the law is symmetric). Continuous, F(0) = 1/2. Evaluated from ε (not b) so
/// that b^k and 1 − b keep full precision. @param epsilon > 0 finite (unchecked).
double tulap_cdf(double t, double epsilon);

/// The DP-UMP p-value of H0: θ ≤ theta0 for a released Z = X + N, X ~ Binomial(trials, θ),
/// N ~ Tulap(0, e^{−ε}): Σ_{x=0}^{trials} Bin(x; trials, theta0)·F_N(x − z) (Awan & Slavković 2018,
/// Algorithm 1). Decreasing in z, in (0, 1).
/// @throws std::domain_error unless trials ≥ 1, theta0 ∈ (0, 1), ε > 0 finite, z finite.
double tulap_binomial_p_value(double z, std::uint64_t trials, double theta0, double epsilon);

/// P(X + N ≥ z) for X with the probability mass function `pmf` on {0, 1, …, pmf.size() − 1} and
/// N ~ Tulap(0, e^{−ε}): Σ_x pmf(x) F_N(x − z). The power of the test when `pmf` is the law of the
/// count under an alternative. Unchecked.
double tulap_upper_probability(double z, std::span<const double> pmf, double epsilon);

/// The critical value z_α of the DP-UMP test: tulap_binomial_p_value(z_α) = alpha (bisection to
/// 1e-12 relative; the p-value is continuous and strictly decreasing). Rejecting when Z ≥ z_α is
/// rejecting when the p-value is ≤ α. @throws as tulap_binomial_p_value, alpha ∈ (0, 1).
double tulap_critical_value(std::uint64_t trials, double theta0, double epsilon, double alpha);

/// Binomial(trials, theta) pmf on {0, …, trials} by log-gamma (exact 0/1 for θ ∈ {0, 1}).
std::vector<double> binomial_pmf(std::uint64_t trials, double theta);

/// The Poisson-binomial pmf of a sum of independent Bernoulli(theta_i) counts, by the convolution
/// recursion (O(k²) for k trials; exact up to rounding).
std::vector<double> poisson_binomial_pmf(std::span<const double> theta);

/// Denominator of the dyadic ε of the Tulap sampler: ε' = num/2^kTulapEpsilonBits. 2^52 keeps
/// den·k of CKS Algorithm 1 inside 64 bits up to k = 4096 (reached with probability < 1/4096!).
inline constexpr int kTulapEpsilonBits = 52;

/// An exact sample of the discrete Laplace law P(k) ∝ exp(−ε|k|) for ε = num/2^52 (a dyadic
/// rational), by Canonne, Kamath & Steinke (2020), Algorithm 2 with scale t/s = 2^52/num: integer
/// arithmetic and exact Bernoulli(e^{−γ}) draws only, O(1) expected draws for every ε.
/// @param num ≥ 1. Deterministic given the generator.
template <class Rng>
std::int64_t discrete_laplace_dyadic(Rng& rng, std::uint64_t num) {
  constexpr std::uint64_t t = std::uint64_t{1} << kTulapEpsilonBits;
  for (;;) {
    const std::uint64_t u = uniform_index(rng, t);
    if (!bernoulli_exp_minus(rng, u, t)) continue;
    std::uint64_t v = 0;
    while (bernoulli_exp_minus_unit(rng, 1, 1)) ++v;
    // X = U + t V, Y = ⌊X / s⌋ with s = num (X may exceed 64 bits: 128-bit arithmetic)
    const uint128_t x = static_cast<uint128_t>(u) + static_cast<uint128_t>(t) * v;
    const uint128_t y128 = x / num;
    if (y128 >> 62) continue;  // |Y| ≥ 2^62: probability below e^{-2^62 ε}, rejected (renormalised law)
    const auto y = static_cast<std::int64_t>(y128);
    const bool negative = (rng() & 1U) != 0;
    if (negative && y == 0) continue;
    return negative ? -y : y;
  }
}

/// The privacy parameter actually used by tulap_noise for a requested ε: ε' = ⌊ε·2^52⌋/2^52 ≤ ε
/// (a dyadic rational, so the geometric laws are sampled exactly); relative change below 2.3·10^-4
/// for ε ≥ 10^-12 and below 2.3·10^-10 for ε ≥ 10^-6. A release with ε' is ε'-DP, hence ε-DP, and
/// its p-value uses ε'. @throws std::domain_error unless ε ∈ [1e-12, 1000].
double tulap_dyadic_epsilon(double epsilon);

/// One Tulap(0, e^{−ε'}) draw, ε' = tulap_dyadic_epsilon(ε): an exact discrete Laplace integer plus
/// U(−1/2, 1/2) (53 random bits). @throws as tulap_dyadic_epsilon.
template <class Rng>
double tulap_noise(Rng& rng, double epsilon) {
  const double e = tulap_dyadic_epsilon(epsilon);
  const auto num = static_cast<std::uint64_t>(std::ldexp(e, kTulapEpsilonBits));
  const std::int64_t k = discrete_laplace_dyadic(rng, num);
  return static_cast<double>(k) + (uniform_open01(rng) - 0.5);
}

}  // namespace dpmu::core
