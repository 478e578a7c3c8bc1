#pragma once
/// @file log_math.hpp
/// Log-scale arithmetic used everywhere Bayes factors and probabilities meet
/// (Bayes factors for n = 10^7 overflow doubles; docs/architecture.md §3.4).

#include <cmath>
#include <limits>
#include <span>

namespace dpmu::core {

/// Constants the core's sources share (a `using constants::kInf;` in a source, not exported to
/// users of `dpmu::core`, whose own kInf would be ambiguous).
namespace constants {
/// +infinity (the log of an infinite weight, an unbounded interval's edge).
inline constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace constants

/// Softplus log(1 + e^x), accurate for every finite x (no overflow for x = 1e6,
/// full relative precision for x = -1e3). Deterministic.
inline double log1p_exp(double x) {
  if (x > 0.0) return x + std::log1p(std::exp(-x));
  return std::log1p(std::exp(x));
}

/// logistic(x) from e = exp(−|x|) when the caller has it: 1/(1 + e) for x ≥ 0, e/(1 + e) below
/// (no overflow, full relative accuracy in both tails).
inline double logistic_from_exp_abs(double x, double e) { return x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e); }

/// Logistic function 1/(1 + e^{-x}), in [0, 1], no overflow for |x| ~ 1e6.
inline double logistic(double x) { return logistic_from_exp_abs(x, std::exp(-std::abs(x))); }

/// log(logistic(x)) = -log(1 + e^{-x}), accurate in both tails.
inline double log_logistic(double x) { return -log1p_exp(-x); }

/// log(e^a + e^b) without overflow; -inf inputs are allowed (log of zero).
inline double log_sum_exp(double a, double b) {
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  const double hi = a > b ? a : b;
  const double lo = a > b ? b : a;
  return hi + std::log1p(std::exp(lo - hi));
}

/// log(sum_i e^{x_i}) by subtracting the maximum; -inf for an empty span.
/// NaN in any input propagates to the result.
inline double log_sum_exp(std::span<const double> xs) {
  double hi = -std::numeric_limits<double>::infinity();
  for (double x : xs) {
    if (std::isnan(x)) return x;
    if (x > hi) hi = x;
  }
  if (hi == -std::numeric_limits<double>::infinity()) return hi;
  if (hi == std::numeric_limits<double>::infinity()) return hi;
  double s = 0.0;
  for (double x : xs) s += std::exp(x - hi);
  return hi + std::log(s);
}

/// log(1 - e^x) for x <= 0 (Mächler 2012 "Accurately computing log(1 - exp(-|a|))").
inline double log1m_exp(double x) {
  if (x > -0.6931471805599453) return std::log(-std::expm1(x));
  return std::log1p(-std::exp(x));
}

/// logit(p) = log(p / (1 - p)) for p in (0, 1).
inline double logit(double p) { return std::log(p) - std::log1p(-p); }

}  // namespace dpmu::core
