#include "dpmu/runtime/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "dpmu/runtime/ledger.hpp"

namespace dpmu::runtime {

namespace {

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

/// Absolute folder of the config file `source` (the working directory for a bare file name).
std::string config_dir_of(const std::string& source) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(source).parent_path();
  fs::path dir = parent.empty() ? fs::current_path(ec) : fs::absolute(parent, ec);
  if (ec) dir = parent;
  return dir.lexically_normal().string();
}

constexpr std::int64_t kDefaultBlockSize = 250;
constexpr double kDefaultMaxFailureFraction = 0.05;
/// Names of /cells datasets and of the columns of the tidy tables (tidy.hpp) besides the parameters.
const std::set<std::string> kReservedNames = {
    "cell_id",   "data_id", "key",  "cell_key", "data_key", "metric", "component", "component_label",
    "replicate", "value",   "mean", "sd",       "mcse",     "q025",   "q250",      "q500",
    "q750",      "q975",    "n_ok", "n_nan"};

/// Collects every problem; each message is "source:line: key: message".
class Diagnostics {
 public:
  explicit Diagnostics(std::string source) : source_(std::move(source)) {}
  void add(const YAML::Node& node, const std::string& key, const std::string& message) {
    add(node.IsDefined() ? node.Mark().line + 1 : 0, key, message);
  }
  void add(int line, const std::string& key, const std::string& message) {
    std::string loc = line > 0 ? fmt::format("{}:{}", source_, line) : source_;
    messages_.push_back(key.empty() ? fmt::format("{}: {}", loc, message)
                                    : fmt::format("{}: {}: {}", loc, key, message));
  }
  bool empty() const { return messages_.empty(); }
  std::size_t size() const { return messages_.size(); }
  [[noreturn]] void raise() const { throw ConfigError(messages_); }

 private:
  std::string source_;
  std::vector<std::string> messages_;
};

const char* node_kind(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Null:
      return "empty";
    default:
      return "undefined";
  }
}

