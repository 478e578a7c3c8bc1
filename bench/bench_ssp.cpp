// ssp_simulation throughput (docs/performance.md): the per-row limits and the pipeline.
//  (a) RNG: the random numbers one row needs (p = 9: 9 uniforms at 32 bits + 1 Box–Muller normal),
//      Philox4x64-10 words → doubles, rows/s;
//  (b) Gram update: 10×10 symmetric rank-256 updates (Eigen selfadjointView<Lower>().rankUpdate),
//      rows/s, on pre-generated blocks;
//  (c) pipeline: simulate_gram_matrix (generation + redraw check + Gram), rows/s;
//  (d) analysis per replicate: every variant of one data set (BMA over 512 models × 18 variants).
// Report (c) / min(a, b). Single thread; the runner parallelises over replicates.
#include <benchmark/benchmark.h>

#include <vector>

#include "dpmu/core/block_random.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/experiments/simulation_ssp.hpp"

namespace {

constexpr int kRows = 256;

void bm_rng_row_numbers(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  dpmu::core::PhiloxBlockGenerator gen(1, 2);
  const std::size_t uw = static_cast<std::size_t>(kRows * p + 1) / 2;
  std::vector<std::uint64_t> w(uw + kRows);
  std::vector<double> u(2 * uw), z(kRows);
  for (auto _ : state) {
    gen.fill_words(w);
    dpmu::core::words_to_uniform32(std::span<const std::uint64_t>(w.data(), uw), -2.0, 2.0, u);
    dpmu::core::words_to_standard_normal(std::span<const std::uint64_t>(w.data() + uw, kRows), z);
    benchmark::DoNotOptimize(u.data());
    benchmark::DoNotOptimize(z.data());
  }
  state.counters["rows_per_second"] = benchmark::Counter(kRows, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_rng_row_numbers)->Arg(2)->Arg(9);

void bm_gram_update(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  Eigen::MatrixXd block = Eigen::MatrixXd::Random(p + 1, kRows);
  Eigen::MatrixXd s = Eigen::MatrixXd::Zero(p + 1, p + 1);
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(p + 1);
  for (auto _ : state) {
    s.selfadjointView<Eigen::Lower>().rankUpdate(block);
    sum += block.rowwise().sum();
    benchmark::DoNotOptimize(s.data());
  }
  state.counters["rows_per_second"] = benchmark::Counter(kRows, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_gram_update)->Arg(2)->Arg(9);

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

// The same pipeline with xoshiro256++ words (seeded from one Philox block): not used by the
// experiment (its numbers are the Philox reference), measured to size the possible gain.
void bm_pipeline_xoshiro(benchmark::State& state) {
  const int p = static_cast<int>(state.range(0));
  const auto d = dpmu::experiments::simulation_design(p, p == 9 ? 4 : 1, 7.0);
  const std::uint64_t n = 1000000;
  std::uint64_t key = 0;
  for (auto _ : state) {
    auto g = dpmu::experiments::simulate_gram_matrix(d, n, 5, ++key, nullptr,
                                                     dpmu::experiments::DataGenerator::xoshiro256pp);
    benchmark::DoNotOptimize(g.gram.data());
  }
  state.counters["rows_per_second"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_pipeline_xoshiro)->Arg(2)->Arg(9)->Unit(benchmark::kMillisecond);

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
