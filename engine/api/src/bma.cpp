#include "dpmu/api/bma.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "dpmu/api/bma_pipeline.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/noise_aware_sampler.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/runtime/secure_random.hpp"

namespace dpmu::api {

namespace {

std::string quoted(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& s : names) out += (out.empty() ? "'" : ", '") + s + "'";
  return out.empty() ? "(none)" : out;
}

}  // namespace

std::vector<std::string> model_names(core::ModelMask m, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (std::size_t j = 0; j < names.size(); ++j) {
    if ((m >> j) & 1U) out.push_back(names[j]);
  }
  return out;
}

NonPrivateGram non_private_gram(const Eigen::MatrixXd& raw, const std::vector<std::string>& columns) {
  NonPrivateGram out;
  const Eigen::Index d = raw.cols();
  out.scale = Eigen::VectorXd::Ones(d);
  Eigen::MatrixXd scaled = raw;
  std::vector<bool> constant(static_cast<std::size_t>(d));
  for (Eigen::Index j = 0; j < d; ++j) {
    const double m = raw.col(j).cwiseAbs().maxCoeff();
    constant[static_cast<std::size_t>(j)] = raw.col(j).maxCoeff() == raw.col(j).minCoeff();
    if (m > 0.0) {
      int e = 0;
      std::frexp(m, &e);
      out.scale(j) = std::ldexp(1.0, e);
      scaled.col(j) = scaled.col(j).unaryExpr([e](double v) { return std::ldexp(v, -e); });  // 2^-e may overflow
    }
  }
  if (constant.back()) {
    throw std::invalid_argument("the response '" + columns.back() + "' is constant (every value is " +
                                core::format_value(raw(0, d - 1)) + "): there is nothing for a model to explain");
  }
  // Each scaled column is centred first, twice (the second pass removes the rounding of the first
  // mean; the values are in [-1, 1), so the sums cannot overflow), then scaled again by a power of
  // two. The accumulator's own centring then merges block means that are all near 0: a column
  // such as x + 1e12 keeps its digits. Before, the merge of block means near 2^-1 lost them (R²
  // off by 1e-9 at n = 10^5, more with more rows).
  for (Eigen::Index j = 0; j < d; ++j) {
    if (constant[static_cast<std::size_t>(j)]) continue;
    auto c = scaled.col(j);
    for (int pass = 0; pass < 2; ++pass) c.array() -= c.mean();
    const double m = c.cwiseAbs().maxCoeff();
    if (m > 0.0) {
      int e = 0;
      std::frexp(m, &e);
      out.scale(j) = std::ldexp(out.scale(j), e);
      c = c.unaryExpr([e](double v) { return std::ldexp(v, -e); });
    }
  }
  out.gram = core::gram_matrix(scaled, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max(), true);
  for (Eigen::Index j = 0; j < d; ++j) {
    if (constant[static_cast<std::size_t>(j)]) {
      out.gram.row(j).setZero();
      out.gram.col(j).setZero();
    }
  }
  out.means = raw.colwise().mean().transpose();
  return out;
}

core::BmaResult run_search(const Eigen::MatrixXd& gram, double n, const core::CoefficientPrior& prior,
                           const core::ModelPrior& mp, const core::BmaOptions& opt, const Search& search,
                           core::McmcDiagnostics* diag) {
  if (!search.mcmc) {
    if (!search.progress) return core::bayesian_model_averaging(gram, n, prior, mp, opt);
    core::BmaOptions with_progress = opt;
    with_progress.progress = search.progress;
    return core::bayesian_model_averaging(gram, n, prior, mp, with_progress);
  }
  if (!opt.heredity_groups.empty() || !opt.heredity_parents.empty()) {
    throw std::invalid_argument(
        "force_heredity (keeping a factor's columns together, an interaction with its main effects) needs full "
        "enumeration: at most 24 predictors, more "
        "rows than predictors + 1, and no mcmc");
  }
  core::McmcOptions mo;
  mo.max_iterations = search.max_iterations;
  mo.max_models = search.max_models;
  mo.progress = search.progress;
  mo.always_included = opt.always_included;
  mo.p0 = opt.p0;
  mo.tolerance = search.tolerance;
  mo.top_models = opt.top_models;
  mo.credible_level = opt.credible_level;
  mo.interval_mass = opt.interval_mass;
  mo.interval_max_models = opt.interval_max_models;
  core::RngStream rng(search.seed, core::fnv1a_64("bma/mcmc") ^ search.stream, 0, core::StreamPurpose::noise);
  return core::bayesian_model_averaging_mcmc(gram, n, prior, mp, rng, mo, diag);
}

