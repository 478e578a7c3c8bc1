// api::bma(): data matrix in, model averaging out (non-private, or through an SSP release).
#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
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
  double narrowest = widest;
  for (const core::ColumnBounds& b : rs.bounds) narrowest = std::min(narrowest, b.upper - b.lower);
  if (!(s / rs.epsilon >= std::numeric_limits<double>::min())) {
    throw std::invalid_argument(
        "--bounds: widths u - l down to " + core::format_value(narrowest) +
        " make the sensitivity ((n-1)/n)((sum w)^2 + sum w^2)/2 = " + core::format_value(s) +
        " (or sensitivity / epsilon) underflow to 0 in a double; multiply the data and the bounds by a constant "
        "(the analysis is scale-equivariant), or add --rescale (each column divided by its width)");
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
                        std::uint64_t seed, runtime::SecureRng* secure_rng, ReleaseCharge& charge,
                        std::string_view data_bytes, std::vector<std::string>& messages) {
  if (options.ridge) {
    // G's diagonal is at most n·w²/4 (w the widest column after --rescale); a ridge 10^12 times that
    // leaves no trace of the data in double precision, and beyond it G* + rI can overflow.
    const core::SspReleaseSettings& rs = release.settings();
    double widest = 0.0;
    for (const core::ColumnBounds& b : rs.bounds) widest = std::max(widest, rs.rescale ? 1.0 : b.upper - b.lower);
    const double limit = 1e12 * static_cast<double>(rs.n) * widest * widest;
    if (!(*options.ridge <= limit)) {
      throw std::invalid_argument("--ridge " + core::format_value(*options.ridge) +
                                  " is above 10^12 n w^2 = " + core::format_value(limit) +
                                  " (w the widest public bound): it would leave nothing of the data; use 'auto' or "
                                  "a ridge of the order of the noise");
    }
  }
  BmaRelease out;
  out.settings = release.settings();
  out.privacy = release.privacy();
  out.column_scale = release.column_scale();
  const core::SspMechanism& mech = release.mechanism();
  core::RngStream noise_rng(seed, core::fnv1a_64("bma/noise"), 0, core::StreamPurpose::noise);
  core::NoiseSource noise = secure_rng != nullptr ? core::NoiseSource::secure([secure_rng] { return (*secure_rng)(); })
                                                  : core::NoiseSource::simulation(noise_rng);
  const core::SspOutput released = charge.draw_and_commit([&] { return release.release(raw, noise); }, data_bytes);
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
    out.ridge_requested =
        core::monte_carlo_regularization(mech, cal, options.ridge_draws, core::kRidgeConfidence, options.progress);
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

/// The parsed plan of `settings` for a fit with these predictors and n (the checks of bma()).
AnalysisPlan analysis_plan(const BmaSettings& settings, const std::vector<std::string>& predictors, double n,
                           const char* fn) {
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
  for (const auto& group : settings.heredity_groups) {
    core::ModelMask g = 0;
    for (const auto& name : group) g |= 1ULL << index_of(predictors, name, "heredity group");
    if (g != 0) plan.options.heredity_groups.push_back(g);
  }
  for (const auto& [term, parents] : settings.heredity_parents) {
    core::BmaOptions::HeredityParents h;
    for (const auto& name : term) h.term |= 1ULL << index_of(predictors, name, "heredity term");
    for (const auto& name : parents) h.parents |= 1ULL << index_of(predictors, name, "heredity parent");
    if (h.term != 0 && h.parents != 0) plan.options.heredity_parents.push_back(h);
  }
  if (!(n > core::model_size(plan.options.always_included) + 1.0)) {
    throw std::invalid_argument(std::string(fn) +
                                ": need more rows than forced predictors + 1 (n = " + core::format_value(n) + ")");
  }
  return plan;
}

/// The release's uncertainty: settings.uncertainty, or "noise-aware" when unset.
std::string release_uncertainty(const BmaSettings& settings) {
  return settings.uncertainty.empty() ? std::string("noise-aware") : settings.uncertainty;
}

/// uncertainty and noise_aware_draws, and the noise-aware analysis's restrictions, checked before any
/// budget is spent.
void check_uncertainty(const BmaSettings& settings, const AnalysisPlan& plan, std::size_t p, double n) {
  const std::string u = release_uncertainty(settings);
  if (u != "plug-in" && u != "noise-aware") {
    throw std::invalid_argument("bma: uncertainty must be 'noise-aware' (the default) or 'plug-in', not '" + u + "'");
  }
  if (u != "noise-aware") return;
  check_noise_aware_draws(settings.noise_aware_draws, "bma: noise_aware_draws");
  check_noise_aware_plan(plan, static_cast<int>(p), n, settings.mcmc, "packages");
}

Search analysis_search(const BmaSettings& settings, std::size_t p, double n, std::uint64_t seed, const char* fn) {
  Search search;
  search.mcmc = settings.mcmc || p > 24 || n <= static_cast<double>(p) + 1.0;
  search.tolerance = settings.mcmc_tolerance;
  if (search.mcmc) core::check_positive_finite(fn, "mcmc_tolerance", settings.mcmc_tolerance);
  search.seed = seed;
  search.max_iterations = settings.mcmc_max_iterations;
  search.max_models = settings.mcmc_max_models;
  search.progress = settings.progress;
  check_search_bounds(search, p, "mcmc_max_models", "mcmc_max_iterations");
  return search;
}
}  // namespace

