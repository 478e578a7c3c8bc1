// The shared entry points of the R and Python packages: the composition of library calls that
// `dpmu bma` and `dpmu test` make (engine/cli/bma_command.cpp, test_command.cpp), on data in memory.
// The random streams are keyed exactly as in the CLI, so a seeded call gives the CLI's numbers.
#include "dpmu_bindings.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "data_options.hpp"
#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/information_criteria.hpp"
#include "dpmu/core/linear_model.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/secure_noise.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"
#include "dpmu/runtime/secure_random.hpp"
#include "release_report.hpp"

namespace dpmu::bindings {

namespace {

std::vector<std::string> model_names(core::ModelMask m, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (std::size_t j = 0; j < names.size(); ++j) {
    if ((m >> j) & 1U) out.push_back(names[j]);
  }
  return out;
}

Json keyed(const Eigen::VectorXd& v, const std::vector<std::string>& names) {
  Json o = Json::object();
  for (std::size_t j = 0; j < names.size(); ++j) o[names[j]] = v(static_cast<Eigen::Index>(j));
  return o;
}

void check_data(const char* what, const Eigen::Ref<const Eigen::MatrixXd>& m) {
  if (!m.allFinite()) {
    throw std::invalid_argument(std::string("the ") + what +
                                " contain a missing or non-finite value (NA, NaN or Inf); remove those rows first");
  }
}

core::BmaResult search(const Eigen::MatrixXd& gram, double n, const core::CoefficientPrior& prior,
                       const core::ModelPrior& mp, const core::BmaOptions& opt, bool mcmc, std::uint64_t seed,
                       std::optional<core::McmcDiagnostics>& diagnostics) {
  if (!mcmc) return core::bayesian_model_averaging(gram, n, prior, mp, opt);
  core::McmcOptions mo;
  mo.always_included = opt.always_included;
  mo.p0 = opt.p0;
  mo.top_models = opt.top_models;
  core::RngStream rng(seed, core::fnv1a_64("bma/mcmc"), 0, core::StreamPurpose::noise);
  core::McmcDiagnostics d;
  core::BmaResult r = core::bayesian_model_averaging_mcmc(gram, n, prior, mp, rng, mo, &d);
  diagnostics = d;
  return r;
}

Json result_json(const core::BmaResult& r, const Eigen::VectorXd& scale, const std::vector<std::string>& names,
                 const std::optional<core::McmcDiagnostics>& mcmc) {
  const Eigen::Index p = static_cast<Eigen::Index>(names.size());
  const Eigen::VectorXd means =
      r.model_averaged_coefficients.cwiseProduct(Eigen::VectorXd::Constant(p, scale(p)).cwiseQuotient(scale.head(p)));
  Json o;
  o["posterior_inclusion_probabilities"] = keyed(r.posterior_inclusion_probability, names);
  o["posterior_means"] = keyed(means, names);
  o["prior_inclusion_probabilities"] = keyed(r.prior_inclusion_probability, names);
  o["expected_model_size"] = r.expected_model_size;
  o["highest_posterior_model"] = model_names(r.highest_posterior_model, names);
  o["median_probability_model"] = model_names(r.median_probability_model, names);
  Json top = Json::array();
  for (const auto& t : r.top_models) {
    top.push_back({{"predictors", model_names(t.model, names)},
                   {"posterior_probability", t.posterior_probability},
                   {"log_posterior_probability", t.log_posterior_probability},
                   {"log_prior_probability", t.log_prior_probability},
                   {"log_marginal", t.log_marginal},
                   {"r_squared", t.r_squared},
                   {"shrinkage", t.shrinkage}});
  }
  o["top_models"] = top;
  o["models_evaluated"] = r.models_evaluated;
  o["models_rank_deficient"] = r.models_rank_deficient;
  o["models_exact_fit"] = r.models_exact_fit;
  if (mcmc) {
    o["mcmc"] = {{"iterations", mcmc->iterations},
                 {"models_visited", mcmc->models_visited},
                 {"acceptance_rate", mcmc->acceptance_rate},
                 {"converged", mcmc->converged},
                 {"max_pip_difference_between_halves", mcmc->max_pip_difference}};
  }
  return o;
}

}  // namespace

Json bma(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
         const std::vector<std::string>& predictors, const std::string& response, const BmaRequest& q) {
  constexpr const char* fn = "dpmu bma";
  const Eigen::Index n_rows = x.rows();
  const auto p = static_cast<std::size_t>(x.cols());
  if (y.size() != n_rows)
    throw std::invalid_argument("the response has a different number of rows than the predictors");
  if (predictors.size() != p) throw std::invalid_argument("one name per predictor column is needed");
  if (p == 0) throw std::invalid_argument("at least one predictor is needed");
  if (p > 63) throw std::invalid_argument("at most 63 predictors");
  check_data("predictors", x);
  check_data("response", y);
  const double n = static_cast<double>(n_rows);
  if (n <= static_cast<double>(p) + 1.0) {
    throw std::invalid_argument("need more rows than predictors + 1 (n = " + std::to_string(n_rows) + ")");
  }
  std::vector<std::string> all = predictors;
  all.push_back(response);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (all[i] == all[j]) throw std::invalid_argument("column '" + all[i] + "' is named twice");
    }
  }
  Eigen::MatrixXd raw(n_rows, static_cast<Eigen::Index>(p + 1));
  raw << x, y;

  core::BmaOptions opt;
  opt.top_models = q.top_models;
  for (const auto& name : q.always_include) {
    std::size_t j = 0;
    while (j < p && predictors[j] != name) ++j;
    if (j == p) throw std::invalid_argument("always_include: '" + name + "' is not one of the predictors");
    opt.always_included |= (1ULL << j);
  }
  if (q.top_models < 0) core::throw_domain(fn, "top_models", q.top_models, ">= 0");
  const core::CoefficientPrior prior = core::parse_coefficient_prior(q.prior, q.g, q.a);
  const core::ModelPrior mp = core::parse_model_prior(q.model_prior);
  const bool mcmc = q.mcmc || p > 24;
  const bool non_private = !q.epsilon;
  const bool secure = !q.seed && !non_private;
  runtime::SecureRng secure_rng;
  const std::uint64_t seed = q.seed ? *q.seed : secure_rng();

  cli::ReleaseReport report(secure || non_private, "SSP model averaging (Pena & Barrientos 2024, Sec. 5)");
  report.setting("response", response);
  report.setting("predictors", predictors);
  report.setting("always_include", q.always_include);
  report.setting("n", n_rows);
  report.setting("p", p);
  report.setting("prior", core::to_string(prior));
  if (prior.prior.kind == core::PriorKind::g_prior) report.setting("g", prior.prior.g.value_or(n));
  if (prior.prior.kind == core::PriorKind::hyper_g || prior.prior.kind == core::PriorKind::hyper_g_n) {
    report.setting("a", prior.prior.a);
  }
  report.setting("model_prior", core::to_string(mp));
  report.setting("centring", "sample means of the clamped data (intercept always included)");
  report.setting("top_models", q.top_models);
  report.setting("search", mcmc ? "mcmc" : "enumeration");
  report.setting("seed", q.seed ? Json(*q.seed) : Json(nullptr));

  std::optional<core::McmcDiagnostics> mcmc_diag;
  if (non_private) {
    if (q.delta || !q.bounds.empty() || q.rescale) {
      throw std::invalid_argument("delta, bounds and rescale need a private run (give epsilon)");
    }
    report.not_private("non-private: exact model averaging of the confidential data, no noise");
    const Eigen::MatrixXd gram =
        core::gram_matrix(raw, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max(), true);
    const core::BmaResult r = search(gram, n, prior, mp, opt, mcmc, seed, mcmc_diag);
    const Json j = result_json(r, Eigen::VectorXd::Ones(static_cast<Eigen::Index>(p + 1)), predictors, mcmc_diag);
    report.released("posterior_inclusion_probabilities", j["posterior_inclusion_probabilities"]);
    report.released("posterior_means", j["posterior_means"]);
    report.released("non_private", j);
    return report.finish();
  }

  core::SspReleaseSettings rs;
  rs.mechanism = core::parse_ssp_mechanism(q.mechanism);
  const std::size_t d = p + 1;
  if (q.bounds.size() != 2 && q.bounds.size() != 2 * d) {
    throw std::invalid_argument("bounds: give l,u (public bounds on the raw values of every column) or " +
                                std::to_string(2 * d) + " numbers (predictors in order, response last); " +
                                std::to_string(q.bounds.size()) + " given");
  }
  for (std::size_t j = 0; j < q.bounds.size(); j += 2) rs.bounds.push_back({q.bounds[j], q.bounds[j + 1]});
  core::check_positive_finite(fn, "epsilon", *q.epsilon);
  cli::check_epsilon_floor(fn, "epsilon", *q.epsilon);
  if (rs.mechanism == core::SspMechanismKind::laplace && q.delta && *q.delta != 0.0) {
    throw std::invalid_argument("delta applies to the wishart mechanism only (laplace is epsilon-DP)");
  }
  rs.epsilon = *q.epsilon;
  rs.delta = q.delta.value_or(0.0);
  rs.n = static_cast<std::size_t>(n_rows);
  rs.p = static_cast<int>(p);
  rs.rescale = q.rescale;
  const core::SspRelease release(rs);
  const core::SspMechanism& mech = release.mechanism();
  const Eigen::VectorXd& scale = release.column_scale();

  report.privacy(release.privacy());
  if (rs.mechanism == core::SspMechanismKind::wishart) {
    const auto w = core::ssp_wishart_parameters(mech);
    report.privacy_detail("wishart_degrees_of_freedom", w.degrees_of_freedom);
    report.privacy_detail("wishart_scale", w.scale);
  } else {
    report.privacy_detail("laplace_scale", core::ssp_laplace_scale(mech));
  }
  Json bounds = Json::object();
  for (std::size_t j = 0; j <= p; ++j) {
    const core::ColumnBounds& b = rs.bounds.size() == 1 ? rs.bounds[0] : rs.bounds[j];
    bounds[all[j]] = {b.lower, b.upper};
  }
  report.setting("bounds", bounds);
  report.setting("bounds_refer_to", "raw values: each value is clamped into its column's bounds before centring");
  report.setting("rescale", q.rescale);
  report.setting("column_scale", keyed(scale, all));

  core::RngStream noise_rng(seed, core::fnv1a_64("bma/noise"), 0, core::StreamPurpose::noise);
  core::NoiseSource noise = secure ? core::NoiseSource::secure([&secure_rng] { return secure_rng(); })
                                   : core::NoiseSource::simulation(noise_rng);
  const core::SspOutput released = release.release(raw, noise);
  const Eigen::MatrixXd& noisy = released.released_gram;
  Json g = Json::array();
  for (Eigen::Index i = 0; i < noisy.rows(); ++i) {
    Json row = Json::array();
    for (Eigen::Index j = 0; j <= i; ++j) row.push_back(noisy(i, j));
    g.push_back(row);
  }
  report.released("released_gram", g);
  report.released("released_gram_columns", all);
  if (released.diagnostics) {
    report.diagnostic("clamped_entries", released.diagnostics->clamped_entries);
    report.diagnostic("clamped_fraction",
                      static_cast<double>(released.diagnostics->clamped_entries) / (n * static_cast<double>(p + 1)));
  }
  constexpr int kRidgeDraws = 100000;  // the CLI's default --ridge-draws
  double r = 0.0;
  std::string ridge_method;
  if (mech.kind == core::SspMechanismKind::laplace) {
    core::RngStream cal(seed, core::fnv1a_64("bma/ridge"), 0, core::StreamPurpose::calibration);
    r = core::monte_carlo_regularization(mech, cal, kRidgeDraws);
    ridge_method = "monte-carlo 99th percentile of -eigmin(E), " + std::to_string(kRidgeDraws) + " draws";
  } else {
    r = core::wishart_regularization(mech);
    ridge_method = "analytic (Gaussian singular-value bound, nu = 0.01)";
  }
  const core::RegularizedGram g_r = core::regularize(noisy, r);
  const core::BmaResult res = search(g_r.matrix, n, prior, mp, opt, mcmc, seed, mcmc_diag);
  const Json nt = result_json(res, scale, predictors, mcmc_diag);
  report.released("posterior_inclusion_probabilities", nt["posterior_inclusion_probabilities"]);
  report.released("posterior_means", nt["posterior_means"]);
  report.released("non_thresholded", nt);
  Json reg;
  reg["method"] = ridge_method;
  reg["requested"] = r;
  reg["non_thresholded"] = {{"regularization", g_r.regularization}, {"fallback", g_r.fallback}};
  report.released("regularization", reg);
  return report.finish();
}

