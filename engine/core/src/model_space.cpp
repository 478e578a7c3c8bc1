#include "dpmu/core/model_space.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/information_criteria.hpp"
#include "dpmu/core/log_math.hpp"

namespace dpmu::core {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::vector<double> parse_numbers(std::string_view fn, std::string_view text) {
  std::vector<double> out;
  std::string s(text);
  for (char& c : s) {
    if (c == '(' || c == ')') c = ' ';
  }
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    const std::string tok = trim(std::string_view(s).substr(start, end - start));
    if (tok.empty()) throw_invalid(fn, "empty number in '" + std::string(text) + "'");
    std::size_t used = 0;
    double v = 0.0;
    try {
      v = std::stod(tok, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != tok.size()) throw_invalid(fn, "'" + tok + "' is not a number");
    out.push_back(v);
    start = end + 1;
  }
  return out;
}

double log_beta_function(double a, double b) { return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b); }

// ---- fast quadrature for the mixture priors (docs/methods.md §2.3, with a fixed rule) ----

struct Integrand {
  PriorKind kind;
  double half_k, half_m, log_q, n, half_a, log_n, log_const;

  /// h(t) and logistic(t) with shared transcendental work: e = exp(-|t|), l = log1p(e) give
  /// softplus(±t), logistic(t) and (ZS) exp(-t) at once.
  double eval(double t, double& logistic_t) const {
    const double e = std::exp(-std::abs(t));
    const double l = std::log1p(e);
    const double sp_pos = (t > 0 ? t : 0.0) + l;   // log(1 + e^t)
    const double sp_neg = (t < 0 ? -t : 0.0) + l;  // log(1 + e^-t)
    logistic_t = t >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    // log(σ(-t) + Q σ(t)) = log_sum_exp(-sp_pos, log_q - sp_neg), no O(n) cancellation
    const double a = -sp_pos;
    const double b = log_q - sp_neg;
    const double lr = (a > b ? a : b) + std::log1p(std::exp(-std::abs(a - b)));
    double lp = 0.0;
    switch (kind) {
      case PriorKind::zellner_siow: {
        const double exp_minus_t = t >= 0 ? e : 1.0 / e;
        lp = log_const - 0.5 * t - 0.5 * n * exp_minus_t;
        break;
      }
      case PriorKind::hyper_g:
        lp = log_const - half_a * sp_pos + t;
        break;
      case PriorKind::robust:  // a0 = 1/2, b0 = 1: (g+1)^{-3/2} g on g > g_min
        lp = log_const - 1.5 * sp_pos + t;
        break;
      default:  // hyper_g_n
        lp = log_const - half_a * log1p_exp(t - log_n) + t;
        break;
    }
    return -half_k * sp_pos - half_m * lr + lp;
  }
  // first and second derivatives in t
  void derivatives(double t, double& d1, double& d2) const {
    const double s = logistic(t);
    const double sq = logistic(t + log_q);
    d1 = -half_k * s - half_m * (sq - s);
    d2 = -half_k * s * (1.0 - s) - half_m * (sq * (1.0 - sq) - s * (1.0 - s));
    switch (kind) {
      case PriorKind::zellner_siow: {
        const double e = 0.5 * n * std::exp(-t);
        d1 += -0.5 + e;
        d2 += -e;
        break;
      }
      case PriorKind::hyper_g:
        d1 += -half_a * s + 1.0;
        d2 += -half_a * s * (1.0 - s);
        break;
      case PriorKind::robust:
        d1 += -1.5 * s + 1.0;
        d2 += -1.5 * s * (1.0 - s);
        break;
      default: {
        const double sn = logistic(t - log_n);
        d1 += -half_a * sn + 1.0;
        d2 += -half_a * sn * (1.0 - sn);
        break;
      }
    }
  }
};

