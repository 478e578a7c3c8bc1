#include "dpmu/experiments/data_files.hpp"

#include <filesystem>
#include <stdexcept>

namespace dpmu::experiments {

std::string resolve_data_file(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::exists(path)) return path;
  const fs::path in_source = fs::path(DPMU_SOURCE_DIR) / path;
  if (fs::path(path).is_relative() && fs::exists(in_source)) return in_source.string();
  throw std::invalid_argument("data_file: '" + path + "' does not exist (relative paths are tried against the "
                              "working directory, then the dpmu source tree)");
}

}  // namespace dpmu::experiments