BmaFit bma(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
           const std::vector<std::string>& predictors, const std::string& response, const BmaSettings& settings) {
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

  const AnalysisPlan plan = analysis_plan(settings, predictors, n, fn);
  Search search = analysis_search(settings, p, n, 0, fn);

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
  fit.analysis = settings;  // what reanalyse() starts from
  fit.analysis.privacy.reset();
  fit.analysis.ledger = {};
  fit.analysis.seed.reset();
  fit.analysis.progress = nullptr;  // the caller's callback may not outlive this call

  if (!settings.privacy) {
    if (settings.uncertainty == "noise-aware") {  // asked for: a non-private fit has no noise to integrate
      throw std::invalid_argument(std::string(fn) +
                                  ": uncertainty 'noise-aware' integrates over the privacy noise of a release; a "
                                  "non-private fit (no epsilon) has none");
    }
    const NonPrivateGram np = non_private_gram(raw, all);
    if (p + 2 <= static_cast<std::size_t>(n_rows)) {
      const auto deficient = core::rank_deficient_columns(np.gram, plan.options.collinearity_tolerance);
      for (auto& m : rank_deficient_messages(deficient, predictors)) fit.messages.push_back(std::move(m));
    }
    fit.posterior = analyse(np.gram, n, plan, np.scale, search, predictors, response, false, np.means(p));
    for (auto& m : excluded_model_messages(fit.posterior, false)) fit.messages.push_back(std::move(m));
    fit.predictor_means = np.means.head(static_cast<Eigen::Index>(p));
    fit.data_statistics = BmaDataStatistics{np.gram, np.scale, np.means};  // non-private only
    return fit;
  }

  const PrivacySettings& ps = *settings.privacy;
  check_uncertainty(settings, plan, p, n);
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
  ro.progress = settings.progress;
  if (ps.threshold) core::check_open_interval(fn, "threshold", *ps.threshold, 0.0, 1.0);
  // The budget is checked now, before any work; the charge is made when the release is computed.
  ReleaseCharge charge(settings.ledger, settings.command, release.privacy(),
                       nlohmann::json::array({"released_gram", "and post-processing of it"}));
  const std::string data_bytes = settings.ledger.path.empty() ? std::string() : matrix_bytes(raw, all);
  fit.release =
      release_gram(raw, release, ro, fit.seed, secure ? &secure_rng : nullptr, charge, data_bytes, fit.messages);
  fit.ledger = charge.charge();  // charged as soon as the noise was drawn
  const BmaRelease& rel = *fit.release;
  fit.posterior =
      release_uncertainty(settings) == "noise-aware"
          ? noise_aware_analysis(rel, n, plan, search, settings.noise_aware_draws, predictors, response, fit.messages)
          : analyse(rel.regularized.matrix, n, plan, rel.column_scale, search, predictors, response, true,
                    std::nullopt);
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

// ---- Re-analysis, predictive standard errors and coefficient densities (post-processing) ----

namespace {

/// The matrix a fit's posterior was computed from, with its column scales (released or exact).
struct FitStatistics {
  const Eigen::MatrixXd* gram = nullptr;
  const Eigen::VectorXd* scale = nullptr;
};

FitStatistics statistics_of(const BmaFit& fit, const char* fn) {
  if (fit.release) return {&fit.release->regularized.matrix, &fit.release->column_scale};
  if (fit.data_statistics) return {&fit.data_statistics->gram, &fit.data_statistics->scale};
  throw std::invalid_argument(std::string(fn) + ": the fit holds neither a release nor the statistics of the data");
}

/// The most probable models of the fit's analysis (up to kMixtureModels), for the mixtures of the
/// coefficients' densities.
constexpr int kMixtureModels = 4096;
/// Predictions average over every model when at most this many columns are free (2^16 = 65 536
/// models, about 1 s for 1000 new rows), else over the kMixtureModels most probable.
constexpr int kExactMixtureFreeColumns = 16;

struct Mixture {
  std::vector<core::ModelSummary> models;  ///< with normalised posterior probabilities (over all models)
  double omitted_mass = 0.0;
  AnalysisPlan plan;
};

/// `exact`: all models when at most kExactMixtureFreeColumns columns are free; `top` > 0: at most
/// the `top` most probable.
Mixture mixture_of(const BmaFit& fit, const char* fn, bool exact = false, std::size_t top = 0) {
  const FitStatistics st = statistics_of(fit, fn);
  const double n = static_cast<double>(fit.n);
  Mixture m;
  m.plan = analysis_plan(fit.analysis, fit.predictors, n, fn);
  const Search search = analysis_search(fit.analysis, fit.predictors.size(), n, fit.seed, fn);
  core::BmaOptions opt = m.plan.options;
  const int free = static_cast<int>(fit.predictors.size()) - core::model_size(opt.always_included);
  if (exact && free <= kExactMixtureFreeColumns) {
    opt.top_models = 1 << free;
  } else {
    opt.top_models = free >= 12 ? kMixtureModels : std::min(kMixtureModels, 1 << free);
  }
  if (top > 0 && top < static_cast<std::size_t>(opt.top_models)) opt.top_models = static_cast<int>(top);
  opt.credible_level = 0.0;
  opt.keep_all_models = false;
  const core::BmaResult r = run_search(*st.gram, n, m.plan.prior, m.plan.model_prior, opt, search, nullptr);
  double total = 0.0;
  for (const auto& t : r.top_models) {
    if (t.posterior_probability > 0.0) {
      m.models.push_back(t);
      total += t.posterior_probability;
    }
  }
  m.omitted_mass = std::max(0.0, 1.0 - total);
  return m;
}

std::vector<Eigen::Index> indices(core::ModelMask mask, std::size_t p) {
  std::vector<Eigen::Index> out;
  for (std::size_t j = 0; j < p; ++j) {
    if ((mask >> j) & 1ULL) out.push_back(static_cast<Eigen::Index>(j));
  }
  return out;
}

core::ModelMask mask_of(const std::vector<std::string>& model, const std::vector<std::string>& predictors) {
  core::ModelMask m = 0;
  for (const auto& name : model) m |= 1ULL << index_of(predictors, name, "model");
  return m;
}

double mean_shrinkage(const core::ShrinkagePosterior& s) {
  if (s.shrinkage.empty()) return 1.0;
  double e = 0.0;
  for (std::size_t i = 0; i < s.shrinkage.size(); ++i) e += s.shrinkage[i] * s.probability[i];
  return e;
}

/// One model's predictions in data units (BmaPrediction's per-model quantities).
struct ModelPrediction {
  Eigen::VectorXd mean;
  Eigen::VectorXd scale_fit;  ///< 1/n + s x̃'V x̃
  double mse = 0.0;
  double df = 0.0;
};

ModelPrediction model_prediction(const BmaDataStatistics& st, double n, core::ModelMask mask, double s,
                                 double r_squared, double df, const Eigen::MatrixXd& xs) {
  const auto p = static_cast<std::size_t>(xs.cols());
  const auto idx = indices(mask, p);
  const auto k = static_cast<Eigen::Index>(idx.size());
  const auto py = static_cast<Eigen::Index>(p);
  const double sy = st.scale(py);
  ModelPrediction out;
  out.df = df;
  out.mse = sy * sy * st.gram(py, py) * (1.0 - s * r_squared) / df;
  out.mean = Eigen::VectorXd::Constant(xs.rows(), st.means(py));
  out.scale_fit = Eigen::VectorXd::Constant(xs.rows(), 1.0 / n);
  if (k == 0) return out;
  Eigen::MatrixXd g(k, k);
  Eigen::VectorXd gy(k);
  Eigen::MatrixXd xg(xs.rows(), k);
  for (Eigen::Index a = 0; a < k; ++a) {
    gy(a) = st.gram(idx[static_cast<std::size_t>(a)], py);
    xg.col(a) = xs.col(idx[static_cast<std::size_t>(a)]);
    for (Eigen::Index b = 0; b < k; ++b)
      g(a, b) = st.gram(idx[static_cast<std::size_t>(a)], idx[static_cast<std::size_t>(b)]);
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(g);
  if (llt.info() != Eigen::Success) throw std::domain_error("predict: a model of the mixture is rank deficient");
  const Eigen::VectorXd beta = llt.solve(gy);
  out.mean.array() += sy * s * (xg * beta).array();
  const Eigen::MatrixXd w = llt.matrixL().solve(xg.transpose());  // k × m: ||L^{-1} x̃||² = x̃'V x̃
  out.scale_fit.array() += s * w.colwise().squaredNorm().transpose().array();
  return out;
}

double model_df(const core::CoefficientPrior& prior, double n, int k) {
  return core::is_bayesian(prior.prior.kind) ? n - 1.0 : n - 1.0 - k;
}

/// The quantile `q` of the mixture Σ w_i (m_i + s_i t_{df_i}) (equal-tailed interval ends), by bisection.
double mixture_quantile(const std::vector<double>& w, const std::vector<double>& m, const std::vector<double>& s,
                        const std::vector<double>& df, double q) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double t = boost::math::quantile(boost::math::students_t_distribution<double>(df[i]), q);
    lo = std::min(lo, m[i] + s[i] * t);
    hi = std::max(hi, m[i] + s[i] * t);
  }
  const auto cdf = [&](double y) {
    double f = 0.0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      f += s[i] > 0.0 ? w[i] * boost::math::cdf(boost::math::students_t_distribution<double>(df[i]), (y - m[i]) / s[i])
                      : w[i] * (y >= m[i] ? 1.0 : 0.0);
    }
    return f;
  };
  for (int it = 0; it < 200 && hi - lo > 1e-14 * std::max(std::abs(lo), std::abs(hi)); ++it) {
    const double mid = 0.5 * (lo + hi);
    (cdf(mid) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

BmaFit reanalyse(const BmaFit& fit, const BmaSettings& settings) {
  constexpr const char* fn = "reanalyse";
  if (settings.privacy) {
    throw std::invalid_argument(
        "reanalyse: the privacy settings are those of the release (re-analysis adds no noise); run bma() again for "
        "a new release");
  }
  if (!settings.ledger.path.empty()) {
    throw std::invalid_argument("reanalyse: re-analysis is post-processing and charges no ledger; give no ledger");
  }
  if (settings.seed && *settings.seed != fit.seed) {
    throw std::invalid_argument("reanalyse: the seed of the fit (" + std::to_string(fit.seed) +
                                ") cannot change; run bma() again for another release or seed");
  }
  const FitStatistics st = statistics_of(fit, fn);
  const double n = static_cast<double>(fit.n);
  const AnalysisPlan plan = analysis_plan(settings, fit.predictors, n, fn);
  const Search search = analysis_search(settings, fit.predictors.size(), n, fit.seed, fn);
  BmaFit out = fit;
  out.always_include = settings.always_include;
  out.prior = core::to_string(plan.prior);
  out.g.reset();
  if (plan.prior.prior.kind == core::PriorKind::g_prior) out.g = plan.prior.prior.g.value_or(n);
  out.a = plan.prior.prior.a;
  out.model_prior = core::to_string(plan.model_prior);
  out.search = search.mcmc ? "mcmc" : "enumeration";
  out.analysis = settings;
  out.analysis.seed.reset();
  out.analysis.progress = nullptr;
  out.messages.clear();
  const bool release = fit.release.has_value();
  const std::optional<double> response_mean =
      release ? std::nullopt : std::optional<double>(fit.data_statistics->means(fit.data_statistics->means.size() - 1));
  if (release) check_uncertainty(settings, plan, fit.predictors.size(), n);
  out.posterior =
      release && release_uncertainty(settings) == "noise-aware"
          ? noise_aware_analysis(*fit.release, n, plan, search, settings.noise_aware_draws, fit.predictors,
                                 fit.response, out.messages)
          : analyse(*st.gram, n, plan, *st.scale, search, fit.predictors, fit.response, release, response_mean);
  for (auto& m : excluded_model_messages(out.posterior, release)) out.messages.push_back(std::move(m));
  if (release && fit.release->thresholded_regularized) {
    out.thresholded = analyse(fit.release->thresholded_regularized->matrix, n, plan, *st.scale, search, fit.predictors,
                              fit.response, true, std::nullopt);
    for (auto& m : excluded_model_messages(*out.thresholded, true)) out.messages.push_back(std::move(m));
  }
  return out;
}

BmaPrediction predict_with_se(const BmaFit& fit, const Eigen::Ref<const Eigen::MatrixXd>& new_x, Estimator estimator,
                              double level, bool prediction, std::size_t top) {
  constexpr const char* fn = "predict";
  if (fit.release || !fit.data_statistics) {
    throw std::invalid_argument(
        "predict: a release publishes no means of the data, so predictions need a non-private fit");
  }
  if (!(level == 0.0 || (level > 0.0 && level < 1.0))) core::throw_domain(fn, "level", level, "in (0, 1)");
  BmaPrediction out;
  out.fit = predict(fit, new_x, estimator);  // checks the columns
  const BmaDataStatistics& st = *fit.data_statistics;
  const auto p = static_cast<Eigen::Index>(fit.predictors.size());
  const double n = static_cast<double>(fit.n);
  Eigen::MatrixXd xs = new_x.rowwise() - st.means.head(p).transpose();
  for (Eigen::Index j = 0; j < p; ++j) xs.col(j) /= st.scale(j);
  const Mixture mix = mixture_of(fit, fn, true, estimator == Estimator::bma ? top : 0);
  out.level = level;
  const double q = (1.0 - level) / 2.0;
  if (estimator != Estimator::bma) {
    const BmaSummary& s = fit.posterior;
    const auto& names = estimator == Estimator::hpm   ? s.highest_posterior_model
                        : estimator == Estimator::mpm ? s.median_probability_model
                                                      : s.best_predictive_model;
    const core::ModelMask mask = mask_of(names, fit.predictors);
    const int k = core::model_size(mask);
    double shrink = 0.0;
    double r2 = 0.0;
    bool found = false;
    for (const auto& t : mix.models) {
      if (t.model == mask) {
        shrink = t.shrinkage;
        r2 = t.r_squared;
        found = true;
      }
    }
    if (!found) {
      const auto post = core::model_coefficient_posterior(st.gram, n, mask, mix.plan.prior);
      shrink = mean_shrinkage(post.shrinkage);
      r2 = post.r_squared;
    }
    const ModelPrediction mp = model_prediction(st, n, mask, shrink, r2, model_df(mix.plan.prior, n, k), xs);
    out.se_fit = (mp.mse * mp.scale_fit.array()).sqrt();
    out.se_pred = (mp.mse * (1.0 + mp.scale_fit.array())).sqrt();
    out.df = mp.df;
    out.models = 1;
    if (level > 0.0) {
      const double t = boost::math::quantile(boost::math::students_t_distribution<double>(mp.df), 1.0 - q);
      const Eigen::VectorXd& se = prediction ? out.se_pred : out.se_fit;
      out.lower = out.fit - t * se;
      out.upper = out.fit + t * se;
    }
    return out;
  }
  out.df = std::numeric_limits<double>::quiet_NaN();
  out.models = mix.models.size();
  out.omitted_mass = mix.omitted_mass;
  const auto rows = new_x.rows();
  std::vector<ModelPrediction> parts;
  std::vector<double> w;
  double total = 0.0;
  for (const auto& t : mix.models) total += t.posterior_probability;
  for (const auto& t : mix.models) {
    parts.push_back(
        model_prediction(st, n, t.model, t.shrinkage, t.r_squared, model_df(mix.plan.prior, n, t.model_size), xs));
    w.push_back(t.posterior_probability / total);
  }
  if (top > 0) {  // BAS's predict(top = k): the average over the k most probable models, renormalised
    out.fit = Eigen::VectorXd::Zero(rows);
    for (std::size_t i = 0; i < parts.size(); ++i) out.fit += w[i] * parts[i].mean;
  }
  const auto k = static_cast<Eigen::Index>(parts.size());
  out.model_fit.resize(k, rows);
  out.model_se_fit.resize(k, rows);
  out.model_se_pred.resize(k, rows);
  out.model_probability.resize(k);
  out.model_df.resize(k);
  for (Eigen::Index i = 0; i < k; ++i) {
    const ModelPrediction& m = parts[static_cast<std::size_t>(i)];
    out.model_fit.row(i) = m.mean.transpose();
    out.model_se_fit.row(i) = (m.mse * m.scale_fit.array()).sqrt().matrix().transpose();
    out.model_se_pred.row(i) = (m.mse * (1.0 + m.scale_fit.array())).sqrt().matrix().transpose();
    out.model_probability(i) = w[static_cast<std::size_t>(i)];
    out.model_df(i) = m.df;
    const core::ModelMask mask = mix.models[static_cast<std::size_t>(i)].model;
    std::vector<std::string> names;
    for (std::size_t j = 0; j < fit.predictors.size(); ++j) {
      if ((mask >> j) & 1ULL) names.push_back(fit.predictors[j]);
    }
    out.model_predictors.push_back(std::move(names));
  }
  out.se_fit = Eigen::VectorXd::Zero(rows);
  out.se_pred = Eigen::VectorXd::Zero(rows);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Eigen::ArrayXd spread = (parts[i].mean - out.fit).array().square();
    out.se_fit.array() += w[i] * (parts[i].mse * parts[i].scale_fit.array() + spread);
    out.se_pred.array() += w[i] * (parts[i].mse * (1.0 + parts[i].scale_fit.array()) + spread);
  }
  out.se_fit = out.se_fit.cwiseSqrt();
  out.se_pred = out.se_pred.cwiseSqrt();
  if (level > 0.0) {
    out.lower.resize(rows);
    out.upper.resize(rows);
    std::vector<double> m(parts.size()), s(parts.size()), df(parts.size());
    for (Eigen::Index r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < parts.size(); ++i) {
        m[i] = parts[i].mean(r);
        s[i] = std::sqrt(parts[i].mse * ((prediction ? 1.0 : 0.0) + parts[i].scale_fit(r)));
        df[i] = parts[i].df;
      }
      out.lower(r) = mixture_quantile(w, m, s, df, q);
      out.upper(r) = mixture_quantile(w, m, s, df, 1.0 - q);
    }
  }
  return out;
}

CoefficientDensity coefficient_density(const BmaFit& fit, int coefficient,
                                       const Eigen::Ref<const Eigen::VectorXd>& grid) {
  constexpr const char* fn = "coefficient_density";
  const auto p = static_cast<int>(fit.predictors.size());
  if (coefficient < -1 || coefficient >= p) {
    throw std::invalid_argument("coefficient_density: coefficient " + std::to_string(coefficient) +
                                " is not -1 (the intercept) or a predictor's index 0.." + std::to_string(p - 1));
  }
  if (coefficient == -1 && !fit.posterior.intercept) {
    throw std::invalid_argument(
        "coefficient_density: a release publishes no means, so the intercept's posterior is not located");
  }
  if (fit.posterior.noise_aware) {
    // The noise-aware posterior is a sample of (model, g, S) draws, not the t mixture of one Gram
    // matrix: a density from the mixture of G* + rI would be the plug-in posterior drawn under the
    // noise-aware summary's name (its mass, mean and SD differ from coef()).
    throw std::invalid_argument(
        "coefficient_density: the noise-aware analysis of a release is a sample of draws, not a mixture of t "
        "densities; its PIPs, means, SDs and intervals are in the fit's summary. For the densities of the "
        "paper's (plug-in) analysis of the same release, re-analyse it with uncertainty plug-in (free)");
  }
  const FitStatistics st = statistics_of(fit, fn);
  const Mixture mix = mixture_of(fit, fn);
  const double n = static_cast<double>(fit.n);
  const double sy = (*st.scale)(p);
  const double f = coefficient >= 0 ? sy / (*st.scale)(coefficient) : sy;  // data units = f × scaled units
  const double centre = coefficient >= 0 ? 0.0 : *fit.posterior.intercept;
  const double gyy = (*st.gram)(p, p);
  CoefficientDensity out;
  out.density = Eigen::VectorXd::Zero(grid.size());
  out.probability_zero = coefficient >= 0 ? 1.0 - fit.posterior.posterior_inclusion_probability(coefficient) : 0.0;
  out.omitted_mass = mix.omitted_mass;
  bool seen = false;
  for (const auto& t : mix.models) {
    if (coefficient >= 0 && !((t.model >> coefficient) & 1ULL)) continue;
    ++out.models;
    const auto post = core::model_coefficient_posterior(*st.gram, n, t.model, mix.plan.prior);
    const double nu = post.degrees_of_freedom;
    const boost::math::students_t_distribution<double> dist(nu);
    const std::vector<double> one{1.0};
    const std::vector<double>& nodes = post.shrinkage.shrinkage.empty() ? one : post.shrinkage.shrinkage;
    const std::vector<double>& weights = post.shrinkage.shrinkage.empty() ? one : post.shrinkage.probability;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const double s = nodes[i];
      const double big_s = gyy * (1.0 - s * post.r_squared);
      double loc = 0.0;
      double scale = 0.0;
      if (coefficient >= 0) {
        loc = s * post.ols(coefficient);
        scale = std::sqrt(s * big_s / nu * post.inverse_gram_diagonal(coefficient));
      } else {
        scale = std::sqrt(big_s / (nu * n));
      }
      loc = centre + f * loc;
      scale *= f;
      const double wi = t.posterior_probability * weights[i];
      if (!(scale > 0.0)) continue;
      if (wi >= 1e-12) {
        const double z = boost::math::quantile(dist, 1.0 - 1e-6);
        if (!seen || loc - z * scale < out.range_lower) out.range_lower = loc - z * scale;
        if (!seen || loc + z * scale > out.range_upper) out.range_upper = loc + z * scale;
        seen = true;
      }
      for (Eigen::Index g = 0; g < grid.size(); ++g) {
        out.density(g) += wi * boost::math::pdf(dist, (grid(g) - loc) / scale) / scale;
      }
    }
  }
  return out;
}

}  // namespace dpmu::api
