#pragma once
/// @file results.hpp
/// In-memory study results, their summaries, and the HDF5 results file (docs/results-schema.md).
/// Only the runtime touches HDF5, and only from one thread.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dpmu/runtime/experiment.hpp"

namespace dpmu::runtime {

/// Major and minor version of the results file schema (docs/results-schema.md). 1.1: a user block
/// with the SHA-256 of the file, chunked datasets with the Fletcher32 checksum filter, HDF5 1.10
/// metadata checksums, `data_files` / `data_sha256`. 2.0: UTF-8 strings, hex keys next to the
/// uint64 ids, component labels, `n_nan`, no zero-length attributes or variable-length string
/// datasets. Files of schema 1.0 and 1.1 are still read (1.0 without checksums to verify).
inline constexpr int kSchemaMajor = 2;
inline constexpr int kSchemaMinor = 1;
/// Oldest major version read_results reads (docs/results-schema.md, "Versions").
inline constexpr int kOldestSchemaMajor = 1;

/// A 64-bit stream key (Cell::cell_id, Cell::data_id, the study fingerprint) as 16 lowercase hex
/// digits, as /cells/cell_key and `dpmu summarize` give it (readers without unsigned 64-bit integers,
/// such as R, read these strings exactly).
std::string hex_key(std::uint64_t id);

/// A data file of a study and the SHA-256 of its contents (StudySpec::data_files).
struct DataFileFingerprint {
  std::string path;      ///< as the config gives it (normalised), as in the cell keys
  std::string sha256;    ///< 64 lowercase hex digits
  std::string resolved;  ///< where it was read (not stored in results files)
};

/// "" if `now` lists the same files with the same contents as `then`; else a phrase naming the
/// first data file that differs, e.g. "data file sim.csv differs (SHA-256 0123abcd4567... in the
/// checkpoint, 89abcdef0123... now)" with then_label = "in the checkpoint", now_label = "now".
/// The name of a parameter type in results files (`parameter_types`) and `dpmu describe`:
/// integer, real, string, integer_list, real_list, string_list.
const char* parameter_type_name(ParameterType type);

std::string data_files_difference(const std::vector<DataFileFingerprint>& then,
                                  const std::vector<DataFileFingerprint>& now, const std::string& then_label = "then",
                                  const std::string& now_label = "now");

/// One metric across cells: `sizes[c]` components in cell c, stored padded to `max_size`.
struct MetricLayout {
  std::string name;
  std::string description;
  bool is_vector = false;  ///< stored as [cells, R, max_size] (else [cells, R])
  std::size_t max_size = 1;
  std::vector<std::size_t> sizes;  ///< per cell
  /// Vector metrics, per cell: one label per component (MetricSpec::component_labels, e.g.
  /// "alpha=0.05"); a cell without labels (or a scalar metric) has an empty list.
  std::vector<std::vector<std::string>> component_labels;

