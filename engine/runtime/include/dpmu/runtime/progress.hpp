#pragma once
/// @file progress.hpp
/// Progress of a run on stderr: cells done / total, replicates per second, ETA. On a terminal
/// the line is redrawn about once a second; otherwise one line is printed about every 10 s.
/// Nothing is printed when quiet. With a WorkEstimate (the experiment's per-cell cost model) the
/// ETA and the percentage are of predicted work, not of replicates.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "dpmu/runtime/work_estimate.hpp"

namespace dpmu::runtime {

/// Reports progress from a background thread; add() is thread-safe and lock-free.
class Progress {
 public:
  /// @param replicates_total replicates to run now; @param cells_total cells of this run;
  /// @param cells_done cells already finished (resumed); @param work predicted work of the run
  /// (may be null: ETA from the replicate rate); the caller records finished work in it and
  /// keeps it alive until finish().
  Progress(std::uint64_t replicates_total, std::size_t cells_total, std::size_t cells_done, bool quiet,
           const WorkEstimate* work = nullptr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Count finished replicates and cells.
  void add(std::uint64_t replicates, std::size_t cells) {
    replicates_done_.fetch_add(replicates, std::memory_order_relaxed);
    cells_done_.fetch_add(cells, std::memory_order_relaxed);
  }

  /// Stop the reporter and print the final line (unless quiet). Idempotent.
  void finish();

 private:
  void report(bool final);
  void loop();

  std::uint64_t replicates_total_;
  std::size_t cells_total_;
  std::atomic<std::uint64_t> replicates_done_{0};
  std::atomic<std::size_t> cells_done_;
  bool quiet_;
  const WorkEstimate* work_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace dpmu::runtime
