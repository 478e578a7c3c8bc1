/// @file ssp_release.cpp
/// The SSP release shared by `cps_bma` and `linear_design` (ssp_release.hpp).

#include "dpmu/experiments/ssp_release.hpp"

#include <cstdint>
#include <string>

namespace dpmu::experiments {

using runtime::ParameterSpec;
using runtime::ParameterType;

std::vector<ParameterSpec> ssp_release_parameters() {
  return {
      {.name = "model_prior",
       .type = ParameterType::string,
       .default_value = std::string("beta-binomial:1,1"),
       .description = "prior over models (paper: hierarchical uniform = beta-binomial:1,1)"},
      {.name = "threshold_percentile",
       .type = ParameterType::real,
       .default_value = 0.95,
       .min = 0.0,
       .max = 1.0,
       .min_inclusive = false,
       .max_inclusive = false,
       .description = "lambda of the hard threshold (A9)"},
      {.name = "threshold_reference",
       .type = ParameterType::string,
       .default_value = std::string("absolute"),
       .allowed = {"absolute", "signed"},
       .description = "e_lambda as quantile of |E_ij| or of E_ij"},
      {.name = "ridge_draws",
       .type = ParameterType::integer,
       .default_value = std::int64_t{100000},
       .min = 100.0,
       .description = "Laplace: draws of E for the 99th percentile of -eigmin(E)"},
      {.name = "wishart_ridge",
       .type = ParameterType::string,
       .default_value = std::string("analytic"),
       .allowed = {"analytic", "mc99"},
       .description = "Wishart ridge: analytic bound or MC 99th percentile"},
  };
}

SspReleaseSetup prepare_ssp_release(const runtime::Cell& cell, core::SspMechanismKind kind, int p, double n,
                                    double delta, core::RngStream& calibration) {
  SspReleaseSetup s;
  auto& m = s.mechanism;
  m.kind = kind;
  m.p = p;
  m.lower = -0.5;
  m.upper = 0.5;
  m.epsilon = cell.get_double("epsilon");
  m.delta = kind == core::SspMechanismKind::wishart ? (delta > 0 ? delta : 1.0 / n) : 0.0;
  core::check_ssp_mechanism(m);
  if (kind == core::SspMechanismKind::laplace || cell.get_string("wishart_ridge") == "mc99") {
    s.regularization = core::monte_carlo_regularization(m, calibration, static_cast<int>(cell.get_int("ridge_draws")));
  } else {
    s.regularization = core::wishart_regularization(m);
  }
  s.threshold = core::threshold_value(m, cell.get_double("threshold_percentile"),
                                      core::parse_threshold_reference(cell.get_string("threshold_reference")));
  return s;
}

}  // namespace dpmu::experiments
