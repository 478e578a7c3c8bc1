#pragma once
/// @file experiment.hpp
/// The experiment contract of the Monte Carlo engine (docs/architecture.md §3.2, §3.5).
///
/// An experiment is a data design plus an analysis: given one grid cell's parameters and random
/// streams it produces one replicate's named metrics. It knows nothing about threads, files or
/// summaries; the engine knows nothing about statistics. This header is self-contained
/// (header-only, depends on dpmu_core only) so that `dpmu_experiments` can implement experiments
/// without linking `dpmu_runtime`.
///
/// Parameters are of two kinds: data factors (ParameterSpec::data_factor, e.g. n, p) decide the
/// simulated data set; method parameters (epsilon, mechanism, prior, ...) decide how it is
/// analysed. Cells with the same data factors have the same data key and share their data sets
/// (common random numbers by construction, as batchtools' problems and algorithms).
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
///  4. `prepare(cell, calibration, shared)` runs once per cell (lazily, on the first task of that cell
///     in a process; the engine caches the result and shares it read-only by every replicate of
///     the cell); `calibration_outputs(cell, prepared)` may expose numbers of it for the results
///     file.
///  5. Per (data key, replicate r), `generate(data_cell, data)` simulates the data set once and
///     `analyse(cell, prepared, data set, noise, metrics)` analyses it for every cell of the data
///     key, concurrently from several threads (neither may modify shared state). Streams:
///       data  = RngStream(master_seed, data_id, r, data)     (data_id = FNV-1a of the data key)
///       noise = RngStream(master_seed, stream_id, r, noise)
///     and `prepare` gets calibration = RngStream(master_seed, stream_id, 0, calibration)
///     (stream_id = cell_id, FNV-1a of the cell key, unless the experiment declares stream-neutral
///     parameters, ParameterSpec::stream_neutral, which are left out of it).
///     An exception thrown by `prepare`, `generate` or `analyse` is recorded in the results
///     file's `/errors` and the replicate's metrics become NaN; replicates are never redrawn.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "dpmu/core/random.hpp"

namespace dpmu::runtime {

/// A parameter value: YAML integers stay integers, reals are doubles, strings are strings; a
/// YAML sequence given to a list parameter is a list of one of these.
using ParameterValue = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>,
                                    std::vector<std::string>>;

/// Declared type of a parameter. A list type takes a YAML sequence (`coefficients: [1, 3, 4]`)
/// in `parameters:`; as a grid axis each value is a sequence (`permute: [[], [married]]`).
enum class ParameterType { integer, real, string, integer_list, real_list, string_list };

/// True for integer_list, real_list and string_list.
inline bool is_list_type(ParameterType t) {
  return t == ParameterType::integer_list || t == ParameterType::real_list || t == ParameterType::string_list;
}

/// The type of the items of a list type (the type itself for a scalar type).
inline ParameterType item_type(ParameterType t) {
  switch (t) {
    case ParameterType::integer_list:
      return ParameterType::integer;
    case ParameterType::real_list:
      return ParameterType::real;
    case ParameterType::string_list:
      return ParameterType::string;
    case ParameterType::integer:
    case ParameterType::real:
    case ParameterType::string:
      return t;
  }
  return t;
}

namespace detail {
inline std::string format_real(double d) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, res.ptr);
}
template <class T, class F>
std::string join_items(const std::vector<T>& items, F format) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + format(items[i]);
  return out;
}
}  // namespace detail

/// Canonical text of a value: integers in decimal, doubles in the shortest form that
/// round-trips (std::to_chars), strings verbatim; a list is its items' texts joined by ", "
/// (string items never contain a comma, so the text is unambiguous given the parameter's type;
/// the empty list is ""). Used in cell keys, so it must never change (docs/configs.md).
inline std::string format_parameter_value(const ParameterValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return detail::format_real(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* li = std::get_if<std::vector<std::int64_t>>(&v))
    return detail::join_items(*li, [](std::int64_t x) { return std::to_string(x); });
  if (const auto* ld = std::get_if<std::vector<double>>(&v)) return detail::join_items(*ld, detail::format_real);
  return detail::join_items(std::get<std::vector<std::string>>(v), [](const std::string& x) { return x; });
}

