#include "dpmu/runtime/tidy.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/results.hpp"
#include "dpmu/runtime/runner.hpp"
#include "engine_test_experiments.hpp"
#include "temp_dir.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
namespace rt = dpmu::runtime;

namespace {

struct TempDir : dpmu::test::TempDir {
  TempDir() : dpmu::test::TempDir("dpmu_tidy_test") {}
};

/// A test_engine study (tests/runtime/engine_test_experiments.hpp): 8 cells, metric x scalar and
/// v of size p (1 or 3; labelled where p = 3), some replicates failing (NaN).
fs::path run_small_study(const TempDir& dir) {
  dpmu_test::register_test_experiments();
  const auto spec = rt::parse_study(
      "experiment: test_engine\nmaster_seed: 7\nreplicates: 12\nblock_size: 5\nparameters:\n  fail_probability: 0.2\n"
      "grid:\n  - n: [10, 20]\n    p: [1, 3]\n    mechanism: [laplace, gaussian]\n",
      "tidy.yaml");
  rt::RunOptions o;
  o.out = dir / "study.h5";
  o.quiet = true;
  rt::run_study(spec, o);
  return o.out;
}

template <class T>
const std::vector<T>& col(const rt::TidyTable& t, const std::string& name) {
  for (const auto& c : t.columns)
    if (c.name == name) return std::get<std::vector<T>>(c.values);
  FAIL("no column " << name);
  throw std::logic_error("unreachable");
}

std::vector<std::string> names(const rt::TidyTable& t) {
  std::vector<std::string> out;
  for (const auto& c : t.columns) out.push_back(c.name);
  return out;
}

/// cell_key, the file's parameters, then `rest`.
std::vector<std::string> expected_columns(const rt::StudyResults& r, const std::vector<std::string>& rest) {
  std::vector<std::string> out = {"cell_key"};
  out.insert(out.end(), r.parameter_names.begin(), r.parameter_names.end());
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

TEST_CASE("write_csv: RFC 4180 quoting, NA for NaN and missing values, Inf, CRLF", "[tidy]") {
  rt::TidyTable t;
  t.columns.push_back({"s", std::vector<std::string>{"plain", "a,b", "say \"hi\"", "two\nlines", " pad", "", "§",
                                                     rt::kTidyMissingString}});
  t.columns.push_back({"x", std::vector<double>{0.1, 1.0 / 3, 1e300, -0.0, std::nan(""), INFINITY, -INFINITY, 5e-324}});
  t.columns.push_back({"i", std::vector<std::int64_t>{0, -1, std::numeric_limits<std::int64_t>::max(),
                                                      rt::kTidyMissingInteger, 42, 7, 8, 9}});
  CHECK(t.rows() == 8);
  std::ostringstream out;
  rt::write_csv(t, out);
  CHECK(out.str() ==
        "s,x,i\r\n"
        "plain,0.1,0\r\n"
        "\"a,b\",0.3333333333333333,-1\r\n"
        "\"say \"\"hi\"\"\",1e+300,9223372036854775807\r\n"
        "\"two\nlines\",-0,NA\r\n"
        "\" pad\",NA,42\r\n"
        ",Inf,7\r\n"
        "§,-Inf,8\r\n"
        "NA,5e-324,9\r\n");
  t.columns[1] = {"x", std::vector<double>{1.0}};
  std::ostringstream bad;
  CHECK_THROWS_WITH(rt::write_csv(t, bad), Contains("column 'x' has another length"));
  CHECK(rt::TidyTable{}.rows() == 0);
}

TEST_CASE("write_csv: doubles read back bit for bit (shortest round-trip form)", "[tidy]") {
  std::mt19937_64 gen(3);
  std::vector<double> v;
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t bits = gen();
    double x;
    std::memcpy(&x, &bits, sizeof x);
    if (std::isfinite(x)) v.push_back(x);
    v.push_back(std::ldexp(static_cast<double>(gen() >> 11), -53) * 100.0);
  }
  rt::TidyTable t;
  t.columns.push_back({"x", v});
  std::ostringstream out;
  rt::write_csv(t, out);
  std::istringstream in(out.str());
  std::string line;
  std::getline(in, line);
  std::size_t i = 0;
  while (std::getline(in, line)) {
    line.pop_back();  // '\r'
    const double y = std::strtod(line.c_str(), nullptr);
    REQUIRE(i < v.size());
    CHECK(std::memcmp(&y, &v[i], sizeof y) == 0);
    CHECK(line.size() <= 24);  // "-1.2345678901234567e-308": never more than 17 significant digits
    ++i;
  }
  CHECK(i == v.size());
}

TEST_CASE("tidy_summaries: one row per cell, metric and component, the numbers of summarize_component",
          "[tidy][engine]") {
  TempDir dir;
  const fs::path file = run_small_study(dir);
  const rt::StudyResults r = rt::read_results(file);
  const rt::TidyTable t = rt::tidy_summaries(file);
  CHECK(names(t) == expected_columns(r, {"metric", "component", "component_label", "mean", "sd", "mcse", "q025", "q250",
                                         "q500", "q750", "q975", "n_ok", "n_nan"}));
  // p = 1 cells: x, v[0]; p = 3 cells: x, v[0..2]
  REQUIRE(t.rows() == 4 * 2 + 4 * 4);
  std::size_t row = 0, nan_seen = 0;
  for (std::size_t c = 0; c < r.cells.size(); ++c) {
    for (std::size_t m = 0; m < r.metrics.size(); ++m) {
      for (std::size_t k = 0; k < r.metrics[m].sizes[c]; ++k, ++row) {
        const rt::Summary s = rt::summarize_component(r, c, m, k);
        CHECK(col<std::string>(t, "cell_key")[row] == rt::hex_key(r.cells[c].cell_id()));
        CHECK(col<std::int64_t>(t, "n")[row] == r.cells[c].get_int("n"));
        CHECK(col<std::string>(t, "mechanism")[row] == r.cells[c].get_string("mechanism"));
        CHECK(col<double>(t, "fail_probability")[row] == 0.2);
        CHECK(col<std::string>(t, "metric")[row] == r.metrics[m].name);
        CHECK(col<std::int64_t>(t, "component")[row] == static_cast<std::int64_t>(k));
        const std::string label = col<std::string>(t, "component_label")[row];
        if (m == 0) {
          CHECK(label.empty());
        } else if (r.cells[c].get_int("p") == 3) {
          CHECK(label == std::vector<std::string>{"v:a", "v, \"b\"", "v§c"}[k]);
        } else {
          CHECK(label == "0");
        }
        CHECK(same(col<double>(t, "mean")[row], s.mean));
        CHECK(same(col<double>(t, "sd")[row], s.sd));
        CHECK(same(col<double>(t, "mcse")[row], s.mcse));
        CHECK(same(col<double>(t, "q025")[row], s.q025));
        CHECK(same(col<double>(t, "q250")[row], s.q250));
        CHECK(same(col<double>(t, "q500")[row], s.q500));
        CHECK(same(col<double>(t, "q750")[row], s.q750));
        CHECK(same(col<double>(t, "q975")[row], s.q975));
        CHECK(col<std::int64_t>(t, "n_ok")[row] == s.n_ok);
        CHECK(col<std::int64_t>(t, "n_nan")[row] == 12 - s.n_ok);
        nan_seen += static_cast<std::size_t>(12 - s.n_ok);
      }
    }
  }
  CHECK(nan_seen > 0);  // fail_probability 0.2: some replicates failed
  CHECK_THROWS_WITH(rt::tidy_summaries(dir / "missing.h5"), Contains("missing.h5: no such file"));
}

TEST_CASE("tidy_replicates: one row per cell, done replicate and component, --metric, unknown metric",
          "[tidy][engine]") {
  TempDir dir;
  const fs::path file = run_small_study(dir);
  const rt::StudyResults r = rt::read_results(file);
  const rt::TidyTable all = rt::tidy_replicates(file);
  CHECK(names(all) == expected_columns(r, {"replicate", "metric", "component", "component_label", "value"}));
  REQUIRE(all.rows() == 12 * (4 * 2 + 4 * 4));
  std::size_t row = 0;
  for (std::size_t c = 0; c < r.cells.size(); ++c) {
    const auto& cr = r.cell_results[c];
    for (std::size_t i = 0; i < 12; ++i) {
      for (std::size_t m = 0; m < r.metrics.size(); ++m) {
        for (std::size_t k = 0; k < r.metrics[m].sizes[c]; ++k, ++row) {
          CHECK(col<std::int64_t>(all, "replicate")[row] == static_cast<std::int64_t>(i));
          CHECK(col<std::string>(all, "metric")[row] == r.metrics[m].name);
          CHECK(col<std::string>(all, "component_label")[row] == r.metrics[m].component_label(c, k));
          CHECK(same(col<double>(all, "value")[row], cr.values[i * cr.width + r.offset(c, m) + k]));
        }
      }
    }
  }
  const rt::TidyTable v = rt::tidy_replicates(file, "v");
  CHECK(v.rows() == 12 * (4 * 1 + 4 * 3));
  for (const auto& name : col<std::string>(v, "metric")) CHECK(name == "v");
  CHECK_THROWS_WITH(rt::tidy_replicates(file, "nope"),
                    Contains("study.h5: no metric 'nope' (the file's metrics: x, v)"));
}

TEST_CASE("results files keep component labels, files of schema 1.1 read with labels 0, 1, ...", "[tidy][engine]") {
  TempDir dir;
  const rt::StudyResults r = rt::read_results(run_small_study(dir));
  for (std::size_t c = 0; c < r.cells.size(); ++c) {
    if (r.cells[c].get_int("p") == 3) {
      CHECK(r.metrics[1].component_labels[c] == std::vector<std::string>{"v:a", "v, \"b\"", "v§c"});
    } else {
      CHECK(r.metrics[1].component_labels[c] == std::vector<std::string>{"0"});  // written as the default
    }
  }
  const fs::path old = fs::path(DPMU_TEST_FIXTURE_DIR) / "results_schema_1_1.h5";
  const rt::StudyResults o = rt::read_results(old);
  CHECK(o.info.description == "schema 1.1 fixture (§ 3.2, docs/results-schema.md)");  // ASCII-marked UTF-8 bytes
  CHECK(o.metrics[2].name == "quantiles");
  CHECK(o.metrics[2].component_labels.empty());
  CHECK(o.metrics[2].component_label(1, 2) == "2");
  const rt::TidyTable t = rt::tidy_summaries(old);
  CHECK(t.rows() == 2 * 5);
  CHECK(col<std::string>(t, "component_label")[4] == "2");
}
