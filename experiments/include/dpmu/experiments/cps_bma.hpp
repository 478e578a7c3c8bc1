#pragma once
/// @file cps_bma.hpp
/// Data preparation of the CPS application (Peña & Barrientos 2024, JMLR 25, §5.2.2, Figure 5;
/// docs/methods.md §5.9, A7, A11): a CSV file mapped to a design by column expressions
/// (column_design.hpp), selected predictors permuted to break their association with the
/// response, and every column centred and rescaled into [−0.5, 0.5]. The experiment itself
/// (`cps_bma`) is registered by registry.cpp; this header exposes the deterministic pieces for tests.

#include <Eigen/Dense>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

/// How the centred columns are scaled into [−0.5, 0.5].
enum class RescaleMode {
  data_range,     ///< paper: divide by 2·max_i |x_ij − x̄_j| (data-dependent; not private)
  public_bounds,  ///< clamp raw x_j into public [a_j, b_j], centre, divide by 2(b_j − a_j)
};

/// What a CPS-like design is built from (the experiment's parameters, parsed).
struct DesignOptions {
  std::string data_file;                      ///< CSV with a header row (resolved path)
  std::string response = "earnings";          ///< expression for the response
  std::string predictors;                     ///< "name = expression; ..." (order = β1, β2, ...)
  std::vector<std::string> permuted;          ///< predictor names whose rows are permuted
  bool joint_permutation = false;             ///< one permutation for all permuted columns
  std::uint64_t permutation_seed = 20240325;  ///< seed of the (fixed, once-per-data-set) permutation
  RescaleMode rescale = RescaleMode::data_range;
  std::string public_bounds;  ///< "name = lower, upper; ..." (raw scale; response named `response`)
};

/// The transformed data set: D (n × (p+1), predictors then response, centred and rescaled).
struct RescaledDesign {
  Eigen::MatrixXd data;
  std::vector<std::string> names;     ///< p predictor names, then "response"
  Eigen::VectorXd centre;             ///< raw-scale column means subtracted (after clamping)
  Eigen::VectorXd scale;              ///< divisors: D_ij = (x_ij − centre_j) / scale_j
  std::uint64_t clamped_entries = 0;  ///< raw values moved into their public bounds
};

/// Uniformly random permutation of 0..n−1 (Fisher–Yates with core::uniform_index). Draws from rng.
std::vector<std::size_t> random_permutation(std::size_t n, core::RngStream& rng);

/// Permute the rows of the listed columns of x in place: each with its own permutation
/// (independent, the default) or all with one (joint). Permutations come from
/// RngStream(seed, fnv1a_64("cps_bma/permutation"), 0, data), in column order.
/// @throws std::invalid_argument for a column index out of range.
void permute_columns(Eigen::MatrixXd& x, const std::vector<int>& columns, bool joint, std::uint64_t seed);

/// Centre and rescale the columns of raw (n × k) into [−0.5, 0.5] (see RescaleMode); `bounds`
/// (one (lower, upper) per column) is used only for public_bounds, where values outside are
/// clamped and counted. @throws std::invalid_argument for a size mismatch or n < 2;
/// std::domain_error for a constant column (data_range).
RescaledDesign rescale_columns(const Eigen::MatrixXd& raw, RescaleMode mode,
                               const std::vector<std::pair<double, double>>& bounds);

/// Read the CSV, evaluate the expressions, permute, rescale. @throws std::invalid_argument for a
/// missing column, a malformed specification, a permuted or bounded name that is not a
/// predictor, or (public_bounds) a column without bounds; std::runtime_error for an unreadable file.
RescaledDesign load_design(const DesignOptions& options);

/// The `cps_bma` experiment (registered in registry.cpp).
std::unique_ptr<runtime::Experiment> make_cps_bma();

}  // namespace dpmu::experiments
