// Checks for files the commands write (never an input, never silently replaced).
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "commands.hpp"

namespace dpmu::cli {

namespace {
std::string& activity_text() {
  static std::string text;
  return text;
}
}  // namespace

void set_activity(std::string what) { activity_text() = std::move(what); }
const std::string& activity() { return activity_text(); }

const CLI::Validator& unsigned_integer() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
        const std::string max = "18446744073709551615";
        const std::string trimmed = s.substr(std::min(s.find_first_not_of('0'), s.size() - 1));
        if (!digits || trimmed.size() > max.size() || (trimmed.size() == max.size() && trimmed > max)) {
          return "'" + s + "' is not an unsigned integer in 0.." + max;
        }
        return std::string();
      },
      "UINT");
  return v;
}

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