namespace {

/// Refuse `bytes` (× 2 at the peak) beyond this machine's physical memory (sysconf; the API builds
/// inside the R and Python packages, without the runtime library's runtime::check_fits_in_memory).
void check_memory(double bytes, const std::string& what, const std::string& advice, double factor) {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return;
  const double ram = static_cast<double>(pages) * static_cast<double>(page_size);
  if (!(factor * bytes <= ram)) {
    throw std::invalid_argument(what + " needs about " + core::format_value(std::ceil(bytes / 1e8) / 10.0) +
                                " GB in memory, but this machine has " +
                                core::format_value(std::floor(ram / 1e8) / 10.0) + " GB; " + advice);
  }
}

}  // namespace

void check_search_bounds(const Search& search, std::size_t p, const std::string& models_option,
                         const std::string& iterations_option) {
  if (!search.mcmc) return;
  if (search.max_models < 1) {
    throw std::invalid_argument(models_option + " is 0: the MCMC search must store at least one model");
  }
  const auto pp = static_cast<double>(std::max<std::size_t>(p, 1));
  const double iterations = search.max_iterations > 0
                                ? static_cast<double>(search.max_iterations)
                                : static_cast<double>(core::default_mcmc_max_iterations(static_cast<int>(p)));
  // The table, then the stopping rule's snapshots of p counts every 50·p iterations (core::McmcOptions).
  const double table = static_cast<double>(search.max_models) * core::kMcmcBytesPerStoredModel;
  const double snapshots = iterations / (50.0 * pp) * (8.0 * pp + 64.0);
  check_memory(table,
               models_option + " " + std::to_string(search.max_models) + " (the MCMC table of stored models, " +
                   core::format_value(core::kMcmcBytesPerStoredModel) + " bytes each)",
               "lower " + models_option + " (the default is 2^20, about 256 MB)", 2.0);
  check_memory(snapshots,
               iterations_option + " " + core::format_value(iterations) + " (the MCMC stopping rule keeps " +
                   std::to_string(p) + " counts every 50 p iterations)",
               "lower " + iterations_option, 2.0);
}

