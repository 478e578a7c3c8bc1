/// @file lei_baseline.cpp
/// Experiments of the LCSSF baseline (Lei, Charest, Slavković, Smith & Fienberg 2018; docs/methods.md §6):
///  * `lei_simulation` — their Figures 1–2 (§6.6): X n×6 iid U[−1, 1], Y = Xβ0 + N(0, 1), β0 model 1
///    or 2; a new data set per replicate (data stream keyed by n and beta_model only, so every R, ε
///    and calibration sees the same data sets). Each replicate runs Algorithm 1 (or 2) at every φ of
///    a grid on [0, n/2]. The noise is drawn once per replicate and shared by the φ values (common
///    random numbers across φ): at each φ the selection has exactly the law of lcssf_algorithm1.
///    Metric: whether the selected model equals the truth {1, 2, 3}, per φ.
///  * `lei_real_data` — repeated releases on a fixed data set (prostate, 97 rows; cps09mar as the
///    documented large-n stand-in, docs/methods.md §6.7): selection frequency of every model.
///  * `selection_head_to_head` — on the same simulated data sets (LCSSF design), whether each method
///    selects the true model: LCSSF Algorithm 1 (ε) and Algorithm-2-like (ε/2, δ = 1/n, i.e. total
///    (ε, δ)), SSP model averaging (Peña & Barrientos 2024 §5) with Laplace (ε) and Wishart (ε, 1/n;
///    only ε < 1) noise, thresholded or not, highest-posterior and median-probability models, and
///    non-private best subset by BIC. A public bound r is shared by both DP methods.
/// Every reconstructed constant is a parameter with docs/methods.md A21's default.

#include "dpmu/experiments/lei_baseline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/lcssf.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/experiments/data_files.hpp"
#include "dpmu/runtime/data_table.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

Eigen::VectorXd lei_true_coefficients(const std::string& beta_model) {
  Eigen::VectorXd b(6);
  if (beta_model == "model1") {
    b << 1.0, 1.0, 1.0, 0.0, 0.0, 0.0;
  } else if (beta_model == "model2") {
    b << 1.5, 1.0, 0.5, 0.0, 0.0, 0.0;
  } else {
    throw std::invalid_argument("beta_model: '" + beta_model + "' must be model1 or model2");
  }
  return b;
}

LeiData lei_simulate_data(int n, const Eigen::VectorXd& beta, core::RngStream& rng) {
  const auto d = beta.size();
  LeiData out{Eigen::MatrixXd(n, d), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) out.x(i, j) = 2.0 * core::uniform_open01(rng) - 1.0;
    out.y(i) = out.x.row(i).dot(beta) + core::standard_normal(rng);
  }
  return out;
}

std::vector<double> lei_penalty_grid(int n, int num_penalties) {
  std::vector<double> g(static_cast<std::size_t>(num_penalties));
  for (int k = 0; k < num_penalties; ++k) g[static_cast<std::size_t>(k)] = 0.5 * n * k / (num_penalties - 1.0);
  return g;
}

