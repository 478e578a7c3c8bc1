// `dpmu bma --method adassp`: the AdaSSP baseline as a release (see adassp.hpp), charged like every
// release (ReleaseCharge::draw_and_commit) and reported with settings, released values and
// diagnostics (api::ReleaseReport).
#include "dpmu/api/adassp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "dpmu/api/release_noise.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/api/test.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/random.hpp"

namespace dpmu::api {

namespace {

using AdaJson = nlohmann::ordered_json;

/// The lower triangle of a symmetric matrix, row by row.
AdaJson adassp_lower_triangle(const Eigen::MatrixXd& m) {
  AdaJson out = AdaJson::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    AdaJson row = AdaJson::array();
    for (Eigen::Index j = 0; j <= i; ++j) row.push_back(m(i, j));
    out.push_back(row);
  }
  return out;
}

/// The public centre and scale of a column: the bounds' midpoint c and half-width h (each half
/// taken first, so neither overflows for finite bounds).
struct MidpointHalfWidth {
  double c, h;
  explicit MidpointHalfWidth(const core::ColumnBounds& b)
      : c(0.5 * b.lower + 0.5 * b.upper), h(0.5 * b.upper - 0.5 * b.lower) {}
};

}  // namespace

core::ColumnBounds adassp_column_bounds(const AdaSspRequest& q, std::size_t j) {
  return q.bounds.size() == 1 ? q.bounds.front() : q.bounds.at(j);
}

core::AdaSspSettings adassp_settings(const AdaSspRequest& q, std::size_t n, std::size_t p) {
  const char* cmd = "dpmu bma --method adassp";
  if (!q.epsilon) throw std::invalid_argument("--method adassp needs --epsilon and --delta");
  core::check_positive_finite(cmd, "--epsilon", *q.epsilon);
  check_epsilon_floor(cmd, "--epsilon", *q.epsilon);
  if (!q.delta) {
    throw std::invalid_argument(
        "--method adassp needs --delta in (0, 1) (AdaSSP adds Gaussian noise; no default for a privacy parameter: "
        "choose delta well below 1/n, e.g. 1e-6)");
  }
  core::check_open_interval(cmd, "--delta", *q.delta, 0.0, 1.0);
  if (q.bounds.size() != 1 && q.bounds.size() != p + 1) {
    throw std::invalid_argument(
        "--method adassp needs public bounds on the raw values: one l,u pair for every column "
        "or one pair per column (" +
        std::to_string(p + 1) + ": predictors in order, response last)");
  }
  for (const auto& b : q.bounds) {
    if (!(std::isfinite(b.lower) && std::isfinite(b.upper) && b.lower < b.upper)) {
      throw std::invalid_argument("--bounds: need finite l < u for every column, got " + core::format_value(b.lower) +
                                  "," + core::format_value(b.upper));
    }
  }
  if (*q.epsilon > kMaxAdaSspEpsilon) {
    core::throw_domain(cmd, "--epsilon", *q.epsilon,
                       "at most 1e6 (beyond it AdaSSP's noise is negligible: a non-private fit gives the same answer)");
  }
  // The standardisation divides by each half-width and the back-transformation multiplies by
  // h_y/h_j and the midpoints: every factor must be a finite, normal double.
  const double hy = MidpointHalfWidth(adassp_column_bounds(q, p)).h;
  for (const core::ColumnBounds& b : q.bounds) {
    const auto [c, h] = MidpointHalfWidth(b);
    if (!(std::abs(b.lower) <= kMaxAdaSspBound && std::abs(b.upper) <= kMaxAdaSspBound && h >= 1.0 / kMaxAdaSspBound &&
          std::isfinite(hy / h) && std::isfinite(c * (hy / h)))) {
      throw std::invalid_argument(
          "--bounds " + core::format_value(b.lower) + "," + core::format_value(b.upper) +
          ": --method adassp standardises each column by its bounds' midpoint and half-width and maps the "
          "coefficients back with them; bounds must lie within +-1e150 with a half-width of at least 1e-150 "
          "(else the numbers overflow or underflow a double); rescale the column");
    }
  }
  if (n < 1) throw std::invalid_argument("--method adassp needs at least one row");
  core::AdaSspSettings s;
  s.epsilon = *q.epsilon;
  s.delta = *q.delta;
  s.n = n;
  s.d = static_cast<int>(p) + 1;
  // Every entry of [1, z] lies in [−1, 1]: ‖x_i‖₂ ≤ √(p + 1); |w_i| ≤ 1.
  s.bound_x = std::sqrt(static_cast<double>(p) + 1.0);
  s.bound_y = 1.0;
  try {
    (void)core::AdaSspRelease(s);  // the three analytic-Gaussian calibrations at (ε/3, δ/3)
  } catch (const std::domain_error&) {
    throw std::invalid_argument("--delta " + core::format_value(*q.delta) + " with --epsilon " +
                                core::format_value(*q.epsilon) +
                                ": AdaSSP's analytic Gaussian calibration at (epsilon/3, delta/3) is not computable "
                                "(delta/3 underflows); choose delta of at least 1e-300");
  }
  return s;
}

