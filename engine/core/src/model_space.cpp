#include "dpmu/core/model_space.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/information_criteria.hpp"
#include "dpmu/core/log_math.hpp"
#include "dpmu/core/priors.hpp"

namespace dpmu::core {

namespace {

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

/// A ModelPriorKind value outside the enum (a cast from an integer) is an error naming it.
[[noreturn]] void throw_unknown_model_prior(const char* fn, const ModelPrior& prior) {
  throw_invalid(fn, "ModelPriorKind value " + std::to_string(static_cast<int>(prior.kind)) +
                        " is not a model prior; use uniform, bernoulli or beta-binomial");
}

double log_beta_function(double a, double b) { return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b); }

// ---- fast quadrature for the mixture priors (docs/methods.md §2.3, with a fixed rule) ----

/// A point t = log g with its e = exp(−|t|) (priors/unit.hpp, LogGAt): enough for derivatives().
struct SharedExpAt {
  double t;
  double e;  // exp(−|t|)
  double exp_minus_t() const { return t >= 0 ? e : 1.0 / e; }
};

/// A point t = log g whose pieces share one exp(−|t|) (priors/unit.hpp, LogGAt).
struct SharedLogGAt : SharedExpAt {
  double sp_pos;  // log(1 + e^t)
  double softplus() const { return sp_pos; }
};

/// The log integrand of Eq. (3) in t = log g for a mixture prior's unit (priors/*.hpp).
template <class Unit>
struct Integrand {
  Unit prior;
  double half_k, half_m, log_q;
  double q;      // e^{log_q} = 1 − R²
  double inv_q;  // e^{−log_q} (+inf for log_q below about −709.8; exp_minus_abs_shifted does not use it there)

  /// exp(−|t + log_q|) from e = exp(−|t|) without another exp. Where t + log_q ≥ 0, t ≥ 0 too
  /// (log_q ≤ 0), so it is e·e^{−log_q}; elsewhere it is Q·e^t = Q/e (t ≥ 0) or Q·e (t < 0). Each
  /// is a product of two correctly rounded factors, so it is at least as accurate as exp of the
  /// rounded sum t + log_q. Below log_q = −700 (R² within e^−700 of 1) e^{−log_q} would overflow:
  /// exp, as before.
  double exp_minus_abs_shifted(double t, double e) const {
    const double tq = t + log_q;
    if (!(log_q > -700.0)) return std::exp(-std::abs(tq));
    if (tq >= 0.0) return e * inv_q;
    return t >= 0.0 ? q / e : q * e;
  }

