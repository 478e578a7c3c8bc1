#include "dpmu/runtime/data_table.hpp"

#include <csv.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace dpmu::runtime {

DataTable::DataTable(std::vector<std::string> names, std::vector<std::vector<double>> columns, std::string source)
    : names_(std::move(names)), columns_(std::move(columns)), source_(std::move(source)) {
  rows_ = columns_.empty() ? 0 : columns_.front().size();
}

bool DataTable::has_column(const std::string& name) const {
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

const std::vector<double>& DataTable::column(const std::string& name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  if (it == names_.end()) {
    std::string list;
    for (const auto& n : names_) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument(source_ + ": no column '" + name + "'; columns are " + list);
  }
  return columns_[static_cast<std::size_t>(it - names_.begin())];
}

Eigen::MatrixXd DataTable::matrix(std::span<const std::string> names) const {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(rows_), static_cast<Eigen::Index>(names.size()));
  for (std::size_t j = 0; j < names.size(); ++j) {
    const auto& c = column(names[j]);
    for (std::size_t i = 0; i < rows_; ++i) out(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = c[i];
  }
  return out;
}

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

struct ParseState {
  std::string source;
  std::vector<std::string> header;
  std::vector<std::string> wanted;           // names requested (all if empty at start)
  std::vector<std::size_t> wanted_index;     // header position of each wanted column
  std::vector<std::vector<double>> columns;  // one per wanted column
  std::vector<std::string> row;
  std::size_t line = 0;  // 1-based line number of the current record (header = 1)
  bool header_done = false;
  std::string error;

  void fail(std::string msg) {
    if (error.empty()) error = std::move(msg);
  }

  void end_header() {
    for (std::size_t i = 0; i < row.size(); ++i) {
      header.push_back(trim(row[i]));
      for (std::size_t j = 0; j < i; ++j) {
        if (header[j] == header[i]) fail(source + ": line 1: column '" + header[i] + "' appears twice in the header");
      }
    }
    if (wanted.empty()) wanted = header;
    for (const auto& w : wanted) {
      const auto it = std::find(header.begin(), header.end(), w);
      if (it == header.end()) {
        std::string list;
        for (const auto& n : header) list += (list.empty() ? "" : ", ") + n;
        fail(source + ": no column '" + w + "'; columns are " + list);
        return;
      }
      wanted_index.push_back(static_cast<std::size_t>(it - header.begin()));
    }
    columns.assign(wanted.size(), {});
    header_done = true;
  }

  void end_record() {
    ++line;
    if (!error.empty()) return;
    if (!header_done) {
      end_header();
    } else if (row.size() == 1 && trim(row[0]).empty()) {
      // blank line: ignored
    } else if (row.size() != header.size()) {
      fail(source + ": line " + std::to_string(line) + ": " + std::to_string(row.size()) + " fields, but the header has " +
           std::to_string(header.size()));
    } else {
      for (std::size_t j = 0; j < wanted.size(); ++j) {
        const std::string cell = trim(row[wanted_index[j]]);
        const std::string where =
            source + ": line " + std::to_string(line) + ", column '" + wanted[j] + "': ";
        if (cell.empty()) {
          fail(where + "empty cell (missing values are not allowed; remove or impute the row)");
          return;
        }
        double v = 0.0;
        const char* first = cell.data();
        if (*first == '+') ++first;
        const auto [ptr, ec] = std::from_chars(first, cell.data() + cell.size(), v);
        if (ec == std::errc::result_out_of_range) {
          fail(where + "value '" + cell + "' is out of the range of a double");
          return;
        }
        if (ec != std::errc() || ptr != cell.data() + cell.size()) {
          fail(where + "'" + cell + "' is not a number");
          return;
        }
        if (!std::isfinite(v)) {
          fail(where + "value '" + cell + "' is not finite (NaN and Inf are not allowed)");
          return;
        }
        columns[j].push_back(v);
      }
    }
    row.clear();
  }
};

extern "C" void on_field(void* s, std::size_t len, void* data) {
  auto* st = static_cast<ParseState*>(data);
  st->row.emplace_back(s ? static_cast<const char*>(s) : "", len);
}

extern "C" void on_record(int, void* data) { static_cast<ParseState*>(data)->end_record(); }

}  // namespace

DataTable read_csv(const std::filesystem::path& path, std::span<const std::string> wanted) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open the file for reading");
  ParseState st;
  st.source = path.string();
  st.wanted.assign(wanted.begin(), wanted.end());
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_APPEND_NULL | CSV_STRICT_FINI) != 0) {
    throw std::runtime_error("read_csv: cannot initialise the CSV parser");
  }
  std::vector<char> buf(1 << 16);
  bool first = true;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    std::size_t offset = 0;
    if (first && got >= 3 && static_cast<unsigned char>(buf[0]) == 0xEF && static_cast<unsigned char>(buf[1]) == 0xBB &&
        static_cast<unsigned char>(buf[2]) == 0xBF) {
      offset = 3;  // byte-order mark
    }
    first = false;
    if (csv_parse(&parser, buf.data() + offset, got - offset, on_field, on_record, &st) != got - offset) {
      const std::string msg = csv_strerror(csv_error(&parser));
      csv_free(&parser);
      throw std::invalid_argument(st.source + ": malformed CSV near line " + std::to_string(st.line + 1) + ": " + msg);
    }
    if (!st.error.empty()) break;
  }
  if (st.error.empty() && csv_fini(&parser, on_field, on_record, &st) != 0) {
    const std::string msg = csv_strerror(csv_error(&parser));
    csv_free(&parser);
    throw std::invalid_argument(st.source + ": malformed CSV at the end of the file: " + msg);
  }
  csv_free(&parser);
  if (!st.error.empty()) throw std::invalid_argument(st.error);
  if (!st.header_done) throw std::invalid_argument(st.source + ": the file is empty (no header row)");
  if (st.columns.empty() ? true : st.columns.front().empty()) {
    throw std::invalid_argument(st.source + ": no data rows after the header");
  }
  return DataTable(st.wanted, std::move(st.columns), st.source);
}

}  // namespace dpmu::runtime
