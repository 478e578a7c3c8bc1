#include "dpmu/runtime/tidy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "dpmu/runtime/results.hpp"

namespace dpmu::runtime {

namespace {

using Strings = std::vector<std::string>;
using Integers = std::vector<std::int64_t>;
using Reals = std::vector<double>;

/// Columns of the tidy tables that are not cell parameters (a parameter of one of these names
/// would make the table ambiguous; experiments cannot declare them, config.cpp kReservedNames).
const Strings kSummaryColumns = {"mean", "sd", "mcse", "q025", "q250", "q500", "q750", "q975", "n_ok", "n_nan"};
const Strings kOtherColumns = {"cell_key", "metric", "component", "component_label", "replicate", "value"};

template <class T>
void push(TidyColumn& column, T value) {
  std::get<std::vector<T>>(column.values).push_back(std::move(value));
}

/// The table's first columns: cell_key and one typed column per cell parameter.
class CellColumns {
 public:
  CellColumns(const StudyResults& r, const std::filesystem::path& file) : r_(r) {
    for (const auto& name : r.parameter_names) {
      const bool reserved = std::find(kSummaryColumns.begin(), kSummaryColumns.end(), name) != kSummaryColumns.end() ||
                            std::find(kOtherColumns.begin(), kOtherColumns.end(), name) != kOtherColumns.end();
      if (reserved) {
        throw std::runtime_error(
            fmt::format("{}: the cell parameter '{}' has the name of a column of the tidy table; it cannot be exported",
                        file.string(), name));
      }
    }
  }

  void add_to(TidyTable& t) const {
    t.columns.push_back({"cell_key", Strings{}});
    for (std::size_t p = 0; p < r_.parameter_names.size(); ++p) {
      switch (r_.parameter_types[p]) {
        case ParameterType::integer:
          t.columns.push_back({r_.parameter_names[p], Integers{}});
          break;
        case ParameterType::real:
          t.columns.push_back({r_.parameter_names[p], Reals{}});
          break;
        case ParameterType::string:
        case ParameterType::integer_list:  // a list: its canonical text (docs/configs.md)
        case ParameterType::real_list:
        case ParameterType::string_list:
          t.columns.push_back({r_.parameter_names[p], Strings{}});
          break;
      }
    }
  }

  /// Append cell c's values to the first columns of `t` (made by add_to).
  void push_cell(TidyTable& t, std::size_t c) const {
    const Cell& cell = r_.cells[c];
    push(t.columns[0], fmt::format("{:016x}", cell.cell_id()));
    for (std::size_t p = 0; p < r_.parameter_names.size(); ++p) {
      TidyColumn& col = t.columns[p + 1];
      const std::string& name = r_.parameter_names[p];
      const bool has = cell.has(name);
      switch (r_.parameter_types[p]) {
        case ParameterType::integer:
          push(col, has ? cell.get_int(name) : kTidyMissingInteger);
          break;
        case ParameterType::real:
          push(col, has ? cell.get_double(name) : std::nan(""));
          break;
        case ParameterType::string:
          push(col, has ? cell.get_string(name) : std::string(kTidyMissingString));
          break;
        case ParameterType::integer_list:
        case ParameterType::real_list:
        case ParameterType::string_list:
          push(col, has ? format_parameter_value(cell.get(name)) : std::string(kTidyMissingString));
          break;
      }
    }
  }

  std::size_t count() const { return 1 + r_.parameter_names.size(); }

