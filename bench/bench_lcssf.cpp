// LCSSF: time to compute the constrained RSS of all 2^d models (lasso homotopy when the
// constraint is active), n = 1000, X iid U[-1, 1], Y = x1 + x2 + x3 + N(0, 1).
// Args = {d, R}. Run: build/bench/dpmu_bench_lcssf   (reported in docs/lcssf.md)
#include <benchmark/benchmark.h>

#include "dpmu/core/lcssf.hpp"
#include "dpmu/core/random.hpp"

namespace {
void BM_ConstrainedRssAllModels(benchmark::State& state) {
  const int d = static_cast<int>(state.range(0));
  const double radius = static_cast<double>(state.range(1));
  const int n = 1000;
  dpmu::core::RngStream rng(99, static_cast<std::uint64_t>(d), 0, dpmu::core::StreamPurpose::data);
  Eigen::MatrixXd x(n, d);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d; ++j) x(i, j) = 2 * dpmu::core::uniform_open01(rng) - 1;
    y(i) = x(i, 0) + x(i, 1) + x(i, 2) + dpmu::core::standard_normal(rng);
  }
  const auto models = dpmu::core::all_models(d);
  for (auto _ : state) benchmark::DoNotOptimize(dpmu::core::constrained_rss(x, y, models, radius));
  state.counters["models"] = static_cast<double>(models.size());
}
BENCHMARK(BM_ConstrainedRssAllModels)
    ->Args({6, 1})
    ->Args({6, 10})
    ->Args({8, 1})
    ->Args({8, 10})
    ->Args({12, 1})
    ->Args({12, 10})
    ->Args({16, 1})
    ->Args({16, 10})
    ->Args({20, 1})
    ->Args({20, 10})
    ->Unit(benchmark::kMillisecond);
}  // namespace

BENCHMARK_MAIN();
