/// @file simulation_cost.cpp
/// Cost model of one `ssp_simulation` replicate (simulation_cost.hpp).

#include "dpmu/experiments/simulation_cost.hpp"

#include <algorithm>
#include <cmath>

namespace dpmu::experiments {

double ssp_replicate_cost(std::uint64_t n, int p, const SspAnalysisCount& variants, SspGenerator generator) {
  const double pp = std::max(p, 0);
  const double per_row = generator == SspGenerator::rows ? 6.1 + 1.43 * pp : 0.35 * pp * (pp + 3.0) / 2.0;
  const double models = std::ldexp(1.0, std::min(p, 60));
  const double analysis =
      models * (3300.0 * std::max(variants.zellner_siow_like, 0) + 170.0 * std::max(variants.closed_form, 0));
  return static_cast<double>(n) * per_row + analysis + 20000.0;
}

}  // namespace dpmu::experiments
