#include "dpmu/experiments/registry.hpp"

#include <memory>

#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

std::unique_ptr<runtime::Experiment> make_normal_mean();

void register_builtin_experiments() {
  // Add one line per experiment.
  runtime::register_experiment(make_normal_mean());
}

}  // namespace dpmu::experiments