std::optional<std::int64_t> parse_int(const std::string& s) {
  std::int64_t v = 0;
  const char* b = s.data();
  if (!s.empty() && s[0] == '+') ++b;
  auto [p, ec] = std::from_chars(b, s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || b == s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_real(const std::string& s) {
  double v = 0;
  const char* b = s.data();
  if (!s.empty() && s[0] == '+') ++b;
  auto [p, ec] = std::from_chars(b, s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || b == s.data() + s.size()) return std::nullopt;
  return v;
}

/// Largest magnitude below which every integer is exactly a double (2^53).
constexpr double kExactIntegerLimit = 9007199254740992.0;

/// An integer written in decimal ("250", "+3") or as a real with an exact integer value below 2^53
/// ("1e5", "2.5e3", "100.0"): docs/configs.md promises that 1e5-style integers work everywhere.
std::optional<std::int64_t> parse_exact_int(const std::string& s) {
  if (auto v = parse_int(s)) return v;
  auto r = parse_real(s);
  if (r && std::isfinite(*r) && *r == std::trunc(*r) && std::abs(*r) <= kExactIntegerLimit) {
    return static_cast<std::int64_t>(*r);
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_uint(const std::string& s) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && p == s.data() + s.size() && !s.empty()) return v;
  if (auto i = parse_exact_int(s); i && *i >= 0) return static_cast<std::uint64_t>(*i);
  return std::nullopt;
}

std::optional<ParameterValue> parse_scalar_value(const YAML::Node& node, const ParameterSpec& spec, ParameterType type,
                                                 const std::string& key, Diagnostics& diag);

/// A list parameter's value: a YAML sequence of scalars of its item type. A string item may not
/// contain a comma (the canonical text of a list joins its items with ", ").
std::optional<ParameterValue> parse_list(const YAML::Node& node, const ParameterSpec& spec, const std::string& key,
                                         Diagnostics& diag) {
  if (!node.IsSequence()) {
    diag.add(
        node, key,
        fmt::format("expected a list (e.g. [a, b]) for the list parameter {}, got {}", spec.name, node_kind(node)));
    return std::nullopt;
  }
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
  std::vector<std::string> strings;
  bool ok = true;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string item_key = fmt::format("{}[{}]", key, i);
    auto v = parse_scalar_value(node[i], spec, item_type(spec.type), item_key, diag);
    if (!v) {
      ok = false;
      continue;
    }
    if (auto* x = std::get_if<std::int64_t>(&*v)) ints.push_back(*x);
    if (auto* x = std::get_if<double>(&*v)) reals.push_back(*x);
    if (auto* x = std::get_if<std::string>(&*v)) {
      if (x->find(',') != std::string::npos) {
        diag.add(node[i], item_key,
                 fmt::format("'{}' contains a comma; list items cannot (give each as its own item)", *x));
        ok = false;
      }
      strings.push_back(*x);
    }
  }
  if (!ok) return std::nullopt;
  switch (spec.type) {
    case ParameterType::integer_list:
      return ParameterValue(std::move(ints));
    case ParameterType::real_list:
      return ParameterValue(std::move(reals));
    default:
      return ParameterValue(std::move(strings));
  }
}

/// Parse a node as a value of the given spec (a scalar, or a sequence for a list type); on
/// failure add a diagnostic and return nullopt.
std::optional<ParameterValue> parse_value(const YAML::Node& node, const ParameterSpec& spec, const std::string& key,
                                          Diagnostics& diag) {
  if (is_list_type(spec.type)) return parse_list(node, spec, key, diag);
  return parse_scalar_value(node, spec, spec.type, key, diag);
}

/// Parse a scalar node as a value of `type` (spec.type, or its item type); on failure add a
/// diagnostic and return nullopt.
std::optional<ParameterValue> parse_scalar_value(const YAML::Node& node, const ParameterSpec& spec, ParameterType type,
                                                 const std::string& key, Diagnostics& diag) {
  if (!node.IsScalar()) {
    diag.add(node, key, fmt::format("expected a single value, got {}", node_kind(node)));
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  ParameterValue value;
  switch (type) {
    case ParameterType::integer: {
      auto v = parse_exact_int(s);  // reals with an exact integer value are integers, e.g. 1e5
      if (!v) {
        diag.add(node, key, fmt::format("'{}' is not an integer", s));
        return std::nullopt;
      }
      value = *v;
      break;
    }
    case ParameterType::real: {
      auto v = parse_real(s);
      if (!v || !std::isfinite(*v)) {
        diag.add(node, key, fmt::format("'{}' is not a finite number", s));
        return std::nullopt;
      }
      value = *v == 0.0 ? 0.0 : *v;  // -0 and 0 are one value (and one cell key)
      break;
    }
    case ParameterType::string:
      value = spec.path ? normalize_path_value(s) : s;
      break;
    case ParameterType::integer_list:
    case ParameterType::real_list:
    case ParameterType::string_list:
      diag.add(node, key, "a list item cannot be a list");
      return std::nullopt;
  }
  return value;
}

bool check_scalar_value(const ParameterValue& value, const ParameterSpec& spec, const YAML::Node& node,
                        const std::string& key, Diagnostics& diag);

/// Check a value against its spec's range or allowed strings (every item of a list).
bool check_value(const ParameterValue& value, const ParameterSpec& spec, const YAML::Node& node, const std::string& key,
                 Diagnostics& diag) {
  bool ok = true;
  if (const auto* v = std::get_if<std::vector<std::int64_t>>(&value)) {
    for (auto x : *v) ok = check_scalar_value(x, spec, node, key, diag) && ok;
    return ok;
  }
  if (const auto* v = std::get_if<std::vector<double>>(&value)) {
    for (auto x : *v) ok = check_scalar_value(x, spec, node, key, diag) && ok;
    return ok;
  }
  if (const auto* v = std::get_if<std::vector<std::string>>(&value)) {
    for (const auto& x : *v) ok = check_scalar_value(x, spec, node, key, diag) && ok;
    return ok;
  }
  return check_scalar_value(value, spec, node, key, diag);
}

/// Check a scalar (or one list item) against its spec's range or allowed strings.
bool check_scalar_value(const ParameterValue& value, const ParameterSpec& spec, const YAML::Node& node,
                        const std::string& key, Diagnostics& diag) {
  if (std::holds_alternative<std::string>(value)) {
    const auto& s = std::get<std::string>(value);
    if (!spec.allowed.empty() && std::find(spec.allowed.begin(), spec.allowed.end(), s) == spec.allowed.end()) {
      diag.add(node, key,
               fmt::format("'{}' is not allowed; {} must be one of {}", s, spec.name, join(spec.allowed, ", ")));
      return false;
    }
    return true;
  }
  const double x = std::holds_alternative<double>(value) ? std::get<double>(value)
                                                         : static_cast<double>(std::get<std::int64_t>(value));
  const bool low_ok = !spec.min || (spec.min_inclusive ? x >= *spec.min : x > *spec.min);
  const bool high_ok = !spec.max || (spec.max_inclusive ? x <= *spec.max : x < *spec.max);
  if (!low_ok || !high_ok) {
    std::string req;
    if (spec.min) req += fmt::format("{} {}", spec.min_inclusive ? ">=" : ">", format_parameter_value(*spec.min));
    if (spec.max)
      req += fmt::format("{}{} {}", req.empty() ? "" : " and ", spec.max_inclusive ? "<=" : "<",
                         format_parameter_value(*spec.max));
    diag.add(node, key,
             fmt::format("value {} is out of range; {} must be {}", format_parameter_value(value), spec.name, req));
    return false;
  }
  return true;
}

/// True if the two values are numerically the same scalar (1 and 1.0), or equal otherwise.
bool is_number(const ParameterValue& v) {
  return std::holds_alternative<std::int64_t>(v) || std::holds_alternative<double>(v);
}

bool values_equal(const ParameterValue& a, const ParameterValue& b) {
  if (!is_number(a) || !is_number(b)) return a == b;
  auto num = [](const ParameterValue& v) {
    return std::holds_alternative<double>(v) ? std::get<double>(v) : static_cast<double>(std::get<std::int64_t>(v));
  };
  return num(a) == num(b);
}

/// Largest number of values of one range and of cells of one study: beyond these a config is refused
/// before anything is built (a 10^10-cell grid would otherwise exhaust memory after many seconds).
constexpr std::int64_t kMaxRangeValues = 1000000;
// Measured (docs/performance.md "Validation memory"): a 10^5-cell linear_design grid validates in
// 12 s and 1.1 GB; the limit is what was measured, not an extrapolation.
constexpr double kMaxCells = 100000;

/// Report values of one axis that are numerically equal after parsing (0 and -0.0, 1 and 1.0, a
/// repeated string): each would make the same cell twice. `labels[i]` names value i in messages.
void check_repeated_values(const std::vector<ParameterValue>& values, const std::vector<std::string>& labels,
                           const std::vector<std::string>& texts, const std::vector<int>& lines,
                           const ParameterSpec& spec, Diagnostics& diag) {
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto less = [&](std::size_t a, std::size_t b) {
    const auto& x = values[a];
    const auto& y = values[b];
    if (!is_number(x) || !is_number(y)) return std::tie(x, a) < std::tie(y, b);
    auto num = [](const ParameterValue& v) {
      return std::holds_alternative<double>(v) ? std::get<double>(v) : static_cast<double>(std::get<std::int64_t>(v));
    };
    return num(x) != num(y) ? num(x) < num(y) : a < b;
  };
  std::sort(order.begin(), order.end(), less);
  std::size_t reported = 0;
  for (std::size_t k = 1; k < order.size() && reported < 5; ++k) {
    const std::size_t first = order[k - 1], again = order[k];
    if (!values_equal(values[first], values[again])) continue;
    // the earlier occurrence (by position) is the first; report the later one
    const std::size_t a = std::min(first, again), b = std::max(first, again);
    diag.add(lines[b], labels[b],
             fmt::format("'{}' repeats {} ('{}'): both are the value {} of {}; each value of an axis may appear once "
                         "(it would make the same cells twice)",
                         texts[b], labels[a], texts[a], format_parameter_value(values[b]), spec.name));
    ++reported;
  }
}

/// Values of one grid axis: a scalar, a list, or a range map.
std::vector<ParameterValue> parse_axis(const YAML::Node& node, const ParameterSpec& spec, const std::string& key,
                                       Diagnostics& diag, bool in_zip = false) {
  std::vector<ParameterValue> out;
  std::vector<std::string> labels, texts;
  std::vector<int> lines;
  auto add_checked = [&](const ParameterValue& v, const YAML::Node& at, const std::string& label) {
    if (check_value(v, spec, at, key, diag)) {
      out.push_back(v);
      labels.push_back(label);
      texts.push_back(at.IsScalar() ? at.Scalar() : format_parameter_value(v));
      lines.push_back(at.IsDefined() ? at.Mark().line + 1 : 0);
    }
  };
  if (node.IsScalar()) {
    if (auto v = parse_value(node, spec, key, diag)) add_checked(*v, node, key);
  } else if (node.IsSequence()) {
    if (node.size() == 0) diag.add(node, key, "empty list of values");
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string label = fmt::format("{}[{}]", key, i);
      if (auto v = parse_value(node[i], spec, label, diag)) add_checked(*v, node[i], label);
    }
    if (!in_zip) check_repeated_values(out, labels, texts, lines, spec, diag);  // zip: rows must differ (below)
  } else if (node.IsMap()) {
    if (spec.type != ParameterType::integer && spec.type != ParameterType::real) {
      diag.add(node, key, "a range needs a numeric parameter");
      return out;
    }
    std::optional<double> from, to, step;
    std::optional<std::int64_t> count;
    std::string scale = "linear";
    bool ok = true;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string k = it->first.as<std::string>();
      const YAML::Node& v = it->second;
      const std::string sub = key + "." + k;
      auto real = [&](std::optional<double>& dst) {
        auto r = v.IsScalar() ? parse_real(v.Scalar()) : std::nullopt;
        if (!r || !std::isfinite(*r)) {
          diag.add(v, sub, "expected a finite number");
          ok = false;
        } else {
          dst = *r;
        }
      };
      if (k == "from")
        real(from);
      else if (k == "to")
        real(to);
      else if (k == "step")
        real(step);
      else if (k == "count") {
        auto c = v.IsScalar() ? parse_exact_int(v.Scalar()) : std::nullopt;
        if (!c || *c < 1) {
          diag.add(v, sub, "expected an integer >= 1");
          ok = false;
        } else if (*c > kMaxRangeValues) {
          diag.add(v, sub, fmt::format("{} values; a range has at most {}", *c, kMaxRangeValues));
          ok = false;
        } else {
          count = *c;
        }
      } else if (k == "scale") {
        scale = v.IsScalar() ? v.Scalar() : "";
        if (scale != "linear" && scale != "log") {
          diag.add(v, sub, "expected 'linear' or 'log'");
          ok = false;
        }
      } else {
        diag.add(it->first, sub, "unknown key in a range; allowed keys are from, to, count, step, scale");
        ok = false;
      }
    }
    if (!ok) return out;
    if (!from || !to || (count.has_value() == step.has_value())) {
      diag.add(node, key, "a range needs 'from', 'to' and exactly one of 'count' or 'step'");
      return out;
    }
    std::vector<double> xs;
    if (count) {
      if (scale == "log" && (*from <= 0 || *to <= 0)) {
        diag.add(node, key, "a log-scale range needs from > 0 and to > 0");
        return out;
      }
      for (std::int64_t i = 0; i < *count; ++i) {
        const double t = *count == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(*count - 1);
        xs.push_back(scale == "log" ? std::exp(std::log(*from) + t * (std::log(*to) - std::log(*from)))
                                    : *from + t * (*to - *from));
      }
      if (*count > 1) xs.back() = *to;
      xs.front() = *from;
    } else {
      if (scale != "linear") {
        diag.add(node, key, "'step' ranges are linear; use 'count' with scale: log");
        return out;
      }
      if (!(*step > 0) || *to < *from) {
        diag.add(node, key, "a 'step' range needs step > 0 and to >= from");
        return out;
      }
      const double span = std::floor((*to - *from) / *step * (1 + 1e-12));
      if (!(span < static_cast<double>(kMaxRangeValues))) {
        diag.add(node, key, fmt::format("range has {:.0f} values; a range has at most {}", span + 1, kMaxRangeValues));
        return out;
      }
      const auto k = static_cast<std::int64_t>(span);
      for (std::int64_t i = 0; i <= k; ++i) xs.push_back(*from + static_cast<double>(i) * *step);
    }
    for (double x : xs) {
      ParameterValue v = x == 0.0 ? 0.0 : x;
      if (spec.type == ParameterType::integer) v = static_cast<std::int64_t>(std::llround(x));
      if (!out.empty() && values_equal(out.back(), v)) {
        diag.add(
            node, key,
            spec.type == ParameterType::integer
                ? fmt::format("range gives the value {} twice after rounding to integers", format_parameter_value(v))
                : fmt::format("range gives the value {} twice (from = to?); each value of an axis may appear once",
                              format_parameter_value(v)));
        return {};
      }
      add_checked(v, node, key);
    }
  } else {
    diag.add(node, key, fmt::format("expected a value, a list or a range, got {}", node_kind(node)));
  }
  return out;
}

