#pragma once
// Independent oracle for log B10 of paper Eq. (3), for tests only.
//
// It differs from the production code in every step that could hide an error:
//  * the integrand is the textbook one, ((m-k)/2) log(1+g) - (m/2) log(1+gQ) + log π(g) + log g,
//    evaluated in long double (64-bit mantissa) instead of the cancellation-free double form;
//  * the prior densities are written out again from their definitions;
//  * the mode is found by a dense scan plus golden-section search;
//  * the integral uses Boost's double-exponential rules (exp_sinh on each half-line,
//    tanh_sinh on the bounded robust piece) instead of panelled Gauss–Kronrod.
#include <boost/math/quadrature/exp_sinh.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <cmath>
#include <limits>
#include <numbers>

#include "dpmu/core/g_priors.hpp"

namespace dpmu::test {

inline long double oracle_log_integrand(core::PriorKind kind, long double t, long double log_q, long double n, int k,
                                        int p0, long double a) {
  const long double g = std::exp(t);
  const long double m = n - p0;
  const long double q = std::exp(log_q);
  long double log_prior = 0;
  switch (kind) {
    case core::PriorKind::zellner_siow:  // InvGamma(1/2, n/2)
      log_prior = 0.5L * std::log(n / 2) - std::lgamma(0.5L) - 1.5L * std::log(g) - n / (2 * g);
      break;
    case core::PriorKind::hyper_g:
      log_prior = std::log((a - 2) / 2) - (a / 2) * std::log1p(g);
      break;
    case core::PriorKind::hyper_g_n:
      log_prior = std::log((a - 2) / (2 * n)) - (a / 2) * std::log1p(g / n);
      break;
    case core::PriorKind::robust: {
      const long double rho = 1.0L / (k + p0);
      const long double g_min = rho * (1 + n) - 1;
      if (g < g_min) return -std::numeric_limits<long double>::infinity();
      log_prior = std::log(0.5L) + 0.5L * std::log(rho * (1 + n)) - 1.5L * std::log(g + 1);
      break;
    }
    default:
      return std::numeric_limits<long double>::quiet_NaN();
  }
  return ((m - k) / 2) * std::log1p(g) - (m / 2) * std::log1p(g * q) + log_prior + t;
}

inline double oracle_log_bayes_factor(core::PriorKind kind, double log_q, double n, int k, int p0, double a = 3.0) {
  const auto h = [&](long double t) {
    if (std::abs(t) > 2000) return -std::numeric_limits<long double>::infinity();  // far tails (and no overflow)
    return oracle_log_integrand(kind, t, log_q, n, k, p0, a);
  };
  long double t_min = -80;
  if (kind == core::PriorKind::robust) t_min = std::log((n + 1.0L) / (k + p0) - 1.0L);
  long double best = t_min;
  long double best_h = h(t_min);
  for (long double t = t_min; t < 100; t += 0.05L) {
    const long double v = h(t);
    if (v > best_h) {
      best_h = v;
      best = t;
    }
  }
  long double lo = std::max(t_min, best - 0.05L);
  long double hi = best + 0.05L;
  const long double phi = (std::sqrt(5.0L) - 1) / 2;
  for (int i = 0; i < 200; ++i) {
    const long double x1 = hi - phi * (hi - lo);
    const long double x2 = lo + phi * (hi - lo);
    if (h(x1) > h(x2))
      hi = x2;
    else
      lo = x1;
  }
  long double t_star = (lo + hi) / 2;
  long double h_star = h(t_star);
  if (best_h > h_star) {
    t_star = best;
    h_star = best_h;
  }
  boost::math::quadrature::exp_sinh<long double> right;
  const long double upper = right.integrate([&](long double s) { return std::exp(h(t_star + s) - h_star); }, 0.0L,
                                            std::numeric_limits<long double>::infinity(), 1e-15L);
  long double lower = 0;
  if (kind == core::PriorKind::robust) {
    if (t_star > t_min) {
      boost::math::quadrature::tanh_sinh<long double> mid;
      lower = mid.integrate([&](long double t) { return std::exp(h(t) - h_star); }, t_min, t_star, 1e-15L);
    }
  } else {
    boost::math::quadrature::exp_sinh<long double> left;
    lower = left.integrate([&](long double s) { return std::exp(h(t_star - s) - h_star); }, 0.0L,
                           std::numeric_limits<long double>::infinity(), 1e-15L);
  }
  return static_cast<double>(h_star + std::log(upper + lower));
}

}  // namespace dpmu::test
