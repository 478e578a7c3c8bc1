#pragma once
// Experiments used only by the engine tests (registered on first use).
#include <atomic>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/core/random.hpp"
#include "dpmu/experiments/data_files.hpp"
#include "dpmu/experiments/registry.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "dpmu/runtime/runner.hpp"

namespace dpmu_test {

/// Set by `test_engine` when `stop_after` replicates have run (for interrupted-run tests).
inline std::atomic<bool> g_stop{false};
inline std::atomic<long> g_calls{0};
inline std::atomic<long> g_prepare_calls{0};
inline std::atomic<long> g_generate_calls{0};

/// Parameters shaped like the paper's (n, p, epsilon, delta, num_subsets, lower/upper, mechanism).
/// Metrics: x (data uniform + noise uniform), v[p] (p data normals), failing replicates throw.
/// The data of one replicate: a uniform u and p normals (data stream).
struct TestEngineData {
  double u = 0.0;
  std::vector<double> v;
};

class TestEngine final : public dpmu::runtime::TypedExperiment<double, TestEngineData> {
 public:
  std::string name() const override { return "test_engine"; }
  std::vector<dpmu::runtime::ParameterSpec> parameters() const override {
    using dpmu::runtime::ParameterType;
    return {
        {.name = "n",
         .type = ParameterType::integer,
         .data_factor = true,
         .default_value = std::int64_t{100},
         .min = 1.0},
        {.name = "p",
         .type = ParameterType::integer,
         .data_factor = true,
         .default_value = std::int64_t{2},
         .min = 1.0},
        {.name = "epsilon", .type = ParameterType::real, .default_value = 1.0, .min = 0.0, .min_inclusive = false},
        {.name = "delta",
         .type = ParameterType::real,
         .default_value = 1e-6,
         .min = 0.0,
         .max = 1.0,
         .min_inclusive = false,
         .max_inclusive = false},
        {.name = "num_subsets", .type = ParameterType::integer, .default_value = std::int64_t{1}, .min = 1.0},
        {.name = "lower", .type = ParameterType::real, .default_value = -1.0},
        {.name = "upper", .type = ParameterType::real, .default_value = 1.0},
        {.name = "mechanism",
         .type = ParameterType::string,
         .default_value = std::string("laplace"),
         .allowed = {"laplace", "gaussian"}},
        {.name = "fail_probability", .type = ParameterType::real, .default_value = 0.0, .min = 0.0, .max = 1.0},
        {.name = "fail_prepare", .type = ParameterType::integer, .default_value = std::int64_t{0}},
        {.name = "stop_after", .type = ParameterType::integer, .default_value = std::int64_t{0}},
        // CPU milliseconds prepare() spins for (the run report's prepare_cpu_seconds); no key at 0.
        {.name = "prepare_cpu_ms",
         .type = ParameterType::real,
         .default_value = 0.0,
         .min = 0.0,
         .keyed_at_default = false},
        // A data factor declared after results existed: at its default it is in no key.
        {.name = "added_later",
         .type = ParameterType::real,
         .data_factor = true,
         .default_value = 0.0,
         .keyed_at_default = false},
    };
  }
  void validate(const dpmu::runtime::Cell& c) const override {
    if (c.get_int("n") <= c.get_int("p") + 1) {
      throw std::invalid_argument("n: must be > p + 1 (n = " + std::to_string(c.get_int("n")) +
                                  ", p = " + std::to_string(c.get_int("p")) + ")");
    }
    if (!(c.get_double("lower") < c.get_double("upper"))) throw std::invalid_argument("lower: must be < upper");
  }
  std::vector<dpmu::runtime::MetricSpec> metrics(const dpmu::runtime::Cell& c) const override {
    // Labelled components where p = 3 ("v:a", ...), unlabelled (default "0") where p = 1.
    std::vector<std::string> labels;
    if (c.get_int("p") == 3) labels = {"v:a", "v, \"b\"", "v§c"};
    return {
        {.name = "x"},
        {.name = "v", .size = static_cast<std::size_t>(c.get_int("p")), .is_vector = true, .component_labels = labels}};
  }
  double prepare(const dpmu::runtime::Cell& c, dpmu::core::RngStream& calibration,
                 dpmu::runtime::SharedCalibration&) const override {
    g_prepare_calls.fetch_add(1);
    if (c.get_int("fail_prepare") != 0) throw std::runtime_error("prepare failed on purpose");
    const double spin = 1e-3 * c.get_double("prepare_cpu_ms");
    if (spin > 0.0) {
      const double until = dpmu::runtime::thread_cpu_seconds() + spin;
      while (dpmu::runtime::thread_cpu_seconds() < until) {
      }
    }
    // A calibration-dependent constant, small against the Monte Carlo error of x.
    return 1e-6 * dpmu::core::uniform_open01(calibration);
  }
  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const dpmu::runtime::Cell& c,
                                                                               const double& offset) const override {
    return {{"offset", std::vector<double>(static_cast<std::size_t>(c.get_int("p")), offset)}};
  }
  TestEngineData generate(const dpmu::runtime::Cell& data_cell, dpmu::core::RngStream& data) const override {
    g_generate_calls.fetch_add(1);
    TestEngineData d;
    d.u = dpmu::core::uniform_open01(data) + data_cell.get_double("added_later");
    for (std::int64_t j = 0; j < data_cell.get_int("p"); ++j) d.v.push_back(dpmu::core::standard_normal(data));
    return d;
  }
  void analyse(const dpmu::runtime::Cell& c, const double& offset, const TestEngineData& d,
               dpmu::core::RngStream& noise, dpmu::runtime::MetricWriter& out) const override {
    const long calls = g_calls.fetch_add(1) + 1;
    const auto stop_after = c.get_int("stop_after");
    if (stop_after > 0 && calls >= stop_after) g_stop.store(true);
    if (d.u < c.get_double("fail_probability")) throw std::runtime_error("replicate failed on purpose");
    out.set("x", d.u + dpmu::core::uniform_open01(noise) + offset);
    out.set("v", d.v);
  }
};