using Assignment = std::vector<std::pair<std::string, ParameterValue>>;

/// One exclusion rule: a cell matches if, for every named parameter, its value is one of the listed.
struct ExcludeRule {
  std::vector<std::pair<std::string, std::vector<ParameterValue>>> conditions;
  int line = 0;
};

struct ExperimentInfo {
  std::map<std::string, ParameterSpec> specs;
  std::vector<std::string> order;
  const ParameterSpec* find(const std::string& n) const {
    auto it = specs.find(n);
    return it == specs.end() ? nullptr : &it->second;
  }
};

std::vector<ExcludeRule> parse_excludes(const YAML::Node& node, const std::string& key, const ExperimentInfo& info,
                                        Diagnostics& diag) {
  std::vector<ExcludeRule> rules;
  if (!node.IsSequence()) {
    diag.add(node, key, fmt::format("expected a list of maps, got {}", node_kind(node)));
    return rules;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& r = node[i];
    const std::string rk = fmt::format("{}[{}]", key, i);
    if (!r.IsMap() || r.size() == 0) {
      diag.add(r, rk, "expected a map of parameter: value(s)");
      continue;
    }
    ExcludeRule rule;
    rule.line = r.Mark().line + 1;
    for (auto it = r.begin(); it != r.end(); ++it) {
      const std::string name = it->first.as<std::string>();
      const ParameterSpec* spec = info.find(name);
      if (spec == nullptr) {
        diag.add(it->first, rk + "." + name,
                 fmt::format("unknown parameter; parameters are {}", join(info.order, ", ")));
        continue;
      }
      std::vector<ParameterValue> vals;
      const YAML::Node& v = it->second;
      if (v.IsSequence()) {
        for (std::size_t j = 0; j < v.size(); ++j) {
          if (auto pv = parse_value(v[j], *spec, rk + "." + name, diag)) vals.push_back(*pv);
        }
      } else if (auto pv = parse_value(v, *spec, rk + "." + name, diag)) {
        vals.push_back(*pv);
      }
      rule.conditions.emplace_back(name, std::move(vals));
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

bool matches(const ExcludeRule& rule, const std::map<std::string, ParameterValue>& cell) {
  for (const auto& [name, vals] : rule.conditions) {
    auto it = cell.find(name);
    if (it == cell.end()) return false;
    if (std::none_of(vals.begin(), vals.end(), [&](const ParameterValue& v) { return values_equal(v, it->second); })) {
      return false;
    }
  }
  return true;
}

/// An axis of a block: one or more parameters (zip) whose values move together.
struct Axis {
  std::vector<std::string> names;
  std::vector<int> lines;
  std::vector<std::vector<ParameterValue>> rows;  // rows[i][j]: value of names[j] in position i
};

struct CellPlan {
  std::map<std::string, ParameterValue> values;
  std::map<std::string, int> lines;
  int block_line = 0;
};

void check_unknown_keys(const YAML::Node& map, const std::set<std::string>& allowed, const std::string& prefix,
                        Diagnostics& diag) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string k = it->first.as<std::string>();
    if (!allowed.count(k)) {
      std::vector<std::string> names(allowed.begin(), allowed.end());
      diag.add(it->first, prefix + k, fmt::format("unknown key; allowed keys are {}", join(names, ", ")));
    }
  }
}

void check_duplicate_keys(const YAML::Node& map, const std::string& prefix, Diagnostics& diag) {
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string k = it->first.Scalar();
    if (!seen.insert(k).second) diag.add(it->first, prefix + k, "key given twice");
  }
}