/// The list value of canonical text `text` (format_parameter_value of a list of type `type`),
/// as stored in results files. @throws std::invalid_argument if an item does not parse.
inline ParameterValue parse_list_value(ParameterType type, const std::string& text) {
  std::vector<std::string> items;
  if (!text.empty()) {
    std::size_t start = 0;
    while (true) {
      const auto comma = text.find(", ", start);
      items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
  }
  auto bad = [&](const std::string& item) {
    return std::invalid_argument("list value '" + text + "': item '" + item + "' does not parse");
  };
  switch (type) {
    case ParameterType::integer_list: {
      std::vector<std::int64_t> out;
      for (const auto& s : items) {
        std::int64_t x = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
        if (ec != std::errc() || p != s.data() + s.size()) throw bad(s);
        out.push_back(x);
      }
      return out;
    }
    case ParameterType::real_list: {
      std::vector<double> out;
      for (const auto& s : items) {
        double x = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
        if (ec != std::errc() || p != s.data() + s.size()) throw bad(s);
        out.push_back(x);
      }
      return out;
    }
    case ParameterType::string_list:
      return items;
    case ParameterType::integer:
    case ParameterType::real:
    case ParameterType::string:
      break;
  }
  throw std::invalid_argument("parse_list_value: not a list type");
}

/// Declaration of one experiment parameter.
struct ParameterSpec {
  std::string name;                                            ///< snake_case, docs/architecture.md §4 terms
  ParameterType type = ParameterType::real;                    ///< integer, real, string or a list of one
  bool data_factor = false;                                    ///< true if it changes the simulated data set
  std::optional<ParameterValue> default_value = std::nullopt;  ///< nullopt: the config must give it
  std::optional<double> min = std::nullopt;                    ///< lower bound (numbers, list items), see min_inclusive
  std::optional<double> max = std::nullopt;                    ///< upper bound (numbers), see max_inclusive
  bool min_inclusive = true;                                   ///< false: value must be > min
  bool max_inclusive = true;                                   ///< false: value must be < max
  std::vector<std::string> allowed = {};                       ///< strings, string items: allowed values (empty: any)
  std::string description = {};                                ///< one line, shown in docs and errors
  bool path = false;  ///< a file path (strings): normalised lexically ("./a.csv" -> "a.csv") before it enters the key
  /// false: a parameter added to an experiment after results of it existed. At its default value
  /// it is left out of the cell key (and the data key), so a cell that does not use it keeps the
  /// key, the random streams and therefore the numbers it had before the parameter existed, and
  /// older results files stay resumable and mergeable (docs/decisions.md, "cell keys"). Requires
  /// a default_value; any other value enters the key as usual.
  bool keyed_at_default = true;
  /// true: the value changes how an analysis computes, never a random draw (e.g. exact pruning):
  /// it is part of the cell's key, but not of the key of its noise and calibration streams
  /// (Cell::stream_id), so two cells that differ only in it draw the same noise.
  bool stream_neutral = false;
};

/// (name, canonical text of the default) of every parameter of `specs` that is not keyed at its
/// default (ParameterSpec::keyed_at_default == false): what Cell leaves out of its keys.
inline std::vector<std::pair<std::string, std::string>> unkeyed_defaults(const std::vector<ParameterSpec>& specs);

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
  bool operator==(const MetricSpec&) const = default;
};

/// One grid cell: every parameter's value (fixed parameters, defaults and grid axes).
/// Immutable; cheap accessors for experiments.
class Cell {
 public:
  Cell() = default;

