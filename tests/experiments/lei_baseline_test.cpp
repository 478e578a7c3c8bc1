// LCSSF experiments: the phi-grid shortcut of lei_simulation (noise drawn once, shared by the phi
// values) makes exactly the selections of core::lcssf_algorithm1/2 run separately at each phi
// with the same streams; data generation and the phi grid as specified.
#include "dpmu/experiments/lei_baseline.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dpmu/core/lcssf.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "run_replicate.hpp"

namespace rt = dpmu::runtime;
namespace core = dpmu::core;
using dpmu::experiments::lei_simulate_data;
using dpmu::experiments::lei_true_coefficients;

namespace {
rt::Cell make_cell(int algorithm, const std::string& alg2_selection) {
  return rt::Cell({{"n", std::int64_t{100}},
                   {"beta_model", std::string("model2")},
                   {"num_penalties", std::int64_t{5}},
                   {"data_bound_rule", std::string("max_abs_y")},
                   {"data_bound", 1.0},
                   {"algorithm", std::int64_t{algorithm}},
                   {"epsilon", 10.0},
                   {"delta", 0.05},
                   {"radius", 2.5},
                   {"lcssf_delta", std::string("1pR_2")},
                   {"noise_factor", 1.0},
                   {"objective_scale", 1.0},
                   {"variance_floor", 0.01},
                   {"alg2_selection", alg2_selection}},
                  {"n", "beta_model"});
}
}  // namespace

TEST_CASE("lei_simulation equals lcssf_algorithm1/2 run at each phi with the same streams", "[lcssf][lei_simulation]") {
  dpmu::experiments::register_builtin_experiments();
  const auto& exp = rt::find_experiment("lei_simulation");
  for (auto [algorithm, sel] : std::vector<std::pair<int, std::string>>{
           {1, "exponential_mechanism"}, {2, "exponential_mechanism"}, {2, "noisy_min"}}) {
    const rt::Cell cell = make_cell(algorithm, sel);
    const auto grid = dpmu::experiments::lei_penalty_grid(100, 5);
    REQUIRE(grid.size() == 5);
    CHECK(grid[0] == 0.0);
    CHECK(grid[4] == 50.0);
    int agree = 0, truths = 0, total = 0;
    for (std::uint64_t rep = 0; rep < 60; ++rep) {
      const std::vector<double> out = dpmu_test::run_replicate(exp, cell, 5, rep);
      REQUIRE(out.size() == 3 * 5 + 2);
      core::RngStream data2(5, cell.data_id(), rep, core::StreamPurpose::data);
      const auto d = lei_simulate_data(100, lei_true_coefficients("model2"), data2);
      core::LcssfSettings s;
      s.radius = 2.5;
      s.data_bound = d.y.cwiseAbs().maxCoeff();
      s.delta_kind = core::LcssfDelta::one_pR_2;
      s.noise_factor = 1.0;
      s.objective_scale = 1.0;
      s.alg2_selection = core::alg2_selection_from_string(sel);
      CHECK(out[15] == s.data_bound);
      for (int k = 0; k < 5; ++k) {
        s.penalty = grid[static_cast<std::size_t>(k)];
        core::RngStream noise2(5, cell.cell_id(), rep, core::StreamPurpose::noise);
        const auto r = algorithm == 1 ? core::lcssf_algorithm1(d.x, d.y, s, 10.0, noise2)
                                      : core::lcssf_algorithm2(d.x, d.y, s, 10.0, 0.05, noise2);
        const double want = r.selected == 0b000111 ? 1.0 : 0.0;
        agree += out[static_cast<std::size_t>(k)] == want;
        truths += want == 1.0;
        ++total;
        CHECK(out[10 + static_cast<std::size_t>(k)] == grid[static_cast<std::size_t>(k)]);
      }
    }
    INFO("algorithm " << algorithm << " " << sel);
    CHECK(agree == total);
    CHECK(truths > 0);  // both outcomes occur, so agreement is informative
    CHECK(truths < total);
  }
}

TEST_CASE("lei_simulate_data: X in [-1, 1], residual variance 1", "[lcssf][lei_simulation]") {
  core::RngStream rng(1, 2, 3, core::StreamPurpose::data);
  const auto beta = lei_true_coefficients("model1");
  const auto d = lei_simulate_data(20000, beta, rng);
  CHECK(d.x.cwiseAbs().maxCoeff() < 1.0);
  const Eigen::VectorXd w = d.y - d.x * beta;
  // mean and variance of 20000 N(0,1) errors: |mean| < 5/sqrt(N), |var - 1| < 5 sqrt(2/N) (z = 5, 6e-7)
  CHECK(std::abs(w.mean()) < 5.0 / std::sqrt(20000.0));
  CHECK(std::abs(w.squaredNorm() / 20000.0 - 1.0) < 5.0 * std::sqrt(2.0 / 20000.0));
  CHECK(std::abs(d.x.col(3).squaredNorm() / 20000.0 - 1.0 / 3.0) < 0.02);  // Var U[-1,1] = 1/3
  CHECK_THROWS_WITH(lei_true_coefficients("model3"), Catch::Contains("must be model1 or model2"));
}