Integrand make_fast_integrand(const Prior& prior, double log_q, double n, int p, int p0) {
  Integrand h{prior.kind, 0.5 * p, 0.5 * (n - p0), log_q, n, 0.5 * prior.a, std::log(n), 0.0};
  h.log_const = log_mixture_prior_constant(prior, n, p, p0);
  return h;
}

/// Mode of a unimodal log integrand: the root of h' in (lo, hi) by Newton's method safeguarded with
/// bisection, from x. `derivatives(x, d1, d2)` gives h'(x) and h''(x). Stops when a step is below
/// 1e-7 (1 + |x|) or the bracket is below 1e-10 (the trapezoid rules need the mode only roughly).
template <class Derivatives>
double safeguarded_newton_mode(Derivatives&& derivatives, double x, double lo, double hi) {
  double d1 = 0.0;
  double d2 = 0.0;
  for (int it = 0; it < 200; ++it) {
    derivatives(x, d1, d2);
    if (d1 > 0.0) {
      lo = x;
    } else {
      hi = x;
    }
    double next = (d2 < 0.0) ? x - d1 / d2 : 0.5 * (lo + hi);
    // A Newton step below the tolerance has converged, even if rounding puts it on the bracket end
    // (|d1/d2| below an ulp of x: x + step == x == lo), where bisection would throw it away.
    if (d2 < 0.0 && std::abs(next - x) < 1e-7 * (1.0 + std::abs(x))) return next;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    const double step = std::abs(next - x);
    x = next;
    if (step < 1e-7 * (1.0 + std::abs(x)) || hi - lo < 1e-10) break;
  }
  return x;
}

constexpr double kStep = 0.0625;  // trapezoid step in u
constexpr int kMaxNodes = 640;    // per side: u up to 40 (t − t* = s sinh(40) covers everything)

/// sinh(j·kStep) and cosh(j·kStep), j = 0..kMaxNodes.
struct SinhTable {
  double sinh_u[kMaxNodes + 1];
  double cosh_u[kMaxNodes + 1];
  SinhTable() {
    for (int j = 0; j <= kMaxNodes; ++j) {
      sinh_u[j] = std::sinh(j * kStep);
      cosh_u[j] = std::cosh(j * kStep);
    }
  }
};
const SinhTable kSinhTable;

/// Trapezoid rule for log ∫ exp(H(x)) dx and the weighted means ∫ λ(x) e^H / ∫ e^H and
/// ∫ λ(x)² e^H / ∫ e^H, where `eval(x, λ)` returns H(x) and sets λ (the logistic of t: the shrinkage
/// g/(1+g)), after the change of variables x = x* + s sinh(u), s = (−H''(x*))^{-1/2} clamped to
/// [1e-8, 2], step kStep·stride in u. Terms decay double-exponentially in |u|; a side stops when a
/// term has fallen below e^-36 (relative to the mode) and is decreasing. `derivatives(x, H', H'')`
/// gives the curvature at x*. `node(λ, f)` is called for every node with its unnormalised weight f
/// (the discrete posterior of the shrinkage, shrinkage_posterior).
template <class Eval, class Derivatives, class Node>
BayesFactorResult sinh_trapezoid(Eval&& eval, Derivatives&& derivatives, double x_star, int stride, Node&& node) {
  double d1 = 0.0;
  double d2 = 0.0;
  derivatives(x_star, d1, d2);
  double s = (d2 < 0.0 && std::isfinite(d2)) ? 1.0 / std::sqrt(-d2) : 1.0;
  s = std::clamp(s, 1e-8, 2.0);
  double logistic_star = 0.0;
  const double h_star = eval(x_star, logistic_star);
  const double drop = std::exp(-36.0);
  double mass = 1.0;  // u = 0 term: exp(0) * cosh(0)
  double shrink = logistic_star;
  double shrink2 = logistic_star * logistic_star;
  node(logistic_star, 1.0);
  for (int side = -1; side <= 1; side += 2) {
    double prev = 1.0;
    for (int j = stride; j <= kMaxNodes; j += stride) {
      const double xj = x_star + side * s * kSinhTable.sinh_u[j];
      double lt = 0.0;
      const double hv = eval(xj, lt) - h_star;
      const double f = std::exp(hv) * kSinhTable.cosh_u[j];
      if (!std::isfinite(f)) break;
      mass += f;
      shrink += lt * f;
      shrink2 += lt * lt * f;
      node(lt, f);
      if (f < drop && f < prev) break;
      prev = f;
    }
  }
  BayesFactorResult out;
  out.log_bayes_factor = h_star + std::log(mass * s * kStep * stride);
  out.shrinkage = std::clamp(shrink / mass, 0.0, 1.0);
  out.shrinkage_second_moment = std::clamp(shrink2 / mass, 0.0, out.shrinkage);
  return out;
}