  /// Build a cell from (name, value) pairs; `data_factors` names the parameters that key the
  /// data stream. @throws std::invalid_argument for a duplicated name.
  /// `unkeyed_defaults` (unkeyed_defaults() of the experiment's parameters; empty for none): a
  /// parameter listed there whose value has the listed canonical text is left out of key() and
  /// data_key() (ParameterSpec::keyed_at_default), though get() still returns it.
  Cell(std::vector<std::pair<std::string, ParameterValue>> values, const std::vector<std::string>& data_factors,
       std::vector<std::pair<std::string, std::string>> unkeyed_defaults = {})
      : values_(std::move(values)), unkeyed_defaults_(std::move(unkeyed_defaults)) {
    std::sort(values_.begin(), values_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 1; i < values_.size(); ++i) {
      if (values_[i].first == values_[i - 1].first) {
        throw std::invalid_argument("Cell: parameter '" + values_[i].first + "' given twice");
      }
    }
    const auto is_data_factor = [&](const std::string& name) {
      return std::find(data_factors.begin(), data_factors.end(), name) != data_factors.end();
    };
    for (const auto& [name, value] : values_) {
      if (is_data_factor(name)) data_values_.emplace_back(name, value);
    }
    key_ = key_of([](const std::string&) { return true; });
    data_key_ = key_of(is_data_factor);
    cell_id_ = core::fnv1a_64(key_);
    data_id_ = core::fnv1a_64(data_key_);
    stream_id_ = cell_id_;
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
    throw std::invalid_argument("Cell: parameter '" + std::string(name) + "' is not a number");
  }

  /// An integer parameter. @throws std::out_of_range if missing; std::invalid_argument if not an integer.
  std::int64_t get_int(std::string_view name) const {
    const ParameterValue& v = get(name);
    if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
    throw std::invalid_argument("Cell: parameter '" + std::string(name) + "' is not an integer");
  }

  /// A string parameter. @throws std::out_of_range if missing; std::invalid_argument if not a string.
  const std::string& get_string(std::string_view name) const { return get_as<std::string>(name, "a string"); }

  /// A string_list parameter. @throws std::out_of_range if missing; std::invalid_argument if not one.
  const std::vector<std::string>& get_string_list(std::string_view name) const {
    return get_as<std::vector<std::string>>(name, "a list of strings");
  }
  /// An integer_list parameter. @throws std::out_of_range if missing; std::invalid_argument if not one.
  const std::vector<std::int64_t>& get_int_list(std::string_view name) const {
    return get_as<std::vector<std::int64_t>>(name, "a list of integers");
  }
  /// A real_list parameter. @throws std::out_of_range if missing; std::invalid_argument if not one.
  const std::vector<double>& get_real_list(std::string_view name) const {
    return get_as<std::vector<double>>(name, "a list of numbers");
  }

  /// (name, value) pairs sorted by name.
  const std::vector<std::pair<std::string, ParameterValue>>& values() const { return values_; }
  /// Canonical key "a=1;b=0.5;c=laplace" (all parameters, sorted by name, but those at an unkeyed
  /// default: ParameterSpec::keyed_at_default).
  const std::string& key() const { return key_; }
  /// Key restricted to the data factors (empty if there are none).
  const std::string& data_key() const { return data_key_; }
  /// The (name, canonical default) pairs this cell leaves out of its keys at those values.
  const std::vector<std::pair<std::string, std::string>>& unkeyed_defaults() const { return unkeyed_defaults_; }
  /// Folder of the config the cell comes from (absolute; empty for cells read back from a results
  /// file). Relative data paths are resolved against it. Not part of the key.
  const std::string& config_dir() const { return config_dir_; }
  /// Set by the engine when it expands a config.
  void set_config_dir(std::string dir) { config_dir_ = std::move(dir); }
  /// The cell restricted to its data factors (what generate() sees): its key() is data_key(),
  /// its cell_id() and data_id() are data_id(); the config folder is kept.
  Cell data_cell() const {
    std::vector<std::string> names;
    for (const auto& [name, value] : data_values_) names.push_back(name);
    Cell c(data_values_, names, unkeyed_defaults_);
    c.config_dir_ = config_dir_;
    return c;
  }
  /// FNV-1a-64 of key(): the cell's identity in results files; keys the noise and calibration
  /// streams unless the cell has stream-neutral parameters (stream_id).
  std::uint64_t cell_id() const { return cell_id_; }
  /// FNV-1a-64 of data_key(): keys the data stream (common random numbers across method factors).
  std::uint64_t data_id() const { return data_id_; }
  /// Keys the noise and calibration streams: FNV-1a-64 of key() without the stream-neutral
  /// parameters (ParameterSpec::stream_neutral; set by the engine with set_stream_neutral). Equal
  /// to cell_id() for a cell without such parameters.
  std::uint64_t stream_id() const { return stream_id_; }
  /// Leave the parameters named in `names` out of stream_id() (the engine, from the experiment's
  /// ParameterSpecs, when it expands a config).
  void set_stream_neutral(const std::vector<std::string>& names) {
    stream_id_ = core::fnv1a_64(
        key_of([&](const std::string& name) { return std::find(names.begin(), names.end(), name) == names.end(); }));
  }

