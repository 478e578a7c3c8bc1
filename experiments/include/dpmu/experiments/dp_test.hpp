#pragma once
/// @file dp_test.hpp
/// The pieces shared by the experiments that run a differentially private test by subsample and
/// aggregate (Peña & Barrientos 2024, JMLR 25, §4; docs/methods.md §4): `hsb_posterior`,
/// `hsb_likelihood_ratio`, `type1_calibration` (hypothesis_tests.cpp) and `linear_design`
/// (linear_design.cpp). They share the parameters, the per-cell set-up (release layer, corrected
/// critical values simulated in prepare(), paper §4.3), the metric layout and the release of one
/// replicate's subset statistics.

#include <Eigen/Dense>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dpmu/core/g_priors.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

/// Significance levels of the reject_* metrics (their components, in this order).
inline constexpr double kDpTestLevels[2] = {0.05, 0.01};

/// What prepare() computes once per cell of a DP-test experiment.
struct DpTestSetup {
  core::Prior prior;
  core::CensoringLimits limits{0, 1};
  std::optional<core::SubsampleAggregateRelease> release;  ///< the release layer (paper §4)
  const core::ScalarMechanism& mechanism() const { return release->mechanism(); }
  std::vector<std::size_t> sizes;
  std::vector<double> corrected, corrected_mcse, uncorrected;  // per level
  std::vector<core::CriticalValue> critical_values;            // per level (lr, bic, aic)
  double null_probability_at_upper = std::nan("");
  // real data only
  Eigen::MatrixXd common, tested;
  Eigen::VectorXd response;
  double non_private_log_statistic = std::nan("");
  double non_private_posterior = std::nan("");
};

/// The parameters of a DP test (the statistic named `prior_key`, prior_h0, epsilon, delta,
/// num_subsets, censoring, Gaussian calibration, null simulations), with the given defaults.
std::vector<runtime::ParameterSpec> dp_test_parameters(const std::string& default_prior,
                                                       const std::string& default_scale, double default_lower,
                                                       double default_upper, const std::string& prior_key = "prior");

/// The censoring limits [L, U] of a cell on the statistic's log scale (probability-scale limits
/// converted with prior_h0). @throws std::invalid_argument("censoring_scale: ..." or
/// "censor_lower: ...") for limits that are not ordered or not probabilities.
core::CensoringLimits dp_test_limits(const runtime::Cell& cell, const std::string& prior_key = "prior");

/// Fill `s` for a cell with n rows, p tested and p0 common columns (intercept included): release
/// layer, subset sizes and, for lr/bic/aic, corrected critical values from `calibration`.
/// @throws as core::check_num_subsets and dp_test_limits.
void prepare_dp_test(DpTestSetup& s, const runtime::Cell& cell, std::size_t n, int p, int p0,
                     core::RngStream& calibration, const std::string& prior_key = "prior");

/// The metric layout of a DP test (log_statistic, noisy_statistic, posterior_probability_h1,
/// reject_corrected, reject_uncorrected, reject_corrected_randomized, censored_average,
/// noise_interval_covers). censored_average = (1/M) Σ T_i^c is confidential: the experiments
/// write it from the release's simulation diagnostics, for the coverage of the paper §4.2 interval.
std::vector<runtime::MetricSpec> dp_test_metrics();

/// The calibration outputs of a DP-test cell (critical values, censoring limits, noise sd, the
/// half-widths η_{1−α/2} of the paper §4.2 interval at α = 0.05, 0.01, ...).
std::vector<std::pair<std::string, std::vector<double>>> dp_test_calibration_outputs(const DpTestSetup& s);

/// Release the subset statistics `t` of one replicate (noise from `noise`) and write the
/// dp_test_metrics(); reads prior_h0 from `cell`. Draws from `noise` exactly as before the
/// censored_average and noise_interval_covers metrics existed (they use no draw).
void write_dp_test_release(const DpTestSetup& s, const runtime::Cell& cell, const std::vector<double>& t,
                           core::RngStream& noise, runtime::MetricWriter& out);

}  // namespace dpmu::experiments
