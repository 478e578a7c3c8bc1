#include "dpmu/runtime/data_table.hpp"

#include <csv.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <istream>
#include <stdexcept>
#include <streambuf>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace dpmu::runtime {

DataTable::DataTable(std::vector<std::string> names, std::vector<std::vector<double>> columns, std::string source)
    : names_(std::move(names)), columns_(std::move(columns)), source_(std::move(source)) {
  rows_ = columns_.empty() ? 0 : columns_.front().size();
  index_.reserve(names_.size());
  for (std::size_t j = 0; j < names_.size(); ++j) index_.emplace(names_[j], j);
}

char parse_csv_separator(std::string_view text) {
  if (text == "auto") return 0;
  if (text == "," || text == "comma") return ',';
  if (text == ";" || text == "semicolon") return ';';
  if (text == "tab" || text == "\\t" || text == "\t") return '\t';
  std::string msg(1, '\'');
  msg += printable(text);
  msg += "' is not a separator; use ',', ';', tab or auto";
  throw std::invalid_argument(msg);
}

std::string describe_csv_separator(char separator) {
  switch (separator) {
    case ',':
      return "',' (comma)";
    case ';':
      return "';' (semicolon)";
    case '\t':
      return "tab";
    default: {
      std::string out(1, '\'');
      out += printable(std::string_view(&separator, 1));
      out += '\'';
      return out;
    }
  }
}

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else if (c == 0) {
      out += "\\0";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

namespace {
std::string separator_note(char separator, bool detected) {
  return " (fields separated by " + describe_csv_separator(separator) +
         (detected && separator != ',' ? ", detected from the header" : "") +
         "; choose another with --sep ',', ';' or tab)";
}
}  // namespace

bool DataTable::has_column(const std::string& name) const { return index_.count(name) > 0; }

const std::vector<double>& DataTable::column(const std::string& name) const {
  const auto it = index_.find(name);
  if (it == index_.end()) {
    std::string list;
    for (const auto& n : names_) list += (list.empty() ? "" : ", ") + printable(n);
    throw std::invalid_argument(printable(source_) + ": no column '" + printable(name) + "'; columns are " + list +
                                separator_note(separator_, separator_detected_));
  }
  return columns_[it->second];
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
  std::string source;  // printable file name, for messages
  char separator = ',';
  bool separator_detected = false;
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

  /// The header: names trimmed, each at most once, every wanted name present. Linear in the number
  /// of columns (a hash of the names; a pairwise comparison took over a minute for 140 000 columns).
  void end_header() {
    std::unordered_map<std::string_view, std::size_t> position;
    position.reserve(row.size());
    header.reserve(row.size());
    for (const auto& field : row) header.push_back(trim(field));
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (!position.emplace(header[i], i).second) {
        fail(source + ": line 1: column '" + printable(header[i]) + "' appears twice in the header");
        return;
      }
    }
    if (wanted.empty()) wanted = header;
    wanted_index.reserve(wanted.size());
    for (const auto& w : wanted) {
      const auto it = position.find(w);
      if (it == position.end()) {
        std::string list;
        for (const auto& n : header) list += (list.empty() ? "" : ", ") + printable(n);
        fail(source + ": no column '" + printable(w) + "'; columns are " + list +
             separator_note(separator, separator_detected));
        return;
      }
      wanted_index.push_back(it->second);
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
      fail(source + ": line " + std::to_string(line) + ": " + std::to_string(row.size()) +
           " fields, but the header has " + std::to_string(header.size()) +
           separator_note(separator, separator_detected));
    } else {
      for (std::size_t j = 0; j < wanted.size(); ++j) {
        const std::string cell = trim(row[wanted_index[j]]);
        const std::string where =
            source + ": line " + std::to_string(line) + ", column '" + printable(wanted[j]) + "': ";
        if (cell.empty()) {
          fail(where + "empty cell (missing values are not allowed; remove or impute the row)");
          return;
        }
        double v = 0.0;
        const char* first = cell.data();
        if (*first == '+') ++first;
        const auto [ptr, ec] = std::from_chars(first, cell.data() + cell.size(), v);
        if (ec == std::errc::result_out_of_range) {
          fail(where + "value '" + printable(cell) + "' is out of the range of a double");
          return;
        }
        if (ec != std::errc() || ptr != cell.data() + cell.size()) {
          std::string hint;
          if (cell.find('\0') != std::string::npos) {
            hint = " (it contains a NUL byte: is this a text CSV file?)";
          } else if (separator != ',' && cell.find(',') != std::string::npos) {
            hint = " (decimal commas are not read: write decimal points)";
          }
          fail(where + "'" + printable(cell) + "' is not a number" + hint);
          return;
        }
        if (!std::isfinite(v)) {
          fail(where + "value '" + printable(cell) + "' is not finite (NaN and Inf are not allowed)");
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

namespace {

/// The fields of one CSV line split at `sep` by libcsv (quotes honoured); empty if it does not parse.
std::vector<std::string> split_line(const std::string& line, char sep) {
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_APPEND_NULL | CSV_STRICT_FINI) != 0) return {};
  csv_set_delim(&parser, static_cast<unsigned char>(sep));
  std::vector<std::string> fields;
  const auto field = [](void* s, std::size_t len, void* data) {
    static_cast<std::vector<std::string>*>(data)->emplace_back(s ? static_cast<const char*>(s) : "", len);
  };
  const bool ok = csv_parse(&parser, line.data(), line.size(), field, nullptr, &fields) == line.size() &&
                  csv_fini(&parser, field, nullptr, &fields) == 0;
  csv_free(&parser);
  return ok ? fields : std::vector<std::string>{};
}

std::string mib(std::size_t bytes) {
  if (bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

DataTable read_csv_stream(std::istream& in, const std::string& name, std::span<const std::string> wanted,
                          const CsvOptions& options) {
  const std::string source = printable(name);
  if (options.separator != 0 && options.separator != ',' && options.separator != ';' && options.separator != '\t') {
    throw std::invalid_argument("read_csv: the separator must be ',', ';' or a tab");
  }
  const std::size_t cap = options.max_line_bytes;
  const auto too_long = [&](std::size_t line) {
    return std::invalid_argument(source + ": line " + std::to_string(line) + " is longer than " + mib(cap) +
                                 "; dpmu reads CSV text files with lines (and quoted records) of at most " + mib(cap) +
                                 " — is this a CSV file?");
  };
  std::vector<char> buf(1 << 16);

  // 1. The first line (at most `cap` bytes), without the byte-order mark: it decides the separator.
  std::string head;
  bool have_newline = false;
  while (!have_newline && in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    head.append(buf.data(), got);
    const std::size_t nl = head.find('\n');
    have_newline = nl != std::string::npos;
    if ((have_newline ? nl : head.size()) > cap) throw too_long(1);
  }
  std::size_t offset = 0;
  if (head.size() >= 3 && static_cast<unsigned char>(head[0]) == 0xEF && static_cast<unsigned char>(head[1]) == 0xBB &&
      static_cast<unsigned char>(head[2]) == 0xBF) {
    offset = 3;  // byte-order mark
  }
  ParseState st;
  st.source = source;
  st.wanted.assign(wanted.begin(), wanted.end());
  st.separator = options.separator == 0 ? ',' : options.separator;
  if (options.separator == 0) {
    std::string first =
        head.substr(offset, head.find('\n') == std::string::npos ? std::string::npos : head.find('\n') - offset);
    if (!first.empty() && first.back() == '\r') first.pop_back();
    const auto fields = split_line(first, ',');
    if (fields.size() == 1) {
      const bool semicolon = fields[0].find(';') != std::string::npos;
      const bool tab = fields[0].find('\t') != std::string::npos;
      if (semicolon && tab) {
        throw std::invalid_argument(source + ": the header has no commas but both ';' and tabs ('" +
                                    printable(fields[0]) + "'); give the separator with --sep ';' or --sep tab");
      }
      if (semicolon || tab) {
        st.separator = semicolon ? ';' : '\t';
        st.separator_detected = true;
      }
    }
  }

  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_APPEND_NULL | CSV_STRICT_FINI) != 0) {
    throw std::runtime_error("read_csv: cannot initialise the CSV parser");
  }
  csv_set_delim(&parser, static_cast<unsigned char>(st.separator));
  // Line lengths are checked on the raw bytes (exact, by physical line); a quoted record that spans
  // lines is checked at chunk granularity (libcsv holds a field in memory until it ends).
  std::size_t physical_line = 1;
  std::size_t line_bytes = 0;
  std::size_t fed = 0;
  std::size_t records_seen = 0;
  std::size_t record_start = 0;  // bytes fed before the chunk in which the current record began
  const auto feed = [&](const char* data, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) {
      if (data[i] == '\n') {
        ++physical_line;
        line_bytes = 0;
      } else if (++line_bytes > cap) {
        csv_free(&parser);
        throw too_long(physical_line);
      }
    }
    if (csv_parse(&parser, data, len, on_field, on_record, &st) != len) {
      const std::string msg = csv_strerror(csv_error(&parser));
      csv_free(&parser);
      throw std::invalid_argument(source + ": malformed CSV near line " + std::to_string(st.line + 1) + ": " + msg);
    }
    if (st.line != records_seen) {
      records_seen = st.line;
      record_start = fed;
    }
    fed += len;
    if (fed - record_start > cap + buf.size()) {
      csv_free(&parser);
      throw too_long(st.line + 1);
    }
  };
  // The first line's bytes in chunks of the read size, like the rest: the start of the record after
  // the header is then known to within one chunk (fed whole, a header near 1 MiB made the
  // 280 KB second line of a 140 000-column file "longer than 1 MiB").
  for (std::size_t at = offset; at < head.size(); at += buf.size()) {
    feed(head.data() + at, std::min(buf.size(), head.size() - at));
  }
  while (st.error.empty() && in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    feed(buf.data(), got);
  }
  if (st.error.empty() && csv_fini(&parser, on_field, on_record, &st) != 0) {
    const std::string msg = csv_strerror(csv_error(&parser));
    csv_free(&parser);
    throw std::invalid_argument(source + ": malformed CSV at the end of the file: " + msg);
  }
  csv_free(&parser);
  if (!st.error.empty()) throw std::invalid_argument(st.error);
  if (!st.header_done) throw std::invalid_argument(source + ": the file is empty (no header row)");
  if (st.columns.empty() ? true : st.columns.front().empty()) {
    throw std::invalid_argument(source + ": no data rows after the header");
  }
  DataTable table(st.wanted, std::move(st.columns), name);
  table.set_separator(st.separator, st.separator_detected);
  return table;
}

}  // namespace

DataTable read_csv(const std::filesystem::path& path, std::span<const std::string> wanted, const CsvOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(printable(path.string()) + ": cannot open the file for reading");
  return read_csv_stream(in, path.string(), wanted, options);
}

namespace {

/// A stream over a file that keeps a copy of every byte read through it: the parser reads the file
/// once, as far as it needs (a refused header or an over-long line stops it, so /dev/zero is not read
/// into memory), and the copy is exactly what was parsed.
struct TeeBuf : std::streambuf {
  TeeBuf(std::streambuf* source, std::string& copy) : source_(source), copy_(copy) {}
  int_type underflow() override {
    const std::streamsize n = source_->sgetn(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    if (n <= 0) return traits_type::eof();
    copy_.append(buffer_.data(), static_cast<std::size_t>(n));
    setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
    return traits_type::to_int_type(buffer_[0]);
  }

 private:
  std::streambuf* source_;
  std::string& copy_;
  std::array<char, 1 << 16> buffer_{};
};

}  // namespace

DataTable read_csv_once(const std::filesystem::path& path, std::string& bytes, std::span<const std::string> wanted,
                        const CsvOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error(printable(path.string()) + ": cannot open the file for reading");
  bytes.clear();
  TeeBuf tee(file.rdbuf(), bytes);
  std::istream in(&tee);
  DataTable table = read_csv_stream(in, path.string(), wanted, options);
  // The parser stops at the end of the data; anything after it (nothing, for a CSV file) is read too,
  // so that the copy is the whole file.
  while (in.get() != std::istream::traits_type::eof()) {
  }
  if (file.bad()) throw std::runtime_error(printable(path.string()) + ": cannot read the file");
  return table;
}

}  // namespace dpmu::runtime
