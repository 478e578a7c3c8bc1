#pragma once
/// @file ssp_release.hpp
/// The SSP release of the Gram matrix of data centred and rescaled into [−0.5, 0.5] (Peña &
/// Barrientos 2024, JMLR 25, §5; docs/methods.md §5, A7, A9, A10), shared by the experiments that
/// release a data set's G with public bounds: `cps_bma` (cps_bma.cpp) and `linear_design`
/// (linear_design.cpp). They share the release's parameters and its per-cell set-up (mechanism,
/// ridge, hard-threshold value).

#include <vector>

#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

/// The parameters of the release: model_prior (the prior over models of the averaging),
/// threshold_percentile, threshold_reference, ridge_draws, wishart_ridge.
std::vector<runtime::ParameterSpec> ssp_release_parameters();

/// What prepare() computes once per cell for the release.
struct SspReleaseSetup {
  core::SspMechanism mechanism;  ///< bounds [−0.5, 0.5]
  double regularization = 0.0;   ///< ridge r of G*_r (docs/methods.md A10)
  double threshold = 0.0;        ///< hard-threshold value e_λ (docs/methods.md A9)
};

/// The release of a cell's G: mechanism `kind` for p predictors on data in [−0.5, 0.5], ε the
/// cell's `epsilon`, δ (Wishart only) `delta` if > 0 else 1/n; the ridge the Monte Carlo
/// quantile of −eigmin(E) from `calibration` with `ridge_draws` draws (Laplace, or
/// `wishart_ridge: mc99`) or the analytic Wishart bound; the threshold from
/// `threshold_percentile` and `threshold_reference`. Functions of public parameters only.
/// @throws std::domain_error for an invalid mechanism (core::check_ssp_mechanism).
SspReleaseSetup prepare_ssp_release(const runtime::Cell& cell, core::SspMechanismKind kind, int p, double n,
                                    double delta, core::RngStream& calibration);

}  // namespace dpmu::experiments
