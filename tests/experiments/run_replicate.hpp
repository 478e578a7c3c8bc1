#pragma once
// One replicate of one cell of an experiment, run exactly as the engine runs it
// (dpmu::runtime::run_one_replicate with the engine's streams under `master_seed`).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dpmu/runtime/experiment.hpp"
#include "dpmu/runtime/runner.hpp"
#include "dpmu/runtime/streams.hpp"

namespace dpmu_test {

/// A cell of experiment `e` with every parameter at its default, overridden (or completed, for
/// parameters without a default) by `values`; the data factors and the parameters left out of the
/// keys at their defaults are those `e` declares (as the engine builds its cells).
inline dpmu::runtime::Cell cell_with_defaults(
    const dpmu::runtime::Experiment& e, std::vector<std::pair<std::string, dpmu::runtime::ParameterValue>> values) {
  std::vector<std::string> data_factors;
  for (const auto& spec : e.parameters()) {
    if (spec.data_factor) data_factors.push_back(spec.name);
    const bool given =
        std::any_of(values.begin(), values.end(), [&spec](const auto& v) { return v.first == spec.name; });
    if (!given && spec.default_value) values.emplace_back(spec.name, *spec.default_value);
  }
  return dpmu::runtime::Cell(std::move(values), data_factors, dpmu::runtime::unkeyed_defaults(e.parameters()));
}

/// prepare() of `cell` from its calibration stream under `master_seed`.
inline std::shared_ptr<const void> prepare_cell(const dpmu::runtime::Experiment& e, const dpmu::runtime::Cell& cell,
                                                std::uint64_t master_seed) {
  auto calibration = dpmu::runtime::calibration_stream(master_seed, cell);
  dpmu::runtime::SharedCalibration shared;  // nothing shared: what one cell computes alone
  return e.prepare_erased(cell, calibration, shared);
}

/// The metrics of replicate `replicate` of `cell` (concatenated in layout order). `prepared`:
/// prepare_cell's result (computed here if null). @throws std::runtime_error "stage: message" if
/// the replicate fails.
inline std::vector<double> run_replicate(const dpmu::runtime::Experiment& e, const dpmu::runtime::Cell& cell,
                                         std::uint64_t master_seed, std::uint64_t replicate,
                                         std::shared_ptr<const void> prepared = nullptr) {
  if (!prepared) prepared = prepare_cell(e, cell, master_seed);
  const auto metrics = e.metrics(cell);
  std::size_t width = 0;
  for (const auto& m : metrics) width += m.size;
  std::vector<double> out(width, std::numeric_limits<double>::quiet_NaN());
  dpmu::runtime::CellReplicate one;
  one.cell = &cell;
  one.prepared = prepared.get();
  one.metrics = metrics;
  one.out = out;
  dpmu::runtime::run_one_replicate(e, cell.data_cell(), master_seed, replicate,
                                   std::span<dpmu::runtime::CellReplicate>(&one, 1));
  if (!one.failure_stage.empty()) throw std::runtime_error(one.failure_stage + ": " + one.failure_message);
  return out;
}

/// The components of metric `name` in `out` (a run_replicate result of `cell`).
/// @throws std::invalid_argument if the cell has no such metric.
inline std::vector<double> metric_values(const dpmu::runtime::Experiment& e, const dpmu::runtime::Cell& cell,
                                         const std::vector<double>& out, const std::string& name) {
  std::size_t offset = 0;
  for (const auto& m : e.metrics(cell)) {
    if (m.name == name) {
      return std::vector<double>(out.begin() + static_cast<std::ptrdiff_t>(offset),
                                 out.begin() + static_cast<std::ptrdiff_t>(offset + m.size));
    }
    offset += m.size;
  }
  throw std::invalid_argument("metric_values: no metric '" + name + "'");
}

}  // namespace dpmu_test