namespace {

using runtime::Cell;

/// "phi=0", "phi=125", ...: the components of the per-phi metrics of a cell (lei_penalty_grid).
std::vector<std::string> penalty_labels(const Cell& cell) {
  std::vector<std::string> out;
  for (double phi :
       lei_penalty_grid(static_cast<int>(cell.get_int("n")), static_cast<int>(cell.get_int("num_penalties")))) {
    std::ostringstream os;
    os.precision(12);
    os << "phi=" << phi;
    out.push_back(os.str());
  }
  return out;
}
using runtime::MetricSpec;
using runtime::ParameterSpec;
using runtime::ParameterType;

/// Parameters shared by both experiments: the constants of docs/methods.md A21.
std::vector<ParameterSpec> lcssf_parameters() {
  return {
      {.name = "algorithm",
       .type = ParameterType::integer,
       .default_value = std::int64_t{1},
       .min = 1.0,
       .max = 2.0,
       .description = "1 = Algorithm 1 (epsilon-DP), 2 = Algorithm-2-like placeholder ((2 epsilon, delta)-DP)"},
      {.name = "epsilon",
       .type = ParameterType::real,
       .min = 0.0,
       .min_inclusive = false,
       .description = "privacy parameter epsilon > 0"},
      {.name = "delta",
       .type = ParameterType::real,
       .default_value = 0.01,
       .min = 0.0,
       .max = 1.0,
       .min_inclusive = false,
       .max_inclusive = false,
       .description = "delta in (0, 1), Algorithm 2 only"},
      {.name = "radius",
       .type = ParameterType::real,
       .min = 0.0,
       .min_inclusive = false,
       .description = "R > 0, l1 bound on the coefficients"},
      {.name = "lcssf_delta",
       .type = ParameterType::string,
       .default_value = std::string("r2_1pR2"),
       .allowed = {"r2_1pR2", "rpR_2", "1pR_2"},
       .description = "sensitivity reading [U] (docs/methods.md §6.6)"},
      {.name = "noise_factor",
       .type = ParameterType::real,
       .default_value = 2.0,
       .min = 0.0,
       .min_inclusive = false,
       .description = "kappa: Algorithm 1 Laplace scale kappa*c*Delta_S/epsilon [U]"},
      {.name = "objective_scale",
       .type = ParameterType::real,
       .default_value = 0.5,
       .min = 0.0,
       .min_inclusive = false,
       .description = "c in L* = c*RSS + phi*|M| [U] (0.5 = 1/(2 sigma^2))"},
      {.name = "variance_floor",
       .type = ParameterType::real,
       .default_value = 0.01,
       .min = 0.0,
       .min_inclusive = false,
       .description = "Algorithm 2: public floor of the released variance [R]"},
      {.name = "alg2_selection",
       .type = ParameterType::string,
       .default_value = std::string("exponential_mechanism"),
       .allowed = {"exponential_mechanism", "noisy_min"},
       .description = "Algorithm 2 selection step [U]"},
  };
}

core::LcssfSettings settings_of(const Cell& cell, double data_bound, double penalty) {
  core::LcssfSettings s;
  s.radius = cell.get_double("radius");
  s.penalty = penalty;
  s.data_bound = data_bound;
  s.delta_kind = core::lcssf_delta_from_string(cell.get_string("lcssf_delta"));
  s.objective_scale = cell.get_double("objective_scale");
  s.noise_factor = cell.get_double("noise_factor");
  s.variance_floor = cell.get_double("variance_floor");
  s.alg2_selection = core::alg2_selection_from_string(cell.get_string("alg2_selection"));
  return s;
}

/// Selections at every penalty in `penalties`, sharing one draw of the noise (see file comment).
/// Algorithm 1: W_M = laplace(noise, 1)·b, the same numbers lcssf_algorithm1 draws with scale b.
/// Algorithm 2: one Laplace for τ², then one uniform (exponential mechanism; inversion as in
/// sample_log_probabilities) or 2^d unit Laplace draws (noisy_min).
/// Returns (selected, non-private minimiser) per penalty.
std::vector<std::pair<core::ModelMask, core::ModelMask>> select_over_penalties(
    const core::LcssfSelection& prep, std::size_t n, const core::LcssfSettings& base, int algorithm, double epsilon,
    double delta, const std::vector<double>& penalties, core::RngStream& noise) {
  const std::size_t m = prep.models.size();
  std::vector<std::pair<core::ModelMask, core::ModelMask>> out;
  out.reserve(penalties.size());
  if (algorithm == 1) {
    const double scale = base.noise_factor * base.objective_scale * prep.rss_l1_sensitivity / epsilon;
    std::vector<double> w(m);
    for (auto& v : w) v = core::laplace(noise, 1.0) * scale;
    for (double phi : penalties) {
      const auto scores = core::penalized_least_squares_scores(prep.rss, prep.models, base.objective_scale, phi);
      std::size_t best = 0, best_np = 0;
      double best_v = 0.0;
      for (std::size_t j = 0; j < m; ++j) {
        const double v = scores[j] + w[j];
        if (j == 0 || v < best_v) {
          best = j;
          best_v = v;
        }
        if (scores[j] < scores[best_np]) best_np = j;
      }
      out.emplace_back(prep.models[best], prep.models[best_np]);
    }
    return out;
  }
  // Algorithm 2: release τ² once (it does not depend on φ)
  const double nd = static_cast<double>(n);
  const double min_rss = *std::min_element(prep.rss.begin(), prep.rss.end());
  const double b = prep.rss_l1_sensitivity / (nd * epsilon);
  const double released = min_rss / nd + core::laplace(noise, b) - b * std::log(1.0 / (2.0 * delta));
  const double tau2 = std::max(released, base.variance_floor);
  const double dl = core::profile_likelihood_l1_sensitivity(prep.rss_l1_sensitivity, tau2);
  std::vector<double> w(m);
  double u = 0.0;
  if (base.alg2_selection == core::Alg2Selection::noisy_min) {
    for (auto& v : w) v = core::laplace(noise, 1.0) * (2.0 * dl / epsilon);
  } else {
    u = core::uniform_open01(noise);
  }
  for (double phi : penalties) {
    const auto scores = core::profile_likelihood_scores(prep.rss, prep.models, n, phi, tau2);
    std::size_t best_np = 0;
    for (std::size_t j = 1; j < m; ++j) {
      if (scores[j] < scores[best_np]) best_np = j;
    }
    std::size_t best = 0;
    if (base.alg2_selection == core::Alg2Selection::noisy_min) {
      double best_v = 0.0;
      for (std::size_t j = 0; j < m; ++j) {
        const double v = scores[j] + w[j];
        if (j == 0 || v < best_v) {
          best = j;
          best_v = v;
        }
      }
    } else {
      const auto lp = core::exponential_mechanism_log_probabilities(scores, epsilon, dl);
      const double hi = *std::max_element(lp.begin(), lp.end());
      double total = 0.0;
      for (double v : lp) total += std::exp(v - hi);
      const double target = u * total;
      double cum = 0.0;
      best = m - 1;
      for (std::size_t j = 0; j < m; ++j) {
        cum += std::exp(lp[j] - hi);
        if (target < cum) {
          best = j;
          break;
        }
      }
    }
    out.emplace_back(prep.models[best], prep.models[best_np]);
  }
  return out;
}

class LeiSimulation final : public runtime::TypedExperiment<runtime::Nothing, LeiData> {
 public:
  std::string name() const override { return "lei_simulation"; }

