/// @file normal_mean.cpp
/// `normal_mean`: a tiny experiment for engine tests and benchmarks (not from the paper).
/// Data: x_1..x_n iid N(mu, sigma²) from the data stream. Metrics: the sample mean, whether the
/// 95% z-interval mean ± z_{0.975} sigma/√n (sigma known) covers mu, and the sample quartiles
/// (type-7 quantiles, as R and numpy) of the data. `prepare` computes z_{0.975} once per cell
/// (stored as /calibration/z_critical). generate() draws the standard normals z_i (n and mu are
/// the data factors); analyse() forms x_i = mu + sigma z_i, so cells that differ in sigma only
/// share their draws.

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

/// Per-replicate data: n standard normals (the data stream); analyse() scales them by sigma.
using StandardNormals = std::vector<double>;

class NormalMean final : public runtime::TypedExperiment<double, StandardNormals> {
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

  double prepare(const Cell&, core::RngStream&, runtime::SharedCalibration&) const override {
    return boost::math::quantile(boost::math::normal(), 0.975);
  }

  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell&,
                                                                               const double& z) const override {
    return {{"z_critical", {z}}};
  }

  StandardNormals generate(const Cell& data_cell, core::RngStream& data) const override {
    StandardNormals z(static_cast<std::size_t>(data_cell.get_int("n")));
    for (auto& zi : z) zi = core::standard_normal(data);
    return z;
  }

  void analyse(const Cell& cell, const double& z_critical, const StandardNormals& z, core::RngStream&,
               runtime::MetricWriter& out) const override {
    const double mu = cell.get_double("mu");
    const double sigma = cell.get_double("sigma");
    std::vector<double> x(z.size());
    double sum = 0.0;
    for (std::size_t i = 0; i < z.size(); ++i) {
      x[i] = mu + sigma * z[i];
      sum += x[i];
    }
    const double mean = sum / static_cast<double>(x.size());
    const double half_width = z_critical * sigma / std::sqrt(static_cast<double>(x.size()));
    out.set("sample_mean", mean);
    out.set("covered", std::abs(mean - mu) <= half_width ? 1.0 : 0.0);
    out.set("quantiles", 0, core::type7_quantile(x, 0.25));
    out.set("quantiles", 1, core::type7_quantile(x, 0.5));
    out.set("quantiles", 2, core::type7_quantile(x, 0.75));
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_normal_mean() { return std::make_unique<NormalMean>(); }

}  // namespace dpmu::experiments