/// No node sink (the hot path of the enumeration).
constexpr auto kNoNodes = [](double, double) {};

/// log_bayes_factor_sinh_trapezoid with a node sink.
template <class Node>
BayesFactorResult mixture_sinh_trapezoid(const Prior& prior, double log_q, double n, int p, int p0, Node&& node) {
  const Integrand h = make_fast_integrand(prior, log_q, n, p, p0);
  // 1. Mode of h: the root of h' in [-60, 80] by Newton safeguarded with bisection, started at the
  //    local empirical-Bayes estimate of g. The trapezoid below is exact for any centre, so the mode
  //    only needs ~1e-6 accuracy (it sets where the nodes are dense).
  double lo = std::min(-60.0, log_prior_mode_lower_limit(prior, n));
  double hi = 80.0;
  const double m = n - p0;
  const double log_odds = std::log(std::max(-std::expm1(log_q), 1e-300)) - log_q;  // log(R²/(1-R²))
  const double g_eb = std::exp(std::log((m - p) / p) + log_odds);
  double t = std::clamp(std::log(std::max(g_eb, 1.0)), lo + 1.0, hi - 1.0);
  // hyper-g(/n) with a huge a (> ~1e9): the prior pins g near 2/a (2n/a), hundreds of units of t
  // below the empirical-Bayes start, which Newton would walk down one unit per step. Start there.
  if (lo < -60.0) t = std::min(t, lo + 40.0);
  const double t_star =
      safeguarded_newton_mode([&](double x, double& a, double& b) { h.derivatives(x, a, b); }, t, lo, hi);
  // 2. Trapezoid in u, t = t* + s sinh(u) (sinh_trapezoid).
  // Step 1/16 for small samples (the ZS prior's e^{-n/(2g)} factor narrows the strip of
  // analyticity in u), 1/8 (every other table entry) once m - k ≥ 50 except for hyper-g/n (its
  // kink near g = n needs 1/16); all verified to 1e-9 against the adaptive quadrature.
  const int stride = (m - p >= 50.0 && prior.kind != PriorKind::hyper_g_n) ? 2 : 1;
  return sinh_trapezoid([&](double x, double& lt) { return h.eval(x, lt); },
                        [&](double x, double& a, double& b) { h.derivatives(x, a, b); }, t_star, stride, node);
}

