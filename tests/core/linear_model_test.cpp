// R² of nested linear models by QR, against closed forms and constructed data with known R².
#include "dpmu/core/linear_model.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

using Catch::Matchers::Contains;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {
MatrixXd ones(Eigen::Index n) { return MatrixXd::Ones(n, 1); }

// Data with exactly known R²: y = 1 + X b + e, e orthogonal to [1, X], ||e||² = sse1.
struct Constructed {
  MatrixXd x;
  VectorXd y;
  double r2;
  double ssr;  // explained sum of squares
};
Constructed construct(int n, int p, double sse1, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  MatrixXd x(n, p);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) x(i, j) = z(rng);
  MatrixXd design(n, p + 1);
  design << ones(n), x;
  VectorXd e(n);
  for (int i = 0; i < n; ++i) e(i) = z(rng);
  Eigen::HouseholderQR<MatrixXd> qr(design);
  const MatrixXd qthin = qr.householderQ() * MatrixXd::Identity(n, p + 1);
  e -= qthin * (qthin.transpose() * e);
  e *= std::sqrt(sse1) / e.norm();
  VectorXd b = VectorXd::LinSpaced(p, 1.0, 2.0);
  VectorXd signal = x * b;
  signal.array() -= signal.mean();  // explained part, orthogonal to the intercept
  const double ssr = signal.squaredNorm();
  VectorXd y = (signal + e).array() + 1.0;
  return {x, y, ssr / (ssr + sse1), ssr};
}
}  // namespace

TEST_CASE("R² with one tested predictor equals the squared sample correlation", "[linear_model]") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> z;
  const int n = 37;
  VectorXd x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x(i) = z(rng);
    y(i) = 0.3 * x(i) + z(rng);
  }
  const auto fit = dpmu::core::fit_nested_models(ones(n), x, y);
  const double xm = x.mean(), ym = y.mean();
  const double sxy = ((x.array() - xm) * (y.array() - ym)).sum();
  const double sxx = (x.array() - xm).square().sum();
  const double syy = (y.array() - ym).square().sum();
  CHECK(fit.r_squared == Approx(sxy * sxy / (sxx * syy)).epsilon(1e-12));
  CHECK(fit.sse_null == Approx(syy).epsilon(1e-12));
  CHECK(fit.n == 37);
  CHECK(fit.p0 == 1);
  CHECK(fit.p == 1);
}

TEST_CASE("log(1 - R²) keeps relative precision at R² = 1 - 1e-12 and at tiny R²", "[linear_model]") {
  for (double sse1 : {1e-10, 1e-2, 1e3, 1e12}) {
    const auto c = construct(200, 3, sse1, 11);
    const auto fit = dpmu::core::fit_nested_models(ones(200), c.x, c.y);
    const double expected = -std::log1p(c.ssr / sse1);  // log(SSE1 / (SSE1 + SSR))
    INFO("sse1=" << sse1 << " R2=" << c.r2);
    CHECK(fit.log_one_minus_r_squared == Approx(expected).epsilon(1e-7));
    CHECK(fit.r_squared == Approx(c.r2).epsilon(1e-9));
  }
}

TEST_CASE("an empty common block means no intercept", "[linear_model]") {
  VectorXd x(4), y(4);
  x << 1, 2, 3, 4;
  y << 1, 3, 2, 5;
  const auto fit = dpmu::core::fit_nested_models(MatrixXd(4, 0), x, y);
  // Uncentred: R² = (x'y)²/(x'x y'y)
  CHECK(fit.r_squared == Approx(33.0 * 33.0 / (30.0 * 39.0)).epsilon(1e-13));
  CHECK(fit.p0 == 0);
}

TEST_CASE("fit_nested_models rejects bad designs with actionable messages", "[linear_model]") {
  const int n = 10;
  MatrixXd x(n, 2);
  VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    x(i, 0) = i;
    x(i, 1) = 2.0 * i + 1.0;  // collinear with the intercept and column 0
    y(i) = std::sin(i);
  }
  const std::string names[] = {"(intercept)", "age", "age2"};
  CHECK_THROWS_WITH(dpmu::core::fit_nested_models(ones(n), x, y, names),
                    Contains("'age2' is collinear") && Contains("rank-deficient"));
  MatrixXd x1 = x.leftCols(1);
  VectorXd yconst = VectorXd::Constant(n, 3.0);
  CHECK_THROWS_WITH(dpmu::core::fit_nested_models(ones(n), x1, yconst), Contains("response is constant"));
  VectorXd yexact = 2.0 * x1.col(0).array() + 1.0;
  CHECK_THROWS_WITH(dpmu::core::fit_nested_models(ones(n), x1, yexact), Contains("R² = 1"));
  CHECK_THROWS_WITH(dpmu::core::fit_nested_models(ones(2), x1.topRows(2), y.head(2)),
                    Contains("only 2 rows") && Contains("at least p0 + p + 1 = 3"));
  VectorXd ynan = y;
  ynan(4) = std::nan("");
  CHECK_THROWS_WITH(dpmu::core::fit_nested_models(ones(n), x1, ynan),
                    Contains("response has a non-finite value") && Contains("row 5"));
  CHECK_THROWS_WITH(dpmu::core::fit_nested_models(ones(n), MatrixXd(n, 0), y), Contains("tested block is empty"));
  CHECK_THROWS_AS(dpmu::core::fit_nested_models(ones(n), x1, y.head(5)), std::invalid_argument);
}

