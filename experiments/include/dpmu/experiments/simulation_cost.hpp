#pragma once
/// @file simulation_cost.hpp
/// Predicted CPU cost of one replicate of the simulation study (`ssp_simulation`), for the ETA of
/// `dpmu run` (runtime::WorkEstimate; docs/performance.md "ETA"). The units are nanoseconds of
/// one core of the reference machine, but only ratios between cells matter for the ETA.

#include <cstdint>

namespace dpmu::experiments {

/// How a data set is generated (its per-row cost differs by a factor 2–5).
enum class SspGenerator {
  rows,                 ///< simulate_gram_matrix: p uniforms + 1 ziggurat normal per row, Gram of [x y]
  sufficient_statistic  ///< sample_gram_matrix: p uniforms per row, exact Gram of [1 x]
};

/// The variants analysed per data set, by prior (each variant enumerates 2^p models).
struct SspAnalysisCount {
  int zellner_siow_like = 0;  ///< mixture priors by quadrature (zellner_siow, hyper_g, robust, …)
  int closed_form = 0;        ///< bic, aic, g_prior, zellner_siow_laplace: no quadrature
};

/// Predicted cost of one replicate: rows · per-row cost(p) + 2^p · (3 300 ns per quadrature
/// variant + 170 ns per closed-form variant) + 20 µs. Per-row costs from docs/performance.md
/// (one core, quiet machine): rows generator 6.1 + 1.43 p ns; sufficient-statistic sampler
/// 0.35 · p(p + 3)/2 ns (p(p+1)/2 cross products and p sums of the exact kernel, plus the words).
/// @return ≥ 0 (0 for n = 0 and no variants).
double ssp_replicate_cost(std::uint64_t n, int p, const SspAnalysisCount& variants, SspGenerator generator);

}  // namespace dpmu::experiments
