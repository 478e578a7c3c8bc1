#pragma once
/// @file streams.hpp
/// The three random streams of a cell (docs/architecture.md §3.3): pure functions of
/// (master_seed, stream key, replicate, purpose), independent of threads, order and shards.

#include <cstdint>
#include <string>

#include "dpmu/core/random.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::runtime {

/// Data stream of replicate r: keyed by the cell's data_id, so every method factor at the same
/// data factors sees the same data set (common random numbers).
inline core::RngStream data_stream(std::uint64_t master_seed, const Cell& cell, std::uint64_t replicate) {
  return core::RngStream(master_seed, cell.data_id(), replicate, core::StreamPurpose::data);
}

/// Data stream of replicate r of a generation group (Experiment::generation_key): keyed by
/// FNV-1a-64 of "generation:" + key, shared by the group's data keys.
inline core::RngStream generation_stream(std::uint64_t master_seed, const std::string& generation_key,
                                         std::uint64_t replicate) {
  return core::RngStream(master_seed, core::fnv1a_64("generation:" + generation_key), replicate,
                         core::StreamPurpose::data);
}

/// Noise (mechanism) stream of replicate r, keyed by the cell's stream_id (its cell_id unless it
/// has stream-neutral parameters, ParameterSpec::stream_neutral).
inline core::RngStream noise_stream(std::uint64_t master_seed, const Cell& cell, std::uint64_t replicate) {
  return core::RngStream(master_seed, cell.stream_id(), replicate, core::StreamPurpose::noise);
}

/// Calibration stream of a cell (used once, by Experiment::prepare): replicate 0.
inline core::RngStream calibration_stream(std::uint64_t master_seed, const Cell& cell) {
  return core::RngStream(master_seed, cell.stream_id(), 0, core::StreamPurpose::calibration);
}

}  // namespace dpmu::runtime