/// StudySpec::data_groups: cells with one data key share a group, and so do the data keys of
/// one generation group (Experiment::generation_key) (in cell order, groups in the order of their
/// first cell); without a data step every cell is a group of its own.
std::vector<std::vector<std::size_t>> group_cells_by_data_key(const StudySpec& study) {
  std::vector<std::vector<std::size_t>> groups;
  std::map<std::string, std::size_t> group_of_key;
  const bool shared = study.experiment->has_data_step();
  for (std::size_t c = 0; c < study.cells.size(); ++c) {
    if (!shared) {
      groups.push_back({c});
      continue;
    }
    const std::string generation = study.experiment->generation_key(study.cells[c].data_cell());
    // "\n" cannot occur in a data key (one line of the study fingerprint): the two kinds never meet
    const std::string key = generation.empty() ? study.cells[c].data_key() : "\ngeneration:" + generation;
    auto [it, fresh] = group_of_key.emplace(key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(c);
  }
  return groups;
}

}  // namespace

ConfigError::ConfigError(std::vector<std::string> messages)
    : std::runtime_error(join(messages, "\n")), messages_(std::move(messages)) {}

std::uint64_t StudySpec::fingerprint() const {
  std::string s = fmt::format("dpmu-study-v1\n{}\n{}\n{}\n{}\n", experiment_name, master_seed, replicates, block_size);
  for (const auto& c : cells) s += c.key() + "\n";
  // The contents of the data files (a study without any keeps the fingerprint it always had).
  for (const auto& f : data_files) s += "data " + f.path + " sha256 " + f.sha256 + "\n";
  return core::fnv1a_64(s);
}

StudySpec load_study(const std::filesystem::path& path, const StudyOverrides& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError({fmt::format("{}: cannot read the config file", path.string())});
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_study(ss.str(), path.string(), overrides);
}

namespace {
/// Step 1: the YAML text as one document whose root is a map with only known keys.
YAML::Node load_root(const std::string& yaml_text, Diagnostics& diag) {
  YAML::Node root;
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(yaml_text);
    if (docs.size() > 1) {
      diag.add(docs[1], "",
               fmt::format("the file holds {} YAML documents (separated by '---'); a study config is one document: "
                           "put each study in its own file",
                           docs.size()));
      diag.raise();
    }
    if (!docs.empty()) root = docs.front();
  } catch (const YAML::DeepRecursion& e) {
    diag.add(e.mark.line + 1, "",
             fmt::format("lists or maps nested more than {} levels deep; a study config needs a few levels "
                         "(docs/configs.md)",
                         e.depth() - 1));
    diag.raise();
  } catch (const YAML::Exception& e) {
    diag.add(e.mark.line + 1, "", "invalid YAML: " + e.msg);
    diag.raise();
  }
  if (!root.IsMap()) {
    diag.add(root, "", "a study config must be a map with keys experiment, master_seed, replicates, parameters, grid");
    diag.raise();
  }
  check_duplicate_keys(root, "", diag);
  check_unknown_keys(root,
                     {"experiment", "description", "master_seed", "replicates", "block_size", "max_failure_fraction",
                      "parameters", "grid", "exclude"},
                     "", diag);

