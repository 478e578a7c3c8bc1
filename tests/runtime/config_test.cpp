#include "dpmu/runtime/config.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "engine_test_experiments.hpp"

using Catch::Matchers::Contains;
using dpmu::runtime::ConfigError;
using dpmu::runtime::parse_study;
using dpmu::runtime::StudySpec;

namespace {

StudySpec parse(const std::string& text) {
  dpmu_test::register_test_experiments();
  return parse_study(text, "study.yaml");
}

/// The ConfigError message of a config that must fail (empty if it does not fail).
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string parse_error_normal_mean() { return error_of("experiment: normal_mean\nmaster_seed: 1\nreplicates: 2\n"); }

const std::string kHead = "experiment: test_engine\nmaster_seed: 1\nreplicates: 10\n";

}  // namespace

TEST_CASE("grid: Cartesian product, first axis outermost, fixed parameters and defaults", "[engine][config]") {
  const auto s = parse(kHead + "parameters:\n  p: 3\ngrid:\n  n: [10, 20]\n  epsilon: [0.5, 1, 2]\n");
  REQUIRE(s.cells.size() == 6);
  CHECK(s.cells[0].get_int("n") == 10);
  CHECK(s.cells[0].get_double("epsilon") == 0.5);
  CHECK(s.cells[1].get_double("epsilon") == 1.0);
  CHECK(s.cells[3].get_int("n") == 20);
  CHECK(s.cells[5].get_int("p") == 3);
  CHECK(s.cells[5].get_string("mechanism") == "laplace");  // default
  CHECK(s.cells[0].key() ==
        "delta=1e-06;epsilon=0.5;fail_prepare=0;fail_probability=0;lower=-1;mechanism=laplace;n=10;num_subsets=1;p=3;"
        "stop_after=0;upper=1");
  CHECK(s.cells[0].cell_id() == dpmu::core::fnv1a_64(s.cells[0].key()));
  CHECK(s.cells[0].data_key() == "n=10;p=3");
  // Common random numbers: same data factors, different method factors -> same data_id.
  CHECK(s.cells[0].data_id() == s.cells[2].data_id());
  CHECK(s.cells[0].cell_id() != s.cells[2].cell_id());
  CHECK(s.cells[0].data_id() != s.cells[3].data_id());
  CHECK(s.replicates == 10);
  CHECK(s.block_size == 10);  // capped at replicates
}

TEST_CASE("grid: blocks, zip and exclude express |T| depending on p", "[engine][config]") {
  const auto s = parse(kHead + R"(grid:
  - p: 2
    num_subsets: [1, 2, 3]
  - p: [6, 9]
    num_subsets: [1, 3, 4, 6, 9]
    exclude:
      - {p: 6, num_subsets: [4, 9]}
      - {p: 9, num_subsets: [3, 6]}
  - zip: {n: [50, 60], epsilon: [0.1, 0.2]}
    mechanism: [laplace, gaussian]
exclude:
  - {p: 2, num_subsets: 3}
)");
  std::vector<std::string> got;
  for (const auto& c : s.cells) {
    got.push_back(std::to_string(c.get_int("p")) + ":" + std::to_string(c.get_int("num_subsets")));
  }
  const std::vector<std::string> want = {"2:1", "2:2", "6:1", "6:3", "6:6", "9:1",
                                         "9:4", "9:9", "2:1", "2:1", "2:1", "2:1"};
  CHECK(got == want);
  REQUIRE(s.cells.size() == 12);
  CHECK(s.cells[8].get_int("n") == 50);
  CHECK(s.cells[8].get_double("epsilon") == 0.1);
  CHECK(s.cells[9].get_string("mechanism") == "gaussian");
  CHECK(s.cells[10].get_int("n") == 60);
  CHECK(s.cells[10].get_double("epsilon") == 0.2);
}

TEST_CASE("grid: ranges (log-spaced integers, linear count, step)", "[engine][config]") {
  const auto s =
      parse(kHead +
            "grid:\n  n: {from: 100, to: 100000, count: 4, scale: log}\n  epsilon: {from: 0.5, to: 1.5, step: 0.5}\n");
  REQUIRE(s.cells.size() == 12);
  std::vector<std::int64_t> ns;
  for (std::size_t i = 0; i < 12; i += 3) ns.push_back(s.cells[i].get_int("n"));
  CHECK(ns == std::vector<std::int64_t>{100, 1000, 10000, 100000});
  CHECK(s.cells[0].get_double("epsilon") == 0.5);
  CHECK(s.cells[1].get_double("epsilon") == 1.0);
  CHECK(s.cells[2].get_double("epsilon") == 1.5);
  const auto t = parse(kHead + "grid:\n  lower: {from: -2, to: -1, count: 3}\n");
  REQUIRE(t.cells.size() == 3);
  CHECK(t.cells[1].get_double("lower") == -1.5);
}

