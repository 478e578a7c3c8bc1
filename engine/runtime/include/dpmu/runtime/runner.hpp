#pragma once
/// @file runner.hpp
/// The Monte Carlo runner: (cell, replicate-block) tasks on oneTBB, checkpointed to a journal,
/// written to HDF5; plus merging shards and comparing results files.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/results.hpp"

namespace dpmu::runtime {

/// `--shard i/N`: this process runs the tasks whose global index t (cell-major, then block)
/// satisfies t mod N == i.
struct Shard {
  std::int64_t index = 0;
  std::int64_t count = 1;
};

/// Parse "i/N" with 0 <= i < N. @throws std::invalid_argument "--shard: ..." otherwise.
Shard parse_shard(const std::string& text);

/// Options of `dpmu run`.
struct RunOptions {
  std::filesystem::path out;          ///< results file (.h5); the checkpoint journal is out + ".journal"
  int threads = 0;                    ///< 0: all cores (oneTBB default)
  Shard shard;
  bool resume = false;                ///< continue from the journal (or accept an already complete file)
  bool quiet = false;                 ///< no progress on stderr
  std::optional<double> max_time_seconds;  ///< stop cleanly after this wall time
  const std::atomic<bool>* stop_flag = nullptr;  ///< set (e.g. by a SIGTERM handler) to stop cleanly
  std::string dpmu_version = "unknown";
  std::string git_sha = "unknown";
};

/// What a run did.
struct RunReport {
  std::size_t cells = 0;
  std::size_t tasks_total = 0;        ///< tasks of this shard
  std::size_t tasks_resumed = 0;      ///< found in the journal
  std::size_t tasks_run = 0;          ///< run now
  std::uint64_t replicates_run = 0;
  double loop_seconds = 0.0;          ///< wall time of the parallel loop
  double loop_cpu_seconds = 0.0;      ///< CPU time of the process (all threads) during the loop
  bool complete = false;              ///< every task of this shard is done
  bool already_complete = false;      ///< --resume found a complete FILE.h5 and left it untouched
  bool stopped = false;               ///< stopped by --max-time or a signal
  std::vector<std::size_t> failed_cells;  ///< failure fraction above max_failure_fraction
};

/// Journal (checkpoint) path for a results path: "<out>.journal".
std::filesystem::path journal_path(const std::filesystem::path& out);

/// Run a study. Writes `options.out` atomically at the end (complete, or incomplete when
/// stopped). While running, every finished block is appended to the journal
/// "<out>.journal" (length + FNV-1a checksum per record; a torn last record is ignored), so
/// `kill -9` loses at most the blocks in flight; the journal is deleted once the complete file
/// is in place. Numbers depend only on (master_seed, cell, replicate), never on threads,
/// scheduling, shards or resumption.
/// @throws std::invalid_argument if `out` or its journal exists and `resume` is false, or if the
///   journal belongs to another study or shard; std::runtime_error for I/O errors.
RunReport run_study(const StudySpec& study, const RunOptions& options);

/// Results of `study` with nothing done (every value NaN, done = 0).
StudyResults empty_results(const StudySpec& study);

/// Merge shard files into one file equal to an unsharded run's (same datasets and numbers).
/// @throws std::invalid_argument if the shards disagree on the study (fingerprint, config,
///   seed), if one is missing, duplicated or incomplete, or if two shards hold the same replicate.
void merge_results(const std::filesystem::path& out, const std::vector<std::filesystem::path>& shards);

/// One flagged difference found by compare_results.
struct Difference {
  std::string cell_key;
  std::string metric;     ///< "name" or "name[k]"
  double mean_a, mean_b, mcse_a, mcse_b, z;
  std::string reason;     ///< "z", "nan", "missing cell", ...
};

/// Compare two results files per cell (matched by key) and metric component: flag
/// |mean_a - mean_b| / sqrt(mcse_a² + mcse_b²) > z_threshold; identical means never differ;
/// if both mcse are 0, any difference is flagged; if an mcse is NaN (fewer than 2 finite
/// replicates) a difference is flagged as "cannot judge". Cells or metrics present in only one
/// file are flagged.
std::vector<Difference> compare_results(const StudyResults& a, const StudyResults& b, double z_threshold);

}  // namespace dpmu::runtime