  return root;
}

/// A required scalar key of the root; nullopt (with a diagnostic) if missing or not a scalar.
std::optional<std::string> required_scalar(const YAML::Node& root, const char* key, Diagnostics& diag) {
  const YAML::Node n = root[key];
  if (!n.IsDefined() || n.IsNull()) {
    diag.add(root, key, "missing required key");
    return std::nullopt;
  }
  if (!n.IsScalar()) {
    diag.add(n, key, fmt::format("expected a single value, got {}", node_kind(n)));
    return std::nullopt;
  }
  return n.Scalar();
}

/// A count of the run settings (replicates, block_size) from its text: a whole number from 1 to
/// kMaxReplicates, read in 64 bits (a decimal integer, or a real with an exact integer value such
/// as 1e6). Anything else is reported naming `key`, with the limit for a number that is too large
/// (40000000000 or 1e20, which used to be accepted or called "not an integer").
std::optional<std::int64_t> read_count(const YAML::Node& node, const std::string& text, const char* key,
                                       const char* unit, Diagnostics& diag) {
  const auto v = parse_exact_int(text);
  const auto r = parse_real(text);
  if (v ? (*v < 1) : !(r && std::isfinite(*r) && *r >= 1 && *r == std::trunc(*r))) {
    diag.add(node, key, fmt::format("'{}' is not an integer >= 1", text));
    return std::nullopt;
  }
  if (!v || *v > kMaxReplicates) {
    diag.add(node, key,
             fmt::format("{} is beyond the limit of {} (10^9) {}; use a smaller number", text, kMaxReplicates, unit));
    return std::nullopt;
  }
  return v;
}

/// Step 2: master_seed, replicates (and --replicates), block_size, max_failure_fraction, description.
void read_run_settings(const YAML::Node& root, const StudyOverrides& overrides, StudySpec& study, Diagnostics& diag) {
  if (auto s = required_scalar(root, "master_seed", diag)) {
    if (auto v = parse_uint(*s))
      study.master_seed = *v;
    else
      diag.add(root["master_seed"], "master_seed", fmt::format("'{}' is not an integer in [0, 2^64)", *s));
  }
  if (auto s = required_scalar(root, "replicates", diag)) {
    if (auto v = read_count(root["replicates"], *s, "replicates", "replicates per cell", diag)) study.replicates = *v;
  }
  if (overrides.replicates) {
    if (*overrides.replicates < 1 || *overrides.replicates > kMaxReplicates) {
      diag.add(0, "--replicates",
               fmt::format("{} is out of range; give a whole number from 1 to {} (10^9)", *overrides.replicates,
                           kMaxReplicates));
    } else {
      study.replicates = *overrides.replicates;
    }
  }
  study.block_size = kDefaultBlockSize;
  if (root["block_size"].IsDefined()) {
    const YAML::Node n = root["block_size"];
    if (!n.IsScalar()) {
      diag.add(n, "block_size", "expected an integer >= 1");
    } else if (auto v = read_count(n, n.Scalar(), "block_size", "replicates per block", diag)) {
      study.block_size = *v;
    }
  }
  if (study.replicates > 0) study.block_size = std::min(study.block_size, study.replicates);
  study.max_failure_fraction = kDefaultMaxFailureFraction;
  if (root["max_failure_fraction"].IsDefined()) {
    const YAML::Node n = root["max_failure_fraction"];
    auto v = n.IsScalar() ? parse_real(n.Scalar()) : std::nullopt;
    if (!v || !(*v >= 0 && *v <= 1))
      diag.add(n, "max_failure_fraction", "expected a number in [0, 1]");
    else
      study.max_failure_fraction = *v;
  }
  if (root["description"].IsDefined()) {
    if (!root["description"].IsScalar())
      diag.add(root["description"], "description", "expected a string");
    else
      study.description = root["description"].Scalar();
  }
}

/// Step 3: the experiment (without it nothing else can be checked) and its parameter specs.
ExperimentInfo read_experiment(const YAML::Node& root, StudySpec& study, Diagnostics& diag) {
  ExperimentInfo info;
  if (auto s = required_scalar(root, "experiment", diag)) {
    try {
      study.experiment = &find_experiment(*s);
      study.experiment_name = *s;
    } catch (const std::invalid_argument& e) {
      diag.add(root["experiment"], "experiment", e.what());
    }
  }
  if (study.experiment == nullptr) diag.raise();
  for (auto& spec : study.experiment->parameters()) {
    if (kReservedNames.count(spec.name)) {
      diag.add(
          0, "experiment",
          fmt::format("experiment '{}' declares the reserved parameter name '{}'", study.experiment_name, spec.name));
    }
    info.order.push_back(spec.name);
    study.parameter_names.push_back(spec.name);
    study.parameter_types.push_back(spec.type);
    if (spec.data_factor) study.data_factors.push_back(spec.name);
    info.specs.emplace(spec.name, std::move(spec));
  }
  return info;
}

void report_unknown_parameter(const YAML::Node& at, const std::string& key, const StudySpec& study,
                              const ExperimentInfo& info, Diagnostics& diag) {
  diag.add(at, key,
           fmt::format("unknown parameter of experiment '{}'; parameters are {}", study.experiment_name,
                       join(info.order, ", ")));
}

/// The `parameters:` map: values and the lines they were set on.
struct FixedParameters {
  std::map<std::string, ParameterValue> values;
  std::map<std::string, int> lines;
};

