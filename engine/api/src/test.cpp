// api::test(): the nested test, non-private or by subsample and aggregate (PB §3–4), for every front end.
#include "dpmu/api/test.hpp"

#include <cmath>
#include <stdexcept>

#include "dpmu/api/release_noise.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/information_criteria.hpp"
#include "dpmu/core/linear_model.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/secure_noise.hpp"
#include "dpmu/runtime/secure_random.hpp"

namespace dpmu::api {

namespace {

using Json = nlohmann::ordered_json;

Json settings_json(const TestRequest& q, const core::Prior& prior, bool per_subset, const std::string& response,
                   const std::vector<std::string>& common, const std::vector<std::string>& tested) {
  Json out;
  if (!q.ledger.data_label.empty()) out["data"] = q.ledger.data_label;
  out["response"] = response;
  out["common"] = common;
  out["tested"] = tested;
  out["prior"] = core::to_string(prior.kind);
  Json params = Json::object();
  if (prior.kind == core::PriorKind::g_prior) {
    params["g"] = prior.g ? Json(*prior.g) : Json(per_subset ? "b_i (subset size)" : "n");
  }
  if (prior.kind == core::PriorKind::hyper_g || prior.kind == core::PriorKind::hyper_g_n) params["a"] = prior.a;
  out["prior_parameters"] = params;
  return out;
}

Json interval_json(const core::Interval& iv, double level, const core::Prior& prior, double prior_h0) {
  Json j;
  j["level"] = level;
  j["log_statistic"] = {iv.lower, iv.upper};
  if (prior.kind != core::PriorKind::lr) {
    const char* name = core::is_bayesian(prior.kind) ? "bayes_factor" : "information_criterion";
    j[name] = {std::exp(iv.lower), std::exp(iv.upper)};
    j["posterior_probability_h1"] = {core::posterior_probability_h1(iv.lower, prior_h0),
                                     core::posterior_probability_h1(iv.upper, prior_h0)};
  }
  return j;
}

Json non_private(const TestRequest& q, const core::Prior& prior, const Eigen::MatrixXd& common,
                 const Eigen::Ref<const Eigen::MatrixXd>& tested, const Eigen::Ref<const Eigen::VectorXd>& y, Json out,
                 const std::vector<std::string>& names) {
  if (!common.allFinite() || !tested.allFinite() || !y.allFinite()) {
    throw std::invalid_argument("the data contain a missing or non-finite value (NA, NaN or Inf); remove those rows");
  }
  const core::NestedFit fit = core::fit_nested_models(common, tested, y, names);
  const double nd = static_cast<double>(fit.n);
  const int p = static_cast<int>(fit.p);
  const int p0 = static_cast<int>(fit.p0);
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
    const auto bf = core::log_bayes_factor_and_shrinkage(prior, fit.log_one_minus_r_squared, nd, p, p0);
    log_stat = bf.log_bayes_factor;
    out["statistic"] = "log_bayes_factor";
    out["log_statistic"] = log_stat;
    out["shrinkage"] = bf.shrinkage;
  } else {
    log_stat = core::log_information_criterion(prior.kind, fit.log_one_minus_r_squared, nd, p);
    out["statistic"] = "log_information_criterion";
    out["log_statistic"] = log_stat;
  }
  // Never a NaN or infinite statistic next to a definite probability.
  if (!std::isfinite(log_stat)) {
    throw std::domain_error("the " + std::string(core::is_bayesian(prior.kind) ? "log Bayes factor" : "statistic") +
                            " under --prior " + std::string(core::to_string(prior.kind)) + " came out as " +
                            core::format_value(log_stat) + " for R^2 = " + core::format_value(fit.r_squared) +
                            " and n = " + std::to_string(fit.n) + "; no answer is given");
  }
  if (prior.kind != core::PriorKind::lr) {
    out["prior_probability_h0"] = q.prior_h0;
    out["posterior_probability_h1"] = core::posterior_probability_h1(log_stat, q.prior_h0);
  }
  return out;
}

/// Censoring limits from the options, or the paper's §4.5 defaults.
core::CensoringLimits choose_limits(const TestRequest& q, const core::Prior& prior, int p, std::string& source) {
  const bool lr = prior.kind == core::PriorKind::lr;
  if (!q.censor.empty() && !q.censor_probability.empty()) {
    throw std::invalid_argument("give either --censor or --censor-probability, not both");
  }
  if (!q.censor.empty()) {
    if (q.censor.size() != 2) throw std::invalid_argument("--censor takes two numbers L,U");
    core::CensoringLimits lim{q.censor[0], q.censor[1]};
    core::check_censoring_limits("--censor", lim);
    source = "--censor";
    return lim;
  }
  if (!q.censor_probability.empty()) {
    if (lr) {
      throw std::invalid_argument(
          "--censor-probability is for Bayes factors and information criteria; the likelihood ratio (lr) needs "
          "--censor L,U on the 2 log Λ scale (e.g. --censor 0,7)");
    }
    if (q.censor_probability.size() != 2) throw std::invalid_argument("--censor-probability takes two numbers a,b");
    source = "--censor-probability";
    return core::censoring_limits_from_posterior_probabilities(q.censor_probability[0], q.censor_probability[1],
                                                               q.prior_h0);
  }
  source = lr ? "default: L = 0, U = 2 x chi-square(p) 0.95 quantile" : "default: posterior probabilities 0.01, 0.99";
  return core::default_censoring_limits(prior.kind, p, q.prior_h0);
}

}  // namespace