 private:
  template <class T>
  const T& get_as(std::string_view name, const char* what) const {
    const ParameterValue& v = get(name);
    if (const auto* x = std::get_if<T>(&v)) return *x;
    throw std::invalid_argument("Cell: parameter '" + std::string(name) + "' is not " + what);
  }
  /// The canonical key "a=1;b=0.5" of the parameters `include(name)` accepts, sorted by name,
  /// without those at an unkeyed default (the one rule behind key(), data_key() and stream_id()).
  template <class Include>
  std::string key_of(Include&& include) const {
    std::string key;
    for (const auto& [name, value] : values_) {
      if (!include(name)) continue;
      const std::string text = format_parameter_value(value);
      const bool unkeyed = std::find(unkeyed_defaults_.begin(), unkeyed_defaults_.end(),
                                     std::pair<std::string, std::string>(name, text)) != unkeyed_defaults_.end();
      if (!unkeyed) key += (key.empty() ? "" : ";") + name + "=" + text;
    }
    return key;
  }
  const ParameterValue* find(std::string_view name) const {
    auto it = std::lower_bound(values_.begin(), values_.end(), name,
                               [](const auto& a, std::string_view n) { return a.first < n; });
    return (it != values_.end() && it->first == name) ? &it->second : nullptr;
  }

  std::vector<std::pair<std::string, ParameterValue>> values_;
  std::vector<std::pair<std::string, ParameterValue>> data_values_;  // the data factors, sorted by name
  std::vector<std::pair<std::string, std::string>> unkeyed_defaults_;
  std::string key_;
  std::string data_key_;
  std::string config_dir_;
  std::uint64_t cell_id_ = 0;
  std::uint64_t data_id_ = 0;
  std::uint64_t stream_id_ = 0;
};

inline std::vector<std::pair<std::string, std::string>> unkeyed_defaults(const std::vector<ParameterSpec>& specs) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& spec : specs) {
    if (spec.keyed_at_default) continue;
    if (!spec.default_value) {
      throw std::logic_error("parameter '" + spec.name + "': keyed_at_default = false needs a default_value");
    }
    out.emplace_back(spec.name, format_parameter_value(*spec.default_value));
  }
  return out;
}

/// Placeholder for experiments without a data step or without per-cell set-up.
struct Nothing {};

/// Writes one replicate's metrics by name into the engine's buffer, checked against the declared
/// layout (Experiment::metrics(cell)): an unknown name, a scalar write to a vector metric, a
/// vector of the wrong length or a component out of range throws std::logic_error naming the
/// metric (the replicate is then recorded as failed: it is a bug of the experiment). A metric or
/// component that is not written stays NaN. Not thread-safe (one writer per replicate).
class MetricWriter {
 public:
  /// `out` has the total size of `specs` (the engine prefills it with NaN).
  /// @throws std::logic_error if the sizes disagree.
  MetricWriter(std::span<const MetricSpec> specs, std::span<double> out) : specs_(specs), out_(out) {
    std::size_t total = 0;
    for (const auto& s : specs_) total += s.size;
    if (total != out_.size()) {
      throw std::logic_error("MetricWriter: the buffer has " + std::to_string(out_.size()) +
                             " values but the metrics need " + std::to_string(total));
    }
  }

