// The DP-test experiments (experiments/hypothesis_tests.cpp; docs/methods.md §4): the confidential
// censored average (1/M) Σ T_i^c and the coverage of the PB §4.2 interval T~ ± η_{1−α/2}, by hand
// on a tiny case and by simulation on the HSB data (binomial Monte Carlo tolerance, fixed seeds).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dpmu/core/random.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"
#include "dpmu/experiments/dp_test.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "run_replicate.hpp"

namespace ex = dpmu::experiments;
namespace core = dpmu::core;
namespace rt = dpmu::runtime;

namespace {

const rt::Experiment& experiment(const std::string& name) {
  ex::register_builtin_experiments();
  return rt::find_experiment(name);
}

/// Offset of a metric in the concatenated layout of `specs`.
std::size_t offset_of(const std::vector<rt::MetricSpec>& specs, const std::string& name) {
  std::size_t at = 0;
  for (const auto& s : specs) {
    if (s.name == name) return at;
    at += s.size;
  }
  FAIL("no metric " << name);
  return 0;
}

std::vector<double> calibration_output(const rt::Experiment& e, const rt::Cell& cell, const void* prepared,
                                       const std::string& name) {
  for (const auto& [n, v] : e.calibration_outputs_erased(cell, prepared)) {
    if (n == name) return v;
  }
  FAIL("no calibration output " << name);
  return {};
}

constexpr double kLevels[2] = {0.05, 0.01};
// Φ⁻¹(0.975), Φ⁻¹(0.995) (standard normal quantiles to 16 digits)
constexpr double kNormalQuantile[2] = {1.959963984540054, 2.5758293035489004};

}  // namespace

TEST_CASE("DP test metrics: the censored average and the §4.2 coverage by hand on three subsets", "[dp_test]") {
  // M = 3 subsets of the likelihood-ratio test with L = 0, U = 7: T = (NaN, 3.5, 9). The NaN subset
  // (one that cannot be fitted) contributes the public value 2 log Λ at R² = 0, i.e. 0, censored to
  // [0, 7]: 0; 9 is censored to 7. Censored average (0 + 3.5 + 7)/3 = 3.5. Laplace noise, ε = 0.7:
  // scale b = Δ/(Mε) = 7/(3 · 0.7) = 10/3, and η_{1−α/2} = b log(1/α).
  const auto& e = experiment("hsb_likelihood_ratio");
  const rt::Cell cell = dpmu_test::cell_with_defaults(
      e, {{"epsilon", 0.7}, {"num_subsets", std::int64_t{3}}, {"null_simulations", std::int64_t{100}}});
  ex::DpTestSetup s;
  core::RngStream calibration(3, 1, 0, core::StreamPurpose::calibration);
  ex::prepare_dp_test(s, cell, 12, 1, 1, calibration);
  REQUIRE(s.limits.lower == 0.0);
  REQUIRE(s.limits.upper == 7.0);
  const double b = 10.0 / 3.0;
  const auto specs = ex::dp_test_metrics();
  const auto width = offset_of(specs, specs.back().name) + specs.back().size;
  for (std::uint64_t replicate = 0; replicate < 20; ++replicate) {
    std::vector<double> buffer(width, std::numeric_limits<double>::quiet_NaN());
    rt::MetricWriter out(specs, buffer);
    core::RngStream noise(3, 2, replicate, core::StreamPurpose::noise);
    core::RngStream expected_noise = noise;
    ex::write_dp_test_release(s, cell, {std::nan(""), 3.5, 9.0}, noise, out);
    const double average = buffer[offset_of(specs, "censored_average")];
    const double noisy = buffer[offset_of(specs, "noisy_statistic")];
    CHECK(average == 3.5);
    // T~ − censored average is the one Laplace draw of the release, and the stream then moves on by
    // the two uniforms of the randomized test, as before these metrics existed (no extra draw)
    const double eta = core::laplace(expected_noise, b);
    CHECK(noisy - average == Approx(eta).margin(1e-12));
    core::uniform_open01(expected_noise);
    core::uniform_open01(expected_noise);
    CHECK(noise() == expected_noise());
    for (int k = 0; k < 2; ++k) {
      const double q = b * std::log(1.0 / kLevels[k]);
      const double covers = buffer[offset_of(specs, "noise_interval_covers") + static_cast<std::size_t>(k)];
      INFO("replicate " << replicate << " alpha " << kLevels[k] << " eta " << eta << " q " << q);
      CHECK(covers == (std::abs(eta) <= q ? 1.0 : 0.0));
    }
  }
  // the half-widths η_{1−α/2} are a calibration output of the cell
  const auto halves = ex::dp_test_calibration_outputs(s);
  bool found = false;
  for (const auto& [name, v] : halves) {
    if (name != "noise_interval_half_width") continue;
    found = true;
    REQUIRE(v.size() == 2);
    CHECK(v[0] == Approx(b * std::log(20.0)).epsilon(1e-13));
    CHECK(v[1] == Approx(b * std::log(100.0)).epsilon(1e-13));
  }
  CHECK(found);
}