  std::vector<ParameterSpec> parameters() const override {
    auto ps = lcssf_parameters();
    ps.push_back({.name = "n",
                  .type = ParameterType::integer,
                  .data_factor = true,
                  .min = 7.0,
                  .description = "rows per simulated data set"});
    ps.push_back({.name = "beta_model",
                  .type = ParameterType::string,
                  .data_factor = true,
                  .allowed = {"model1", "model2"},
                  .description = "model1: beta0 = (1,1,1,0,0,0); model2: (1.5,1,0.5,0,0,0)"});
    ps.push_back({.name = "num_penalties",
                  .type = ParameterType::integer,
                  .default_value = std::int64_t{51},
                  .min = 2.0,
                  .max = 1001.0,
                  .description = "phi grid size on [0, n/2] [R]"});
    ps.push_back({.name = "data_bound_rule",
                  .type = ParameterType::string,
                  .default_value = std::string("max_abs_y"),
                  .allowed = {"max_abs_y", "max_y", "fixed"},
                  .description = "r per data set: max|Y| (A22, default), max Y (LCSSF literal), or data_bound"});
    ps.push_back({.name = "data_bound",
                  .type = ParameterType::real,
                  .default_value = 1.0,
                  .min = 0.0,
                  .min_inclusive = false,
                  .description = "r when data_bound_rule = fixed"});
    return ps;
  }

  std::vector<MetricSpec> metrics(const Cell& cell) const override {
    const auto k = static_cast<std::size_t>(cell.get_int("num_penalties"));
    return {{.name = "prob_true_model",
             .size = k,
             .is_vector = true,
             .description = "1 if the private selection equals the true model {1,2,3}, per phi",
             .component_labels = penalty_labels(cell)},
            {.name = "non_private_prob_true_model",
             .size = k,
             .is_vector = true,
             .description = "1 if the non-private minimiser of the same score equals the truth, per phi",
             .component_labels = penalty_labels(cell)},
            {.name = "penalty",
             .size = k,
             .is_vector = true,
             .description = "the phi grid (same every replicate)",
             .component_labels = penalty_labels(cell)},
            {.name = "data_bound", .description = "r used for this data set"},
            {.name = "clamped_entries", .description = "entries of X and Y clamped into the bound"}};
  }

  LeiData generate(const Cell& data_cell, core::RngStream& data) const override {
    return lei_simulate_data(static_cast<int>(data_cell.get_int("n")),
                             lei_true_coefficients(data_cell.get_string("beta_model")), data);
  }

