#include "dpmu/core/composition.hpp"

#include <algorithm>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <limits>
#include <numbers>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/mechanisms.hpp"

namespace dpmu::core {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

void check_delta(const char* fn, double delta) { check_half_open_interval(fn, "delta", delta, 0.0, 1.0); }

/// The smallest x in [lo, hi] with f(x) ≤ 0 for a decreasing f with f(lo) > 0 ≥ f(hi): the upper
/// end of TOMS 748's final bracket (so f there is ≤ 0: the bound returned is never too small).
template <class F>
double decreasing_root(F f, double lo, double hi) {
  boost::uintmax_t iterations = 300;
  const auto bracket =
      boost::math::tools::toms748_solve(f, lo, hi, boost::math::tools::eps_tolerance<double>(52), iterations);
  return bracket.second;
}

}  // namespace

double gaussian_dp_epsilon(double mu, double delta) {
  constexpr const char* fn = "gaussian_dp_epsilon";
  check_positive_finite(fn, "mu", mu);
  check_delta(fn, delta);
  if (delta == 0.0) return kInfinity;
  if (delta >= gaussian_dp_delta(mu, 0.0)) return 0.0;
  const auto f = [&](double epsilon) { return gaussian_dp_delta(mu, epsilon) - delta; };
  double hi = std::max(1.0, mu * mu);
  for (int i = 0; i < 2000 && f(hi) > 0.0; ++i) hi *= 2.0;
  return decreasing_root(f, 0.0, hi);
}

double analytic_gaussian_mu(double epsilon, double delta) {
  constexpr const char* fn = "analytic_gaussian_mu";
  check_positive_finite(fn, "epsilon", epsilon);
  check_open_interval(fn, "delta", delta, 0.0, 1.0);
  return 1.0 / analytic_gaussian_sigma(epsilon, delta, 1.0);
}

double pure_composition_delta(double epsilon0, std::size_t k, double epsilon) {
  constexpr const char* fn = "pure_composition_delta";
  check_positive_finite(fn, "epsilon0", epsilon0);
  if (k == 0) throw_domain(fn, "k (releases)", 0.0, ">= 1");
  if (!(std::isfinite(epsilon) && epsilon >= 0.0)) throw_domain(fn, "epsilon", epsilon, "finite and >= 0");
  const double kd = static_cast<double>(k);
  const double log_p = -std::log1p(std::exp(-epsilon0));  // log(e^ε0 / (1 + e^ε0))
  const double log_q = -std::log1p(std::exp(epsilon0));   // log(1 / (1 + e^ε0))
  const double log_k_factorial = std::lgamma(kd + 1.0);
  double delta = 0.0;
  // Term ℓ is positive iff ε < (k − 2ℓ)ε0.
  for (std::size_t l = 0; 2 * l < k; ++l) {
    const double ld = static_cast<double>(l);
    const double gap = (kd - 2.0 * ld) * epsilon0 - epsilon;  // log of the ratio of the two parts
    if (gap <= 0.0) break;
    const double log_choose = log_k_factorial - std::lgamma(ld + 1.0) - std::lgamma(kd - ld + 1.0);
    const double log_first = log_choose + (kd - ld) * log_p + ld * log_q;
    delta += std::exp(log_first) * -std::expm1(-gap);
  }
  return std::min(delta, 1.0);
}

double pure_composition_epsilon(double epsilon0, std::size_t k, double delta) {
  constexpr const char* fn = "pure_composition_epsilon";
  check_positive_finite(fn, "epsilon0", epsilon0);
  if (k == 0) throw_domain(fn, "k (releases)", 0.0, ">= 1");
  check_delta(fn, delta);
  const double total = static_cast<double>(k) * epsilon0;
  if (delta == 0.0) return total;
  if (delta >= pure_composition_delta(epsilon0, k, 0.0)) return 0.0;
  const auto f = [&](double epsilon) { return pure_composition_delta(epsilon0, k, epsilon) - delta; };
  return std::min(total, decreasing_root(f, 0.0, total));
}

