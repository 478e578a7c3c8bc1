// `dpmu test`: non-private and differentially private tests of nested linear models.
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "audit_command.hpp"
#include "commands.hpp"
#include "data_options.hpp"
#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/g_priors.hpp"
#include "dpmu/core/information_criteria.hpp"
#include "dpmu/core/linear_model.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/secure_noise.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"
#include "dpmu/runtime/data_table.hpp"
#include "dpmu/runtime/secure_random.hpp"
#include "release_ledger.hpp"
#include "release_report.hpp"

namespace dpmu::cli {

namespace {

using Json = nlohmann::ordered_json;

struct TestOptions {
  bool non_private = false;
  std::string data;
  std::string sep = "auto";
  std::string response;
  std::vector<std::string> common;
  std::vector<std::string> tested;
  std::string prior = "g-prior";
  std::optional<double> g;
  double a = 3.0;
  double prior_h0 = 0.5;
  // differential privacy
  std::optional<double> epsilon;
  double delta = 0.0;
  std::optional<std::size_t> groups;
  std::vector<double> censor;
  std::vector<double> censor_probability;
  std::vector<double> alpha{0.05, 0.01};
  std::optional<std::uint64_t> seed;
  std::size_t simulations = 10000;
  std::string gaussian_calibration = "exact";
  LedgerOptions ledger;
};

std::vector<std::string> non_empty(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

void check_distinct_columns(const TestOptions& o) {
  std::vector<std::string> all = o.common;
  all.insert(all.end(), o.tested.begin(), o.tested.end());
  all.push_back(o.response);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (all[i] == all[j]) {
        throw std::invalid_argument("column '" + all[i] + "' is named twice among --response, --common and --tested");
      }
    }
  }
}

/// The data of a test: H0 design (intercept + common), tested block, response.
struct TestData {
  Eigen::MatrixXd common;
  Eigen::MatrixXd tested;
  Eigen::VectorXd response;
};

TestData load_test_data(const TestOptions& o) {
  std::vector<std::string> wanted = o.common;
  wanted.insert(wanted.end(), o.tested.begin(), o.tested.end());
  wanted.push_back(o.response);
  const runtime::DataTable table = read_data_file("dpmu test", o.data, wanted, o.sep);
  const auto n = static_cast<Eigen::Index>(table.rows());
  TestData d;
  d.common.resize(n, static_cast<Eigen::Index>(o.common.size() + 1));
  d.common.col(0).setOnes();
  d.common.rightCols(static_cast<Eigen::Index>(o.common.size())) = table.matrix(o.common);
  d.tested = table.matrix(o.tested);
  const auto& y = table.column(o.response);
  d.response = Eigen::Map<const Eigen::VectorXd>(y.data(), n);
  return d;
}

Json settings_json(const TestOptions& o, const core::Prior& prior, bool per_subset) {
  Json out;
  out["data"] = o.data;
  out["response"] = o.response;
  out["common"] = o.common;
  out["tested"] = o.tested;
  out["prior"] = core::to_string(prior.kind);
  Json params = Json::object();
  if (prior.kind == core::PriorKind::g_prior) {
    if (prior.g) {
      params["g"] = *prior.g;
    } else {
      params["g"] = per_subset ? Json("b_i (subset size)") : Json("n");
    }
  }
  if (prior.kind == core::PriorKind::hyper_g || prior.kind == core::PriorKind::hyper_g_n) params["a"] = prior.a;
  out["prior_parameters"] = params;
  return out;
}

void run_non_private(const TestOptions& o, const core::Prior& prior, const TestData& d) {
  std::vector<std::string> names{"(intercept)"};
  names.insert(names.end(), o.common.begin(), o.common.end());
  names.insert(names.end(), o.tested.begin(), o.tested.end());
  const core::NestedFit fit = core::fit_nested_models(d.common, d.tested, d.response, names);
  const double nd = static_cast<double>(fit.n);
  const int p = static_cast<int>(fit.p);
  const int p0 = static_cast<int>(fit.p0);
  ReleaseLedger(o.ledger, "dpmu test", o.data, core::PrivacyGuarantee{}, false);  // refuses --ledger
  Json out = settings_json(o, prior, false);
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
                            " and n = " + std::to_string(fit.n) + "; no answer is printed");
  }
  if (prior.kind != core::PriorKind::lr) {
    out["prior_probability_h0"] = o.prior_h0;
    out["posterior_probability_h1"] = core::posterior_probability_h1(log_stat, o.prior_h0);
  }
  std::cout << out.dump(2) << "\n";
}