  void analyse(const Cell& cell, const runtime::Nothing&, const LeiData& d, core::RngStream& noise,
               runtime::MetricWriter& out) const override {
    const int n = static_cast<int>(cell.get_int("n"));
    const int k = static_cast<int>(cell.get_int("num_penalties"));
    const std::string& rule = cell.get_string("data_bound_rule");
    const double r = rule == "fixed"   ? cell.get_double("data_bound")
                     : rule == "max_y" ? d.y.maxCoeff()
                                       : d.y.cwiseAbs().maxCoeff();
    const int algorithm = static_cast<int>(cell.get_int("algorithm"));
    const double epsilon = cell.get_double("epsilon");
    const core::LcssfSettings s = settings_of(cell, r, 0.0);
    const core::LcssfSelection prep = core::lcssf_prepare("lei_simulation", d.x, d.y, s, epsilon, algorithm == 2);
    const auto penalties = lei_penalty_grid(n, k);
    const auto sel = select_over_penalties(prep, static_cast<std::size_t>(n), s, algorithm, epsilon,
                                           cell.get_double("delta"), penalties, noise);
    constexpr core::ModelMask kTruth = 0b000111;
    for (std::size_t i = 0; i < static_cast<std::size_t>(k); ++i) {
      out.set("prob_true_model", i, sel[i].first == kTruth ? 1.0 : 0.0);
      out.set("non_private_prob_true_model", i, sel[i].second == kTruth ? 1.0 : 0.0);
      out.set("penalty", i, penalties[i]);
    }
    out.set("data_bound", r);
    out.set("clamped_entries", static_cast<double>(prep.clamped_x_entries + prep.clamped_y_entries));
  }
};

struct RealDataSetup {
  core::LcssfSelection prep;
  std::size_t n = 0;
  int d = 0;
};

/// The file a cell reads: data_file, or experiments/data/<data_set>.csv when it is empty.
std::string real_data_path(const Cell& cell) {
  const std::string& file = cell.get_string("data_file");
  return file.empty() ? "experiments/data/" + cell.get_string("data_set") + ".csv" : file;
}

/// The columns of a data set, read (columns missing, non-numeric or NaN values are read_csv's
/// errors) and checked: a constant column would make its standardisation divide by zero.
std::shared_ptr<const runtime::DataTable> read_real_data(const Cell& cell, const std::vector<std::string>& cols) {
  std::shared_ptr<const runtime::DataTable> t;
  try {
    t = read_csv_cached(resolve_data_file(cell, real_data_path(cell)), cols);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw std::invalid_argument(what.rfind("data_file: ", 0) == 0 ? what : "data_file: " + what);
  }
  for (const auto& c : cols) {
    check_not_constant(*t, c, "data_file", "it cannot be standardised (data_set " + cell.get_string("data_set") + ")");
  }
  return t;
}

/// Predictors (names, matrix) and response of a cell's data set, standardised (non-private
/// preprocessing, as LCSSF's "standardized" data; docs/lcssf.md).
void load_real_data(const Cell& cell, Eigen::MatrixXd& x, Eigen::VectorXd& y) {
  const std::string& data_set = cell.get_string("data_set");
  if (data_set == "prostate") {
    const std::vector<std::string> cols{"lcavol", "lweight", "age", "lbph", "svi", "lcp", "gleason", "pgg45", "lpsa"};
    const auto table = read_real_data(cell, cols);
    const auto& t = *table;
    const std::vector<std::string> preds(cols.begin(), cols.end() - 1);
    x = t.matrix(preds);
    const auto& v = t.column("lpsa");
    y = Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
  } else {  // cps09mar: PB §5.2.2 design from the 2009 stand-in (experiments/data/cps09mar.README.md)
    const std::vector<std::string> cols{"age", "female", "education", "earnings", "race", "marital"};
    const auto table = read_real_data(cell, cols);
    const auto& t = *table;
    const auto n = static_cast<Eigen::Index>(t.rows());
    x.resize(n, 6);
    y.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto u = static_cast<std::size_t>(i);
      const double age = t.column("age")[u];
      x(i, 0) = age;
      x(i, 1) = age * age;
      x(i, 2) = t.column("marital")[u] == 1.0 ? 1.0 : 0.0;
      x(i, 3) = 1.0 - t.column("female")[u];
      x(i, 4) = t.column("education")[u];
      x(i, 5) = t.column("race")[u] == 1.0 ? 1.0 : 0.0;
      y(i) = t.column("earnings")[u];
    }
  }
  core::standardize_columns(x, y);
}

