#pragma once
/// @file adassp.hpp
/// `dpmu bma --method adassp` (and R's / Python's bma(method = "adassp")): the AdaSSP baseline
/// (Wang 2018, Algorithm 2; docs/methods.md §11.3) as a release on a user's data — a private
/// ridge-regression point estimate of y on all predictors, for comparison with SSP model averaging.
/// It releases no model probabilities and no intervals: AdaSSP is a point estimator.
///
/// The design the mechanism sees is public-bound standardised (docs/methods.md §11.3 "On a user's
/// data"): each raw value is clamped into its column's public bounds [l_j, u_j] (a NaN becomes l_j),
/// then z_ij = (x_ij − c_j)/h_j with the bounds' midpoint c_j and half-width h_j, so every entry lies
/// in [−1, 1]; the design is [1, z] (an intercept column) with B_X = √(p + 1), and the response
/// w_i = (y_i − c_y)/h_y with B_Y = 1. AdaSSP's own clipping then never binds. The coefficients are
/// mapped back to the data's units by post-processing with the public (c, h).

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dpmu/api/ledger.hpp"
#include "dpmu/core/adassp.hpp"
#include "dpmu/core/release.hpp"

namespace dpmu::api {

/// Largest ε of `--method adassp`: beyond it the noise is negligible (and the analytic Gaussian
/// calibration nears the limits of a double).
inline constexpr double kMaxAdaSspEpsilon = 1e6;
/// Bounds of `--method adassp` lie within ±1e150 and have half-widths of at least 1e-150, so the
/// standardisation and the coefficients in the data's units stay within a double.
inline constexpr double kMaxAdaSspBound = 1e150;

/// Settings of an AdaSSP release. Spellings as `dpmu bma --method adassp`.
struct AdaSspRequest {
  std::optional<double> epsilon;  ///< > 0 (required)
  std::optional<double> delta;    ///< in (0, 1) (required: AdaSSP is Gaussian)
  /// Public bounds on the raw values: 1 (every column) or p + 1 (predictors, then the response).
  std::vector<core::ColumnBounds> bounds;
  std::optional<std::uint64_t> seed;                 ///< seeded simulation noise ("private": false, with diagnostics)
  LedgerOptions ledger;                              ///< where a real release is charged (empty path: nowhere)
  std::string command = "dpmu bma --method adassp";  ///< the front end's name, for the ledger
};

/// The public settings of an AdaSSP release on n rows and p predictors (d = p + 1 with the
/// intercept, B_X = √(p + 1), B_Y = 1), checked before any data are read.
/// @throws std::invalid_argument / std::domain_error naming the option (--epsilon > 1e6, a δ whose δ/3
///   underflows, bounds whose midpoint or half-width ratios overflow a double, ...).
core::AdaSspSettings adassp_settings(const AdaSspRequest& request, std::size_t n, std::size_t p);

/// The bounds of column j (0 ≤ j ≤ p; p is the response) of a request with 1 or p + 1 bounds.
core::ColumnBounds adassp_column_bounds(const AdaSspRequest& request, std::size_t j);

/// The mechanism's input from raw rows (n × (p + 1): predictors, then the response): the design
/// [1, z] (n × (p + 1)) and response w (n), public-bound standardised as in the file comment.
/// `clamped` (if given) counts the raw values moved into their bounds (NaN included) — confidential.
void adassp_design(const Eigen::Ref<const Eigen::MatrixXd>& rows, const AdaSspRequest& request, Eigen::MatrixXd& design,
                   Eigen::VectorXd& response, std::size_t* clamped = nullptr);

/// The release: JSON with "settings", "privacy", the released `lambda_min_noisy`, `released_gram`
/// (lower triangle of the (p + 1)² matrix of the standardised design, intercept first),
/// `released_xty`, and post-processing `ridge`, `coefficients` (data units, keyed by
/// "(intercept)" and the predictors), `coefficients_standardized`; "diagnostics" only with a seed.
/// @param rows n × (p + 1), predictors then the response (raw values; non-finite values allowed).
/// @param data_bytes the bytes the ledger fingerprints (the CLI: the data file as read); empty: the
///   rows (matrix_bytes).
/// @throws std::invalid_argument / std::domain_error naming the input; runtime::BudgetExceeded.
nlohmann::ordered_json adassp(const Eigen::Ref<const Eigen::MatrixXd>& rows, const std::vector<std::string>& predictors,
                              const std::string& response, const AdaSspRequest& request,
                              std::string_view data_bytes = {}, const std::string& data_label = {});

}  // namespace dpmu::api
