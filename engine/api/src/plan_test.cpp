// api::plan_test(): choose M and censoring limits before a private test (PB §4.5), public quantities only.
#include "dpmu/api/plan_test.hpp"

#include <stdexcept>

#include "dpmu/api/test.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/runtime/secure_random.hpp"

namespace dpmu::api {

nlohmann::ordered_json plan_test(const PlanTestRequest& o) {
  const core::Prior prior = checked_prior(o.prior, o.g, o.a);
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
  if (o.groups.empty()) throw std::invalid_argument("--groups names no number of subsets");
  const auto calibration = core::parse_gaussian_calibration(o.gaussian_calibration);
  std::vector<core::CensoringLimits> limits = o.censor;
  for (const auto& l : limits) core::check_censoring_limits("--censor", l);
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
  return out;
}

}  // namespace dpmu::api