void check_test_method_options(const TestRequest& q) {
  const bool pb = q.method == "subsample-aggregate" || q.method == "pb";
  if (!pb && q.method != "test-of-tests" && q.method != "dp-f") {
    throw std::invalid_argument("--method '" + q.method + "': choose subsample-aggregate, test-of-tests or dp-f");
  }
  if (!pb && !q.epsilon) {
    throw std::invalid_argument("--method " + q.method + " is a private test: give --epsilon (and not --non-private)");
  }
  if (q.method != "dp-f" && !q.bounds.empty()) throw std::invalid_argument("--bounds is an option of --method dp-f");
  if (q.method != "test-of-tests" && q.alpha0) {
    throw std::invalid_argument("--alpha0 is an option of --method test-of-tests");
  }
}

void check_epsilon_floor(const char* command, const char* option, double epsilon) {
  if (!(std::isfinite(epsilon) && epsilon >= kMinimumEpsilon)) {
    core::throw_domain(command, option, epsilon,
                       "at least 1e-12 (a smaller epsilon adds noise more than 10^12 times the sensitivity, "
                       "so no statistic survives, and is beyond what the exact noise samplers can draw)");
  }
}

core::Prior checked_prior(const std::string& kind, std::optional<double> g, double a) {
  core::Prior prior;
  prior.kind = core::parse_prior_kind(kind);
  prior.g = g;
  prior.a = a;
  core::check_prior(prior);
  return prior;
}

core::Prior test_prior(const TestRequest& q) {
  const core::Prior prior = checked_prior(q.prior, q.g, q.a);
  core::check_open_interval("dpmu test", "--prior-h0", q.prior_h0, 0.0, 1.0);
  return prior;
}

