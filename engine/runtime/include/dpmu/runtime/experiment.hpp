#pragma once
/// @file experiment.hpp
/// The experiment contract of the Monte Carlo engine (docs/architecture.md §3.2, §3.5).
///
/// An experiment is code that, given one grid cell's parameters and random streams, produces
/// one replicate's named metrics. It knows nothing about threads, files or summaries; the engine
/// knows nothing about statistics. This header is self-contained (header-only, depends on
/// dpmu_core only) so that `dpmu_experiments` can implement experiments without linking
/// `dpmu_runtime`.
///
/// Life cycle, per study:
///  1. `parameters()` declares every parameter; the config must give each required one, either
///     in `parameters:` (fixed) or as a grid axis. Types, ranges and allowed strings are checked
///     by the engine before any work starts.
///  2. `validate(cell)` runs for every expanded cell (cross-parameter checks, e.g. n > p + 1);
///     then `data_files(cell)` names the files the cell reads (the engine fingerprints them with
///     SHA-256 into the study identity) and `check_data(cell)` loads and checks them (columns,
///     values, ranks, subset sizes), so that data problems are config errors found by `--dry-run`
///     and before the first replicate, not failures of every replicate.
///  3. `metrics(cell)` declares the metric layout of a cell (names must not depend on the cell;
///     vector lengths may).
///  4. `prepare(cell, calibration)` runs once per cell (lazily, on the first task of that cell
///     in a process) and its result is shared read-only by every replicate of the cell;
///     `calibration_outputs(cell, prepared)` may expose numbers of it for the results file.
///  5. `run_replicate(...)` runs once per replicate, concurrently from several threads; it must
///     not modify shared state. Its streams are
///       data  = RngStream(master_seed, data_id, replicate, data)
///       noise = RngStream(master_seed, cell_id, replicate, noise)
///     and `prepare` gets calibration = RngStream(master_seed, cell_id, 0, calibration).
///     An exception thrown by `prepare` or `run_replicate` is recorded in the results file's
///     `/errors` and the replicate's metrics become NaN; replicates are never redrawn.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "dpmu/core/random.hpp"

namespace dpmu::runtime {

/// A parameter value: YAML integers stay integers, reals are doubles, strings are strings.
using ParameterValue = std::variant<std::int64_t, double, std::string>;

/// Declared type of a parameter.
enum class ParameterType { integer, real, string };

/// Canonical text of a value: integers in decimal, doubles in the shortest form that
/// round-trips (std::to_chars), strings verbatim. Used in cell keys, so it must never change.
inline std::string format_parameter_value(const ParameterValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, *d);
    return std::string(buf, res.ptr);
  }
  return std::get<std::string>(v);
}

/// Declaration of one experiment parameter.
struct ParameterSpec {
  std::string name;                                            ///< snake_case, docs/architecture.md §4 terms
  ParameterType type = ParameterType::real;                    ///< integer, real or string
  bool data_factor = false;                                    ///< true if it changes the simulated data set
  std::optional<ParameterValue> default_value = std::nullopt;  ///< nullopt: the config must give it
  std::optional<double> min = std::nullopt;                    ///< lower bound (numbers), see min_inclusive
  std::optional<double> max = std::nullopt;                    ///< upper bound (numbers), see max_inclusive
  bool min_inclusive = true;                                   ///< false: value must be > min
  bool max_inclusive = true;                                   ///< false: value must be < max
  std::vector<std::string> allowed = {};                       ///< strings: allowed values (empty: any)
  std::string description = {};                                ///< one line, shown in docs and errors
  bool path = false;  ///< a file path (strings): normalised lexically ("./a.csv" -> "a.csv") before it enters the key
};

/// Lexically normalised form of a path parameter's value: "./a.csv" and "a.csv", "d//a.csv" and
/// "d/x/../a.csv" are one file, so one cell key. An empty value stays empty.
inline std::string normalize_path_value(const std::string& value) {
  if (value.empty()) return value;
  std::string out = std::filesystem::path(value).lexically_normal().generic_string();
  return out.empty() ? std::string(".") : out;
}

/// A data file a cell reads (Experiment::data_files).
struct DataFile {
  std::string parameter;  ///< the parameter that names it (messages point at its line in the config)
  std::string path;       ///< as the config gives it, normalised (what the cell key holds); "" never
  std::string resolved;   ///< where it is opened (relative paths: config folder, then source tree)
};

