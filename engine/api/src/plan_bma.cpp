// api::plan_bma: what a private model-averaging release would deliver, simulated from public
// quantities before any budget is spent (docs/bma.md "Planning a release"). The simulation is the
// experiment `ssp_calibration` (docs/methods.md §5.11): one cell built from the request, its
// replicates run from the streams `dpmu run` uses (runtime/streams.hpp: data keyed by the data
// factors, noise by the cell), and the per-replicate metrics averaged with their Monte Carlo
// standard errors. No data is read and no ledger is touched.
#include "dpmu/api/plan_bma.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "dpmu/api/bma_pipeline.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/model_space.hpp"
#include "dpmu/experiments/simulation_ssp.hpp"
#include "dpmu/experiments/ssp_calibration.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "dpmu/runtime/streams.hpp"

namespace dpmu::api {

namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kExperiment = "ssp_calibration";

/// The command-line option of an experiment parameter: "true_model_size" -> "--true-model-size".
std::string option_of(std::string name) {
  for (char& c : name) {
    if (c == '_') c = '-';
  }
  return "--" + name;
}

/// The option behind a message of a core function that plan-bma reaches through the experiment
/// (its first word is the function, not a parameter): "" when there is none to name.
std::string option_of_core_message(const std::string& function, const std::string& rest) {
  const auto argument = [&](const char* name) { return rest.rfind(std::string(" ") + name + " ", 0) == 0; };
  if (function == "gram_diagonal_bounds") return "--bounds";  // n (u - l)^2 / 4 of each column
  if (function == "check_ssp_mechanism" || function == "ssp_l1_sensitivity" || function == "SspRelease") {
    if (argument("epsilon")) return "--epsilon";
    if (argument("delta")) return "--delta";
    return "--bounds";  // lower, upper, or the sensitivities computed from the bounds
  }
  return "";
}

/// The experiment's own message "name: ..." with the parameter named as its option; a core
/// function's message ("check_ssp_mechanism: noise_l1_sensitivity is inf, ...") names the option
/// it comes from, never the function as if it were an option (before: --check-ssp-mechanism).
[[noreturn]] void rethrow_named(const runtime::Experiment& e, const std::exception& x) {
  std::string what = x.what();
  const auto colon = what.find(':');
  if (colon != std::string::npos && what.find(' ') > colon) {
    std::string name = what.substr(0, colon);
    const std::string rest = what.substr(colon + 1);
    // the experiment reports both priors under "prior"; the model prior's parser names itself
    if (name == "prior" && what.find("parse_model_prior") != std::string::npos) name = "model_prior";
    const auto& specs = e.parameters();
    const bool parameter =
        std::any_of(specs.begin(), specs.end(), [&](const runtime::ParameterSpec& s) { return s.name == name; });
    if (parameter) {
      what = option_of(name) + ":" + rest;
    } else if (const std::string option = option_of_core_message(name, rest); !option.empty()) {
      what = option + ":" + rest +
             (option == "--bounds"
                  ? " (computed from the bounds: their squares, times n or the sensitivity's factors, must be "
                    "finite and > 0 in double precision; rescale the data and the bounds)"
                  : "");
    } else {
      what = "the planned release cannot be simulated: " + what;
    }
  }
  throw std::invalid_argument(what);
}

/// Every scalar value against the experiment's declared range or allowed strings, then its own
/// validate() (which checks the lists: coefficients and bounds).
void check_cell(const runtime::Experiment& e, const runtime::Cell& cell) {
  for (const auto& spec : e.parameters()) {
    if (runtime::is_list_type(spec.type)) continue;
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
    rethrow_named(e, x);
  }
}

/// {mean, mc_se} (SE = sd / sqrt(count)) of the finite values of each of `size` columns from `offset`.
Json summary_json(const std::vector<std::vector<double>>& rows, std::size_t offset, std::size_t size, bool is_vector) {
  Json mean = Json::array(), se = Json::array();
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
    mean.push_back(std::isfinite(m) ? Json(m) : Json(nullptr));
    se.push_back(std::isfinite(s) ? Json(s) : Json(nullptr));
  }
  if (!is_vector) return {{"mean", mean[0]}, {"mc_se", se[0]}};
  return {{"mean", mean}, {"mc_se", se}};
}

std::string number(double x) { return runtime::format_parameter_value(x); }

