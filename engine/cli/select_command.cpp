// `dpmu select`: differentially private model selection of Lei, Charest, Slavković, Smith &
// Fienberg (2018) — Algorithm 1 (noisy penalised constrained least squares, ε-DP) and an
// Algorithm-2-like placeholder ((2ε, δ)-DP); METHODS.md §6. Prints JSON on stdout.
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/lcssf.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/runtime/data_table.hpp"
#include "dpmu/runtime/secure_random.hpp"

namespace dpmu::cli {

namespace {

using Json = nlohmann::ordered_json;

struct SelectOptions {
  std::string data;
  std::string response;
  std::vector<std::string> predictors;
  int algorithm = 1;
  std::optional<double> epsilon;
  std::optional<double> delta;
  std::optional<double> radius;
  std::optional<double> penalty;
  std::string data_bound;
  std::string lcssf_delta = "r2_1pR2";
  double objective_scale = 0.5;
  double noise_factor = 2.0;
  double variance_floor = 0.01;
  std::string alg2_selection = "exponential_mechanism";
  bool standardize = false;
  std::optional<std::uint64_t> seed;
};

Json model_json(core::ModelMask m, const std::vector<std::string>& names) {
  Json out;
  out["mask"] = m;
  Json preds = Json::array();
  for (std::size_t j = 0; j < names.size(); ++j) {
    if ((m >> j) & 1U) preds.push_back(names[j]);
  }
  out["predictors"] = preds;
  return out;
}

double parse_number(const std::string& option, const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument("trailing characters");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument(option + " '" + text + "': expected a number or 'auto'");
  }
}

void run_select(const SelectOptions& o) {
  static const char* fn = "dpmu select";
  if (o.algorithm != 1 && o.algorithm != 2) {
    throw std::invalid_argument("--algorithm is " + std::to_string(o.algorithm) + ", but must be 1 or 2");
  }
  core::check_positive_finite(fn, "--epsilon", *o.epsilon);
  if (o.algorithm == 2) {
    if (!o.delta) throw std::invalid_argument("--algorithm 2 needs --delta in (0, 1)");
    core::check_open_interval(fn, "--delta", *o.delta, 0.0, 1.0);
  } else if (o.delta) {
    throw std::invalid_argument("--delta is only used by --algorithm 2 (Algorithm 1 is epsilon-DP)");
  }
  core::check_positive_finite(fn, "--radius", *o.radius);
  if (!(std::isfinite(*o.penalty) && *o.penalty >= 0.0)) {
    core::throw_domain(fn, "--penalty", *o.penalty, "finite and >= 0");
  }
  core::LcssfSettings s;
  s.radius = *o.radius;
  s.penalty = *o.penalty;
  s.delta_kind = core::lcssf_delta_from_string(o.lcssf_delta);
  s.objective_scale = o.objective_scale;
  s.noise_factor = o.noise_factor;
  s.variance_floor = o.variance_floor;
  s.alg2_selection = core::alg2_selection_from_string(o.alg2_selection);
  if (o.predictors.empty()) throw std::invalid_argument("--predictors names no column");
  if (static_cast<int>(o.predictors.size()) > core::kMaxEnumeratedPredictors) {
    throw std::invalid_argument("--predictors names " + std::to_string(o.predictors.size()) +
                                " columns, but all 2^d models are enumerated only for d <= " +
                                std::to_string(core::kMaxEnumeratedPredictors));
  }
  std::vector<std::string> wanted = o.predictors;
  wanted.push_back(o.response);
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (wanted[i] == wanted[j]) {
        throw std::invalid_argument("column '" + wanted[i] + "' is named twice among --response and --predictors");
      }
    }
  }
  const runtime::DataTable table = runtime::read_csv(o.data, wanted);
  Eigen::MatrixXd x = table.matrix(o.predictors);
  const auto& ycol = table.column(o.response);
  Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(ycol.data(), static_cast<Eigen::Index>(ycol.size()));
  std::vector<std::string> labels;
  if (o.standardize) {  // non-private preprocessing: column means and sds of the confidential data
    core::standardize_columns(x, y);
    labels.push_back("--standardize: columns centred and scaled by their confidential means and sds "
                     "(non-private preprocessing, as LCSSF's 'standardized' data; not covered by the DP guarantee)");
  }
  Json bound_json;
  if (o.data_bound == "auto") {
    const double max_abs_y = y.cwiseAbs().maxCoeff();
    const double max_abs_x = x.cwiseAbs().maxCoeff();
    s.data_bound = s.delta_kind == core::LcssfDelta::rpR_2 ? max_abs_y : std::max(max_abs_y, max_abs_x);
    bound_json["source"] = "auto: smallest r with nothing clamped (max |Y|, and max |X| unless rpR_2); METHODS.md A22";
    bound_json["max_y"] = y.maxCoeff();
    bound_json["max_abs_y"] = max_abs_y;
    bound_json["max_abs_x"] = max_abs_x;
    labels.push_back("data-dependent data_bound (auto, as LCSSF's r = max observed Y): NOT differentially private "
                     "(METHODS.md A22); use a public --data-bound for a private release");
    if (!(s.data_bound > 0.0)) throw std::domain_error("dpmu select: --data-bound auto gives 0 (all data are 0)");
  } else {
    s.data_bound = parse_number("--data-bound", o.data_bound);
    core::check_positive_finite(fn, "--data-bound", s.data_bound);
    bound_json["source"] = "--data-bound (public)";
  }
  bound_json["data_bound"] = s.data_bound;
  bound_json["predictor_bound"] = core::predictor_bound(s.delta_kind, s.data_bound);

  core::LcssfSelection out;
  const auto key = core::fnv1a_64("dpmu select");
  auto run = [&](auto& rng) {
    if (o.algorithm == 1) return core::lcssf_algorithm1(x, y, s, *o.epsilon, rng);
    return core::lcssf_algorithm2(x, y, s, *o.epsilon, *o.delta, rng);
  };
  if (o.seed) {
    core::RngStream rng(*o.seed, key, 0, core::StreamPurpose::noise);
    out = run(rng);
  } else {
    runtime::SecureRng rng;
    out = run(rng);
  }
  const auto rec = core::reconstruction_labels(s, o.algorithm);
  labels.insert(labels.begin(), rec.begin(), rec.end());

  Json j;
  j["method"] = o.algorithm == 1
                    ? "LCSSF Algorithm 1: noisy penalized constrained least squares (report-noisy-min, Laplace)"
                    : "LCSSF Algorithm-2-like placeholder: noisy penalized profile likelihood (METHODS.md §6.5)";
  j["reference"] = "Lei, Charest, Slavkovic, Smith & Fienberg (2018), JRSS A 181; METHODS.md §6";
  j["private"] = out.dp_valid && o.data_bound != "auto" && !o.standardize && (o.algorithm == 2 || s.noise_factor >= 2.0);
  j["privacy"] = o.algorithm == 1 ? "epsilon-DP" : "(2 epsilon, delta)-DP (the placeholder is in fact 2 epsilon-DP)";
  j["mode"] = o.seed ? "simulation: seeded, reproducible noise; NOT for releasing real data"
                     : "release: noise from the OS CSPRNG (getrandom); floating-point Laplace, only the argmin "
                       "is released (docs/lcssf.md)";
  j["seed"] = o.seed ? Json(*o.seed) : Json(nullptr);
  j["selected_model"] = model_json(out.selected, o.predictors);
  if (o.algorithm == 2) {
    j["released_variance"] = out.released_variance;
    j["variance_truncation"] = out.variance_truncation;
  }
  Json settings;
  settings["data"] = o.data;
  settings["response"] = o.response;
  settings["predictors"] = o.predictors;
  settings["n"] = x.rows();
  settings["d"] = x.cols();
  settings["intercept"] = false;
  settings["algorithm"] = o.algorithm;
  settings["epsilon"] = *o.epsilon;
  settings["delta"] = o.delta ? Json(*o.delta) : Json(nullptr);
  settings["radius"] = s.radius;
  settings["penalty"] = s.penalty;
  settings["data_bound"] = bound_json;
  settings["lcssf_delta"] = core::to_string(s.delta_kind);
  if (o.algorithm == 1) {
    settings["objective_scale"] = s.objective_scale;
    settings["noise_factor"] = s.noise_factor;
  } else {
    settings["variance_floor"] = s.variance_floor;
    settings["alg2_selection"] = core::to_string(s.alg2_selection);
  }
  settings["standardize"] = o.standardize;
  settings["candidate_models"] = out.models.size();
  j["settings"] = settings;
  j["clamped"] = {{"x_entries", out.clamped_x_entries}, {"y_entries", out.clamped_y_entries}};
  j["labels"] = labels;
  Json research;
  research["warning"] = "computed from the confidential data: NOT private, for research only";
  research["non_private_minimiser"] = model_json(out.non_private_minimiser, o.predictors);
  research["rss_l1_sensitivity"] = out.rss_l1_sensitivity;
  research["score_l1_sensitivity"] = out.score_l1_sensitivity;
  research["laplace_scale"] = out.laplace_scale;
  if (o.algorithm == 2) research["variance_laplace_scale"] = out.variance_laplace_scale;
  j["research"] = research;
  std::cout << j.dump(2) << "\n";
}

}  // namespace