TEST_CASE("no grid gives one cell, --replicates overrides, yaml ints stay ints", "[engine][config]") {
  dpmu_test::register_test_experiments();
  const auto s = parse_study(kHead + "parameters: {n: 7, epsilon: 2}\n", "x.yaml", {.replicates = 3});
  REQUIRE(s.cells.size() == 1);
  CHECK(s.replicates == 3);
  CHECK(std::holds_alternative<std::int64_t>(s.cells[0].get("n")));
  CHECK(std::holds_alternative<double>(s.cells[0].get("epsilon")));  // declared real
  CHECK(s.cells[0].get_double("epsilon") == 2.0);
  const auto t = parse(kHead + "parameters: {n: 1e5}\n");  // a real with an integer value is accepted
  CHECK(t.cells[0].get_int("n") == 100000);
}

TEST_CASE("config errors name the file, line and key", "[engine][config]") {
  SECTION("malformed YAML") {
    CHECK_THAT(error_of("experiment: test_engine\nmaster_seed: [1,\n"),
               Contains("study.yaml:3") && Contains("invalid YAML"));
  }
  SECTION("unknown top-level key") {
    CHECK_THAT(error_of(kHead + "replicatse: 5\n"), Contains("study.yaml:4: replicatse: unknown key"));
  }
  SECTION("duplicated key") {
    CHECK_THAT(error_of(kHead + "replicates: 5\n"), Contains("study.yaml:4: replicates: key given twice"));
  }
  SECTION("missing experiment") {
    CHECK_THAT(error_of("master_seed: 1\nreplicates: 2\n"), Contains("experiment: missing required key"));
  }
  SECTION("unknown experiment lists the registered ones") {
    CHECK_THAT(error_of("experiment: nosuch\nmaster_seed: 1\nreplicates: 2\n"),
               Contains("study.yaml:1: experiment: unknown experiment 'nosuch'; registered experiments are") &&
                   Contains("normal_mean") && Contains("test_engine"));
  }
  SECTION("replicates is not an integer >= 1") {
    CHECK_THAT(error_of("experiment: test_engine\nmaster_seed: 1\nreplicates: ten\n"),
               Contains("study.yaml:3: replicates: 'ten' is not an integer >= 1"));
    CHECK_THAT(error_of("experiment: test_engine\nmaster_seed: 1\nreplicates: 0\n"), Contains("replicates: '0'"));
  }
  SECTION("master_seed is negative") {
    CHECK_THAT(error_of("experiment: test_engine\nmaster_seed: -1\nreplicates: 2\n"),
               Contains("study.yaml:2: master_seed: '-1' is not an integer in [0, 2^64)"));
  }
  SECTION("wrong type: integer parameter given a real") {
    CHECK_THAT(error_of(kHead + "parameters:\n  n: 2.5\n"),
               Contains("study.yaml:5: parameters.n: '2.5' is not an integer"));
  }
  SECTION("wrong type: real parameter given text") {
    CHECK_THAT(error_of(kHead + "grid:\n  epsilon: [1, abc]\n"),
               Contains("study.yaml:5: grid.epsilon[1]: 'abc' is not a finite number"));
  }
  SECTION("epsilon <= 0") {
    CHECK_THAT(error_of(kHead + "grid:\n  epsilon: [1, 0]\n"),
               Contains("study.yaml:5: grid.epsilon: value 0 is out of range; epsilon must be > 0"));
  }
  SECTION("delta outside (0, 1)") {
    CHECK_THAT(error_of(kHead + "parameters:\n  delta: 1.5\n"),
               Contains("study.yaml:5: parameters.delta: value 1.5 is out of range; delta must be > 0 and < 1"));
  }
  SECTION("M < 1") {
    CHECK_THAT(error_of(kHead + "parameters:\n  num_subsets: 0\n"),
               Contains("study.yaml:5: parameters.num_subsets: value 0 is out of range; num_subsets must be >= 1"));
  }
  SECTION("L >= U (experiment validate, line of the key)") {
    CHECK_THAT(error_of(kHead + "parameters:\n  upper: 1\ngrid:\n  lower: [0, 2]\n"),
               Contains("study.yaml:7: lower: must be < upper (cell"));
  }
  SECTION("n <= p + 1 (experiment validate)") {
    CHECK_THAT(error_of(kHead + "parameters:\n  n: 3\ngrid:\n  p: [1, 2]\n"),
               Contains("study.yaml:5: n: must be > p + 1 (n = 3, p = 2)"));
  }
  SECTION("string not allowed") {
    CHECK_THAT(error_of(kHead + "grid:\n  mechanism: [laplace, wishart]\n"),
               Contains("'wishart' is not allowed; mechanism must be one of laplace, gaussian"));
  }
  SECTION("unknown parameter") {
    CHECK_THAT(
        error_of(kHead + "grid:\n  epsilom: [1]\n"),
        Contains("study.yaml:5: grid.epsilom: unknown parameter of experiment 'test_engine'; parameters are n, p"));
  }
  SECTION("zip lists of different lengths") {
    CHECK_THAT(error_of(kHead + "grid:\n  zip: {n: [10, 20], epsilon: [1]}\n"),
               Contains("zip needs lists of equal length"));
  }
  SECTION("parameter both fixed and on the grid") {
    CHECK_THAT(error_of(kHead + "parameters: {n: 10}\ngrid:\n  n: [10, 20]\n"),
               Contains("study.yaml:6: grid.n: parameter is both fixed"));
  }
  SECTION("required parameter missing") { CHECK_THAT(parse_error_normal_mean(), Contains("required parameter 'n'")); }
  SECTION("the same cell twice") {
    CHECK_THAT(error_of(kHead + "grid:\n  - n: [10]\n  - n: [10]\n"), Contains("is produced twice"));
  }
  SECTION("every combination excluded") {
    CHECK_THAT(error_of(kHead + "grid:\n  n: [10]\nexclude:\n  - {n: 10}\n"), Contains("the grid has no cells"));
  }
  SECTION("range with both count and step, log range from <= 0") {
    CHECK_THAT(error_of(kHead + "grid:\n  n: {from: 10, to: 20, count: 2, step: 5}\n"),
               Contains("exactly one of 'count' or 'step'"));
    CHECK_THAT(error_of(kHead + "grid:\n  lower: {from: -1, to: 0.5, count: 3, scale: log}\n"),
               Contains("a log-scale range needs from > 0"));
    CHECK_THAT(error_of(kHead + "grid:\n  n: {from: 10, to: 11, count: 5}\n"), Contains("twice after rounding"));
    CHECK_THAT(error_of(kHead + "grid:\n  n: {from: 10, to: 20, by: 5}\n"),
               Contains("grid.n.by: unknown key in a range"));
  }
  SECTION("a list where a single value is needed") {
    CHECK_THAT(error_of(kHead + "parameters:\n  n: [1, 2]\n"),
               Contains("parameters.n: expected a single value, got a list"));
  }
  SECTION("every error is reported at once") {
    const std::string msg = error_of(
        "experiment: test_engine\nmaster_seed: x\nreplicates: 0\nfoo: 1\n"
        "parameters:\n  epsilon: -1\n  delta: 2\n");
    CHECK_THAT(msg, Contains("study.yaml:2: master_seed") && Contains("study.yaml:3: replicates") &&
                        Contains("study.yaml:4: foo") && Contains("study.yaml:6: parameters.epsilon") &&
                        Contains("study.yaml:7: parameters.delta"));
  }
}

