// The head-to-head experiment of DP tests (experiments/baseline_tests.cpp; docs/methods.md §11): every
// method runs on the engine's streams, reports a decision and (ToT, DP-F) a p-value in (0, 1], the
// methods of one data cell analyse the same data set, and invalid cells are refused by validate().
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "dpmu/core/random.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/runtime/data_table.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "run_replicate.hpp"

namespace ex = dpmu::experiments;
namespace rt = dpmu::runtime;

namespace {
const rt::Experiment& head_to_head() {
  ex::register_builtin_experiments();
  return rt::find_experiment("nested_test_head_to_head");
}
}  // namespace

TEST_CASE("nested_test_head_to_head: every method releases a decision on the shared data set",
          "[experiments][tot][dpf]") {
  const rt::Experiment& e = head_to_head();
  for (const std::string method : {"subsample-aggregate", "test-of-tests", "dp-f"}) {
    const rt::Cell cell = dpmu_test::cell_with_defaults(e, {{"method", method},
                                                            {"epsilon", method == "dp-f" ? 50.0 : 2.0},
                                                            {"delta", 1e-6},
                                                            {"n", std::int64_t{300}},
                                                            {"effect", 0.4},
                                                            {"null_simulations", std::int64_t{2000}}});
    e.validate(cell);
    const auto m = dpmu_test::run_replicate(e, cell, 5, 0);
    REQUIRE(m.size() == 3);
    INFO("method " << method << ": reject " << m[0] << ", p " << m[1] << ", statistic " << m[2]);
    CHECK(m[0] >= 0.0);
    CHECK(m[0] <= 1.0);
    if (method == "subsample-aggregate") {
      CHECK(std::isnan(m[1]));
    } else {
      CHECK(m[1] > 0.0);
      CHECK(m[1] <= 1.0);
    }
    // a strong effect at n = 300 (epsilon 2; dp-f at epsilon 50, rho 12.3: at epsilon 2, rho = 0.07 and the
    // noise swamps the moments, F = inf and p = 0.5): every method rejects on this replicate
    CHECK(m[0] == 1.0);
  }
  // the methods differ only in method parameters: one data key
  const rt::Cell a = dpmu_test::cell_with_defaults(
      e, {{"method", std::string("dp-f")}, {"epsilon", 1.0}, {"delta", 1e-6}, {"n", std::int64_t{300}}});
  const rt::Cell b = dpmu_test::cell_with_defaults(
      e, {{"method", std::string("test-of-tests")}, {"epsilon", 1.0}, {"n", std::int64_t{300}}});
  CHECK(a.data_cell().key() == b.data_cell().key());
}

TEST_CASE("nested_test_head_to_head: invalid cells are refused before any work", "[experiments]") {
  const rt::Experiment& e = head_to_head();
  const rt::Cell no_delta =
      dpmu_test::cell_with_defaults(e, {{"method", std::string("dp-f")}, {"epsilon", 1.0}, {"n", std::int64_t{100}}});
  CHECK_THROWS_AS(e.validate(no_delta), std::invalid_argument);
  const rt::Cell too_small = dpmu_test::cell_with_defaults(e, {{"method", std::string("subsample-aggregate")},
                                                               {"epsilon", 1.0},
                                                               {"n", std::int64_t{30}},
                                                               {"num_subsets", std::int64_t{10}}});
  CHECK_THROWS(e.validate(too_small));
}

TEST_CASE("nested_test_head_to_head: design hsb resamples HSB2's standardised scores", "[experiments][hsb]") {
  const rt::Experiment& e = head_to_head();
  const rt::Cell cell = dpmu_test::cell_with_defaults(e, {{"design", std::string("hsb")},
                                                          {"method", std::string("test-of-tests")},
                                                          {"epsilon", 1.0},
                                                          {"n", std::int64_t{4000}},
                                                          {"q", std::int64_t{3}},
                                                          {"effect", 0.2}});
  e.validate(cell);
  REQUIRE(e.data_files(cell).size() == 1);
  CHECK(e.data_files(dpmu_test::cell_with_defaults(
                         e, {{"method", std::string("test-of-tests")}, {"epsilon", 1.0}, {"n", std::int64_t{300}}}))
            .empty());
  // The population by hand: the 200 students' science, read, write, math, standardised (SD with n - 1).
  const std::vector<std::string> cols{"science", "read", "write", "math"};
  const rt::DataTable t = rt::read_csv(std::string(DPMU_TEST_DATA_DIR) + "/hsb2.csv", cols);
  Eigen::MatrixXd pop = t.matrix(cols);
  REQUIRE(pop.rows() == 200);
  for (Eigen::Index j = 0; j < 4; ++j) {
    const double m = pop.col(j).sum() / 200.0;
    double ss = 0.0;
    for (Eigen::Index i = 0; i < 200; ++i) ss += (pop(i, j) - m) * (pop(i, j) - m);
    pop.col(j) = (pop.col(j).array() - m) / std::sqrt(ss / 199.0);
  }
  dpmu::core::RngStream rng(3, 1, 0, dpmu::core::StreamPurpose::data);
  const auto data = e.generate_erased(cell.data_cell(), rng);
  const auto& rows = *static_cast<const Eigen::MatrixXd*>(data.get());
  REQUIRE(rows.rows() == 4000);
  REQUIRE(rows.cols() == 5);
  std::vector<int> hits(200, 0);
  double sum = 0.0, sum2 = 0.0;
  for (Eigen::Index i = 0; i < rows.rows(); ++i) {
    Eigen::Index found = -1;
    for (Eigen::Index r = 0; r < 200 && found < 0; ++r) {
      if ((pop.row(r) - rows.row(i).head(4)).cwiseAbs().maxCoeff() < 1e-12) found = r;
    }
    REQUIRE(found >= 0);  // every row is a student's standardised scores
    ++hits[static_cast<std::size_t>(found)];
    const double resid = rows(i, 4) - (1.0 + 0.5 * rows(i, 0) + 0.2 * rows.row(i).segment(1, 3).sum());
    sum += resid;
    sum2 += resid * resid;
  }
  // resampled with replacement, not a permutation: about 4000/200 = 20 draws per student
  CHECK(*std::max_element(hits.begin(), hits.end()) > 20);
  CHECK(std::count(hits.begin(), hits.end(), 0) < 5);
  // y = 1 + 0.5 science + 0.2 (read + write + math) + N(0, 1): residual mean within 4 SE (1/sqrt(4000)),
  // variance within 4 SE (sqrt(2/4000))
  CHECK(std::abs(sum / 4000.0) < 4.0 / std::sqrt(4000.0));
  CHECK(std::abs(sum2 / 4000.0 - 1.0) < 4.0 * std::sqrt(2.0 / 4000.0));
  // HSB2 has 2 common and 3 tested columns in this design
  for (const auto& [key, value] : {std::pair<std::string, std::int64_t>{"q", 4}, {"p_common", 3}}) {
    CHECK_THROWS_WITH(e.validate(dpmu_test::cell_with_defaults(e, {{"design", std::string("hsb")},
                                                                   {"method", std::string("test-of-tests")},
                                                                   {"epsilon", 1.0},
                                                                   {"n", std::int64_t{300}},
                                                                   {key, value}})),
                      Catch::Contains(key + ": design hsb"));
  }
}
