#include "dpmu/runtime/data_table.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using dpmu::runtime::read_csv;

namespace {
std::string fixture(const std::string& name) { return std::string(DPMU_TEST_FIXTURE_DIR) + "/" + name; }

/// A file in the temporary folder with these bytes (removed by the destructor).
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& bytes) {
    char name[] = "/tmp/dpmu_data_table_XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    ::close(fd);
    path = name;
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~TempFile() { std::remove(path.c_str()); }
};
}  // namespace

TEST_CASE("read_csv reads quoted fields, a byte-order mark and CRLF line ends", "[data_table]") {
  const auto t = read_csv(fixture("quoted_bom_crlf.csv"));
  REQUIRE(t.rows() == 2);
  CHECK(t.names() == std::vector<std::string>{"a", "b c", "c"});
  CHECK(t.column("a") == std::vector<double>{1.0, -45.0});
  CHECK(t.column("b c") == std::vector<double>{2.0, 5.0});
}

TEST_CASE("read_csv reads only the wanted columns, in the order asked", "[data_table]") {
  const std::vector<std::string> wanted{"math", "female"};
  const auto t = read_csv(std::string(DPMU_TEST_DATA_DIR) + "/hsb2.csv", wanted);
  CHECK(t.rows() == 200);
  CHECK(t.names() == wanted);
  const auto m = t.matrix(wanted);
  CHECK(m.rows() == 200);
  CHECK(m(0, 0) == 41.0);  // first row: id 70, math 41, female 0
  CHECK(m(0, 1) == 0.0);
}

TEST_CASE("read_csv errors name the file, line and column", "[data_table]") {
  const std::vector<std::string> b{"b"};
  CHECK_THROWS_WITH(read_csv(fixture("empty_cell.csv"), b), Contains("line 3, column 'b'") && Contains("empty cell"));
  CHECK_THROWS_WITH(read_csv(fixture("non_numeric.csv"), b), Contains("line 3, column 'b': 'five' is not a number"));
  CHECK_THROWS_WITH(read_csv(fixture("nan.csv"), b), Contains("not finite"));
  CHECK_THROWS_WITH(read_csv(fixture("overflow.csv"), b), Contains("out of the range"));
  CHECK_THROWS_WITH(read_csv(fixture("ragged.csv")), Contains("line 3: 2 fields, but the header has 3"));
  CHECK_THROWS_WITH(read_csv(fixture("unterminated.csv")), Contains("malformed CSV"));
  CHECK_THROWS_WITH(read_csv(fixture("duplicate_header.csv")), Contains("'a' appears twice"));
  CHECK_THROWS_WITH(read_csv(fixture("header_only.csv")), Contains("no data rows"));
  const std::vector<std::string> missing{"zzz"};
  CHECK_THROWS_WITH(read_csv(fixture("empty_cell.csv"), missing), Contains("no column 'zzz'; columns are a, b, c"));
  CHECK_THROWS_WITH(read_csv(fixture("does_not_exist.csv")), Contains("cannot open"));
  // unwanted columns may hold anything
  const std::vector<std::string> a{"a"};
  CHECK(read_csv(fixture("non_numeric.csv"), a).rows() == 2);
}

TEST_CASE("read_csv detects a semicolon or tab separator from the header, or takes one", "[data_table]") {
  using dpmu::runtime::CsvOptions;
  const std::vector<std::string> x1{"x1"};
  const TempFile semi("y;x1;x2\n1;2,5;3\n4;5;6\n");  // 2,5: a decimal comma
  const TempFile semi_ok("y;x1;x2\n1;2.5;3\n4;5;6\n");
  const auto t = read_csv(semi_ok.path, x1);
  CHECK(t.column("x1") == std::vector<double>{2.5, 5.0});
  CHECK(t.separator() == ';');
  CHECK(t.separator_detected());
  const TempFile tab("y\tx1\tx2\r\n1\t2\t3\r\n");
  CHECK(read_csv(tab.path, x1).column("x1") == std::vector<double>{2.0});
  CHECK(read_csv(tab.path, x1).separator() == '\t');
  // a decimal comma is named as such
  CHECK_THROWS_WITH(read_csv(semi.path, x1), Contains("'2,5' is not a number") && Contains("decimal commas"));
  // an explicit separator is used as given; a wrong one names itself
  CsvOptions comma;
  comma.separator = ',';
  CHECK_THROWS_WITH(read_csv(semi_ok.path, x1, comma),
                    Contains("no column 'x1'; columns are y;x1;x2") && Contains("',' (comma)") && Contains("--sep"));
  CsvOptions semicolon;
  semicolon.separator = ';';
  CHECK(read_csv(semi_ok.path, x1, semicolon).column("x1").size() == 2);
  CHECK_FALSE(read_csv(semi_ok.path, x1, semicolon).separator_detected());
  // comma files are unchanged: a semicolon inside a comma-separated header is just a character
  const TempFile mixed("a;b,c\n1,2\n");
  CHECK(read_csv(mixed.path).names() == std::vector<std::string>{"a;b", "c"});
  // both candidates and no comma: ambiguous, ask
  const TempFile both("a;b\tc\n1;2\t3\n");
  CHECK_THROWS_WITH(read_csv(both.path), Contains("both ';' and tabs") && Contains("--sep"));
  // a ragged row says which separator was used
  const TempFile ragged("y;x1\n1;2;3\n");
  CHECK_THROWS_WITH(read_csv(ragged.path), Contains("3 fields, but the header has 2") && Contains("';' (semicolon)"));
  CHECK(dpmu::runtime::parse_csv_separator("tab") == '\t');
  CHECK(dpmu::runtime::parse_csv_separator("auto") == 0);
  CHECK_THROWS_WITH(dpmu::runtime::parse_csv_separator("|"), Contains("not a separator"));
}