/// A design whose simulated data overflow a double in every replicate is refused up front, naming
/// the options that set it (before: "replicate 0 failed: noisy_gram_matrix: gram(2, 2) is inf").
/// Predictor j ~ U(l_j, u_j) (width w_j; the built-in design: (-2, 2)) and the error N(0, sigma^2)
/// make the centred sums of squares about n w_j^2 / 12 and n (sum_j beta_j^2 w_j^2 / 12 + sigma^2);
/// the Gram matrix is refused when these exceed a quarter of the largest double (the sampler's
/// partial sums and the noise need the rest). Magnitudes are compared on the log scale.
void check_design_overflow(const PlanBmaRequest& o, const runtime::Cell& cell, std::int64_t p) {
  const experiments::SimulationDesign builtin = experiments::simulation_design(
      static_cast<int>(p), static_cast<int>(cell.get_int("true_model_size")), cell.get_double("signal_z"));
  const double sigma = o.sigma.value_or(builtin.sigma);
  const double log_limit = std::log(std::numeric_limits<double>::max() / 4.0);
  const double log_n = std::log(static_cast<double>(o.n));
  // log of the response's standard deviation, as log(m) + log(sqrt(sum (a_k / m)^2)) with m the
  // largest term, so that terms beyond the double range still compare
  std::vector<double> terms{sigma};
  for (std::int64_t j = 0; j < p; ++j) {
    const double beta = o.coefficients ? (*o.coefficients)[static_cast<std::size_t>(j)]
                                       : (j < builtin.true_model_size ? builtin.coefficient : 0.0);
    double width = builtin.upper - builtin.lower;
    if (o.bounds) {
      const std::size_t at = o.bounds->size() == 2 ? 0 : 2 * static_cast<std::size_t>(j);
      width = (*o.bounds)[at + 1] - (*o.bounds)[at];
    }
    if (!std::isfinite(width) || log_n + 2.0 * std::log(width) - std::log(12.0) > log_limit) {
      throw std::invalid_argument(
          "--bounds: predictor " + std::to_string(j + 1) + " ranges over a width of " + number(width) +
          ", so its sum of squares over n = " + std::to_string(o.n) +
          " rows overflows a double in every replicate; rescale the data and the bounds (model averaging is "
          "scale-equivariant)");
    }
    terms.push_back(std::abs(beta) * width / std::sqrt(12.0));
    if (!std::isfinite(terms.back())) terms.back() = std::numeric_limits<double>::infinity();
  }
  const double largest = *std::max_element(terms.begin(), terms.end());
  double log_sd = std::log(largest);
  if (std::isfinite(largest) && largest > 0.0) {
    double sum = 0.0;
    for (const double t : terms) sum += (t / largest) * (t / largest);
    log_sd += 0.5 * std::log(sum);
  }
  if (!(log_n + 2.0 * log_sd <= log_limit)) {
    std::string given;
    for (const auto& [option, set] : {std::pair<const char*, bool>{"--coefficients", o.coefficients.has_value()},
                                      std::pair<const char*, bool>{"--sigma", o.sigma.has_value()},
                                      std::pair<const char*, bool>{"--signal-z", o.signal_z.has_value()},
                                      std::pair<const char*, bool>{"--bounds", o.bounds.has_value()}}) {
      if (set) given += std::string(given.empty() ? "" : ", ") + option;
    }
    const std::string size =
        std::isfinite(log_sd) && log_sd < 700.0 ? number(std::exp(log_sd)) : "e^" + number(std::round(log_sd));
    throw std::invalid_argument(
        (given.empty() ? std::string("--signal-z") : given) + ": the simulated response has a standard deviation of " +
        "about " + size +
        " (sqrt(sum beta_j^2 w_j^2 / 12 + sigma^2)), so its sum of squares over n = " + std::to_string(o.n) +
        " rows overflows a double in every replicate; rescale the coefficients and sigma (model averaging is "
        "scale-equivariant)");
  }
}