double heterogeneous_pure_composition_epsilon(std::span<const double> epsilons, double delta) {
  constexpr const char* fn = "heterogeneous_pure_composition_epsilon";
  check_delta(fn, delta);
  double sum = 0.0, sum_squares = 0.0, drift = 0.0;
  for (const double e : epsilons) {
    check_positive_finite(fn, "epsilon", e);
    sum += e;
    sum_squares += e * e;
    drift += e * std::tanh(e / 2.0);  // ε (e^ε − 1)/(e^ε + 1)
  }
  if (delta == 0.0 || epsilons.empty()) return sum;
  const double first =
      drift + std::sqrt(2.0 * sum_squares * std::log(std::numbers::e + std::sqrt(sum_squares) / delta));
  const double second = drift + std::sqrt(2.0 * sum_squares * std::log(1.0 / delta));
  return std::min({sum, first, second});
}

double pure_family_epsilon(std::span<const double> epsilons, double delta) {
  constexpr const char* fn = "pure_family_epsilon";
  check_delta(fn, delta);
  if (epsilons.empty()) return 0.0;
  double largest = 0.0, sum = 0.0;
  for (const double e : epsilons) {
    check_positive_finite(fn, "epsilon", e);
    largest = std::max(largest, e);
    sum += e;
  }
  // Every release is also largest-DP, so the optimal k-fold composition at the largest ε bounds
  // them all; with equal ε it is exact (KOV Theorem 3.3).
  const double homogeneous = pure_composition_epsilon(largest, epsilons.size(), delta);
  return std::min({sum, homogeneous, heterogeneous_pure_composition_epsilon(epsilons, delta)});
}

double zcdp_rho(std::span<const double> gaussian_mu, std::span<const double> pure_epsilon) {
  double rho = 0.0;
  for (const double mu : gaussian_mu) {
    check_positive_finite("zcdp_rho", "mu", mu);
    rho += 0.5 * mu * mu;
  }
  for (const double e : pure_epsilon) {
    check_positive_finite("zcdp_rho", "epsilon", e);
    rho += 0.5 * e * e;
  }
  return rho;
}