TEST_CASE("HSB DP tests: T~ ± η_{1−α/2} covers the censored average with probability 1 − α", "[dp_test][statistical]") {
  // PB §4.2: T~ − (1/M) Σ T_i^c = η, so C~ = T~ ± η_{1−α/2} covers (1/M) Σ T_i^c with probability
  // exactly 1 − α for any data, split and limits. R = 4000 releases per setting (engine streams,
  // master seed 11) on the HSB data; criterion |coverage − (1 − α)| ≤ 4 binomial SE,
  // SE = sqrt(α(1 − α)/R) (0.0034 at α = 0.05, 0.0016 at α = 0.01). The stored indicator must equal
  // one recomputed from noisy_statistic, censored_average and a half-width by hand: Laplace
  // (Δ/(Mε)) log(1/α) with Δ = 2 log 99 (posterior probabilities [0.01, 0.99], P(H0) = 1/2);
  // Gaussian σ Φ⁻¹(1 − α/2) with σ = the cell's noise_sd.
  struct Setting {
    std::string experiment;
    std::vector<std::pair<std::string, rt::ParameterValue>> values;
    bool laplace;
    bool atom_at_upper;  // the censored average sits at U in most releases (H12 with M = 2)
  };
  const std::vector<Setting> settings = {
      {"hsb_posterior", {{"epsilon", 1.0}, {"num_subsets", std::int64_t{5}}}, true, false},
      {"hsb_posterior",
       {{"epsilon", 0.5},
        {"num_subsets", std::int64_t{2}},
        {"common", std::string("science")},
        {"tested", std::string("read")}},
       true,
       true},
      {"hsb_likelihood_ratio",
       {{"epsilon", 1.0}, {"delta", 0.25}, {"num_subsets", std::int64_t{5}}, {"null_simulations", std::int64_t{1000}}},
       false,
       false},
      {"hsb_likelihood_ratio",
       {{"epsilon", 1.0},
        {"delta", 0.5},
        {"num_subsets", std::int64_t{10}},
        {"gaussian_calibration", std::string("paper_literal")},
        {"null_simulations", std::int64_t{1000}}},
       false,
       false},
  };
  const int reps = 4000;
  const std::uint64_t seed = 11;
  for (const auto& st : settings) {
    const auto& e = experiment(st.experiment);
    const rt::Cell cell = dpmu_test::cell_with_defaults(e, st.values);
    const auto prepared = dpmu_test::prepare_cell(e, cell, seed);
    const auto specs = e.metrics(cell);
    const auto limits = calibration_output(e, cell, prepared.get(), "censoring_limits");
    const auto m = static_cast<double>(cell.get_int("num_subsets"));
    double q[2];
    for (int k = 0; k < 2; ++k) {
      q[k] = st.laplace ? 2.0 * std::log(99.0) / (m * cell.get_double("epsilon")) * std::log(1.0 / kLevels[k])
                        : calibration_output(e, cell, prepared.get(), "noise_sd")[0] * kNormalQuantile[k];
      CHECK(calibration_output(e, cell, prepared.get(), "noise_interval_half_width")[static_cast<std::size_t>(k)] ==
            Approx(q[k]).epsilon(1e-12));
    }
    if (st.laplace) REQUIRE(limits[1] == Approx(std::log(99.0)).epsilon(1e-12));
    int covered[2] = {0, 0}, covered_cut[2] = {0, 0}, mismatches = 0, at_upper = 0;
    for (int r = 0; r < reps; ++r) {
      const auto out = dpmu_test::run_replicate(e, cell, seed, static_cast<std::uint64_t>(r), prepared);
      const double noisy = out[offset_of(specs, "noisy_statistic")];
      const double average = out[offset_of(specs, "censored_average")];
      at_upper += average == limits[1] ? 1 : 0;
      for (int k = 0; k < 2; ++k) {
        const double stored = out[offset_of(specs, "noise_interval_covers") + static_cast<std::size_t>(k)];
        const bool by_hand = std::abs(noisy - average) <= q[k];
        mismatches += stored == (by_hand ? 1.0 : 0.0) ? 0 : 1;
        covered[k] += stored == 1.0 ? 1 : 0;
        // the interval cut down to [L, U] (what a release reports) for comparison
        const double lo = std::clamp(noisy - q[k], limits[0], limits[1]);
        const double hi = std::clamp(noisy + q[k], limits[0], limits[1]);
        covered_cut[k] += lo <= average && average <= hi ? 1 : 0;
      }
    }
    CHECK(mismatches == 0);
    for (int k = 0; k < 2; ++k) {
      const double coverage = static_cast<double>(covered[k]) / reps;
      const double se = std::sqrt(kLevels[k] * (1.0 - kLevels[k]) / reps);
      INFO(st.experiment << " M " << m << " alpha " << kLevels[k] << " coverage " << coverage << " (cut to [L, U]: "
                         << static_cast<double>(covered_cut[k]) / reps << ") SE " << se << " at U " << at_upper);
      CHECK(std::abs(coverage - (1.0 - kLevels[k])) <= 4.0 * se);
      if (st.atom_at_upper) {
        // with the average at U, the cut interval covers whenever T~ + q ≥ U (probability 1 − α/2):
        // the stored coverage is that of the uncut interval of the paper's sentence
        // (excess α/2 · P(at U) expected; at least half of it required)
        REQUIRE(at_upper > reps / 2);
        CHECK(static_cast<double>(covered_cut[k] - covered[k]) / reps > 0.25 * kLevels[k] * at_upper / reps);
      }
      CHECK(covered_cut[k] >= covered[k]);  // the average lies in [L, U]: the cut interval covers when C~ does
    }
  }
}