/// The checks of the request that the experiment's declaration does not make, each naming the
/// option and what to do; returns p.
std::int64_t check_request(const PlanBmaRequest& o) {
  if (o.replicates < 10 || o.replicates > 100000) {
    throw std::invalid_argument("--replicates: must be >= 10 and <= 100000 (got " + std::to_string(o.replicates) + ")");
  }
  if (o.mechanism != "laplace" && o.mechanism != "wishart") {
    throw std::invalid_argument("--mechanism: '" + o.mechanism + "' is not laplace or wishart");
  }
  if (o.uncertainty != "both" && o.uncertainty != "plug-in" && o.uncertainty != "noise-aware") {
    throw std::invalid_argument("--uncertainty: '" + o.uncertainty + "' is not both, plug-in or noise-aware");
  }
  if (o.uncertainty != "plug-in") {
    check_noise_aware_draws(o.noise_aware_draws, "--noise-aware-draws");
    core::PriorKind k;
    try {
      k = core::parse_coefficient_prior(o.prior, 1000.0).prior.kind;
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("--prior: ") + e.what());
    }
    if (k != core::PriorKind::g_prior && k != core::PriorKind::zellner_siow) {
      throw std::invalid_argument("--prior " + o.prior +
                                  ": the noise-aware analysis (data augmentation) takes zellner-siow or g-prior; give "
                                  "one of them, or --uncertainty plug-in");
    }
  }
  if (!(o.epsilon > 0.0) || !std::isfinite(o.epsilon)) {
    throw std::invalid_argument("--epsilon: value " + number(o.epsilon) +
                                " is out of range; give a finite epsilon > 0");
  }
  if (o.epsilon < 1e-12) {
    throw std::invalid_argument(
        "--epsilon: must be at least 1e-12 (a smaller epsilon adds noise more than 10^12 "
        "times the sensitivity; no statistic survives)");
  }
  if (o.n > (std::int64_t{1} << 31)) {
    throw std::invalid_argument("--n: at most 2^31 rows can be simulated (got " + std::to_string(o.n) + ")");
  }
  if (o.delta) {
    if (o.mechanism != "wishart") {
      throw std::invalid_argument(
          "--delta: only the wishart mechanism has a delta (laplace is pure epsilon-DP); drop "
          "--delta or give --mechanism wishart");
    }
    if (!(*o.delta > 0.0 && *o.delta < 1.0)) {
      throw std::invalid_argument("--delta: value " + number(*o.delta) + " is out of range; give 0 < delta < 1");
    }
  }
  if (o.sigma && !(std::isfinite(*o.sigma) && *o.sigma > 0.0)) {
    throw std::invalid_argument("--sigma: value " + number(*o.sigma) +
                                " is out of range; give the assumed error SD as a finite number > 0");
  }
  std::int64_t p = o.p.value_or(0);
  if (o.coefficients) {
    const std::vector<double>& beta = *o.coefficients;
    if (beta.empty()) {
      throw std::invalid_argument("--coefficients: empty; give the assumed beta_1,...,beta_p (one per predictor)");
    }
    if (beta.size() > 12) {
      throw std::invalid_argument("--coefficients: " + std::to_string(beta.size()) +
                                  " given; at most 12 predictors can be planned (give 1 to 12 coefficients)");
    }
    if (o.p && *o.p != static_cast<std::int64_t>(beta.size())) {
      throw std::invalid_argument("--coefficients: " + std::to_string(beta.size()) + " given but --p is " +
                                  std::to_string(*o.p) +
                                  "; give one coefficient per predictor (or drop --p: "
                                  "the length of --coefficients sets p)");
    }
    for (std::size_t j = 0; j < beta.size(); ++j) {
      if (!std::isfinite(beta[j])) {
        throw std::invalid_argument("--coefficients: entry " + std::to_string(j + 1) + " is " + number(beta[j]) +
                                    "; every coefficient must be a finite number");
      }
    }
    if (o.true_model_size) {
      throw std::invalid_argument(
          "--true-model-size: set by --coefficients (its non-zero entries are the true model); drop it");
    }
    if (o.signal_z) {
      throw std::invalid_argument(
          "--signal-z: describes the built-in design only; with --coefficients give the error SD as --sigma");
    }
    p = static_cast<std::int64_t>(beta.size());
  } else if (!o.p) {
    throw std::invalid_argument("--p: give the number of predictors, or the assumed coefficients (--coefficients)");
  }
  if (o.bounds) {
    const std::vector<double>& b = *o.bounds;
    const std::size_t d = static_cast<std::size_t>(std::max<std::int64_t>(p, 0)) + 1;
    if (b.empty()) {
      throw std::invalid_argument("--bounds: empty; give l,u (public bounds of every column) or l1,u1,...,l" +
                                  std::to_string(d) + ",u" + std::to_string(d) +
                                  " (predictors in order, response last)");
    }
    if (b.size() != 2 && b.size() != 2 * d) {
      throw std::invalid_argument("--bounds: " + std::to_string(b.size()) +
                                  " numbers given; give l,u (every column) or " + std::to_string(2 * d) +
                                  " numbers l1,u1,...,l" + std::to_string(d) + ",u" + std::to_string(d) +
                                  " (predictors in order, response last)");
    }
    for (std::size_t j = 0; j < b.size(); j += 2) {
      if (!(std::isfinite(b[j]) && std::isfinite(b[j + 1]) && b[j] < b[j + 1])) {
        const std::string col = b.size() == 2 ? "every column" : "column " + std::to_string(j / 2 + 1);
        throw std::invalid_argument("--bounds for " + col + ": need finite l < u, got " + number(b[j]) + "," +
                                    number(b[j + 1]));
      }
    }
  }
  return p;
}

}  // namespace

