/// @file normal_mean.cpp
/// `normal_mean`: a tiny experiment for engine tests and benchmarks (not from the paper).
/// Data: x_1..x_n iid N(mu, sigma²) from the data stream. Metrics: the sample mean, whether the
/// 95% z-interval mean ± z_{0.975} sigma/√n (sigma known) covers mu, and the sample quartiles
/// (type-7 quantiles, as R and numpy) of the data. `prepare` computes z_{0.975} once per cell
/// (stored as /calibration/z_critical).

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <memory>
#include <vector>

#include "dpmu/core/quantile.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {
namespace {

using runtime::Cell;
using runtime::MetricSpec;
using runtime::ParameterSpec;
using runtime::ParameterType;

class NormalMean final : public runtime::Experiment {
 public:
  std::string name() const override { return "normal_mean"; }

  std::vector<ParameterSpec> parameters() const override {
    return {
        {.name = "n", .type = ParameterType::integer, .data_factor = true, .min = 1.0, .description = "sample size"},
        {.name = "mu",
         .type = ParameterType::real,
         .data_factor = true,
         .default_value = 0.0,
         .description = "true mean"},
        {.name = "sigma",
         .type = ParameterType::real,
         .data_factor = false,
         .default_value = 1.0,
         .min = 0.0,
         .min_inclusive = false,
         .description = "true standard deviation (> 0)"},
    };
  }

  std::vector<MetricSpec> metrics(const Cell&) const override {
    return {{.name = "sample_mean", .description = "mean of the n observations"},
            {.name = "covered", .description = "1 if the 95% z-interval covers mu, else 0"},
            {.name = "quantiles",
             .size = 3,
             .is_vector = true,
             .description = "sample quartiles (type 7)",
             .component_labels = {"p=0.25", "p=0.5", "p=0.75"}}};
  }

  std::shared_ptr<const void> prepare(const Cell&, core::RngStream&) const override {
    return std::make_shared<const double>(boost::math::quantile(boost::math::normal(), 0.975));
  }

  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell&,
                                                                               const void* prepared) const override {
    return {{"z_critical", {*static_cast<const double*>(prepared)}}};
  }

  void run_replicate(const Cell& cell, const void* prepared, core::RngStream& data, core::RngStream&,
                     std::span<double> out) const override {
    const auto n = static_cast<std::size_t>(cell.get_int("n"));
    const double mu = cell.get_double("mu");
    const double sigma = cell.get_double("sigma");
    const double z = *static_cast<const double*>(prepared);
    std::vector<double> x(n);
    double sum = 0.0;
    for (auto& xi : x) {
      xi = mu + sigma * core::standard_normal(data);
      sum += xi;
    }
    const double mean = sum / static_cast<double>(n);
    const double half_width = z * sigma / std::sqrt(static_cast<double>(n));
    out[0] = mean;
    out[1] = std::abs(mean - mu) <= half_width ? 1.0 : 0.0;
    out[2] = core::type7_quantile(x, 0.25);
    out[3] = core::type7_quantile(x, 0.5);
    out[4] = core::type7_quantile(x, 0.75);
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_normal_mean() { return std::make_unique<NormalMean>(); }

}  // namespace dpmu::experiments
