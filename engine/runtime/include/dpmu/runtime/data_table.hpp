#pragma once
/// @file data_table.hpp
/// Numeric CSV tables (RFC 4180, parsed by libcsv) for the command-line tools.

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Dense>

namespace dpmu::runtime {

/// A table of named numeric columns read from a CSV file with a header row.
class DataTable {
 public:
  DataTable(std::vector<std::string> names, std::vector<std::vector<double>> columns, std::string source);

  std::size_t rows() const { return rows_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::string& source() const { return source_; }

  /// True if the table has a column with this exact name.
  bool has_column(const std::string& name) const;

  /// The column called `name`.
  /// @throws std::invalid_argument "<file>: no column 'x'; columns are a, b, c".
  const std::vector<double>& column(const std::string& name) const;

  /// n×k matrix of the named columns, in the given order (k may be 0).
  /// @throws std::invalid_argument for an unknown name.
  Eigen::MatrixXd matrix(std::span<const std::string> names) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<double>> columns_;
  std::string source_;
  std::size_t rows_ = 0;
};

/// Read the columns `wanted` of a CSV file with a header row (all columns if `wanted` is empty).
/// Fields are parsed as decimal numbers after trimming blanks.
/// @throws std::runtime_error if the file cannot be read; std::invalid_argument (message with
///   file, line and column name) for a malformed CSV, a ragged row, a duplicated or missing column,
///   an empty cell, a non-numeric cell, or a NaN/Inf value in a wanted column, or no data rows.
DataTable read_csv(const std::filesystem::path& path, std::span<const std::string> wanted = {});

}  // namespace dpmu::runtime