 private:
  const StudyResults& r_;
};

/// Column `name` of `t`, which must exist.
TidyColumn& column(TidyTable& t, const std::string& name) {
  for (auto& c : t.columns)
    if (c.name == name) return c;
  throw std::logic_error("tidy table: no column " + name);
}

std::string csv_field(const std::string& s) {
  const bool quote = s.find_first_of(",\"\r\n") != std::string::npos ||
                     (!s.empty() && (s.front() == ' ' || s.back() == ' ' || s.front() == '\t' || s.back() == '\t'));
  if (!quote) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_field(double x) {
  if (std::isnan(x)) return "NA";
  if (std::isinf(x)) return x > 0 ? "Inf" : "-Inf";
  return fmt::format("{}", x);  // shortest representation that reads back as the same double
}

std::string csv_field(std::int64_t x) { return x == kTidyMissingInteger ? "NA" : std::to_string(x); }

}  // namespace

std::size_t TidyTable::rows() const {
  if (columns.empty()) return 0;
  return std::visit([](const auto& v) { return v.size(); }, columns.front().values);
}

TidyTable tidy_summaries(const std::filesystem::path& results_file) {
  const StudyResults r = read_results(results_file);
  const CellColumns cells(r, results_file);
  TidyTable t;
  cells.add_to(t);
  t.columns.push_back({"metric", Strings{}});
  t.columns.push_back({"component", Integers{}});
  t.columns.push_back({"component_label", Strings{}});
  for (const auto& name : kSummaryColumns) {
    if (name.rfind("n_", 0) == 0) {
      t.columns.push_back({name, Integers{}});
    } else {
      t.columns.push_back({name, Reals{}});
    }
  }
  const std::size_t first = cells.count();
  for (std::size_t c = 0; c < r.cells.size(); ++c) {
    for (std::size_t m = 0; m < r.metrics.size(); ++m) {
      const auto& ml = r.metrics[m];
      for (std::size_t k = 0; k < ml.sizes[c]; ++k) {
        cells.push_cell(t, c);
        push(t.columns[first], ml.name);
        push(t.columns[first + 1], static_cast<std::int64_t>(k));
        push(t.columns[first + 2], ml.component_label(c, k));
        const Summary s = summarize_component(r, c, m, k);
        std::size_t i = first + 3;
        for (double x : {s.mean, s.sd, s.mcse, s.q025, s.q250, s.q500, s.q750, s.q975}) push(t.columns[i++], x);
        push(t.columns[i++], s.n_ok);
        push(t.columns[i++], s.n - s.n_ok);
      }
    }
  }
  return t;
}

TidyTable tidy_replicates(const std::filesystem::path& results_file, const std::string& metric) {
  const StudyResults r = read_results(results_file);
  const CellColumns cells(r, results_file);
  std::vector<std::size_t> chosen;
  for (std::size_t m = 0; m < r.metrics.size(); ++m)
    if (metric.empty() || r.metrics[m].name == metric) chosen.push_back(m);
  if (chosen.empty() && !metric.empty()) {
    std::string names;
    for (const auto& ml : r.metrics) names += (names.empty() ? "" : ", ") + ml.name;
    throw std::runtime_error(
        fmt::format("{}: no metric '{}' (the file's metrics: {})", results_file.string(), metric, names));
  }
  TidyTable t;
  cells.add_to(t);
  t.columns.push_back({"replicate", Integers{}});
  t.columns.push_back({"metric", Strings{}});
  t.columns.push_back({"component", Integers{}});
  t.columns.push_back({"component_label", Strings{}});
  t.columns.push_back({"value", Reals{}});
  TidyColumn& replicate = column(t, "replicate");
  TidyColumn& metric_column = column(t, "metric");
  TidyColumn& component = column(t, "component");
  TidyColumn& label = column(t, "component_label");
  TidyColumn& value = column(t, "value");
  for (std::size_t c = 0; c < r.cells.size(); ++c) {
    const auto& cr = r.cell_results[c];
    for (std::size_t i = 0; i < cr.done.size(); ++i) {
      if (!cr.done[i]) continue;
      for (std::size_t m : chosen) {
        const auto& ml = r.metrics[m];
        const std::size_t off = r.offset(c, m);
        for (std::size_t k = 0; k < ml.sizes[c]; ++k) {
          cells.push_cell(t, c);
          push(replicate, static_cast<std::int64_t>(i));
          push(metric_column, ml.name);
          push(component, static_cast<std::int64_t>(k));
          push(label, ml.component_label(c, k));
          push(value, cr.values[i * cr.width + off + k]);
        }
      }
    }
  }
  return t;
}

void write_csv(const TidyTable& table, std::ostream& out) {
  const std::size_t n = table.rows();
  for (const auto& c : table.columns) {
    if (std::visit([](const auto& v) { return v.size(); }, c.values) != n) {
      throw std::invalid_argument(fmt::format("write_csv: column '{}' has another length than column '{}'", c.name,
                                              table.columns.front().name));
    }
  }
  std::string line;
  for (std::size_t j = 0; j < table.columns.size(); ++j) {
    line += (j ? "," : "") + csv_field(table.columns[j].name);
  }
  out << line << "\r\n";
  for (std::size_t i = 0; i < n; ++i) {
    line.clear();
    for (std::size_t j = 0; j < table.columns.size(); ++j) {
      if (j) line += ',';
      line += std::visit([i](const auto& v) { return csv_field(v[i]); }, table.columns[j].values);
    }
    out << line << "\r\n";
  }
}

}  // namespace dpmu::runtime
