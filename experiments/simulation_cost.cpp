/// @file simulation_cost.cpp
/// Cost model of the `ssp_simulation` experiment (simulation_cost.hpp).

#include "dpmu/experiments/simulation_cost.hpp"

#include <algorithm>
#include <cmath>

namespace dpmu::experiments {

double ssp_generate_cost(std::uint64_t n, int p, SspGenerator generator) {
  const double pp = std::max(p, 0);
  const double per_row = generator == SspGenerator::rows ? 6.1 + 1.43 * pp : 0.35 * pp * (pp + 3.0) / 2.0;
  return static_cast<double>(n) * per_row + 20000.0;
}

double ssp_analyse_cost(int p, bool quadrature_prior) {
  const double models = std::ldexp(1.0, std::clamp(p, 0, 60));
  return models * (quadrature_prior ? 3300.0 : 170.0) + 5000.0;
}

}  // namespace dpmu::experiments