BmaSummary summarise(const core::BmaResult& r, const Eigen::VectorXd& scale, const std::vector<std::string>& names,
                     std::optional<double> response_mean) {
  const auto p = static_cast<Eigen::Index>(names.size());
  // slope of column j in data units = slope in scaled units × scale(y)/scale(j); the intercept × scale(y)
  const Eigen::VectorXd f = Eigen::VectorXd::Constant(p, scale(p)).cwiseQuotient(scale.head(p));
  const double fy = scale(p);
  BmaSummary s;
  s.posterior_inclusion_probability = r.posterior_inclusion_probability;
  s.prior_inclusion_probability = r.prior_inclusion_probability;
  s.posterior_mean = r.model_averaged_coefficients.cwiseProduct(f);
  s.posterior_sd = r.posterior_sd.cwiseProduct(f);
  s.posterior_sd_bas = r.posterior_sd_bas.cwiseProduct(f);
  s.intercept = response_mean;
  s.intercept_sd = r.intercept_sd * fy;
  s.intercept_sd_bas = r.intercept_sd_bas * fy;
  const core::CredibleIntervals& ci = r.credible_intervals;
  s.credible_level = ci.level;
  if (ci.level > 0.0) {
    s.lower = ci.lower.cwiseProduct(f);
    s.upper = ci.upper.cwiseProduct(f);
    if (response_mean) {
      s.intercept_lower = *response_mean + ci.intercept_lower * fy;
      s.intercept_upper = *response_mean + ci.intercept_upper * fy;
    }
    s.interval_omitted_mass = ci.omitted_mass;
    s.interval_models = ci.models;
  }
  s.highest_posterior_model = model_names(r.highest_posterior_model, names);
  s.median_probability_model = model_names(r.median_probability_model, names);
  s.best_predictive_model = model_names(r.best_predictive_model, names);
  s.highest_posterior_model_coefficients = r.highest_posterior_model_coefficients.cwiseProduct(f);
  s.median_probability_model_coefficients = r.median_probability_model_coefficients.cwiseProduct(f);
  s.best_predictive_model_coefficients = r.best_predictive_model_coefficients.cwiseProduct(f);
  s.expected_model_size = r.expected_model_size;
  for (const auto& t : r.top_models) {
    s.models.push_back({model_names(t.model, names), t.posterior_probability, t.log_posterior_probability,
                        t.log_prior_probability, t.log_marginal, t.r_squared, t.shrinkage});
  }
  s.models_evaluated = r.models_evaluated;
  s.models_rank_deficient = r.models_rank_deficient;
  s.models_exact_fit = r.models_exact_fit;
  return s;
}

BmaSummary analyse(const Eigen::MatrixXd& gram, double n, const AnalysisPlan& plan, const Eigen::VectorXd& scale,
                   const Search& search, const std::vector<std::string>& names, const std::string& response,
                   bool release, std::optional<double> response_mean) {
  core::McmcDiagnostics diag;
  core::BmaResult r;
  try {
    r = run_search(gram, n, plan.prior, plan.model_prior, plan.options, search, &diag);
  } catch (const core::ExactFitError& e) {
    throw std::domain_error(
        std::string(release ? "in the regularised released matrix G* + rI, " : "") + "the model with predictors " +
        quoted(model_names(e.model(), names)) + " fits the response '" + response +
        "' exactly (R^2 = 1). Under --prior " + core::to_string(plan.prior) +
        " an exact fit has infinite evidence, so model averaging has no answer; --prior g-prior gives it the finite "
        "limit log B = ((n-1-k)/2) log(1+g) (docs/bma.md), or drop predictors so that none fits exactly");
  }
  BmaSummary s = summarise(r, scale, names, response_mean);
  s.uncertainty = release ? "plug-in" : "exact";
  if (search.mcmc) s.mcmc = diag;
  return s;
}

void check_noise_aware_draws(std::int64_t draws, const std::string& option) {
  if (draws < 20 || draws > kMaxNoiseAwareDraws) {
    throw std::invalid_argument(option + " must be a whole number in [20, " + std::to_string(kMaxNoiseAwareDraws) +
                                "], got " + std::to_string(draws) +
                                " (more draws only lower the Monte Carlo error; 200 is the default)");
  }
}

