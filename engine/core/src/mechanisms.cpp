#include "dpmu/core/mechanisms.hpp"

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <limits>
#include <numbers>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/log_math.hpp"

namespace dpmu::core {

double laplace_scale(double epsilon, double l1_sensitivity) {
  check_positive_finite("laplace_scale", "epsilon", epsilon);
  check_positive_finite("laplace_scale", "l1_sensitivity", l1_sensitivity);
  return l1_sensitivity / epsilon;
}

double log_normal_cdf(double x) {
  if (x > 0.0) return std::log1p(-0.5 * boost::math::erfc(x / std::numbers::sqrt2));
  if (x > -30.0) return std::log(0.5 * boost::math::erfc(-x / std::numbers::sqrt2));
  // Mills-ratio asymptotic series: Φ(x) = φ(x)/|x| (1 - 1/x² + 3/x⁴ - 15/x⁶ + 105/x⁸ - …)
  const double z = 1.0 / (x * x);
  const double series = 1.0 - z * (1.0 - 3.0 * z * (1.0 - 5.0 * z * (1.0 - 7.0 * z * (1.0 - 9.0 * z))));
  return -0.5 * x * x - std::log(-x) - 0.5 * std::log(2.0 * std::numbers::pi) + std::log(series);
}

namespace {

// Φ(a) − e^ε Φ(b) for b < a, in a form that avoids overflow of e^ε.
double phi_difference(double a, double epsilon, double b) {
  const double la = log_normal_cdf(a);
  const double lb = epsilon + log_normal_cdf(b);
  if (lb >= la) return -std::exp(lb) * (-std::expm1(la - lb));
  return std::exp(la) * (-std::expm1(lb - la));
}

}  // namespace

double analytic_gaussian_delta(double sigma, double epsilon, double l2_sensitivity) {
  constexpr const char* fn = "analytic_gaussian_delta";
  check_positive_finite(fn, "sigma", sigma);
  check_positive_finite(fn, "epsilon", epsilon);
  check_positive_finite(fn, "l2_sensitivity", l2_sensitivity);
  return gaussian_dp_delta(l2_sensitivity / sigma, epsilon);
}

double gaussian_dp_delta(double mu, double epsilon) {
  constexpr const char* fn = "gaussian_dp_delta";
  check_positive_finite(fn, "mu", mu);
  if (!(std::isfinite(epsilon) && epsilon >= 0.0)) throw_domain(fn, "epsilon", epsilon, "finite and >= 0");
  const double a = mu / 2.0;
  const double b = epsilon / mu;
  return std::max(0.0, phi_difference(a - b, epsilon, -a - b));
}

double analytic_gaussian_sigma(double epsilon, double delta, double l2_sensitivity) {
  constexpr const char* fn = "analytic_gaussian_sigma";
  check_positive_finite(fn, "epsilon", epsilon);
  check_open_interval(fn, "delta", delta, 0.0, 1.0);
  check_positive_finite(fn, "l2_sensitivity", l2_sensitivity);
  // BW Algorithm 1, with σ = α Δ2 / √(2ε).
  const double delta0 = phi_difference(0.0, epsilon, -std::sqrt(2.0 * epsilon));
  double alpha = 1.0;
  if (delta != delta0) {
    const bool plus = delta > delta0;
    // B⁺(v) = Φ(√(εv)) − e^ε Φ(−√(ε(v+2))) increasing; B⁻(u) = Φ(−√(εu)) − e^ε Φ(−√(ε(u+2))) decreasing.
    const auto b = [&](double v) {
      const double s = std::sqrt(epsilon * v);
      const double t = -std::sqrt(epsilon * (v + 2.0));
      return (plus ? phi_difference(s, epsilon, t) : phi_difference(-s, epsilon, t)) - delta;
    };
    double lo = 0.0, hi = 1.0;
    // Doubling: find hi with the root in [lo, hi].
    for (int i = 0; i < 2000 && (plus ? b(hi) < 0.0 : b(hi) > 0.0); ++i) {
      lo = hi;
      hi *= 2.0;
    }
    boost::uintmax_t iterations = 500;
    const auto root =
        boost::math::tools::toms748_solve(b, lo, hi, boost::math::tools::eps_tolerance<double>(52), iterations);
    const double v = 0.5 * (root.first + root.second);
    alpha = plus ? std::sqrt(1.0 + v / 2.0) - std::sqrt(v / 2.0) : std::sqrt(1.0 + v / 2.0) + std::sqrt(v / 2.0);
  }
  const double sigma = alpha * l2_sensitivity / std::sqrt(2.0 * epsilon);
  // Beyond ε ≈ 3·10¹⁹ the root finding meets e^ε and √(ε v) at the limits of a double and returns
  // NaN: refused instead of calibrating a mechanism with a NaN scale.
  if (!(std::isfinite(sigma) && sigma > 0.0)) {
    throw_domain(fn, "epsilon", epsilon,
                 "small enough for the analytic Gaussian calibration (here it gives sigma = " + format_value(sigma) +
                     " at delta = " + format_value(delta) + "); use a smaller epsilon");
  }
  return sigma;
}

GaussianCalibration parse_gaussian_calibration(std::string_view name) {
  if (name == "exact") return GaussianCalibration::exact;
  if (name == "paper-literal" || name == "paper_literal") return GaussianCalibration::paper_literal;
  throw_invalid("parse_gaussian_calibration",
                "gaussian calibration '" + std::string(name) + "' is not one of exact, paper-literal");
}

ScalarMechanism ScalarMechanism::laplace(double epsilon, double l1_sensitivity) {
  const double b = laplace_scale(epsilon, l1_sensitivity);
  return ScalarMechanism(Kind::laplace, epsilon, 0.0, l1_sensitivity, b, "laplace");
}

ScalarMechanism ScalarMechanism::gaussian(double epsilon, double delta, double l2_sensitivity) {
  const double sigma = analytic_gaussian_sigma(epsilon, delta, l2_sensitivity);
  return ScalarMechanism(Kind::gaussian, epsilon, delta, l2_sensitivity, sigma, "analytic-gaussian-exact");
}

ScalarMechanism ScalarMechanism::gaussian_with_sigma(double epsilon, double delta, double l2_sensitivity, double sigma,
                                                     std::string calibration) {
  const double exact = analytic_gaussian_sigma(epsilon, delta, l2_sensitivity);
  check_positive_finite("ScalarMechanism::gaussian_with_sigma", "sigma", sigma);
  if (sigma < exact * (1.0 - 1e-12)) {
    throw_domain("ScalarMechanism::gaussian_with_sigma", "sigma", sigma,
                 ">= the analytic Gaussian sigma " + format_value(exact) + " for this (epsilon, delta)");
  }
  return ScalarMechanism(Kind::gaussian, epsilon, delta, l2_sensitivity, sigma, std::move(calibration));
}

double ScalarMechanism::noise_sd() const {
  switch (kind_) {
    case Kind::laplace:
      return std::numbers::sqrt2 * scale_;
    case Kind::gaussian:
      return scale_;
  }
  return 0.0;
}

std::string ScalarMechanism::name() const {
  switch (kind_) {
    case Kind::laplace:
      return "laplace";
    case Kind::gaussian:
      return "gaussian";
  }
  return "";
}

double ScalarMechanism::noise_quantile(double prob) const {
  check_open_interval("ScalarMechanism::noise_quantile", "prob", prob, 0.0, 1.0);
  switch (kind_) {
    case Kind::laplace:
      return prob < 0.5 ? scale_ * std::log(2.0 * prob) : -scale_ * std::log(2.0 * (1.0 - prob));
    case Kind::gaussian:
      return -scale_ * std::numbers::sqrt2 * boost::math::erfc_inv(2.0 * prob);
  }
  return 0.0;
}

}  // namespace dpmu::core