/// Declaration of one metric: a scalar (size 1) or a vector of fixed size k for a given cell.
struct MetricSpec {
  std::string name;
  std::size_t size = 1;    ///< 1 = scalar, k = vector (stored as [cells, R, k])
  bool is_vector = false;  ///< true: stored with a component axis even when size == 1
  std::string description = {};
  /// One label per component of a vector metric, in the file as /component_labels/<name> (e.g.
  /// "alpha=0.05", a predictor or a variant name); empty: "0", "1", ... Not part of the study's identity.
  std::vector<std::string> component_labels = {};
};

/// One grid cell: every parameter's value (fixed parameters, defaults and grid axes).
/// Immutable; cheap accessors for experiments.
class Cell {
 public:
  Cell() = default;

  /// Build a cell from (name, value) pairs; `data_factors` names the parameters that key the
  /// data stream. @throws std::invalid_argument for a duplicated name.
  Cell(std::vector<std::pair<std::string, ParameterValue>> values, const std::vector<std::string>& data_factors)
      : values_(std::move(values)) {
    std::sort(values_.begin(), values_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 1; i < values_.size(); ++i) {
      if (values_[i].first == values_[i - 1].first) {
        throw std::invalid_argument("Cell: parameter '" + values_[i].first + "' given twice");
      }
    }
    for (const auto& [name, value] : values_) {
      const std::string item = name + "=" + format_parameter_value(value);
      key_ += (key_.empty() ? "" : ";") + item;
      if (std::find(data_factors.begin(), data_factors.end(), name) != data_factors.end()) {
        data_key_ += (data_key_.empty() ? "" : ";") + item;
      }
    }
    cell_id_ = core::fnv1a_64(key_);
    data_id_ = core::fnv1a_64(data_key_);
  }

  /// True if the cell has a parameter called `name`.
  bool has(std::string_view name) const { return find(name) != nullptr; }

  /// The value of `name`. @throws std::out_of_range if there is none.
  const ParameterValue& get(std::string_view name) const {
    const ParameterValue* v = find(name);
    if (v == nullptr) throw std::out_of_range("Cell: no parameter '" + std::string(name) + "'");
    return *v;
  }

  /// A numeric parameter as double (integers are converted).
  /// @throws std::out_of_range if missing; std::invalid_argument if it is a string.
  double get_double(std::string_view name) const {
    const ParameterValue& v = get(name);
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&v)) return *d;
    throw std::invalid_argument("Cell: parameter '" + std::string(name) + "' is a string, not a number");
  }

  /// An integer parameter. @throws std::out_of_range if missing; std::invalid_argument if not an integer.
  std::int64_t get_int(std::string_view name) const {
    const ParameterValue& v = get(name);
    if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
    throw std::invalid_argument("Cell: parameter '" + std::string(name) + "' is not an integer");
  }

  /// A string parameter. @throws std::out_of_range if missing; std::invalid_argument if not a string.
  const std::string& get_string(std::string_view name) const {
    const ParameterValue& v = get(name);
    if (const auto* s = std::get_if<std::string>(&v)) return *s;
    throw std::invalid_argument("Cell: parameter '" + std::string(name) + "' is not a string");
  }

  /// (name, value) pairs sorted by name.
  const std::vector<std::pair<std::string, ParameterValue>>& values() const { return values_; }
  /// Canonical key "a=1;b=0.5;c=laplace" (all parameters, sorted by name).
  const std::string& key() const { return key_; }
  /// Key restricted to the data factors (empty if there are none).
  const std::string& data_key() const { return data_key_; }
  /// Folder of the config the cell comes from (absolute; empty for cells read back from a results
  /// file). Relative data paths are resolved against it. Not part of the key.
  const std::string& config_dir() const { return config_dir_; }
  /// Set by the engine when it expands a config.
  void set_config_dir(std::string dir) { config_dir_ = std::move(dir); }
  /// FNV-1a-64 of key(): keys the noise and calibration streams.
  std::uint64_t cell_id() const { return cell_id_; }
  /// FNV-1a-64 of data_key(): keys the data stream (common random numbers across method factors).
  std::uint64_t data_id() const { return data_id_; }

 private:
  const ParameterValue* find(std::string_view name) const {
    auto it = std::lower_bound(values_.begin(), values_.end(), name,
                               [](const auto& a, std::string_view n) { return a.first < n; });
    return (it != values_.end() && it->first == name) ? &it->second : nullptr;
  }

  std::vector<std::pair<std::string, ParameterValue>> values_;
  std::string key_;
  std::string data_key_;
  std::string config_dir_;
  std::uint64_t cell_id_ = 0;
  std::uint64_t data_id_ = 0;
};

