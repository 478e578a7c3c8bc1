#pragma once
/// @file quantile.hpp
/// The one sample-quantile definition of dpmu: type 7 of Hyndman & Fan (1996), R's default and
/// numpy's "linear". Used by the results summaries, the experiments and the plots' bin ranges.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>

#include "dpmu/core/checks.hpp"

namespace dpmu::core {

/// Type-7 quantile x₍ₗ₎ + (h − l)(x₍ₗ₊₁₎ − x₍ₗ₎), h = (n − 1)q, l = ⌊h⌋, of the values x (x₍ᵢ₎ the
/// i-th smallest, 0-based). `values` is reordered in place (O(n) selection; a sorted input stays a
/// valid input); the result equals the one computed after a full sort. Empty input → NaN. NaN
/// values must be removed by the caller (their order is undefined).
/// @throws std::domain_error for q outside [0, 1].
inline double type7_quantile(std::span<double> values, double q) {
  if (!(q >= 0.0 && q <= 1.0)) throw_domain("type7_quantile", "q", q, "in [0, 1]");
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double h = (static_cast<double>(values.size()) - 1.0) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto at = [&](std::size_t i) { return values.begin() + static_cast<std::ptrdiff_t>(i); };
  std::nth_element(values.begin(), at(lo), values.end());
  const double x_lo = values[lo];
  if (lo + 1 >= values.size() || h == static_cast<double>(lo)) return x_lo;
  const double x_hi = *std::min_element(at(lo + 1), values.end());
  return x_lo + (h - static_cast<double>(lo)) * (x_hi - x_lo);
}

}  // namespace dpmu::core
