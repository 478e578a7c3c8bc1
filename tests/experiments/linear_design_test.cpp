// linear_design (docs/linear-design.md): the specification parsers and their errors, the
// generator against closed forms (Monte Carlo tolerances from the standard error, fixed seeds),
// the experiment's parameter validation, and small end-to-end checks of the methods.
#include "dpmu/experiments/linear_design.hpp"

#include <boost/math/distributions/students_t.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/calibration_metrics.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/experiments/calibration_metrics.hpp"
#include "dpmu/experiments/data_files.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "dpmu/runtime/streams.hpp"
#include "run_replicate.hpp"

namespace ex = dpmu::experiments;
namespace core = dpmu::core;
namespace rt = dpmu::runtime;

namespace {

const rt::Experiment& experiment() {
  ex::register_builtin_experiments();
  return rt::find_experiment("linear_design");
}

rt::Cell make_cell(std::vector<std::pair<std::string, rt::ParameterValue>> values) {
  return dpmu_test::cell_with_defaults(experiment(), std::move(values));
}

/// A valid bma cell of 4 normal predictors, overridden by `changes`.
rt::Cell bma_cell(const std::vector<std::pair<std::string, rt::ParameterValue>>& changes = {}) {
  std::vector<std::pair<std::string, rt::ParameterValue>> v = {
      {"n", std::int64_t{500}},
      {"predictors", std::string("normal(0, 1); normal(0, 1); normal(0, 1); normal(0, 1)")},
      {"coefficients", std::vector<double>{2.0, 0.0, -1.5, 0.0}},
      {"error", std::string("normal(1)")},
      {"method", std::string("bma")}};
  for (const auto& [name, value] : changes) {
    bool replaced = false;
    for (auto& [n, x] : v) {
      if (n == name) {
        x = value;
        replaced = true;
      }
    }
    if (!replaced) v.emplace_back(name, value);
  }
  return make_cell(v);
}

std::string validation_error(const rt::Cell& c) {
  try {
    experiment().validate(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string parse_error(const std::string& spec) {
  try {
    ex::parse_predictor_spec(spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

ex::LinearData simulate(const std::string& predictors, std::vector<double> beta, const std::string& error,
                        std::size_t n, std::uint64_t seed, double intercept = 0.0, const rt::DataTable* csv = nullptr) {
  ex::LinearDesign d;
  d.predictors = ex::parse_predictor_spec(predictors);
  d.coefficients = Eigen::Map<const Eigen::VectorXd>(beta.data(), static_cast<Eigen::Index>(beta.size()));
  d.intercept = intercept;
  d.error = ex::parse_error_spec(error, ex::predictor_count(d.predictors));
  core::RngStream rng(seed, 1, 0, core::StreamPurpose::data);
  return ex::simulate_linear_data(d, n, rng, csv);
}

double mean(const Eigen::VectorXd& v) { return v.mean(); }
double variance(const Eigen::VectorXd& v) { return (v.array() - v.mean()).square().sum() / (v.size() - 1.0); }

// |estimate − truth| within 4 standard errors.
void check_within(double estimate, double truth, double se) {
  INFO("estimate " << estimate << ", truth " << truth << ", se " << se);
  CHECK(std::abs(estimate - truth) < 4.0 * se);
}

}  // namespace

TEST_CASE("linear_design: predictor and error specifications parse", "[linear_design]") {
  const auto p = ex::parse_predictor_spec(
      "uniform(-2, 2); normal(1, 0.5); correlated_normal(3, 0.4); correlated_normal(2, 0.1, 5, 2); bernoulli(0.3); "
      "csv(math)");
  REQUIRE(p.size() == 6);
  CHECK(ex::predictor_count(p) == 1 + 1 + 3 + 2 + 1 + 1);
  CHECK(p[2].arguments == std::vector<double>{3, 0.4, 0, 1});
  CHECK(p[3].arguments == std::vector<double>{2, 0.1, 5, 2});
  CHECK(p[5].column == "math");
  CHECK(ex::csv_columns(p) == std::vector<std::string>{"math"});
  const auto t = ex::parse_error_spec("t(5, 2)", 3);
  CHECK(t.kind == ex::ErrorDistribution::Kind::student_t);
  CHECK(t.df == 5);
  CHECK(t.sigma == 2);
  const auto h = ex::parse_error_spec("heteroscedastic(0.5, 3)", 3);
  CHECK(h.predictor == 2);
}

TEST_CASE("linear_design: specification errors name the item and say what to write", "[linear_design]") {
  CHECK_THAT(parse_error("normal(0, 1); gamma(2, 1)"), Catch::Contains("item 2 'gamma(2, 1)'") &&
                                                           Catch::Contains("not a distribution") &&
                                                           Catch::Contains("uniform(a, b)"));
  CHECK_THAT(parse_error("normal(0)"), Catch::Contains("item 1 'normal(0)' has 1 argument; write normal(mu, sd)"));
  CHECK_THAT(parse_error("uniform(2, -2)"), Catch::Contains("needs a < b"));
  CHECK_THAT(parse_error("normal(0, x)"), Catch::Contains("sd 'x' is not a finite number"));
  CHECK_THAT(parse_error("normal(0, 0)"), Catch::Contains("needs sd > 0"));
  CHECK_THAT(parse_error("correlated_normal(1, 0.5)"), Catch::Contains("block size k in [2, 20]"));
  CHECK_THAT(parse_error("correlated_normal(2, 1)"), Catch::Contains("0 <= rho < 1"));
  CHECK_THAT(parse_error("correlated_normal(2, 0.5, 1)"), Catch::Contains("has 3 arguments"));
  CHECK_THAT(parse_error("bernoulli(1)"), Catch::Contains("0 < p < 1"));
  CHECK_THAT(parse_error("normal 0 1"), Catch::Contains("not of the form name(arguments)"));
  CHECK_THAT(parse_error("csv(age); csv(age)"), Catch::Contains("item 2") && Catch::Contains("already a predictor"));
  CHECK_THAT(parse_error(""), Catch::Contains("no predictors"));
  CHECK_THROWS_WITH(ex::parse_error_spec("t(0, 1)", 2), Catch::Contains("'t(0, 1)' needs df > 0"));
  CHECK_THROWS_WITH(ex::parse_error_spec("normal(-1)", 2), Catch::Contains("needs a scale > 0"));
  CHECK_THROWS_WITH(ex::parse_error_spec("heteroscedastic(1, 3)", 2), Catch::Contains("predictor index j in 1..2"));
  CHECK_THROWS_WITH(ex::parse_error_spec("laplace(1)", 2),
                    Catch::Contains("not an error distribution") && Catch::Contains("t(df, scale)"));
}

TEST_CASE("linear_design generator: moments of each distribution against closed forms",
          "[linear_design][statistical]") {
  const std::size_t n = 200000;
  const double rn = std::sqrt(static_cast<double>(n));
  // x1 ~ U(-2, 3), x2 ~ N(1, 2^2), (x3, x4) equicorrelated N(0, 1) with rho = 0.6, x5 ~ Bernoulli(0.3)
  const auto d = simulate("uniform(-2, 3); normal(1, 2); correlated_normal(2, 0.6); bernoulli(0.3)",
                          {0.5, -1.0, 2.0, 0.0, 3.0}, "normal(1.5)", n, 20260101, 4.0);
  const Eigen::VectorXd x1 = d.x.col(0), x2 = d.x.col(1), x3 = d.x.col(2), x4 = d.x.col(3), x5 = d.x.col(4);
  // uniform: mean (a+b)/2, variance (b-a)^2/12, SE of s^2 = sqrt((mu4 - sigma^4)/n), mu4 = (b-a)^4/80
  check_within(mean(x1), 0.5, std::sqrt(25.0 / 12.0) / rn);
  check_within(variance(x1), 25.0 / 12.0, std::sqrt(625.0 / 80.0 - 625.0 / 144.0) / rn);
  CHECK(x1.minCoeff() > -2.0);
  CHECK(x1.maxCoeff() < 3.0);
  // normal: SE of s^2 = sigma^2 sqrt(2/n)
  check_within(mean(x2), 1.0, 2.0 / rn);
  check_within(variance(x2), 4.0, 4.0 * std::sqrt(2.0) / rn);
  // equicorrelated block: unit variances, correlation rho (SE (1 - rho^2)/sqrt(n))
  check_within(variance(x3), 1.0, std::sqrt(2.0) / rn);
  check_within(variance(x4), 1.0, std::sqrt(2.0) / rn);
  const double r34 =
      ((x3.array() - x3.mean()) * (x4.array() - x4.mean())).sum() / (n - 1.0) / std::sqrt(variance(x3) * variance(x4));
  check_within(r34, 0.6, (1 - 0.36) / rn);
  // the block is independent of the other predictors
  const double r23 =
      ((x2.array() - x2.mean()) * (x3.array() - x3.mean())).sum() / (n - 1.0) / std::sqrt(variance(x2) * variance(x3));
  check_within(r23, 0.0, 1.0 / rn);
  // Bernoulli rate
  CHECK(((x5.array() == 0.0) || (x5.array() == 1.0)).all());
  check_within(mean(x5), 0.3, std::sqrt(0.21) / rn);
  // y = 4 + x'beta + e: E y = 4 + 0.5·0.5 − 1 + 0 + 0.9; the residual e = y − 4 − x'beta ~ N(0, 1.5^2)
  const Eigen::VectorXd beta = (Eigen::VectorXd(5) << 0.5, -1.0, 2.0, 0.0, 3.0).finished();
  const Eigen::VectorXd e = d.y.array() - 4.0 - (d.x * beta).array();
  check_within(mean(e), 0.0, 1.5 / rn);
  check_within(variance(e), 2.25, 2.25 * std::sqrt(2.0) / rn);
  // Var y = 0.25·25/12 + 4 + 4 (block) + 9·0.21 + 2.25
  const double var_y = 0.25 * 25.0 / 12.0 + 4.0 + 4.0 + 9.0 * 0.21 + 2.25;
  check_within(mean(d.y), 4.0 + 0.25 - 1.0 + 0.9, std::sqrt(var_y) / rn);
}

TEST_CASE("linear_design generator: Student t and heteroscedastic errors", "[linear_design][statistical]") {
  const std::size_t n = 200000;
  const double rn = std::sqrt(static_cast<double>(n));
  SECTION("t(10, 2): variance scale^2 df/(df-2) = 5; Var(e^2) = scale^4 (E T^4 - (E T^2)^2)") {
    const auto d = simulate("normal(0, 1)", {0.0}, "t(10, 2)", n, 77);
    const double et4 = 3.0 * 100.0 / (8.0 * 6.0);  // E T^4 = 3 df^2 / ((df-2)(df-4))
    check_within(mean(d.y), 0.0, std::sqrt(5.0) / rn);
    check_within(variance(d.y), 5.0, 4.0 * std::sqrt(et4 - 1.25 * 1.25) / rn);
  }
  SECTION("t(3, 1): P(|e| > 4) = 2 (1 - F_3(4)), F_3(t) = 1/2 + (u/(1 + u^2) + atan u)/pi, u = t/sqrt 3") {
    const auto d = simulate("normal(0, 1)", {0.0}, "t(3, 1)", n, 78);
    const double tail = (d.y.array().abs() > 4.0).cast<double>().mean();
    const double u = 4.0 / std::sqrt(3.0);
    const double truth = 2.0 * (0.5 - (u / (1.0 + u * u) + std::atan(u)) / M_PI);
    check_within(tail, truth, std::sqrt(truth * (1 - truth)) / rn);
  }
  SECTION("heteroscedastic(0.5, 1) with x1 ~ U(-1, 1): sd 0.5 (1 + |x1|)") {
    const auto d = simulate("uniform(-1, 1); normal(0, 1)", {0.0, 0.0}, "heteroscedastic(0.5, 1)", n, 79);
    // |x| ~ U(0, 1): E(1+|x|)^2 = 7/3, E(1+|x|)^4 = 31/5; E e^2 = sigma^2 7/3, E e^4 = 3 sigma^4 31/5
    const double s2 = 0.25, m2 = s2 * 7.0 / 3.0, m4 = 3.0 * s2 * s2 * 31.0 / 5.0;
    check_within(variance(d.y), m2, std::sqrt(m4 - m2 * m2) / rn);
    // conditional: e / (1 + |x1|) ~ N(0, sigma^2) whatever x1
    const Eigen::VectorXd z = d.y.array() / (1.0 + d.x.col(0).array().abs());
    check_within(variance(z), s2, s2 * std::sqrt(2.0) / rn);
    // the variance grows with |x1|: E(e^2 | |x1| > 1/2) = sigma^2 E(1+u)^2, u ~ U(1/2, 1), against
    // |x1| < 1/2 (u ~ U(0, 1/2)); E(1+u)^k on U(a, b) = ((1+b)^(k+1) - (1+a)^(k+1)) / ((k+1)(b-a))
    auto moment = [](double a, double b, int k) {
      return (std::pow(1 + b, k + 1) - std::pow(1 + a, k + 1)) / ((k + 1) * (b - a));
    };
    for (const auto& [a, b] : {std::pair{0.5, 1.0}, std::pair{0.0, 0.5}}) {
      std::vector<double> squares;
      for (Eigen::Index i = 0; i < d.y.size(); ++i) {
        const double u = std::abs(d.x(i, 0));
        if (u >= a && u < b) squares.push_back(d.y(i) * d.y(i));
      }
      const double m = s2 * moment(a, b, 2), v = 3 * s2 * s2 * moment(a, b, 4) - m * m;
      const Eigen::Map<const Eigen::VectorXd> e2(squares.data(), static_cast<Eigen::Index>(squares.size()));
      check_within(e2.mean(), m, std::sqrt(v / static_cast<double>(squares.size())));
    }
  }
}

TEST_CASE("linear_design generator: csv columns are resampled rows with replacement", "[linear_design][statistical]") {
  const auto table = ex::read_csv_cached(std::string(DPMU_TEST_DATA_DIR) + "/hsb2.csv", {"math", "read"});
  std::set<std::pair<double, double>> rows;
  const auto& math = table->column("math");
  const auto& read = table->column("read");
  double file_mean = 0.0, file_var = 0.0;
  for (std::size_t i = 0; i < table->rows(); ++i) {
    rows.emplace(math[i], read[i]);
    file_mean += math[i];
  }
  file_mean /= static_cast<double>(table->rows());
  for (double m : math) file_var += (m - file_mean) * (m - file_mean);
  file_var /= static_cast<double>(table->rows());
  const std::size_t n = 50000;
  const auto d = simulate("csv(math); normal(0, 1); csv(read)", {0.0, 0.0, 0.0}, "normal(1)", n, 80, 0.0, table.get());
  // every simulated (math, read) pair is a row of the file: the columns are drawn jointly
  for (Eigen::Index i = 0; i < d.x.rows(); ++i) REQUIRE(rows.count({d.x(i, 0), d.x(i, 2)}) == 1);
  // with replacement from the empirical distribution: E = file mean, Var = file (population) variance
  check_within(mean(d.x.col(0)), file_mean, std::sqrt(file_var / static_cast<double>(n)));
  // n = 50000 draws with replacement reach every row of the file (P(a row is missed) < 200 e^-250)
  std::set<std::pair<double, double>> drawn;
  for (Eigen::Index i = 0; i < d.x.rows(); ++i) drawn.emplace(d.x(i, 0), d.x(i, 2));
  CHECK(drawn == rows);
  CHECK_THROWS_WITH(simulate("csv(math)", {1.0}, "normal(1)", 10, 1), Catch::Contains("needs a data table"));
}

TEST_CASE("linear_design: generation is a pure function of the stream", "[linear_design]") {
  const auto a = simulate("uniform(-2, 2); correlated_normal(2, 0.5); bernoulli(0.5)", {1, 0, 1, 0}, "t(4, 1)", 100, 5);
  const auto b = simulate("uniform(-2, 2); correlated_normal(2, 0.5); bernoulli(0.5)", {1, 0, 1, 0}, "t(4, 1)", 100, 5);
  CHECK(a.x == b.x);
  CHECK(a.y == b.y);
}

TEST_CASE("linear_design: parameter validation names the parameter and what to do", "[linear_design]") {
  CHECK(validation_error(bma_cell()).empty());
  CHECK_THAT(validation_error(bma_cell({{"predictors", std::string("normal(0, 1); weibull(1)")}})),
             Catch::StartsWith("predictors: item 2 'weibull(1)'"));
  CHECK_THAT(
      validation_error(bma_cell({{"coefficients", std::vector<double>{1, 2, 3}}})),
      Catch::StartsWith("coefficients: 3 values for 4 predictors") && Catch::Contains("one coefficient per predictor"));
  // a block of 3 and one more predictor: 4 predictors, 4 coefficients
  CHECK(validation_error(bma_cell({{"predictors", std::string("correlated_normal(3, 0.5); normal(0, 1)")}})).empty());
  CHECK_THAT(validation_error(bma_cell({{"error", std::string("heteroscedastic(1, 5)")}})),
             Catch::StartsWith("error: 'heteroscedastic(1, 5)' needs a predictor index j in 1..4"));
  CHECK_THAT(validation_error(bma_cell({{"n", std::int64_t{6}}})), Catch::StartsWith("n: 6 rows for 4 predictors"));
  CHECK_THAT(validation_error(bma_cell({{"epsilon", 1.0}})),
             Catch::StartsWith("epsilon: the non-private method bma") && Catch::Contains("own grid block"));
  CHECK_THAT(validation_error(bma_cell({{"method", std::string("ssp_laplace")}})),
             Catch::StartsWith("epsilon: method ssp_laplace needs a privacy budget"));
  CHECK_THAT(validation_error(bma_cell({{"method", std::string("ssp_laplace")}, {"epsilon", 1.0}})),
             Catch::StartsWith("public_bounds: no bounds for 'x1'"));
  const std::string bounds = "x1 = -4, 4; x2 = -4, 4; x3 = -4, 4; x4 = -4, 4; response = -15, 15";
  CHECK(
      validation_error(bma_cell({{"method", std::string("ssp_laplace")}, {"epsilon", 1.0}, {"public_bounds", bounds}}))
          .empty());
  CHECK_THAT(
      validation_error(bma_cell(
          {{"method", std::string("ssp_laplace")}, {"epsilon", 1.0}, {"public_bounds", bounds + "; x5 = 0, 1"}})),
      Catch::StartsWith("public_bounds: 'x5' is not x1..x4 or response"));
  CHECK_THAT(
      validation_error(bma_cell({{"method", std::string("ssp_wishart")}, {"epsilon", 1.0}, {"public_bounds", bounds}})),
      Catch::StartsWith("epsilon: the Wishart mechanism needs epsilon < 1"));
  CHECK_THAT(validation_error(bma_cell({{"thresholded", std::int64_t{1}}})), Catch::StartsWith("thresholded:"));
  CHECK_THAT(validation_error(bma_cell({{"prior", std::string("flat")}})), Catch::StartsWith("prior: 'flat'"));
  CHECK_THAT(validation_error(bma_cell({{"method", std::string("dp_test")}, {"epsilon", 1.0}})),
             Catch::StartsWith("tested: the dp_test method needs"));
  CHECK_THAT(validation_error(bma_cell(
                 {{"method", std::string("dp_test")}, {"epsilon", 1.0}, {"tested", std::vector<std::int64_t>{5}}})),
             Catch::StartsWith("tested: predictor 5 is not in 1..4"));
  CHECK_THAT(validation_error(bma_cell({{"method", std::string("dp_test")},
                                        {"epsilon", 1.0},
                                        {"tested", std::vector<std::int64_t>{2}},
                                        {"num_subsets", std::int64_t{200}}})),
             Catch::StartsWith("num_subsets: 200 subsets leave too few rows"));
  CHECK_THAT(validation_error(bma_cell({{"predictors", std::string("csv(math); normal(0, 1); normal(0, 1); "
                                                                   "normal(0, 1)")}})),
             Catch::StartsWith("data_file: the predictors include csv(column) items"));
  CHECK_THAT(validation_error(bma_cell({{"data_file", std::string("experiments/data/hsb2.csv")}})),
             Catch::StartsWith("data_file: no predictor is csv(column)"));
}

TEST_CASE("linear_design: check_data reads the csv columns", "[linear_design]") {
  const auto csv = [](const std::string& column) {
    return bma_cell({{"predictors", "csv(" + column + "); normal(0, 1); normal(0, 1); normal(0, 1)"},
                     {"data_file", std::string("experiments/data/hsb2.csv")}});
  };
  CHECK_NOTHROW(experiment().check_data(csv("math")));
  CHECK_THROWS_WITH(experiment().check_data(csv("salary")),
                    Catch::StartsWith("predictors: csv(salary):") && Catch::Contains("salary"));
  const auto missing = bma_cell({{"predictors", std::string("csv(math); normal(0, 1); normal(0, 1); normal(0, 1)")},
                                 {"data_file", std::string("no/such/file.csv")}});
  CHECK_THROWS_WITH(experiment().data_files(missing), Catch::StartsWith("data_file:"));
}

TEST_CASE("linear_design: non-private BMA of a strong-signal design puts PIP ~ 1 on the true predictors",
          "[linear_design]") {
  const auto& e = experiment();
  const rt::Cell cell = bma_cell();
  REQUIRE(validation_error(cell).empty());
  std::size_t width = 0;
  for (const auto& m : e.metrics(cell)) width += m.size;
  for (std::uint64_t r = 0; r < 3; ++r) {
    const auto out = dpmu_test::run_replicate(e, cell, 42, r);
    REQUIRE(out.size() == width);
    // layout: pip[4], posterior_mean[4], prob_true_model, hpm_is_true, mean_pip_active, mean_pip_inactive, ...
    CHECK(out[0] > 0.999);
    CHECK(out[2] > 0.999);
    CHECK(out[1] < 0.5);
    CHECK(out[3] < 0.5);
    CHECK(out[4] == Approx(2.0).margin(0.2));
    CHECK(out[6] == Approx(-1.5).margin(0.2));
    CHECK(out[8] > 0.5);         // P(true model)
    CHECK(out[10] > 0.999);      // mean PIP of the active predictors
    CHECK(std::isnan(out[14]));  // ridge_fallback: SSP only
  }
}

TEST_CASE("linear_design: SSP model averaging at a large epsilon and the DP test find the signal", "[linear_design]") {
  const auto& e = experiment();
  const std::string bounds = "x1 = -4, 4; x2 = -4, 4; x3 = -4, 4; x4 = -4, 4; response = -15, 15";
  const rt::Cell ssp = bma_cell({{"n", std::int64_t{20000}},
                                 {"method", std::string("ssp_laplace")},
                                 {"epsilon", 10.0},
                                 {"public_bounds", bounds},
                                 {"ridge_draws", std::int64_t{1000}}});
  REQUIRE(validation_error(ssp).empty());
  const auto prepared = dpmu_test::prepare_cell(e, ssp, 42);
  const auto out = dpmu_test::run_replicate(e, ssp, 42, 0, prepared);
  CHECK(out[0] > 0.99);
  CHECK(out[2] > 0.99);
  // posterior mean in the original units: the ridge r shrinks the slope of a N(0, 1) predictor
  // by G_11 / (G_11 + r), G_11 ~ n Var(x1) / 16^2 after rescaling by 2 (4 - (-4)) = 16
  double ridge = 0;
  for (const auto& [name, v] : e.calibration_outputs_erased(ssp, prepared.get())) {
    if (name == "regularization") ridge = v[0];
  }
  const double g11 = 20000.0 / 256.0;
  INFO("ridge " << ridge);
  // mean over 10 data sets within 4 standard errors (plus 0.02 for the randomness of G_11)
  Eigen::VectorXd slope(10);
  for (int r = 0; r < 10; ++r) slope(r) = dpmu_test::run_replicate(e, ssp, 42, r, prepared)[4];
  check_within(slope.mean(), 2.0 * g11 / (g11 + ridge), std::sqrt(variance(slope) / 10.0) + 0.005);
  CHECK(out[14] == 0.0);       // ridge_fallback
  CHECK(out[15] >= 0.0);       // clamped entries counted
  CHECK(std::isnan(out[16]));  // dp_test metrics are NaN
  // H0: beta_1 = 0 is false (beta_1 = 2): the released posterior probability of H1 is high
  const rt::Cell test = bma_cell({{"n", std::int64_t{2000}},
                                  {"method", std::string("dp_test")},
                                  {"epsilon", 5.0},
                                  {"tested", std::vector<std::int64_t>{1}}});
  REQUIRE(validation_error(test).empty());
  const auto t = dpmu_test::run_replicate(e, test, 42, 0);
  CHECK(std::isnan(t[0]));  // no PIPs
  CHECK(t[18] > 0.9);       // posterior_probability_h1
  // H0: beta_2 = 0 is true: lower posterior probability of H1
  const rt::Cell null = bma_cell({{"n", std::int64_t{2000}},
                                  {"method", std::string("dp_test")},
                                  {"epsilon", 5.0},
                                  {"tested", std::vector<std::int64_t>{2}}});
  CHECK(dpmu_test::run_replicate(e, null, 42, 0)[18] < 0.5);
}

TEST_CASE(
    "linear_design: simulated data that overflow are refused up front and fail the replicate for every method, never "
    "analysed",
    "[linear_design]") {
  const auto& e = experiment();
  for (const std::string method : {"bma", "dp_test"}) {
    INFO(method);
    std::vector<std::pair<std::string, rt::ParameterValue>> changes = {
        {"coefficients", std::vector<double>{1e308, 1e308, 0.0, 0.0}}, {"method", method}};
    if (method == "dp_test") {
      changes.push_back({"epsilon", 1.0});
      changes.push_back({"tested", std::vector<std::int64_t>{1}});
    }
    const rt::Cell cell = bma_cell(changes);
    // --dry-run refuses a design that overflows in every replicate, naming the key ...
    CHECK_THAT(validation_error(cell),
               Catch::StartsWith("coefficients:") && Catch::Contains("overflows a double in every replicate"));
    // ... and a replicate run without that check (or one whose data overflow by chance) fails with
    // a non-finite-data error instead of analysing infinite data.
    CHECK_THROWS_WITH(dpmu_test::run_replicate(e, cell, 42, 0), Catch::Contains("non-finite"));
  }
}

TEST_CASE("linear_design: median |t| against the t distribution's quantile, and t errors that overflow are refused",
          "[linear_design]") {
  // median |T_df| = the 0.75 quantile of T_df (boost's students_t quantile: an independent route to
  // the same number), and two closed forms below
  for (const double df : {0.05, 0.3, 1.0, 2.0, 5.0, 30.0}) {
    INFO("df = " << df);
    const double reference = boost::math::quantile(boost::math::students_t(df), 0.75);
    CHECK(ex::median_abs_student_t(df) == Approx(reference).epsilon(1e-9));
  }
  CHECK(ex::median_abs_student_t(1.0) == Approx(1.0).epsilon(1e-12));  // Cauchy: median |T| = 1
  // t(2): P(|T| <= t) = t / sqrt(2 + t^2) = 1/2 at t = sqrt(2/3)
  CHECK(ex::median_abs_student_t(2.0) == Approx(std::sqrt(2.0 / 3.0)).epsilon(1e-12));
  // df -> 0: the typical size grows like exp(0.69/df) and is infinite for df = 1e-300
  CHECK(std::isinf(ex::median_abs_student_t(1e-300)));
  CHECK(ex::median_abs_student_t(0.01) > 1e20);
  CHECK_THROWS_AS(ex::median_abs_student_t(0.0), std::domain_error);

  // error: "t(1e-300, 1)" draws infinite errors in every replicate: --dry-run (validate) refuses it,
  // naming the key (before: accepted, then every replicate failed)
  const rt::Cell tiny_df = bma_cell({{"error", std::string("t(1e-300, 1)")}});
  CHECK_THAT(validation_error(tiny_df), Catch::StartsWith("error: 't(1e-300, 1)'") &&
                                            Catch::Contains("overflows a double in most replicates") &&
                                            Catch::Contains("larger df"));
  CHECK_THROWS_WITH(dpmu_test::run_replicate(experiment(), tiny_df, 42, 0), Catch::Contains("non-finite"));
  // heavy but finite tails stay allowed: t(0.5, 1) (median |T| 1.55) and t(3, 1)
  CHECK(validation_error(bma_cell({{"error", std::string("t(0.5, 1)")}})).empty());
  CHECK(validation_error(bma_cell({{"error", std::string("t(3, 1)")}})).empty());
}

TEST_CASE("linear_design: calibration metrics of a bma replicate equal the default analysis' intervals at each level",
          "[linear_design][calibration_metrics]") {
  const auto& e = experiment();
  const rt::Cell cell = bma_cell();
  const auto prior = core::parse_coefficient_prior("zellner-siow", 500.0);
  const auto model_prior = core::parse_model_prior(cell.get_string("model_prior"));
  const Eigen::Vector4d beta(2.0, 0.0, -1.5, 0.0);
  const char* names[3] = {"cover50", "cover80", "cover95"};
  for (std::uint64_t r = 0; r < 2; ++r) {
    const auto out = dpmu_test::run_replicate(e, cell, 42, r);
    const auto metric = [&](const std::string& name) { return dpmu_test::metric_values(e, cell, out, name); };
    // The same data set from the data stream, its centred Gram matrix, and the default analysis
    // (bayesian_model_averaging with credible_level = L) at each level: an independent path to the
    // intervals (the experiment's come from the mixture of mix_bma_draws).
    auto data = rt::data_stream(42, cell, r);
    const auto set = e.generate_erased(cell.data_cell(), data);
    const auto& d = *static_cast<const ex::LinearData*>(set.get());
    Eigen::MatrixXd raw(d.x.rows(), 5);
    raw << d.x, d.y;
    const Eigen::MatrixXd centred = raw.rowwise() - raw.colwise().mean();
    const Eigen::MatrixXd g = centred.transpose() * centred;
    for (int l = 0; l < 3; ++l) {
      core::BmaOptions o;
      o.credible_level = ex::kCalibrationLevels[l];
      const auto fit = core::bayesian_model_averaging(g, 500.0, prior, model_prior, o);
      const auto& ci = fit.credible_intervals;
      const auto cover = metric(names[l]);
      for (int j = 0; j < 4; ++j) {
        INFO("replicate " << r << ", level " << names[l] << ", beta" << j + 1);
        const auto uj = static_cast<std::size_t>(j);
        CHECK(cover[uj] == (ci.lower(j) <= beta(j) && beta(j) <= ci.upper(j) ? 1.0 : 0.0));
        if (l == 2) CHECK(metric("width95")[uj] == Approx(ci.upper(j) - ci.lower(j)).epsilon(1e-9));
        if (l == 2) CHECK(metric("pip")[uj] == fit.posterior_inclusion_probability(j));  // the same data set
      }
    }
    // Brier score by hand against 1[beta_j != 0] = (1, 0, 1, 0)
    const auto pip = metric("pip");
    CHECK(metric("brier")[0] ==
          Approx(((pip[0] - 1) * (pip[0] - 1) + pip[1] * pip[1] + (pip[2] - 1) * (pip[2] - 1) + pip[3] * pip[3]) / 4.0)
              .epsilon(1e-14));
    // reliability tables: 4 PIPs (2 events), 16 model probabilities summing to 1 (1 event)
    const auto sum = [&](const std::string& name) {
      const auto v = metric(name);
      return std::accumulate(v.begin(), v.end(), 0.0);
    };
    CHECK(sum("pip_bin_count") == 4.0);
    CHECK(sum("pip_bin_events") == 2.0);
    CHECK(sum("pip_bin_predicted") == Approx(pip[0] + pip[1] + pip[2] + pip[3]).epsilon(1e-14));
    CHECK(sum("model_bin_count") == 16.0);
    CHECK(sum("model_bin_events") == 1.0);
    CHECK(sum("model_bin_predicted") == Approx(1.0).epsilon(1e-12));
    CHECK(
        metric("model_bin_events")[static_cast<std::size_t>(core::reliability_bin(metric("prob_true_model")[0], 10))] ==
        1.0);
  }
}

TEST_CASE("linear_design: SSP intervals in the original units agree with bma's when the noise is negligible",
          "[linear_design][calibration_metrics]") {
  // epsilon = 1e9 and bounds that clamp nothing: the release is the Gram matrix of the rescaled data
  // up to ~1e-9 relative, so the SSP intervals mapped back by s_y / s_j must be bma's intervals of
  // the same data set (a check of the change of units). Measured in this replicate: the widths within
  // 1e-5 relative, the Brier scores 3e-6 apart (the PIPs react to G through n log(1 − R²)).
  const auto& e = experiment();
  const std::string bounds = "x1 = -10, 10; x2 = -10, 10; x3 = -10, 10; x4 = -10, 10; response = -40, 40";
  const rt::Cell ssp = bma_cell({{"method", std::string("ssp_laplace")},
                                 {"epsilon", 1e9},
                                 {"public_bounds", bounds},
                                 {"ridge_draws", std::int64_t{1000}}});
  const rt::Cell bma = bma_cell();
  REQUIRE(validation_error(ssp).empty());
  REQUIRE(ssp.data_id() == bma.data_id());  // one data set per replicate for both
  const auto a = dpmu_test::run_replicate(e, ssp, 42, 3);
  const auto b = dpmu_test::run_replicate(e, bma, 42, 3);
  REQUIRE(dpmu_test::metric_values(e, ssp, a, "clamped_entries")[0] == 0.0);
  const auto wa = dpmu_test::metric_values(e, ssp, a, "width95");
  const auto wb = dpmu_test::metric_values(e, bma, b, "width95");
  for (std::size_t j = 0; j < 4; ++j) {
    INFO("beta" << j + 1);
    CHECK(wa[j] == Approx(wb[j]).epsilon(1e-5).margin(1e-12));
    for (const char* name : {"cover50", "cover80", "cover95"}) {
      CHECK(dpmu_test::metric_values(e, ssp, a, name)[j] == dpmu_test::metric_values(e, bma, b, name)[j]);
    }
  }
  CHECK(dpmu_test::metric_values(e, ssp, a, "brier")[0] ==
        Approx(dpmu_test::metric_values(e, bma, b, "brier")[0]).epsilon(1e-4));
}