  /// A scalar metric (declared with size 1 and is_vector false).
  void set(std::string_view name, double value) {
    const auto [spec, at] = find(name);
    if (spec->is_vector || spec->size != 1) {
      throw std::logic_error("MetricWriter: metric '" + std::string(name) + "' is a vector of " +
                             std::to_string(spec->size) + " components; write it with a component index or a span");
    }
    out_[at] = value;
  }

  /// Component `component` of a vector metric.
  void set(std::string_view name, std::size_t component, double value) {
    const auto [spec, at] = find(name);
    if (component >= spec->size) {
      throw std::logic_error("MetricWriter: component " + std::to_string(component) + " of metric '" +
                             std::string(name) + "' is out of range (it has " + std::to_string(spec->size) +
                             " components)");
    }
    out_[at + component] = value;
  }

  /// Every component of a metric at once; `values` must have its declared size.
  void set(std::string_view name, std::span<const double> values) {
    auto slot = components(name);
    if (values.size() != slot.size()) {
      throw std::logic_error("MetricWriter: metric '" + std::string(name) + "' has " + std::to_string(slot.size()) +
                             " components but " + std::to_string(values.size()) + " values were written");
    }
    std::copy(values.begin(), values.end(), slot.begin());
  }

  /// The components of a metric, to be filled in place (e.g. a histogram).
  std::span<double> components(std::string_view name) {
    const auto [spec, at] = find(name);
    return out_.subspan(at, spec->size);
  }

 private:
  std::pair<const MetricSpec*, std::size_t> find(std::string_view name) const {
    std::size_t at = 0;
    for (const auto& s : specs_) {
      if (s.name == name) return {&s, at};
      at += s.size;
    }
    std::string names;
    for (const auto& s : specs_) names += (names.empty() ? "" : ", ") + s.name;
    throw std::logic_error("MetricWriter: the experiment writes an undeclared metric '" + std::string(name) +
                           "' (declared: " + names + ")");
  }
  std::span<const MetricSpec> specs_;
  std::span<double> out_;
};

/// Calibration shared by cells (docs/architecture.md §3.5): numbers that are a pure function of
/// a key — e.g. the Monte Carlo ridge of an SSP mechanism, which depends only on (kind, p,
/// bounds, ε, δ, draws, quantile), not on n, the prior or the cell — computed once per process by
/// the first cell whose prepare() asks, and reused by every other cell with the same key. The
/// engine owns one per run and passes it to prepare(). `compute` must depend on nothing but the
/// key (draw from a stream seeded by the key, never by the cell), so the value is the same
/// whichever cell asks first, on any thread, shard or resumption. Thread-safe.
class SharedCalibration {
 public:
  /// The value stored under `key`, computing it with `compute()` (→ std::vector<double>) if no
  /// cell has yet. Concurrent callers with the same key wait for the first; an exception from
  /// `compute` propagates and leaves the key uncomputed.
  template <class F>
  std::vector<double> get(const std::string& key, F&& compute) {
    std::shared_ptr<Entry> entry;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& slot = entries_[key];
      if (!slot) slot = std::make_shared<Entry>();
      entry = slot;
    }
    std::call_once(entry->once, [&] { entry->value = compute(); });
    return entry->value;
  }

  /// Number of keys asked for so far.
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

 private:
  struct Entry {
    std::once_flag once;
    std::vector<double> value;
  };
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Entry>, std::less<>> entries_;
};

/// An experiment (see the file comment for the life cycle), type-erased: the engine calls these.
/// Experiments derive from TypedExperiment<Prepared, Data>, which implements the *_erased members
/// with the one cast between the engine's handles and the experiment's types. Implementations
/// must be stateless: every const member may be called from several threads at once, and
/// everything a cell needs (ridges, thresholds, null distributions, loaded data) is computed by
/// prepare() and cached by the engine.
class Experiment {
 public:
  virtual ~Experiment() = default;