core::SubsampleAggregateSettings test_release_settings(const TestRequest& q, std::size_t n, int p, int p0,
                                                       std::string& limits_source) {
  if (!q.epsilon) throw std::invalid_argument("a private test needs --epsilon");
  const core::Prior prior = test_prior(q);
  core::check_positive_finite("dpmu test", "--epsilon", *q.epsilon);
  check_epsilon_floor("dpmu test", "--epsilon", *q.epsilon);
  core::check_half_open_interval("dpmu test", "--delta", q.delta, 0.0, 1.0);
  if (!q.groups) throw std::invalid_argument("a private test needs --groups M (the number of subsets; groups =)");
  core::SubsampleAggregateSettings rs;
  rs.prior = prior;
  rs.epsilon = *q.epsilon;
  rs.delta = q.delta;
  rs.num_subsets = *q.groups;
  rs.calibration = core::parse_gaussian_calibration(q.gaussian_calibration);
  rs.n = n;
  rs.p = p;
  rs.p0 = p0;
  rs.limits = choose_limits(q, prior, rs.p, limits_source);
  // The statistic's l1-sensitivity is (U - L)/M (PB §4.1) and the Laplace scale (U - L)/(M ε):
  // both must be finite and non-zero in a double.
  const double width = rs.limits.upper - rs.limits.lower;
  const double scale = width / (static_cast<double>(rs.num_subsets) * rs.epsilon);
  if (!(std::isfinite(scale) && scale > 0.0 && std::isfinite(width))) {
    throw std::invalid_argument(
        limits_source + " " + core::format_value(rs.limits.lower) + "," + core::format_value(rs.limits.upper) +
        ": the width U - L = " + core::format_value(width) +
        " gives a sensitivity (U - L)/M or a noise scale (U - L)/(M epsilon) = " + core::format_value(scale) +
        " outside the range of a double; choose limits on the statistic's log scale (e.g. "
        "--censor 0,7 or --censor-probability 0.01,0.99)");
  }
  return rs;
}

std::shared_ptr<const core::SubsampleAggregateRelease> make_test_release(const TestRequest& q, std::size_t n, int p,
                                                                         int p0) {
  std::string source;
  return std::make_shared<const core::SubsampleAggregateRelease>(test_release_settings(q, n, p, p0, source));
}