class LeiRealData final : public runtime::TypedExperiment<RealDataSetup> {
 public:
  std::string name() const override { return "lei_real_data"; }

  std::vector<ParameterSpec> parameters() const override {
    auto ps = lcssf_parameters();
    ps.push_back({.name = "data_set",
                  .type = ParameterType::string,
                  .data_factor = true,
                  .default_value = std::string("prostate"),
                  .allowed = {"prostate", "cps09mar"},
                  .description = "prostate (lpsa on 8 predictors) or cps09mar (earnings on PB's 6 terms)"});
    ps.push_back({.name = "data_file",
                  .type = ParameterType::string,
                  .data_factor = true,
                  .default_value = std::string(""),
                  .description = "CSV path (empty: experiments/data/<data_set>.csv; relative: the config's folder, "
                                 "then the source tree)",
                  .path = true});
    ps.push_back({.name = "penalty", .type = ParameterType::real, .min = 0.0, .description = "phi >= 0"});
    ps.push_back({.name = "data_bound",
                  .type = ParameterType::real,
                  .min = 0.0,
                  .min_inclusive = false,
                  .description = "public r on the standardised scale (values beyond are clamped and counted)"});
    return ps;
  }

  std::vector<MetricSpec> metrics(const Cell& cell) const override {
    const std::size_t models = cell.get_string("data_set") == "prostate" ? 256 : 64;
    return {{.name = "selection_frequency",
             .size = models,
             .is_vector = true,
             .description = "indicator of the selected model (mask = index); its mean is the frequency"},
            {.name = "selected_model", .description = "mask of the selected model"},
            {.name = "selected_non_private_minimiser",
             .description = "1 if the selection equals the non-private "
                            "minimiser of the same score"},
            {.name = "model_size", .description = "size of the selected model"}};
  }

  std::vector<runtime::DataFile> data_files(const Cell& cell) const override {
    return {data_file(cell, "data_file", real_data_path(cell))};
  }

  void check_data(const Cell& cell) const override {
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    load_real_data(cell, x, y);
  }

  RealDataSetup prepare(const Cell& cell, core::RngStream&, runtime::SharedCalibration&) const override {
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    load_real_data(cell, x, y);
    RealDataSetup s;
    const core::LcssfSettings st = settings_of(cell, cell.get_double("data_bound"), cell.get_double("penalty"));
    s.prep = core::lcssf_prepare("lei_real_data", x, y, st, cell.get_double("epsilon"), cell.get_int("algorithm") == 2);
    s.n = static_cast<std::size_t>(x.rows());
    s.d = static_cast<int>(x.cols());
    return s;
  }

  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell& cell,
                                                                               const RealDataSetup& s) const override {
    const core::LcssfSettings st = settings_of(cell, cell.get_double("data_bound"), cell.get_double("penalty"));
    // non-private minimiser of the (untruncated, for Algorithm 2) score at this penalty
    const auto scores =
        cell.get_int("algorithm") == 1
            ? core::penalized_least_squares_scores(s.prep.rss, s.prep.models, st.objective_scale, st.penalty)
            : core::profile_likelihood_scores(s.prep.rss, s.prep.models, s.n, st.penalty, 0.0);
    const auto best = static_cast<std::size_t>(std::min_element(scores.begin(), scores.end()) - scores.begin());
    return {{"n", {static_cast<double>(s.n)}},
            {"clamped_x_entries", {static_cast<double>(s.prep.clamped_x_entries)}},
            {"clamped_y_entries", {static_cast<double>(s.prep.clamped_y_entries)}},
            {"rss_l1_sensitivity", {s.prep.rss_l1_sensitivity}},
            {"non_private_minimiser", {static_cast<double>(s.prep.models[best])}},
            {"dp_valid", {s.prep.dp_valid ? 1.0 : 0.0}}};
  }

  void analyse(const Cell& cell, const RealDataSetup& s, const runtime::Nothing&, core::RngStream& noise,
               runtime::MetricWriter& out) const override {
    const core::LcssfSettings st = settings_of(cell, cell.get_double("data_bound"), cell.get_double("penalty"));
    const auto sel =
        select_over_penalties(s.prep, s.n, st, static_cast<int>(cell.get_int("algorithm")), cell.get_double("epsilon"),
                              cell.get_double("delta"), {cell.get_double("penalty")}, noise);
    const std::size_t models = s.prep.models.size();
    for (std::size_t j = 0; j < models; ++j) out.set("selection_frequency", j, j == sel[0].first ? 1.0 : 0.0);
    out.set("selected_model", static_cast<double>(sel[0].first));
    out.set("selected_non_private_minimiser", sel[0].first == sel[0].second ? 1.0 : 0.0);
    out.set("model_size", static_cast<double>(core::model_size(sel[0].first)));
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_lei_simulation() { return std::make_unique<LeiSimulation>(); }
std::unique_ptr<runtime::Experiment> make_lei_real_data() { return std::make_unique<LeiRealData>(); }

}  // namespace dpmu::experiments

