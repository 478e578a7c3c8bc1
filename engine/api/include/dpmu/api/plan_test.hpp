#pragma once
/// @file plan_test.hpp
/// Planning a private test before any budget is spent (Peña & Barrientos 2024, §4.5): the bias,
/// variance and MSE of the DP statistic for candidate numbers of subsets M and censoring limits,
/// under H0 or at an assumed R², simulated from public quantities only (n, p, p0, prior, ε, δ).
/// The one implementation behind `dpmu plan-test` and the R and Python plan_test().

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dpmu/core/subsample_and_aggregate.hpp"

namespace dpmu::api {

/// Settings of plan_test(). Spellings as `dpmu plan-test --help`.
struct PlanTestRequest {
  std::size_t n = 0;  ///< rows (public)
  int p = 1;          ///< tested predictors
  int p0 = 1;         ///< common columns, intercept included
  std::string prior = "g-prior";
  std::optional<double> g;
  double a = 3.0;
  double epsilon = 1.0;
  double delta = 0.0;
  std::vector<std::size_t> groups{2, 5, 10};  ///< candidate M
  std::vector<core::CensoringLimits> censor;  ///< candidate limits (empty: the §4.5 default)
  std::optional<double> r_squared;            ///< scenario (unset: H0)
  std::size_t simulations = 2000;             ///< Monte Carlo replicates per setting
  std::optional<std::uint64_t> seed;          ///< of the simulation (unset: a fresh secure seed)
  std::string gaussian_calibration = "exact";
};

/// The plan as the JSON `dpmu plan-test` prints: one row per (M, limits) with target, bias,
/// variance, MSE (and its MC standard error), released MSE and P(at U); the recommended setting
/// (smallest simulated MSE). Uses no data: not a release, charges no budget.
/// @throws std::invalid_argument / std::domain_error naming the option.
nlohmann::ordered_json plan_test(const PlanTestRequest& request);

}  // namespace dpmu::api
