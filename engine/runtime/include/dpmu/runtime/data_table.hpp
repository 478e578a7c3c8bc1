#pragma once
/// @file data_table.hpp
/// Numeric CSV tables (RFC 4180, parsed by libcsv) for the command-line tools.

#include <Eigen/Dense>
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dpmu::runtime {

/// Longest line (and record) read_csv accepts by default: 1 MiB. A longer one is refused with a
/// clear error — a binary file, /dev/zero or a file with no line ends is not read into memory.
inline constexpr std::size_t kMaxCsvLineBytes = std::size_t{1} << 20;

/// How read_csv splits fields.
struct CsvOptions {
  /// ',', ';' or '\t'; 0 = detect: ',' unless the header, split at commas, is one field containing
  /// ';' or a tab (not both), which is then the separator.
  char separator = 0;
  std::size_t max_line_bytes = kMaxCsvLineBytes;  ///< longest line or record accepted
};

/// Parse a separator option: "," "comma", ";" "semicolon", "tab" "\t" (a real tab too), or "auto"
/// (0). @throws std::invalid_argument naming the accepted spellings.
char parse_csv_separator(std::string_view text);

/// "',' (comma)", "';' (semicolon)" or "tab".
std::string describe_csv_separator(char separator);

/// `text` with control characters and DEL escaped (\0, \t, \n, \r, \xNN), for messages: a NUL
/// byte no longer cuts a message short and a header cannot move the terminal's cursor.
std::string printable(std::string_view text);

/// A table of named numeric columns read from a CSV file with a header row.
class DataTable {
 public:
  DataTable(std::vector<std::string> names, std::vector<std::vector<double>> columns, std::string source);

  std::size_t rows() const { return rows_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::string& source() const { return source_; }

  /// True if the table has a column with this exact name. Constant time (a hash of the names), so
  /// looking up every column of a wide table is linear in its width.
  bool has_column(const std::string& name) const;

  /// The column called `name`.
  /// @throws std::invalid_argument "<file>: no column 'x'; columns are a, b, c".
  const std::vector<double>& column(const std::string& name) const;

  /// n×k matrix of the named columns, in the given order (k may be 0).
  /// @throws std::invalid_argument for an unknown name.
  Eigen::MatrixXd matrix(std::span<const std::string> names) const;

  /// The field separator the file was read with, and whether it was detected (not given).
  char separator() const { return separator_; }
  bool separator_detected() const { return separator_detected_; }
  void set_separator(char separator, bool detected) {
    separator_ = separator;
    separator_detected_ = detected;
  }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::size_t> index_;  ///< position of each name (the first if repeated)
  std::vector<std::vector<double>> columns_;
  std::string source_;
  std::size_t rows_ = 0;
  char separator_ = ',';
  bool separator_detected_ = false;
};

/// Read the columns `wanted` of a CSV file with a header row (all columns if `wanted` is empty).
/// Fields are split at `options.separator` (detected from the header when 0: see CsvOptions) and
/// parsed as decimal numbers after trimming blanks. Messages escape control characters (printable)
/// and name the separator when a column is missing or a row is ragged.
/// @throws std::runtime_error if the file cannot be read; std::invalid_argument (message with
///   file, line and column name) for a malformed CSV, a line or record longer than
///   options.max_line_bytes, a header with both ';' and tabs and no commas (give the separator), a
///   ragged row, a duplicated or missing column, an empty cell, a non-numeric cell, or a NaN/Inf
///   value in a wanted column, or no data rows.
DataTable read_csv(const std::filesystem::path& path, std::span<const std::string> wanted = {},
                   const CsvOptions& options = {});

/// read_csv reading the file once and keeping every byte read in `bytes` (what a privacy ledger
/// fingerprints: exactly what was parsed). A file refused on its first line (or an over-long line)
/// is not read further. @throws as read_csv.
DataTable read_csv_once(const std::filesystem::path& path, std::string& bytes, std::span<const std::string> wanted = {},
                        const CsvOptions& options = {});

}  // namespace dpmu::runtime
