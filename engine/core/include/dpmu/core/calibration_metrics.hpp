#pragma once
/// @file calibration_metrics.hpp
/// How well posterior uncertainty is calibrated against a known truth (docs/methods.md §5.11,
/// docs/bma.md "Calibration metrics"): coverage of an interval, the Brier score of probabilities,
/// and a binned reliability table of predicted probabilities against 0/1 outcomes. The one
/// implementation of each, used by every model-averaging study (ssp_calibration, linear_design,
/// cps_bma through experiments/calibration_metrics.hpp). Pure: no I/O, no threads, no randomness.

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpmu::core {

/// 1 if lower ≤ truth ≤ upper (closed interval), else 0; 0 when any of them is NaN.
inline double interval_covers(double lower, double upper, double truth) {
  return lower <= truth && truth <= upper ? 1.0 : 0.0;
}

/// Brier score (1/k) Σ_j (predicted_j − outcome_j)² (Brier 1950) of k probabilities against outcomes
/// in [0, 1]: 0/1 events, or the probabilities of a reference analysis (then it is the mean squared
/// distance between the two sets of probabilities). Summed in index order, then divided by k.
/// @throws std::invalid_argument for different lengths or k = 0.
inline double brier_score(const Eigen::Ref<const Eigen::VectorXd>& predicted,
                          const Eigen::Ref<const Eigen::VectorXd>& outcome) {
  if (predicted.size() != outcome.size() || predicted.size() == 0) {
    throw std::invalid_argument("brier_score: " + std::to_string(predicted.size()) + " probabilities for " +
                                std::to_string(outcome.size()) + " outcomes (need the same number, at least 1)");
  }
  double sum = 0.0;
  for (Eigen::Index j = 0; j < predicted.size(); ++j) {
    const double d = predicted(j) - outcome(j);
    sum += d * d;
  }
  return sum / static_cast<double>(predicted.size());
}

/// The bin of probability q among `bins` equal bins of [0, 1]: bin k holds [k/B, (k+1)/B), the last
/// bin also holds 1. Values a rounding error outside [0, 1] (|excess| ≤ 1e-12) go to the end bins;
/// NaN or anything further outside: −1 (not binned).
/// @throws std::invalid_argument for bins < 1.
inline int reliability_bin(double q, int bins) {
  if (bins < 1) throw std::invalid_argument("reliability_bin: bins must be >= 1, got " + std::to_string(bins));
  if (!(q >= -1e-12 && q <= 1.0 + 1e-12)) return -1;
  if (q >= 1.0) return bins - 1;
  if (q <= 0.0) return 0;
  const int k = static_cast<int>(q * bins);
  return k < bins ? k : bins - 1;
}

/// A reliability table (Murphy & Winkler 1977; the "reliability diagram"): per bin of the predicted
/// probability, the number of predictions, the number whose event happened, and the sum of the
/// predicted probabilities. Over many predictions, mean predicted = predicted_sum / count and
/// observed frequency = events / count; a calibrated predictor has the two equal up to the binomial
/// error sqrt(f (1 − f) / count) (for independent predictions).
struct ReliabilityTable {
  explicit ReliabilityTable(int bins = 10)
      : count(static_cast<std::size_t>(bins), 0.0),
        events(static_cast<std::size_t>(bins), 0.0),
        predicted_sum(static_cast<std::size_t>(bins), 0.0) {
    if (bins < 1) throw std::invalid_argument("ReliabilityTable: bins must be >= 1");
  }
  int bins() const { return static_cast<int>(count.size()); }
  /// Add one prediction q of an event that did (event = true) or did not happen. A NaN or
  /// out-of-range q is not counted (returns false).
  bool add(double q, bool event) {
    const int k = reliability_bin(q, bins());
    if (k < 0) return false;
    const auto b = static_cast<std::size_t>(k);
    count[b] += 1.0;
    events[b] += event ? 1.0 : 0.0;
    predicted_sum[b] += q;
    return true;
  }
  std::vector<double> count;          ///< predictions per bin
  std::vector<double> events;         ///< of them, events that happened
  std::vector<double> predicted_sum;  ///< Σ predicted probability per bin
};

}  // namespace dpmu::core
