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

/// An exclusive lock on a results file for the life of a run or a merge: flock(2) on
/// "<out>.lock", a small file holding the holder's PID (removed when the lock is released; one
/// left by a killed process holds no lock and is taken over). Two processes can never write one
/// results file or its checkpoint at once.
class OutputLock {
 public:
  /// Take the lock without waiting.
  /// @throws std::invalid_argument "OUT: another dpmu process (PID 1234) is writing this results
  ///   file ..." if another process (or another OutputLock) holds it; std::runtime_error if the
  ///   lock file cannot be created.
  explicit OutputLock(const std::filesystem::path& out);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  /// "<out>.lock"
  static std::filesystem::path lock_path(const std::filesystem::path& out);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

/// Options of `dpmu run`.
struct RunOptions {
  std::filesystem::path out;  ///< results file (.h5); the checkpoint journal is out + ".journal"
  int threads = 0;            ///< 0: all cores (oneTBB default)
  Shard shard;
  bool resume = false;                           ///< continue from the journal (or accept an already complete file)
  bool quiet = false;                            ///< no progress on stderr
  std::optional<double> max_time_seconds;        ///< stop cleanly after this wall time
  const std::atomic<bool>* stop_flag = nullptr;  ///< set (e.g. by a SIGTERM handler) to stop cleanly
  std::string dpmu_version = "unknown";
  std::string git_sha = "unknown";
};

/// What a run did.
struct RunReport {
  std::size_t cells = 0;
  std::size_t tasks_total = 0;    ///< tasks of this shard
  std::size_t tasks_resumed = 0;  ///< found in the journal
  std::size_t tasks_run = 0;      ///< run now
  std::uint64_t replicates_run = 0;
  double loop_seconds = 0.0;                         ///< wall time of the parallel loop
  double loop_cpu_seconds = 0.0;                     ///< CPU time of the process (all threads) during the loop
  bool complete = false;                             ///< every task of this shard is done
  bool already_complete = false;                     ///< --resume found a complete FILE.h5 and left it untouched
  bool stopped = false;                              ///< stopped by --max-time or a signal
  std::vector<std::size_t> failed_cells;             ///< failure fraction above max_failure_fraction
  std::vector<std::string> removed_temporary_files;  ///< stale "<out>.tmp-PID" files of killed runs, removed
};

/// Journal (checkpoint) path for a results path: "<out>.journal".
std::filesystem::path journal_path(const std::filesystem::path& out);

/// Run a study. Writes `options.out` atomically at the end (complete, or incomplete when
/// stopped). While running, every finished block is appended to the journal
/// "<out>.journal" (length + FNV-1a checksum per record; a torn last record is ignored), so
/// `kill -9` loses at most the blocks in flight; the journal is deleted once the complete file
/// is in place. Numbers depend only on (master_seed, cell, replicate), never on threads,
/// scheduling, shards or resumption.
/// The run holds an OutputLock on `out` throughout, and first removes temporary files of killed
/// runs. If a data file's contents change during the run, nothing is written (the journal stays).
/// A std::bad_alloc (out of memory) is not recorded as a failed replicate: it ends the run, and
/// the journal keeps every finished block.
/// @throws std::invalid_argument if `out` or its journal exists and `resume` is false, if another
///   process holds `out`, or if the journal or file belongs to another study or shard or was
///   computed from other data (naming the data file); std::runtime_error for I/O errors (naming
///   the file and the reason).
RunReport run_study(const StudySpec& study, const RunOptions& options);

/// Results of `study` with nothing done (every value NaN, done = 0).
StudyResults empty_results(const StudySpec& study);

/// Merge shard files into one file equal to an unsharded run's (same datasets and numbers).
/// Holds an OutputLock on `out` and removes temporary files of killed merges first.
/// @throws std::invalid_argument if `out` exists, if the shards disagree on the study (data file
///   contents, naming the file; fingerprint, config, seed), if one is missing, duplicated or
///   incomplete, or if two shards hold the same replicate; std::runtime_error if a shard is damaged.
void merge_results(const std::filesystem::path& out, const std::vector<std::filesystem::path>& shards);

/// Why two results files cannot be compared cell by cell, or "" if they can: they hold different
/// experiments, one is a shard (merge first), or one is incomplete (unless allow_incomplete).
std::string comparison_obstacle(const StudyResults& a, const std::string& name_a, const StudyResults& b,
                                const std::string& name_b, bool allow_incomplete);

/// One flagged difference found by compare_results.
struct Difference {
  std::string cell_key;
  std::string metric;  ///< "name" or "name[k]"
  double mean_a, mean_b, mcse_a, mcse_b, z;
  std::string reason;  ///< "z", "nan", "missing cell", ...
};

/// Compare two results files per cell (matched by key) and metric component: flag
/// |mean_a - mean_b| / sqrt(mcse_a² + mcse_b²) > z_threshold; identical means never differ;
/// if both mcse are 0, any difference is flagged; if an mcse is NaN (fewer than 2 finite
/// replicates) a difference is flagged as "cannot judge". Cells or metrics present in only one
/// file are flagged.
std::vector<Difference> compare_results(const StudyResults& a, const StudyResults& b, double z_threshold);

}  // namespace dpmu::runtime