/// log_bayes_factor_robust_trapezoid with a node sink.
template <class Node>
BayesFactorResult robust_sinh_trapezoid(double log_q, double n, int p, int p0, Node&& node) {
  Prior robust;
  robust.kind = PriorKind::robust;
  const Integrand h = make_fast_integrand(robust, log_q, n, p, p0);
  // Support g > g_min = ρ(n+1) − 1 > 0: t = t_min + e^v, v ∈ R, H(v) = h(t_min + e^v) + v.
  const double t_min = std::log((n + 1.0) / static_cast<double>(p + p0) - 1.0);
  const auto derivatives = [&](double v, double& d1, double& d2) {
    const double x = std::exp(v);
    double h1 = 0.0;
    double h2 = 0.0;
    h.derivatives(t_min + x, h1, h2);
    d1 = h1 * x + 1.0;
    d2 = h2 * x * x + h1 * x;
  };
  double lo = -60.0;
  double hi = 6.0;  // e^6 ≈ 403 in t: far beyond the mass
  double v = 0.0;
  const double v_star = safeguarded_newton_mode(derivatives, v, lo, hi);
  const auto big_h = [&](double vv, double& lt) { return h.eval(t_min + std::exp(vv), lt) + vv; };
  const int stride = (n - p0 - p >= 50.0) ? 2 : 1;  // as for the other priors; verified to 1e-9
  return sinh_trapezoid(big_h, derivatives, v_star, stride, node);
}

}  // namespace

BayesFactorResult log_bayes_factor_sinh_trapezoid(const Prior& prior, double log_q, double n, int p, int p0) {
  if (p == 0) return {0.0, 0.0};
  return mixture_sinh_trapezoid(prior, log_q, n, p, p0, kNoNodes);
}

BayesFactorResult log_bayes_factor_robust_trapezoid(double log_q, double n, int p, int p0) {
  if (p == 0) return {0.0, 0.0};
  return robust_sinh_trapezoid(log_q, n, p, p0, kNoNodes);
}