  /// Registered name, used as `experiment:` in configs.
  virtual std::string name() const = 0;

  /// Every parameter the experiment reads. Parameters with `data_factor = true` are the data
  /// factors (the only ones generate() may read); the others are method parameters.
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

  /// Metric layout for a cell (analyse() writes the metrics by name through a MetricWriter).
  virtual std::vector<MetricSpec> metrics(const Cell& cell) const = 0;

  /// True if the experiment simulates a data set per replicate (generate()); false if every
  /// replicate analyses fixed data (loaded by prepare()). The engine shares a generated data set
  /// between the cells of one data key; without a data step it runs every cell on its own.
  virtual bool has_data_step() const = 0;

  /// Optional cost model for the ETA of `dpmu run` (runtime::WorkEstimate): the predicted cost
  /// of generating one replicate's data set for `data_cell` (data factors only), in arbitrary
  /// units shared with analyse_cost (e.g. nanoseconds of one core). Only ratios matter. NaN
  /// (the default) means unknown; if every cost of a study is unknown, every cell replicate
  /// counts the same.
  virtual double generate_cost(const Cell& /*data_cell*/) const { return std::numeric_limits<double>::quiet_NaN(); }

  /// Optional cost model: predicted cost of analysing one replicate of `cell` (units of
  /// generate_cost). NaN (the default) means unknown.
  virtual double analyse_cost(const Cell& /*cell*/) const { return std::numeric_limits<double>::quiet_NaN(); }

  /// Optional work shared across data keys (off by default; docs/architecture.md §3.5). Data
  /// keys whose data cells give the same non-empty key here form one generation group, run as
  /// one engine task: each replicate of the group is simulated by one generate_shared() call
  /// from the stream RngStream(master_seed, FNV-1a("generation:" + key), r, data) (e.g. one
  /// predictor matrix for several |T| and nested n). The experiment must guarantee that a data
  /// key's data set has the law generate() would give it and does not depend on which other data
  /// keys are in the call (a cell replayed alone gets the same data set); only the joint law
  /// across data keys changes, so a non-empty key must be a config choice, documented as such.
  /// "" (the default): every data key is generated on its own by generate().
  virtual std::string generation_key(const Cell& /*data_cell*/) const { return {}; }

  /// Optional cost model: the predicted cost of one generate_shared() call for these data cells
  /// (units of generate_cost). NaN (the default): the sum of their generate_cost.
  virtual double generate_shared_cost(std::span<const Cell> /*data_cells*/) const {
    return std::numeric_limits<double>::quiet_NaN();
  }

  /// Engine side of TypedExperiment::prepare.
  virtual std::shared_ptr<const void> prepare_erased(const Cell& cell, core::RngStream& calibration,
                                                     SharedCalibration& shared) const = 0;
  /// Engine side of TypedExperiment::calibration_outputs.
  virtual std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs_erased(
      const Cell& cell, const void* prepared) const = 0;
  /// Engine side of TypedExperiment::generate (`data_cell` holds the data factors only).
  virtual std::shared_ptr<const void> generate_erased(const Cell& data_cell, core::RngStream& data) const = 0;
  /// Engine side of TypedExperiment::generate_shared: one data set per data cell, in order.
  virtual std::vector<std::shared_ptr<const void>> generate_shared_erased(std::span<const Cell> data_cells,
                                                                          core::RngStream& data) const = 0;
  /// Engine side of TypedExperiment::analyse.
  virtual void analyse_erased(const Cell& cell, const void* prepared, const void* data, core::RngStream& noise,
                              MetricWriter& metrics) const = 0;
};

/// The base class of every experiment: `Prepared` is what prepare() computes once per cell (use
/// Nothing if there is nothing), `Data` what generate() simulates once per (data key, replicate)
/// (Nothing for experiments on fixed data). The engine owns both; the experiment sees them as
/// const references of its own types.
template <class Prepared, class Data = Nothing>
class TypedExperiment : public Experiment {
 public:
  bool has_data_step() const final { return !std::is_same_v<Data, Nothing>; }

