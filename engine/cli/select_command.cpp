// `dpmu select`: differentially private model selection of Lei, Charest, Slavković, Smith &
// Fienberg (2018) — Algorithm 1 (noisy penalised constrained least squares, ε-DP) and an
// Algorithm-2-like placeholder ((2ε, δ)-DP); docs/methods.md §6. Prints JSON on stdout.
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "audit_command.hpp"
#include "commands.hpp"
#include "data_options.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/lcssf.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/runtime/data_table.hpp"
#include "dpmu/runtime/secure_random.hpp"
#include "release_ledger.hpp"
#include "release_report.hpp"

namespace dpmu::cli {

namespace {

using Json = nlohmann::ordered_json;

struct SelectOptions {
  std::string data;
  std::string sep = "auto";
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
  LedgerOptions ledger;
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

/// What a selection needs, checked (options first, then the data).
struct SelectPlan {
  core::LcssfSettings lcssf;
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  std::vector<std::string> labels;
  core::LcssfReleaseSettings release;
};

SelectPlan plan_select(const SelectOptions& o) {
  static const char* fn = "dpmu select";
  ReleaseLedger::check_options(o.ledger, o.data, !o.seed);
  if ((o.data_bound == "auto" || o.standardize) && !o.seed) {
    throw std::invalid_argument(
        "--data-bound auto and --standardize use the confidential data and are for research runs only: add --seed "
        "(the output then says \"private\": false), or give a public --data-bound without --standardize");
  }
  if (o.algorithm != 1 && o.algorithm != 2) {
    throw std::invalid_argument("--algorithm is " + std::to_string(o.algorithm) + ", but must be 1 or 2");
  }
  core::check_positive_finite(fn, "--epsilon", *o.epsilon);
  check_epsilon_floor(fn, "--epsilon", *o.epsilon);
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
    throw std::invalid_argument(
        "--predictors names " + std::to_string(o.predictors.size()) +
        " columns, but all 2^d models are enumerated only for d <= " + std::to_string(core::kMaxEnumeratedPredictors));
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
  const runtime::DataTable table = read_data_file("dpmu select", o.data, wanted, o.sep);
  Eigen::MatrixXd x = table.matrix(o.predictors);
  const auto& ycol = table.column(o.response);
  Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(ycol.data(), static_cast<Eigen::Index>(ycol.size()));
  std::vector<std::string> labels;
  if (o.standardize) {  // non-private preprocessing: column means and sds of the confidential data
    core::standardize_columns(x, y);
    labels.push_back(
        "--standardize: columns centred and scaled by their confidential means and sds "
        "(non-private preprocessing, as LCSSF's 'standardized' data; not covered by the DP guarantee)");
  }
  if (o.data_bound == "auto") {
    const double max_abs_y = y.cwiseAbs().maxCoeff();
    const double max_abs_x = x.cwiseAbs().maxCoeff();
    s.data_bound = s.delta_kind == core::LcssfDelta::rpR_2 ? max_abs_y : std::max(max_abs_y, max_abs_x);
    labels.push_back(
        "data-dependent data_bound (auto, as LCSSF's r = max observed Y): NOT differentially private "
        "(docs/lcssf.md); use a public --data-bound for a private release");
    if (!(s.data_bound > 0.0)) throw std::domain_error("dpmu select: --data-bound auto gives 0 (all data are 0)");
  } else {
    s.data_bound = parse_number("--data-bound", o.data_bound);
    core::check_positive_finite(fn, "--data-bound", s.data_bound);
  }

  SelectPlan plan;
  plan.release.lcssf = s;
  plan.release.algorithm = o.algorithm;
  plan.release.epsilon = *o.epsilon;
  plan.release.delta = o.delta.value_or(0.0);
  plan.release.n = static_cast<std::size_t>(x.rows());
  plan.release.d = static_cast<int>(x.cols());
  plan.lcssf = s;
  plan.x = std::move(x);
  plan.y = std::move(y);
  plan.labels = std::move(labels);
  return plan;
}

/// --data-bound and --radius must keep the objectives S_M (sums of n squared residuals), their
/// sensitivity (with the singular-submodel ridge τR², τ = 1e-10·n·b²) and the noise within the range
/// of a double ("constrained_rss: singular_ridge is inf" before). Public quantities only.
/// @throws std::invalid_argument naming the options.
void check_select_magnitudes(const core::LcssfRelease& release, const SelectPlan& plan) {
  const core::LcssfSettings& s = plan.lcssf;
  const double n = static_cast<double>(plan.release.n);
  const double sensitivity = release.rss_l1_sensitivity();
  const double noise = s.noise_factor * s.objective_scale * sensitivity / plan.release.epsilon;
  if (!std::isfinite(sensitivity * n) || !std::isfinite(64.0 * noise)) {
    throw std::invalid_argument("--data-bound " + core::format_value(s.data_bound) + " with --radius " +
                                core::format_value(s.radius) + " and n = " + std::to_string(plan.release.n) +
                                " rows makes the objectives, their sensitivity (" + core::format_value(sensitivity) +
                                ") or the noise overflow a double; rescale the data to smaller public bounds");
  }
}

void run_select(const SelectOptions& o) {
  SelectPlan plan = plan_select(o);
  const core::LcssfSettings& s = plan.lcssf;
  const Eigen::MatrixXd& x = plan.x;
  const Eigen::VectorXd& y = plan.y;
  std::vector<std::string>& labels = plan.labels;
  const core::LcssfRelease release(plan.release);
  check_select_magnitudes(release, plan);
  const core::PrivacyGuarantee guarantee = release.privacy();
  ReleaseLedger ledger(o.ledger, "dpmu select", o.data, guarantee, !o.seed.has_value(),
                       {"selected_model", o.algorithm == 2 ? "released_variance" : "(no value)"});  // before any noise

  ReleaseReport report(!o.seed.has_value(),
                       o.algorithm == 1
                           ? "LCSSF Algorithm 1: noisy penalized constrained least squares (report-noisy-min, Laplace)"
                           : "LCSSF Algorithm-2-like placeholder: noisy penalized profile likelihood (docs/lcssf.md)");
  if (o.data_bound == "auto") report.not_private("--data-bound auto: the bound is computed from the confidential data");
  if (o.standardize) report.not_private("--standardize: centred and scaled by the confidential means and sds");
  if (!std::isfinite(guarantee.epsilon)) {
    report.not_private("the sensitivity calibration is not a valid DP bound for these settings (see labels)");
  }
  const auto key = core::fnv1a_64("dpmu select");
  runtime::SecureRng secure;
  core::RngStream rng(o.seed.value_or(0), key, 0, core::StreamPurpose::noise);
  core::NoiseSource noise =
      o.seed ? core::NoiseSource::simulation(rng) : core::NoiseSource::secure([&secure] { return secure(); });
  const core::LcssfOutput out = release.release(x, y, noise);
  const auto rec = core::reconstruction_labels(s, o.algorithm);
  labels.insert(labels.begin(), rec.begin(), rec.end());

  report.setting("reference", "Lei, Charest, Slavkovic, Smith & Fienberg (2018), JRSS A 181; docs/lcssf.md");
  report.setting("data", o.data);
  report.setting("response", o.response);
  report.setting("predictors", o.predictors);
  report.setting("n", x.rows());
  report.setting("d", x.cols());
  report.setting("intercept", false);
  report.setting("algorithm", o.algorithm);
  report.setting("epsilon", *o.epsilon);
  report.setting("delta", o.delta ? Json(*o.delta) : Json(nullptr));
  report.setting("radius", s.radius);
  report.setting("penalty", s.penalty);
  report.setting("data_bound_source", o.data_bound == "auto" ? "auto: max |Y| (and max |X| unless rpR_2)" : "public");
  report.setting("lcssf_delta", core::to_string(s.delta_kind));
  if (o.algorithm == 1) {
    report.setting("objective_scale", s.objective_scale);
    report.setting("noise_factor", s.noise_factor);
  } else {
    report.setting("variance_floor", s.variance_floor);
    report.setting("alg2_selection", core::to_string(s.alg2_selection));
  }
  report.setting("standardize", o.standardize);
  report.setting("candidate_models", std::size_t{1} << x.cols());
  report.setting("seed", o.seed ? Json(*o.seed) : Json(nullptr));
  report.setting("labels", labels);
  if (o.data_bound == "auto") {
    report.diagnostic("data_bound", s.data_bound);  // computed from the data (seeded runs only)
  } else {
    report.setting("data_bound", s.data_bound);
  }
  report.setting("predictor_bound",
                 o.data_bound == "auto" ? Json(nullptr) : Json(core::predictor_bound(s.delta_kind, s.data_bound)));
  report.privacy(guarantee);
  report.privacy_detail("score_l1_sensitivity",
                        o.algorithm == 1 ? s.objective_scale * release.rss_l1_sensitivity() : std::nan(""));
  if (o.algorithm == 1) {
    report.privacy_detail("laplace_scale",
                          s.noise_factor * s.objective_scale * release.rss_l1_sensitivity() / *o.epsilon);
  } else {
    report.privacy_detail("variance_laplace_scale",
                          release.rss_l1_sensitivity() / (static_cast<double>(x.rows()) * *o.epsilon));
  }
  report.released("selected_model", model_json(out.selected, o.predictors));
  if (o.algorithm == 2) {
    report.released("released_variance", out.released_variance);
    report.released("variance_truncation", out.variance_truncation);
  }
  if (out.diagnostics) {
    report.diagnostic("non_private_minimiser", model_json(out.diagnostics->non_private_minimiser, o.predictors));
    report.diagnostic("clamped", Json{{"x_entries", out.diagnostics->clamped_x_entries},
                                      {"y_entries", out.diagnostics->clamped_y_entries}});
    report.diagnostic("singular_submodels", out.diagnostics->singular_models);
  }
  ledger.verify_unchanged();
  std::cout << report.finish().dump(2) << "\n";
}

void register_select_options(CLI::App* cmd, SelectOptions& o) {
  cmd->add_option("--data", o.data, "CSV file with a header row")->required()->check(CLI::ExistingFile);
  add_separator_option(cmd, o.sep);
  cmd->add_option("--response", o.response, "Response column Y")->required();
  cmd->add_option("--predictors", o.predictors, "Comma-separated predictors (d <= 20; no intercept)")
      ->required()
      ->delimiter(',');
  cmd->add_option("--algorithm", o.algorithm, "1 (epsilon-DP) or 2 ((2 epsilon, delta)-DP placeholder)")
      ->capture_default_str();
  cmd->add_option("--epsilon", o.epsilon, "Privacy parameter epsilon > 0")->required();
  cmd->add_option("--delta", o.delta, "Privacy parameter delta in (0, 1) (Algorithm 2 only)");
  cmd->add_option("--radius", o.radius, "R > 0: l1 bound on the coefficients")->required();
  cmd->add_option("--penalty", o.penalty, "phi >= 0: penalty per included predictor")->required();
  cmd->add_option("--data-bound", o.data_bound,
                  "r > 0 bounding |Y| (and |X| unless rpR_2), public; or 'auto' (data-dependent, NOT private)")
      ->required();
  cmd->add_option("--lcssf-delta", o.lcssf_delta,
                  "Sensitivity reading [U]: r2_1pR2 (|X|,|Y| <= r; r^2(1+R)^2) | rpR_2 (|X| <= 1; (r+R)^2) | "
                  "1pR_2 ((1+R)^2; DP only if r <= 1)")
      ->capture_default_str();
  cmd->add_option("--objective-scale", o.objective_scale, "c in L* = c RSS + phi |M| [U]")->capture_default_str();
  cmd->add_option("--noise-factor", o.noise_factor, "kappa: Laplace scale kappa c Delta/epsilon [U]")
      ->capture_default_str();
  cmd->add_option("--variance-floor", o.variance_floor, "Algorithm 2: public floor of the released variance [R]")
      ->capture_default_str();
  cmd->add_option("--alg2-selection", o.alg2_selection, "Algorithm 2: exponential_mechanism | noisy_min [U]")
      ->capture_default_str();
  cmd->add_flag("--standardize", o.standardize,
                "Centre and scale every column with its confidential mean and sd (non-private preprocessing)");
  cmd->add_option("--seed", o.seed,
                  "Seed: reproducible simulation noise; the output says \"private\": false (not a release)")
      ->check(unsigned_integer());
  add_ledger_options(cmd, o.ledger);
}

/// `dpmu audit select`: the released model (Algorithm 2's released variance is not part of the
/// audited vector; its discrete Laplace release is audited through `dpmu audit test`'s sampler).
AuditTarget select_audit_target(SelectOptions o) {
  if (o.data_bound == "auto" || o.standardize) {
    throw std::invalid_argument(
        "dpmu audit select audits a private release: give a public --data-bound and no "
        "--standardize");
  }
  if (!o.ledger.ledger.empty()) throw std::invalid_argument("dpmu audit is not a release: drop --ledger");
  o.seed.reset();
  const SelectPlan plan = plan_select(o);
  AuditTarget t;
  t.command = "dpmu select";
  t.data.resize(plan.x.rows(), plan.x.cols() + 1);
  t.data << plan.x, plan.y;
  t.columns = o.predictors;
  t.columns.push_back(o.response);
  const double bx = core::predictor_bound(plan.lcssf.delta_kind, plan.lcssf.data_bound);
  t.bounds.assign(static_cast<std::size_t>(plan.x.cols()), core::ColumnBounds{-bx, bx});
  t.bounds.push_back({-plan.lcssf.data_bound, plan.lcssf.data_bound});
  t.bounds_source = "--data-bound (public)";
  auto release = std::make_shared<const core::LcssfRelease>(plan.release);
  check_select_magnitudes(*release, plan);
  t.guarantee = release->privacy();
  t.score = core::AuditScore::categorical;
  t.release = [release](const Eigen::MatrixXd& rows, core::NoiseSource& noise) {
    const core::LcssfOutput r = release->release(rows.leftCols(rows.cols() - 1), rows.col(rows.cols() - 1), noise);
    Eigen::VectorXd v(1);
    v(0) = static_cast<double>(r.selected);
    return v;
  };
  return t;
}

}  // namespace

void add_select_command(CLI::App& app, CLI::App& audit) {
  auto opts = std::make_shared<SelectOptions>();
  auto* cmd =
      app.add_subcommand("select",
                         "Differentially private model selection of Lei et al. (2018): all 2^d models, l1-constrained "
                         "least squares, report-noisy-min (Algorithm 1) or exponential mechanism (Algorithm 2)");
  register_select_options(cmd, *opts);
  cmd->callback([opts] { run_select(*opts); });
  auto ao = std::make_shared<SelectOptions>();
  auto audit_options = std::make_shared<AuditCliOptions>();
  auto* acmd = audit.add_subcommand("select", "Audit the release of dpmu select (the selected model)");
  register_select_options(acmd, *ao);
  add_audit_options(acmd, *audit_options);
  acmd->callback([ao, audit_options] { run_audit(select_audit_target(*ao), *audit_options); });
}

}  // namespace dpmu::cli
