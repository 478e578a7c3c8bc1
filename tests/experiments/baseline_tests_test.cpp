// The head-to-head experiment of DP tests (experiments/baseline_tests.cpp; docs/methods.md §11): every
// method runs on the engine's streams, reports a decision and (ToT, DP-F) a p-value in (0, 1], the
// methods of one data cell analyse the same data set, and invalid cells are refused by validate().
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "dpmu/experiments/registry.hpp"
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
