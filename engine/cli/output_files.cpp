// Checks for files the commands write (never an input, never silently replaced).
#include <algorithm>
#include <filesystem>
#include <fstream>
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

int count_option(const std::string& option, std::int64_t value, std::int64_t lowest, std::int64_t highest) {
  if (value < lowest || value > highest) {
    throw std::invalid_argument(option + " must be a whole number in [" + std::to_string(lowest) + ", " +
                                std::to_string(highest) + "], got " + std::to_string(value));
  }
  return static_cast<int>(value);
}

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

const CLI::Validator& positive_integer() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        const std::string why = unsigned_integer()(s);
        if (!why.empty()) return why;
        if (s.find_first_not_of('0') == std::string::npos) {
          return "'" + s + "' is not a whole number >= 1 (leave the option out for its default)";
        }
        return std::string();
      },
      "UINT>=1");
  return v;
}

void check_new_output_file(const std::string& option, const std::string& path, const std::vector<std::string>& inputs,
                           bool force) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // The same file: one object on disk (hard links, symbolic links), or the same path once resolved
  // (so that a file that does not exist yet, e.g. a new ledger, is protected too).
  const auto same = [&](const std::string& a, const std::string& b) {
    std::error_code e1, e2;
    if (fs::exists(a, e1) && fs::exists(b, e2) && fs::equivalent(a, b, e1)) return true;
    const fs::path ca = fs::weakly_canonical(a, e1), cb = fs::weakly_canonical(b, e2);
    return !e1 && !e2 && ca == cb;
  };
  for (const auto& in : inputs) {
    if (in.empty()) continue;
    if (same(path, in)) {
      throw std::invalid_argument(option + " '" + path + "' is the input file '" + in +
                                  "' (the data, the ledger or the ledger's key: a file this command reads or keeps); "
                                  "choose another output file (such a file is never overwritten, not even with "
                                  "--force)");
    }
  }
  // A privacy-budget ledger (or its key) is never replaced by an output, even when this command was
  // not given it: its first line is the ledger header.
  const auto is_ledger = [](const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    char head[15] = {};
    in.read(head, sizeof head);
    return in.gcount() == static_cast<std::streamsize>(sizeof head) &&
           std::string(head, sizeof head) == "{\"dpmu_ledger\":";
  };
  const std::string stem = path.size() > 4 && path.ends_with(".key") ? path.substr(0, path.size() - 4) : "";
  if (is_ledger(path) || (!stem.empty() && is_ledger(stem))) {
    throw std::invalid_argument(option + " '" + path +
                                "' is a privacy-budget ledger or its key; choose another output file (a ledger is "
                                "never overwritten, not even with --force)");
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
