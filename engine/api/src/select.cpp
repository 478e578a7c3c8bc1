// api::select(): DP model selection of Lei et al. (2018), Algorithms 1 and 2, for every front end.
#include "dpmu/api/select.hpp"

#include <cmath>
#include <stdexcept>

#include "dpmu/api/release_noise.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/api/test.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/runtime/secure_random.hpp"

namespace dpmu::api {

namespace {

using Json = nlohmann::ordered_json;
constexpr const char* fn = "dpmu select";

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

}  // namespace

void check_select_request(const SelectRequest& o, std::size_t d) {
  check_ledger_options(o.ledger, !o.seed);
  if ((o.data_bound == "auto" || o.standardize) && !o.seed) {
    throw std::invalid_argument(
        "--data-bound auto and --standardize use the confidential data and are for research runs only: add --seed "
        "(the output then says \"private\": false), or give a public --data-bound without --standardize");
  }
  if (o.algorithm != 1 && o.algorithm != 2) {
    throw std::invalid_argument("--algorithm is " + std::to_string(o.algorithm) + ", but must be 1 or 2");
  }
  core::check_positive_finite(fn, "--epsilon", o.epsilon);
  check_epsilon_floor(fn, "--epsilon", o.epsilon);
  if (o.algorithm == 2) {
    if (!o.delta) throw std::invalid_argument("--algorithm 2 needs --delta in (0, 1)");
    core::check_open_interval(fn, "--delta", *o.delta, 0.0, 1.0);
  } else if (o.delta) {
    throw std::invalid_argument("--delta is only used by --algorithm 2 (Algorithm 1 is epsilon-DP)");
  }
  core::check_positive_finite(fn, "--radius", o.radius);
  if (!(std::isfinite(o.penalty) && o.penalty >= 0.0))
    core::throw_domain(fn, "--penalty", o.penalty, "finite and >= 0");
  core::lcssf_delta_from_string(o.lcssf_delta);
  core::alg2_selection_from_string(o.alg2_selection);
  if (o.data_bound != "auto")
    core::check_positive_finite(fn, "--data-bound", parse_number("--data-bound", o.data_bound));
  if (d == 0) throw std::invalid_argument("--predictors names no column");
  if (d > static_cast<std::size_t>(core::kMaxEnumeratedPredictors)) {
    throw std::invalid_argument(
        "--predictors names " + std::to_string(d) +
        " columns, but all 2^d models are enumerated only for d <= " + std::to_string(core::kMaxEnumeratedPredictors));
  }
}

SelectPlan select_plan(const SelectRequest& o, const Eigen::Ref<const Eigen::MatrixXd>& x_in,
                       const Eigen::Ref<const Eigen::VectorXd>& y_in) {
  check_select_request(o, static_cast<std::size_t>(x_in.cols()));
  if (x_in.rows() != y_in.size()) throw std::invalid_argument("the predictors and the response differ in rows");
  const bool finite = x_in.allFinite() && y_in.allFinite();
  if (!finite && o.data_bound == "auto") {
    throw std::invalid_argument("the data contain a missing or non-finite value (NA, NaN or Inf)");
  }
  core::LcssfSettings s;
  s.radius = o.radius;
  s.penalty = o.penalty;
  s.delta_kind = core::lcssf_delta_from_string(o.lcssf_delta);
  s.objective_scale = o.objective_scale;
  s.noise_factor = o.noise_factor;
  s.variance_floor = o.variance_floor;
  s.alg2_selection = core::alg2_selection_from_string(o.alg2_selection);
  Eigen::MatrixXd x = x_in;
  Eigen::VectorXd y = y_in;
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
  }
  if (!finite) {
    // A non-finite value that a front end derived from a valid row (R's log(0), sqrt(-x)) is never an
    // error, which would depend on the data: by a public rule, +Inf becomes the upper and -Inf the
    // lower bound of its column's domain (the values are clamped into it anyway) and NaN its centre 0.
    const double bx = core::predictor_bound(s.delta_kind, s.data_bound);
    const auto map = [](double v, double bound) {
      if (std::isnan(v)) return 0.0;
      if (std::isinf(v)) return v > 0 ? bound : -bound;
      return v;
    };
    x = x.unaryExpr([&](double v) { return map(v, bx); });
    y = y.unaryExpr([&](double v) { return map(v, s.data_bound); });
  }
  SelectPlan plan;
  plan.release.lcssf = s;
  plan.release.algorithm = o.algorithm;
  plan.release.epsilon = o.epsilon;
  plan.release.delta = o.delta.value_or(0.0);
  plan.release.n = static_cast<std::size_t>(x.rows());
  plan.release.d = static_cast<int>(x.cols());
  plan.lcssf = s;
  plan.x = std::move(x);
  plan.y = std::move(y);
  plan.labels = std::move(labels);
  return plan;
}