Json test(const Eigen::Ref<const Eigen::MatrixXd>& common_in, const Eigen::Ref<const Eigen::MatrixXd>& tested,
          const Eigen::Ref<const Eigen::VectorXd>& y, const std::vector<std::string>& common_names,
          const std::vector<std::string>& tested_names, const std::string& response, const TestRequest& q,
          std::string_view data_bytes) {
  const Eigen::Index n_rows = y.size();
  if (common_in.rows() != n_rows || tested.rows() != n_rows) {
    throw std::invalid_argument(
        "the common predictors, tested predictors and response differ in their numbers of rows");
  }
  if (tested.cols() == 0) throw std::invalid_argument("--tested needs at least one column");
  if (static_cast<std::size_t>(common_in.cols()) != common_names.size() ||
      static_cast<std::size_t>(tested.cols()) != tested_names.size()) {
    throw std::invalid_argument("one name per predictor column is needed");
  }
  std::vector<std::string> all = common_names;
  all.insert(all.end(), tested_names.begin(), tested_names.end());
  all.push_back(response);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (all[i] == all[j]) {
        throw std::invalid_argument("column '" + all[i] + "' is named twice among the response, common and tested");
      }
    }
  }
  const core::Prior prior = test_prior(q);
  const bool secure = q.epsilon && !q.seed;
  check_ledger_options(q.ledger, secure);
  Eigen::MatrixXd common(n_rows, common_in.cols() + 1);
  common.col(0).setOnes();
  common.rightCols(common_in.cols()) = common_in;

  check_test_method_options(q);
  const bool pb = q.method == "subsample-aggregate" || q.method == "pb";
  if (!pb) {
    Eigen::MatrixXd analysed(n_rows, common_in.cols() + tested.cols() + 1);
    analysed << common_in, tested, y;
    if (q.method == "test-of-tests") {
      return test_of_tests(common, tested, y, analysed, all, common_names, tested_names, response, q, data_bytes);
    }
    return dp_f_test(analysed, analysed, all, common_names, tested_names, response, q, data_bytes);
  }

  if (!q.epsilon) {
    std::vector<std::string> names{"(intercept)"};
    names.insert(names.end(), common_names.begin(), common_names.end());
    names.insert(names.end(), tested_names.begin(), tested_names.end());
    return non_private(q, prior, common, tested, y,
                       settings_json(q, prior, false, response, common_names, tested_names), names);
  }

  // A private test (paper §4). Every check runs before the ledger is charged and before any noise.
  // The null simulation keeps one statistic per draw: the same range as R's and Python's
  // `simulations` (before, 10^11 ended in "out of memory" without naming the option).
  if (q.simulations < 100 || q.simulations > kMaxNullSimulations) {
    throw std::invalid_argument("--simulations: " + std::to_string(q.simulations) +
                                " is out of range; give a whole number from 100 to 100000000 (10^8)");
  }
  for (double a : q.alpha) core::check_open_interval("dpmu test", "--alpha", a, 0.0, 1.0);
  std::string limits_source;
  const core::SubsampleAggregateSettings rs =
      test_release_settings(q, static_cast<std::size_t>(n_rows), static_cast<int>(tested.cols()),
                            static_cast<int>(common.cols()), limits_source);
  const core::SubsampleAggregateRelease release(rs);
  const core::ScalarMechanism& mechanism = release.mechanism();
  const core::CensoringLimits& limits = rs.limits;
  const std::size_t n = rs.n;
  const std::size_t m = rs.num_subsets;

  ReleaseReport report(!q.seed.has_value(), "DP test by subsample and aggregate (Pena & Barrientos 2024, Sec. 4)");
  const Json settings = settings_json(q, prior, true, response, common_names, tested_names);
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

  // The budget is checked now, before any work; the charge is made when the release is computed.
  ReleaseCharge charge(q.ledger, q.command, release.privacy(),
                       Json::array({"noisy_statistic", "and post-processing of it"}));

  // Streams: the partition and the noise come from the release's noise source; the null
  // simulation for critical values uses public quantities only.
  const std::uint64_t key = core::fnv1a_64("dpmu test");
  ReleaseNoise r(q.seed, key);
  // The bytes analysed, for the ledger's fingerprint (before the noise: nothing is computed between
  // the draw and the charge).
  std::string own_bytes;
  if (data_bytes.empty() && !q.ledger.path.empty()) {
    Eigen::MatrixXd cols(n_rows, common_in.cols() + tested.cols() + 1);
    cols << common_in, tested, y;
    own_bytes = matrix_bytes(cols, all);
    data_bytes = own_bytes;
  }
  // Charged as soon as the noise is drawn, before anything computed from it exists (docs/privacy.md
  // "Charge first, then speak"): the null simulation below can be interrupted only after the charge.
  const core::SubsampleAggregateOutput rel =
      charge.draw_and_commit([&] { return release.release(common, tested, y, r.noise); }, data_bytes);
  if (const auto& c = charge.charge()) report.setting("ledger", to_json(*c));
  const std::uint64_t calibration_seed = q.seed ? *q.seed : r.secure_rng();
  if (rel.grid > 0.0) report.privacy_detail("grid", rel.grid);
  if (rel.diagnostics) {
    report.diagnostic("mean_censored", rel.diagnostics->mean_censored);
    report.diagnostic("subset_statistics", rel.diagnostics->subset_statistics);
    report.diagnostic("failed_subsets", rel.diagnostics->failed_subsets);
  }
  const double t_star = rel.released_statistic;
  report.released("log_statistic", t_star);
  report.released("noisy_statistic", rel.noisy_statistic);
  if (prior.kind != core::PriorKind::lr) {
    report.released(core::is_bayesian(prior.kind) ? "bayes_factor" : "information_criterion", std::exp(t_star));
    report.setting("prior_probability_h0", q.prior_h0);
    report.released("posterior_probability_h1", core::posterior_probability_h1(t_star, q.prior_h0));
  }
  Json intervals = Json::array();
  for (double a : q.alpha) {
    intervals.push_back(interval_json(core::mechanism_uncertainty_interval(rel.noisy_statistic, limits, mechanism, a),
                                      1.0 - a, prior, q.prior_h0));
  }
  report.released("intervals", intervals);

  if (!core::is_bayesian(prior.kind)) {
    const auto sizes = core::subset_sizes(n, m);
    core::RngStream null_rng(calibration_seed, key, 0, core::StreamPurpose::calibration);
    const auto null = core::simulate_null_distribution(prior, sizes, rs.p, rs.p0, limits, mechanism, q.simulations,
                                                       null_rng, q.progress);
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

}  // namespace dpmu::api
