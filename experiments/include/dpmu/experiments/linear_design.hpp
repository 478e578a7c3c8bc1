#pragma once
/// @file linear_design.hpp
/// A generic linear-model data design declared in a config (experiment `linear_design`,
/// docs/linear-design.md): predictors with given distributions, true coefficients and an
/// intercept, and an error distribution,
///   y_i = intercept + x_i'β + e_i,  i = 1..n,
/// analysed by any built-in method (non-private model averaging, SSP model averaging, a DP test by
/// subsample and aggregate). This header exposes the parsed design and the generator for tests.
///
/// Predictor specification: items separated by ';', each `name(arguments)`:
///   uniform(a, b)                 x ~ U(a, b), a < b
///   normal(mu, sd)                x ~ N(mu, sd²), sd > 0
///   correlated_normal(k, rho)     k ≥ 2 predictors N(0, 1), equicorrelated: corr(x_j, x_l) = rho,
///   correlated_normal(k, rho, mu, sd)  0 ≤ rho < 1 (x_j = mu + sd(√rho z_0 + √(1 − rho) z_j))
///   bernoulli(p)                  x ~ Bernoulli(p), 0 < p < 1
///   csv(column)                   a column of the config's data_file; each simulated row takes one
///                                 row of the file drawn uniformly with replacement, shared by all
///                                 csv(...) items (so their joint distribution is the file's)
/// Error specification, one of:
///   normal(sigma)                 e ~ N(0, sigma²)
///   t(df, scale)                  e = scale·T_df (Student t; Var = scale² df/(df − 2) for df > 2)
///   heteroscedastic(sigma, j)     e = sigma (1 + |x_j|) z, z ~ N(0, 1), j the 1-based predictor

#include <Eigen/Dense>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dpmu/core/random.hpp"
#include "dpmu/runtime/data_table.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

/// One item of the predictor specification.
struct PredictorDistribution {
  enum class Kind { uniform, normal, correlated_normal, bernoulli, csv };
  Kind kind = Kind::normal;
  /// uniform: a, b; normal: mu, sd; correlated_normal: k, rho, mu, sd; bernoulli: p; csv: none.
  std::vector<double> arguments;
  std::string column;  ///< csv: the data_file column
  std::string text;    ///< the item as written (for messages)
  /// Number of predictors the item stands for (k for correlated_normal, 1 otherwise).
  int width() const { return kind == Kind::correlated_normal ? static_cast<int>(arguments[0]) : 1; }
};

/// The error distribution.
struct ErrorDistribution {
  enum class Kind { normal, student_t, heteroscedastic };
  Kind kind = Kind::normal;
  double sigma = 1.0;  ///< normal: sd; t: scale; heteroscedastic: sigma
  double df = 0.0;     ///< t only
  int predictor = -1;  ///< heteroscedastic: 0-based predictor j
  std::string text;
};

/// The median of |T| for T ~ Student t with `df` > 0 degrees of freedom (the typical size of a
/// t(df, 1) error): T² = df·B/(1 − B) with B ~ Beta(1/2, df/2), so median T² = df·(1 − x)/x with
/// x the median of Beta(df/2, 1/2) (boost::math::ibeta_inv). 1 at df = 1 (Cauchy), 0.674 as
/// df → ∞; it grows like exp(0.69/df) as df → 0 and is +inf where x underflows (df below about
/// 0.002: such a law's draws are not finite doubles). @throws std::domain_error for df <= 0 or NaN.
double median_abs_student_t(double df);

/// Parse a predictor specification (see the file comment).
/// @throws std::invalid_argument "item k 'text': what is wrong and what to write" (k 1-based).
std::vector<PredictorDistribution> parse_predictor_spec(std::string_view text);

/// Parse an error specification; `p` is the number of predictors (for heteroscedastic(sigma, j)).
/// @throws std::invalid_argument "'text': what is wrong and what to write".
ErrorDistribution parse_error_spec(std::string_view text, int p);

/// Number of predictors of a parsed specification (correlated blocks expanded).
int predictor_count(const std::vector<PredictorDistribution>& predictors);

/// The columns csv(...) items read, in order (empty if there are none).
std::vector<std::string> csv_columns(const std::vector<PredictorDistribution>& predictors);

/// A complete data design.
struct LinearDesign {
  std::vector<PredictorDistribution> predictors;
  Eigen::VectorXd coefficients;  ///< β, one per predictor (blocks expanded)
  double intercept = 0.0;
  ErrorDistribution error;
};

/// One simulated data set: X (n × p) and y (n).
struct LinearData {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

/// Simulate n rows of `design` from `rng`, row by row: the csv row index (core::uniform_index, if
/// any csv item), then the predictors in order, then the error. `csv` holds the csv_columns of the
/// design (null if there are none). Deterministic given the stream.
/// @throws std::invalid_argument if the design has csv items and `csv` is null or empty, or if the
/// coefficients do not match the predictors.
LinearData simulate_linear_data(const LinearDesign& design, std::size_t n, core::RngStream& rng,
                                const runtime::DataTable* csv = nullptr);

/// The experiment (registered in registry.cpp).
std::unique_ptr<runtime::Experiment> make_linear_design();

}  // namespace dpmu::experiments