std::shared_ptr<const core::LcssfRelease> make_select_release(const SelectPlan& plan) {
  auto release = std::make_shared<const core::LcssfRelease>(plan.release);
  check_select_magnitudes(*release, plan);
  return release;
}

Json select(const Eigen::Ref<const Eigen::MatrixXd>& x_in, const Eigen::Ref<const Eigen::VectorXd>& y_in,
            const std::vector<std::string>& predictors, const std::string& response, const SelectRequest& o,
            std::string_view data_bytes) {
  if (predictors.size() != static_cast<std::size_t>(x_in.cols())) {
    throw std::invalid_argument("one name per predictor column is needed");
  }
  SelectPlan plan = select_plan(o, x_in, y_in);
  const core::LcssfSettings& s = plan.lcssf;
  const Eigen::MatrixXd& x = plan.x;
  const Eigen::VectorXd& y = plan.y;
  std::vector<std::string>& labels = plan.labels;
  const auto release = make_select_release(plan);
  const core::PrivacyGuarantee guarantee = release->privacy();
  // The budget is checked now, before any work; the charge is made when the release is computed.
  ReleaseCharge charge(o.ledger, o.command, guarantee,
                       Json::array({"selected_model", o.algorithm == 2 ? "released_variance" : "(no value)"}));

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
  ReleaseNoise r(o.seed, key);
  // The bytes analysed, for the ledger's fingerprint; then the noise, charged as soon as it is drawn
  // (docs/privacy.md "Charge first, then speak").
  std::string own_bytes;
  if (data_bytes.empty() && !o.ledger.path.empty()) {
    Eigen::MatrixXd cols(x_in.rows(), x_in.cols() + 1);
    cols << x_in, y_in;
    std::vector<std::string> names = predictors;
    names.push_back(response);
    own_bytes = matrix_bytes(cols, names);
    data_bytes = own_bytes;
  }
  const core::LcssfOutput out = charge.draw_and_commit([&] { return release->release(x, y, r.noise); }, data_bytes);
  if (const auto& c = charge.charge()) report.setting("ledger", to_json(*c));
  const auto rec = core::reconstruction_labels(s, o.algorithm);
  labels.insert(labels.begin(), rec.begin(), rec.end());

  report.setting("reference", "Lei, Charest, Slavkovic, Smith & Fienberg (2018), JRSS A 181; docs/lcssf.md");
  if (!o.ledger.data_label.empty()) report.setting("data", o.ledger.data_label);
  report.setting("response", response);
  report.setting("predictors", predictors);
  report.setting("n", x.rows());
  report.setting("d", x.cols());
  report.setting("intercept", false);
  report.setting("algorithm", o.algorithm);
  report.setting("epsilon", o.epsilon);
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
                        o.algorithm == 1 ? s.objective_scale * release->rss_l1_sensitivity() : std::nan(""));
  if (o.algorithm == 1) {
    report.privacy_detail("laplace_scale",
                          s.noise_factor * s.objective_scale * release->rss_l1_sensitivity() / o.epsilon);
  } else {
    report.privacy_detail("variance_laplace_scale",
                          release->rss_l1_sensitivity() / (static_cast<double>(x.rows()) * o.epsilon));
  }
  report.released("selected_model", model_json(out.selected, predictors));
  if (o.algorithm == 2) {
    report.released("released_variance", out.released_variance);
    report.released("variance_truncation", out.variance_truncation);
  }
  if (out.diagnostics) {
    report.diagnostic("non_private_minimiser", model_json(out.diagnostics->non_private_minimiser, predictors));
    report.diagnostic("clamped", Json{{"x_entries", out.diagnostics->clamped_x_entries},
                                      {"y_entries", out.diagnostics->clamped_y_entries}});
    report.diagnostic("singular_submodels", out.diagnostics->singular_models);
  }
  return report.finish();
}

}  // namespace dpmu::api