TEST_CASE("read_csv messages survive NUL bytes and escape control characters", "[data_table]") {
  const TempFile nul(
      std::string("a,b\n1,2\0"
                  "5\n",
                  10));
  const std::vector<std::string> b{"b"};
  try {
    read_csv(nul.path, b);
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();  // as main() prints it: up to the first NUL
    CHECK_THAT(what, Contains("'2\\05' is not a number") && Contains("NUL byte"));
    CHECK(std::string(e.what()).size() == std::char_traits<char>::length(e.what()));
  }
  const TempFile ctrl("a\x1b[2J,b\x07\n1,2\n");
  const std::vector<std::string> zzz{"zzz"};
  try {
    read_csv(ctrl.path, zzz);
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Contains("columns are a\\x1b[2J, b\\x07"));
    CHECK(what.find('\x1b') == std::string::npos);
    CHECK(what.find('\x07') == std::string::npos);
  }
  CHECK(dpmu::runtime::printable(std::string("a\0b\tc\x7f", 6)) == "a\\0b\\tc\\x7f");
}

TEST_CASE("read_csv refuses lines longer than the cap (1 MiB): /dev/zero, binary files", "[data_table]") {
  CHECK_THROWS_WITH(read_csv("/dev/zero"), Contains("/dev/zero: line 1 is longer than 1 MiB"));
  dpmu::runtime::CsvOptions small;
  small.max_line_bytes = 64;
  const TempFile long_header(std::string(100, 'a') + "\n1\n");
  CHECK_THROWS_WITH(read_csv(long_header.path, {}, small), Contains("line 1 is longer than 64 bytes"));
  std::string body = "a,b\n1,2\n";
  body += "3," + std::string(80, '4') + "\n";
  const TempFile long_line(body);
  CHECK_THROWS_WITH(read_csv(long_line.path, {}, small), Contains("line 3 is longer than 64 bytes"));
  CHECK(read_csv(long_line.path).rows() == 2);  // the default cap reads it
  // a quoted record spanning many short lines is capped too (at chunk granularity)
  std::string quoted = "a,b\n1,\"";
  for (int i = 0; i < 30000; ++i) quoted += "1234567\n";
  quoted += "\"\n";
  const TempFile long_record(quoted);
  small.max_line_bytes = 1000;
  CHECK_THROWS_WITH(read_csv(long_record.path, {}, small), Contains("is longer than 1000 bytes"));
}

TEST_CASE("read_csv_once parses what read_csv parses and keeps exactly the bytes it read", "[data_table]") {
  const std::string text = "\xEF\xBB\xBF\"a\",b,c\r\n1,2,3\r\n4,5,6\r\n";
  TempFile f(text);
  std::string bytes = "stale";
  const auto once = dpmu::runtime::read_csv_once(f.path, bytes, std::vector<std::string>{"c", "a"});
  const auto plain = read_csv(f.path, std::vector<std::string>{"c", "a"});
  CHECK(bytes == text);
  CHECK(once.column("a") == plain.column("a"));
  CHECK(once.column("c") == plain.column("c"));
  // A file with more than one read buffer of bytes is kept whole.
  std::string big = "x,y\n";
  for (int i = 0; i < 20000; ++i) big += std::to_string(i) + "," + std::to_string(2 * i) + "\n";
  TempFile g(big);
  CHECK(dpmu::runtime::read_csv_once(g.path, bytes).rows() == 20000);
  CHECK(bytes == big);
  // A file refused on its first line is not read into memory (/dev/zero: no line end).
  CHECK_THROWS_WITH(dpmu::runtime::read_csv_once("/dev/zero", bytes), Contains("longer than 1 MiB"));
  CHECK(bytes.size() < (std::size_t{4} << 20));
}

TEST_CASE("read_csv: a 140 000-column header is checked in linear time, its repeats found, its rows read",
          "[data_table]") {
  // Names c1..c140000: a header of about 1 MB (under the 1 MiB cap), rows of about 280 KB.
  const int k = 140000;
  std::string header;
  for (int j = 1; j <= k; ++j) header += (j > 1 ? ",c" : "c") + std::to_string(j);
  std::string rows;
  for (int i = 0; i < 3; ++i) {
    rows += std::to_string(i) + "," + std::to_string(10 - i);
    for (int j = 3; j <= k; ++j) rows += ",0";
    rows += "\n";
  }
  const TempFile wide(header + "\n" + rows);
  // Before, every pair of names was compared (about 10^10 comparisons: over a minute); the bound
  // here is generous for a loaded machine, far below the quadratic time.
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> wanted{"c140000", "c2"};
  const auto t = read_csv(wide.path, wanted);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 10.0);
  REQUIRE(t.rows() == 3);  // the 280 KB rows after a 1 MB header are not "longer than 1 MiB"
  CHECK(t.column("c2") == std::vector<double>{10, 9, 8});
  CHECK(t.column("c140000") == std::vector<double>{0, 0, 0});
  // every column (wanted empty): all 140 000 names, each found by name
  const auto all = read_csv(wide.path);
  CHECK(all.names().size() == static_cast<std::size_t>(k));
  CHECK(all.has_column("c77777"));
  CHECK_FALSE(all.has_column("c140001"));
  CHECK(all.column("c1") == std::vector<double>{0, 1, 2});
  // a repeat 139 999 columns apart is still found, naming the column
  const TempFile repeated(header.substr(0, header.rfind(',')) + ",c1\n" + rows);
  CHECK_THROWS_WITH(read_csv(repeated.path), Contains("line 1: column 'c1' appears twice in the header"));
}
