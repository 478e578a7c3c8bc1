#pragma once
/// @file config.hpp
/// Study configs (YAML): loading, strict validation and grid expansion (docs/configs.md).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/runtime/experiment.hpp"
#include "dpmu/runtime/results.hpp"

namespace dpmu::runtime {

/// Every problem found in a config, one "file:line: key.path: message" per entry.
/// what() joins them with newlines.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<std::string> messages);
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::vector<std::string> messages_;
};

/// A loaded, validated and expanded study: everything the runner needs.
struct StudySpec {
  std::string source;           ///< file name used in messages (and the results file)
  std::string config_yaml;      ///< the config text, verbatim
  std::string experiment_name;  ///< registered experiment
  const Experiment* experiment = nullptr;
  std::uint64_t master_seed = 0;
  std::int64_t replicates = 0;        ///< per cell (after any --replicates override)
  std::int64_t block_size = 0;        ///< replicates per task and per checkpoint record
  double max_failure_fraction = 0.0;  ///< a cell with more failed replicates is "failed"
  std::string description;
  std::vector<std::string> parameter_names;  ///< all parameters, in declaration order
  std::vector<ParameterType> parameter_types;
  std::vector<std::string> data_factors;
  std::vector<Cell> cells;                  ///< in expansion order (blocks, then axes, first outermost)
  std::vector<MetricSpec> metric_template;  ///< metrics(cells[0]) (names are the same in every cell)
  /// metrics(cell) per cell; cells with the same layout share one copy (a grid of 10^5 cells held
  /// a copy of every name, description and label per cell: 1.4 GB to validate).
  std::vector<std::shared_ptr<const std::vector<MetricSpec>>> cell_metrics;
  /// Every data file a cell reads (Experiment::data_files), with the SHA-256 of its contents when
  /// the config was loaded; sorted by path, each once.
  std::vector<DataFileFingerprint> data_files;
  /// The cells grouped by data key (docs/architecture.md §3.3): each group lists cell indices in
  /// cell order, groups ordered by their first cell. The engine generates one data set per
  /// (group, replicate) and analyses it for every cell of the group. The data keys of one
  /// generation group (Experiment::generation_key) share a group: their data sets come from one
  /// generate_shared() call. An experiment without a data step (Experiment::has_data_step()
  /// false) has one group per cell.
  std::vector<std::vector<std::size_t>> data_groups;

  /// Number of replicate blocks per cell: ceil(replicates / block_size).
  std::int64_t blocks_per_cell() const { return (replicates + block_size - 1) / block_size; }
  /// Identity of the study (experiment, seed, replicates, block size, every cell key and the
  /// SHA-256 of every data file): shards, checkpoints and merges must agree on it. FNV-1a-64.
  std::uint64_t fingerprint() const;
};

/// Largest `replicates` of a study (per cell; also `dpmu run --replicates`) and largest
/// `block_size`: 10^9. Counts are read in 64 bits and checked against these limits before
/// anything is built, naming the key and the limit.
inline constexpr std::int64_t kMaxReplicates = 1000000000;
/// Largest number of tasks of a study, (data groups) × ceil(replicates / block_size): 10^7. The
/// runner keeps a list of its tasks (16 bytes each, twice while running), so a study of 10^5 cells
/// with block_size 1 (10^14 tasks) is refused up front, naming block_size, instead of filling the
/// memory; the shipped configs have at most a few 10^5 tasks.
inline constexpr std::int64_t kMaxTasks = 10000000;

/// Options that override the config file.
struct StudyOverrides {
  std::optional<std::int64_t> replicates;  ///< `dpmu run --replicates R`
};

/// Parse, validate and expand a study config given as text (`source` names it in messages).
/// Looks the experiment up in the registry.
/// @throws ConfigError listing every problem (YAML syntax, unknown or missing keys, wrong types,
///   out-of-range values, unknown parameters, bad ranges, repeated values, grids of more than
///   10^5 cells, replicates or block_size above kMaxReplicates, more than kMaxTasks tasks, experiment validate(),
///   missing or unreadable data files, Experiment::check_data()). Relative data paths are resolved against the folder
///   of `source`.
StudySpec parse_study(const std::string& yaml_text, const std::string& source, const StudyOverrides& overrides = {});

/// Read the file and call parse_study. @throws ConfigError (also if the file cannot be read).
StudySpec load_study(const std::filesystem::path& path, const StudyOverrides& overrides = {});

}  // namespace dpmu::runtime