/// Reads one column of a CSV (`data_file`, a path parameter): for data-file identity, resolution
/// and up-front data checks. Metric: mean of the column + a uniform from the noise stream.
class TestData final : public dpmu::runtime::TypedExperiment<double> {
 public:
  std::string name() const override { return "test_data"; }
  std::vector<dpmu::runtime::ParameterSpec> parameters() const override {
    using dpmu::runtime::ParameterType;
    return {
        {.name = "data_file", .type = ParameterType::string, .data_factor = true, .path = true},
        {.name = "column", .type = ParameterType::string, .data_factor = true, .default_value = std::string("x")},
        {.name = "num_subsets", .type = ParameterType::integer, .default_value = std::int64_t{1}, .min = 1.0},
        {.name = "scale", .type = ParameterType::real, .default_value = 1.0},
    };
  }
  std::vector<dpmu::runtime::DataFile> data_files(const dpmu::runtime::Cell& c) const override {
    return {dpmu::experiments::data_file(c, "data_file", c.get_string("data_file"))};
  }
  void check_data(const dpmu::runtime::Cell& c) const override {
    const auto t = table(c);
    dpmu::experiments::check_not_constant(*t, c.get_string("column"), "column", "nothing to average");
    if (static_cast<std::size_t>(c.get_int("num_subsets")) * 2 > t->rows()) {
      throw std::invalid_argument("num_subsets: too many subsets for " + std::to_string(t->rows()) + " rows");
    }
  }
  std::vector<dpmu::runtime::MetricSpec> metrics(const dpmu::runtime::Cell&) const override { return {{.name = "m"}}; }
  double prepare(const dpmu::runtime::Cell& c, dpmu::core::RngStream&,
                 dpmu::runtime::SharedCalibration&) const override {
    const auto& v = table(c)->column(c.get_string("column"));
    double sum = 0;
    for (double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  }
  void analyse(const dpmu::runtime::Cell& c, const double& mean, const dpmu::runtime::Nothing&,
               dpmu::core::RngStream& noise, dpmu::runtime::MetricWriter& out) const override {
    out.set("m", c.get_double("scale") * mean + dpmu::core::uniform_open01(noise));
  }

 private:
  static std::shared_ptr<const dpmu::runtime::DataTable> table(const dpmu::runtime::Cell& c) {
    const auto path = dpmu::experiments::resolve_data_file(c, c.get_string("data_file"));
    try {
      return dpmu::experiments::read_csv_cached(path, {c.get_string("column")});
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("data_file: ") + e.what());
    }
  }
};

