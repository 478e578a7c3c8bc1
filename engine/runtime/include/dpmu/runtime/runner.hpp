#pragma once
/// @file runner.hpp
/// The Monte Carlo runner: (cell, replicate-block) tasks on oneTBB, checkpointed to a journal,
/// written to HDF5; plus merging shards and comparing results files.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/results.hpp"

namespace dpmu::runtime {

/// `--shard i/N`: this process runs the tasks whose global index t satisfies t mod N == i
/// (ShardPlan).
struct Shard {
  std::int64_t index = 0;
  std::int64_t count = 1;
};

/// Parse "i/N" with 0 <= i < N. @throws std::invalid_argument "--shard: ..." otherwise.
Shard parse_shard(const std::string& text);

/// The work of a study and the share of one shard. A task is (data group g, replicate block b)
/// (StudySpec::data_groups, StudySpec::blocks_per_cell); its global index is
/// t = g * blocks_per_cell + b, and shard i/N runs the tasks with t mod N == i. The one place
/// that defines shard membership (run, dry run, resume of a complete file).
class ShardPlan {
 public:
  struct Task {
    std::size_t group = 0;
    std::size_t block = 0;
  };
  ShardPlan(const StudySpec& study, Shard shard);
  /// Tasks of every shard together.
  std::size_t tasks_all_shards() const { return groups_ * blocks_; }
  /// The number of tasks of `shard` among `total` tasks (those t < total with t mod N == i),
  /// counted without building the list (`dpmu run --dry-run`).
  static std::uint64_t tasks_in_shard(std::uint64_t total, Shard shard);
  /// True if this shard runs task (group, block).
  bool owns(std::size_t group, std::size_t block) const {
    return static_cast<std::int64_t>((group * blocks_ + block) % static_cast<std::size_t>(shard_.count)) ==
           shard_.index;
  }
  /// This shard's tasks, in global order.
  const std::vector<Task>& tasks() const { return tasks_; }
  /// The cells with at least one task in this shard, sorted.
  std::vector<std::size_t> cells(const StudySpec& study) const;

 private:
  Shard shard_;
  std::size_t groups_ = 0, blocks_ = 0;
  std::vector<Task> tasks_;
};

/// One cell's share of a replicate (run_one_replicate).
struct CellReplicate {
  const Cell* cell = nullptr;
  const void* prepared = nullptr;  ///< the cell's prepare() result; null if it failed
  std::size_t data_index = 0;      ///< which of run_one_replicate's data cells is the cell's
  std::string prepare_error;       ///< non-empty: prepare() failed with this message
  std::span<const MetricSpec> metrics;
  std::span<double> out;        ///< the replicate's metrics (set to NaN first; NaN where not written or on failure)
  std::string failure_stage;    ///< set on failure: "prepare", "generate" or "replicate"
  std::string failure_message;  ///< set on failure
  double seconds = 0.0;         ///< wall time of analyse() plus an equal share of generate()
};

/// Replicate `replicate` of the cells of one data group, exactly as `dpmu run` runs it (and
/// `dpmu replay` replays it): the data sets are generated once — for an experiment with a data
/// step, each data cell's from RngStream(master_seed, data_id, replicate, data) by generate(),
/// or, when the experiment gives the data cells a generation key, all of them by one
/// generate_shared() call from runtime::generation_stream — then each cell (CellReplicate::
/// data_index names its data cell) is analysed with RngStream(master_seed, cell_id, replicate,
/// noise). A failure (exception) of generate() fails the cells of its data cell; a failed
/// generate_shared() call is retried data cell by data cell, so that only the cells of the data
/// keys that fail alone fail (stage "generate"); a failure of analyse() fails its cell.
/// std::bad_alloc is not a failure of the replicate: it is rethrown.
/// @throws std::invalid_argument if data_cells is empty or a data_index is out of range.
void run_one_replicate(const Experiment& experiment, std::span<const Cell> data_cells, std::uint64_t master_seed,
                       std::uint64_t replicate, std::span<CellReplicate> cells);

/// CPU time of the calling thread (user + system; CLOCK_THREAD_CPUTIME_ID), seconds.
double thread_cpu_seconds();

/// The distinct data cells of a data group's cells (study.data_groups; in the order of their first
/// cell) and, per cell of the group, the index of its data cell: the data_cells and
/// CellReplicate::data_index of run_one_replicate for the group.
std::pair<std::vector<Cell>, std::vector<std::size_t>> distinct_data_cells(const StudySpec& study,
                                                                           const std::vector<std::size_t>& group);

/// run_one_replicate for the cells of one data cell (a replay, a group without shared generation).
inline void run_one_replicate(const Experiment& experiment, const Cell& data_cell, std::uint64_t master_seed,
                              std::uint64_t replicate, std::span<CellReplicate> cells) {
  run_one_replicate(experiment, std::span<const Cell>(&data_cell, 1), master_seed, replicate, cells);
}

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

/// Largest `--max-time` (RunOptions::max_time_seconds): 10^9 s, about 31.7 years. The deadline is a
/// steady_clock time point in nanoseconds (a signed 64-bit count, at most about 9.2·10^18 ns = 292
/// years), so a limit far beyond any run keeps the conversion exact; before it was checked, 10^10 s
/// overflowed into a deadline in the past and the run stopped at once.
inline constexpr double kMaxTimeLimitSeconds = 1e9;

/// Refuse a `--max-time` that is not a number of seconds in (0, kMaxTimeLimitSeconds].
/// @throws std::invalid_argument "--max-time: ..." naming the value and the limit.
void check_max_time(double seconds);

/// Results are kept in memory until written: refuse a study whose results (8 bytes per metric value
/// and replicate, 3x while writing and verifying the file) exceed this machine's memory, before any
/// work (run_study and `dpmu run --dry-run`). @throws std::invalid_argument naming the size.
void check_results_fit_in_memory(const StudySpec& study);

/// Options of `dpmu run`.
struct RunOptions {
  std::filesystem::path out;  ///< results file (.h5); the checkpoint journal is out + ".journal"
  int threads = 0;            ///< 0: all cores (oneTBB default)
  Shard shard;
  bool resume = false;                           ///< continue from the journal (or accept an already complete file)
  bool quiet = false;                            ///< no progress on stderr
  std::optional<double> max_time_seconds;        ///< stop cleanly after this wall time (check_max_time)
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
  double loop_seconds = 0.0;      ///< wall time of the parallel loop
  double loop_cpu_seconds = 0.0;  ///< CPU time of the process (all threads) during the loop
  /// CPU time of the loop's threads inside the cells' prepare() (set-up, calibration): a fixed cost
  /// per cell and process, so (loop_cpu_seconds − prepare_cpu_seconds) / replicates_run is the CPU
  /// cost of a replicate of every cell (bench/ssp_study_ratio.py).
  double prepare_cpu_seconds = 0.0;
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
