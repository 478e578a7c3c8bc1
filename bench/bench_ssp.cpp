// ssp_simulation throughput (docs/performance.md): the per-row limits and the pipeline.
//  (a) RNG: the random numbers one row needs (p 32-bit uniforms = p/2 xoshiro256++ words, and one
//      ziggurat normal), converted to doubles, rows/s;
//  (a') the same plus row assembly (y = x'b + sigma w, redraw check): SimulatedRows::next_block;
//  (b) Gram update: core::accumulate_block_gram on 256-row blocks of p + 1 columns, rows/s;
//  (b') the Eigen rank-k update it replaced (selfadjointView<Lower>().rankUpdate), for comparison;
//  (c) pipeline: simulate_gram_matrix (generation + redraw check + Gram), rows/s;
//  (d) analysis per replicate: every variant of one data set (BMA over 512 models × 9 variants).
// Report (c) / min(a, b). Single thread; the runner parallelises over replicates.
#include <benchmark/benchmark.h>

#include <vector>

#include "dpmu/core/block_random.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/experiments/simulation_ssp.hpp"

namespace {

constexpr int kRows = dpmu::experiments::SimulatedRows::block_rows;

void bm_rng_row_numbers(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  dpmu::core::Xoshiro256ppX4 gen(1, 2);
  std::vector<std::uint64_t> w(kRows / 2);
  Eigen::MatrixXd block(kRows, p + 1);
  for (auto _ : state) {
    for (int j = 0; j < p; ++j) {
      gen.fill_words(w);
      dpmu::core::words_to_uniform32(w, -2.0, 2.0, std::span<double>(&block(0, j), kRows));
    }
    for (int i = 0; i < kRows; ++i) block(i, p) = dpmu::core::standard_normal_ziggurat(gen);
    benchmark::DoNotOptimize(block.data());
  }
  state.counters["rows_per_second"] = benchmark::Counter(kRows, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_rng_row_numbers)->Arg(2)->Arg(6)->Arg(9);

void bm_rows(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  const auto d = dpmu::experiments::simulation_design(p, p == 9 ? 4 : 1, 7.0);
  dpmu::experiments::SimulatedRows rows(d, 1, 2);
  Eigen::MatrixXd block(kRows, p + 1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(rows.next_block(block, kRows));
    benchmark::DoNotOptimize(block.data());
  }
  state.counters["rows_per_second"] = benchmark::Counter(kRows, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_rows)->Arg(2)->Arg(6)->Arg(9);

void bm_gram_update(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  const Eigen::MatrixXd block = Eigen::MatrixXd::Random(kRows, p + 1);
  Eigen::MatrixXd s = Eigen::MatrixXd::Zero(p + 1, p + 1);
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(p + 1);
  for (auto _ : state) {
    dpmu::core::accumulate_block_gram(block.data(), kRows, p + 1, kRows, s, sum);
    benchmark::DoNotOptimize(s.data());
  }
  state.counters["rows_per_second"] = benchmark::Counter(kRows, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_gram_update)->Arg(2)->Arg(6)->Arg(9);

void bm_gram_update_eigen(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  const Eigen::MatrixXd block = Eigen::MatrixXd::Random(kRows, p + 1);
  Eigen::MatrixXd s = Eigen::MatrixXd::Zero(p + 1, p + 1);
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(p + 1);
  for (auto _ : state) {
    s.selfadjointView<Eigen::Lower>().rankUpdate(block.transpose());
    sum += block.colwise().sum().transpose();
    benchmark::DoNotOptimize(s.data());
  }
  state.counters["rows_per_second"] = benchmark::Counter(kRows, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_gram_update_eigen)->Arg(9);

void bm_pipeline(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  const auto d = dpmu::experiments::simulation_design(p, p == 9 ? 4 : 1, 7.0);
  const std::uint64_t n = 1000000;
  std::uint64_t key = 0;
  for (auto _ : state) {
    auto g = dpmu::experiments::simulate_gram_matrix(d, n, 5, ++key);
    benchmark::DoNotOptimize(g.gram.data());
  }
  state.counters["rows_per_second"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_pipeline)->Arg(2)->Arg(6)->Arg(9)->Unit(benchmark::kMillisecond);

void bm_analysis_p9(benchmark::State& state) {
  // One data set (n = 10^5), 9 variants per prior: the BMA enumeration cost per replicate.
  const auto d = dpmu::experiments::simulation_design(9, 4, 7.0);
  const auto g = dpmu::experiments::simulate_gram_matrix(d, 100000, 1, 2).gram;
  const auto cp = dpmu::core::parse_coefficient_prior(state.range(0) ? "zellner-siow" : "bic", 100000.0);
  const auto mp = dpmu::core::parse_model_prior("beta-binomial:1,1");
  dpmu::core::BmaOptions o;
  o.top_models = 0;
  for (auto _ : state) {
    for (int v = 0; v < 9; ++v) {
      auto r = dpmu::core::bayesian_model_averaging(g, 100000.0, cp, mp, o);
      benchmark::DoNotOptimize(r.model_averaged_coefficients.data());
    }
  }
  state.SetLabel(state.range(0) ? "zellner-siow, 9 variants" : "bic, 9 variants");
}
BENCHMARK(bm_analysis_p9)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
