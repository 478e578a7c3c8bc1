// The cost-weighted ETA (runtime::WorkEstimate) and the simulation study's cost model
// (experiments::ssp_generate_cost, ssp_analyse_cost).
#include "dpmu/runtime/work_estimate.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <thread>
#include <vector>

#include "dpmu/experiments/simulation_cost.hpp"

namespace rt = dpmu::runtime;
namespace ex = dpmu::experiments;

TEST_CASE("WorkEstimate: ETA from predicted work, exact when the model is right", "[work_estimate]") {
  // Three cells with per-replicate costs 1, 10, 100 and 4 replicates each; total 444 units.
  rt::WorkEstimate w({1.0, 10.0, 100.0}, {4, 4, 4});
  CHECK(w.total() == Approx(444.0));
  CHECK(std::isinf(w.eta_seconds(1.0)));
  // The small cell done in 2 s (0.5 s per unit): a rate-based ETA would say 2 s per 4 replicates
  // → 4 s for the 8 left; the work-based ETA says 440 units × 0.5 s = 220 s, the true time.
  w.add(0, 4);
  CHECK(w.done() == Approx(4.0));
  CHECK(w.fraction_done() == Approx(4.0 / 444.0));
  CHECK(w.eta_seconds(2.0) == Approx(220.0));
  w.add(1, 4);
  w.add(2, 4);
  CHECK(w.eta_seconds(222.0) == 0.0);
  CHECK(w.fraction_done() == 1.0);
  w.add(7, 1);  // an unknown cell index is ignored
  CHECK(w.fraction_done() == 1.0);
}

TEST_CASE("WorkEstimate: one-off set-up time is not extrapolated", "[work_estimate]") {
  // 10 cells of cost 1; 8 s of calibration, then 1 s per cell. After 2 cells (10 s elapsed) the
  // rate-based extrapolation of all the elapsed time would say 40 s left; the set-up does not
  // recur, so 8 cells × 1 s = 8 s left.
  rt::WorkEstimate w(std::vector<double>(10, 1.0), std::vector<std::uint64_t>(10, 1));
  w.add(0, 1);
  w.add(1, 1);
  CHECK(w.eta_seconds(10.0) == Approx(40.0));
  w.add_setup_seconds(8.0);
  CHECK(w.setup_seconds() == Approx(8.0));
  CHECK(w.eta_seconds(10.0) == Approx(8.0));
  w.add_setup_seconds(-1.0);  // ignored, as NaN and infinity
  w.add_setup_seconds(std::nan(""));
  w.add_setup_seconds(INFINITY);
  CHECK(w.setup_seconds() == Approx(8.0));
  CHECK(w.eta_seconds(5.0) == 0.0);  // elapsed below the set-up: no time is attributed to work yet
}

TEST_CASE("WorkEstimate: invalid costs, huge totals and concurrent adds", "[work_estimate]") {
  CHECK_THROWS_WITH(rt::WorkEstimate({1.0}, {1, 2}), Catch::Contains("same length"));
  rt::WorkEstimate nan_cost({std::nan(""), 3.0}, {1, 1});  // NaN counts as the mean of the valid costs
  CHECK(nan_cost.total() == Approx(6.0));
  rt::WorkEstimate huge({1e30}, {1000});
  CHECK(huge.total() == Approx(1e33).epsilon(1e-6));
  huge.add(0, 500);
  CHECK(huge.fraction_done() == Approx(0.5).epsilon(1e-9));
  rt::WorkEstimate par({2.0}, {20000});
  std::thread a([&] {
    for (int i = 0; i < 10000; ++i) par.add(0, 1);
  });
  std::thread b([&] {
    for (int i = 0; i < 10000; ++i) par.add(0, 1);
  });
  a.join();
  b.join();
  CHECK(par.done() == 40000.0);  // fixed point: exact whatever the interleaving
}

TEST_CASE("ssp cost model: generation linear in n, analyses 2^p, cheaper rows for the sampler", "[work_estimate]") {
  const auto rows = ex::SspGenerator::rows;
  const auto exact = ex::SspGenerator::sufficient_statistic;
  const double c0 = ex::ssp_generate_cost(0, 9, rows);
  CHECK(c0 == 20000.0);
  CHECK(ex::ssp_generate_cost(2000000, 9, rows) - c0 == Approx(2.0 * (ex::ssp_generate_cost(1000000, 9, rows) - c0)));
  CHECK(ex::ssp_generate_cost(1000000, 9, rows) - c0 == Approx(1e6 * (6.1 + 1.43 * 9)));
  CHECK(ex::ssp_generate_cost(1000000, 9, exact) - c0 == Approx(1e6 * 0.35 * 9 * 12 / 2));
  for (int p : {2, 6, 9}) CHECK(ex::ssp_generate_cost(1000000, p, exact) < ex::ssp_generate_cost(1000000, p, rows));
  // analyses: 2^p models × 3 300 ns (quadrature) or 170 ns (closed form) + 5 µs
  CHECK(ex::ssp_analyse_cost(9, true) == Approx(512.0 * 3300.0 + 5000.0));
  CHECK(ex::ssp_analyse_cost(9, false) == Approx(512.0 * 170.0 + 5000.0));
  CHECK(ex::ssp_analyse_cost(6, true) < ex::ssp_analyse_cost(9, true) / 7.0);
}