// ---------------------------------------------------------------------------------------------
// selection_head_to_head
// ---------------------------------------------------------------------------------------------

namespace dpmu::experiments {
namespace {

/// The methods compared (the `method` axis), each an ordinary grid value of its own cells.
enum class HeadToHeadMethod {
  lcssf_algorithm1,         ///< LCSSF Algorithm 1, ε-DP, at every φ of the grid
  lcssf_algorithm2,         ///< LCSSF Algorithm-2-like, ε/2 per step and δ = 1/n: total (ε, δ)
  ssp_laplace,              ///< SSP model averaging, Laplace G* (ε-DP), G*_r
  ssp_laplace_thresholded,  ///< the same, hard-thresholded G**_r
  ssp_wishart,              ///< SSP model averaging, Wishart G* ((ε, 1/n)-DP, ε < 1)
  ssp_wishart_thresholded,  ///< the same, hard-thresholded
  bic_best_subset,          ///< non-private best subset by BIC (confidential, unclamped data)
};

/// The spelling of each method (the `method` axis's allowed values and the parser read this one table).
constexpr std::array<std::pair<std::string_view, HeadToHeadMethod>, 7> kHeadToHeadMethods{{
    {"lcssf_algorithm1", HeadToHeadMethod::lcssf_algorithm1},
    {"lcssf_algorithm2", HeadToHeadMethod::lcssf_algorithm2},
    {"ssp_laplace", HeadToHeadMethod::ssp_laplace},
    {"ssp_laplace_thresholded", HeadToHeadMethod::ssp_laplace_thresholded},
    {"ssp_wishart", HeadToHeadMethod::ssp_wishart},
    {"ssp_wishart_thresholded", HeadToHeadMethod::ssp_wishart_thresholded},
    {"bic_best_subset", HeadToHeadMethod::bic_best_subset},
}};

HeadToHeadMethod parse_head_to_head_method(const std::string& s) {
  for (const auto& [name, method] : kHeadToHeadMethods)
    if (name == s) return method;
  throw std::invalid_argument("method: unknown method '" + s + "'");
}

std::vector<std::string> head_to_head_method_names() {
  std::vector<std::string> names;
  for (const auto& entry : kHeadToHeadMethods) names.emplace_back(entry.first);
  return names;
}

bool is_lcssf(HeadToHeadMethod m) {
  switch (m) {
    case HeadToHeadMethod::lcssf_algorithm1:
    case HeadToHeadMethod::lcssf_algorithm2:
      return true;
    case HeadToHeadMethod::ssp_laplace:
    case HeadToHeadMethod::ssp_laplace_thresholded:
    case HeadToHeadMethod::ssp_wishart:
    case HeadToHeadMethod::ssp_wishart_thresholded:
    case HeadToHeadMethod::bic_best_subset:
      return false;
  }
  return false;
}

/// Per-cell constants of an SSP cell (ridge and threshold depend only on public parameters).
struct HeadToHeadSetup {
  HeadToHeadMethod method = HeadToHeadMethod::bic_best_subset;
  std::optional<core::SspMechanism> mechanism;  // SSP cells only
  bool thresholded = false;
  double ridge = 0.0;
  double threshold = 0.0;
};

class SelectionHeadToHead final : public runtime::TypedExperiment<HeadToHeadSetup, LeiData> {
 public:
  std::string name() const override { return "selection_head_to_head"; }

