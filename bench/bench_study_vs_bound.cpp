// The simulation study against its bound kernel, replicate by replicate in one process
// (docs/performance.md "Target: the study against its bound kernel").
//
// For each replicate r of CONFIG and each data group of the study (one data key of the paper's
// configs: its data set and the cells that analyse it), in turn (1 and 2 in alternating order):
//   1. the bound kernel on exactly the group's rows: for each of its data keys (p, n),
//      ceil(n / 256) full blocks of p/2 xoshiro256++ words per row into the exact Gram kernel of
//      [1 x] (UniformGramAccumulator::add_block; the work of bench_ssp.cpp's bm_bound_kernel);
//   2. the group's data step alone (Experiment::generate_erased / generate_shared_erased from the
//      replicate's streams): the study's row path, to set beside the bound kernel;
//   3. the group's replicate itself: runtime::run_one_replicate (the data sets, then every cell's
//      analysis), as `dpmu run` does it;
// each timed by the thread's CPU clock. The machine's speed drifts by up to ±20 % from one
// second to the next (other tenants of the host), so ratios of separate runs scatter; a group
// and its bound, measured within a fraction of a second of each other, see nearly the same
// machine. A replicate's ratio is the sum of its groups' times over the sum of their bounds.
// The cells' prepare() (calibration, a fixed cost per cell and run) runs first and is reported
// apart; the projection to the full size adds it once.
//
// Usage: DPMU_SIMD=avx2 dpmu_bench_study CONFIG [REPLICATES=10] [FIRST=0]
// Single thread (the runner parallelises over tasks; CPU seconds are what is compared).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dpmu/core/block_random.hpp"
#include "dpmu/core/cpu_features.hpp"
#include "dpmu/core/uniform_gram.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/runner.hpp"
#include "dpmu/runtime/streams.hpp"

