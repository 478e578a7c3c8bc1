// cps_bma (paper §5.2.2, Figure 5): column expressions, permutation, rescaling, the CPS design
// against independent OLS numbers, the experiment through the engine, and config errors.
#include "dpmu/experiments/cps_bma.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/experiments/column_design.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/results.hpp"
#include "dpmu/runtime/runner.hpp"

namespace fs = std::filesystem;
namespace rt = dpmu::runtime;
using namespace dpmu::experiments;

namespace {
const std::string kCps = std::string(DPMU_TEST_DATA_DIR) + "/cps09mar.csv";
constexpr const char* kPredictors =
    "age = age; age_squared = age^2; married = marital == 1; male = 1 - female; education = education; "
    "white = race == 1";

Eigen::VectorXd eval(const std::string& expr, const std::map<std::string, std::vector<double>>& cols) {
  const auto e = ColumnExpression::parse(expr);
  return e.evaluate([&](const std::string& n) -> const std::vector<double>& { return cols.at(n); },
                    cols.begin()->second.size());
}

std::string study_yaml(const std::string& extra, int replicates = 3) {
  // A repository-relative path (resolved against the source tree): the cell key contains the
  // path as written, so an absolute path would make the noise streams depend on the checkout.
  const std::string data =
      extra.find("data_file:") == std::string::npos ? "  data_file: experiments/data/cps09mar.csv\n" : "";
  return "experiment: cps_bma\nmaster_seed: 7\nreplicates: " + std::to_string(replicates) +
         "\nblock_size: 3\nparameters:\n" + data +
         "  simulations: 200\n  ridge_draws: 1000\n  bin_pilot_runs: 2\n  histogram_bins: 10\n" + extra +
         "grid:\n  mechanism: [laplace, wishart]\n";
}

/// Message of the ConfigError raised by a study, or "" if it parses.
std::string config_error(const std::string& extra) {
  try {
    rt::parse_study(study_yaml(extra), "bad.yaml");
  } catch (const rt::ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("column expressions: values against hand computation", "[cps_bma][column_design]") {
  const std::map<std::string, std::vector<double>> cols{
      {"age", {20, 35, 85}}, {"marital", {1, 7, 1}}, {"female", {0, 1, 1}}, {"race", {1, 2, 21}}, {"x.y", {1, 2, 4}}};
  CHECK(eval("age^2", cols) == Eigen::Vector3d(400, 1225, 7225));
  CHECK(eval("marital == 1", cols) == Eigen::Vector3d(1, 0, 1));
  CHECK(eval("marital != 1", cols) == Eigen::Vector3d(0, 1, 0));
  CHECK(eval("1 - female", cols) == Eigen::Vector3d(1, 0, 0));
  CHECK(eval("race >= 2", cols) == Eigen::Vector3d(0, 1, 1));
  CHECK(eval("race < 2", cols) == Eigen::Vector3d(1, 0, 0));
  CHECK(eval("-2^2 + 2*3 + 1", cols) == Eigen::Vector3d::Constant(3));  // -(2^2) + 6 + 1
  CHECK(eval("2^3^2", cols) == Eigen::Vector3d::Constant(512));         // right-associative
  CHECK(eval("(age - 20) / 5", cols) == Eigen::Vector3d(0, 3, 13));
  CHECK(eval("abs(1 - x.y) + sqrt(4)", cols) == Eigen::Vector3d(2, 3, 5));
  CHECK(eval("log(exp(age))", cols).isApprox(Eigen::Vector3d(20, 35, 85), 1e-15));
  CHECK(ColumnExpression::parse("age*(marital==1) + female").columns() ==
        std::vector<std::string>{"age", "female", "marital"});
}

TEST_CASE("column expressions and specifications: errors", "[cps_bma][column_design]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(ColumnExpression::parse(""), Contains("empty expression"));
  CHECK_THROWS_WITH(ColumnExpression::parse("age +"), Contains("ends early"));
  CHECK_THROWS_WITH(ColumnExpression::parse("(age"), Contains("missing ')'"));
  CHECK_THROWS_WITH(ColumnExpression::parse("age age"), Contains("unexpected 'a'"));
  CHECK_THROWS_WITH(ColumnExpression::parse("sin(age)"), Contains("unknown function 'sin'"));
  CHECK_THROWS_WITH(ColumnExpression::parse("age $ 2"), Contains("unexpected '$'"));
  const std::map<std::string, std::vector<double>> cols{{"x", {0.0, 1.0}}};
  CHECK_THROWS_WITH(eval("log(x)", cols), Contains("row 0 is not finite"));
  CHECK_THROWS_AS(eval("y + 1", cols), std::out_of_range);
  CHECK_THROWS_WITH(parse_design_spec("age"), Contains("expected 'name = expression'"));
  CHECK_THROWS_WITH(parse_design_spec("marital == 1"), Contains("expected 'name = expression'"));
  CHECK_THROWS_WITH(parse_design_spec("a = x; a = y"), Contains("'a' defined twice"));
  CHECK_THROWS_WITH(parse_design_spec("2a = x"), Contains("is not a name"));
  CHECK_THROWS_WITH(parse_design_spec(" ; "), Contains("defines no column"));
  CHECK_THROWS_WITH(parse_design_spec("a = x +"), Contains("ends early"));
  const auto d = parse_design_spec(kPredictors);
  REQUIRE(d.size() == 6);
  CHECK(d[2].name == "married");
  CHECK(d[2].expression.text() == "marital == 1");
  CHECK(parse_bounds_spec("").empty());
  const auto b = parse_bounds_spec("age = 15, 85; response = -1e3, 2.5e5");
  CHECK(b.at("age") == std::make_pair(15.0, 85.0));
  CHECK(b.at("response") == std::make_pair(-1000.0, 250000.0));
  CHECK_THROWS_WITH(parse_bounds_spec("age = 85, 15"), Contains("lower must be < upper"));
  CHECK_THROWS_WITH(parse_bounds_spec("age = 1"), Contains("two numbers"));
  CHECK_THROWS_WITH(parse_bounds_spec("age = a, 2"), Contains("not a finite number"));
  CHECK_THROWS_WITH(parse_bounds_spec("age = 1, 2; age = 1, 3"), Contains("given twice"));
  CHECK_THROWS_WITH(parse_bounds_spec("age 1, 2"), Contains("expected 'name = lower, upper'"));
}

TEST_CASE("permutations: valid, reproducible, joint keeps rows together", "[cps_bma][permutation]") {
  Eigen::MatrixXd x(50, 3);
  for (int i = 0; i < 50; ++i) x.row(i) << i, 100 + i, 1000 + i;
  Eigen::MatrixXd a = x, b = x, c = x;
  permute_columns(a, {0, 1}, false, 11);
  permute_columns(b, {0, 1}, false, 11);
  permute_columns(c, {0, 1}, true, 11);
  CHECK(a == b);                // same seed, same permutation
  CHECK(a.col(2) == x.col(2));  // untouched column
  for (auto* m : {&a, &c}) {    // each permuted column is a permutation of the original
    for (int j = 0; j < 2; ++j) {
      std::vector<double> v(m->col(j).data(), m->col(j).data() + 50);
      std::sort(v.begin(), v.end());
      CHECK(Eigen::Map<Eigen::VectorXd>(v.data(), 50) == x.col(j));
    }
  }
  CHECK((c.col(1) - c.col(0)).isApprox(Eigen::VectorXd::Constant(50, 100.0)));   // joint: pairs kept
  CHECK(!(a.col(1) - a.col(0)).isApprox(Eigen::VectorXd::Constant(50, 100.0)));  // independent: not
  CHECK(a.col(0) != x.col(0));
  CHECK_THROWS_AS(permute_columns(a, {3}, false, 1), std::invalid_argument);
}

TEST_CASE("random_permutation: position of each element is uniform (chi-square)",
          "[statistical][cps_bma][permutation]") {
  // N = 60000 permutations of 5 elements; counts of (element at position 0) and (position of
  // element 0) are multinomial(N, 1/5). Pearson X² with 4 df; P(X² > 39.0) = 7e-8 per check
  // (two checks, false-failure ≤ 1e-6).
  dpmu::core::RngStream rng(123, 456, 0, dpmu::core::StreamPurpose::data);
  const int n = 5, N = 60000;
  std::vector<double> first(n, 0.0), where0(n, 0.0);
  for (int r = 0; r < N; ++r) {
    const auto p = random_permutation(n, rng);
    first[p[0]] += 1;
    where0[std::find(p.begin(), p.end(), 0) - p.begin()] += 1;
  }
  for (const auto* c : {&first, &where0}) {
    double x2 = 0;
    for (double k : *c) x2 += (k - N / 5.0) * (k - N / 5.0) / (N / 5.0);
    CHECK(x2 < 39.0);
  }
}

TEST_CASE("rescale_columns: data range and public bounds", "[cps_bma][rescale]") {
  Eigen::MatrixXd raw(4, 2);
  raw << 1, -5, 2, 0, 3, 5, 10, 100;
  const auto d = rescale_columns(raw, RescaleMode::data_range, {});
  // column 0: mean 4, centred (-3,-2,-1,6), scale 12; column 1: mean 25, centred (-30,-25,-20,75), scale 150
  CHECK(d.centre == Eigen::Vector2d(4, 25));
  CHECK(d.scale == Eigen::Vector2d(12, 150));
  CHECK(d.data.col(0).isApprox(Eigen::Vector4d(-0.25, -2.0 / 12, -1.0 / 12, 0.5)));
  CHECK(d.data.col(1).isApprox(Eigen::Vector4d(-0.2, -1.0 / 6, -2.0 / 15, 0.5)));
  CHECK(d.clamped_entries == 0);
  const auto b = rescale_columns(raw, RescaleMode::public_bounds, {{0, 4}, {-10, 10}});
  // clamped: 10 -> 4 (col 0), 100 -> 10 (col 1); means 2.5 and 2.5; scales 8 and 40
  CHECK(b.clamped_entries == 2);
  CHECK(b.centre == Eigen::Vector2d(2.5, 2.5));
  CHECK(b.scale == Eigen::Vector2d(8, 40));
  CHECK(b.data.col(0).isApprox(Eigen::Vector4d(-1.5, -0.5, 0.5, 1.5) / 8));
  CHECK(b.data.col(1).isApprox(Eigen::Vector4d(-7.5, -2.5, 2.5, 7.5) / 40));
  CHECK(b.data.cwiseAbs().maxCoeff() <= 0.5);
  Eigen::MatrixXd constant = Eigen::MatrixXd::Ones(3, 1);
  CHECK_THROWS_AS(rescale_columns(constant, RescaleMode::data_range, {}), std::domain_error);
  CHECK_THROWS_AS(rescale_columns(raw, RescaleMode::public_bounds, {{0, 1}}), std::invalid_argument);
  CHECK_THROWS_AS(rescale_columns(raw.topRows(1), RescaleMode::data_range, {}), std::invalid_argument);
}

TEST_CASE("CPS design: OLS from G matches the README's independent lm() fit", "[cps_bma][data]") {
  DesignOptions o;
  o.data_file = kCps;
  o.predictors = kPredictors;
  const auto d = load_design(o);  // no permutation
  REQUIRE(d.data.rows() == 50742);
  REQUIRE(d.data.cols() == 7);
  CHECK(d.names.back() == "response");
  CHECK(d.data.colwise().mean().cwiseAbs().maxCoeff() < 1e-15);
  CHECK(std::abs(d.data.cwiseAbs().maxCoeff() - 0.5) < 1e-15);
  const Eigen::MatrixXd g = dpmu::core::gram_matrix(d.data, -0.5, 0.5);
  const Eigen::VectorXd beta = g.topLeftCorner(6, 6).ldlt().solve(g.topRightCorner(6, 1));
  // cps09mar.README.md: lm(earnings ~ age + age² + married + male + education + white), 7 digits
  const double readme[6] = {2856.219, -27.0062, 6256.589, 19759.009, 7149.925, 5019.534};
  for (int j = 0; j < 6; ++j) {
    const double raw = beta(j) * d.scale(6) / d.scale(j);
    CHECK(raw == Approx(readme[j]).epsilon(2e-6));
  }
}

TEST_CASE("CPS design: permutation keeps margins and breaks the association", "[cps_bma][data]") {
  DesignOptions o;
  o.data_file = kCps;
  o.predictors = kPredictors;
  const auto plain = load_design(o);
  o.permuted = {"married", "education"};
  const auto perm = load_design(o);
  for (int j : {2, 4}) {
    // margins unchanged: same centre and scale; values a rearrangement
    CHECK(perm.centre(j) == Approx(plain.centre(j)).epsilon(1e-14));
    std::vector<double> a(plain.data.col(j).data(), plain.data.col(j).data() + plain.data.rows());
    std::vector<double> b(perm.data.col(j).data(), perm.data.col(j).data() + perm.data.rows());
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    CHECK(a == b);
    // correlation with the response: |r| ≤ 5/sqrt(n) = 0.022 under a random permutation
    // (false-failure ≈ 6e-7 per check); the unpermuted correlation is far above that.
    auto corr = [](const Eigen::VectorXd& x, const Eigen::VectorXd& y) { return x.dot(y) / (x.norm() * y.norm()); };
    CHECK(std::abs(corr(perm.data.col(j), perm.data.col(6))) < 5 / std::sqrt(50742.0));
    CHECK(std::abs(corr(plain.data.col(j), plain.data.col(6))) > 0.1);
  }
  for (int j : {0, 1, 3, 5, 6}) CHECK(perm.data.col(j) == plain.data.col(j));
  o.permuted = {"income"};
  CHECK_THROWS_WITH(load_design(o), Catch::Matchers::Contains("'income' is not one of the predictors"));
}

TEST_CASE("cps_bma through the engine: shapes, densities, non-private values", "[cps_bma][engine]") {
  dpmu::experiments::register_builtin_experiments();
  const auto s = rt::parse_study(study_yaml(""), "cps.yaml");
  const fs::path out = fs::temp_directory_path() / ("dpmu_cps_bma_" + std::to_string(::getpid()) + ".h5");
  fs::remove(out);
  rt::RunOptions ro;
  ro.out = out;
  ro.quiet = true;
  REQUIRE(rt::run_study(s, ro).complete);
  const auto r = rt::read_results(out);
  fs::remove(out);
  REQUIRE(r.errors.empty());
  REQUIRE(r.cells.size() == 2);
  auto metric = [&](std::size_t c, const std::string& name, std::size_t rep) {
    for (std::size_t m = 0; m < r.metrics.size(); ++m) {
      if (r.metrics[m].name == name) {
        const auto& cr = r.cell_results[c];
        const std::size_t off = r.offset(c, m);
        return std::vector<double>(cr.values.begin() + static_cast<long>(rep * cr.width + off),
                                   cr.values.begin() + static_cast<long>(rep * cr.width + off + r.metrics[m].sizes[c]));
      }
    }
    FAIL("no metric " << name);
    return std::vector<double>{};
  };
  auto calib = [&](std::size_t c, const std::string& name) {
    for (const auto& [k, v] : r.calibration[c])
      if (k == name) return v;
    FAIL("no calibration " << name);
    return std::vector<double>{};
  };
  int empty_sets = 0, nonempty_sets = 0;
  for (std::size_t c = 0; c < 2; ++c) {
    const auto np_pip = calib(c, "non_private_pip");
    REQUIRE(np_pip.size() == 6);
    CHECK(np_pip[2] < 0.5);   // permuted married
    CHECK(np_pip[4] < 0.5);   // permuted education
    CHECK(np_pip[3] > 0.99);  // male
    const auto edges = calib(c, "histogram_edges");
    REQUIRE(edges.size() == 3 * 11);
    CHECK(calib(c, "histogram_coefficients") == std::vector<double>{1, 3, 4});
    CHECK(calib(c, "n")[0] == 50742);
    for (std::size_t rep = 0; rep < 3; ++rep) {
      for (const auto* name : {"pip_non_thresholded", "pip_thresholded"}) {
        for (double v : metric(c, name, rep)) CHECK((v >= 0 && v <= 1));
      }
      // calibration against the non-private fit: Brier score recomputed from the stored PIPs,
      // coverage indicators, widths ordered by level through cover (a 95 % interval holds the 50 % one)
      for (const std::string t : {"_non_thresholded", "_thresholded"}) {
        const auto pip = metric(c, "pip" + t, rep);
        double brier = 0;
        for (std::size_t j = 0; j < 6; ++j) brier += (pip[j] - np_pip[j]) * (pip[j] - np_pip[j]);
        CHECK(metric(c, "brier" + t, rep)[0] == Approx(brier / 6).epsilon(1e-13));
        const auto c50 = metric(c, "cover50" + t, rep), c80 = metric(c, "cover80" + t, rep),
                   c95 = metric(c, "cover95" + t, rep), w = metric(c, "width95" + t, rep);
        for (std::size_t j = 0; j < 6; ++j) {
          CHECK((c95[j] == 0.0 || c95[j] == 1.0));
          CHECK(c50[j] <= c80[j]);  // nested equal-tailed intervals
          CHECK(c80[j] <= c95[j]);
          CHECK(w[j] >= 0.0);
        }
      }
      const auto dens = metric(c, "confidence_set_density", rep);
      const auto outside = metric(c, "confidence_set_outside_bins", rep);
      const auto lo = metric(c, "confidence_set_lower", rep), hi = metric(c, "confidence_set_upper", rep);
      const double size = metric(c, "confidence_set_size", rep)[0];
      // PB §5.1: whether the set holds G itself (its coverage is checked on the full run by the claim
      // PB-5.1-gram-coverage, plotting/claims.py): an indicator
      const double covers = metric(c, "confidence_set_covers_gram", rep)[0];
      CHECK((covers == 0.0 || covers == 1.0));
      // 190 = ceil(0.95·200) candidates pass the norm rule (no ties in continuous norms); only the
      // PD ones are kept (age and age² are nearly collinear, so many G* − E_i are not PD, and a
      // run may keep none: then every confidence-set output is NaN)
      CHECK(size >= 0);
      CHECK(size <= 190);
      if (size == 0) {
        for (std::size_t j = 0; j < 3; ++j) {
          CHECK(std::isnan(lo[j]));
          CHECK(std::isnan(hi[j]));
          CHECK(std::isnan(outside[j]));
        }
        ++empty_sets;
        continue;
      }
      ++nonempty_sets;
      for (std::size_t j = 0; j < 3; ++j) {
        double mass = 0;
        for (std::size_t k = 0; k < 10; ++k) mass += dens[j * 10 + k] * (edges[j * 11 + k + 1] - edges[j * 11 + k]);
        CHECK(mass == Approx(1.0 - outside[j]).margin(1e-12));  // Σ d_k w_k = in-range fraction
        CHECK(lo[j] <= hi[j]);
      }
    }
  }
  CHECK(empty_sets + nonempty_sets == 6);
  CHECK(nonempty_sets >= 4);  // empty sets are the exception (1 in 250 runs of Figure 5)
}

TEST_CASE("cps_bma: bad config values and missing columns are config errors", "[cps_bma][errors]") {
  dpmu::experiments::register_builtin_experiments();
  using Catch::Matchers::Contains;
  CHECK(config_error("") == "");
  CHECK_THAT(config_error("  permute: []\n  predictors: \"age = age; wage = wages\"\n"),
             Contains("column 'wages' is not in"));
  CHECK_THAT(config_error("  response: salary\n"), Contains("column 'salary' is not in"));
  CHECK_THAT(config_error("  data_file: no/such/file.csv\n"), Contains("does not exist"));
  CHECK_THAT(config_error("  permute: [married, income]\n"), Contains("'income' is not one of the predictors"));
  CHECK_THAT(config_error("  permute: \"married, income\"\n"),
             Contains("expected a list (e.g. [a, b]) for the list parameter permute, got a scalar"));
  CHECK_THAT(config_error("  permute: [\"married, income\"]\n"), Contains("contains a comma; list items cannot"));
  CHECK_THAT(config_error("  rescale: public_bounds\n"), Contains("no bounds for predictor 'age'"));
  CHECK_THAT(config_error("  rescale: public_bounds\n  public_bounds: \"age = 15, 85; age_squared = 225, 7225; "
                          "married = 0, 1; male = 0, 1; education = 0, 20; white = 0, 1\"\n"),
             Contains("no bounds for 'response'"));
  CHECK_THAT(config_error("  public_bounds: \"age = 15, 85\"\n"), Contains("only used with rescale: public_bounds"));
  CHECK_THAT(config_error("  coefficients: [1, 7]\n"), Contains("7 is not a predictor index in 1..6"));
  CHECK_THAT(config_error("  coefficients: [1, x]\n"), Contains("coefficients[1]: 'x' is not an integer"));
  CHECK_THAT(config_error("  coefficients: []\n"), Contains("name at least one predictor index"));
  CHECK_THAT(config_error("  epsilon: 1.5\n"), Contains("Wishart mechanism needs epsilon < 1"));
  CHECK_THAT(config_error("  rescale: minmax\n"), Contains("rescale"));
  CHECK_THAT(config_error("  model_prior: dirichlet\n"), Contains("dirichlet"));
  CHECK_THAT(config_error("  predictors: \"age = age +\"\n"), Contains("ends early"));
}

namespace {
DesignOptions reference_design(const std::string& mode) {
  DesignOptions o;
  o.data_file = kCps;
  o.predictors = kPredictors;
  o.permuted = {"married", "education"};
  o.permutation_seed = 20240325;  // as in configs/fig5_cps*.yaml
  if (mode == "public_bounds") {
    o.rescale = RescaleMode::public_bounds;
    o.public_bounds =
        "age = 15, 85; age_squared = 225, 7225; married = 0, 1; male = 0, 1; education = 0, 20; "
        "white = 0, 1; response = 0, 300000";
  }
  return o;
}
}  // namespace

// Hidden: writes the transformed CPS data (permuted, centred, rescaled) for
// tests/reference/cps_bas_reference.R. Run: DPMU_CPS_EXPORT=/tmp/cps build/tests/dpmu_tests '[.cps_export]'
TEST_CASE("export the transformed CPS data for BAS", "[.cps_export]") {
  const char* dir = std::getenv("DPMU_CPS_EXPORT");
  if (dir == nullptr) {  // ctest discovers hidden tests through "~[statistical]": do nothing then
    SUCCEED("DPMU_CPS_EXPORT not set: nothing exported");
    return;
  }
  for (const std::string mode : {"data_range", "public_bounds"}) {
    const auto d = load_design(reference_design(mode));
    std::ofstream f(std::string(dir) + "/cps_" + mode + ".csv");
    for (std::size_t j = 0; j < d.names.size(); ++j) f << (j ? "," : "") << d.names[j];
    f << "\n";
    char buf[40];
    for (Eigen::Index i = 0; i < d.data.rows(); ++i) {
      for (Eigen::Index j = 0; j < d.data.cols(); ++j) {
        std::snprintf(buf, sizeof buf, "%.17g", d.data(i, j));
        f << (j ? "," : "") << buf;
      }
      f << "\n";
    }
  }
}

TEST_CASE("CPS non-private posterior means and PIPs agree with R's BAS to 1e-6", "[cps_bma][reference]") {
  std::ifstream in(std::string(DPMU_TEST_REFERENCE_DIR) + "/cps_bas_reference.json");
  REQUIRE(in);
  const auto ref = nlohmann::json::parse(in);
  for (const auto& c : ref["configurations"]) {
    const std::string mode = c["rescale"], prior = c["prior"];
    INFO(mode << " " << prior);
    const auto d = load_design(reference_design(mode));
    // same transformed data (and row order) as the R run: Σ_i i·d_ij of the exported file
    const auto sums = c["column_weighted_sums"].get<std::vector<double>>();
    const Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(d.data.rows(), 1.0, static_cast<double>(d.data.rows()));
    for (Eigen::Index j = 0; j < d.data.cols(); ++j) CHECK(w.dot(d.data.col(j)) == Approx(sums[j]).epsilon(1e-10));
    const Eigen::MatrixXd g = dpmu::core::gram_matrix(d.data, -0.5, 0.5);
    const auto r = dpmu::core::bayesian_model_averaging(
        g, static_cast<double>(d.data.rows()),
        dpmu::core::parse_coefficient_prior(prior == "JZS" ? "zellner-siow" : "zellner-siow-laplace"),
        dpmu::core::parse_model_prior("beta-binomial:1,1"));
    int compared = 0;
    for (int j = 0; j < 6; ++j) {
      const auto& pip = c["posterior_inclusion_probabilities"][j];
      const auto& mean = c["posterior_means"][j];  // null where BAS returned NaN (JZS, public bounds)
      CHECK(std::abs(r.posterior_inclusion_probability(j) - pip.get<double>()) < 1e-6);
      if (mean.is_null()) continue;
      ++compared;
      // ZS-null (the prior of configs/fig5_cps*.yaml) is a closed form: 1e-6. BAS computes the JZS
      // shrinkage with R's integrate() at its default rel.tol = eps^0.25 = 1.2e-4, so JZS means
      // can only be compared to 2.5e-4 relative (observed 1.1e-4 on β1, β2; PIPs agree to 1e-6).
      const double tol = prior == "JZS" ? 2.5e-4 * std::abs(mean.get<double>()) + 1e-6 : 1e-6;
      CHECK(std::abs(r.model_averaged_coefficients(j) - mean.get<double>()) <
            tol * (prior == "JZS" ? 1.0 : std::max(1.0, std::abs(mean.get<double>()))));
    }
    CHECK((compared == 6 || (mode == "public_bounds" && prior == "JZS")));
  }
}