void check_noise_aware_plan(const AnalysisPlan& plan, int p, double n, bool mcmc, const std::string& front) {
  const std::string opt = front == "cli" ? "--uncertainty" : "uncertainty";
  const std::string plug_in = front == "cli" ? "--uncertainty plug-in" : "uncertainty = 'plug-in'";
  const std::string prior = front == "cli" ? "--prior" : "prior";
  const core::PriorKind k = plan.prior.prior.kind;
  if (k != core::PriorKind::zellner_siow && k != core::PriorKind::g_prior) {
    throw std::invalid_argument(opt +
                                " noise-aware (the default for a release) integrates Zellner's g inside the "
                                "data-augmentation sampler: it needs " +
                                prior + " zellner-siow or g-prior, not " + core::to_string(plan.prior) +
                                "; or ask for the paper's analysis with " + plug_in);
  }
  if (plan.options.always_included != 0 || !plan.options.heredity_groups.empty() ||
      !plan.options.heredity_parents.empty()) {
    throw std::invalid_argument(opt +
                                " noise-aware (the default for a release) does not yet support predictors "
                                "forced into every model or kept together (always include / heredity); drop them "
                                "or use " +
                                plug_in);
  }
  if (mcmc) {
    throw std::invalid_argument(opt +
                                " noise-aware (the default for a release) searches the models inside its own "
                                "sampler: drop the MCMC search option, or use " +
                                plug_in);
  }
  if (p > kMaxNoiseAwarePredictors) {
    throw std::invalid_argument(opt + " noise-aware (the default for a release) takes at most " +
                                std::to_string(kMaxNoiseAwarePredictors) + " predictors, got " + std::to_string(p) +
                                "; use " + plug_in);
  }
  if (!(n > p + 2)) {
    throw std::invalid_argument(opt + " noise-aware (the default for a release) needs n > p + 2 rows (n = " +
                                core::format_value(n) + ", p = " + std::to_string(p) + "); use " + plug_in);
  }
}

BmaSummary noise_aware_analysis(const BmaRelease& rel, double n, const AnalysisPlan& plan, const Search& search,
                                std::int64_t draws, const std::vector<std::string>& names, const std::string& response,
                                std::vector<std::string>& messages) {
  check_noise_aware_draws(draws, "--noise-aware-draws");
  const int p = rel.settings.p;
  check_noise_aware_plan(plan, p, n, false, "cli");  // an explicit MCMC option is refused by the front ends
  const core::SspRelease release(rel.settings);
  const auto d = static_cast<Eigen::Index>(p + 1);
  Eigen::VectorXd widths(d);
  for (Eigen::Index j = 0; j < d; ++j) {
    const core::ColumnBounds& b =
        rel.settings.bounds.size() == 1 ? rel.settings.bounds[0] : rel.settings.bounds[static_cast<std::size_t>(j)];
    widths(j) = (b.upper - b.lower) / rel.column_scale(j);
  }
  const core::AugmentedModelPrior aug = core::default_augmented_prior(widths, plan.prior.prior);
  core::NoiseAwareSamplerOptions opt;
  opt.iterations = static_cast<int>(draws);  // <= kMaxNoiseAwareDraws
  opt.warmup = static_cast<int>(draws);
  opt.max_iterations = static_cast<int>(std::min<std::int64_t>(16 * draws, kMaxNoiseAwareDraws));
  opt.credible_level = plan.options.credible_level;
  opt.top_models = plan.options.top_models;
  opt.progress = search.progress;  // R/Python: interrupt checks (the release is charged already)
  core::RngStream rng(search.seed, core::fnv1a_64("bma/noise-aware"), 0, core::StreamPurpose::calibration);
  core::NoiseAwareSamplerResult r;
  try {
    r = core::noise_aware_sampler(rel.released_gram, release.mechanism(), n, aug, plan.model_prior, rng, opt);
  } catch (const core::ExactFitError& e) {
    throw std::domain_error("in a draw of the confidential Gram matrix, the model with predictors " +
                            quoted(model_names(e.model(), names)) + " fits the response '" + response +
                            "' exactly (R^2 = 1); use --uncertainty plug-in");
  }
  if (!r.converged) {  // no intervals from a chain that has not converged: it says so instead
    r.posterior.credible_intervals = core::CredibleIntervals{};
  }
  BmaSummary s = summarise(r.posterior, rel.column_scale, names, std::nullopt);
  s.uncertainty = "noise-aware";
  BmaSummary::NoiseAware na;
  na.chains = r.chains;
  na.warmup = r.warmup;
  na.draws_per_chain = r.iterations;
  na.max_draws_per_chain = opt.max_iterations;
  na.max_rhat = r.max_rhat;
  na.min_ess = r.min_ess;
  na.converged = r.converged;
  na.reason = r.reason;
  const Eigen::Index pp = static_cast<Eigen::Index>(p);
  const double fy = rel.column_scale(pp);
  na.pip_mc_se = r.pip_mc_se;
  na.mean_mc_se = r.mean_mc_se.cwiseProduct((fy / rel.column_scale.head(pp).array()).matrix());
  na.sigma2 = r.sigma2_mean * fy * fy;  // σ² is per row: the units of y²
  na.sigma2_mc_se = r.sigma2_mc_se * fy * fy;
  if (!r.converged) {
    messages.push_back("warning: --uncertainty noise-aware: the sampler has not converged (" + r.reason +
                       "); no credible intervals are reported and the probabilities and means carry the Monte "
                       "Carlo SEs shown");
  }
  s.noise_aware = na;
  return s;
}