/// List parameters: `tags` (string_list, items from a, b, c), `weights` (real_list, items >= 0,
/// a data factor), `indices` (integer_list, required). Metric: sum of weights + a noise uniform.
class TestLists final : public dpmu::runtime::TypedExperiment<dpmu::runtime::Nothing> {
 public:
  std::string name() const override { return "test_lists"; }
  std::vector<dpmu::runtime::ParameterSpec> parameters() const override {
    using dpmu::runtime::ParameterType;
    return {
        {.name = "tags",
         .type = ParameterType::string_list,
         .default_value = std::vector<std::string>{},
         .allowed = {"a", "b", "c"}},
        {.name = "weights",
         .type = ParameterType::real_list,
         .data_factor = true,
         .default_value = std::vector<double>{1.0},
         .min = 0.0},
        {.name = "indices", .type = ParameterType::integer_list},
    };
  }
  std::vector<dpmu::runtime::MetricSpec> metrics(const dpmu::runtime::Cell&) const override {
    return {{.name = "sum"}};
  }
  void analyse(const dpmu::runtime::Cell& c, const dpmu::runtime::Nothing&, const dpmu::runtime::Nothing&,
               dpmu::core::RngStream& noise, dpmu::runtime::MetricWriter& out) const override {
    double sum = 0;
    for (double w : c.get_real_list("weights")) sum += w;
    out.set("sum", sum + dpmu::core::uniform_open01(noise));
  }
};

inline std::atomic<long> g_shared_generate_calls{0};

/// Work shared across data keys (Experiment::generation_key): with share = "p", the data keys of
/// one p (every n) form a generation group. The data of a replicate: u, one uniform of the group's
/// stream (the same for the group), and w, one uniform of a sub-stream keyed by the data key (so a
/// data key's data set does not depend on the other keys of the call). Metrics: u, w, x = w + noise.
/// broken = 1: generate_shared returns one data set too few (an experiment bug the engine reports);
/// a call that includes the data key with n = fail_n throws.
struct SharedData {
  double u = 0.0;
  double w = 0.0;
};
class TestShared final : public dpmu::runtime::TypedExperiment<dpmu::runtime::Nothing, SharedData> {
 public:
  std::string name() const override { return "test_shared"; }
  std::vector<dpmu::runtime::ParameterSpec> parameters() const override {
    using dpmu::runtime::ParameterType;
    return {{.name = "n", .type = ParameterType::integer, .data_factor = true, .min = 1.0},
            {.name = "p", .type = ParameterType::integer, .data_factor = true, .min = 1.0},
            {.name = "share",
             .type = ParameterType::string,
             .data_factor = true,
             .default_value = std::string("none"),
             .allowed = {"none", "p"}},
            {.name = "broken", .type = ParameterType::integer, .data_factor = true, .default_value = std::int64_t{0}},
            {.name = "fail_n", .type = ParameterType::integer, .data_factor = true, .default_value = std::int64_t{0}},
            {.name = "epsilon", .type = ParameterType::real, .default_value = 1.0}};
  }
  std::vector<dpmu::runtime::MetricSpec> metrics(const dpmu::runtime::Cell&) const override {
    return {{.name = "u"}, {.name = "w"}, {.name = "x"}};
  }
  std::string generation_key(const dpmu::runtime::Cell& d) const override {
    if (d.get_string("share") == "none") return {};
    return "p=" + std::to_string(d.get_int("p")) + ";broken=" + std::to_string(d.get_int("broken"));
  }
  SharedData generate(const dpmu::runtime::Cell&, dpmu::core::RngStream& data) const override {
    return {dpmu::core::uniform_open01(data), dpmu::core::uniform_open01(data)};
  }
  std::vector<SharedData> generate_shared(std::span<const dpmu::runtime::Cell> cells,
                                          dpmu::core::RngStream& data) const override {
    g_shared_generate_calls.fetch_add(1);
    for (const auto& c : cells) {
      if (c.get_int("n") == c.get_int("fail_n")) throw std::runtime_error("n = fail_n fails on purpose");
    }
    const double u = dpmu::core::uniform_open01(data);
    const std::uint64_t key = data();
    std::vector<SharedData> out;
    for (const auto& c : cells) {
      dpmu::core::RngStream own(key, c.data_id(), 0, dpmu::core::StreamPurpose::data);
      out.push_back({u, dpmu::core::uniform_open01(own)});
    }
    if (cells.front().get_int("broken") != 0) out.pop_back();
    return out;
  }
  void analyse(const dpmu::runtime::Cell&, const dpmu::runtime::Nothing&, const SharedData& d,
               dpmu::core::RngStream& noise, dpmu::runtime::MetricWriter& out) const override {
    out.set("u", d.u);
    out.set("w", d.w);
    out.set("x", d.w + dpmu::core::uniform_open01(noise));
  }
};

inline void register_test_experiments() {
  static const bool once = [] {
    dpmu::experiments::register_builtin_experiments();
    dpmu::runtime::register_experiment(std::make_unique<TestEngine>());
    dpmu::runtime::register_experiment(std::make_unique<TestData>());
    dpmu::runtime::register_experiment(std::make_unique<TestLists>());
    dpmu::runtime::register_experiment(std::make_unique<TestShared>());
    return true;
  }();
  (void)once;
}

}  // namespace dpmu_test
