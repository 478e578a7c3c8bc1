// Engine overhead: a trivial experiment (two uniforms per replicate) with 10^6 replicates in
// one cell, block_size 1000, journal and HDF5 output included. Counters:
//   loop_reps_per_s  replicates per second of the parallel loop (tasks, streams, journal)
//   total_reps_per_s replicates per second end to end (+ summaries and the HDF5 file)
//   loop_reps_per_cpu_s replicates per CPU-second of the loop (all threads)
//   cpu_s_per_run    process CPU time (all threads) per run: equal at 1 and 2 threads means the
//                    parallel loop adds no work, so the speed-up on 2 idle cores is ~2x
//                    (wall-clock speed-ups are only meaningful on an otherwise idle machine)
// Run: build/bench/dpmu_bench_engine   (Args = threads)
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "dpmu/core/random.hpp"
#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "dpmu/runtime/runner.hpp"

namespace {

/// Data: one uniform from the data stream; analysis: plus one from the noise stream.
class Trivial final : public dpmu::runtime::TypedExperiment<dpmu::runtime::Nothing, double> {
 public:
  std::string name() const override { return "bench_trivial"; }
  std::vector<dpmu::runtime::ParameterSpec> parameters() const override {
    return {{.name = "k",
             .type = dpmu::runtime::ParameterType::integer,
             .data_factor = true,
             .default_value = std::int64_t{1}}};
  }
  std::vector<dpmu::runtime::MetricSpec> metrics(const dpmu::runtime::Cell&) const override { return {{.name = "u"}}; }
  double generate(const dpmu::runtime::Cell&, dpmu::core::RngStream& data) const override {
    return dpmu::core::uniform_open01(data);
  }
  void analyse(const dpmu::runtime::Cell&, const dpmu::runtime::Nothing&, const double& u, dpmu::core::RngStream& noise,
               dpmu::runtime::MetricWriter& out) const override {
    out.set("u", u + dpmu::core::uniform_open01(noise));
  }
};

void BM_engine(benchmark::State& state) {
  static const bool registered = [] {
    dpmu::runtime::register_experiment(std::make_unique<Trivial>());
    return true;
  }();
  (void)registered;
  const auto study = dpmu::runtime::parse_study(
      "experiment: bench_trivial\nmaster_seed: 1\nreplicates: 1000000\nblock_size: 1000\n", "bench.yaml");
  const auto out = std::filesystem::temp_directory_path() / ("dpmu_bench_engine_" + std::to_string(::getpid()) + ".h5");
  double loop = 0, total = 0, cpu = 0, loop_cpu = 0;
  auto cpu_now = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  for (auto _ : state) {
    std::filesystem::remove(out);
    dpmu::runtime::RunOptions opt;
    opt.out = out;
    opt.threads = static_cast<int>(state.range(0));
    opt.quiet = true;
    const double c0 = cpu_now();
    const auto t0 = std::chrono::steady_clock::now();
    const auto rep = dpmu::runtime::run_study(study, opt);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    loop += rep.loop_seconds;
    cpu += cpu_now() - c0;
    loop_cpu += rep.loop_cpu_seconds;
  }
  std::filesystem::remove(out);
  const double n = 1e6 * static_cast<double>(state.iterations());
  state.counters["loop_reps_per_s"] = n / loop;
  state.counters["total_reps_per_s"] = n / total;
  state.counters["cpu_s_per_run"] = cpu / static_cast<double>(state.iterations());
  // Replicates per CPU-second of the loop: equal at 1 and 2 threads <=> no parallel overhead.
  state.counters["loop_reps_per_cpu_s"] = n / loop_cpu;
}

}  // namespace

BENCHMARK(BM_engine)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);
BENCHMARK_MAIN();
