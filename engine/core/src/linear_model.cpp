#include "dpmu/core/linear_model.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpmu/core/checks.hpp"

namespace dpmu::core {

namespace {
constexpr double kCollinearTolerance = 1e-10;

std::string column_label(std::span<const std::string> names, std::size_t j) {
  if (j < names.size()) return "'" + names[j] + "'";
  return "column " + std::to_string(j + 1);
}

/// The power-of-two exponent e with max_i |x_i| in [2^(e-1), 2^e) (0 for a zero column), so that
/// x · 2^-e has its largest magnitude in [1/2, 1). Multiplying by a power of two is exact (no
/// rounding) unless an entry drops below the normal range, which only happens to entries more than
/// 2^1021 times smaller than the largest one of their column.
int column_exponent(const Eigen::Ref<const Eigen::VectorXd>& x) {
  const double m = x.cwiseAbs().maxCoeff();
  if (!(m > 0.0)) return 0;
  int e = 0;
  std::frexp(m, &e);
  return e;
}
}  // namespace

NestedFit fit_nested_models(const Eigen::Ref<const Eigen::MatrixXd>& common,
                            const Eigen::Ref<const Eigen::MatrixXd>& tested,
                            const Eigen::Ref<const Eigen::VectorXd>& response,
                            std::span<const std::string> column_names) {
  constexpr const char* fn = "fit_nested_models";
  const auto n = static_cast<std::size_t>(response.size());
  const auto p0 = static_cast<std::size_t>(common.cols());
  const auto p = static_cast<std::size_t>(tested.cols());
  if (p == 0) throw_invalid(fn, "the tested block is empty (p = 0); name at least one tested predictor");
  if (static_cast<std::size_t>(common.rows()) != n && p0 > 0) {
    throw_invalid(
        fn, "common block has " + std::to_string(common.rows()) + " rows but the response has " + std::to_string(n));
  }
  if (static_cast<std::size_t>(tested.rows()) != n) {
    throw_invalid(
        fn, "tested block has " + std::to_string(tested.rows()) + " rows but the response has " + std::to_string(n));
  }
  if (n < p0 + p + 1) {
    throw_invalid(fn, "only " + std::to_string(n) + " rows for " + std::to_string(p0) + " common and " +
                          std::to_string(p) +
                          " tested columns; need at least p0 + p + 1 = " + std::to_string(p0 + p + 1));
  }
  const std::size_t q = p0 + p + 1;
  Eigen::MatrixXd a(n, q);
  if (p0 > 0) a.leftCols(p0) = common;
  a.middleCols(p0, p) = tested;
  a.col(q - 1) = response;
  if (!a.allFinite()) {
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      for (Eigen::Index i = 0; i < a.rows(); ++i) {
        if (!std::isfinite(a(i, j))) {
          const std::string what =
              (static_cast<std::size_t>(j) == q - 1) ? std::string("the response") : column_label(column_names, j);
          throw_invalid(
              fn, what + " has a non-finite value (" + format_value(a(i, j)) + ") in row " + std::to_string(i + 1));
        }
      }
    }
  }
  // Scale invariance: R², the Bayes factors and the collinearity test do not depend on the scale of
  // any column, so every column is multiplied by a power of two (exact) that brings its largest
  // magnitude into [1/2, 1) before the QR. Columns of any magnitude (1e-300 or 1e300) then give the
  // same R² as unit-scale ones, without overflow or underflow of their squares.
  const Eigen::VectorXd first_row = a.row(0).transpose();  // the values named by "is constant" messages
  std::vector<int> exponent(q, 0);
  const auto rescale = [&](std::size_t j) {
    const int e = column_exponent(a.col(static_cast<Eigen::Index>(j)));
    exponent[j] += e;  // ldexp per entry: 2^-e itself overflows for subnormal columns (e < -1023)
    if (e != 0)
      a.col(static_cast<Eigen::Index>(j)) =
          a.col(static_cast<Eigen::Index>(j)).unaryExpr([e](double v) { return std::ldexp(v, -e); });
  };
  for (std::size_t j = 0; j < q; ++j) rescale(j);
  // With an intercept (a non-zero constant first common column, as in every test of the paper),
  // projecting on it first is centring: done by subtracting means (twice, the second removing the
  // rounding of the first), it keeps the digits of a column such as x + 1e12, which a QR of the raw
  // column loses (it was reported as collinear with the intercept). The centred columns are then
  // scaled again by a power of two. Values are in [-1, 1) here, so the sums cannot overflow.
  const auto c0 = a.col(0);
  if (p0 > 0 && c0(0) != 0.0 && c0.maxCoeff() == c0.minCoeff()) {
    for (std::size_t j = 1; j < q; ++j) {
      auto c = a.col(static_cast<Eigen::Index>(j));
      for (int pass = 0; pass < 2; ++pass) c.array() -= c.mean();
      rescale(j);
    }
  }
  const Eigen::VectorXd col_norms = a.colwise().norm();
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
  const Eigen::MatrixXd r = qr.matrixQR().topRows(q).triangularView<Eigen::Upper>();
  for (std::size_t j = 0; j + 1 < q; ++j) {
    const double rel = col_norms(j) > 0 ? std::abs(r(j, j)) / col_norms(j) : 0.0;
    if (!(rel > kCollinearTolerance)) {
      const auto c = a.col(static_cast<Eigen::Index>(j));
      if (c.maxCoeff() == c.minCoeff()) {
        const double value = first_row(static_cast<Eigen::Index>(j));
        throw_invalid(fn, column_label(column_names, j) + " is constant (every value is " + format_value(value) + ")" +
                              (j > 0 ? ", so it is collinear with the intercept or the preceding columns" : "") +
                              "; the design is rank-deficient");
      }
      throw_invalid(fn, column_label(column_names, j) +
                            " is collinear with the preceding columns (intercept, common, then tested; "
                            "relative residual norm " +
                            format_value(rel) + "); the design is rank-deficient");
    }
  }
  const double sse_full = r(q - 1, q - 1) * r(q - 1, q - 1);
  const double explained = r.col(q - 1).segment(p0, p).squaredNorm();
  const double sse_null = explained + sse_full;
  if (!(sse_null > 0.0) || std::sqrt(sse_null) <= 64.0 * std::numeric_limits<double>::epsilon() * col_norms(q - 1)) {
    const auto yc = a.col(static_cast<Eigen::Index>(q - 1));
    if (yc.maxCoeff() == yc.minCoeff()) {
      throw_invalid(fn, "the response is constant (every value is " +
                            format_value(first_row(static_cast<Eigen::Index>(q - 1))) + "); R² is undefined");
    }
    throw_invalid(fn, "the response is constant given the common predictors (SSE under H0 is 0); R² is undefined");
  }
  if (std::sqrt(sse_full) <= 64.0 * std::numeric_limits<double>::epsilon() * col_norms(q - 1)) {
    throw_invalid(fn,
                  "the tested predictors fit the response exactly (R² = 1); the Bayes factor is infinite (under a "
                  "fixed g-prior only its limit is finite) and the test is not computed");
  }
  NestedFit fit;
  fit.n = n;
  fit.p0 = p0;
  fit.p = p;
  // back to the units of the response (exact; inf if the sum of squares exceeds the double range)
  fit.sse_full = std::ldexp(sse_full, 2 * exponent[q - 1]);
  fit.sse_null = std::ldexp(sse_null, 2 * exponent[q - 1]);
  fit.r_squared = explained / sse_null;
  fit.log_one_minus_r_squared =
      fit.r_squared < 0.5 ? std::log1p(-fit.r_squared) : std::log(sse_full) - std::log(sse_null);
  return fit;
}

}  // namespace dpmu::core