namespace {

namespace rt = dpmu::runtime;
namespace core = dpmu::core;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/// The bound kernel on `rows` rows of p columns (whole blocks): words, then the exact kernel.
/// Returns a value of the Gram so the work cannot be optimised away.
double bound_kernel(int p, std::uint64_t rows, std::uint64_t seed) {
  constexpr int W = core::UniformGramAccumulator::block_words;
  constexpr int R = core::UniformGramAccumulator::block_rows;
  core::Xoshiro256ppX4 gen(seed, 2);
  core::UniformWordBlock words(static_cast<std::size_t>(p) * W);
  core::UniformGramAccumulator acc(p);
  for (std::uint64_t done = 0; done < rows; done += R) {
    for (int j = 0; j < p; ++j) gen.fill_words(std::span<std::uint64_t>(words.data() + j * W, W));
    acc.add_block(words.data(), R);
  }
  return acc.centred_gram(0.0, 1.0)(0, 0);
}

int run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dpmu_bench_study CONFIG [REPLICATES=10] [FIRST=0]\n");
    return 2;
  }
  const std::uint64_t replicates = argc > 2 ? std::stoull(argv[2]) : 10;
  const std::uint64_t first = argc > 3 ? std::stoull(argv[3]) : 0;
  dpmu::experiments::register_builtin_experiments();
  const rt::StudySpec study = rt::load_study(argv[1]);
  if (!study.experiment->has_data_step()) {
    std::fprintf(stderr, "dpmu_bench_study: %s has no data step to compare with the bound kernel\n", argv[1]);
    return 2;
  }
  // (p, n) of a data cell.
  const auto rows_of = [](const rt::Cell& c) {
    const double scale = c.has("n_scale") ? c.get_double("n_scale") : 1.0;
    return std::pair<int, std::uint64_t>{
        static_cast<int>(c.get_int("p")),
        static_cast<std::uint64_t>(std::llround(static_cast<double>(c.get_int("n")) * scale))};
  };
  // prepare() of every cell, once (the runner's set-up).
  const double prep0 = rt::thread_cpu_seconds();
  rt::SharedCalibration shared;
  std::vector<std::shared_ptr<const void>> prepared(study.cells.size());
  for (std::size_t c = 0; c < study.cells.size(); ++c) {
    core::RngStream calibration = rt::calibration_stream(study.master_seed, study.cells[c]);
    prepared[c] = study.experiment->prepare_erased(study.cells[c], calibration, shared);
  }
  const double prepare_seconds = rt::thread_cpu_seconds() - prep0;
  // Per group: its data cells and each cell's replicate slot.
  struct Group {
    std::vector<rt::Cell> data_cells;
    std::vector<rt::CellReplicate> reps;
    std::vector<std::vector<double>> out;
  };
  std::vector<Group> groups(study.data_groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& cells = study.data_groups[g];
    auto [data_cells, index] = rt::distinct_data_cells(study, cells);
    groups[g].data_cells = std::move(data_cells);
    groups[g].reps.resize(cells.size());
    groups[g].out.resize(cells.size());
    for (std::size_t k = 0; k < cells.size(); ++k) {
      std::size_t width = 0;
      for (const auto& m : *study.cell_metrics[cells[k]]) width += m.size;
      groups[g].out[k].assign(width, 0.0);
      auto& r = groups[g].reps[k];
      r.cell = &study.cells[cells[k]];
      r.prepared = prepared[cells[k]].get();
      r.data_index = index[k];
      r.metrics = *study.cell_metrics[cells[k]];
      r.out = groups[g].out[k];
    }
  }
  std::printf("%s: %zu cells in %zu data groups; path %s; prepare() %.2f CPU-s\n", argv[1], study.cells.size(),
              groups.size(), std::string(core::to_string(core::UniformGramAccumulator(2).path())).c_str(),
              prepare_seconds);
  // The data step of a group alone, as run_one_replicate takes it (same streams; the data are dropped).
  const auto generate = [&](std::span<const rt::Cell> data_cells, std::uint64_t rep) {
    const std::string key = study.experiment->generation_key(data_cells.front());
    if (!key.empty()) {
      core::RngStream stream = rt::generation_stream(study.master_seed, key, rep);
      return study.experiment->generate_shared_erased(data_cells, stream).size();
    }
    for (const rt::Cell& d : data_cells) {
      core::RngStream stream = rt::data_stream(study.master_seed, d, rep);
      study.experiment->generate_erased(d, stream);
    }
    return data_cells.size();
  };
  std::vector<double> ratios, bounds, studies, generations;
  double sink = 0.0;
  std::size_t failures = 0;
  for (std::uint64_t rep = first; rep < first + replicates; ++rep) {
    double bound = 0.0, generation = 0.0, replicate = 0.0;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      auto& g = groups[gi];
      // The bound kernel and the data step alone in alternating order (by group and replicate), so
      // that whichever runs second in a pair (on warmer caches, or a machine that changed speed
      // between the two) does not bias their ratio.
      const auto time_bound = [&] {
        const double t0 = rt::thread_cpu_seconds();
        for (const rt::Cell& d : g.data_cells) {
          const auto [p, n] = rows_of(d);
          sink += bound_kernel(p, n, rep + 1);
        }
        bound += rt::thread_cpu_seconds() - t0;
      };
      const auto time_generation = [&] {
        const double t0 = rt::thread_cpu_seconds();
        generate(g.data_cells, rep);
        generation += rt::thread_cpu_seconds() - t0;
      };
      if ((gi + rep) % 2 == 0) {
        time_bound();
        time_generation();
      } else {
        time_generation();
        time_bound();
      }
      const double t2 = rt::thread_cpu_seconds();
      rt::run_one_replicate(*study.experiment, g.data_cells, study.master_seed, rep, g.reps);
      replicate += rt::thread_cpu_seconds() - t2;
      for (const auto& r : g.reps) failures += r.failure_stage.empty() ? 0 : 1;
    }
    generations.push_back(generation);
    bounds.push_back(bound);
    studies.push_back(replicate);
    ratios.push_back(replicate / bound);
    std::printf(
        "replicate %llu: bound %.3f CPU-s, data step alone %.3f (%.3f x bound), replicate %.3f CPU-s: ratio %.3f\n",
        static_cast<unsigned long long>(rep), bound, generation, generation / bound, replicate, ratios.back());
    std::fflush(stdout);
  }
  double b = 0.0, s = 0.0, gen = 0.0;
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    b += bounds[i];
    s += studies[i];
    gen += generations[i];
  }
  const double full = static_cast<double>(study.replicates);
  const double mean_b = b / static_cast<double>(ratios.size());
  const double mean_s = s / static_cast<double>(ratios.size());
  std::printf(
      "data step alone: %.3f x bound (of the sums); the analyses: %.3f x bound\n"
      "ratio per replicate: median %.3f [min %.3f, max %.3f] over %zu replicates; of the sums %.3f\n"
      "projected full size (%g replicates, prepare() once): %.0f CPU-s against bound %.0f CPU-s: ratio %.3f\n"
      "(failed cell replicates: %zu; checksum %.6g)\n",
      gen / b, (s - gen) / b, median(ratios), *std::min_element(ratios.begin(), ratios.end()),
      *std::max_element(ratios.begin(), ratios.end()), ratios.size(), s / b, full, prepare_seconds + full * mean_s,
      full * mean_b, (prepare_seconds + full * mean_s) / (full * mean_b), failures, sink);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dpmu_bench_study: %s\n", e.what());
    return 1;
  }
}
