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
#include "dpmu/api/release_report.hpp"
#include "dpmu/api/select.hpp"
#include "dpmu/core/lcssf.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/runtime/data_table.hpp"

namespace dpmu::cli {

namespace {

using Json = nlohmann::ordered_json;

struct SelectOptions {
  std::string data;
  std::string sep = "auto";
  std::string response;
  std::vector<std::string> predictors;
  api::SelectRequest request;
};

/// The request checked without the data, then the columns read once (bytes and table).
struct SelectData {
  std::string bytes;
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

SelectData read_select_data(SelectOptions& o, const char* command) {
  o.request.ledger.data_label = o.data;
  api::check_select_request(o.request, o.predictors.size());
  std::vector<std::string> wanted = o.predictors;
  wanted.push_back(o.response);
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (wanted[i] == wanted[j]) {
        throw std::invalid_argument("column '" + wanted[i] + "' is named twice among --response and --predictors");
      }
    }
  }
  DataFile file = read_data_file(command, o.data, wanted, o.sep);
  SelectData d;
  d.x = file.table.matrix(o.predictors);
  const auto& ycol = file.table.column(o.response);
  d.y = Eigen::Map<const Eigen::VectorXd>(ycol.data(), static_cast<Eigen::Index>(ycol.size()));
  d.bytes = std::move(file.bytes);
  return d;
}

void run_select(SelectOptions o) {
  default_ledger_from_environment(o.request.ledger, !o.request.seed);
  const SelectData d = read_select_data(o, "dpmu select");
  const auto out = api::select(d.x, d.y, o.predictors, o.response, o.request, d.bytes);
  std::cout << api::json_text(out, 2) << "\n";
}

void register_select_options(CLI::App* cmd, SelectOptions& o) {
  cmd->add_option("--data", o.data, "CSV file with a header row")->required()->check(CLI::ExistingFile);
  add_separator_option(cmd, o.sep);
  cmd->add_option("--response", o.response, "Response column Y")->required();
  cmd->add_option("--predictors", o.predictors, "Comma-separated predictors (d <= 20; no intercept)")
      ->required()
      ->delimiter(',');
  cmd->add_option("--algorithm", o.request.algorithm, "1 (epsilon-DP) or 2 ((2 epsilon, delta)-DP placeholder)")
      ->capture_default_str();
  cmd->add_option("--epsilon", o.request.epsilon, "Privacy parameter epsilon > 0")->required();
  cmd->add_option("--delta", o.request.delta, "Privacy parameter delta in (0, 1) (Algorithm 2 only)");
  cmd->add_option("--radius", o.request.radius, "R > 0: l1 bound on the coefficients")->required();
  cmd->add_option("--penalty", o.request.penalty, "phi >= 0: penalty per included predictor")->required();
  cmd->add_option("--data-bound", o.request.data_bound,
                  "r > 0 bounding |Y| (and |X| unless rpR_2), public; or 'auto' (data-dependent, NOT private)")
      ->required();
  cmd->add_option("--lcssf-delta", o.request.lcssf_delta,
                  "Sensitivity reading [U]: r2_1pR2 (|X|,|Y| <= r; r^2(1+R)^2) | rpR_2 (|X| <= 1; (r+R)^2) | "
                  "1pR_2 ((1+R)^2; DP only if r <= 1)")
      ->capture_default_str();
  cmd->add_option("--objective-scale", o.request.objective_scale, "c in L* = c RSS + phi |M| [U]")
      ->capture_default_str();
  cmd->add_option("--noise-factor", o.request.noise_factor, "kappa: Laplace scale kappa c Delta/epsilon [U]")
      ->capture_default_str();
  cmd->add_option("--variance-floor", o.request.variance_floor,
                  "Algorithm 2: public floor of the released variance [R]")
      ->capture_default_str();
  cmd->add_option("--alg2-selection", o.request.alg2_selection, "Algorithm 2: exponential_mechanism | noisy_min [U]")
      ->capture_default_str();
  cmd->add_flag("--standardize", o.request.standardize,
                "Centre and scale every column with its confidential mean and sd (non-private preprocessing)");
  cmd->add_option("--seed", o.request.seed,
                  "Seed: reproducible simulation noise; the output says \"private\": false (not a release)")
      ->check(unsigned_integer());
  add_ledger_options(cmd, o.request.ledger);
}

/// `dpmu audit select`: the released model (Algorithm 2's released variance is not part of the
/// audited vector; its discrete Laplace release is audited through `dpmu audit test`'s sampler).
AuditTarget select_audit_target(SelectOptions o) {
  if (o.request.data_bound == "auto" || o.request.standardize) {
    throw std::invalid_argument(
        "dpmu audit select audits a private release: give a public --data-bound and no "
        "--standardize");
  }
  if (!o.request.ledger.path.empty()) throw std::invalid_argument("dpmu audit is not a release: drop --ledger");
  o.request.seed.reset();
  const SelectData d = read_select_data(o, "dpmu audit select");
  const api::SelectPlan plan = api::select_plan(o.request, d.x, d.y);
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
  auto release = api::make_select_release(plan);
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
