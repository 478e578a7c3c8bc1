// ssp_simulation throughput (docs/performance.md): the per-row limits and the pipeline.
//  (a) RNG: the random numbers one row needs (p 32-bit uniforms = p/2 xoshiro256++ words, and one
//      ziggurat normal), converted to doubles, rows/s;
//  (a') the same plus row assembly (y = x'b + sigma w, redraw check): SimulatedRows::next_block;
//  (b) Gram update: core::accumulate_block_gram on 256-row blocks of p + 1 columns, rows/s;
//  (b') the Eigen rank-k update it replaced (selfadjointView<Lower>().rankUpdate), for comparison;
//  (c) pipeline: simulate_gram_matrix (generation + redraw check + Gram), rows/s;
//  (d) analysis per replicate: every variant of one data set (BMA over 512 models × 9 variants);
//  (e) exact sufficient-statistic sampler (simulation_gram.hpp): p uniforms per row into the exact
//      Gram of [1 x] (core::UniformGramAccumulator, per instruction-set path), rows/s; and
//      (e') its bound, the p/2 xoshiro256++ words per row alone;
//  (f) one data set end to end as in bench/r_pipeline (p = 9, |T| = 4, n = 10^6): generate G (row
//      generator or sufficient-statistic sampler), the Laplace release at eps = 0.5, its
//      thresholded and non-thresholded ridged matrices, and ZS model averaging (512 models) of
//      the non-private and both DP matrices; the ridge is computed once outside the loop;
//  (g) the study's bound kernel: the words and the exact Gram kernel of [1 x] alone (bm_bound_kernel;
//      DPMU_SIMD=avx2 for the AVX2 bound).
// Report (c) / min(a, b). Single thread; the runner parallelises over replicates.
#include <benchmark/benchmark.h>

#include <memory>
#include <span>
#include <vector>

#include "dpmu/core/block_random.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/core/uniform_gram.hpp"
#include "dpmu/experiments/simulation_gram.hpp"
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
  dpmu::core::BmaOptions o;  // as ssp_simulation's analyse(): no credible intervals, all models kept
  o.credible_level = 0.0;
  o.top_models = 0;
  o.keep_all_models = true;
  if (state.range(1)) o.negligible_log_odds = dpmu::core::negligible_log_odds_for(9, 1e-17);
  std::uint64_t pruned = 0;
  for (auto _ : state) {
    for (int v = 0; v < 9; ++v) {
      auto r = dpmu::core::bayesian_model_averaging(g, 100000.0, cp, mp, o);
      pruned += r.models_negligible;
      benchmark::DoNotOptimize(r.model_averaged_coefficients.data());
    }
  }
  state.SetLabel(std::string(state.range(0) ? "zellner-siow" : "bic") + ", 9 variants" +
                 (state.range(1) ? ", pruning at 1e-17" : ""));
  state.counters["pruned_fraction"] =
      static_cast<double>(pruned) / (9.0 * 512.0 * static_cast<double>(state.iterations()));
}
// (prior: 0 bic, 1 zellner-siow; pruning: 0 off, 1 at relative error 1e-17)
BENCHMARK(bm_analysis_p9)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);

