#pragma once
/// @file ssp_calibration.hpp
/// The experiment `ssp_calibration` (docs/methods.md §5.11; experiments/ssp_calibration.cpp), also
/// run by the planner of a model-averaging release (api::plan_bma, `dpmu plan-bma`).

#include <memory>

#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

/// A new instance of the experiment (the registry holds one; api::plan_bma makes its own).
std::unique_ptr<runtime::Experiment> make_ssp_calibration();

}  // namespace dpmu::experiments
