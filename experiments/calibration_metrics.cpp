/// @file calibration_metrics.cpp
/// The calibration metrics shared by the model-averaging studies (calibration_metrics.hpp).

#include "dpmu/experiments/calibration_metrics.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dpmu::experiments {

namespace {

std::string bin_edge(int k) {
  std::ostringstream s;
  s << static_cast<double>(k) / kReliabilityBins;
  return s.str();
}

std::vector<std::string> bin_labels() {
  std::vector<std::string> out;
  for (int k = 0; k < kReliabilityBins; ++k) {
    out.push_back("[" + bin_edge(k) + ", " + bin_edge(k + 1) + (k + 1 == kReliabilityBins ? "]" : ")"));
  }
  return out;
}

}  // namespace

std::vector<runtime::MetricSpec> interval_calibration_metrics(const MetricAffix& affix,
                                                              const std::vector<std::string>& labels,
                                                              const std::string& what, const std::string& truth,
                                                              const std::string& brier_truth) {
  std::vector<runtime::MetricSpec> out;
  const std::size_t p = labels.size();
  for (int l = 0; l < 3; ++l) {
    out.push_back({.name = affix.name(std::string("cover") + kCalibrationLevelNames[l]),
                   .size = p,
                   .is_vector = true,
                   .description = "1 if the equal-tailed " + std::string(kCalibrationLevelNames[l]) +
                                  "% interval of beta_j (" + what + ") contains " + truth,
                   .component_labels = labels});
  }
  out.push_back({.name = affix.name("width95"),
                 .size = p,
                 .is_vector = true,
                 .description = "width of the 95% interval of beta_j (" + what + ")",
                 .component_labels = labels});
  out.push_back(
      {.name = affix.name("brier"), .description = "mean over j of (PIP_j - " + brier_truth + ")^2 (" + what + ")"});
  return out;
}

std::vector<runtime::MetricSpec> reliability_metrics(const MetricAffix& affix, const std::string& base,
                                                     const std::string& what) {
  const std::vector<std::string> labels = bin_labels();
  const auto k = static_cast<std::size_t>(kReliabilityBins);
  const std::string of = base == "pip" ? "PIPs" : "posterior model probabilities";
  return {
      {.name = affix.name(base + "_bin_count"),
       .size = k,
       .is_vector = true,
       .description = "reliability table: " + of + " (" + what + ") in each bin of [0, 1]",
       .component_labels = labels},
      {.name = affix.name(base + "_bin_events"),
       .size = k,
       .is_vector = true,
       .description = "reliability table: of them, " +
                      std::string(base == "pip" ? "predictors in" : "models equal to") + " the true model (" + what +
                      ")",
       .component_labels = labels},
      {.name = affix.name(base + "_bin_predicted"),
       .size = k,
       .is_vector = true,
       .description = "reliability table: sum of the " + of + " (" + what + ") in each bin",
       .component_labels = labels},
  };
}

void write_interval_calibration(runtime::MetricWriter& out, const MetricAffix& affix,
                                const std::vector<core::CredibleIntervals>& intervals, const Eigen::VectorXd& truth) {
  if (intervals.size() != 3) throw std::logic_error("write_interval_calibration: need the intervals at 3 levels");
  for (int l = 0; l < 3; ++l) {
    const core::CredibleIntervals& ci = intervals[static_cast<std::size_t>(l)];
    const std::string cover = affix.name(std::string("cover") + kCalibrationLevelNames[l]);
    for (Eigen::Index j = 0; j < truth.size(); ++j) {
      out.set(cover, static_cast<std::size_t>(j), core::interval_covers(ci.lower(j), ci.upper(j), truth(j)));
      if (l == 2) out.set(affix.name("width95"), static_cast<std::size_t>(j), ci.upper(j) - ci.lower(j));
    }
  }
}

void write_reliability(runtime::MetricWriter& out, const MetricAffix& affix, const std::string& base,
                       const core::ReliabilityTable& table) {
  out.set(affix.name(base + "_bin_count"), table.count);
  out.set(affix.name(base + "_bin_events"), table.events);
  out.set(affix.name(base + "_bin_predicted"), table.predicted_sum);
}

core::ReliabilityTable pip_reliability(const Eigen::VectorXd& pip, core::ModelMask truth) {
  core::ReliabilityTable t(kReliabilityBins);
  for (Eigen::Index j = 0; j < pip.size(); ++j) t.add(pip(j), ((truth >> j) & 1U) != 0);
  return t;
}

core::ReliabilityTable model_reliability(const Eigen::VectorXd& log_posterior_probability, core::ModelMask truth) {
  core::ReliabilityTable t(kReliabilityBins);
  for (Eigen::Index m = 0; m < log_posterior_probability.size(); ++m) {
    t.add(std::exp(log_posterior_probability(m)), static_cast<core::ModelMask>(m) == truth);
  }
  return t;
}

Eigen::VectorXd inclusion_indicators(core::ModelMask truth, int p) {
  Eigen::VectorXd out(p);
  for (int j = 0; j < p; ++j) out(j) = ((truth >> j) & 1U) != 0 ? 1.0 : 0.0;
  return out;
}

core::NoiseAwareResult averaging_with_intervals(const Eigen::MatrixXd& gram, double n,
                                                const core::CoefficientPrior& prior,
                                                const core::ModelPrior& model_prior, const core::BmaOptions& bma) {
  core::NoiseAwareOptions options;
  options.bma = bma;
  options.bma.credible_level = 0.0;
  options.extra_levels = {kCalibrationLevels[0], kCalibrationLevels[1], kCalibrationLevels[2]};
  options.draw_interval_mass = options.bma.interval_mass;
  options.draw_interval_max_models = options.bma.interval_max_models;
  core::NoiseAwareResult r;
  r.posterior = core::mix_bma_draws({gram}, n, prior, model_prior, options, &r);
  return r;
}

std::vector<core::CredibleIntervals> rescale_intervals(std::vector<core::CredibleIntervals> intervals,
                                                       const Eigen::VectorXd& factor) {
  for (auto& ci : intervals) {
    ci.lower = ci.lower.cwiseProduct(factor);
    ci.upper = ci.upper.cwiseProduct(factor);
  }
  return intervals;
}

}  // namespace dpmu::experiments