/// Step 4: the fixed parameters (`parameters:`), each parsed and checked against its spec.
FixedParameters read_fixed_parameters(const YAML::Node& root, const StudySpec& study, const ExperimentInfo& info,
                                      Diagnostics& diag) {
  FixedParameters fixed;
  if (root["parameters"].IsDefined() && !root["parameters"].IsNull()) {
    const YAML::Node params = root["parameters"];
    if (!params.IsMap()) {
      diag.add(params, "parameters", fmt::format("expected a map of name: value, got {}", node_kind(params)));
    } else {
      check_duplicate_keys(params, "parameters.", diag);
      for (auto it = params.begin(); it != params.end(); ++it) {
        const std::string name = it->first.as<std::string>();
        const std::string key = "parameters." + name;
        const ParameterSpec* spec = info.find(name);
        if (spec == nullptr) {
          report_unknown_parameter(it->first, key, study, info, diag);
          continue;
        }
        if (auto v = parse_value(it->second, *spec, key, diag)) {
          if (check_value(*v, *spec, it->second, key, diag)) {
            fixed.values[name] = *v;
            fixed.lines[name] = it->second.Mark().line + 1;
          }
        }
      }
    }
  }

  return fixed;
}

/// Step 5: the grid (blocks of axes, zips, ranges, exclusions) expanded into cell plans, with
/// defaults filled in; an empty grid is one cell of fixed parameters and defaults.
std::vector<CellPlan> expand_grid(const YAML::Node& root, const StudySpec& study, const ExperimentInfo& info,
                                  const FixedParameters& fixed, Diagnostics& diag) {
  // Global exclusions.
  std::vector<ExcludeRule> global_excludes;
  if (root["exclude"].IsDefined()) global_excludes = parse_excludes(root["exclude"], "exclude", info, diag);

  // Grid blocks.
  std::vector<YAML::Node> blocks;
  std::vector<std::string> block_keys;
  const YAML::Node grid = root["grid"];
  if (grid.IsDefined() && !grid.IsNull()) {
    if (grid.IsMap()) {
      blocks.push_back(grid);
      block_keys.push_back("grid");
    } else if (grid.IsSequence()) {
      if (grid.size() == 0) diag.add(grid, "grid", "empty list of blocks");
      for (std::size_t i = 0; i < grid.size(); ++i) {
        blocks.push_back(grid[i]);
        block_keys.push_back(fmt::format("grid[{}]", i));
      }
    } else {
      diag.add(grid, "grid", fmt::format("expected a map of axes or a list of such maps, got {}", node_kind(grid)));
    }
  }
  if (blocks.empty() && diag.empty()) blocks.push_back(YAML::Node(YAML::NodeType::Map)), block_keys.push_back("grid");

  std::vector<CellPlan> plans;
  double grid_cells = 0;  // cells of the blocks so far, before exclusions
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const YAML::Node& block = blocks[b];
    const std::string& bk = block_keys[b];
    if (!block.IsMap()) {
      diag.add(block, bk, fmt::format("expected a map of axes, got {}", node_kind(block)));
      continue;
    }
    check_duplicate_keys(block, bk + ".", diag);
    std::vector<Axis> axes;
    std::vector<ExcludeRule> excludes = global_excludes;
    std::set<std::string> in_block;
    const std::size_t errors_before = diag.size();
    auto add_axis_param = [&](const YAML::Node& name_node, const YAML::Node& values, const std::string& key, Axis& axis,
                              bool in_zip) {
      const std::string name = name_node.as<std::string>();
      const ParameterSpec* spec = info.find(name);
      if (spec == nullptr) {
        report_unknown_parameter(name_node, key, study, info, diag);
        return false;
      }
      if (fixed.values.count(name)) {
        diag.add(name_node, key, "parameter is both fixed (parameters:) and a grid axis");
        return false;
      }
      if (!in_block.insert(name).second) {
        diag.add(name_node, key, "parameter appears twice in this block");
        return false;
      }
      auto vals = parse_axis(values, *spec, key, diag, in_zip);
      axis.names.push_back(name);
      axis.lines.push_back(name_node.Mark().line + 1);
      if (axis.rows.empty()) {
        for (auto& v : vals) axis.rows.push_back({v});
      } else if (axis.rows.size() != vals.size()) {
        diag.add(values, key,
                 fmt::format("zip needs lists of equal length; this one has {} values, the first has {}", vals.size(),
                             axis.rows.size()));
        return false;
      } else {
        for (std::size_t i = 0; i < vals.size(); ++i) axis.rows[i].push_back(vals[i]);
      }
      return true;
    };
    for (auto it = block.begin(); it != block.end(); ++it) {
      const std::string k = it->first.as<std::string>();
      if (k == "exclude") {
        auto more = parse_excludes(it->second, bk + ".exclude", info, diag);
        excludes.insert(excludes.end(), more.begin(), more.end());
      } else if (k == "zip") {
        std::vector<YAML::Node> zips;
        if (it->second.IsMap())
          zips.push_back(it->second);
        else if (it->second.IsSequence())
          for (const auto& z : it->second) zips.push_back(z);
        for (std::size_t z = 0; z < zips.size() || (zips.empty() && z == 0); ++z) {
          if (zips.empty() || !zips[z].IsMap() || zips[z].size() == 0) {
            diag.add(it->second, bk + ".zip", "expected a map of parameter: list (or a list of such maps)");
            break;
          }
          Axis axis;
          for (auto zit = zips[z].begin(); zit != zips[z].end(); ++zit) {
            add_axis_param(zit->first, zit->second, bk + ".zip." + zit->first.as<std::string>(), axis, true);
          }
          // Zipped lists may repeat a value, but not a whole row (it would make the same cells twice).
          std::map<std::string, std::size_t> rows_seen;
          for (std::size_t i = 0; i < axis.rows.size() && axis.rows[i].size() == axis.names.size(); ++i) {
            std::string row;
            for (const auto& v : axis.rows[i]) row += format_parameter_value(v) + "\x1f";
            auto [at, fresh] = rows_seen.emplace(row, i);
            if (!fresh) {
              std::string names;
              for (const auto& n : axis.names) names += (names.empty() ? "" : ", ") + n;
              diag.add(zips[z], bk + ".zip",
                       fmt::format("position {} repeats position {} of ({}); each combination may appear once", i,
                                   at->second, names));
              break;
            }
          }
          axes.push_back(std::move(axis));
        }
      } else {
        Axis axis;
        if (add_axis_param(it->first, it->second, bk + "." + k, axis, false)) axes.push_back(std::move(axis));
      }
    }
    // Required parameters and defaults.
    std::map<std::string, ParameterValue> base = fixed.values;
    std::map<std::string, int> base_lines = fixed.lines;
    const int block_line = block.Mark().line + 1;
    for (const auto& name : info.order) {
      if (base.count(name) || in_block.count(name)) continue;
      const ParameterSpec& spec = info.specs.at(name);
      if (spec.default_value) {
        base[name] = *spec.default_value;
        base_lines[name] = block_line;
      } else {
        diag.add(block_line, bk,
                 fmt::format("required parameter '{}' ({}) is given neither in parameters: nor in this grid block",
                             name, spec.description));
      }
    }
    if (diag.size() != errors_before) continue;
    // The size of the grid, before any cell is built.
    {
      double size = 1;
      std::string factors;
      for (const auto& a : axes) {
        size *= static_cast<double>(a.rows.size());
        factors += fmt::format("{}{} ({})", factors.empty() ? "" : " x ", a.rows.size(), a.names.front());
      }
      grid_cells += size;
      if (size > kMaxCells) {
        diag.add(block_line, bk,
                 fmt::format("this block has {:.0f} cells ({}); a study has at most {:.0f} cells: split it into "
                             "several studies or use fewer values",
                             size, factors, kMaxCells));
        continue;
      }
      if (grid_cells > kMaxCells) {
        diag.add(block_line, bk,
                 fmt::format("the grid has at least {:.0f} cells up to this block; a study has at most {:.0f} cells",
                             grid_cells, kMaxCells));
        break;
      }
    }
    // Cartesian product, first axis outermost.
    std::vector<std::size_t> idx(axes.size(), 0);
    if (std::any_of(axes.begin(), axes.end(), [](const Axis& a) { return a.rows.empty(); })) continue;
    for (bool done = false; !done;) {
      CellPlan plan{base, base_lines, block_line};
      for (std::size_t a = 0; a < axes.size(); ++a) {
        for (std::size_t j = 0; j < axes[a].names.size(); ++j) {
          plan.values[axes[a].names[j]] = axes[a].rows[idx[a]][j];
          plan.lines[axes[a].names[j]] = axes[a].lines[j];
        }
      }
      if (std::none_of(excludes.begin(), excludes.end(),
                       [&](const ExcludeRule& r) { return matches(r, plan.values); })) {
        plans.push_back(std::move(plan));
      }
      done = true;  // odometer increment, last axis fastest
      for (std::size_t a = axes.size(); a-- > 0;) {
        if (++idx[a] < axes[a].rows.size()) {
          done = false;
          break;
        }
        idx[a] = 0;
      }
    }
  }
  if (!diag.empty()) diag.raise();
  if (plans.empty()) {
    diag.add(grid.IsDefined() ? grid : root, "grid", "the grid has no cells (every combination is excluded)");
    diag.raise();
  }

  return plans;
}