TEST_CASE("list parameters: a YAML sequence under parameters, typed items, canonical key text", "[engine][config]") {
  const std::string head = "experiment: test_lists\nmaster_seed: 1\nreplicates: 2\n";
  const auto s = parse(head + "parameters:\n  tags: [a, c]\n  indices: [1, 3, 4]\n  weights: [0.5, 2]\n");
  REQUIRE(s.cells.size() == 1);
  const auto& c = s.cells[0];
  CHECK(c.get_string_list("tags") == std::vector<std::string>{"a", "c"});
  CHECK(c.get_int_list("indices") == std::vector<std::int64_t>{1, 3, 4});
  CHECK(c.get_real_list("weights") == std::vector<double>{0.5, 2.0});
  // canonical text: items joined by ", " (integers in decimal, reals shortest round trip)
  CHECK(c.key() == "indices=1, 3, 4;tags=a, c;weights=0.5, 2");
  CHECK(c.data_key() == "weights=0.5, 2");
  CHECK_THROWS_AS(c.get_string("tags"), std::invalid_argument);
  CHECK_THROWS_AS(c.get_string_list("indices"), std::invalid_argument);
  // the canonical text parses back to the value (results files store it)
  for (const auto& [name, value] : c.values()) {
    const auto type = name == "tags"      ? dpmu::runtime::ParameterType::string_list
                      : name == "indices" ? dpmu::runtime::ParameterType::integer_list
                                          : dpmu::runtime::ParameterType::real_list;
    CHECK(dpmu::runtime::parse_list_value(type, dpmu::runtime::format_parameter_value(value)) == value);
  }
  // defaults, the empty list
  const auto d = parse(head + "parameters:\n  indices: []\n");
  CHECK(d.cells[0].get_string_list("tags").empty());
  CHECK(d.cells[0].get_real_list("weights") == std::vector<double>{1.0});
  CHECK(d.cells[0].key() == "indices=;tags=;weights=1");
  // as a grid axis, each value is a list
  const auto g = parse(head + "parameters:\n  indices: [2]\ngrid:\n  weights: [[1, 2], [3], []]\n");
  REQUIRE(g.cells.size() == 3);
  CHECK(g.cells[1].get_real_list("weights") == std::vector<double>{3.0});
  CHECK(g.data_groups.size() == 3);
}