  std::vector<ParameterSpec> parameters() const override {
    auto ps = lcssf_parameters();
    ps.push_back({.name = "n",
                  .type = ParameterType::integer,
                  .data_factor = true,
                  .min = 20.0,
                  .description = "rows per simulated data set"});
    ps.push_back({.name = "beta_model",
                  .type = ParameterType::string,
                  .data_factor = true,
                  .default_value = std::string("model1"),
                  .allowed = {"model1", "model2"},
                  .description = "LCSSF design (X iid U[-1,1], 6 predictors)"});
    ps.push_back({.name = "method",
                  .type = ParameterType::string,
                  .allowed = head_to_head_method_names(),
                  .description = "the selection method of the cell (ssp_wishart* need epsilon < 1)"});
    ps.push_back({.name = "data_bound",
                  .type = ParameterType::real,
                  .default_value = 4.0,
                  .min = 0.0,
                  .min_inclusive = false,
                  .description = "public bound shared by both methods: LCSSF r, SSP bounds [-r, r] (centred data)"});
    ps.push_back({.name = "num_penalties",
                  .type = ParameterType::integer,
                  .default_value = std::int64_t{11},
                  .min = 2.0,
                  .max = 1001.0,
                  .description = "LCSSF phi grid on [0, n/2]"});
    ps.push_back({.name = "threshold_percentile",
                  .type = ParameterType::real,
                  .default_value = 0.95,
                  .min = 0.0,
                  .max = 1.0,
                  .min_inclusive = false,
                  .max_inclusive = false,
                  .description = "SSP hard-threshold percentile lambda (absolute reference)"});
    ps.push_back({.name = "ridge_draws",
                  .type = ParameterType::integer,
                  .default_value = std::int64_t{2000},
                  .min = 10.0,
                  .description = "Monte Carlo draws for the Laplace ridge (99th percentile)"});
    ps.push_back({.name = "coefficient_prior",
                  .type = ParameterType::string,
                  .default_value = std::string("zellner-siow"),
                  .description = "SSP model averaging prior"});
    return ps;
  }

  void validate(const Cell& cell) const override {
    const HeadToHeadMethod m = parse_head_to_head_method(cell.get_string("method"));
    if ((m == HeadToHeadMethod::ssp_wishart || m == HeadToHeadMethod::ssp_wishart_thresholded) &&
        !(cell.get_double("epsilon") < 1.0)) {
      throw std::invalid_argument(
          "method: the Wishart mechanism needs epsilon < 1; leave ssp_wishart out of the cells with epsilon >= 1 "
          "(a separate grid block, or exclude:)");
    }
  }

  std::vector<MetricSpec> metrics(const Cell& cell) const override {
    const auto k = static_cast<std::size_t>(cell.get_int("num_penalties"));
    return {
        {.name = "correct_per_penalty",
         .size = k,
         .is_vector = true,
         .description = "LCSSF: 1 if the model selected at this phi is the truth {1,2,3} (NaN for other methods)",
         .component_labels = penalty_labels(cell)},
        {.name = "hpm_correct",
         .description = "SSP: 1 if the highest posterior model is the truth; BIC: the best subset (NaN for LCSSF)"},
        {.name = "mpm_correct",
         .description = "SSP: 1 if the median probability model is the truth (NaN for LCSSF and BIC)"},
    };
  }

  HeadToHeadSetup prepare(const Cell& cell, core::RngStream& calibration, runtime::SharedCalibration&) const override {
    HeadToHeadSetup s;
    s.method = parse_head_to_head_method(cell.get_string("method"));
    const double r = cell.get_double("data_bound");
    const double epsilon = cell.get_double("epsilon");
    const double n = static_cast<double>(cell.get_int("n"));
    const double lambda = cell.get_double("threshold_percentile");
    switch (s.method) {
      case HeadToHeadMethod::lcssf_algorithm1:
      case HeadToHeadMethod::lcssf_algorithm2:
      case HeadToHeadMethod::bic_best_subset:
        return s;
      case HeadToHeadMethod::ssp_laplace:
      case HeadToHeadMethod::ssp_laplace_thresholded:
        s.mechanism = core::SspMechanism{
            .kind = core::SspMechanismKind::laplace, .p = 6, .lower = -r, .upper = r, .epsilon = epsilon, .delta = 0.0};
        s.ridge =
            core::monte_carlo_regularization(*s.mechanism, calibration, static_cast<int>(cell.get_int("ridge_draws")));
        break;
      case HeadToHeadMethod::ssp_wishart:
      case HeadToHeadMethod::ssp_wishart_thresholded:
        s.mechanism = core::SspMechanism{.kind = core::SspMechanismKind::wishart,
                                         .p = 6,
                                         .lower = -r,
                                         .upper = r,
                                         .epsilon = epsilon,
                                         .delta = 1.0 / n};
        s.ridge = core::wishart_regularization(*s.mechanism);
        break;
    }
    s.thresholded =
        s.method == HeadToHeadMethod::ssp_laplace_thresholded || s.method == HeadToHeadMethod::ssp_wishart_thresholded;
    if (s.thresholded) s.threshold = core::threshold_value(*s.mechanism, lambda);
    return s;
  }