BayesFactorResult zellner_siow_laplace(double r_squared, double n, int k) {
  // Transcription of BAS 1.7.5 src/ZS_approx_null_np.c (LogBF_ZS_null, lik_null, info_null,
  // posroot) and src/E_ZS.c (E_ZS_approx_null, h1, h2, infoh1, infoh2).
  if (k == 0 || n <= k + 1 || r_squared >= 1.0) return {0.0, 0.0};
  const auto posroot = [](double a, double b, double c, double& root) {
    const double q = (a * a - 3.0 * b) / 9.0;
    const double r = (2.0 * a * a * a - 9.0 * a * b + 27.0 * c) / 54.0;
    const double q3 = q * q * q;
    const double disc = r * r - q3;
    int status = 0;
    root = 0.0;
    if (disc >= 0.0) {
      const double aa = r >= 0 ? -std::cbrt(r + std::sqrt(disc)) : -std::cbrt(r - std::sqrt(disc));
      const double bb = aa == 0.0 ? 0.0 : q / aa;
      root = (aa + bb) - a / 3.0;
      if (root >= 0) status = 1;
    } else {
      const double ang = std::acos(r / std::sqrt(q3));
      const double aux = 2.0 * std::sqrt(q);
      const double two_pi = 2.0 * std::numbers::pi;
      const double xs[3] = {-aux * std::cos(ang / 3.0) - a / 3.0, -aux * std::cos((ang + two_pi) / 3.0) - a / 3.0,
                            -aux * std::cos((ang - two_pi) / 3.0) - a / 3.0};
      for (double x : xs) {
        if (x >= 0.0) {
          ++status;
          root = x;
        }
      }
    }
    return status;
  };
  const double kd = k;
  const double e = 1.0 - r_squared;
  BayesFactorResult out;
  {
    const double aux = -e * (kd + 3.0);
    const double a = (n - 4.0 - kd - 2.0 * e) / aux;
    const double b = (n * (2.0 - r_squared) - 3.0) / aux;
    const double c = n / aux;
    double g = 0.0;
    if (posroot(a, b, c, g) != 1) {
      // BAS prints a warning and returns NA here; we fall back to the exact integral.
      Prior zs;
      zs.kind = PriorKind::zellner_siow;
      return log_bayes_factor_sinh_trapezoid(zs, std::log1p(-r_squared), n, k, 1);
    }
    const double lik =
        0.5 * ((n - 1.0 - kd) * std::log1p(g) - (n - 1.0) * std::log1p(e * g) - 3.0 * std::log(g) - n / g) +
        0.5 * std::log(n / 2.0) - std::lgamma(0.5);
    double info = -(n - 1.0 - kd) / ((1.0 + g) * (1.0 + g));
    info += (n - 1.0) * e * e / ((1.0 + e * g) * (1.0 + e * g)) + 3.0 / (g * g);
    info -= 2.0 * n / (g * g * g);
    info = -info / 2.0;
    out.log_bayes_factor = lik + std::log(std::sqrt(2.0 * std::numbers::pi)) - 0.5 * std::log(info);
  }
  {
    const auto h1 = [&](double g) {
      return 0.5 * ((n - 3.0 - kd) * std::log1p(g) - (n - 1.0) * std::log1p(e * g) - std::log(g) - n / g);
    };
    const auto h2 = [&](double g) {
      return 0.5 * ((n - 1.0 - kd) * std::log1p(g) - (n - 1.0) * std::log1p(e * g) - 3.0 * std::log(g) - n / g);
    };
    const auto info1 = [&](double g) {
      double a = -(n - 3.0 - kd) / ((1.0 + g) * (1.0 + g));
      a += (n - 1.0) * e * e / ((1.0 + e * g) * (1.0 + e * g)) + 1.0 / (g * g);
      a -= 2.0 * n / (g * g * g);
      return a / 2.0;
    };
    const auto info2 = [&](double g) {
      double a = -(n - 1.0 - kd) / ((1.0 + g) * (1.0 + g));
      a += (n - 1.0) * e * e / ((1.0 + e * g) * (1.0 + e * g)) + 3.0 / (g * g);
      a -= 2.0 * n / (g * g * g);
      return a / 2.0;
    };
    double aux = -e * (kd + 3.0);
    double g1 = 0.0;
    double g2 = 0.0;
    if (posroot((n - kd - 4.0) / aux, (n * (1.0 + e) - 1.0) / aux, n / aux, g1) != 1 ||
        posroot((n - kd - 2.0 * e - 4.0) / aux, (n * (1.0 + e) - 3.0) / aux, n / aux, g2) != 1) {
      // BAS stops with an error here (R² very close to 1); we use the exact shrinkage instead.
      Prior zs;
      zs.kind = PriorKind::zellner_siow;
      out.shrinkage = log_bayes_factor_sinh_trapezoid(zs, std::log1p(-r_squared), n, k, 1).shrinkage;
    } else {
      const double numer = h1(g1) - std::log(-info1(g1)) / 2.0;
      const double denom = h2(g2) - std::log(-info2(g2)) / 2.0;
      out.shrinkage = std::exp(numer - denom);
      if (!std::isfinite(out.shrinkage)) out.shrinkage = 1.0;
      out.shrinkage = std::clamp(out.shrinkage, 0.0, 1.0);
    }
  }
  // No second moment in BAS's approximation: the plug-in s̄² (a point mass of g at s̄/(1 − s̄)).
  out.shrinkage_second_moment = out.shrinkage * out.shrinkage;
  return out;
}

void check_model_prior(const ModelPrior& prior) {
  switch (prior.kind) {
    case ModelPriorKind::uniform:
      break;
    case ModelPriorKind::bernoulli:
      check_open_interval("check_model_prior", "w", prior.w, 0.0, 1.0);
      break;
    case ModelPriorKind::beta_binomial:
      check_positive_finite("check_model_prior", "a", prior.a);
      check_positive_finite("check_model_prior", "b", prior.b);
      break;
  }
}