void adassp_design(const Eigen::Ref<const Eigen::MatrixXd>& rows, const AdaSspRequest& q, Eigen::MatrixXd& design,
                   Eigen::VectorXd& response, std::size_t* clamped) {
  const Eigen::Index n = rows.rows(), p = rows.cols() - 1;
  design.resize(n, p + 1);
  response.resize(n);
  design.col(0).setOnes();
  std::size_t moved = 0;
  for (Eigen::Index j = 0; j <= p; ++j) {
    const core::ColumnBounds b = adassp_column_bounds(q, static_cast<std::size_t>(j));
    const auto [c, h] = MidpointHalfWidth(b);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double v = rows(i, j);
      // A NaN becomes the lower bound (as in the SSP release: never a data-dependent refusal).
      const double x = std::isnan(v) ? b.lower : std::clamp(v, b.lower, b.upper);
      if (!(x == v)) ++moved;
      const double z = std::clamp((x - c) / h, -1.0, 1.0);  // the clamp only absorbs rounding
      if (j < p) {
        design(i, j + 1) = z;
      } else {
        response(i) = z;
      }
    }
  }
  if (clamped) *clamped = moved;
}

AdaJson adassp(const Eigen::Ref<const Eigen::MatrixXd>& rows, const std::vector<std::string>& predictors,
               const std::string& response, const AdaSspRequest& q, std::string_view data_bytes,
               const std::string& data_label) {
  const auto n = static_cast<std::size_t>(rows.rows());
  if (rows.cols() < 2 || predictors.size() + 1 != static_cast<std::size_t>(rows.cols())) {
    throw std::invalid_argument("dpmu bma --method adassp: the data have " + std::to_string(rows.cols()) +
                                " columns for " + std::to_string(predictors.size()) +
                                " predictors and a response (need at least one predictor)");
  }
  const std::size_t p = predictors.size();
  const core::AdaSspRelease release(adassp_settings(q, n, p));
  std::vector<std::string> design_names{"(intercept)"};
  design_names.insert(design_names.end(), predictors.begin(), predictors.end());

  ReleaseReport report(!q.seed.has_value(),
                       "AdaSSP ridge-regression point estimate (Wang 2018, Algorithm 2): no model averaging");
  if (!data_label.empty()) report.setting("data", data_label);
  report.setting("response", response);
  report.setting("predictors", predictors);
  report.setting("n", n);
  report.setting("p", p);
  report.setting("method", "adassp");
  report.setting("analysis",
                 "a point estimate of the full model: no posterior inclusion probabilities, model probabilities or "
                 "intervals (AdaSSP releases none)");
  AdaJson bounds = AdaJson::object();
  for (std::size_t j = 0; j <= p; ++j) {
    const core::ColumnBounds b = adassp_column_bounds(q, j);
    bounds[j < p ? predictors[j] : response] = {b.lower, b.upper};
  }
  report.setting("bounds", bounds);
  report.setting("standardization",
                 "each raw value clamped into its column's bounds (NaN: the lower bound), then centred at the bounds' "
                 "midpoint and divided by their half-width; design [1, z], every entry in [-1, 1]");
  report.setting("seed", q.seed ? AdaJson(*q.seed) : AdaJson(nullptr));
  report.privacy(release.privacy());
  report.privacy_detail("gdp_mu", release.gdp_mu());
  report.privacy_detail("bound_x", release.settings().bound_x);
  report.privacy_detail("bound_y", release.settings().bound_y);
  report.privacy_detail("sigma_lambda_min", release.sigma_lambda());
  report.privacy_detail("sigma_gram", release.sigma_gram());
  report.privacy_detail("sigma_xty", release.sigma_xty());
  report.privacy_detail("eta", release.eta());
  report.privacy_detail("failure_probability", release.settings().failure);

  // The budget is checked now, before any work; the charge is made when the noise is drawn.
  ReleaseCharge charge(q.ledger, q.command, release.privacy(),
                       AdaJson::array({"lambda_min_noisy", "released_gram", "released_xty", "and post-processing"}));
  Eigen::MatrixXd design;
  Eigen::VectorXd w;
  std::size_t clamped = 0;
  adassp_design(rows, q, design, w, &clamped);
  ReleaseNoise r(q.seed, core::fnv1a_64("dpmu bma --method adassp"));
  std::vector<std::string> columns = predictors;
  columns.push_back(response);
  const std::string bytes =
      !data_bytes.empty() || q.ledger.path.empty() ? std::string(data_bytes) : matrix_bytes(rows, columns);
  const core::AdaSspOutput out = charge.draw_and_commit([&] { return release.release(design, w, r.noise); }, bytes);
  if (const auto& c = charge.charge()) report.setting("ledger", to_json(*c));

  // Post-processing with the public (c, h): y = c_y + h_y (θ0 + Σ θ_j (x_j − c_j)/h_j).
  const auto [cy, hy] = MidpointHalfWidth(adassp_column_bounds(q, p));
  Eigen::VectorXd data_units(static_cast<Eigen::Index>(p) + 1);
  double intercept = cy + hy * out.coefficients(0);
  for (std::size_t j = 0; j < p; ++j) {
    const auto [c, h] = MidpointHalfWidth(adassp_column_bounds(q, j));
    const auto k = static_cast<Eigen::Index>(j) + 1;
    data_units(k) = hy * out.coefficients(k) / h;
    intercept -= data_units(k) * c;
  }
  data_units(0) = intercept;
  if (out.diagnostics) {
    report.diagnostic("clamped_values", clamped);
    report.diagnostic("lambda_min", out.diagnostics->lambda_min);
    report.diagnostic("least_squares_standardized", keyed_or_null(out.diagnostics->ols, design_names));
  }
  report.released("lambda_min_noisy", out.lambda_min_noisy);
  report.released("released_gram", adassp_lower_triangle(out.gram));
  report.released("released_xty", keyed_or_null(out.xty, design_names));
  report.released("released_columns", design_names);
  report.released("ridge", out.ridge);
  report.released("coefficients", keyed_or_null(data_units, design_names));
  report.released("coefficients_standardized", keyed_or_null(out.coefficients, design_names));
  return report.finish();
}

}  // namespace dpmu::api
