// The shared pieces of the R and Python packages besides api::bma: the privacy fields of a fit as
// the CLI's report has them, and the nested test — the composition of library calls that `dpmu test`
// makes (engine/cli/test_command.cpp), on data in memory, with the random streams keyed as there, so
// a seeded call gives the CLI's numbers.
#include "dpmu_bindings.hpp"

#include <cmath>
#include <stdexcept>

#include "data_options.hpp"
#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/checks.hpp"
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

Json bma_privacy(const api::BmaFit& fit) {
  cli::ReleaseReport report(fit.is_private || !fit.release, "");
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
  const Json full = report.finish();
  Json out;
  out["private"] = full["private"];
  out["private_reason"] = full["private_reason"];
  out["privacy"] = full.contains("privacy") ? full["privacy"] : Json(nullptr);
  return out;
}

std::vector<core::ColumnBounds> bounds_from_pairs(const std::vector<double>& flat) {
  if (flat.empty() || flat.size() % 2 != 0) {
    throw std::invalid_argument(
        "bounds: give l, u (public bounds on the raw values of every column) or l1, u1, ..., "
        "l(p+1), u(p+1) (predictors in order, response last); " +
        std::to_string(flat.size()) + " numbers given");
  }
  std::vector<core::ColumnBounds> out;
  for (std::size_t j = 0; j < flat.size(); j += 2) out.push_back({flat[j], flat[j + 1]});
  return out;
}

namespace {

void check_data(const char* what, const Eigen::Ref<const Eigen::MatrixXd>& m) {
  if (!m.allFinite()) {
    throw std::invalid_argument(std::string("the ") + what +
                                " contain a missing or non-finite value (NA, NaN or Inf); remove those rows first");
  }
}

}  // namespace

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