std::vector<std::string> rank_deficient_messages(const std::vector<core::RankDeficientColumn>& deficient,
                                                 const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& c : deficient) {
    const std::string& name = names[static_cast<std::size_t>(c.column)];
    if (c.constant) {
      out.push_back("warning: predictor '" + name +
                    "' is constant; every model that contains it is rank-deficient and excluded (its inclusion "
                    "probability is 0)");
    } else {
      out.push_back("warning: predictor '" + name + "' is collinear with " +
                    quoted(model_names(c.collinear_with, names)) +
                    "; every model that contains it together with all of them is rank-deficient and excluded");
    }
  }
  return out;
}

std::vector<std::string> excluded_model_messages(const BmaSummary& r, bool release) {
  std::vector<std::string> out;
  if (r.models_rank_deficient > 0) {
    const std::string total = std::to_string(r.models_rank_deficient + r.models_evaluated);
    const std::string count = std::to_string(r.models_rank_deficient);
    if (release) {
      out.push_back("note: " + count + " of " + total +
                    " models are numerically singular in the regularised released matrix G* + rI and were excluded "
                    "(models_rank_deficient)");
    } else {
      out.push_back("warning: " + count + " of " + total +
                    " models are rank-deficient and were excluded (models_rank_deficient), as BAS does; drop the "
                    "predictors named above to average over full-rank models only");
    }
  }
  if (r.models_exact_fit > 0) {
    out.push_back("note: " + std::to_string(r.models_exact_fit) + " model(s) fit the response exactly (R^2 = 1" +
                  (release ? " in the regularised released matrix" : "") +
                  "); the g-prior's finite limit log B = ((n-1-k)/2) log(1+g) is used for them (docs/bma.md)");
  }
  return out;
}

Estimator parse_estimator(const std::string& name) {
  std::string s;
  for (char c : name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "bma") return Estimator::bma;
  if (s == "hpm") return Estimator::hpm;
  if (s == "mpm") return Estimator::mpm;
  if (s == "bpm") return Estimator::bpm;
  throw std::invalid_argument("estimator '" + name + "': use bma, hpm, mpm or bpm");
}

Eigen::VectorXd predict(const BmaFit& fit, const Eigen::Ref<const Eigen::MatrixXd>& new_x, Estimator estimator) {
  if (fit.release || !fit.posterior.intercept) {
    throw std::invalid_argument(
        "predict: a release publishes no means of the data, so predictions need a non-private fit");
  }
  const auto p = static_cast<Eigen::Index>(fit.predictors.size());
  if (new_x.cols() != p) {
    throw std::invalid_argument("predict: new data have " + std::to_string(new_x.cols()) +
                                " columns, but the fit has " + std::to_string(p) + " predictors");
  }
  const BmaSummary& s = fit.posterior;
  const Eigen::VectorXd& beta = estimator == Estimator::bma   ? s.posterior_mean
                                : estimator == Estimator::hpm ? s.highest_posterior_model_coefficients
                                : estimator == Estimator::mpm ? s.median_probability_model_coefficients
                                                              : s.best_predictive_model_coefficients;
  const Eigen::MatrixXd centred = new_x.rowwise() - fit.predictor_means.transpose();
  return (centred * beta).array() + *s.intercept;
}

}  // namespace dpmu::api