/// Step 6: the cells of the plans: duplicates refused, then per cell the experiment's validate(),
/// its data files (SHA-256 once per file) and check_data(); problems shared by many cells are
/// reported once.
void build_cells(const std::vector<CellPlan>& plans, const std::string& source, StudySpec& study, Diagnostics& diag) {
  // Cells, duplicates, experiment checks, metric layouts.
  std::map<std::string, std::size_t> seen;
  // The same validation message from many cells (a fixed parameter that is wrong everywhere) is
  // reported once, with the number of cells and one example cell.
  struct CellProblem {
    int line = 0;
    std::string key;
    std::string message;
    std::size_t cells = 0;
    std::string example;
  };
  std::vector<CellProblem> problems;
  constexpr std::size_t kMaxValidateErrors = 50;
  auto add_problem = [&](const CellPlan& plan, const Cell& cell, const std::string& what) {
    const auto colon = what.find(": ");
    const std::string key = colon == std::string::npos ? "" : what.substr(0, colon);
    const auto line_it = plan.lines.find(key);
    const bool known = !key.empty() && line_it != plan.lines.end();
    CellProblem p{known ? line_it->second : plan.block_line, known ? key : "", known ? what.substr(colon + 2) : what, 1,
                  cell.key()};
    auto same = std::find_if(problems.begin(), problems.end(), [&](const CellProblem& q) {
      return q.line == p.line && q.key == p.key && q.message == p.message;
    });
    if (same != problems.end()) {
      ++same->cells;
    } else {
      problems.push_back(std::move(p));
    }
  };
  // Data files: resolved by the experiment (relative to the config's folder), hashed once each.
  const std::string config_dir = config_dir_of(source);
  std::map<std::string, std::string> sha_of_resolved;
  std::map<std::string, DataFileFingerprint> files_by_path;
  const auto unkeyed = unkeyed_defaults(study.experiment->parameters());
  std::vector<std::string> stream_neutral;  // ParameterSpec::stream_neutral: not in the streams' key
  for (const auto& spec : study.experiment->parameters())
    if (spec.stream_neutral) stream_neutral.push_back(spec.name);
  for (const auto& plan : plans) {
    Cell cell(Assignment(plan.values.begin(), plan.values.end()), study.data_factors, unkeyed);
    cell.set_config_dir(config_dir);
    if (!stream_neutral.empty()) cell.set_stream_neutral(stream_neutral);
    auto [it, inserted] = seen.emplace(cell.key(), study.cells.size());
    if (!inserted) {
      diag.add(plan.block_line, "grid",
               fmt::format("cell {} is produced twice (by two blocks or repeated values)", cell.key()));
      continue;
    }
    try {
      study.experiment->validate(cell);
      for (const auto& f : study.experiment->data_files(cell)) {
        auto sha = sha_of_resolved.find(f.resolved);
        if (sha == sha_of_resolved.end()) {
          std::string digest;
          try {
            digest = sha256_file(f.resolved);
          } catch (const std::runtime_error& e) {
            throw std::invalid_argument(f.parameter + ": " + e.what());
          }
          sha = sha_of_resolved.emplace(f.resolved, digest).first;
        }
        files_by_path.emplace(f.path, DataFileFingerprint{f.path, sha->second, f.resolved});
      }
      study.experiment->check_data(cell);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      add_problem(plan, cell, e.what());
      continue;
    }
    study.cells.push_back(std::move(cell));
  }
  for (auto& [path, f] : files_by_path) study.data_files.push_back(std::move(f));
  for (std::size_t i = 0; i < problems.size() && i < kMaxValidateErrors; ++i) {
    const auto& p = problems[i];
    diag.add(p.line, p.key,
             p.cells == 1 ? fmt::format("{} (cell {})", p.message, p.example)
                          : fmt::format("{} (in {} cells, e.g. cell {})", p.message, p.cells, p.example));
  }
  if (problems.size() > kMaxValidateErrors) {
    diag.add(0, "", fmt::format("... and {} more distinct problems", problems.size() - kMaxValidateErrors));
  }
  if (!diag.empty()) diag.raise();
}