TEST_CASE("selection_head_to_head: with negligible noise every method finds the truth, Wishart only for eps < 1",
          "[lcssf][selection_head_to_head]") {
  dpmu::experiments::register_builtin_experiments();
  const auto& exp = rt::find_experiment("selection_head_to_head");
  auto cell_for = [](const std::string& method, double epsilon) {
    return rt::Cell({{"n", std::int64_t{5000}},
                     {"beta_model", std::string("model1")},
                     {"method", method},
                     {"data_bound", 4.0},
                     {"num_penalties", std::int64_t{11}},
                     {"threshold_percentile", 0.95},
                     {"ridge_draws", std::int64_t{200}},
                     {"coefficient_prior", std::string("zellner-siow")},
                     {"algorithm", std::int64_t{1}},
                     {"epsilon", epsilon},
                     {"delta", 0.01},
                     {"radius", 3.0},
                     {"lcssf_delta", std::string("r2_1pR2")},
                     {"noise_factor", 2.0},
                     {"objective_scale", 0.5},
                     {"variance_floor", 0.01},
                     {"alg2_selection", std::string("exponential_mechanism")}},
                    {"n", "beta_model"});
  };
  // metrics: correct_per_penalty [11], hpm_correct, mpm_correct — the same names for every method
  const auto metrics = exp.metrics(cell_for("ssp_laplace", 1.0));
  std::size_t total = 0;
  for (const auto& m : metrics) total += m.size;
  REQUIRE(total == 11 + 2);
  const auto all_nan = [](const std::vector<double>& v, std::size_t from, std::size_t to) {
    return std::all_of(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to),
                       [](double x) { return std::isnan(x); });
  };
  // ε = 1e7: noise scales ~1e-4 (LCSSF) and ~1e-6 (SSP) against signals ~1e3
  for (const std::string method : {"lcssf_algorithm1", "lcssf_algorithm2"}) {
    const std::vector<double> out = dpmu_test::run_replicate(exp, cell_for(method, 1e7), 3, 0);
    REQUIRE(out.size() == total);
    CHECK(*std::max_element(out.begin(), out.begin() + 11) == 1.0);  // the truth at a good phi
    CHECK(all_nan(out, 11, 13));
  }
  for (const std::string method : {"ssp_laplace", "ssp_laplace_thresholded"}) {
    const std::vector<double> out = dpmu_test::run_replicate(exp, cell_for(method, 1e7), 3, 0);
    CHECK(all_nan(out, 0, 11));
    CHECK(out[11] == 1.0);  // HPM
    CHECK(out[12] == 1.0);  // MPM
  }
  {
    const std::vector<double> out = dpmu_test::run_replicate(exp, cell_for("bic_best_subset", 1e7), 3, 0);
    CHECK(all_nan(out, 0, 11));
    CHECK(out[11] == 1.0);
    CHECK(std::isnan(out[12]));
  }
  // Wishart needs eps < 1: refused before any work, and at eps = 0.5 it gives 0/1 values
  CHECK_THROWS_WITH(exp.validate(cell_for("ssp_wishart", 1.0)), Catch::Contains("needs epsilon < 1"));
  CHECK_THROWS_WITH(exp.validate(cell_for("ssp_wishart_thresholded", 5.0)), Catch::Contains("needs epsilon < 1"));
  for (const std::string method : {"ssp_wishart", "ssp_wishart_thresholded"}) {
    REQUIRE_NOTHROW(exp.validate(cell_for(method, 0.5)));
    const std::vector<double> out = dpmu_test::run_replicate(exp, cell_for(method, 0.5), 3, 0);
    for (std::size_t j : {std::size_t{11}, std::size_t{12}}) CHECK((out[j] == 0.0 || out[j] == 1.0));
  }
  // every method cell of a data key analyses the same data set: the non-private BIC answer does
  // not depend on epsilon (no noise), replicate by replicate
  for (std::uint64_t rep = 0; rep < 5; ++rep) {
    CHECK(dpmu_test::run_replicate(exp, cell_for("bic_best_subset", 0.1), 3, rep)[11] ==
          dpmu_test::run_replicate(exp, cell_for("bic_best_subset", 5.0), 3, rep)[11]);
  }
}