void add_select_command(CLI::App& app) {
  auto opts = std::make_shared<SelectOptions>();
  auto* cmd = app.add_subcommand(
      "select", "Differentially private model selection of Lei et al. (2018): all 2^d models, l1-constrained "
                "least squares, report-noisy-min (Algorithm 1) or exponential mechanism (Algorithm 2)");
  cmd->add_option("--data", opts->data, "CSV file with a header row")->required()->check(CLI::ExistingFile);
  cmd->add_option("--response", opts->response, "Response column Y")->required();
  cmd->add_option("--predictors", opts->predictors, "Comma-separated predictors (d <= 20; no intercept)")
      ->required()
      ->delimiter(',');
  cmd->add_option("--algorithm", opts->algorithm, "1 (epsilon-DP) or 2 ((2 epsilon, delta)-DP placeholder)")
      ->capture_default_str();
  cmd->add_option("--epsilon", opts->epsilon, "Privacy parameter epsilon > 0")->required();
  cmd->add_option("--delta", opts->delta, "Privacy parameter delta in (0, 1) (Algorithm 2 only)");
  cmd->add_option("--radius", opts->radius, "R > 0: l1 bound on the coefficients")->required();
  cmd->add_option("--penalty", opts->penalty, "phi >= 0: penalty per included predictor")->required();
  cmd->add_option("--data-bound", opts->data_bound,
                  "r > 0 bounding |Y| (and |X| unless rpR_2), public; or 'auto' (data-dependent, NOT private)")
      ->required();
  cmd->add_option("--lcssf-delta", opts->lcssf_delta,
                  "Sensitivity reading [U]: r2_1pR2 (|X|,|Y| <= r; r^2(1+R)^2) | rpR_2 (|X| <= 1; (r+R)^2) | "
                  "1pR_2 ((1+R)^2; DP only if r <= 1)")
      ->capture_default_str();
  cmd->add_option("--objective-scale", opts->objective_scale, "c in L* = c RSS + phi |M| [U]")->capture_default_str();
  cmd->add_option("--noise-factor", opts->noise_factor, "kappa: Laplace scale kappa c Delta/epsilon [U]")
      ->capture_default_str();
  cmd->add_option("--variance-floor", opts->variance_floor, "Algorithm 2: public floor of the released variance [R]")
      ->capture_default_str();
  cmd->add_option("--alg2-selection", opts->alg2_selection, "Algorithm 2: exponential_mechanism | noisy_min [U]")
      ->capture_default_str();
  cmd->add_flag("--standardize", opts->standardize,
                "Centre and scale every column with its confidential mean and sd (non-private preprocessing)");
  cmd->add_option("--seed", opts->seed, "Seed: reproducible simulation noise (NOT for releasing real data)");
  cmd->callback([opts] { run_select(*opts); });
}

}  // namespace dpmu::cli
