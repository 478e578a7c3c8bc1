#pragma once
/// @file temp_dir.hpp
/// A fresh temporary directory for a runtime test, removed at the end of the test.

#include <unistd.h>

#include <filesystem>
#include <string>

namespace dpmu::test {

struct TempDir {
  std::filesystem::path path;
  /// @param prefix names the test file, e.g. "dpmu_runner_test"; the PID and a counter follow.
  explicit TempDir(const std::string& prefix) {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path operator/(const std::string& s) const { return path / s; }
};

}  // namespace dpmu::test
