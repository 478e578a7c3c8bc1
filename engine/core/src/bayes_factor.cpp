#include "dpmu/core/bayes_factor.hpp"

#include <algorithm>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/hypergeometric_pFq.hpp>
#include <boost/math/tools/minima.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/log_math.hpp"
#include "dpmu/core/priors.hpp"

namespace dpmu::core {

namespace {

using constants::kInf;

void check_arguments(const char* fn, const Prior& prior, double log_q, double n, int p, int p0) {
  check_prior(prior);
  if (!(std::isfinite(log_q) && log_q <= 0.0)) throw_domain(fn, "log_one_minus_r_squared", log_q, "finite and <= 0");
  // Sums of squares in double give log(1 − R²) ≥ log(DBL_TRUE_MIN) ≈ −745; the mode scan below
  // reaches t ≈ log n − log(1 − R²), so a value far below that would scan without end.
  if (log_q < -1e4) {
    throw_domain(fn, "log_one_minus_r_squared", log_q,
                 ">= -1e4 (R² within e^-10000 of 1 cannot come from double-precision sums of squares)");
  }
  if (p < 0) throw_domain(fn, "p", p, ">= 0");
  if (p0 < 0) throw_domain(fn, "p0", p0, ">= 0");
  if (!(std::isfinite(n) && n > static_cast<double>(p + p0))) {
    throw_domain(fn, "n", n, "finite and > p + p0 = " + std::to_string(p + p0));
  }
}

/// log(σ(-t) + Q σ(t)) = log((1 + gQ)/(1 + g)), g = e^t: small and exact, no O(n) cancellation.
inline double log_likelihood_ratio_term(double t, double log_q) {
  return log_sum_exp(-log1p_exp(t), log_q - log1p_exp(-t));
}

/// The log integrand h(t) of Eq. (3) in t = log g for a mixture prior's unit (priors/*.hpp).
template <class Unit>
struct LogIntegrand {
  Unit prior;
  double half_p;  // k/2
  double half_m;  // m/2
  double log_q;   // log(1 - R²)
  double t_min;   // lower support limit (robust)
  double t_low;   // where the mode search starts (−60, lower for hyper-g(/n) with a large a)