/// An experiment (see the file comment for the life cycle). Implementations must be stateless
/// or immutable after construction: every const member may be called from several threads.
class Experiment {
 public:
  virtual ~Experiment() = default;

  /// Registered name, used as `experiment:` in configs.
  virtual std::string name() const = 0;

  /// Every parameter the experiment reads.
  virtual std::vector<ParameterSpec> parameters() const = 0;

  /// Cross-parameter checks of one cell (single parameters are checked by the engine from
  /// their specs). @throws std::invalid_argument("key: message"); the engine reports
  /// "file:line: key: message" with the line where `key` was set.
  virtual void validate(const Cell& /*cell*/) const {}

  /// The data files the cell reads, resolved (e.g. from a `data_file` parameter). The engine
  /// hashes each one (SHA-256) into the study identity and the results file, so `--resume` and
  /// `dpmu merge` refuse results computed from other contents. @throws std::invalid_argument
  /// ("data_file: ...") for a file that does not exist. Default: none.
  virtual std::vector<DataFile> data_files(const Cell& /*cell*/) const { return {}; }

  /// Data checks of one cell, run by the engine for every cell before any work (and by
  /// `--dry-run`): load the cell's data as prepare() will and check what would make every
  /// replicate fail (missing columns, non-numeric or NaN values, a constant column, the response
  /// among the predictors, a rank-deficient design, too many subsets for the rows).
  /// @throws std::invalid_argument("key: message") as validate(). Default: nothing.
  virtual void check_data(const Cell& /*cell*/) const {}

  /// Metric layout for a cell; run_replicate writes them concatenated in this order.
  virtual std::vector<MetricSpec> metrics(const Cell& cell) const = 0;

  /// Shared read-only per-cell set-up (a critical-value table, a loaded data set), computed
  /// once per cell from the calibration stream. Default: nothing.
  virtual std::shared_ptr<const void> prepare(const Cell& /*cell*/, core::RngStream& /*calibration*/) const {
    return nullptr;
  }

  /// Optional: numbers that describe a prepare() result (e.g. a critical-value table), stored
  /// in the results file as /calibration/<name>, float64 [cells, k] padded with NaN. Called once
  /// per cell, right after prepare(). Default: none.
  virtual std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell& /*cell*/,
                                                                                       const void* /*prepared*/) const {
    return {};
  }

  /// One replicate. `metrics_out` has the total size of metrics(cell), prefilled with NaN.
  /// May throw (recorded; metrics become NaN).
  virtual void run_replicate(const Cell& cell, const void* prepared, core::RngStream& data, core::RngStream& noise,
                             std::span<double> metrics_out) const = 0;
};

namespace detail {
inline std::map<std::string, std::unique_ptr<Experiment>, std::less<>>& experiment_registry() {
  static std::map<std::string, std::unique_ptr<Experiment>, std::less<>> registry;
  return registry;
}
}  // namespace detail

/// Register an experiment under experiment->name(). Not thread-safe: call at start-up.
/// Registering a name again replaces the earlier experiment.
/// @throws std::invalid_argument for a null pointer or an empty name.
inline void register_experiment(std::unique_ptr<Experiment> experiment) {
  if (!experiment || experiment->name().empty()) {
    throw std::invalid_argument("register_experiment: experiment must be non-null with a name");
  }
  auto name = experiment->name();
  detail::experiment_registry()[name] = std::move(experiment);
}

/// Names of all registered experiments, sorted.
inline std::vector<std::string> registered_experiments() {
  std::vector<std::string> names;
  for (const auto& [name, e] : detail::experiment_registry()) names.push_back(name);
  return names;
}

/// The experiment registered as `name`.
/// @throws std::invalid_argument "unknown experiment 'x'; registered experiments are a, b".
inline const Experiment& find_experiment(std::string_view name) {
  auto& reg = detail::experiment_registry();
  auto it = reg.find(name);
  if (it == reg.end()) {
    std::string list;
    for (const auto& n : registered_experiments()) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown experiment '" + std::string(name) + "'; registered experiments are " +
                                (list.empty() ? "(none)" : list));
  }
  return *it->second;
}

}  // namespace dpmu::runtime
