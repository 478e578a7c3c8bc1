#pragma once
/// @file data_files.hpp
/// Where experiments find their CSV files, and a shared cache of loaded tables.

#include <memory>
#include <string>
#include <vector>

#include "dpmu/runtime/data_table.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

/// The path to open for a config's data file `path` (a `data_file` value): an absolute path as
/// it is; a relative path against the folder of the config the cell comes from
/// (Cell::config_dir(); the working directory if it has none), else inside the dpmu source tree
/// (so the shipped configs' `experiments/data/...` work from any folder).
/// @throws std::invalid_argument "data_file: 'x' does not exist (looked for A and B)".
std::string resolve_data_file(const runtime::Cell& cell, const std::string& path);

/// A DataFile of `cell` for the data_files() of an experiment: parameter `parameter`, file `path`
/// (as the config gives it; resolved with resolve_data_file).
runtime::DataFile data_file(const runtime::Cell& cell, const std::string& parameter, const std::string& path);

/// runtime::read_csv(path, columns), shared: the last few tables read are kept (keyed by path,
/// columns, size and modification time), so that checking and preparing many cells of one data
/// set reads the file once. Thread-safe. @throws as read_csv.
std::shared_ptr<const runtime::DataTable> read_csv_cached(const std::string& path,
                                                          const std::vector<std::string>& columns);

/// A message part naming a column of a table, e.g. "column 'age' of data/x.csv".
std::string column_name_in(const runtime::DataTable& table, const std::string& column);

/// @throws std::invalid_argument "key: column 'x' of FILE is constant (every row is 3): ..." if
/// the named column of `table` holds one value only.
void check_not_constant(const runtime::DataTable& table, const std::string& column, const std::string& key,
                        const std::string& why);

}  // namespace dpmu::experiments
