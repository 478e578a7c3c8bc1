// LCSSF (Lei et al. 2018) model selection: constrained least squares, bounds, scores,
// exact selection probabilities. See lcssf.hpp and docs/methods.md §6.
#include "dpmu/core/lcssf.hpp"

#include <algorithm>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/log_math.hpp"

namespace dpmu::core {

namespace {

using constants::kInf;

Eigen::MatrixXd sub_gram(const Eigen::Ref<const Eigen::MatrixXd>& g, std::span<const Eigen::Index> idx) {
  const auto k = static_cast<Eigen::Index>(idx.size());
  Eigen::MatrixXd out(k, k);
  for (Eigen::Index a = 0; a < k; ++a) {
    for (Eigen::Index b = 0; b < k; ++b) out(a, b) = g(idx[a], idx[b]);
  }
  return out;
}

/// Max KKT residual of β for min β'Gβ − 2c'β s.t. ‖β‖₁ ≤ R with multiplier λ (gradient units).
double kkt_violation(const Eigen::Ref<const Eigen::MatrixXd>& g, const Eigen::Ref<const Eigen::VectorXd>& c,
                     const Eigen::VectorXd& beta, double lambda, double radius) {
  const Eigen::VectorXd grad = g * beta - c;
  double v = std::max(0.0, -lambda);
  const double l1 = beta.lpNorm<1>();
  const double scale = std::max(1.0, c.lpNorm<Eigen::Infinity>());
  v = std::max(v, scale * std::max(0.0, l1 - radius) / radius);
  if (lambda > 0.0) v = std::max(v, scale * std::abs(l1 - radius) / radius);
  for (Eigen::Index j = 0; j < beta.size(); ++j) {
    if (beta(j) != 0.0) {
      v = std::max(v, std::abs(grad(j) + lambda * (beta(j) > 0 ? 1.0 : -1.0)));
    } else {
      v = std::max(v, std::abs(grad(j)) - lambda);
    }
  }
  return v;
}

}  // namespace

ConstrainedLeastSquaresFit constrained_least_squares(const Eigen::Ref<const Eigen::MatrixXd>& gram,
                                                     const Eigen::Ref<const Eigen::VectorXd>& xty, double yty,
                                                     double radius) {
  static const char* fn = "constrained_least_squares";
  if (gram.rows() != gram.cols() || gram.rows() != xty.size()) {
    throw_invalid(fn, "gram is " + std::to_string(gram.rows()) + "x" + std::to_string(gram.cols()) + " and xty has " +
                          std::to_string(xty.size()) + " entries, but must be k x k and k");
  }
  check_positive_finite(fn, "radius", radius);
  check_finite(fn, "yty", yty);
  check_all_finite(fn, "gram", gram);
  check_all_finite(fn, "xty", xty);
  const Eigen::Index k = gram.rows();
  ConstrainedLeastSquaresFit fit;
  fit.coefficients = Eigen::VectorXd::Zero(k);
  if (k == 0) {
    fit.rss = std::max(0.0, yty);
    return fit;
  }
  Eigen::LLT<Eigen::MatrixXd> llt(gram);
  if (llt.info() != Eigen::Success) throw_domain(fn, "gram (smallest pivot)", 0.0, "positive definite");
  const Eigen::VectorXd ols = llt.solve(xty);
  if (ols.lpNorm<1>() <= radius) {
    fit.coefficients = ols;
    fit.rss = std::max(0.0, yty - xty.dot(ols));
    fit.kkt_violation = kkt_violation(gram, xty, ols, 0.0, radius);
    return fit;
  }
  fit.on_boundary = true;

  // Lasso homotopy: correlations a = c − Gβ; on the active set a_A = λ s_A.
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(k);
  Eigen::VectorXd a = xty;
  Eigen::Index first = 0;
  double lambda = a.cwiseAbs().maxCoeff(&first);
  std::vector<Eigen::Index> active{first};
  std::vector<double> sign{a(first) > 0 ? 1.0 : -1.0};
  std::vector<char> is_active(static_cast<std::size_t>(k), 0);
  is_active[static_cast<std::size_t>(first)] = 1;
  Eigen::Index just_added = first;
  Eigen::Index just_dropped = -1;  // may re-enter, but only with the opposite sign
  double dropped_sign = 0.0;
  const int max_steps = 50 * static_cast<int>(k) + 100;
  for (int step = 1;; ++step) {
    if (step > max_steps) throw std::runtime_error("constrained_least_squares: homotopy did not terminate");
    const auto na = static_cast<Eigen::Index>(active.size());
    const Eigen::MatrixXd gaa = sub_gram(gram, active);
    Eigen::VectorXd s(na);
    for (Eigen::Index i = 0; i < na; ++i) s(i) = sign[static_cast<std::size_t>(i)];
    Eigen::LLT<Eigen::MatrixXd> llt_a(gaa);
    const Eigen::VectorXd u = llt_a.solve(s);  // dβ_A/dt with t = λ0 − λ
    Eigen::VectorXd w = Eigen::VectorXd::Zero(k);
    for (Eigen::Index i = 0; i < na; ++i) w += gram.col(active[static_cast<std::size_t>(i)]) * u(i);
    double l1 = 0.0;
    for (Eigen::Index i = 0; i < na; ++i) l1 += std::abs(beta(active[static_cast<std::size_t>(i)]));
    const double su = s.dot(u);
    double t_best = (radius - l1) / su;  // reach ‖β‖₁ = R
    int event = 0;                       // 0 stop, 1 add, 2 drop
    Eigen::Index who = -1;
    double who_sign = 0.0;
    if (lambda < t_best) {  // cannot happen when the OLS is outside the ball (up to rounding)
      t_best = lambda;
    }
    for (Eigen::Index j = 0; j < k; ++j) {
      if (is_active[static_cast<std::size_t>(j)]) continue;
      const double up = 1.0 - w(j);
      if (up > 0.0 && !(j == just_dropped && dropped_sign > 0.0)) {
        const double t = (lambda - a(j)) / up;
        if (t >= 0.0 && t < t_best) {
          t_best = t;
          event = 1;
          who = j;
          who_sign = 1.0;
        }
      }
      const double dn = 1.0 + w(j);
      if (dn > 0.0 && !(j == just_dropped && dropped_sign < 0.0)) {
        const double t = (lambda + a(j)) / dn;
        if (t >= 0.0 && t < t_best) {
          t_best = t;
          event = 1;
          who = j;
          who_sign = -1.0;
        }
      }
    }
    for (Eigen::Index i = 0; i < na; ++i) {
      const Eigen::Index j = active[static_cast<std::size_t>(i)];
      if (j == just_added || u(i) == 0.0) continue;
      const double t = -beta(j) / u(i);
      if (t > 0.0 && t < t_best) {
        t_best = t;
        event = 2;
        who = i;
      }
    }
    for (Eigen::Index i = 0; i < na; ++i) beta(active[static_cast<std::size_t>(i)]) += t_best * u(i);
    a -= t_best * w;
    lambda -= t_best;
    fit.steps = step;
    just_added = -1;
    just_dropped = -1;
    if (event == 0) break;
    if (event == 1) {
      active.push_back(who);
      sign.push_back(who_sign);
      is_active[static_cast<std::size_t>(who)] = 1;
      just_added = who;
    } else {
      const Eigen::Index j = active[static_cast<std::size_t>(who)];
      dropped_sign = sign[static_cast<std::size_t>(who)];
      beta(j) = 0.0;
      is_active[static_cast<std::size_t>(j)] = 0;
      active.erase(active.begin() + who);
      sign.erase(sign.begin() + who);
      just_dropped = j;
    }
  }

  // Polish: solve the KKT system of the final face exactly,
  // G_AA β_A = c_A − λ s_A, s'β_A = R  ⇒  λ = (s'G⁻¹c_A − R)/(s'G⁻¹s).
  {
    const auto na = static_cast<Eigen::Index>(active.size());
    const Eigen::MatrixXd gaa = sub_gram(gram, active);
    Eigen::VectorXd s(na), ca(na);
    for (Eigen::Index i = 0; i < na; ++i) {
      s(i) = sign[static_cast<std::size_t>(i)];
      ca(i) = xty(active[static_cast<std::size_t>(i)]);
    }
    Eigen::LLT<Eigen::MatrixXd> llt_a(gaa);
    const Eigen::VectorXd gs = llt_a.solve(s);
    const Eigen::VectorXd gc = llt_a.solve(ca);
    const double lam = (s.dot(gc) - radius) / s.dot(gs);
    const Eigen::VectorXd ba = gc - lam * gs;
    bool signs_ok = lam >= 0.0;
    for (Eigen::Index i = 0; i < na; ++i) signs_ok = signs_ok && ba(i) * s(i) > 0.0;
    if (signs_ok) {
      beta.setZero();
      for (Eigen::Index i = 0; i < na; ++i) beta(active[static_cast<std::size_t>(i)]) = ba(i);
      lambda = lam;
    }
  }
  fit.coefficients = beta;
  fit.multiplier = lambda;
  fit.rss = std::max(0.0, yty - 2.0 * xty.dot(beta) + beta.dot(gram * beta));
  fit.kkt_violation = kkt_violation(gram, xty, beta, lambda, radius);
  return fit;
}

ConstrainedLeastSquaresFit constrained_least_squares(const Eigen::Ref<const Eigen::MatrixXd>& x,
                                                     const Eigen::Ref<const Eigen::VectorXd>& y, double radius) {
  if (x.rows() != y.size()) {
    throw_invalid("constrained_least_squares", "x has " + std::to_string(x.rows()) + " rows and y has " +
                                                   std::to_string(y.size()) + " entries, but they must be equal");
  }
  check_all_finite("constrained_least_squares", "x", x);
  check_all_finite("constrained_least_squares", "y", y);
  const Eigen::MatrixXd g = x.transpose() * x;
  const Eigen::VectorXd c = x.transpose() * y;
  return constrained_least_squares(g, c, y.squaredNorm(), radius);
}

std::vector<ModelMask> all_models(int num_predictors) {
  if (num_predictors < 0 || num_predictors > kMaxEnumeratedPredictors) {
    throw_domain("all_models", "the number of predictors d", num_predictors,
                 "in [0, " + std::to_string(kMaxEnumeratedPredictors) + "] for enumeration of all 2^d models");
  }
  std::vector<ModelMask> out(std::size_t{1} << num_predictors);
  std::iota(out.begin(), out.end(), ModelMask{0});
  return out;
}

std::vector<double> constrained_rss(const Eigen::Ref<const Eigen::MatrixXd>& x,
                                    const Eigen::Ref<const Eigen::VectorXd>& y, std::span<const ModelMask> models,
                                    double radius, double singular_ridge, std::size_t* singular_models) {
  static const char* fn = "constrained_rss";
  if (!(std::isfinite(singular_ridge) && singular_ridge >= 0.0)) {
    throw_domain(fn, "singular_ridge", singular_ridge, "finite and >= 0");
  }
  if (singular_models) *singular_models = 0;
  if (x.rows() != y.size()) {
    throw_invalid(fn, "x has " + std::to_string(x.rows()) + " rows and y has " + std::to_string(y.size()) +
                          " entries, but they must be equal");
  }
  const auto d = static_cast<int>(x.cols());
  if (d > kMaxEnumeratedPredictors) {
    throw_domain(fn, "the number of predictors d", d, "at most " + std::to_string(kMaxEnumeratedPredictors));
  }
  check_positive_finite(fn, "radius", radius);
  check_all_finite(fn, "x", x);
  check_all_finite(fn, "y", y);
  const Eigen::MatrixXd g = x.transpose() * x;
  const Eigen::VectorXd c = x.transpose() * y;
  const double yty = y.squaredNorm();
  std::vector<double> out;
  out.reserve(models.size());
  std::vector<Eigen::Index> idx;
  for (ModelMask m : models) {
    if (d < 64 && (m >> d) != 0) {
      throw_invalid(fn, "model " + std::to_string(m) + " uses a predictor >= d = " + std::to_string(d));
    }
    idx.clear();
    for (int j = 0; j < d; ++j) {
      if ((m >> j) & 1U) idx.push_back(j);
    }
    Eigen::VectorXd cm(static_cast<Eigen::Index>(idx.size()));
    for (std::size_t i = 0; i < idx.size(); ++i) cm(static_cast<Eigen::Index>(i)) = c(idx[i]);
    Eigen::MatrixXd gm = sub_gram(g, idx);
    if (singular_ridge > 0.0 && gm.rows() > 0 && Eigen::LLT<Eigen::MatrixXd>(gm).info() != Eigen::Success) {
      gm.diagonal().array() += singular_ridge;  // minimises ‖y − Xβ‖² + τ‖β‖² (see the header)
      if (singular_models) ++*singular_models;
    }
    out.push_back(constrained_least_squares(gm, cm, yty, radius).rss);
  }
  return out;
}

std::string to_string(LcssfDelta delta_kind) {
  switch (delta_kind) {
    case LcssfDelta::r2_1pR2:
      return "r2_1pR2";
    case LcssfDelta::rpR_2:
      return "rpR_2";
    case LcssfDelta::one_pR_2:
      return "1pR_2";
  }
  return "?";
}

LcssfDelta lcssf_delta_from_string(std::string_view name) {
  if (name == "r2_1pR2") return LcssfDelta::r2_1pR2;
  if (name == "rpR_2") return LcssfDelta::rpR_2;
  if (name == "1pR_2") return LcssfDelta::one_pR_2;
  throw_invalid("lcssf_delta_from_string",
                "unknown lcssf_delta '" + std::string(name) + "'; valid: r2_1pR2, rpR_2, 1pR_2");
}

std::string to_string(Alg2Selection s) { return s == Alg2Selection::noisy_min ? "noisy_min" : "exponential_mechanism"; }

Alg2Selection alg2_selection_from_string(std::string_view name) {
  if (name == "exponential_mechanism") return Alg2Selection::exponential_mechanism;
  if (name == "noisy_min") return Alg2Selection::noisy_min;
  throw_invalid("alg2_selection_from_string",
                "unknown alg2_selection '" + std::string(name) + "'; valid: exponential_mechanism, noisy_min");
}

double predictor_bound(LcssfDelta delta_kind, double data_bound) {
  return delta_kind == LcssfDelta::rpR_2 ? 1.0 : data_bound;
}

ClampedData clamp_to_data_bound(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                                double data_bound, LcssfDelta delta_kind) {
  static const char* fn = "clamp_to_data_bound";
  check_positive_finite(fn, "data_bound", data_bound);
  if (x.rows() != y.size()) {
    throw_invalid(fn, "x has " + std::to_string(x.rows()) + " rows and y has " + std::to_string(y.size()) +
                          " entries, but they must be equal");
  }
  check_all_finite(fn, "x", x);
  check_all_finite(fn, "y", y);
  const double bx = predictor_bound(delta_kind, data_bound);
  ClampedData out{x, y, 0, 0};
  for (Eigen::Index i = 0; i < out.x.size(); ++i) {
    double& v = out.x.data()[i];
    if (v > bx || v < -bx) {
      v = std::clamp(v, -bx, bx);
      ++out.clamped_x_entries;
    }
  }
  for (Eigen::Index i = 0; i < out.y.size(); ++i) {
    double& v = out.y(i);
    if (v > data_bound || v < -data_bound) {
      v = std::clamp(v, -data_bound, data_bound);
      ++out.clamped_y_entries;
    }
  }
  return out;
}

double rss_l1_sensitivity(double data_bound, double radius, LcssfDelta delta_kind) {
  check_positive_finite("rss_l1_sensitivity", "data_bound", data_bound);
  check_positive_finite("rss_l1_sensitivity", "radius", radius);
  switch (delta_kind) {
    case LcssfDelta::r2_1pR2:
      return data_bound * data_bound * (1.0 + radius) * (1.0 + radius);
    case LcssfDelta::rpR_2:
      return (data_bound + radius) * (data_bound + radius);
    case LcssfDelta::one_pR_2:
      return (1.0 + radius) * (1.0 + radius);
  }
  return kInf;
}

bool is_valid_dp_calibration(double data_bound, LcssfDelta delta_kind) {
  return delta_kind != LcssfDelta::one_pR_2 || data_bound <= 1.0;
}

namespace {
void check_sizes(const char* fn, std::span<const double> rss, std::span<const ModelMask> models) {
  if (rss.size() != models.size()) {
    throw_invalid(fn, "rss has " + std::to_string(rss.size()) + " entries and models " + std::to_string(models.size()) +
                          ", but they must be equal");
  }
  for (double s : rss) {
    if (!(std::isfinite(s) && s >= 0.0)) throw_domain(fn, "an rss value", s, "finite and >= 0");
  }
}
void check_penalty(const char* fn, double penalty) {
  if (!(std::isfinite(penalty) && penalty >= 0.0)) throw_domain(fn, "penalty", penalty, "finite and >= 0");
}
}  // namespace

std::vector<double> penalized_least_squares_scores(std::span<const double> rss, std::span<const ModelMask> models,
                                                   double objective_scale, double penalty) {
  static const char* fn = "penalized_least_squares_scores";
  check_sizes(fn, rss, models);
  check_positive_finite(fn, "objective_scale", objective_scale);
  check_penalty(fn, penalty);
  std::vector<double> out(rss.size());
  for (std::size_t i = 0; i < rss.size(); ++i) out[i] = objective_scale * rss[i] + penalty * model_size(models[i]);
  return out;
}

std::vector<double> profile_likelihood_scores(std::span<const double> rss, std::span<const ModelMask> models,
                                              std::size_t n, double penalty, double variance_truncation) {
  static const char* fn = "profile_likelihood_scores";
  check_sizes(fn, rss, models);
  check_penalty(fn, penalty);
  if (n == 0) throw_domain(fn, "n", 0.0, ">= 1");
  if (!(std::isfinite(variance_truncation) && variance_truncation >= 0.0)) {
    throw_domain(fn, "variance_truncation", variance_truncation, "finite and >= 0");
  }
  const double nd = static_cast<double>(n);
  std::vector<double> out(rss.size());
  for (std::size_t i = 0; i < rss.size(); ++i) {
    const double v = std::max(rss[i] / nd, variance_truncation);
    if (v <= 0.0) throw_domain(fn, "S_M/n with variance_truncation = 0", v, "> 0");
    out[i] = 0.5 * nd * std::log(v) + penalty * model_size(models[i]);
  }
  return out;
}

double profile_likelihood_l1_sensitivity(double rss_l1_sensitivity, double variance_truncation) {
  check_positive_finite("profile_likelihood_l1_sensitivity", "rss_l1_sensitivity", rss_l1_sensitivity);
  check_positive_finite("profile_likelihood_l1_sensitivity", "variance_truncation", variance_truncation);
  return rss_l1_sensitivity / (2.0 * variance_truncation);
}

namespace detail {

void check_scores(const char* function, std::span<const double> scores) {
  if (scores.empty()) throw_invalid(function, "scores is empty");
  for (double q : scores) {
    if (!std::isfinite(q)) throw_domain(function, "a score", q, "finite");
  }
}

std::size_t argmin(std::span<const double> v) {
  return static_cast<std::size_t>(std::min_element(v.begin(), v.end()) - v.begin());
}

}  // namespace detail

LcssfSelection lcssf_prepare(std::string_view function, const Eigen::Ref<const Eigen::MatrixXd>& x,
                             const Eigen::Ref<const Eigen::VectorXd>& y, const LcssfSettings& settings, double epsilon,
                             bool algorithm2) {
  check_positive_finite(function, "epsilon", epsilon);
  check_lcssf_settings(function, settings, algorithm2);
  if (x.cols() > kMaxEnumeratedPredictors) {
    throw_domain(function, "the number of predictors d", static_cast<double>(x.cols()),
                 "at most " + std::to_string(kMaxEnumeratedPredictors) + " (all 2^d models are enumerated)");
  }
  if (x.rows() < 1) throw_invalid(function, "the data have no rows");
  const ClampedData data = clamp_to_data_bound(x, y, settings.data_bound, settings.delta_kind);
  LcssfSelection out;
  out.models = all_models(static_cast<int>(x.cols()));
  out.rss = constrained_rss(data.x, data.y, out.models, settings.radius, settings.singular_ridge, &out.singular_models);
  out.rss_l1_sensitivity = rss_l1_sensitivity(settings.data_bound, settings.radius, settings.delta_kind) +
                           settings.singular_ridge * settings.radius * settings.radius;
  out.clamped_x_entries = data.clamped_x_entries;
  out.clamped_y_entries = data.clamped_y_entries;
  out.dp_valid = is_valid_dp_calibration(settings.data_bound, settings.delta_kind);
  return out;
}

double lcssf_minimum_rss(const LcssfSelection& prepared) {
  if (prepared.rss.empty()) throw_invalid("lcssf_minimum_rss", "the selection has no models");
  return *std::min_element(prepared.rss.begin(), prepared.rss.end());
}

void check_lcssf_settings(std::string_view function, const LcssfSettings& s, bool algorithm2) {
  check_positive_finite(function, "radius", s.radius);
  if (!(std::isfinite(s.penalty) && s.penalty >= 0.0)) throw_domain(function, "penalty", s.penalty, "finite and >= 0");
  check_positive_finite(function, "data_bound", s.data_bound);
  check_positive_finite(function, "objective_scale", s.objective_scale);
  check_positive_finite(function, "noise_factor", s.noise_factor);
  if (algorithm2) check_positive_finite(function, "variance_floor", s.variance_floor);
}

std::vector<std::string> reconstruction_labels(const LcssfSettings& s, int algorithm) {
  auto num = [](double v) { return format_value(v); };
  std::vector<std::string> out;
  out.push_back("reconstruction of LCSSF (Lei et al. 2018) per docs/methods.md §6: display formulas lost; steps [R]");
  out.push_back("lcssf_delta=" + to_string(s.delta_kind) + " [U] (default r2_1pR2)");
  if (s.delta_kind == LcssfDelta::one_pR_2 && !is_valid_dp_calibration(s.data_bound, s.delta_kind)) {
    out.push_back("NOT DIFFERENTIALLY PRIVATE: lcssf_delta=1pR_2 with data_bound=" + num(s.data_bound) +
                  " > 1 (LCSSF-accuracy calibration, docs/methods.md §6.6)");
  }
  if (algorithm == 1) {
    out.push_back("objective_scale c=" + num(s.objective_scale) + " [U] (default 0.5 = 1/(2 sigma^2), sigma=1)");
    out.push_back("noise_factor kappa=" + num(s.noise_factor) + " [U] (default 2)" +
                  (s.noise_factor == 1.0 ? "; LCSSF-literal candidate (kappa=1)" : ""));
    if (s.noise_factor < 2.0) {
      out.push_back("kappa < 2: epsilon-DP only for monotone scores (docs/methods.md §6.1)");
    }
  } else {
    out.push_back("Algorithm-2-like placeholder (docs/methods.md §6.5), not LCSSF's Algorithm 2 [R/U]");
    out.push_back("alg2_selection=" + to_string(s.alg2_selection) + " [U] (default exponential_mechanism)");
    out.push_back("variance_floor=" + num(s.variance_floor) + " [R] (default 0.01)");
  }
  return out;
}

std::vector<double> report_noisy_min_probabilities(std::span<const double> scores, double laplace_scale) {
  static const char* fn = "report_noisy_min_probabilities";
  detail::check_scores(fn, scores);
  check_positive_finite(fn, "laplace_scale", laplace_scale);
  const double b = laplace_scale;
  const std::size_t m = scores.size();
  std::vector<double> out(m, 0.0);
  if (m == 1) {
    out[0] = 1.0;
    return out;
  }
  const double half_width = 60.0 * b;
  // log P(W > x) for W ~ Laplace(0, b)
  auto log_survival = [b](double x) {
    return x < 0.0 ? std::log1p(-0.5 * std::exp(x / b)) : -0.6931471805599453 - x / b;
  };
  for (std::size_t j = 0; j < m; ++j) {
    const double qj = scores[j];
    auto integrand = [&](double w) {
      double lg = -std::abs(w) / b - std::log(2.0 * b);
      for (std::size_t k = 0; k < m; ++k) {
        if (k != j) lg += log_survival(qj - scores[k] + w);
      }
      return std::exp(lg);
    };
    std::vector<double> cuts{-half_width, 0.0, half_width};
    for (std::size_t k = 0; k < m; ++k) {
      const double c = scores[k] - qj;
      if (k != j && c > -half_width && c < half_width) cuts.push_back(c);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    double total = 0.0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      if (cuts[i + 1] <= cuts[i]) continue;
      total +=
          boost::math::quadrature::gauss_kronrod<double, 15>::integrate(integrand, cuts[i], cuts[i + 1], 20, 1e-13);
    }
    out[j] = total;
  }
  return out;
}

std::vector<double> exponential_mechanism_log_probabilities(std::span<const double> scores, double epsilon,
                                                            double l1_sensitivity) {
  static const char* fn = "exponential_mechanism_log_probabilities";
  detail::check_scores(fn, scores);
  check_positive_finite(fn, "epsilon", epsilon);
  check_positive_finite(fn, "l1_sensitivity", l1_sensitivity);
  std::vector<double> out(scores.size());
  const double f = -epsilon / (2.0 * l1_sensitivity);
  const double qmin = *std::min_element(scores.begin(), scores.end());
  for (std::size_t i = 0; i < scores.size(); ++i) out[i] = f * (scores[i] - qmin);
  const double lse = log_sum_exp(std::span<const double>(out));
  for (double& v : out) v -= lse;
  return out;
}

void standardize_columns(Eigen::Ref<Eigen::MatrixXd> x, Eigen::Ref<Eigen::VectorXd> y) {
  const auto standardize = [](Eigen::Ref<Eigen::VectorXd> v) {
    const double mean = v.mean();
    v.array() -= mean;
    const double sd = std::sqrt(v.squaredNorm() / static_cast<double>(v.size() - 1));
    if (sd > 0.0) v /= sd;
  };
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    Eigen::VectorXd c = x.col(j);
    standardize(c);
    x.col(j) = c;
  }
  standardize(y);
}

}  // namespace dpmu::core