/// Step 7: the metric layout of every cell (names equal in every cell, sizes >= 1).
void declare_metrics(StudySpec& study, Diagnostics& diag) {
  for (const auto& cell : study.cells) {
    std::vector<MetricSpec> m;
    try {
      m = study.experiment->metrics(cell);
    } catch (const std::exception& e) {
      diag.add(0, "", fmt::format("metrics() failed for cell {}: {}", cell.key(), e.what()));
      continue;
    }
    if (study.cell_metrics.empty()) {
      std::set<std::string> names;
      for (const auto& s : m) {
        if (s.name.empty() || !names.insert(s.name).second) {
          diag.add(0, "",
                   fmt::format("experiment '{}' declares an empty or duplicated metric name '{}'",
                               study.experiment_name, s.name));
        }
      }
      if (m.empty()) diag.add(0, "", fmt::format("experiment '{}' declares no metrics", study.experiment_name));
      study.metric_template = m;
    } else {
      bool same = m.size() == study.metric_template.size();
      for (std::size_t i = 0; same && i < m.size(); ++i) same = m[i].name == study.metric_template[i].name;
      if (!same)
        diag.add(
            0, "",
            fmt::format("experiment '{}': metric names differ between cells ({})", study.experiment_name, cell.key()));
    }
    for (const auto& s : m) {
      if (s.size < 1) diag.add(0, "", fmt::format("metric '{}' has size 0 in cell {}", s.name, cell.key()));
      if (!s.component_labels.empty() && s.component_labels.size() != s.size) {
        diag.add(0, "",
                 fmt::format("metric '{}' has {} components but {} component labels in cell {}", s.name, s.size,
                             s.component_labels.size(), cell.key()));
      }
    }
    if (study.cell_metrics.empty() || !(*study.cell_metrics.back() == m)) {
      study.cell_metrics.push_back(std::make_shared<const std::vector<MetricSpec>>(std::move(m)));
    } else {
      study.cell_metrics.push_back(study.cell_metrics.back());
    }
  }
}

StudySpec parse_study_impl(const std::string& yaml_text, const std::string& source, const StudyOverrides& overrides) {
  Diagnostics diag(source);
  const YAML::Node root = load_root(yaml_text, diag);
  StudySpec study;
  study.source = source;
  study.config_yaml = yaml_text;
  read_run_settings(root, overrides, study, diag);
  const ExperimentInfo info = read_experiment(root, study, diag);
  const FixedParameters fixed = read_fixed_parameters(root, study, info, diag);
  const std::vector<CellPlan> plans = expand_grid(root, study, info, fixed, diag);
  build_cells(plans, source, study, diag);
  declare_metrics(study, diag);
  if (!diag.empty()) diag.raise();
  study.data_groups = group_cells_by_data_key(study);
  // The number of tasks, in 64 bits (at most 10^5 groups × 10^9 blocks: no overflow).
  const std::int64_t tasks = static_cast<std::int64_t>(study.data_groups.size()) * study.blocks_per_cell();
  if (tasks > kMaxTasks) {
    // blocks per group may be at most kMaxTasks / groups (>= 100: at most 10^5 groups)
    const std::int64_t blocks_allowed = kMaxTasks / static_cast<std::int64_t>(study.data_groups.size());
    const std::int64_t min_block_size = (study.replicates + blocks_allowed - 1) / blocks_allowed;
    const YAML::Node at = root["block_size"].IsDefined() ? root["block_size"] : root["replicates"];
    diag.add(at, "block_size",
             fmt::format("the study has {} tasks ({} data groups x {} blocks of block_size {} replicates); a study "
                         "has at most {} (10^7) tasks: raise block_size to at least {}",
                         tasks, study.data_groups.size(), study.blocks_per_cell(), study.block_size, kMaxTasks,
                         min_block_size));
    diag.raise();
  }
  return study;
}

}  // namespace

StudySpec parse_study(const std::string& yaml_text, const std::string& source, const StudyOverrides& overrides) {
  try {
    return parse_study_impl(yaml_text, source, overrides);
  } catch (const YAML::Exception& e) {  // e.g. a key that is not a plain name
    throw ConfigError(
        {fmt::format("{}:{}: cannot read this YAML node ({}); keys must be plain names and values "
                     "scalars, lists or maps as in docs/configs.md",
                     source, e.mark.line + 1, e.msg)});
  }
}

}  // namespace dpmu::runtime
