#include "dpmu/experiments/registry.hpp"

#include <memory>
#include <mutex>

#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

std::unique_ptr<runtime::Experiment> make_normal_mean();
std::unique_ptr<runtime::Experiment> make_hsb_posterior();
std::unique_ptr<runtime::Experiment> make_hsb_likelihood_ratio();
std::unique_ptr<runtime::Experiment> make_type1_calibration();
std::unique_ptr<runtime::Experiment> make_lei_simulation();
std::unique_ptr<runtime::Experiment> make_lei_real_data();
std::unique_ptr<runtime::Experiment> make_selection_head_to_head();
std::unique_ptr<runtime::Experiment> make_cps_bma();
std::unique_ptr<runtime::Experiment> make_ssp_simulation();
std::unique_ptr<runtime::Experiment> make_linear_design();
std::unique_ptr<runtime::Experiment> make_ssp_calibration();
std::unique_ptr<runtime::Experiment> make_nested_test_head_to_head();

void register_builtin_experiments() {
  // Idempotent: registering again would replace the instances (and their caches) and leave
  // references from find_experiment dangling.
  static std::once_flag once;
  std::call_once(once, [] {
    runtime::register_experiment(make_normal_mean());
    runtime::register_experiment(make_hsb_posterior());
    runtime::register_experiment(make_hsb_likelihood_ratio());
    runtime::register_experiment(make_type1_calibration());
    runtime::register_experiment(make_lei_simulation());
    runtime::register_experiment(make_lei_real_data());
    runtime::register_experiment(make_selection_head_to_head());
    runtime::register_experiment(make_cps_bma());
    runtime::register_experiment(make_ssp_simulation());
    runtime::register_experiment(make_linear_design());
    runtime::register_experiment(make_ssp_calibration());
    runtime::register_experiment(make_nested_test_head_to_head());
  });
}

}  // namespace dpmu::experiments
