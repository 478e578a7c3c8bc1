#pragma once
/// @file tidy.hpp
/// Tidy (long) tables of a results file: one implementation for `dpmu export` and the R and
/// Python readers (docs/results-schema.md, "Tidy tables"). Column names use the file's
/// vocabulary (`/summary/<metric>/{mean, sd, mcse, q025, q250, q500, q750, q975, n_ok, n_nan}`).
///
/// Missing values (a cell parameter that only some cells have): NaN in a real column,
/// kTidyMissingInteger in an integer column, kTidyMissingString in a string column; write_csv
/// writes each of them as NA.

#include <cstdint>
#include <filesystem>
#include <limits>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace dpmu::runtime {

/// A missing value in an integer column (INT64_MIN, bit64's NA_integer64_).
inline constexpr std::int64_t kTidyMissingInteger = std::numeric_limits<std::int64_t>::min();
/// A missing value in a string column (written as NA, which R and pandas read as missing; so is a
/// string parameter whose value is "NA").
inline constexpr const char* kTidyMissingString = "NA";

/// One column: a name and one value per row.
struct TidyColumn {
  std::string name;
  std::variant<std::vector<double>, std::vector<std::int64_t>, std::vector<std::string>> values;
};

/// Columns of equal length.
struct TidyTable {
  std::vector<TidyColumn> columns;
  /// Number of rows (0 without columns).
  std::size_t rows() const;
};

/// One row per cell × metric × component: cell_key, one column per cell parameter (typed: integer, real
/// or string), metric, component (0-based int), component_label, then the summaries.
/// @throws std::runtime_error naming the file.
///
/// Columns: cell_key (16 lowercase hex digits of /cells/cell_id), the parameters in declaration order,
/// metric, component, component_label ("" for a scalar metric), mean, sd, mcse, q025, q250, q500,
/// q750, q975 (real), n_ok (non-NaN values summarised), n_nan (done replicates whose value is NaN,
/// failed ones included) (integer); rows in cell order, then metric order, then component. The
/// summaries are those of summarize_component() (results.hpp), the ones `dpmu summarize` prints.
TidyTable tidy_summaries(const std::filesystem::path& results_file);

/// One row per cell × replicate × component for `metric` (all metrics when empty): cell_key, cell
/// parameters, replicate, metric, component, component_label, value.
///
/// Only done replicates (/replicates_done) have rows; value is NaN for a failed replicate. Rows in
/// cell order, then replicate, then metric order, then component. @throws std::runtime_error naming
/// the file, or naming `metric` and the file's metrics if the file has no such metric.
TidyTable tidy_replicates(const std::filesystem::path& results_file, const std::string& metric = "");

/// RFC 4180 CSV with a header row; doubles in shortest round-trip form, NaN as "NA".
///
/// Lines end in CRLF; a field is quoted (with "" for ") when it holds a comma, a quote, CR or LF, or
/// leading or trailing blanks; ±infinity is Inf / -Inf (read by R and pandas); missing values
/// (header comment) are NA. @throws std::invalid_argument if the columns differ in length.
void write_csv(const TidyTable& table, std::ostream& out);

}  // namespace dpmu::runtime
