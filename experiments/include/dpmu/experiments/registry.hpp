#pragma once
/// @file registry.hpp
/// The experiments shipped with dpmu.

namespace dpmu::experiments {

/// Register every built-in experiment with dpmu::runtime::register_experiment.
/// Idempotent; call once at start-up (the `dpmu` command and the tests do).
void register_builtin_experiments();

}  // namespace dpmu::experiments
