#pragma once
/// @file linear_model.hpp
/// Nested normal linear models: the coefficient of determination of a tested
/// block of predictors given a common block (paper §4.1, docs/methods.md §1).

#include <Eigen/Dense>
#include <cstddef>
#include <span>
#include <string>

namespace dpmu::core {

/// Result of comparing H0: y ~ common with H1: y ~ common + tested.
struct NestedFit {
  std::size_t n = 0;                     ///< rows
  std::size_t p0 = 0;                    ///< columns of the common block (the intercept, if present, is counted)
  std::size_t p = 0;                     ///< columns of the tested block
  double r_squared = 0.0;                ///< R² = 1 - SSE1/SSE0, in [0, 1)
  double log_one_minus_r_squared = 0.0;  ///< log(1 - R²) = log(SSE1/SSE0), accurate at both ends (natural log)
  double sse_null = 0.0;                 ///< residual sum of squares under H0 (SSE0)
  double sse_full = 0.0;                 ///< residual sum of squares under H1 (SSE1)
};

/// R² of the tested block given the common block, by one Householder QR of
/// [common | tested | response] (never by inverting normal equations).
///
/// With R the triangular factor and column y last, SSE1 = R(last,last)² and
/// SSE0 = Σ_{i ≥ p0} R(i,last)², so 1 - R² = SSE1/SSE0 (docs/methods.md §1).
/// log(1 - R²) is taken as log1p(-R²) when R² < 1/2 and as log SSE1 - log SSE0
/// otherwise, so both R² = 1e-12 and R² = 1 - 1e-12 keep full relative precision.
///
/// Scale invariance: before the QR every column (common, tested, response) is multiplied by the
/// power of two 2^-e with max |x| ∈ [2^(e-1), 2^e) — exact, so data of ordinary magnitude give the
/// same bits — so R², log(1 - R²) and the collinearity test are the same for columns of magnitude
/// 1e-300 and 1e300 (no overflow or underflow of squares). sse_null and sse_full are multiplied
/// back into the units of the response (they may overflow to inf beyond |y| ~ 1e154; R² does not).
///
/// @param common   n×p0 common predictors (include a column of ones for an intercept); p0 may be 0.
/// @param tested   n×p tested predictors, p ≥ 1.
/// @param response n-vector.
/// @param column_names optional p0 + p names used in error messages (may be empty).
/// @throws std::invalid_argument  on size mismatch, p = 0, n < p0 + p + 1, a non-finite entry,
///         a constant column or one collinear with the preceding ones (relative residual norm
///         < 1e-10; the message names it), a response that is constant given the common block, or
///         an exact fit (R² = 1).
/// Deterministic.
NestedFit fit_nested_models(const Eigen::Ref<const Eigen::MatrixXd>& common,
                            const Eigen::Ref<const Eigen::MatrixXd>& tested,
                            const Eigen::Ref<const Eigen::VectorXd>& response,
                            std::span<const std::string> column_names = {});

}  // namespace dpmu::core