CompositionTotal tight_composition(const CompositionInput& in, double delta) {
  constexpr const char* fn = "tight_composition";
  check_delta(fn, delta);
  if (in.gaussian_mu.size() != in.gaussian_epsilon_delta.size()) {
    throw_invalid(fn, "gaussian_mu and gaussian_epsilon_delta differ in length");
  }
  const auto check_pair = [&](const std::pair<double, double>& ed) {
    if (!(std::isfinite(ed.first) && ed.first >= 0.0)) throw_domain(fn, "epsilon", ed.first, "finite and >= 0");
    if (!(std::isfinite(ed.second) && ed.second >= 0.0)) throw_domain(fn, "delta", ed.second, "finite and >= 0");
  };
  CompositionTotal t;
  t.delta = delta;
  double mu_squares = 0.0, gaussian_sum_epsilon = 0.0, gaussian_sum_delta = 0.0;
  for (std::size_t i = 0; i < in.gaussian_mu.size(); ++i) {
    check_positive_finite(fn, "mu", in.gaussian_mu[i]);
    check_pair(in.gaussian_epsilon_delta[i]);
    mu_squares += in.gaussian_mu[i] * in.gaussian_mu[i];
    gaussian_sum_epsilon += in.gaussian_epsilon_delta[i].first;
    gaussian_sum_delta += in.gaussian_epsilon_delta[i].second;
  }
  double pure_sum = 0.0;
  for (const double e : in.pure_epsilon) {
    check_positive_finite(fn, "pure epsilon", e);
    pure_sum += e;
  }
  for (const auto& ed : in.approximate) {
    check_pair(ed);
    t.approximate_epsilon += ed.first;
    t.approximate_delta += ed.second;
  }
  t.gaussian_mu = std::sqrt(mu_squares);
  const bool has_gaussian = !in.gaussian_mu.empty();
  const bool has_pure = !in.pure_epsilon.empty();
  const double remaining = delta - t.approximate_delta;  // for the Gaussian and pure families
  if (remaining < 0.0) {
    t.epsilon = kInfinity;
    return t;
  }
  // ε_G(x): GDP at x, or the family's basic sum when x covers its δ's.
  const auto gaussian_epsilon = [&](double x) {
    if (!has_gaussian) return 0.0;
    double e = x > 0.0 ? gaussian_dp_epsilon(t.gaussian_mu, std::min(x, std::nextafter(1.0, 0.0))) : kInfinity;
    if (x >= gaussian_sum_delta) e = std::min(e, gaussian_sum_epsilon);
    return e;
  };
  const auto pure_epsilon = [&](double y) {
    return has_pure ? pure_family_epsilon(in.pure_epsilon, std::clamp(y, 0.0, std::nextafter(1.0, 0.0))) : 0.0;
  };
  const auto split = [&](double x) { return gaussian_epsilon(x) + pure_epsilon(std::max(0.0, remaining - x)); };
  double best_x = has_gaussian ? remaining : 0.0;
  double best = split(best_x);
  if (has_gaussian && has_pure && remaining > 0.0) {
    std::vector<double> xs{0.0, remaining};
    if (gaussian_sum_delta <= remaining) xs.push_back(gaussian_sum_delta);
    for (int i = 0; i <= 80; ++i) {
      const double t_log = std::pow(10.0, -12.0 + 11.7 * i / 80.0);  // 1e-12 .. ~0.5
      xs.push_back(remaining * t_log);
      xs.push_back(remaining * (1.0 - t_log));
    }
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    std::vector<double> values(xs.size());
    std::size_t arg = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      values[i] = split(xs[i]);
      if (values[i] < values[arg]) arg = i;
    }
    best = values[arg];
    best_x = xs[arg];
    // Golden-section refinement between the neighbours of the best grid point.
    double a = xs[arg > 0 ? arg - 1 : 0], b = xs[std::min(arg + 1, xs.size() - 1)];
    const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
    double c = b - ratio * (b - a), d = a + ratio * (b - a);
    double fc = split(c), fd = split(d);
    for (int i = 0; i < 60 && b - a > 1e-15 * remaining; ++i) {
      if (fc < fd) {
        b = d;
        d = c;
        fd = fc;
        c = b - ratio * (b - a);
        fc = split(c);
      } else {
        a = c;
        c = d;
        fc = fd;
        d = a + ratio * (b - a);
        fd = split(d);
      }
    }
    if (fc < best) best = fc, best_x = c;
    if (fd < best) best = fd, best_x = d;
  }
  t.gaussian_delta = has_gaussian ? best_x : 0.0;
  t.pure_delta = has_pure ? std::max(0.0, remaining - t.gaussian_delta) : 0.0;
  t.gaussian_epsilon = gaussian_epsilon(t.gaussian_delta);
  t.pure_epsilon = pure_epsilon(t.pure_delta);
  t.epsilon = best + t.approximate_epsilon;
  // Basic composition of everything, when its δ fits, is a valid bound too.
  const double basic_epsilon = gaussian_sum_epsilon + pure_sum + t.approximate_epsilon;
  if (gaussian_sum_delta + t.approximate_delta <= delta && basic_epsilon < t.epsilon) {
    t.epsilon = basic_epsilon;
    t.basic_was_smaller = true;
    t.gaussian_epsilon = gaussian_sum_epsilon;
    t.gaussian_delta = gaussian_sum_delta;
    t.pure_epsilon = pure_sum;
    t.pure_delta = 0.0;
  }
  return t;
}

}  // namespace dpmu::core
