#include "dpmu/experiments/data_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <list>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace dpmu::experiments {

std::string resolve_data_file(const runtime::Cell& cell, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw std::invalid_argument("data_file: empty path");
  const fs::path p(path);
  if (p.is_absolute()) {
    if (fs::exists(p)) return path;
    throw std::invalid_argument("data_file: '" + path + "' does not exist");
  }
  const fs::path base = cell.config_dir().empty() ? fs::current_path() : fs::path(cell.config_dir());
  const fs::path beside_config = (base / p).lexically_normal();
  if (fs::exists(beside_config)) return beside_config.string();
  const fs::path in_source = (fs::path(DPMU_SOURCE_DIR) / p).lexically_normal();
  if (fs::exists(in_source)) return in_source.string();
  throw std::invalid_argument("data_file: '" + path +
                              "' does not exist (a relative path is looked for in the config's "
                              "folder, " +
                              beside_config.string() + ", then in the dpmu source tree, " + in_source.string() + ")");
}

runtime::DataFile data_file(const runtime::Cell& cell, const std::string& parameter, const std::string& path) {
  return {parameter, runtime::normalize_path_value(path), resolve_data_file(cell, path)};
}

std::shared_ptr<const runtime::DataTable> read_csv_cached(const std::string& path,
                                                          const std::vector<std::string>& columns) {
  struct Entry {
    std::string path;
    std::vector<std::string> columns;
    long long size = 0, mtime_ns = 0;
    std::shared_ptr<const runtime::DataTable> table;
  };
  static std::mutex mutex;
  static std::list<Entry> entries;  // most recent first
  constexpr std::size_t kKeep = 4;
  struct stat st {};
  const bool known = ::stat(path.c_str(), &st) == 0;
  const long long size = known ? static_cast<long long>(st.st_size) : -1;
  const long long mtime = known ? static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec : -1;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      if (known && it->path == path && it->columns == columns && it->size == size && it->mtime_ns == mtime) {
        entries.splice(entries.begin(), entries, it);
        return entries.front().table;
      }
    }
  }
  auto table = std::make_shared<const runtime::DataTable>(runtime::read_csv(path, columns));
  if (known) {
    std::lock_guard<std::mutex> lock(mutex);
    entries.push_front({path, columns, size, mtime, table});
    if (entries.size() > kKeep) entries.pop_back();
  }
  return table;
}

std::string column_name_in(const runtime::DataTable& table, const std::string& column) {
  return "column '" + column + "' of " + table.source();
}

void check_not_constant(const runtime::DataTable& table, const std::string& column, const std::string& key,
                        const std::string& why) {
  const auto& v = table.column(column);
  if (v.empty()) return;
  if (std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); })) {
    std::ostringstream value;
    value << v.front();
    throw std::invalid_argument(key + ": " + column_name_in(table, column) + " is constant (every row is " +
                                value.str() + "): " + why);
  }
}

}  // namespace dpmu::experiments
