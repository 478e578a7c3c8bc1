// Model averaging benchmarks: full enumeration time for p = 10, 15, 20 (ZS exact, BIC), and Gram
// accumulation throughput (rows/s) for p = 9. Reported in the closing note / docs/bma.md.
#include <benchmark/benchmark.h>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/random.hpp"

namespace {
Eigen::MatrixXd random_gram(int p, int n) {
  dpmu::core::RngStream rng(1, 2, 3, dpmu::core::StreamPurpose::data);
  Eigen::MatrixXd d(n, p + 1);
  for (int i = 0; i < n; ++i) {
    double y = dpmu::core::standard_normal(rng);
    for (int j = 0; j < p; ++j) {
      d(i, j) = dpmu::core::standard_normal(rng);
      if (j < 3) y += 0.3 * d(i, j);
    }
    d(i, p) = y;
  }
  d.rowwise() -= d.colwise().mean();
  return d.transpose() * d;
}

void bm_enumeration(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  const bool zs = state.range(1) == 1;
  const Eigen::MatrixXd g = random_gram(p, 1000);
  const auto cp = dpmu::core::parse_coefficient_prior(zs ? "zellner-siow" : "bic");
  const auto mp = dpmu::core::parse_model_prior("beta-binomial:1,1");
  for (auto _ : state) {
    auto r = dpmu::core::bayesian_model_averaging(g, 1000, cp, mp);
    benchmark::DoNotOptimize(r.posterior_inclusion_probability.data());
  }
  state.counters["models"] = static_cast<double>(1ULL << p);
  state.counters["models_per_second"] =
      benchmark::Counter(static_cast<double>(1ULL << p), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(zs ? "zellner-siow" : "bic");
}
BENCHMARK(bm_enumeration)->ArgsProduct({{10, 15, 20}, {0, 1}})->Unit(benchmark::kMillisecond);

void bm_gram_accumulation(benchmark::State& state) {
  const int p = 9;
  const int block = static_cast<int>(state.range(0));
  const bool centre = state.range(1) == 1;
  dpmu::core::RngStream rng(4, 5, 6, dpmu::core::StreamPurpose::data);
  Eigen::MatrixXd rows(block, p + 1);
  for (Eigen::Index i = 0; i < rows.size(); ++i) rows.data()[i] = 4.0 * dpmu::core::uniform_open01(rng) - 2.0;
  dpmu::core::GramAccumulator acc(p + 1, -2.0, 2.0, centre);
  for (auto _ : state) {
    acc.add(rows);
  }
  benchmark::DoNotOptimize(acc.gram_matrix().data());
  state.SetItemsProcessed(state.iterations() * block);
  state.SetLabel(centre ? "centred" : "D'D");
}
BENCHMARK(bm_gram_accumulation)->ArgsProduct({{4096}, {0, 1}});
}  // namespace