  /// Label of component k in cell c: "" for a scalar metric; else component_labels[c][k], or the
  /// decimal index k ("0", "1", ...) where the experiment gave none.
  std::string component_label(std::size_t cell, std::size_t k) const;
};

/// A failed replicate (or a failed prepare, with stage "prepare").
struct ErrorRecord {
  std::uint64_t cell = 0;  ///< cell index
  std::uint64_t replicate = 0;
  std::string stage;  ///< "prepare" or "replicate"
  std::string message;
};

/// Results of one cell: row r (replicate r) of `values` has width() doubles, the metrics
/// concatenated in layout order with this cell's sizes.
struct CellResults {
  std::vector<double> values;      ///< [replicates × width], NaN where not done or failed
  std::vector<std::uint8_t> done;  ///< [replicates], 1 if replicate r finished (ok or failed)
  std::size_t width = 0;
  double wall_seconds = 0.0;  ///< sum of task times for the cell (not deterministic)
};

/// Root attributes of a results file.
struct ResultsInfo {
  std::string config_yaml;
  std::string source;  ///< config path as given
  std::string experiment;
  std::string description;
  std::uint64_t master_seed = 0;
  std::int64_t replicates = 0;
  std::int64_t block_size = 0;
  double max_failure_fraction = 0.0;
  std::uint64_t fingerprint = 0;                ///< StudySpec::fingerprint()
  std::vector<DataFileFingerprint> data_files;  ///< StudySpec::data_files (path and sha256)
  std::int64_t shard_index = 0;
  std::int64_t shard_count = 1;
  bool complete = false;  ///< every replicate of this file's share of the work is done
  std::string dpmu_version;
  std::string git_sha;
  std::string started_utc;
  std::string finished_utc;
};

/// Everything a results file holds, in memory.
struct StudyResults {
  ResultsInfo info;
  std::vector<std::string> parameter_names;  ///< declaration order
  std::vector<ParameterType> parameter_types;
  std::vector<std::string> data_factors;
  std::vector<Cell> cells;
  std::vector<MetricLayout> metrics;
  std::vector<CellResults> cell_results;
  std::vector<ErrorRecord> errors;  ///< sorted by (cell, replicate)
  /// Per cell: Experiment::calibration_outputs of its prepare() result (empty if none or not run).
  std::vector<std::vector<std::pair<std::string, std::vector<double>>>> calibration;

  /// Offset of metric m in a row of cell c.
  std::size_t offset(std::size_t cell, std::size_t metric) const;
  /// Number of done replicates of cell c.
  std::int64_t n_done(std::size_t cell) const;
  /// Number of failed replicates (error records of stage prepare or replicate) of cell c.
  std::int64_t n_failed(std::size_t cell) const;
  /// True if n_failed > max_failure_fraction · n_done (and n_done > 0).
  bool cell_failed(std::size_t cell) const;
};

/// Summary of one metric component over the done replicates of one cell, in replicate order.
/// Quantiles are type 7 (linear interpolation; R's default, numpy's "linear"). NaN values are
/// failures and are left out; n_ok counts the rest. sd uses the n_ok − 1 denominator;
/// mcse = sd / √n_ok. Statistics that need more values than n_ok are NaN.
struct Summary {
  double mean, sd, mcse, q025, q250, q500, q750, q975;
  std::int64_t n_ok;  ///< non-NaN values used
  std::int64_t n;     ///< done replicates (n − n_ok failed)
};

/// Summarise `values[i * stride]`, i = 0..count-1, whose `done[i]` is set (deterministic).
Summary summarize_values(const double* values, std::size_t stride, const std::uint8_t* done, std::size_t count);

/// Summary of component k of metric m in cell c (k < sizes[c]).
Summary summarize_component(const StudyResults& results, std::size_t cell, std::size_t metric, std::size_t k);

/// Write `results` (plus summaries) to `path` atomically: the file is written as
/// "<path>.tmp-<pid>", flushed to disk and renamed over `path`, so `path` is never a half-written
/// file. The file's first 512 bytes (an HDF5 user block) hold the SHA-256 of the rest; numeric
/// datasets are chunked with the Fletcher32 checksum filter. The file is read back (with every
/// check of read_results) before it is renamed over `path`.
/// @throws std::runtime_error naming the file and the reason (e.g. "No space left on device",
///   "File too large") if it cannot be written; the temporary file is removed.
void write_results(const std::filesystem::path& path, const StudyResults& results);

/// Read a results file written by write_results (schema 1.0 to 2.x),
/// verifying the checksums of schema 1.1 files (the whole-file SHA-256 first, before HDF5 parses
/// anything; then Fletcher32 per dataset and HDF5's metadata checksums).
/// @throws std::runtime_error for a missing file, a file that is not a dpmu results file, an
///   unsupported schema major version, or a damaged file ("... is damaged: ...").
StudyResults read_results(const std::filesystem::path& path);

/// Remove "<path>.tmp-<pid>" files left next to `path` by dpmu processes that no longer run
/// (killed while writing). Returns the names removed. Never throws for a file it cannot remove.
std::vector<std::string> remove_stale_temporary_files(const std::filesystem::path& path);

}  // namespace dpmu::runtime
