#pragma once
/// @file work_estimate.hpp
/// ETA from a per-cell cost model rather than from the rate of the first cells
/// (docs/performance.md "ETA"). Each cell's replicates are given a predicted cost in arbitrary
/// units (e.g. an experiment's cost(cell) hook: rows × columns² + models × variants); the ETA is
/// (elapsed − set-up) · (predicted work left) / (predicted work done), so cells of very different size
/// (n from 5·10³ to 10⁷ in one study) no longer make the first estimate wrong by the ratio of
/// their sizes. Only ratios of costs matter, so the units need no calibration per machine.

#include <atomic>
#include <cstdint>
#include <vector>

namespace dpmu::runtime {

/// Predicted work of a run, and the ETA from the work done so far. add() is thread-safe and
/// lock-free (work is counted in fixed point, 2⁻²⁰ cost units or coarser, so the sum is exact and
/// order-independent).
class WorkEstimate {
 public:
  /// @param cell_costs predicted cost of one replicate of each cell (finite, ≥ 0; an invalid
  /// value counts as the mean of the valid ones, or 1 if none is valid);
  /// @param cell_replicates replicates of each cell still to run (same length).
  /// @throws std::invalid_argument if the lengths differ.
  WorkEstimate(const std::vector<double>& cell_costs, const std::vector<std::uint64_t>& cell_replicates);

  /// Record `replicates` finished replicates of cell `cell` (index into the constructor's vectors).
  void add(std::size_t cell, std::uint64_t replicates);

  /// Predicted work of all the run, and done so far (units of the cost model).
  double total() const { return static_cast<double>(total_fixed_) / scale_; }
  double done() const { return static_cast<double>(done_fixed_.load(std::memory_order_relaxed)) / scale_; }

  /// Fraction of the predicted work done, in [0, 1].
  double fraction_done() const;

  /// Record the run's wall-clock seconds of set-up (the cells' prepare(): ridges, thresholds,
  /// calibrations; the runner adds ∫ threads preparing / threads dt), which the cost model does not
  /// price. It is left out of the rate, so it is not extrapolated; set-up still to come (the cells
  /// of groups not yet started) is not predicted either. Thread-safe.
  void add_setup_seconds(double seconds);
  double setup_seconds() const { return setup_micro_.load(std::memory_order_relaxed) * 1e-6; }

  /// Seconds left: (elapsed − set-up) · (total − done) / done; +inf before any work is done.
  double eta_seconds(double elapsed_seconds) const;

 private:
  double scale_ = 0x1.0p20;                // fixed-point units per cost unit (smaller if the total would exceed 2⁶²)
  std::vector<std::uint64_t> cost_fixed_;  // per replicate, per cell
  std::uint64_t total_fixed_ = 0;
  std::atomic<std::uint64_t> done_fixed_{0};
  std::atomic<std::uint64_t> setup_micro_{0};  // set-up time, microseconds
};

}  // namespace dpmu::runtime
