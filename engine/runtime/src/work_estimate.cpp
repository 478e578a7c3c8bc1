#include "dpmu/runtime/work_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace dpmu::runtime {

WorkEstimate::WorkEstimate(const std::vector<double>& cell_costs, const std::vector<std::uint64_t>& cell_replicates) {
  if (cell_costs.size() != cell_replicates.size()) {
    throw std::invalid_argument("WorkEstimate: cell_costs and cell_replicates must have the same length");
  }
  double sum = 0.0;
  std::size_t valid = 0;
  for (double c : cell_costs) {
    if (std::isfinite(c) && c >= 0.0) {
      sum += c;
      ++valid;
    }
  }
  const double fallback = valid > 0 && sum > 0.0 ? sum / static_cast<double>(valid) : 1.0;
  // Scale so that the largest total fits 2^62 fixed-point units.
  double raw_total = 0.0;
  for (std::size_t i = 0; i < cell_costs.size(); ++i) {
    const double c = std::isfinite(cell_costs[i]) && cell_costs[i] >= 0.0 ? cell_costs[i] : fallback;
    raw_total += c * static_cast<double>(cell_replicates[i]);
  }
  scale_ = raw_total * 0x1.0p20 > 0x1.0p62 ? 0x1.0p62 / raw_total : 0x1.0p20;
  cost_fixed_.reserve(cell_costs.size());
  for (std::size_t i = 0; i < cell_costs.size(); ++i) {
    const double c = std::isfinite(cell_costs[i]) && cell_costs[i] >= 0.0 ? cell_costs[i] : fallback;
    const auto f = static_cast<std::uint64_t>(std::llround(c * scale_));
    cost_fixed_.push_back(f);
    total_fixed_ += f * cell_replicates[i];
  }
}

void WorkEstimate::add(std::size_t cell, std::uint64_t replicates) {
  if (cell >= cost_fixed_.size()) return;
  done_fixed_.fetch_add(cost_fixed_[cell] * replicates, std::memory_order_relaxed);
}

double WorkEstimate::fraction_done() const {
  if (total_fixed_ == 0) return 1.0;
  const double f = static_cast<double>(done_fixed_.load(std::memory_order_relaxed)) / static_cast<double>(total_fixed_);
  return f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f);
}

void WorkEstimate::add_setup_seconds(double seconds) {
  if (!(seconds > 0.0) || !std::isfinite(seconds)) return;
  setup_micro_.fetch_add(static_cast<std::uint64_t>(std::llround(seconds * 1e6)), std::memory_order_relaxed);
}

double WorkEstimate::eta_seconds(double elapsed_seconds) const {
  const auto d = done_fixed_.load(std::memory_order_relaxed);
  if (d == 0) return std::numeric_limits<double>::infinity();
  if (d >= total_fixed_) return 0.0;
  const double working = std::max(0.0, elapsed_seconds - setup_seconds());
  return working * static_cast<double>(total_fixed_ - d) / static_cast<double>(d);
}

}  // namespace dpmu::runtime