ModelPrior parse_model_prior(std::string_view text) {
  constexpr const char* fn = "parse_model_prior";
  std::string s = trim(text);
  std::string name = s;
  std::string args;
  const std::size_t colon = s.find_first_of(":(");
  if (colon != std::string::npos) {
    name = trim(std::string_view(s).substr(0, colon));
    args = s.substr(colon + 1);
  }
  for (char& c : name) {
    if (c == '_' || c == '.') c = '-';
  }
  ModelPrior prior;
  if (name == "uniform") {
    prior.kind = ModelPriorKind::uniform;
    if (!trim(args).empty() && trim(args) != ")") throw_invalid(fn, "uniform takes no parameters");
  } else if (name == "bernoulli") {
    prior.kind = ModelPriorKind::bernoulli;
    // "bernoulli" alone means w = 1/2; "bernoulli:" with nothing after the colon is an error
    const auto v = colon == std::string::npos ? std::vector<double>{0.5} : parse_numbers(fn, args);
    if (v.size() != 1) throw_invalid(fn, "bernoulli takes one parameter w, e.g. bernoulli:0.2");
    prior.w = v[0];
  } else if (name == "beta-binomial") {
    prior.kind = ModelPriorKind::beta_binomial;
    const auto v = colon == std::string::npos ? std::vector<double>{1.0, 1.0} : parse_numbers(fn, args);
    if (v.size() != 2) throw_invalid(fn, "beta-binomial takes two parameters a,b, e.g. beta-binomial:1,1");
    prior.a = v[0];
    prior.b = v[1];
  } else {
    throw_invalid(fn, "unknown model prior '" + std::string(text) + "'; use uniform, bernoulli:W or beta-binomial:A,B");
  }
  check_model_prior(prior);
  return prior;
}

std::string to_string(const ModelPrior& prior) {
  switch (prior.kind) {
    case ModelPriorKind::uniform:
      return "uniform";
    case ModelPriorKind::bernoulli:
      return "bernoulli:" + format_value(prior.w);
    case ModelPriorKind::beta_binomial:
      return "beta-binomial:" + format_value(prior.a) + "," + format_value(prior.b);
  }
  return "";
}

double log_prior_model_probability(const ModelPrior& prior, int size, int p) {
  constexpr const char* fn = "log_prior_model_probability";
  check_model_prior(prior);
  if (p < 0) throw_domain(fn, "p", p, ">= 0");
  if (size < 0 || size > p) throw_domain(fn, "model_size", size, "in [0, p = " + std::to_string(p) + "]");
  switch (prior.kind) {
    case ModelPriorKind::uniform:
      return -p * std::log(2.0);
    case ModelPriorKind::bernoulli:
      return size * std::log(prior.w) + (p - size) * std::log1p(-prior.w);
    case ModelPriorKind::beta_binomial:
      return log_beta_function(size + prior.a, p - size + prior.b) - log_beta_function(prior.a, prior.b);
  }
  return -kInf;
}

CoefficientPrior parse_coefficient_prior(std::string_view name, std::optional<double> g, double a) {
  std::string s(name);
  for (char& c : s) {
    if (c == '_') c = '-';
  }
  CoefficientPrior out;
  if (s == "zellner-siow-laplace") {
    out.prior.kind = PriorKind::zellner_siow;
    out.laplace_approximation = true;
  } else {
    out.prior.kind = parse_prior_kind(s);
  }
  out.prior.g = g;
  out.prior.a = a;
  check_prior(out.prior);
  return out;
}

std::string to_string(const CoefficientPrior& prior) {
  if (prior.laplace_approximation) return "zellner-siow-laplace";
  return std::string(to_string(prior.prior.kind));
}

