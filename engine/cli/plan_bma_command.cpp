// `dpmu plan-bma`: what a private model-averaging release would deliver, simulated from public
// quantities before any budget is spent (docs/bma.md "Planning a release"). The simulation is the
// experiment `ssp_calibration` (docs/methods.md §5.11): one runtime cell built from the options, its
// replicates run exactly as `dpmu run` runs them, and the per-replicate metrics averaged with their
// Monte Carlo standard errors. No data is read and no ledger is touched.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "commands.hpp"
#include "dpmu/experiments/simulation_ssp.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "dpmu/runtime/runner.hpp"
#include "dpmu/runtime/streams.hpp"

namespace dpmu::cli {

namespace {

constexpr const char* kExperiment = "ssp_calibration";

struct PlanBmaOptions {
  std::int64_t n = 0;
  std::int64_t p = 0;
  std::int64_t true_model_size = 0;
  double signal_z = 7.0;
  std::string mechanism = "laplace";
  double epsilon = 0.0;
  std::string prior = "g_prior";
  std::string model_prior = "beta-binomial:1,1";
  std::int64_t noise_aware_draws = 100;
  std::uint64_t replicates = 200;
  std::uint64_t seed = 1;
};

/// The command-line option of an experiment parameter: "true_model_size" -> "--true-model-size".
std::string option_of(std::string name) {
  for (char& c : name) {
    if (c == '_') c = '-';
  }
  return "--" + name;
}

/// The experiment's own message "name: ..." with the parameter named as its option.
[[noreturn]] void rethrow_named(const std::exception& e) {
  std::string what = e.what();
  const auto colon = what.find(':');
  if (colon != std::string::npos && what.find(' ') > colon) {
    std::string name = what.substr(0, colon);
    // the experiment reports both priors under "prior"; the model prior's parser names itself
    if (name == "prior" && what.find("parse_model_prior") != std::string::npos) name = "model_prior";
    what = option_of(name) + what.substr(colon);
  }
  throw std::invalid_argument(what);
}

/// Every value against the experiment's declared range or allowed strings, then its own validate().
void check_cell(const runtime::Experiment& e, const runtime::Cell& cell) {
  for (const auto& spec : e.parameters()) {
    const runtime::ParameterValue& v = cell.get(spec.name);
    if (const auto* s = std::get_if<std::string>(&v)) {
      if (!spec.allowed.empty() && std::find(spec.allowed.begin(), spec.allowed.end(), *s) == spec.allowed.end()) {
        throw std::invalid_argument(option_of(spec.name) + ": '" + *s + "' is not allowed");
      }
      continue;
    }
    const double x = cell.get_double(spec.name);
    const bool low_ok = !spec.min || (spec.min_inclusive ? x >= *spec.min : x > *spec.min);
    const bool high_ok = !spec.max || (spec.max_inclusive ? x <= *spec.max : x < *spec.max);
    if (!std::isfinite(x) || !low_ok || !high_ok) {
      std::string req;
      if (spec.min) req += std::string(spec.min_inclusive ? ">= " : "> ") + runtime::format_parameter_value(*spec.min);
      if (spec.max) {
        req += std::string(req.empty() ? "" : " and ") + (spec.max_inclusive ? "<= " : "< ") +
               runtime::format_parameter_value(*spec.max);
      }
      throw std::invalid_argument(option_of(spec.name) + ": value " + runtime::format_parameter_value(v) +
                                  " is out of range; it must be finite" + (req.empty() ? "" : " and " + req));
    }
  }
  try {
    e.validate(cell);
  } catch (const std::invalid_argument& x) {
    rethrow_named(x);
  }
}

/// {mean, mc_se} (SE = sd / sqrt(count)) of the finite values of each of `size` columns from `offset`.
nlohmann::json summary_json(const std::vector<std::vector<double>>& rows, std::size_t offset, std::size_t size,
                            bool is_vector) {
  nlohmann::json mean = nlohmann::json::array(), se = nlohmann::json::array();
  for (std::size_t k = 0; k < size; ++k) {
    double sum = 0.0, sum2 = 0.0;
    std::size_t count = 0;
    for (const auto& row : rows) {
      const double x = row[offset + k];
      if (!std::isfinite(x)) continue;
      sum += x;
      ++count;
    }
    const double m = count > 0 ? sum / static_cast<double>(count) : std::nan("");
    for (const auto& row : rows) {
      const double x = row[offset + k];
      if (std::isfinite(x)) sum2 += (x - m) * (x - m);
    }
    const double s =
        count > 1 ? std::sqrt(sum2 / static_cast<double>(count - 1) / static_cast<double>(count)) : std::nan("");
    mean.push_back(std::isfinite(m) ? nlohmann::json(m) : nlohmann::json(nullptr));
    se.push_back(std::isfinite(s) ? nlohmann::json(s) : nlohmann::json(nullptr));
  }
  if (!is_vector) return {{"mean", mean[0]}, {"mc_se", se[0]}};
  return {{"mean", mean}, {"mc_se", se}};
}

void run_plan_bma(const PlanBmaOptions& o) {
  if (o.replicates < 10 || o.replicates > 100000) {
    throw std::invalid_argument("--replicates: must be >= 10 and <= 100000 (got " + std::to_string(o.replicates) + ")");
  }
  if (o.epsilon > 0.0 && o.epsilon < 1e-12) {
    throw std::invalid_argument(
        "--epsilon: must be at least 1e-12 (a smaller epsilon adds noise more than 10^12 "
        "times the sensitivity; no statistic survives)");
  }
  if (o.n > (std::int64_t{1} << 31)) {
    throw std::invalid_argument("--n: at most 2^31 rows can be simulated (got " + std::to_string(o.n) + ")");
  }
  const runtime::Experiment& e = runtime::find_experiment(kExperiment);
  std::vector<std::pair<std::string, runtime::ParameterValue>> values = {{"n", o.n},
                                                                         {"p", o.p},
                                                                         {"true_model_size", o.true_model_size},
                                                                         {"signal_z", o.signal_z},
                                                                         {"mechanism", o.mechanism},
                                                                         {"epsilon", o.epsilon},
                                                                         {"prior", o.prior},
                                                                         {"model_prior", o.model_prior},
                                                                         {"noise_aware_draws", o.noise_aware_draws}};
  std::vector<std::string> data_factors;
  for (const auto& spec : e.parameters()) {
    if (spec.data_factor) data_factors.push_back(spec.name);
    bool given = false;
    for (const auto& v : values) given = given || v.first == spec.name;
    if (!given && spec.default_value) values.emplace_back(spec.name, *spec.default_value);
  }
  const runtime::Cell cell(std::move(values), data_factors);
  check_cell(e, cell);

  set_activity("simulating the release (plan-bma)");
  auto calibration = runtime::calibration_stream(o.seed, cell);
  runtime::SharedCalibration shared;
  std::shared_ptr<const void> prepared;
  try {
    prepared = e.prepare_erased(cell, calibration, shared);
  } catch (const std::invalid_argument& x) {
    rethrow_named(x);
  } catch (const std::domain_error& x) {
    rethrow_named(x);
  }
  const std::vector<runtime::MetricSpec> metrics = e.metrics(cell);
  std::size_t width = 0;
  for (const auto& m : metrics) width += m.size;
  const runtime::Cell data_cell = cell.data_cell();
  std::vector<std::vector<double>> rows;
  rows.reserve(o.replicates);
  for (std::uint64_t r = 0; r < o.replicates; ++r) {
    std::vector<double> out(width, std::numeric_limits<double>::quiet_NaN());
    runtime::CellReplicate one;
    one.cell = &cell;
    one.prepared = prepared.get();
    one.metrics = metrics;
    one.out = out;
    runtime::run_one_replicate(e, data_cell, o.seed, r, std::span<runtime::CellReplicate>(&one, 1));
    if (!one.failure_stage.empty()) {
      throw std::runtime_error("replicate " + std::to_string(r) + " failed (" + one.failure_stage +
                               "): " + one.failure_message);
    }
    rows.push_back(std::move(out));
  }

  const auto design =
      experiments::simulation_design(static_cast<int>(o.p), static_cast<int>(o.true_model_size), o.signal_z);
  nlohmann::json beta = nlohmann::json::array();
  for (int j = 0; j < design.p; ++j) beta.push_back(j < design.true_model_size ? design.coefficient : 0.0);
  nlohmann::json result;
  result["command"] = "plan-bma";
  result["private"] = false;
  result["simulation"] = {{"experiment", kExperiment},
                          {"replicates", o.replicates},
                          {"seed", o.seed},
                          {"note", "public quantities only: no data read, no ledger, no budget spent"}};
  result["settings"] = {{"n", o.n},
                        {"p", o.p},
                        {"mechanism", o.mechanism},
                        {"epsilon", o.epsilon},
                        {"delta", o.mechanism == "wishart" ? 1.0 / static_cast<double>(o.n) : 0.0},
                        {"prior", o.prior},
                        {"model_prior", o.model_prior},
                        {"noise_aware_draws", o.noise_aware_draws},
                        {"predictor_bounds", {design.lower, design.upper}},
                        {"response_bounds", {design.lower, design.upper}}};
  result["truth"] = {
      {"true_model_size", o.true_model_size}, {"signal_z", o.signal_z}, {"beta", beta}, {"sigma", design.sigma}};
  std::size_t offset = 0;
  for (const auto& m : metrics) {
    nlohmann::json s = summary_json(rows, offset, m.size, m.is_vector);
    offset += m.size;
    std::string group = "noise_aware_diagnostics", key = m.name;
    for (const std::string method : {"plug_in", "noise_aware"}) {
      if (m.name.rfind(method + "_", 0) == 0) {
        group = method;
        key = m.name.substr(method.size() + 1);
      }
    }
    if (key.rfind("cover", 0) == 0) key = "coverage" + key.substr(5);
    result[group][key] = std::move(s);
  }
  std::cout << result.dump(2) << "\n";
}

}  // namespace

void add_plan_bma_command(CLI::App& app) {
  auto o = std::make_shared<PlanBmaOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan-bma",
      "Before a private model-averaging release: simulate, from public quantities only, the coverage of the "
      "credible intervals of each beta_j (plug-in and noise-aware), the Brier score of the PIPs, the mean PIPs and "
      "P(true model), with Monte Carlo SEs (experiment ssp_calibration; docs/bma.md). Reads no data, touches no "
      "ledger. Prints JSON.");
  cmd->add_option("--n", o->n, "Number of rows (>= p + 3)")->required();
  cmd->add_option("--p", o->p, "Number of candidate predictors (1 to 12)")->required();
  cmd->add_option("--true-model-size", o->true_model_size,
                  "|T|: the first |T| predictors have coefficient b = 1/(z sqrt|T|), the others 0")
      ->capture_default_str();
  cmd->add_option("--signal-z", o->signal_z, "z of docs/methods.md A6 (sigma = sqrt(8/3)/z, SNR 1/2)")
      ->capture_default_str();
  cmd->add_option("--mechanism", o->mechanism, "laplace | wishart (wishart: delta = 1/n, epsilon < 1)")
      ->capture_default_str();
  cmd->add_option("--epsilon", o->epsilon, "Privacy parameter epsilon > 0")->required();
  cmd->add_option("--prior", o->prior, "Coefficient prior (as in `dpmu run`'s ssp_calibration)")->capture_default_str();
  cmd->add_option("--model-prior", o->model_prior, "Prior over models")->capture_default_str();
  cmd->add_option("--noise-aware-draws", o->noise_aware_draws, "Accepted draws of G per release (noise-aware)")
      ->capture_default_str();
  cmd->add_option("--replicates", o->replicates, "Simulated releases (10 to 100000)")
      ->capture_default_str()
      ->check(unsigned_integer());
  cmd->add_option("--seed", o->seed, "Seed of the simulation")->capture_default_str()->check(unsigned_integer());
  cmd->callback([o] {
    if (o->mechanism != "laplace" && o->mechanism != "wishart") {
      throw std::invalid_argument("--mechanism: '" + o->mechanism + "' is not laplace or wishart");
    }
    run_plan_bma(*o);
  });
}

}  // namespace dpmu::cli