TEST_CASE("list parameters: bad values are config errors naming the item", "[engine][config]") {
  const std::string head = "experiment: test_lists\nmaster_seed: 1\nreplicates: 2\nparameters:\n";
  CHECK_THAT(error_of(head + "  indices: \"1, 3\"\n"),
             Contains("study.yaml:5: parameters.indices: expected a list (e.g. [a, b]) for the list parameter indices, "
                      "got a scalar"));
  CHECK_THAT(error_of(head + "  indices: [1, x]\n"), Contains("parameters.indices[1]: 'x' is not an integer"));
  CHECK_THAT(error_of(head + "  indices: [1, [2]]\n"), Contains("parameters.indices[1]: expected a single value"));
  CHECK_THAT(error_of(head + "  indices: [1]\n  tags: [a, d]\n"),
             Contains("'d' is not allowed; tags must be one of a, b, c"));
  CHECK_THAT(error_of(head + "  indices: [1]\n  tags: [\"a,b\"]\n"), Contains("contains a comma"));
  CHECK_THAT(error_of(head + "  indices: [1]\n  weights: [1, -2]\n"), Contains("value -2 is out of range"));
  CHECK_THAT(error_of(head + "  indices: [1]\ngrid:\n  weights: [1, 2]\n"),
             Contains("grid.weights[0]: expected a list"));
  CHECK_THAT(error_of(head + "  indices: [1]\ngrid:\n  weights: {from: 1, to: 2, count: 2}\n"),
             Contains("a range needs a numeric parameter"));
}

TEST_CASE("Cell::stream_id leaves the stream-neutral parameters out of the streams' key", "[engine][config]") {
  using dpmu::runtime::Cell;
  using dpmu::runtime::ParameterValue;
  const std::vector<std::pair<std::string, ParameterValue>> base = {{"n", std::int64_t{10}},
                                                                    {"mechanism", std::string("laplace")}};
  auto with = base;
  with.emplace_back("pruning_share", 1e-17);
  auto with_default = base;
  with_default.emplace_back("pruning_share", 0.0);
  const Cell plain(base, {"n"});
  Cell pruned(with, {"n"});
  Cell unpruned(with_default, {"n"});
  // without neutral parameters the streams are keyed by the cell key, as always
  CHECK(plain.stream_id() == plain.cell_id());
  CHECK(pruned.stream_id() == pruned.cell_id());
  pruned.set_stream_neutral({"pruning_share"});
  unpruned.set_stream_neutral({"pruning_share"});
  // the cells stay distinct, but draw the noise of the cell without the parameter
  CHECK(pruned.cell_id() != unpruned.cell_id());
  CHECK(pruned.stream_id() == plain.cell_id());
  CHECK(unpruned.stream_id() == plain.cell_id());
  CHECK(pruned.data_id() == plain.data_id());
  // naming a parameter the cell does not have changes nothing
  Cell other(base, {"n"});
  other.set_stream_neutral({"absent"});
  CHECK(other.stream_id() == other.cell_id());
}