BayesFactorResult log_model_marginal(const CoefficientPrior& cp, double log_q, double n, int k, int p0) {
  constexpr const char* fn = "log_model_marginal";
  check_prior(cp.prior);
  if (!(std::isfinite(log_q) && log_q <= 0.0)) throw_domain(fn, "log_one_minus_r_squared", log_q, "finite and <= 0");
  if (k < 0) throw_domain(fn, "model_size", k, ">= 0");
  if (p0 < 0) throw_domain(fn, "p0", p0, ">= 0");
  if (!(std::isfinite(n) && n > static_cast<double>(k + p0))) {
    throw_domain(fn, "n", n, "finite and > model_size + p0 = " + std::to_string(k + p0));
  }
  if (!is_bayesian(cp.prior.kind)) {
    return {log_information_criterion(cp.prior.kind, log_q, n, k), 1.0, 1.0};
  }
  if (k == 0) return {0.0, 0.0};
  switch (cp.prior.kind) {
    case PriorKind::zellner_siow:
      if (cp.laplace_approximation) return zellner_siow_laplace(-std::expm1(log_q), n, k);
      return log_bayes_factor_sinh_trapezoid(cp.prior, log_q, n, k, p0);
    case PriorKind::hyper_g:
    case PriorKind::hyper_g_n:
      return log_bayes_factor_sinh_trapezoid(cp.prior, log_q, n, k, p0);
    case PriorKind::robust:
      return log_bayes_factor_robust_trapezoid(log_q, n, k, p0);
    default:
      return log_bayes_factor_and_shrinkage(cp.prior, log_q, n, k, p0);
  }
}

ShrinkagePosterior shrinkage_posterior(const CoefficientPrior& cp, double log_q, double n, int k, int p0) {
  ShrinkagePosterior out;
  const auto point = [&out](double s) {
    out.shrinkage = {s};
    out.probability = {1.0};
    return out;
  };
  if (log_q == -std::numeric_limits<double>::infinity()) {
    const auto lim = log_model_marginal_exact_fit(cp, n, k, p0);
    if (!lim) throw_domain("shrinkage_posterior", "log_one_minus_r_squared", log_q, "finite for this prior");
    return point(lim->shrinkage);
  }
  const BayesFactorResult bf = log_model_marginal(cp, log_q, n, k, p0);  // checks the arguments
  const bool mixture = k > 0 && !cp.laplace_approximation &&
                       (cp.prior.kind == PriorKind::zellner_siow || cp.prior.kind == PriorKind::hyper_g ||
                        cp.prior.kind == PriorKind::hyper_g_n || cp.prior.kind == PriorKind::robust);
  if (!mixture) return point(bf.shrinkage);
  double total = 0.0;
  const auto node = [&](double s, double f) {
    out.shrinkage.push_back(s);
    out.probability.push_back(f);
    total += f;
  };
  if (cp.prior.kind == PriorKind::robust) {
    robust_sinh_trapezoid(log_q, n, k, p0, node);
  } else {
    mixture_sinh_trapezoid(cp.prior, log_q, n, k, p0, node);
  }
  for (double& w : out.probability) w /= total;
  return out;
}

bool exact_fit_has_finite_evidence(const CoefficientPrior& cp) {
  return cp.prior.kind == PriorKind::g_prior && !cp.laplace_approximation;
}

std::optional<BayesFactorResult> log_model_marginal_exact_fit(const CoefficientPrior& cp, double n, int k, int p0) {
  constexpr const char* fn = "log_model_marginal_exact_fit";
  check_prior(cp.prior);
  if (k < 0) throw_domain(fn, "model_size", k, ">= 0");
  if (p0 < 0) throw_domain(fn, "p0", p0, ">= 0");
  if (!(std::isfinite(n) && n > static_cast<double>(k + p0))) {
    throw_domain(fn, "n", n, "finite and > model_size + p0 = " + std::to_string(k + p0));
  }
  if (!exact_fit_has_finite_evidence(cp)) return std::nullopt;
  if (k == 0) return BayesFactorResult{0.0, 0.0};
  const double g = cp.prior.g.value_or(n);
  // log B = −(k/2) log(1+g) − ((n−p0)/2) log((1 + gQ)/(1 + g)) at Q = 0
  return BayesFactorResult{0.5 * (n - p0 - k) * std::log1p(g), g / (1.0 + g), (g / (1.0 + g)) * (g / (1.0 + g))};
}

}  // namespace dpmu::core
