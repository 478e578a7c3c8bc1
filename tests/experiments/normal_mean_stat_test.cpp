// normal_mean through the engine: coverage and unbiasedness with fixed seeds.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "dpmu/experiments/registry.hpp"
#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/runner.hpp"

namespace fs = std::filesystem;
namespace rt = dpmu::runtime;

TEST_CASE("normal_mean: 95% z-interval coverage and unbiased mean (binomial / normal bounds)",
          "[statistical][normal_mean]") {
  // N = 4000 replicates per cell. Criterion: |coverage - 0.95| <= 4.89 sqrt(0.95·0.05/N) and
  // |mean - mu| <= 4.89 sigma/sqrt(n N); two-sided z = 4.89 gives a false-failure probability
  // of 1e-6 per check (normal approximation; 6 checks).
  dpmu::experiments::register_builtin_experiments();
  const auto s = rt::parse_study(
      "experiment: normal_mean\nmaster_seed: 2024\nreplicates: 4000\nblock_size: 1000\n"
      "grid:\n  zip: {n: [5, 40, 200], mu: [-3, 0, 10], sigma: [0.5, 2, 7]}\n",
      "stat.yaml");
  const fs::path out = fs::temp_directory_path() / ("dpmu_normal_mean_stat_" + std::to_string(::getpid()) + ".h5");
  fs::remove(out);
  rt::RunOptions o;
  o.out = out;
  o.quiet = true;
  REQUIRE(rt::run_study(s, o).complete);
  const auto r = rt::read_results(out);
  fs::remove(out);
  const double N = 4000, z = 4.89;
  for (std::size_t c = 0; c < r.cells.size(); ++c) {
    const double n = r.cells[c].get_double("n"), mu = r.cells[c].get_double("mu"),
                 sigma = r.cells[c].get_double("sigma");
    const auto mean = rt::summarize_component(r, c, 0, 0);
    const auto covered = rt::summarize_component(r, c, 1, 0);
    CHECK(mean.n_ok == 4000);
    CHECK(std::abs(mean.mean - mu) <= z * sigma / std::sqrt(n * N));
    CHECK(std::abs(covered.mean - 0.95) <= z * std::sqrt(0.95 * 0.05 / N));
    // Sample median of symmetric data: centred on mu (loose check on the vector metric).
    CHECK(std::abs(rt::summarize_component(r, c, 2, 1).mean - mu) <= 0.2 * sigma);
  }
}