  LeiData generate(const Cell& data_cell, core::RngStream& data) const override {
    return lei_simulate_data(static_cast<int>(data_cell.get_int("n")),
                             lei_true_coefficients(data_cell.get_string("beta_model")), data);
  }

  void analyse(const Cell& cell, const HeadToHeadSetup& setup, const LeiData& d, core::RngStream& noise,
               runtime::MetricWriter& out) const override {
    const int n = static_cast<int>(cell.get_int("n"));
    const int k = static_cast<int>(cell.get_int("num_penalties"));
    const double epsilon = cell.get_double("epsilon");
    const double r = cell.get_double("data_bound");
    const double nd = static_cast<double>(n);
    constexpr core::ModelMask kTruth = 0b000111;

    if (is_lcssf(setup.method)) {  // LCSSF: public r, raw (uncentred) data as in LCSSF's no-intercept model
      const core::LcssfSettings s = settings_of(cell, r, 0.0);
      const auto penalties = lei_penalty_grid(n, k);
      const core::LcssfSelection prep = core::lcssf_prepare("selection_head_to_head", d.x, d.y, s, epsilon, false);
      // Algorithm 2 is (2ε', δ)-DP: ε' = ε/2 and δ = 1/n for the same total budget
      const bool alg1 = setup.method == HeadToHeadMethod::lcssf_algorithm1;
      const auto sel =
          alg1 ? select_over_penalties(prep, static_cast<std::size_t>(n), s, 1, epsilon, 0.0, penalties, noise)
               : select_over_penalties(prep, static_cast<std::size_t>(n), s, 2, epsilon / 2.0, 1.0 / nd, penalties,
                                       noise);
      for (std::size_t i = 0; i < sel.size(); ++i)
        out.set("correct_per_penalty", i, sel[i].first == kTruth ? 1.0 : 0.0);
      return;
    }
    // SSP and BIC: centred data (sample means, as `dpmu bma`)
    Eigen::MatrixXd dm(n, 7);
    dm.leftCols(6) = d.x;
    dm.col(6) = d.y;
    const Eigen::RowVectorXd means = dm.colwise().mean();
    dm.rowwise() -= means;
    core::BmaOptions opt;
    opt.credible_level = 0.0;  // no metric uses the credible intervals
    opt.keep_all_models = false;
    opt.top_models = 1;
    if (!setup.mechanism) {  // non-private best subset by BIC on the confidential, unclamped centred data
      const Eigen::MatrixXd g_np = dm.transpose() * dm;
      const auto bic = core::bayesian_model_averaging(g_np, nd, core::parse_coefficient_prior("bic"),
                                                      core::ModelPrior{core::ModelPriorKind::uniform}, opt);
      out.set("hpm_correct", bic.highest_posterior_model == kTruth ? 1.0 : 0.0);
      return;
    }
    // SSP: clamped into [-r, r], G = D'D, released as G*_r or G**_r
    const Eigen::MatrixXd gram = core::gram_matrix(dm, -r, r);
    const Eigen::MatrixXd noisy = core::noisy_gram_matrix(gram, *setup.mechanism, noise);
    const Eigen::MatrixXd released =
        core::regularize(setup.thresholded ? core::hard_threshold(noisy, setup.threshold) : noisy, setup.ridge).matrix;
    const auto res = core::bayesian_model_averaging(
        released, nd, core::parse_coefficient_prior(cell.get_string("coefficient_prior")), core::ModelPrior{}, opt);
    out.set("hpm_correct", res.highest_posterior_model == kTruth ? 1.0 : 0.0);
    out.set("mpm_correct", res.median_probability_model == kTruth ? 1.0 : 0.0);
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_selection_head_to_head() { return std::make_unique<SelectionHeadToHead>(); }

}  // namespace dpmu::experiments
