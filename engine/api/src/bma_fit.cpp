// api::bma(): data matrix in, model averaging out (non-private, or through an SSP release).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dpmu/api/bma.hpp"
#include "dpmu/api/bma_pipeline.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/runtime/secure_random.hpp"

namespace dpmu::api {

void check_release_bounds(const core::SspReleaseSettings& rs) {
  // The widths w_j of the public bounds (1 with --rescale) must keep the Gram matrix, its
  // sensitivity ((n−1)/n)((Σw)² + Σw²)/2 and the noise within the range of a double.
  double sum = 0.0;
  double sum_sq = 0.0;
  double widest = 0.0;
  for (std::size_t j = 0; j < static_cast<std::size_t>(rs.p + 1); ++j) {
    const core::ColumnBounds& b = rs.bounds.size() == 1 ? rs.bounds[0] : rs.bounds[j];
    const double w = rs.rescale ? 1.0 : b.upper - b.lower;
    widest = std::max(widest, b.upper - b.lower);
    sum += w;
    sum_sq += w * w;
  }
  const double s = 0.5 * (sum * sum + sum_sq);
  const double n = static_cast<double>(rs.n);
  if (!std::isfinite(widest) || !std::isfinite(s * n) || !std::isfinite(64.0 * s / rs.epsilon)) {
    throw std::invalid_argument(
        "--bounds: widths u - l up to " + core::format_value(widest) +
        " make the Gram matrix (up to n w^2), its sensitivity ((n-1)/n)((sum w)^2 + sum w^2)/2 = " +
        core::format_value(s) + " or the noise (sensitivity / epsilon) overflow a double" +
        (rs.rescale ? "" : "; choose narrower public bounds, or add --rescale (each column divided by its width)"));
  }
}

void check_release_noise(const core::SspRelease& release, const core::SspReleaseSettings& rs) {
  // The noise the release will add must be finite: Laplace scale, or the Wishart k·B² (its mean shift).
  const double n = static_cast<double>(rs.n);
  const core::SspMechanism& mech = release.mechanism();
  double noise = 0.0;
  if (mech.kind == core::SspMechanismKind::laplace) {
    noise = 64.0 * core::ssp_laplace_scale(mech);
  } else {
    const auto w = core::ssp_wishart_parameters(mech);
    noise = 64.0 * w.degrees_of_freedom * w.scale;
  }
  const double g = release.privacy().sensitivity * n;
  if (!std::isfinite(noise + g)) {
    throw std::invalid_argument("--epsilon " + core::format_value(rs.epsilon) + " with these --bounds gives noise of " +
                                "magnitude " + core::format_value(noise) +
                                ", beyond the range of a double; choose a larger --epsilon or narrower --bounds");
  }
}

core::SspRelease ssp_release(const core::SspReleaseSettings& rs) {
  check_release_bounds(rs);
  core::SspRelease release(rs);  // checks ε, δ and the bounds
  check_release_noise(release, rs);
  return release;
}

std::vector<std::string> release_warnings(const core::SspReleaseSettings& rs, bool secure) {
  std::vector<std::string> out;
  if (!secure || rs.mechanism != core::SspMechanismKind::wishart) return out;
  out.push_back(
      "warning: the Wishart release is a floating-point Bartlett draw, not hardened against floating-point attacks "
      "(Mironov 2012); prefer the laplace mechanism for a real release");
  const double n = static_cast<double>(rs.n);
  const double limit = std::min(1.0 / (n * n), 1e-5);
  if (rs.delta > limit) {
    out.push_back("warning: delta " + core::format_value(rs.delta) + " is above min(1/n^2, 1e-5) = " +
                  core::format_value(limit) + "; a large delta allows rare catastrophic disclosure");
  }
  return out;
}

namespace {

/// --ridge is never raised silently (a property of the released matrix: no disclosure).
void note_ridge_fallback(const core::RegularizedGram& g, double requested, const std::string& method,
                         const char* version, std::vector<std::string>& messages) {
  if (!g.fallback) return;
  messages.push_back(std::string("warning: ") + (method == "user" ? "--ridge " : "the automatic ridge ") +
                     core::format_value(requested) + " leaves the " + version +
                     " released matrix G* + rI not positive definite; the ridge was raised to " +
                     core::format_value(g.regularization) + " (regularization." + version + ".fallback = true)");
}

}  // namespace

BmaRelease release_gram(const Eigen::MatrixXd& raw, const core::SspRelease& release, const ReleaseOptions& options,
                        std::uint64_t seed, runtime::SecureRng* secure_rng, const BmaHooks& hooks,
                        std::vector<std::string>& messages) {
  BmaRelease out;
  out.settings = release.settings();
  out.privacy = release.privacy();
  out.column_scale = release.column_scale();
  const core::SspMechanism& mech = release.mechanism();
  if (hooks.before_noise) hooks.before_noise(out.privacy);
  core::RngStream noise_rng(seed, core::fnv1a_64("bma/noise"), 0, core::StreamPurpose::noise);
  core::NoiseSource noise = secure_rng != nullptr ? core::NoiseSource::secure([secure_rng] { return (*secure_rng)(); })
                                                  : core::NoiseSource::simulation(noise_rng);
  const core::SspOutput released = release.release(raw, noise);
  out.released_gram = released.released_gram;
  const double n = static_cast<double>(raw.rows());
  const auto d = raw.cols();
  if (released.diagnostics) {
    const auto clamped = released.diagnostics->clamped_entries;
    out.clamped_entries = clamped;
    const double fraction = static_cast<double>(clamped) / (n * static_cast<double>(d));
    if (fraction > 0.1) {
      messages.push_back("warning (simulation mode): --bounds clamp " + std::to_string(clamped) + " of the " +
                         std::to_string(raw.rows() * d) + " values (" + core::format_value(100.0 * fraction) +
                         "%); widen the bounds or the analysis measures the bounds, not the data");
    }
  }
  if (options.ridge) {
    out.ridge_requested = *options.ridge;
    out.ridge_method = "user";
  } else if (mech.kind == core::SspMechanismKind::laplace) {
    core::RngStream cal(seed, core::fnv1a_64("bma/ridge"), 0, core::StreamPurpose::calibration);
    out.ridge_requested = core::monte_carlo_regularization(mech, cal, options.ridge_draws);
    out.ridge_method = "monte-carlo 99th percentile of -eigmin(E), " + std::to_string(options.ridge_draws) + " draws";
  } else {
    out.ridge_requested = core::wishart_regularization(mech);
    out.ridge_method = "analytic (Gaussian singular-value bound, nu = 0.01)";
  }
  out.regularized = core::regularize(out.released_gram, out.ridge_requested);
  note_ridge_fallback(out.regularized, out.ridge_requested, out.ridge_method, "non_thresholded", messages);
  if (options.threshold) {
    const double thr = core::threshold_value(mech, *options.threshold, options.threshold_reference);
    const Eigen::MatrixXd gt = core::hard_threshold(out.released_gram, thr);
    out.threshold_value = thr;
    out.thresholded_regularized = core::regularize(gt, out.ridge_requested);
    note_ridge_fallback(*out.thresholded_regularized, out.ridge_requested, out.ridge_method, "thresholded", messages);
    int zeroed = 0;
    for (Eigen::Index i = 0; i < gt.rows(); ++i) {
      for (Eigen::Index j = 0; j < i; ++j) zeroed += gt(i, j) == 0.0 && out.released_gram(i, j) != 0.0;
    }
    out.off_diagonal_entries_zeroed = zeroed;
  }
  return out;
}

namespace {

std::size_t index_of(const std::vector<std::string>& names, const std::string& name, const char* what) {
  for (std::size_t j = 0; j < names.size(); ++j) {
    if (names[j] == name) return j;
  }
  throw std::invalid_argument(std::string(what) + ": '" + name + "' is not one of the predictors");
}

}  // namespace

BmaFit bma(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
           const std::vector<std::string>& predictors, const std::string& response, const BmaSettings& settings,
           const BmaHooks& hooks) {
  constexpr const char* fn = "bma";
  const auto p = static_cast<std::size_t>(x.cols());
  if (x.rows() != y.size()) {
    throw std::invalid_argument("bma: x has " + std::to_string(x.rows()) + " rows but y has " +
                                std::to_string(y.size()) + " values");
  }
  if (predictors.size() != p) {
    throw std::invalid_argument("bma: " + std::to_string(predictors.size()) + " predictor names for " +
                                std::to_string(p) + " columns of x");
  }
  if (p == 0) throw std::invalid_argument("bma: need at least one predictor");
  if (p > static_cast<std::size_t>(core::kMaxPredictors)) {
    throw std::invalid_argument("bma: " + std::to_string(p) + " predictors; at most " +
                                std::to_string(core::kMaxPredictors) + " (a model is a 64-bit mask)");
  }
  std::vector<std::string> all = predictors;
  all.push_back(response);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (all[i] == all[j]) throw std::invalid_argument("bma: column '" + all[i] + "' is named twice");
    }
  }
  Eigen::MatrixXd raw(x.rows(), static_cast<Eigen::Index>(p + 1));
  raw.leftCols(static_cast<Eigen::Index>(p)) = x;
  raw.col(static_cast<Eigen::Index>(p)) = y;
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    if (!raw.col(j).allFinite()) {
      throw std::invalid_argument("bma: column '" + all[static_cast<std::size_t>(j)] +
                                  "' has missing or non-finite values; remove those rows first");
    }
  }
  const auto n_rows = raw.rows();
  const double n = static_cast<double>(n_rows);
  if (n_rows < 3) throw std::invalid_argument("bma: need at least 3 rows, got " + std::to_string(n_rows));

  AnalysisPlan plan;
  plan.prior = core::parse_coefficient_prior(settings.prior, settings.g, settings.a);
  plan.model_prior = core::parse_model_prior(settings.model_prior);
  if (settings.top_models < 0) core::throw_domain(fn, "top_models", settings.top_models, ">= 0");
  plan.options.top_models = settings.top_models;
  if (settings.credible_level != 0.0) {
    core::check_open_interval(fn, "credible_level", settings.credible_level, 0.0, 1.0);
  }
  plan.options.credible_level = settings.credible_level;
  for (const auto& name : settings.always_include) {
    plan.options.always_included |= 1ULL << index_of(predictors, name, "always_include");
  }
  Search search;
  search.mcmc = settings.mcmc || p > 24 || n <= static_cast<double>(p) + 1.0;
  search.tolerance = settings.mcmc_tolerance;
  if (search.mcmc) core::check_positive_finite(fn, "mcmc_tolerance", settings.mcmc_tolerance);
  if (!(n > core::model_size(plan.options.always_included) + 1.0)) {
    throw std::invalid_argument("bma: need more rows than forced predictors + 1 (n = " + std::to_string(n_rows) + ")");
  }

  BmaFit fit;
  fit.response = response;
  fit.predictors = predictors;
  fit.always_include = settings.always_include;
  fit.n = static_cast<std::size_t>(n_rows);
  fit.prior = core::to_string(plan.prior);
  if (plan.prior.prior.kind == core::PriorKind::g_prior) fit.g = plan.prior.prior.g.value_or(n);
  fit.a = plan.prior.prior.a;
  fit.model_prior = core::to_string(plan.model_prior);
  fit.search = search.mcmc ? "mcmc" : "enumeration";
  runtime::SecureRng secure_rng;
  const bool secure = settings.privacy && !settings.seed;
  check_ledger_options(settings.ledger, secure);
  fit.seed = settings.seed ? *settings.seed : secure_rng();
  search.seed = fit.seed;
  fit.is_private = secure;

  if (!settings.privacy) {
    const NonPrivateGram np = non_private_gram(raw, all);
    if (p + 2 <= static_cast<std::size_t>(n_rows)) {
      const auto deficient = core::rank_deficient_columns(np.gram, plan.options.collinearity_tolerance);
      for (auto& m : rank_deficient_messages(deficient, predictors)) fit.messages.push_back(std::move(m));
    }
    fit.posterior = analyse(np.gram, n, plan, np.scale, search, predictors, response, false, np.means(p));
    for (auto& m : excluded_model_messages(fit.posterior, false)) fit.messages.push_back(std::move(m));
    fit.predictor_means = np.means.head(static_cast<Eigen::Index>(p));
    return fit;
  }

  const PrivacySettings& ps = *settings.privacy;
  core::SspReleaseSettings rs;
  rs.mechanism = core::parse_ssp_mechanism(ps.mechanism);
  if (ps.bounds.size() != 1 && ps.bounds.size() != p + 1) {
    throw std::invalid_argument("bma: bounds: give 1 pair (every column) or " + std::to_string(p + 1) +
                                " (predictors, then the response); " + std::to_string(ps.bounds.size()) + " given");
  }
  rs.bounds = ps.bounds;
  core::check_positive_finite(fn, "epsilon", ps.epsilon);
  rs.epsilon = ps.epsilon;
  if (rs.mechanism == core::SspMechanismKind::laplace && ps.delta) {
    throw std::invalid_argument("bma: delta applies to the wishart mechanism only (laplace is epsilon-DP)");
  }
  if (rs.mechanism == core::SspMechanismKind::wishart && !ps.delta) {
    throw std::invalid_argument("bma: delta is required for the wishart mechanism (e.g. 1e-6, well below 1/n)");
  }
  rs.delta = ps.delta.value_or(0.0);
  rs.n = static_cast<std::size_t>(n_rows);
  rs.p = static_cast<int>(p);
  rs.rescale = ps.rescale;
  const core::SspRelease release = ssp_release(rs);
  for (auto& m : release_warnings(rs, secure)) fit.messages.push_back(std::move(m));
  ReleaseOptions ro;
  ro.ridge = ps.ridge;
  if (ps.ridge && !(std::isfinite(*ps.ridge) && *ps.ridge >= 0.0)) core::throw_domain(fn, "ridge", *ps.ridge, ">= 0");
  if (ps.ridge_draws < 100) core::throw_domain(fn, "ridge_draws", ps.ridge_draws, ">= 100");
  ro.ridge_draws = ps.ridge_draws;
  ro.threshold = ps.threshold;
  ro.threshold_reference = core::parse_threshold_reference(ps.threshold_reference);
  if (ps.threshold) core::check_open_interval(fn, "threshold", *ps.threshold, 0.0, 1.0);
  // The ledger is charged after every check and before any noise, on the bytes analysed.
  BmaHooks charged = hooks;
  charged.before_noise = [&](const core::PrivacyGuarantee& g) {
    fit.ledger = charge_release(settings.ledger, settings.command, matrix_bytes(raw, all), g,
                                nlohmann::json::array({"released_gram", "and post-processing of it"}));
    if (hooks.before_noise) hooks.before_noise(g);
  };
  fit.release = release_gram(raw, release, ro, fit.seed, secure ? &secure_rng : nullptr, charged, fit.messages);
  const BmaRelease& rel = *fit.release;
  fit.posterior =
      analyse(rel.regularized.matrix, n, plan, rel.column_scale, search, predictors, response, true, std::nullopt);
  for (auto& m : excluded_model_messages(fit.posterior, true)) fit.messages.push_back(std::move(m));
  if (rel.thresholded_regularized) {
    fit.thresholded = analyse(rel.thresholded_regularized->matrix, n, plan, rel.column_scale, search, predictors,
                              response, true, std::nullopt);
    for (auto& m : excluded_model_messages(*fit.thresholded, true)) fit.messages.push_back(std::move(m));
  }
  return fit;
}

nlohmann::ordered_json privacy_json(const BmaFit& fit) {
  ReleaseReport report(fit.is_private || !fit.release, "");
  if (!fit.release) {
    report.not_private("non-private: exact model averaging of the confidential data, no noise");
  } else {
    report.privacy(fit.release->privacy);
    const core::SspRelease release(fit.release->settings);
    if (fit.release->settings.mechanism == core::SspMechanismKind::wishart) {
      const auto w = core::ssp_wishart_parameters(release.mechanism());
      report.privacy_detail("wishart_degrees_of_freedom", w.degrees_of_freedom);
      report.privacy_detail("wishart_scale", w.scale);
    } else {
      report.privacy_detail("laplace_scale", core::ssp_laplace_scale(release.mechanism()));
    }
  }
  const auto full = report.finish();
  nlohmann::ordered_json out;
  out["private"] = full["private"];
  out["private_reason"] = full["private_reason"];
  out["privacy"] = full.contains("privacy") ? full["privacy"] : nlohmann::ordered_json(nullptr);
  out["ledger"] = fit.ledger ? to_json(*fit.ledger) : nlohmann::ordered_json(nullptr);
  return out;
}

}  // namespace dpmu::api
