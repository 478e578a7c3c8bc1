#include "dpmu/runtime/data_table.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using dpmu::runtime::read_csv;

namespace {
std::string fixture(const std::string& name) { return std::string(DPMU_TEST_FIXTURE_DIR) + "/" + name; }
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