  /// h(t) and logistic(t) with shared transcendental work: e = exp(-|t|), l = log1p(e) give
  /// softplus(±t), logistic(t), (ZS) exp(-t) and exp(−|t + log_q|) at once: one exp and two
  /// log1p per node besides the caller's exp(h).
  double eval(double t, double& logistic_t) const {
    const double e = std::exp(-std::abs(t));
    const double l = std::log1p(e);
    const double sp_pos = (t > 0 ? t : 0.0) + l;   // log(1 + e^t)
    const double sp_neg = (t < 0 ? -t : 0.0) + l;  // log(1 + e^-t)
    logistic_t = logistic_from_exp_abs(t, e);
    // log(σ(-t) + Q σ(t)) = log_sum_exp(-sp_pos, log_q - sp_neg), no O(n) cancellation: the larger
    // term (log_q - sp_neg where t + log_q ≥ 0) plus log1p of e^{−|difference|} = e^{−|t + log_q|}
    const double lr = (t + log_q >= 0.0 ? log_q - sp_neg : -sp_pos) + std::log1p(exp_minus_abs_shifted(t, e));
    const double lp = prior.log_density(SharedLogGAt{{t, e}, sp_pos});
    return -half_k * sp_pos - half_m * lr + lp;
  }
  /// First and second derivatives in t, from one exp(−|t|): logistic(t), logistic(t + log_q) (its
  /// e^{−|t + log_q|} by exp_minus_abs_shifted) and the prior's (ZS: e^{−t}).
  void derivatives(double t, double& d1, double& d2) const {
    const double e = std::exp(-std::abs(t));
    const double s = logistic_from_exp_abs(t, e);
    const double sq = logistic_from_exp_abs(t + log_q, exp_minus_abs_shifted(t, e));
    d1 = -half_k * s - half_m * (sq - s);
    d2 = -half_k * s * (1.0 - s) - half_m * (sq * (1.0 - sq) - s * (1.0 - s));
    const priors::LogDensityDerivatives dp = prior.derivatives(SharedExpAt{t, e}, s);
    d1 += dp.first;
    d2 += dp.second;
  }
};

template <class Unit>
Integrand<Unit> make_fast_integrand(const Unit& prior, double log_q, double n, int p, int p0) {
  return {prior, 0.5 * p, 0.5 * (n - p0), log_q, std::exp(log_q), std::exp(-log_q)};
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

/// The fast rule of log_model_marginal for a mixture prior's unit, with a node sink: the trapezoid in
/// u around the mode of h in t, or, for a support bounded below (robust), in v with t = t_min + e^v.
template <class Unit, class Node>
BayesFactorResult mixture_sinh_trapezoid(const Unit& prior, double log_q, double n, int p, int p0, Node&& node,
                                         int coarsen = 1) {
  const Integrand<Unit> h = make_fast_integrand(prior, log_q, n, p, p0);
  const double m = n - p0;
  if (std::isfinite(prior.lower_limit())) {
    // Support g > g_min: t = t_min + e^v, v ∈ R, H(v) = h(t_min + e^v) + v.
    const double t_min = prior.lower_limit();
    const auto derivatives = [&](double v, double& d1, double& d2) {
      const double x = std::exp(v);
      double h1 = 0.0;
      double h2 = 0.0;
      h.derivatives(t_min + x, h1, h2);
      d1 = h1 * x + 1.0;
      d2 = h2 * x * x + h1 * x;
    };
    double lo = -60.0;
    // e^6 ≈ 403 in t: far beyond the mass, unless R² → 1 moves it out (log_g_search_upper_limit)
    double hi = std::max(6.0, std::log(std::max(priors::log_g_search_upper_limit(m, log_q) - t_min, 1.0)));
    double v = 0.0;
    const double v_star = safeguarded_newton_mode(derivatives, v, lo, hi);
    const auto big_h = [&](double vv, double& lt) { return h.eval(t_min + std::exp(vv), lt) + vv; };
    const int stride = coarsen * ((m - p >= 50.0 && !Unit::fine_trapezoid_step) ? 2 : 1);  // verified to 1e-9
    return sinh_trapezoid(big_h, derivatives, v_star, stride, node);
  }
  // 1. Mode of h: the root of h' in [-60, 80] by Newton safeguarded with bisection, started at the
  //    local empirical-Bayes estimate of g. The trapezoid below is exact for any centre, so the mode
  //    only needs ~1e-6 accuracy (it sets where the nodes are dense). As R² → 1 the upper end moves
  //    out with the likelihood's peak (log_g_search_upper_limit; a fixed 80 left the mass outside
  //    and log B stuck at its value for t ≤ 80, tested against the R² → 1 limit in
  //    tests/core/model_space_test.cpp).
  double lo = std::min(-60.0, prior.mode_lower_limit());
  double hi = priors::log_g_search_upper_limit(m, log_q);
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
  // analyticity in u), 1/8 (every other table entry) once m - k ≥ 50 except for the priors that
  // ask for the fine step (hyper-g/n: its kink near g = n); all verified to 1e-9 against the
  // adaptive quadrature.
  const int stride = coarsen * ((m - p >= 50.0 && !Unit::fine_trapezoid_step) ? 2 : 1);
  return sinh_trapezoid([&](double x, double& lt) { return h.eval(x, lt); },
                        [&](double x, double& a, double& b) { h.derivatives(x, a, b); }, t_star, stride, node);
}

/// mixture_sinh_trapezoid for a Prior record (its kind must be a mixture of g-priors).
template <class Node>
BayesFactorResult mixture_sinh_trapezoid(const Prior& prior, double log_q, double n, int p, int p0, Node&& node,
                                         int coarsen = 1) {
  return visit_prior(prior, n, p, p0, [&](const auto& unit) -> BayesFactorResult {
    if constexpr (priors::is_mixture<std::decay_t<decltype(unit)>>) {
      return mixture_sinh_trapezoid(unit, log_q, n, p, p0, node, coarsen);
    } else {
      throw_invalid("log_bayes_factor_sinh_trapezoid",
                    "'" + std::string(to_string(prior.kind)) + "' is not a mixture of g-priors");
    }
  });
}

}  // namespace

BayesFactorResult log_bayes_factor_sinh_trapezoid(const Prior& prior, double log_q, double n, int p, int p0) {
  if (p == 0) return {0.0, 0.0};
  return mixture_sinh_trapezoid(prior, log_q, n, p, p0, kNoNodes);
}

BayesFactorResult log_bayes_factor_robust_trapezoid(double log_q, double n, int p, int p0) {
  if (p == 0) return {0.0, 0.0};
  return mixture_sinh_trapezoid(priors::Robust(Prior{}, n, p, p0), log_q, n, p, p0, kNoNodes);
}

double log_likelihood_sup_over_g(double log_q, double n, int k, int p0) {
  if (k == 0) return 0.0;
  const double m = n - p0;
  const double q = std::exp(log_q);
  const double r2 = -std::expm1(log_q);
  const double g_hat = (m * r2 - k) / (k * q);
  if (!(g_hat > 0.0)) return 0.0;
  return 0.5 * (m - k) * std::log1p(g_hat) - 0.5 * m * std::log1p(g_hat * q);
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
      return;
    case ModelPriorKind::bernoulli:
      check_open_interval("check_model_prior", "w", prior.w, 0.0, 1.0);
      return;
    case ModelPriorKind::beta_binomial:
      check_positive_finite("check_model_prior", "a", prior.a);
      check_positive_finite("check_model_prior", "b", prior.b);
      return;
  }
  throw_unknown_model_prior("check_model_prior", prior);
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
  for (char& c : name) {  // any case, '_' or '.' for '-' (BAS's beta.binomial, Bernoulli)
    if (c == '_' || c == '.') c = '-';
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
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
  throw_unknown_model_prior("to_string", prior);
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
  throw_unknown_model_prior(fn, prior);
}

double prior_inclusion_probability(const ModelPrior& prior) {
  check_model_prior(prior);
  switch (prior.kind) {
    case ModelPriorKind::uniform:
      return 0.5;
    case ModelPriorKind::bernoulli:
      return prior.w;
    case ModelPriorKind::beta_binomial:
      return prior.a / (prior.a + prior.b);
  }
  throw_unknown_model_prior("prior_inclusion_probability", prior);
}

void check_coefficient_prior(const CoefficientPrior& cp) {
  check_prior(cp.prior);
  std::visit(
      [&](const auto& rule) {
        using Rule = std::decay_t<decltype(rule)>;
        if constexpr (!std::is_same_v<Rule, ExactEvidence>) {
          if (cp.prior.kind != Rule::approximates::kind) {
            throw_invalid("check_coefficient_prior", std::string(Rule::name) + " approximates the " +
                                                         std::string(Rule::approximates::name) + " prior, not " +
                                                         std::string(to_string(cp.prior.kind)));
          }
        }
      },
      cp.rule);
}

bool is_approximate(const CoefficientPrior& cp) { return !std::holds_alternative<ExactEvidence>(cp.rule); }

CoefficientPrior parse_coefficient_prior(std::string_view name, std::optional<double> g, double a) {
  const std::string s = canonical_prior_name(name);
  CoefficientPrior out;
  // An approximation's name, else a prior's (parse_prior_kind names the accepted priors).
  const auto approximation = [&]<class Rule>(std::type_identity<Rule>) {
    if (s != Rule::name) return false;
    out.prior.kind = Rule::approximates::kind;
    out.rule = Rule{};
    return true;
  };
  if (!approximation(std::type_identity<priors::ZellnerSiowLaplace>{})) {
    try {
      out.prior.kind = parse_prior_kind(name);
    } catch (const std::invalid_argument& e) {
      // parse_prior_kind lists the priors of the tests; model averaging also takes the approximation.
      std::string m = e.what();
      const std::string list = "; use one of ";
      const std::size_t at = m.find(list);
      if (at != std::string::npos) {
        m.insert(at + list.size(), std::string(priors::ZellnerSiowLaplace::name) + " (BAS's ZS-null), ");
      }
      throw std::invalid_argument(m);
    }
  }
  out.prior.g = g;
  out.prior.a = a;
  check_coefficient_prior(out);
  return out;
}

std::string to_string(const CoefficientPrior& prior) {
  return std::visit(
      [&](const auto& rule) -> std::string {
        using Rule = std::decay_t<decltype(rule)>;
        if constexpr (std::is_same_v<Rule, ExactEvidence>) {
          return std::string(to_string(prior.prior.kind));
        } else {
          return std::string(Rule::name);
        }
      },
      prior.rule);
}

BayesFactorResult log_model_marginal(const CoefficientPrior& cp, double log_q, double n, int k, int p0) {
  constexpr const char* fn = "log_model_marginal";
  check_coefficient_prior(cp);
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
  if (std::holds_alternative<priors::ZellnerSiowLaplace>(cp.rule))
    return zellner_siow_laplace(-std::expm1(log_q), n, k);
  return visit_prior(cp.prior, n, k, p0, [&](const auto& unit) -> BayesFactorResult {
    if constexpr (priors::is_mixture<std::decay_t<decltype(unit)>>) {
      return mixture_sinh_trapezoid(unit, log_q, n, k, p0, kNoNodes);
    } else {
      return log_bayes_factor_and_shrinkage(cp.prior, log_q, n, k, p0);  // the g-prior's closed form
    }
  });
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
  if (k == 0 || is_approximate(cp)) return point(bf.shrinkage);
  double total = 0.0;
  const auto node = [&](double s, double f) {
    out.shrinkage.push_back(s);
    out.probability.push_back(f);
    total += f;
  };
  // Twice the step of the marginal's rule: the CDF of a t in s is smoother than the marginal's
  // integrand, and the credible intervals evaluate the mixture over every node (tested to 1e-8
  // in the CDF against adaptive quadrature, tests/core/bma_coefficients_test.cpp).
  constexpr int kCoarsen = 2;
  const bool mixture = visit_prior(cp.prior, n, k, p0, [&](const auto& unit) {
    if constexpr (priors::is_mixture<std::decay_t<decltype(unit)>>) {
      mixture_sinh_trapezoid(unit, log_q, n, k, p0, node, kCoarsen);
      return true;
    } else {
      return false;
    }
  });
  if (!mixture) return point(bf.shrinkage);
  for (double& w : out.probability) w /= total;
  return out;
}

bool exact_fit_has_finite_evidence(const CoefficientPrior& cp) {
  return visit_prior_kind(cp.prior.kind, [&](auto unit) {
    return decltype(unit)::type::family == priors::Family::fixed_g && !is_approximate(cp);
  });
}

std::optional<BayesFactorResult> log_model_marginal_exact_fit(const CoefficientPrior& cp, double n, int k, int p0) {
  constexpr const char* fn = "log_model_marginal_exact_fit";
  check_coefficient_prior(cp);
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
