#pragma once
/// @file calibration_metrics.hpp
/// The calibration metrics shared by the model-averaging studies (ssp_calibration, linear_design,
/// cps_bma; docs/bma.md "Calibration metrics", docs/methods.md §5.11): their declarations, how one
/// replicate writes them, and the analysis that yields the 50/80/95 % equal-tailed credible
/// intervals of one Gram matrix. The statistics themselves are core::interval_covers,
/// core::brier_score and core::ReliabilityTable (dpmu/core/calibration_metrics.hpp).
///
/// Names are prefix + base + suffix (e.g. "plug_in_" + "cover95", "cover95" + "_thresholded"):
///   cover50, cover80, cover95 [p]  1 if the interval of beta_j at that level holds the truth
///   width95 [p]                    upper − lower of the 95 % interval
///   brier                          core::brier_score of the PIPs against the truth
///   pip_bin_count, pip_bin_events, pip_bin_predicted [10]      reliability table of the PIPs
///   model_bin_count, model_bin_events, model_bin_predicted [10] of the 2^p model probabilities
/// A table's per-replicate counts summed over replicates (mean × n_ok of the engine's summary) are
/// the table of the whole cell.

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/calibration_metrics.hpp"
#include "dpmu/core/model_space.hpp"
#include "dpmu/core/noise_aware.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

/// Levels of the credible intervals whose coverage is measured, and their names in metric names.
inline constexpr double kCalibrationLevels[3] = {0.5, 0.8, 0.95};
inline constexpr const char* kCalibrationLevelNames[3] = {"50", "80", "95"};
/// Equal bins of [0, 1] of the reliability tables.
inline constexpr int kReliabilityBins = 10;

/// prefix + base + suffix.
struct MetricAffix {
  std::string prefix;
  std::string suffix;
  std::string name(const std::string& base) const { return prefix + base + suffix; }
};

/// The interval metrics (cover50, cover80, cover95, width95; vectors with `labels`) and brier.
/// `what`: the analysis, in the descriptions ("plug_in", "G*_r"); `truth`: what is covered ("the
/// true beta_j"); `brier_truth`: what the PIPs are scored against ("1[j in T]").
std::vector<runtime::MetricSpec> interval_calibration_metrics(const MetricAffix& affix,
                                                              const std::vector<std::string>& labels,
                                                              const std::string& what, const std::string& truth,
                                                              const std::string& brier_truth);

/// The three metrics <base>_bin_count, <base>_bin_events, <base>_bin_predicted (kReliabilityBins
/// components, labelled "[0, 0.1)", ..., "[0.9, 1]") of a reliability table; base "pip" or "model".
std::vector<runtime::MetricSpec> reliability_metrics(const MetricAffix& affix, const std::string& base,
                                                     const std::string& what);

/// Writes cover50/80/95 and width95: `intervals` at kCalibrationLevels (in that order), `truth` of
/// length p, in the same units as the intervals.
void write_interval_calibration(runtime::MetricWriter& out, const MetricAffix& affix,
                                const std::vector<core::CredibleIntervals>& intervals, const Eigen::VectorXd& truth);

/// Writes the three metrics of a reliability table.
void write_reliability(runtime::MetricWriter& out, const MetricAffix& affix, const std::string& base,
                       const core::ReliabilityTable& table);

/// The PIPs binned against the events 1[j in truth].
core::ReliabilityTable pip_reliability(const Eigen::VectorXd& pip, core::ModelMask truth);

/// The posterior model probabilities exp(log_posterior_probability(γ)) of every model γ (2^p of
/// them; BmaResult with keep_all_models) binned against the event γ = truth.
core::ReliabilityTable model_reliability(const Eigen::VectorXd& log_posterior_probability, core::ModelMask truth);

/// The indicators 1[j in truth] of the p predictors.
Eigen::VectorXd inclusion_indicators(core::ModelMask truth, int p);

/// The model averaging of one Gram matrix with its equal-tailed intervals at kCalibrationLevels in
/// extra_intervals: core::mix_bma_draws of {gram} with the interval options of the default analysis
/// (draw_interval_mass/max_models = options.bma.interval_mass/max_models; mix_bma_draws of one
/// matrix is bayesian_model_averaging; its credible_level is ignored). Deterministic.
core::NoiseAwareResult averaging_with_intervals(const Eigen::MatrixXd& gram, double n,
                                                const core::CoefficientPrior& prior,
                                                const core::ModelPrior& model_prior, const core::BmaOptions& bma);

/// `intervals` with every slope's ends multiplied by factor(j) > 0 (a change of units).
std::vector<core::CredibleIntervals> rescale_intervals(std::vector<core::CredibleIntervals> intervals,
                                                       const Eigen::VectorXd& factor);

}  // namespace dpmu::experiments
