// Cost of one log Bayes factor per prior (the inner loop of model enumeration and of
// the subsample-and-aggregate null simulation).
#include <benchmark/benchmark.h>

#include "dpmu/core/bayes_factor.hpp"

namespace {
void bm_log_bayes_factor(benchmark::State& state) {
  dpmu::core::Prior prior;
  prior.kind = static_cast<dpmu::core::PriorKind>(state.range(0));
  const double n = static_cast<double>(state.range(1));
  double log_q = -0.05;
  for (auto _ : state) {
    benchmark::DoNotOptimize(dpmu::core::log_bayes_factor(prior, log_q, n, 3, 1));
    log_q = log_q == -0.05 ? -0.050001 : -0.05;
  }
  state.SetLabel(std::string(dpmu::core::to_string(prior.kind)));
}
BENCHMARK(bm_log_bayes_factor)->ArgsProduct({{0, 1, 2, 3, 4}, {200, 10000000}});
}  // namespace

BENCHMARK_MAIN();
