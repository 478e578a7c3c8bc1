// Checks for files the commands write (never an input, never silently replaced).
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "commands.hpp"

namespace dpmu::cli {

void check_new_output_file(const std::string& option, const std::string& path, const std::vector<std::string>& inputs,
                           bool force) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& in : inputs) {
    if (fs::exists(path, ec) && fs::equivalent(path, in, ec)) {
      throw std::invalid_argument(option + " '" + path + "' is the input file '" + in +
                                  "'; choose another output file (an input is never overwritten)");
    }
  }
  if (fs::exists(path, ec) && !force) {
    throw std::invalid_argument(option + " '" + path + "' exists; choose a new file or add --force to replace it");
  }
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    throw std::invalid_argument(option + " '" + path + "': the folder '" + parent.string() + "' does not exist");
  }
}

}  // namespace dpmu::cli