void bm_exact_sampler(benchmark::State& state) {
  // sample_gram_matrix at n = 10^6: path 0 automatic, 1 generic, 2 avx2, 3 avx512, 4 avx512ifma
  const int p = static_cast<int>(state.range(0));
  const auto path = static_cast<dpmu::core::UniformGramPath>(state.range(1));
  if (!dpmu::core::uniform_gram_path_available(path)) {
    state.SkipWithError("path not available on this CPU");
    return;
  }
  const auto d = dpmu::experiments::simulation_design(p, p == 9 ? 4 : 1, 7.0);
  const std::uint64_t n = 1000000;
  std::uint64_t key = 0;
  for (auto _ : state) {
    auto g = dpmu::experiments::sample_gram_matrix(d, n, 5, ++key, path);
    benchmark::DoNotOptimize(g.gram.data());
  }
  state.SetLabel(dpmu::core::to_string(path));
  state.counters["rows_per_second"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_exact_sampler)
    ->ArgsProduct({{2, 6, 9}, {0}})
    ->Args({9, 1})
    ->Args({9, 2})
    ->Args({9, 3})
    ->Args({9, 4})
    ->Unit(benchmark::kMillisecond);

void bm_exact_scaling_p9(benchmark::State& state) {
  // sample_gram_matrix at p = 9 for n = 5·10^3 … 10^7: per-data-set cost against n (log-log slope)
  const auto d = dpmu::experiments::simulation_design(9, 4, 7.0);
  const auto n = static_cast<std::uint64_t>(state.range(0));
  std::uint64_t key = 0;
  for (auto _ : state) {
    auto g = dpmu::experiments::sample_gram_matrix(d, n, 6, ++key);
    benchmark::DoNotOptimize(g.gram.data());
  }
  state.counters["rows_per_second"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_exact_scaling_p9)->Arg(5000)->Arg(50000)->Arg(500000)->Arg(5000000)->Arg(10000000);

void bm_exact_words(benchmark::State& state) {
  // the bound of (e): p/2 xoshiro256++ words per row (p·128 per 256-row block)
  const int p = static_cast<int>(state.range(0));
  dpmu::core::Xoshiro256ppX4 gen(1, 2);
  dpmu::core::UniformWordBlock w(static_cast<std::size_t>(p) * 128);
  for (auto _ : state) {
    gen.fill_words(w);
    benchmark::DoNotOptimize(w.data());
  }
  state.counters["rows_per_second"] = benchmark::Counter(kRows, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_exact_words)->Arg(2)->Arg(6)->Arg(9);

void bm_exact_gram_block(benchmark::State& state) {
  // the kernel alone: one 256-row block of p columns into the exact accumulator
  const int p = static_cast<int>(state.range(0));
  const auto path = static_cast<dpmu::core::UniformGramPath>(state.range(1));
  if (!dpmu::core::uniform_gram_path_available(path)) {
    state.SkipWithError("path not available on this CPU");
    return;
  }
  dpmu::core::Xoshiro256ppX4 gen(1, 2);
  dpmu::core::UniformWordBlock w(static_cast<std::size_t>(p) * 128);
  gen.fill_words(w);
  dpmu::core::UniformGramAccumulator acc(p, path);
  for (auto _ : state) {
    acc.add_block(w.data(), kRows);
    benchmark::DoNotOptimize(&acc);
  }
  state.SetLabel(dpmu::core::to_string(path));
  state.counters["rows_per_second"] = benchmark::Counter(kRows, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_exact_gram_block)->ArgsProduct({{2, 6, 9}, {1, 2, 3, 4}});

void bm_bound_kernel(benchmark::State& state) {
  // The bound of the study (docs/performance.md "Target: the study against its bound kernel"): the
  // p/2 xoshiro256++ words per row and the exact Gram kernel of [1 x] on full 256-row blocks, nothing
  // else. Automatic path: DPMU_SIMD=avx2 (cpu_features.hpp) gives the AVX2 bound; the label says which.
  const int p = static_cast<int>(state.range(0));
  dpmu::core::Xoshiro256ppX4 gen(1, 2);
  dpmu::core::UniformWordBlock w(static_cast<std::size_t>(p) * 128);
  auto acc = std::make_unique<dpmu::core::UniformGramAccumulator>(p);
  for (auto _ : state) {
    for (int j = 0; j < p; ++j) gen.fill_words(std::span<std::uint64_t>(w.data() + j * 128, 128));
    if (acc->rows() >= (std::uint64_t{1} << 30)) acc = std::make_unique<dpmu::core::UniformGramAccumulator>(p);
    acc->add_block(w.data(), kRows);
    benchmark::DoNotOptimize(acc.get());
  }
  state.SetLabel(dpmu::core::to_string(acc->path()));
  state.counters["rows_per_second"] = benchmark::Counter(kRows, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(bm_bound_kernel)->Arg(2)->Arg(6)->Arg(9);

void bm_dataset_p9(benchmark::State& state) {
  // arg 0: row generator (simulate_gram_matrix); 1: sufficient-statistic sampler (sample_gram_matrix)
  namespace core = dpmu::core;
  const auto d = dpmu::experiments::simulation_design(9, 4, 7.0);
  const std::uint64_t n = 1000000;
  const double nd = static_cast<double>(n);
  const core::SspMechanism m{
      .kind = core::SspMechanismKind::laplace, .p = 9, .lower = -2.0, .upper = 2.0, .epsilon = 0.5, .delta = 0.0};
  core::RngStream cal(1, 2, 0, core::StreamPurpose::calibration);
  const double ridge = core::monte_carlo_regularization(m, cal, 1000);
  const double threshold = core::threshold_value(m, 0.95, core::ThresholdReference::absolute);
  const auto zs = core::parse_coefficient_prior("zellner-siow", nd);
  const auto mp = core::parse_model_prior("beta-binomial:1,1");
  core::BmaOptions o;
  o.top_models = 0;
  core::RngStream noise(1, 3, 0, core::StreamPurpose::noise);
  std::uint64_t key = 0;
  for (auto _ : state) {
    const auto g = state.range(0) ? dpmu::experiments::sample_gram_matrix(d, n, 9, ++key).gram
                                  : dpmu::experiments::simulate_gram_matrix(d, n, 9, ++key).gram;
    const Eigen::MatrixXd gstar = core::noisy_gram_matrix(g, m, noise);
    const auto plain = core::regularize(gstar, ridge);
    const auto thresholded = core::regularize(core::hard_threshold(gstar, threshold), ridge);
    for (const Eigen::MatrixXd* a : {&g, &plain.matrix, &thresholded.matrix}) {
      auto r = core::bayesian_model_averaging(*a, nd, zs, mp, o);
      benchmark::DoNotOptimize(r.model_averaged_coefficients.data());
    }
  }
  state.SetLabel(state.range(0) ? "sufficient-statistic sampler" : "row generator");
}
BENCHMARK(bm_dataset_p9)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