  double log_prior(double t) const { return prior.log_density(priors::LogGAt{t}); }
  double operator()(double t) const {
    return -half_p * log1p_exp(t) - half_m * log_likelihood_ratio_term(t, log_q) + log_prior(t);
  }
};

template <class Unit>
LogIntegrand<Unit> make_integrand(const Unit& prior, double log_q, double n, int p, int p0) {
  return {prior, 0.5 * p, 0.5 * (n - p0), log_q, prior.lower_limit(), std::min(-60.0, prior.mode_lower_limit())};
}

/// log ∫ exp(h(t)) dt and (optionally) the ratio ∫ σ(t) e^h / ∫ e^h, by Gauss–Kronrod on
/// panels of doubling width on both sides of the mode (docs/methods.md §2.3).
template <class Integrand>
BayesFactorResult integrate_log_integrand(const Integrand& h, bool want_shrinkage) {
  // 1. Mode: coarse scan (h is unimodal in t), then Brent refinement inside the bracket.
  const double lo = std::isfinite(h.t_min) ? h.t_min : h.t_low;
  // As R² → 1 the scan must reach beyond t = 80, where it used to end (log B was +inf below
  // log(1 − R²) ≈ −90).
  const double hi = priors::log_g_search_upper_limit(2.0 * h.half_m, h.log_q);
  constexpr double kStep = 0.5;
  double best_t = lo;
  double best_h = -kInf;
  for (double t = lo; t <= hi; t += kStep) {
    const double v = h(t);
    if (v > best_h) {
      best_h = v;
      best_t = t;
    }
  }
  const double br_lo = std::max(lo, best_t - kStep);
  const double br_hi = std::min(hi, best_t + kStep);
  const auto neg_h = [&](double t) { return -h(t); };
  const auto [t_star_found, neg_h_star] = boost::math::tools::brent_find_minima(neg_h, br_lo, br_hi, 40);
  double t_star = t_star_found;
  double h_star = -neg_h_star;
  if (best_h > h_star) {  // a boundary maximum (robust prior at its lower limit)
    t_star = best_t;
    h_star = best_h;
  }
  // 2. Scale from the curvature at the mode.
  double scale = 1.0;
  {
    const double d = 1e-4;
    const double curv = (h(t_star + d) - 2.0 * h_star + h(t_star - d)) / (d * d);
    if (curv < 0.0 && std::isfinite(curv)) scale = std::min(1.0, 1.0 / std::sqrt(-curv));
  }
  // 3. Integrate exp(h - h*) on panels [t*, t* + s], [t* + s, t* + 3s], ... until h - h* < -60.
  const auto f = [&](double t) { return std::exp(h(t) - h_star); };
  const auto fs = [&](double t) { return logistic(t) * std::exp(h(t) - h_star); };
  const auto fs2 = [&](double t) {
    const double l = logistic(t);
    return l * l * std::exp(h(t) - h_star);
  };
  double mass = 0.0;
  double shrink = 0.0;
  double shrink2 = 0.0;
  for (int side = -1; side <= 1; side += 2) {
    double start = t_star;
    double width = scale;
    for (int panel = 0; panel < 200; ++panel) {
      double end = start + side * width;
      bool last = false;
      if (side < 0 && end <= h.t_min) {
        end = h.t_min;
        last = true;
      }
      const double a = std::min(start, end);
      const double b = std::max(start, end);
      if (b > a) {
        mass += boost::math::quadrature::gauss_kronrod<double, 31>::integrate(f, a, b, 8, 1e-13);
        if (want_shrinkage) {
          shrink += boost::math::quadrature::gauss_kronrod<double, 31>::integrate(fs, a, b, 8, 1e-13);
          shrink2 += boost::math::quadrature::gauss_kronrod<double, 31>::integrate(fs2, a, b, 8, 1e-13);
        }
      }
      if (last || h(end) - h_star < -60.0) break;
      start = end;
      width *= 2.0;
    }
  }
  BayesFactorResult out;
  out.log_bayes_factor = h_star + std::log(mass);
  out.shrinkage = want_shrinkage ? std::clamp(shrink / mass, 0.0, 1.0) : 0.0;
  out.shrinkage_second_moment = want_shrinkage ? std::clamp(shrink2 / mass, 0.0, out.shrinkage) : 0.0;
  return out;
}

BayesFactorResult compute(const char* fn, const Prior& prior, double log_q, double n, int p, int p0,
                          bool want_shrinkage) {
  check_arguments(fn, prior, log_q, n, p, p0);
  if (!is_bayesian(prior.kind)) {
    throw_invalid(
        fn, "'" + std::string(to_string(prior.kind)) + "' is an information criterion; use log_information_criterion");
  }
  if (p == 0) return {0.0, 0.0};
  return visit_prior(prior, n, p, p0, [&](const auto& unit) -> BayesFactorResult {
    using Unit = std::decay_t<decltype(unit)>;
    if constexpr (Unit::family == priors::Family::fixed_g) {
      const double g = unit.g;
      const double t = std::log(g);
      BayesFactorResult out;
      out.log_bayes_factor = -0.5 * p * std::log1p(g) - 0.5 * (n - p0) * log_likelihood_ratio_term(t, log_q);
      out.shrinkage = g / (1.0 + g);
      out.shrinkage_second_moment = out.shrinkage * out.shrinkage;
      return out;
    } else if constexpr (Unit::family == priors::Family::mixture) {
      return integrate_log_integrand(make_integrand(unit, log_q, n, p, p0), want_shrinkage);
    } else {
      static_assert(Unit::family == priors::Family::information_criterion);
      return {};  // rejected above (is_bayesian)
    }
  });
}

}  // namespace

BayesFactorResult log_bayes_factor_and_shrinkage(const Prior& prior, double log_one_minus_r_squared, double n, int p,
                                                 int p0) {
  return compute("log_bayes_factor_and_shrinkage", prior, log_one_minus_r_squared, n, p, p0, true);
}

double log_bayes_factor(const Prior& prior, double log_one_minus_r_squared, double n, int p, int p0) {
  return compute("log_bayes_factor", prior, log_one_minus_r_squared, n, p, p0, false).log_bayes_factor;
}

double log_prior_density_log_g(const Prior& prior, double t, double n, int p, int p0) {
  check_arguments("log_prior_density_log_g", prior, 0.0, n, p, p0);
  return visit_prior(prior, n, p, p0, [&](const auto& unit) -> double {
    if constexpr (priors::is_mixture<std::decay_t<decltype(unit)>>) {
      return unit.log_density(priors::LogGAt{t});
    } else {
      throw_invalid("log_prior_density_log_g", "only mixture priors have a density on g");
    }
  });
}

double log_g_lower_limit(const Prior& prior, double n, int p, int p0) {
  check_arguments("log_g_lower_limit", prior, 0.0, n, p, p0);
  return visit_prior(prior, n, p, p0, [&](const auto& unit) -> double {
    if constexpr (priors::is_mixture<std::decay_t<decltype(unit)>>) {
      return unit.lower_limit();
    } else {
      return -kInf;
    }
  });
}

double log_bayes_factor_hyper_g_closed_form(double r_squared, double n, int p, int p0, double a) {
  check_half_open_interval("log_bayes_factor_hyper_g_closed_form", "r_squared", r_squared, 0.0, 1.0);
  const double m = n - p0;
  const double f = boost::math::hypergeometric_pFq({0.5 * m, 1.0}, {0.5 * (p + a)}, r_squared);
  return std::log((a - 2.0) / (p + a - 2.0)) + std::log(f);
}

double log_bayes_factor_robust_closed_form(double r_squared, double n, int p, int p0) {
  check_half_open_interval("log_bayes_factor_robust_closed_form", "r_squared", r_squared, 0.0, 1.0);
  const double m = n - p0;
  const double q = 1.0 - r_squared;
  const double rho = 1.0 / static_cast<double>(p + p0);
  const double z = (1.0 - 1.0 / q) * (p + p0) / (n + 1.0);
  // Pfaff: 2F1(α, β; γ; z) = (1-z)^{-β} 2F1(γ-α, β; γ; z/(z-1)) with α=(p+1)/2, β=m/2, γ=(p+3)/2.
  const double w = z / (z - 1.0);
  const double f = boost::math::hypergeometric_pFq({1.0, 0.5 * m}, {0.5 * (p + 3)}, w);
  const double log_2f1 = -0.5 * m * std::log1p(-z) + std::log(f);
  return -0.5 * m * std::log(q) - 0.5 * p * std::log(rho * (n + 1.0)) - std::log(p + 1.0) + log_2f1;
}

}  // namespace dpmu::core
