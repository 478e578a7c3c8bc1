// `dpmu plan-test`: choose M and censoring limits before a private test (paper §4.5).
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "data_options.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"
#include "dpmu/runtime/secure_random.hpp"

namespace dpmu::cli {

namespace {

struct PlanOptions {
  std::size_t n = 0;
  int p = 1;
  int p0 = 1;
  std::string prior = "g-prior";
  std::optional<double> g;
  double a = 3.0;
  double epsilon = 1.0;
  double delta = 0.0;
  std::vector<std::size_t> groups{2, 5, 10};
  std::vector<std::string> censor;
  std::optional<double> r_squared;
  std::size_t simulations = 2000;
  std::optional<std::uint64_t> seed;
  std::string gaussian_calibration = "exact";
};

core::CensoringLimits parse_limits(const std::string& text) {
  const auto comma = text.find(',');
  if (comma == std::string::npos) throw std::invalid_argument("--censor '" + text + "': expected L,U");
  try {
    std::size_t used1 = 0, used2 = 0;
    const std::string a = text.substr(0, comma), b = text.substr(comma + 1);
    core::CensoringLimits lim{std::stod(a, &used1), std::stod(b, &used2)};
    if (used1 != a.size() || used2 != b.size()) throw std::invalid_argument("trailing characters");
    core::check_censoring_limits("--censor", lim);
    return lim;
  } catch (const std::domain_error&) {
    throw;
  } catch (const std::exception&) {
    throw std::invalid_argument("--censor '" + text + "': expected two numbers L,U");
  }
}

void run_plan(const PlanOptions& o) {
  core::Prior prior;
  prior.kind = core::parse_prior_kind(o.prior);
  prior.g = o.g;
  prior.a = o.a;
  core::check_prior(prior);
  if (o.p < 1) throw std::invalid_argument("--p must be at least 1");
  if (o.p0 < 1) {
    throw std::invalid_argument("--p0 is " + std::to_string(o.p0) +
                                ", but must be at least 1: p0 counts the common columns including the intercept "
                                "(--p0 1 = intercept only; dpmu test always fits one)");
  }
  if (o.n <= static_cast<std::size_t>(o.p + o.p0 + 1)) {
    throw std::invalid_argument("--n is " + std::to_string(o.n) + ", but a test of p = " + std::to_string(o.p) +
                                " predictors with p0 = " + std::to_string(o.p0) +
                                " common columns needs more than p + p0 + 1 = " + std::to_string(o.p + o.p0 + 1) +
                                " rows (and more than that in each of the M subsets)");
  }
  core::check_positive_finite("dpmu plan-test", "--epsilon", o.epsilon);
  check_epsilon_floor("dpmu plan-test", "--epsilon", o.epsilon);
  core::check_half_open_interval("dpmu plan-test", "--delta", o.delta, 0.0, 1.0);
  if (o.r_squared) core::check_half_open_interval("dpmu plan-test", "--r-squared", *o.r_squared, 0.0, 1.0);
  const auto calibration = core::parse_gaussian_calibration(o.gaussian_calibration);
  std::vector<core::CensoringLimits> limits;
  for (const auto& c : o.censor) limits.push_back(parse_limits(c));
  if (limits.empty()) limits.push_back(core::default_censoring_limits(prior.kind, o.p, 0.5));
  std::vector<core::TestPlanSetting> settings;
  for (std::size_t m : o.groups) {
    for (const auto& l : limits) settings.push_back({m, l});
  }
  const std::uint64_t seed = o.seed ? *o.seed : runtime::SecureRng{}();
  core::RngStream rng(seed, core::fnv1a_64("dpmu plan-test"), 0, core::StreamPurpose::calibration);
  const auto results = core::plan_test(prior, o.n, o.p, o.p0, o.epsilon, o.delta, calibration, settings,
                                       o.r_squared.value_or(-1.0), o.simulations, rng);
  nlohmann::ordered_json out;
  out["n"] = o.n;
  out["p"] = o.p;
  out["p0"] = o.p0;
  out["prior"] = core::to_string(prior.kind);
  out["statistic"] = core::to_string(core::statistic_scale(prior.kind));
  out["epsilon"] = o.epsilon;
  out["delta"] = o.delta;
  out["gaussian_calibration"] = o.gaussian_calibration;
  out["scenario"] = o.r_squared ? "r_squared = " + std::to_string(*o.r_squared) : std::string("null hypothesis");
  out["simulations"] = o.simulations;
  out["seed"] = seed;
  auto rows = nlohmann::ordered_json::array();
  std::size_t best = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (r.mse < results[best].mse) best = i;
    rows.push_back({{"num_subsets", r.setting.num_subsets},
                    {"censoring_limits", {r.setting.limits.lower, r.setting.limits.upper}},
                    {"target", r.target},
                    {"bias", r.bias},
                    {"variance", r.variance},
                    {"mse", r.mse},
                    {"mse_mcse", r.mse_mcse},
                    {"released_mse", r.released_mse},
                    {"probability_at_upper", r.probability_at_upper}});
  }
  out["settings"] = rows;
  out["recommended"] = {{"num_subsets", results[best].setting.num_subsets},
                        {"censoring_limits", {results[best].setting.limits.lower, results[best].setting.limits.upper}},
                        {"rule", "smallest simulated MSE of the noisy aggregate"}};
  std::cout << out.dump(2) << "\n";
}

}  // namespace

void add_plan_test_command(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan-test",
      "Before a private test: simulate the bias, variance and MSE of the DP statistic for candidate numbers of "
      "subsets M and censoring limits, under H0 or at a given R², and recommend M (paper §4.5). Uses public "
      "quantities only. Prints JSON.");
  cmd->add_option("--n", o->n, "Number of rows")->required()->check(unsigned_integer());
  cmd->add_option("--p", o->p, "Number of tested predictors")->capture_default_str();
  cmd->add_option("--p0", o->p0, "Number of common columns, intercept included")->capture_default_str();
  cmd->add_option("--prior", o->prior, "g-prior | zellner-siow | hyper-g | hyper-g-n | robust | bic | aic | lr")
      ->capture_default_str();
  cmd->add_option("--g", o->g, "Fixed g of the g-prior (default b_i)");
  cmd->add_option("--a", o->a, "Parameter of hyper-g / hyper-g-n")->capture_default_str();
  cmd->add_option("--epsilon", o->epsilon, "Privacy parameter epsilon > 0")->required();
  cmd->add_option("--delta", o->delta, "Privacy parameter delta in [0, 1)")->capture_default_str();
  cmd->add_option("--groups", o->groups, "Candidate numbers of subsets M")->delimiter(',')->capture_default_str();
  cmd->add_option("--censor", o->censor, "Candidate censoring limits L,U (repeat the flag for several)");
  cmd->add_option("--r-squared", o->r_squared, "Scenario: full-data R² (default: the null hypothesis)");
  cmd->add_option("--simulations", o->simulations, "Monte Carlo replicates per setting")
      ->capture_default_str()
      ->check(unsigned_integer());
  cmd->add_option("--seed", o->seed, "Seed of the simulation")->check(unsigned_integer());
  cmd->add_option("--gaussian-calibration", o->gaussian_calibration, "exact | paper-literal")->capture_default_str();
  cmd->callback([o] { run_plan(*o); });
}

}  // namespace dpmu::cli
