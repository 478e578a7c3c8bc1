#pragma once
/// @file simulation_cost.hpp
/// Predicted CPU cost of the simulation study (`ssp_simulation`), for the ETA of `dpmu run`
/// (Experiment::generate_cost / analyse_cost → runtime::WorkEstimate; docs/performance.md
/// "ETA"). The units are nanoseconds of one core of the reference machine, but only ratios
/// between cells matter for the ETA.

#include <cstdint>

namespace dpmu::experiments {

/// How a data set is generated (its per-row cost differs by a factor 2–5).
enum class SspGenerator {
  rows,                 ///< simulate_gram_matrix: p uniforms + 1 ziggurat normal per row, Gram of [x y]
  sufficient_statistic  ///< sample_gram_matrix: p uniforms per row, exact Gram of [1 x]
};

/// Predicted cost of generating one data set: n · per-row cost(p) + 20 µs. Per-row costs from
/// docs/performance.md (one core, quiet machine): rows generator 6.1 + 1.43 p ns; sufficient-
/// statistic sampler 0.35 · p(p + 3)/2 ns (p(p+1)/2 cross products and p sums of the exact
/// kernel, plus the words). @return ≥ 0.
double ssp_generate_cost(std::uint64_t n, int p, SspGenerator generator);

/// Predicted cost of one analysis of a data set (one method cell): 2^p models × (3 300 ns with a
/// quadrature prior — zellner-siow, hyper-g(-n), robust — or 170 ns with a closed form — bic,
/// aic, lr, g-prior, zellner-siow-laplace) + 5 µs (noise, regularisation, metrics). @return > 0.
double ssp_analyse_cost(int p, bool quadrature_prior);

}  // namespace dpmu::experiments
