#pragma once
/// @file data_files.hpp
/// Where experiments find their CSV files.

#include <string>

namespace dpmu::experiments {

/// The path to open for a config's `data_file`: the path itself if it exists (relative to the
/// working directory), else, for a relative path, the same path inside the dpmu source tree
/// (so the shipped configs' `experiments/data/...` work from any directory).
/// @throws std::invalid_argument naming `data_file` if neither exists.
std::string resolve_data_file(const std::string& path);

}  // namespace dpmu::experiments