TEST_CASE("R² does not depend on the scale of any column (1e-300 to 1e300), and diagnoses stay right",
          "[linear_model]") {
  // a predictor times 1e-160 changed R² (0.1269628 -> 0.1269127); columns times
  // 1e300/1e160 were "collinear (residual norm -nan)" and a response times 1e300 "constant".
  std::mt19937_64 rng(21);
  std::normal_distribution<double> z;
  const int n = 60;
  MatrixXd common(n, 2), tested(n, 2);
  VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    common(i, 0) = 1.0;
    common(i, 1) = z(rng);
    tested(i, 0) = z(rng);
    tested(i, 1) = z(rng) + 0.3 * common(i, 1);
    y(i) = 0.4 * tested(i, 0) + 0.2 * common(i, 1) + z(rng);
  }
  const auto ref = dpmu::core::fit_nested_models(common, tested, y);
  for (const double s : {1e-300, 1e-160, 1e-20, 3.0, 1e20, 1e160, 1e300}) {
    // (subnormal columns, 1e-310, are covered below: 2^-e overflows for them, so scaling is per entry)
    INFO("scale " << s);
    MatrixXd c = common, t = tested;
    t.col(0) *= s;
    const auto a = dpmu::core::fit_nested_models(c, t, y);
    CHECK(a.r_squared == Approx(ref.r_squared).epsilon(1e-13));
    c.col(1) *= s;
    t.col(1) *= s;
    const auto b = dpmu::core::fit_nested_models(c, t, y * s);
    CHECK(b.r_squared == Approx(ref.r_squared).epsilon(1e-13));
    CHECK(b.log_one_minus_r_squared == Approx(ref.log_one_minus_r_squared).epsilon(1e-12));
    // a power of two is exact: the same bits
    const double two = std::ldexp(1.0, static_cast<int>(std::log2(s)));
    const auto e = dpmu::core::fit_nested_models(common, tested * two, y * two);
    CHECK(e.r_squared == ref.r_squared);
    // collinearity is still found at any scale, and reported with a finite residual norm
    MatrixXd dup = tested * s;
    dup.col(1) = dup.col(0);
    const std::string names[] = {"(intercept)", "c", "x1", "x2"};
    CHECK_THROWS_WITH(dpmu::core::fit_nested_models(common, dup, y * s, names),
                      Contains("'x2' is collinear") && !Contains("nan"));
    CHECK_THROWS_WITH(dpmu::core::fit_nested_models(common, tested * s, VectorXd::Constant(n, 7.0 * s)),
                      Contains("response is constant"));
  }
  {
    MatrixXd t = tested;
    t.col(0) *= 1e-310;  // subnormal: 3-4 significant digits are left
    const auto sub = dpmu::core::fit_nested_models(common, t, y);
    CHECK(sub.r_squared == Approx(ref.r_squared).epsilon(1e-3));
  }
  const std::string names[] = {"(intercept)", "c", "x1", "x2"};
  MatrixXd constant = tested;
  constant.col(1).setConstant(4.5);
  CHECK_THROWS_WITH(dpmu::core::fit_nested_models(common, constant, y, names),
                    Contains("'x2' is constant (every value is 4.5)"));
}

TEST_CASE("a large offset (x + 1e12) with an intercept keeps its R²: the columns are centred, not declared collinear",
          "[linear_model]") {
  // Values on a 2^-10 grid in [-1, 1]: x + 1e12 is then exact in a double (its ulp is 2^-13), so the
  // shifted data are exactly the same design and R² must agree to rounding. Before the centring
  // the QR of [1, x + 1e12] lost 12 digits and x was reported as collinear with the intercept.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> grid(-1024, 1024);
  const int n = 400;
  MatrixXd x(n, 2);
  VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    x(i, 0) = grid(rng) / 1024.0;
    x(i, 1) = grid(rng) / 1024.0;
    y(i) = 0.5 * x(i, 0) + grid(rng) / 1024.0;
  }
  const auto plain = dpmu::core::fit_nested_models(ones(n), x, y);
  MatrixXd shifted = x.array() + 1e12;
  const VectorXd y_shifted = y.array() + 1e12;
  REQUIRE((shifted.array() - 1e12).matrix() == x);  // the shift is exact
  const auto fit = dpmu::core::fit_nested_models(ones(n), shifted, y_shifted);
  CHECK(fit.r_squared == Approx(plain.r_squared).epsilon(1e-10));
  CHECK(fit.log_one_minus_r_squared == Approx(plain.log_one_minus_r_squared).epsilon(1e-10));
  CHECK(fit.sse_full == Approx(plain.sse_full).epsilon(1e-10));
  // A truly collinear column (x2 = x1 + 1e12 - 1e12 shifted copy) is still found.
  MatrixXd twins(n, 2);
  twins << shifted.col(0), shifted.col(0);
  CHECK_THROWS_WITH(dpmu::core::fit_nested_models(ones(n), twins, y), Contains("collinear"));
}