  /// Shared read-only per-cell set-up (a critical-value table, a ridge, a loaded data set),
  /// computed once per cell from the calibration stream; what several cells share (a ridge that
  /// depends on the mechanism only) goes through `shared` (SharedCalibration) and is computed
  /// once per run. Default (Prepared = Nothing): nothing.
  /// @throws anything: recorded in /errors for every replicate of the cell (stage "prepare").
  virtual Prepared prepare(const Cell& /*cell*/, core::RngStream& /*calibration*/,
                           SharedCalibration& /*shared*/) const {
    if constexpr (std::is_same_v<Prepared, Nothing>) {
      return Prepared{};
    } else {
      throw std::logic_error(name() + ": prepare() is not implemented");
    }
  }

  /// Optional: numbers that describe a prepare() result (e.g. a critical-value table), stored
  /// in the results file as /calibration/<name>, float64 [cells, k] padded with NaN. Called once
  /// per cell, right after prepare(). Default: none.
  virtual std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(
      const Cell& /*cell*/, const Prepared& /*prepared*/) const {
    return {};
  }

  /// The data set of one replicate, from the data stream. `data_cell` holds only the data
  /// factors (reading another parameter throws std::out_of_range), so every cell with the same
  /// data factors analyses the same data set. Default (Data = Nothing): nothing.
  /// @throws anything: recorded for every cell of the data key at this replicate (stage "generate").
  virtual Data generate(const Cell& /*data_cell*/, core::RngStream& /*data*/) const {
    if constexpr (std::is_same_v<Data, Nothing>) {
      return Data{};
    } else {
      throw std::logic_error(name() + ": generate() is not implemented");
    }
  }

  /// The data sets of one replicate of a generation group (Experiment::generation_key), one per
  /// data cell in the given order, from the group's stream. Only called when generation_key() is
  /// non-empty. @throws anything: recorded for every cell of the group (stage "generate").
  virtual std::vector<Data> generate_shared(std::span<const Cell> /*data_cells*/, core::RngStream& /*data*/) const {
    throw std::logic_error(name() + ": generation_key() is set but generate_shared() is not implemented");
  }

  /// Analyse one replicate's data with the cell's method parameters and its noise stream; write
  /// the metrics by name. Runs concurrently from several threads; must not modify shared state.
  /// @throws anything: recorded (stage "replicate"); the replicate's metrics become NaN.
  virtual void analyse(const Cell& cell, const Prepared& prepared, const Data& data, core::RngStream& noise,
                       MetricWriter& metrics) const = 0;

  std::shared_ptr<const void> prepare_erased(const Cell& cell, core::RngStream& calibration,
                                             SharedCalibration& shared) const final {
    return std::make_shared<const Prepared>(prepare(cell, calibration, shared));
  }
  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs_erased(
      const Cell& cell, const void* prepared) const final {
    return calibration_outputs(cell, *static_cast<const Prepared*>(prepared));
  }
  std::shared_ptr<const void> generate_erased(const Cell& data_cell, core::RngStream& data) const final {
    return std::make_shared<const Data>(generate(data_cell, data));
  }
  std::vector<std::shared_ptr<const void>> generate_shared_erased(std::span<const Cell> data_cells,
                                                                  core::RngStream& data) const final {
    std::vector<Data> sets = generate_shared(data_cells, data);
    if (sets.size() != data_cells.size()) {
      throw std::logic_error(name() + ": generate_shared() returned " + std::to_string(sets.size()) +
                             " data sets for " + std::to_string(data_cells.size()) + " data cells");
    }
    std::vector<std::shared_ptr<const void>> out;
    out.reserve(sets.size());
    for (auto& d : sets) out.push_back(std::make_shared<const Data>(std::move(d)));
    return out;
  }
  void analyse_erased(const Cell& cell, const void* prepared, const void* data, core::RngStream& noise,
                      MetricWriter& metrics) const final {
    analyse(cell, *static_cast<const Prepared*>(prepared), *static_cast<const Data*>(data), noise, metrics);
  }
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