Json test(const Eigen::Ref<const Eigen::MatrixXd>& common_in, const Eigen::Ref<const Eigen::MatrixXd>& tested,
          const Eigen::Ref<const Eigen::VectorXd>& y, const std::vector<std::string>& common_names,
          const std::vector<std::string>& tested_names, const std::string& response, const TestRequest& q) {
  constexpr const char* fn = "dpmu test";
  const Eigen::Index n_rows = y.size();
  if (common_in.rows() != n_rows || tested.rows() != n_rows) {
    throw std::invalid_argument(
        "the common predictors, tested predictors and response differ in their numbers of rows");
  }
  if (tested.cols() == 0) throw std::invalid_argument("at least one tested predictor is needed");
  if (static_cast<std::size_t>(common_in.cols()) != common_names.size() ||
      static_cast<std::size_t>(tested.cols()) != tested_names.size()) {
    throw std::invalid_argument("one name per predictor column is needed");
  }
  std::vector<std::string> all = common_names;
  all.insert(all.end(), tested_names.begin(), tested_names.end());
  all.push_back(response);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (all[i] == all[j])
        throw std::invalid_argument("column '" + all[i] +
                                    "' is named twice among the response, common and tested predictors");
    }
  }
  check_data("common predictors", common_in);
  check_data("tested predictors", tested);
  check_data("response", y);
  core::Prior prior;
  prior.kind = core::parse_prior_kind(q.prior);
  prior.g = q.g;
  prior.a = q.a;
  core::check_prior(prior);
  core::check_open_interval(fn, "prior_h0", q.prior_h0, 0.0, 1.0);
  Eigen::MatrixXd common(n_rows, common_in.cols() + 1);
  common.col(0).setOnes();
  common.rightCols(common_in.cols()) = common_in;

  Json settings;
  settings["response"] = response;
  settings["common"] = common_names;
  settings["tested"] = tested_names;
  settings["prior"] = core::to_string(prior.kind);
  Json params = Json::object();
  if (prior.kind == core::PriorKind::g_prior) {
    params["g"] = prior.g ? Json(*prior.g) : Json(q.epsilon ? "b_i (subset size)" : "n");
  }
  if (prior.kind == core::PriorKind::hyper_g || prior.kind == core::PriorKind::hyper_g_n) params["a"] = prior.a;
  settings["prior_parameters"] = params;

  if (!q.epsilon) {
    std::vector<std::string> names{"(intercept)"};
    names.insert(names.end(), common_names.begin(), common_names.end());
    names.insert(names.end(), tested_names.begin(), tested_names.end());
    const core::NestedFit fit = core::fit_nested_models(common, tested, y, names);
    const double nd = static_cast<double>(fit.n);
    Json out = settings;
    if (prior.kind == core::PriorKind::g_prior) out["prior_parameters"]["g"] = prior.g.value_or(nd);
    out["private"] = false;
    out["n"] = fit.n;
    out["p"] = fit.p;
    out["p0"] = fit.p0;
    out["r_squared"] = fit.r_squared;
    out["log_one_minus_r_squared"] = fit.log_one_minus_r_squared;
    out["two_log_likelihood_ratio"] = core::two_log_likelihood_ratio(fit.log_one_minus_r_squared, nd);
    double log_stat = 0.0;
    if (core::is_bayesian(prior.kind)) {
      const auto bf = core::log_bayes_factor_and_shrinkage(prior, fit.log_one_minus_r_squared, nd,
                                                           static_cast<int>(fit.p), static_cast<int>(fit.p0));
      log_stat = bf.log_bayes_factor;
      out["statistic"] = "log_bayes_factor";
      out["log_statistic"] = log_stat;
      out["shrinkage"] = bf.shrinkage;
    } else {
      log_stat = core::log_information_criterion(prior.kind, fit.log_one_minus_r_squared, nd, static_cast<int>(fit.p));
      out["statistic"] = "log_information_criterion";
      out["log_statistic"] = log_stat;
    }
    if (!std::isfinite(log_stat)) {
      throw std::domain_error("the statistic under prior " + std::string(core::to_string(prior.kind)) +
                              " came out as " + core::format_value(log_stat) +
                              " for R^2 = " + core::format_value(fit.r_squared) + "; no answer is given");
    }
    if (prior.kind != core::PriorKind::lr) {
      out["prior_probability_h0"] = q.prior_h0;
      out["posterior_probability_h1"] = core::posterior_probability_h1(log_stat, q.prior_h0);
    }
    return out;
  }

  // A private test (paper §4).
  if (q.simulations < 100) throw std::invalid_argument("simulations must be at least 100");
  for (double a : q.alpha) core::check_open_interval(fn, "alpha", a, 0.0, 1.0);
  core::check_positive_finite(fn, "epsilon", *q.epsilon);
  cli::check_epsilon_floor(fn, "epsilon", *q.epsilon);
  core::check_half_open_interval(fn, "delta", q.delta, 0.0, 1.0);
  if (!q.groups) throw std::invalid_argument("a private test needs groups M (the number of subsets)");
  core::SubsampleAggregateSettings rs;
  rs.prior = prior;
  rs.epsilon = *q.epsilon;
  rs.delta = q.delta;
  rs.num_subsets = *q.groups;
  rs.calibration = core::parse_gaussian_calibration(q.gaussian_calibration);
  rs.n = static_cast<std::size_t>(n_rows);
  rs.p = static_cast<int>(tested.cols());
  rs.p0 = static_cast<int>(common.cols());
  const bool lr = prior.kind == core::PriorKind::lr;
  std::string limits_source;
  if (!q.censor.empty() && !q.censor_probability.empty()) {
    throw std::invalid_argument("give either censor or censor_probability, not both");
  }
  if (!q.censor.empty()) {
    if (q.censor.size() != 2) throw std::invalid_argument("censor takes two numbers L,U");
    rs.limits = {q.censor[0], q.censor[1]};
    core::check_censoring_limits("censor", rs.limits);
    limits_source = "--censor";
  } else if (!q.censor_probability.empty()) {
    if (lr) throw std::invalid_argument("censor_probability is not for the likelihood ratio (lr): give censor L,U");
    if (q.censor_probability.size() != 2) throw std::invalid_argument("censor_probability takes two numbers a,b");
    rs.limits = core::censoring_limits_from_posterior_probabilities(q.censor_probability[0], q.censor_probability[1],
                                                                    q.prior_h0);
    limits_source = "--censor-probability";
  } else {
    rs.limits = core::default_censoring_limits(prior.kind, rs.p, q.prior_h0);
    limits_source =
        lr ? "default: L = 0, U = 2 x chi-square(p) 0.95 quantile" : "default: posterior probabilities 0.01, 0.99";
  }
  const core::SubsampleAggregateRelease release(rs);
  const core::ScalarMechanism& mechanism = release.mechanism();
  const core::CensoringLimits& limits = rs.limits;
  const std::size_t n = rs.n;
  const std::size_t m = rs.num_subsets;

  cli::ReleaseReport report(!q.seed.has_value(), "DP test by subsample and aggregate (Pena & Barrientos 2024, Sec. 4)");
  for (const auto& [k, v] : settings.items()) report.setting(k, v);
  report.setting("seed", q.seed ? Json(*q.seed) : Json(nullptr));
  report.setting("n", n);
  report.setting("p", rs.p);
  report.setting("p0", rs.p0);
  report.setting("num_subsets", m);
  report.setting("subset_sizes", core::subset_sizes(n, m));
  report.setting("statistic", core::to_string(core::statistic_scale(prior.kind)));
  report.setting("censoring_limits", Json{{"lower", limits.lower}, {"upper", limits.upper}, {"source", limits_source}});
  report.setting("failed_subset_value", release.failure_value());
  report.privacy(release.privacy());
  report.privacy_detail("calibration", mechanism.calibration());
  report.privacy_detail(mechanism.kind() == core::ScalarMechanism::Kind::laplace ? "laplace_scale" : "gaussian_sigma",
                        mechanism.scale());

  const std::uint64_t key = core::fnv1a_64("dpmu test");
  runtime::SecureRng secure;
  core::RngStream noise_rng(q.seed.value_or(0), key, 0, core::StreamPurpose::noise);
  core::NoiseSource noise =
      q.seed ? core::NoiseSource::simulation(noise_rng) : core::NoiseSource::secure([&secure] { return secure(); });
  const core::SubsampleAggregateOutput rel = release.release(common, tested, y, noise);
  const std::uint64_t calibration_seed = q.seed ? *q.seed : secure();
  if (rel.grid > 0.0) report.privacy_detail("grid", rel.grid);
  if (rel.diagnostics) {
    report.diagnostic("mean_censored", rel.diagnostics->mean_censored);
    report.diagnostic("subset_statistics", rel.diagnostics->subset_statistics);
    report.diagnostic("failed_subsets", rel.diagnostics->failed_subsets);
  }
  const double t_star = rel.released_statistic;
  report.released("log_statistic", t_star);
  report.released("noisy_statistic", rel.noisy_statistic);
  if (!lr) {
    report.released(core::is_bayesian(prior.kind) ? "bayes_factor" : "information_criterion", std::exp(t_star));
    report.setting("prior_probability_h0", q.prior_h0);
    report.released("posterior_probability_h1", core::posterior_probability_h1(t_star, q.prior_h0));
  }
  Json intervals = Json::array();
  for (double a : q.alpha) {
    const core::Interval iv = core::mechanism_uncertainty_interval(rel.noisy_statistic, limits, mechanism, a);
    Json j;
    j["level"] = 1.0 - a;
    j["log_statistic"] = {iv.lower, iv.upper};
    if (!lr) {
      j[core::is_bayesian(prior.kind) ? "bayes_factor" : "information_criterion"] = {std::exp(iv.lower),
                                                                                     std::exp(iv.upper)};
      j["posterior_probability_h1"] = {core::posterior_probability_h1(iv.lower, q.prior_h0),
                                       core::posterior_probability_h1(iv.upper, q.prior_h0)};
    }
    intervals.push_back(j);
  }
  report.released("intervals", intervals);
  if (!core::is_bayesian(prior.kind)) {
    const auto sizes = core::subset_sizes(n, m);
    core::RngStream null_rng(calibration_seed, key, 0, core::StreamPurpose::calibration);
    const auto null =
        core::simulate_null_distribution(prior, sizes, rs.p, rs.p0, limits, mechanism, q.simulations, null_rng);
    Json cvs = Json::array();
    for (double a : q.alpha) {
      const auto cv = core::corrected_critical_value(null, a, limits);
      const double unc = core::uncorrected_critical_value(prior.kind, sizes, rs.p, a);
      cvs.push_back({{"significance_level", a},
                     {"corrected", cv.value},
                     {"corrected_mcse", cv.mcse},
                     {"corrected_at_upper_limit", cv.at_upper_limit},
                     {"randomization_probability", cv.randomization_probability},
                     {"rejection_probability_randomized", core::rejection_probability(cv, t_star, limits)},
                     {"uncorrected", unc},
                     {"reject_corrected", t_star > cv.value},
                     {"reject_uncorrected", t_star > unc}});
    }
    report.released("critical_values", cvs);
    report.setting("null_simulations", q.simulations);
    report.released("null_probability_at_upper", null.probability_at_upper);
  }
  return report.finish();
}

}  // namespace dpmu::bindings