/// Censoring limits from the options, or the paper's §4.5 defaults.
core::CensoringLimits choose_limits(const TestOptions& o, const core::Prior& prior, int p, std::string& source) {
  const bool lr = prior.kind == core::PriorKind::lr;
  if (!o.censor.empty() && !o.censor_probability.empty()) {
    throw std::invalid_argument("give either --censor or --censor-probability, not both");
  }
  if (!o.censor.empty()) {
    if (o.censor.size() != 2) throw std::invalid_argument("--censor takes two numbers L,U");
    core::CensoringLimits lim{o.censor[0], o.censor[1]};
    core::check_censoring_limits("--censor", lim);
    source = "--censor";
    return lim;
  }
  if (!o.censor_probability.empty()) {
    if (lr) {
      throw std::invalid_argument(
          "--censor-probability is for Bayes factors and information criteria; the likelihood ratio (lr) needs "
          "--censor L,U on the 2 log Λ scale (e.g. --censor 0,7)");
    }
    if (o.censor_probability.size() != 2) throw std::invalid_argument("--censor-probability takes two numbers a,b");
    source = "--censor-probability";
    return core::censoring_limits_from_posterior_probabilities(o.censor_probability[0], o.censor_probability[1],
                                                               o.prior_h0);
  }
  source = lr ? "default: L = 0, U = 2 x chi-square(p) 0.95 quantile" : "default: posterior probabilities 0.01, 0.99";
  return core::default_censoring_limits(prior.kind, p, o.prior_h0);
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

/// The public settings of a private test from the options and the data's shape (checked).
core::SubsampleAggregateSettings release_settings(const TestOptions& o, const core::Prior& prior, const TestData& d,
                                                  std::string& limits_source) {
  core::check_positive_finite("dpmu test", "--epsilon", *o.epsilon);
  check_epsilon_floor("dpmu test", "--epsilon", *o.epsilon);
  core::check_half_open_interval("dpmu test", "--delta", o.delta, 0.0, 1.0);
  if (!o.groups) throw std::invalid_argument("a private test needs --groups M (the number of subsets)");
  core::SubsampleAggregateSettings rs;
  rs.prior = prior;
  rs.epsilon = *o.epsilon;
  rs.delta = o.delta;
  rs.num_subsets = *o.groups;
  rs.calibration = core::parse_gaussian_calibration(o.gaussian_calibration);
  rs.n = static_cast<std::size_t>(d.response.size());
  rs.p = static_cast<int>(d.tested.cols());
  rs.p0 = static_cast<int>(d.common.cols());
  rs.limits = choose_limits(o, prior, rs.p, limits_source);
  return rs;
}

void run_private(const TestOptions& o, const core::Prior& prior, const TestData& d) {
  if (o.simulations < 100) throw std::invalid_argument("--simulations must be at least 100");
  for (double a : o.alpha) core::check_open_interval("dpmu test", "--alpha", a, 0.0, 1.0);
  std::string limits_source;
  const core::SubsampleAggregateSettings rs = release_settings(o, prior, d, limits_source);
  const core::SubsampleAggregateRelease release(rs);
  const core::ScalarMechanism& mechanism = release.mechanism();
  const core::CensoringLimits& limits = rs.limits;
  const std::size_t n = rs.n;
  const std::size_t m = rs.num_subsets;
  // Non-finite data must fail before any noise is drawn (a format error, not a data-dependent outcome).
  if (!d.common.allFinite() || !d.tested.allFinite() || !d.response.allFinite()) {
    throw std::invalid_argument("the data contain a non-finite value");
  }

  ReleaseLedger ledger(o.ledger, "dpmu test", o.data, release.privacy(), !o.seed.has_value(),
                       {"noisy_statistic", "and post-processing of it"});  // before any noise
  ReleaseReport report(!o.seed.has_value(), "DP test by subsample and aggregate (Pena & Barrientos 2024, Sec. 4)");
  Json settings = settings_json(o, prior, true);
  for (const auto& [k, v] : settings.items()) report.setting(k, v);
  report.setting("seed", o.seed ? Json(*o.seed) : Json(nullptr));
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

  // Streams: the partition and the noise come from the release's noise source; the null
  // simulation for critical values uses public quantities only.
  const std::uint64_t key = core::fnv1a_64("dpmu test");
  runtime::SecureRng secure;
  core::RngStream noise_rng(o.seed.value_or(0), key, 0, core::StreamPurpose::noise);
  core::NoiseSource noise =
      o.seed ? core::NoiseSource::simulation(noise_rng) : core::NoiseSource::secure([&secure] { return secure(); });
  const core::SubsampleAggregateOutput rel = release.release(d.common, d.tested, d.response, noise);
  const std::uint64_t calibration_seed = o.seed ? *o.seed : secure();
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
    report.setting("prior_probability_h0", o.prior_h0);
    report.released("posterior_probability_h1", core::posterior_probability_h1(t_star, o.prior_h0));
  }
  Json intervals = Json::array();
  for (double a : o.alpha) {
    intervals.push_back(interval_json(core::mechanism_uncertainty_interval(rel.noisy_statistic, limits, mechanism, a),
                                      1.0 - a, prior, o.prior_h0));
  }
  report.released("intervals", intervals);

  if (!core::is_bayesian(prior.kind)) {
    const auto sizes = core::subset_sizes(n, m);
    core::RngStream null_rng(calibration_seed, key, 0, core::StreamPurpose::calibration);
    const auto null =
        core::simulate_null_distribution(prior, sizes, rs.p, rs.p0, limits, mechanism, o.simulations, null_rng);
    Json cvs = Json::array();
    for (double a : o.alpha) {
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
    report.setting("null_simulations", o.simulations);
    report.released("null_probability_at_upper", null.probability_at_upper);
  }
  ledger.verify_unchanged();
  std::cout << report.finish().dump(2) << "\n";
}

core::Prior parse_checked_prior(const TestOptions& o) {
  core::Prior prior;
  prior.kind = core::parse_prior_kind(o.prior);
  prior.g = o.g;
  prior.a = o.a;
  core::check_prior(prior);
  core::check_open_interval("dpmu test", "--prior-h0", o.prior_h0, 0.0, 1.0);
  return prior;
}

void run_test(TestOptions o) {
  o.common = non_empty(o.common);
  o.tested = non_empty(o.tested);
  if (o.tested.empty()) throw std::invalid_argument("--tested needs at least one column");
  check_distinct_columns(o);
  const core::Prior prior = parse_checked_prior(o);
  if (o.non_private == o.epsilon.has_value()) {
    throw std::invalid_argument(
        "choose one: --non-private (confidential statistic) or --epsilon E --groups M (differentially private)");
  }
  ReleaseLedger::check_options(o.ledger, o.data, !o.seed && !o.non_private);
  const TestData d = load_test_data(o);
  if (o.non_private) {
    run_non_private(o, prior, d);
  } else {
    run_private(o, prior, d);
  }
}

void register_test_options(CLI::App* cmd, TestOptions& o) {
  cmd->add_flag("--non-private", o.non_private, "Compute the confidential (non-private) statistic");
  cmd->add_option("--data", o.data, "CSV file with a header row")->required()->check(CLI::ExistingFile);
  add_separator_option(cmd, o.sep);
  cmd->add_option("--response", o.response, "Response column Y")->required();
  cmd->add_option("--common", o.common, "Comma-separated common predictors (may be empty)")->delimiter(',');
  cmd->add_option("--tested", o.tested, "Comma-separated tested predictors")->required()->delimiter(',');
  cmd->add_option("--prior", o.prior, "g-prior | zellner-siow | hyper-g | hyper-g-n | robust | bic | aic | lr")
      ->capture_default_str();
  cmd->add_option("--g", o.g, "Fixed g of the g-prior (default: n, or b_i per subset)");
  cmd->add_option("--a", o.a, "Parameter a > 2 of hyper-g and hyper-g-n")->capture_default_str();
  cmd->add_option("--prior-h0", o.prior_h0, "Prior probability of H0, in (0, 1)")->capture_default_str();
  auto* dp = "Differential privacy";
  cmd->add_option("--epsilon", o.epsilon, "Privacy parameter epsilon > 0")->group(dp);
  cmd->add_option("--delta", o.delta, "Privacy parameter delta in [0, 1); 0 = Laplace, > 0 = analytic Gaussian")
      ->capture_default_str()
      ->group(dp);
  cmd->add_option("--groups", o.groups, "Number of subsets M for subsample and aggregate")
      ->group(dp)
      ->check(unsigned_integer());
  cmd->add_option("--censor", o.censor, "Censoring limits L,U on the statistic's log scale")->delimiter(',')->group(dp);
  cmd->add_option("--censor-probability", o.censor_probability,
                  "Censoring limits as posterior probabilities of H1, e.g. 0.01,0.99")
      ->delimiter(',')
      ->group(dp);
  cmd->add_option("--alpha", o.alpha, "Significance levels (intervals and critical values)")
      ->delimiter(',')
      ->capture_default_str()
      ->group(dp);
  cmd->add_option("--seed", o.seed,
                  "Seed: reproducible simulation noise; the output says \"private\": false (not a release)")
      ->check(unsigned_integer())
      ->group(dp);
  cmd->add_option("--simulations", o.simulations, "Null simulations for corrected critical values")
      ->capture_default_str()
      ->group(dp)
      ->check(unsigned_integer());
  cmd->add_option("--gaussian-calibration", o.gaussian_calibration,
                  "exact (Balle & Wang sigma for sensitivity (U-L)/M) | paper-literal (variance a(U-L)^2/(2M eps))")
      ->capture_default_str()
      ->group(dp);
  add_ledger_options(cmd, o.ledger);
}

/// `dpmu audit test`: the released noisy statistic T̃ (T* is a function of it).
AuditTarget test_audit_target(TestOptions o) {
  if (o.non_private || !o.epsilon) throw std::invalid_argument("dpmu audit test audits a private test: give --epsilon");
  if (!o.ledger.ledger.empty()) throw std::invalid_argument("dpmu audit is not a release: drop --ledger");
  o.common = non_empty(o.common);
  o.tested = non_empty(o.tested);
  if (o.tested.empty()) throw std::invalid_argument("--tested needs at least one column");
  check_distinct_columns(o);
  const core::Prior prior = parse_checked_prior(o);
  core::check_positive_finite("dpmu audit test", "--epsilon", *o.epsilon);
  check_epsilon_floor("dpmu audit test", "--epsilon", *o.epsilon);
  const TestData d = load_test_data(o);
  std::string source;
  auto release = std::make_shared<const core::SubsampleAggregateRelease>(release_settings(o, prior, d, source));
  AuditTarget t;
  t.command = "dpmu test";
  const Eigen::Index n = d.response.size(), p0 = d.common.cols(), p = d.tested.cols();
  t.data.resize(n, p0 - 1 + p + 1);
  t.data << d.common.rightCols(p0 - 1), d.tested, d.response;
  t.columns = o.common;
  t.columns.insert(t.columns.end(), o.tested.begin(), o.tested.end());
  t.columns.push_back(o.response);
  for (Eigen::Index j = 0; j < t.data.cols(); ++j)
    t.bounds.push_back({t.data.col(j).minCoeff(), t.data.col(j).maxCoeff()});
  t.bounds_source = "the data's range (a test has no declared bounds: its sensitivity does not depend on them)";
  t.guarantee = release->privacy();
  t.release = [release, p0, p](const Eigen::MatrixXd& rows, core::NoiseSource& noise) {
    Eigen::MatrixXd common(rows.rows(), p0);
    common.col(0).setOnes();
    common.rightCols(p0 - 1) = rows.leftCols(p0 - 1);
    const auto r = release->release(common, rows.middleCols(p0 - 1, p), rows.col(rows.cols() - 1), noise);
    Eigen::VectorXd v(1);
    v(0) = r.noisy_statistic;
    return v;
  };
  return t;
}

}  // namespace

void add_test_command(CLI::App& app, CLI::App& audit) {
  auto opts = std::make_shared<TestOptions>();
  CLI::App* cmd = app.add_subcommand(
      "test",
      "Test H0: Y ~ 1 + common against H1: Y ~ 1 + common + tested with a Bayes factor (mixture of g-priors, paper "
      "Eq. 3) or an information criterion (Eq. 4), non-private or differentially private by subsample and "
      "aggregate (paper Sec. 4). Prints JSON.");
  register_test_options(cmd, *opts);
  cmd->callback([opts] { run_test(*opts); });
  auto ao = std::make_shared<TestOptions>();
  auto audit_options = std::make_shared<AuditCliOptions>();
  CLI::App* acmd = audit.add_subcommand("test", "Audit the release of dpmu test (the noisy statistic)");
  register_test_options(acmd, *ao);
  add_audit_options(acmd, *audit_options);
  acmd->callback([ao, audit_options] { run_audit(test_audit_target(*ao), *audit_options); });
}

}  // namespace dpmu::cli