nlohmann::ordered_json plan_bma(const PlanBmaRequest& request) {
  const std::int64_t p = check_request(request);
  // The model prior in its canonical spelling: it is a parameter of the simulated cells, so it enters
  // their keys and random streams; "beta-binomial(1,1)" (R's spelling) and "beta-binomial:1,1" (the
  // command's) are one prior and must give the same simulation (they gave different numbers before).
  // An unknown spelling is left as given: the experiment's check below refuses it naming --model-prior.
  PlanBmaRequest o = request;
  try {
    o.model_prior = core::to_string(core::parse_model_prior(o.model_prior));
  } catch (const std::exception&) {
  }
  std::int64_t true_model_size = o.true_model_size.value_or(0);
  if (o.coefficients) {
    true_model_size = 0;
    for (const double b : *o.coefficients) true_model_size += b != 0.0 ? 1 : 0;
  }
  const std::unique_ptr<runtime::Experiment> experiment = experiments::make_ssp_calibration();
  const runtime::Experiment& e = *experiment;
  std::vector<std::pair<std::string, runtime::ParameterValue>> values = {
      {"n", o.n},
      {"p", p},
      {"true_model_size", true_model_size},
      {"mechanism", o.mechanism},
      {"epsilon", o.epsilon},
      {"prior", o.prior},
      {"model_prior", o.model_prior},
      {"noise_aware_draws", o.noise_aware_draws},
      // the releases' noise-aware analysis
      {"augmented_draws", o.uncertainty == "plug-in" ? std::int64_t{0} : o.noise_aware_draws}};
  // What is not given takes the declaration's default (the built-in design of docs/methods.md A6).
  if (o.signal_z) values.emplace_back("signal_z", *o.signal_z);
  if (o.coefficients) values.emplace_back("coefficients", *o.coefficients);
  if (o.sigma) values.emplace_back("sigma", *o.sigma);
  if (o.bounds) values.emplace_back("bounds", *o.bounds);
  if (o.delta) values.emplace_back("delta", *o.delta);
  std::vector<std::string> data_factors;
  for (const auto& spec : e.parameters()) {
    if (spec.data_factor) data_factors.push_back(spec.name);
    bool given = false;
    for (const auto& v : values) given = given || v.first == spec.name;
    if (!given && spec.default_value) values.emplace_back(spec.name, *spec.default_value);
  }
  const runtime::Cell cell(std::move(values), data_factors, runtime::unkeyed_defaults(e.parameters()));
  check_cell(e, cell);
  check_design_overflow(o, cell, p);

  auto calibration = runtime::calibration_stream(o.seed, cell);
  runtime::SharedCalibration shared;
  std::shared_ptr<const void> prepared;
  try {
    prepared = e.prepare_erased(cell, calibration, shared);
  } catch (const std::invalid_argument& x) {
    rethrow_named(e, x);
  } catch (const std::domain_error& x) {
    rethrow_named(e, x);
  }
  const std::vector<runtime::MetricSpec> metrics = e.metrics(cell);
  std::size_t width = 0;
  for (const auto& m : metrics) width += m.size;
  const runtime::Cell data_cell = cell.data_cell();
  std::vector<std::vector<double>> rows;
  rows.reserve(o.replicates);
  for (std::uint64_t r = 0; r < o.replicates; ++r) {
    core::report_progress(o.progress, r, o.replicates, "plan-replicates");  // outside the try: may stop it
    // One replicate as runtime::run_one_replicate runs it: the data from the data stream of the
    // data cell, the release and both analyses from the noise stream of the cell.
    std::vector<double> out(width, std::numeric_limits<double>::quiet_NaN());
    try {
      core::RngStream data = runtime::data_stream(o.seed, data_cell, r);
      const std::shared_ptr<const void> sim = e.generate_erased(data_cell, data);
      core::RngStream noise = runtime::noise_stream(o.seed, cell, r);
      runtime::MetricWriter writer(metrics, out);
      e.analyse_erased(cell, prepared.get(), sim.get(), noise, writer);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& x) {
      throw std::runtime_error("the simulation of this design failed in replicate " + std::to_string(r) + " of " +
                               std::to_string(o.replicates) + ": " + x.what() +
                               " (check --coefficients, --sigma, --bounds and --epsilon)");
    }
    rows.push_back(std::move(out));
  }

  // The assumed truth and the public settings, as the experiment reads them.
  const experiments::SimulationDesign builtin = experiments::simulation_design(
      static_cast<int>(p), static_cast<int>(true_model_size), cell.get_double("signal_z"));
  Json beta = Json::array(), truth_model = Json::array();
  for (int j = 0; j < static_cast<int>(p); ++j) {
    const double b = o.coefficients ? (*o.coefficients)[static_cast<std::size_t>(j)]
                                    : (j < builtin.true_model_size ? builtin.coefficient : 0.0);
    beta.push_back(b);
    if (b != 0.0) truth_model.push_back(j + 1);
  }
  Json bounds = Json::array();
  for (std::int64_t j = 0; j <= p; ++j) {
    if (!o.bounds) {
      bounds.push_back({builtin.lower, builtin.upper});
    } else {
      const std::size_t at = o.bounds->size() == 2 ? 0 : 2 * static_cast<std::size_t>(j);
      bounds.push_back({(*o.bounds)[at], (*o.bounds)[at + 1]});
    }
  }
  const bool wishart = o.mechanism == "wishart";
  Json result;
  result["command"] = "plan-bma";
  result["private"] = false;
  result["simulation"] = {{"experiment", kExperiment},
                          {"replicates", o.replicates},
                          {"seed", o.seed},
                          {"note", "a simulation from public settings only: no data read, no ledger, no budget spent"}};
  result["settings"] = {
      {"n", o.n},
      {"p", p},
      {"mechanism", o.mechanism},
      {"epsilon", o.epsilon},
      {"delta", wishart ? o.delta.value_or(1.0 / static_cast<double>(o.n)) : 0.0},
      {"prior", o.prior},
      {"model_prior", o.model_prior},
      {"noise_aware_draws", o.noise_aware_draws},
      {"uncertainty", o.uncertainty},
      {"bounds", bounds},
      {"bounds_refer_to",
       o.bounds ? "--bounds: predictor j ~ Uniform(l_j, u_j); the noise of `dpmu bma --bounds` (core::SspRelease)"
                : "built-in: every column in (-2, 2), predictors ~ Uniform(-2, 2); the paper's reading of the "
                  "bounds (docs/methods.md A6)"}};
  result["truth"] = {{"beta", beta},
                     {"sigma", o.sigma.value_or(builtin.sigma)},
                     {"true_model", truth_model},
                     {"true_model_size", true_model_size},
                     {"design", o.coefficients ? "--coefficients" : "built-in (docs/methods.md A6)"}};
  if (!o.coefficients) result["truth"]["signal_z"] = cell.get_double("signal_z");
  std::size_t offset = 0;
  for (const auto& m : metrics) {
    Json s = summary_json(rows, offset, m.size, m.is_vector);
    if (m.is_vector && m.component_labels.size() == m.size) s["labels"] = m.component_labels;
    offset += m.size;
    // "noise_aware" reports the analysis `dpmu bma` runs by default, the data-augmentation sampler
    // (the study's augmented_* metrics); the rejection sampler's metrics are not shown.
    std::string group, key = m.name;
    if (m.name.rfind("plug_in_", 0) == 0) {
      group = "plug_in";
      key = m.name.substr(8);
    } else if (m.name == "augmented_converged" || m.name == "augmented_max_rhat" || m.name == "augmented_min_ess") {
      group = "noise_aware_diagnostics";
      key = m.name.substr(10);
    } else if (m.name.rfind("augmented_", 0) == 0) {
      group = "noise_aware";
      key = m.name.substr(10);
    } else {
      continue;  // the rejection sampler's noise_aware_* and its diagnostics
    }
    if (group == "plug_in" && o.uncertainty == "noise-aware") continue;
    if (group != "plug_in" && o.uncertainty == "plug-in") continue;
    if (key.rfind("cover", 0) == 0) key = "coverage" + key.substr(5);
    result[group][key] = std::move(s);
  }
  return result;
}

}  // namespace dpmu::api
