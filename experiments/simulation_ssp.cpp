/// @file simulation_ssp.cpp
/// `ssp_simulation`: the simulation study of Peña & Barrientos (2024, JMLR 25) §5.2.1
/// (Figures 3, 4 with the Zellner–Siow prior; Appendix C Figures 8, 9 with BIC).
///
/// Data factors (p, |T|, z, n, n_scale): one data set per (data key, replicate), streamed into its
/// centred Gram matrix G (simulate_gram_matrix) by generate(). Method axes (mechanism none /
/// laplace / wishart, epsilon, thresholded, prior, ...): analyse() releases G* = G + E from the
/// cell's noise stream (mechanism none: G itself), hard-thresholds it if thresholded (PB §5.3,
/// post-processing), adds the ridge and runs model averaging. Mechanism adassp is the baseline
/// AdaSSP (Wang 2018; docs/methods.md "AdaSSP") on the same G: its ridge-regression point estimate,
/// for the PMSE head to head (configs/head_to_head_pmse.yaml); mechanism adassp-bma releases y'y too
/// (AdaSSP's budget in four) and analyses [X̂'X + λI, X̂'y; ·, ŷ'y] by model averaging as the paper
/// analyses G*_r ("AdaSSP plug-in": PMSE and P(true model)). The engine generates each data set
/// once and analyses it for every method cell (common random numbers).

#include "dpmu/experiments/simulation_ssp.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/core/adassp.hpp"
#include "dpmu/core/block_random.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/model_space.hpp"
#include "dpmu/core/priors.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/experiments/simulation_cost.hpp"
#include "dpmu/experiments/simulation_gram.hpp"
#include "dpmu/experiments/ssp_release.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

SimulationDesign simulation_design(int p, int true_model_size, double z) {
  constexpr const char* fn = "simulation_design";
  if (p < 1 || p > 30) core::throw_domain(fn, "p", p, "in [1, 30]");
  if (true_model_size < 0 || true_model_size > p) {
    core::throw_domain(fn, "true_model_size", true_model_size, "in [0, p]");
  }
  core::check_positive_finite(fn, "z", z);
  SimulationDesign d;
  d.p = p;
  d.true_model_size = true_model_size;
  d.coefficient = true_model_size == 0 ? 0.0 : 1.0 / (z * std::sqrt(static_cast<double>(true_model_size)));
  d.sigma = std::sqrt(8.0 / 3.0) / z;
  return d;
}

Eigen::VectorXd design_coefficients(const SimulationDesign& design) {
  if (!design.coefficients.empty()) {
    if (design.coefficients.size() != static_cast<std::size_t>(design.p)) {
      core::throw_invalid("design_coefficients", "coefficients must have length p");
    }
    return Eigen::Map<const Eigen::VectorXd>(design.coefficients.data(), design.p);
  }
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(design.p);
  beta.head(design.true_model_size).setConstant(design.coefficient);
  return beta;
}

namespace {
constexpr int kBlocksPerPartial = 64;  // partial sums over 16 384 rows, then added to the total
}  // namespace

SimulatedRows::SimulatedRows(const SimulationDesign& design, std::uint64_t key0, std::uint64_t key1)
    : design_(design),
      gen_(key0, key1),
      words_(static_cast<std::size_t>(block_rows / 2)),
      sums_(static_cast<std::size_t>(block_rows)) {
  constexpr const char* fn = "SimulatedRows";
  (void)simulation_design(design.p, design.true_model_size, 1.0);  // range checks of p, |T|
  core::check_ordered_limits(fn, "lower", design.lower, "upper", design.upper);
  core::check_finite(fn, "coefficient", design.coefficient);
  core::check_finite(fn, "sigma", design.sigma);
  if (!design.coefficients.empty() || !design.widths.empty()) {
    core::throw_invalid(fn, "coefficients and widths are read by the exact sampler only (sample_gram_matrix)");
  }
}

void SimulatedRows::redraw_row(Eigen::MatrixXd& block, int i) {
  const int p = design_.p;
  for (int j = 0; j < p; j += 2) {
    const std::uint64_t word = gen_();
    double u[2];
    core::words_to_uniform32(std::span<const std::uint64_t>(&word, 1), design_.lower, design_.upper, u);
    block(i, j) = u[0];
    if (j + 1 < p) block(i, j + 1) = u[1];
  }
  const double w = design_.sigma * core::standard_normal_ziggurat(gen_);
  if (design_.true_model_size == 0) {
    block(i, p) = w;
    return;
  }
  double s = block(i, 0);
  for (int j = 1; j < design_.true_model_size; ++j) s += block(i, j);
  block(i, p) = w + design_.coefficient * s;
}

std::uint64_t SimulatedRows::next_block(Eigen::MatrixXd& block, int m) {
  const int p = design_.p;
  const int t = design_.true_model_size;
  const double lo = design_.lower;
  const double hi = design_.upper;
  if (block.rows() != block_rows || block.cols() != p + 1) block.resize(block_rows, p + 1);
  for (int j = 0; j < p; ++j) {
    gen_.fill_words(words_);
    core::words_to_uniform32(words_, lo, hi, std::span<double>(&block(0, j), block_rows));
  }
  double* y = &block(0, p);
  for (int i = 0; i < block_rows; ++i) y[i] = design_.sigma * core::standard_normal_ziggurat(gen_);
  if (t > 0) {
    // s_i = ((x_i0 + x_i1) + x_i2) + …, then y_i = σ w_i + b s_i (column-wise, so it vectorises).
    double* s = sums_.data();
    const double* x0 = &block(0, 0);
    for (int i = 0; i < block_rows; ++i) s[i] = x0[i];
    for (int j = 1; j < t; ++j) {
      const double* xj = &block(0, j);
      for (int i = 0; i < block_rows; ++i) s[i] += xj[i];
    }
    const double b = design_.coefficient;
    for (int i = 0; i < block_rows; ++i) y[i] += b * s[i];
  }
  // Redraw rule (docs/methods.md A6): y must lie in (lower, upper); redraws use the same generator.
  std::uint64_t redrawn = 0;
  for (int i = 0; i < m; ++i) {
    while (!(y[i] > lo && y[i] < hi)) {
      redraw_row(block, i);
      ++redrawn;
    }
  }
  if (m < block_rows) block.bottomRows(block_rows - m).setZero();
  return redrawn;
}

SimulatedGram simulate_gram_matrix(const SimulationDesign& design, std::uint64_t n, std::uint64_t key0,
                                   std::uint64_t key1, Eigen::MatrixXd* rows) {
  constexpr const char* fn = "simulate_gram_matrix";
  if (n < 2) core::throw_domain(fn, "n", static_cast<double>(n), ">= 2");
  SimulatedRows source(design, key0, key1);
  constexpr int R = SimulatedRows::block_rows;
  const int d = design.p + 1;
  Eigen::MatrixXd block(R, d);
  Eigen::MatrixXd total = Eigen::MatrixXd::Zero(d, d);
  Eigen::MatrixXd partial = Eigen::MatrixXd::Zero(d, d);
  Eigen::VectorXd sum_total = Eigen::VectorXd::Zero(d);
  Eigen::VectorXd sum_partial = Eigen::VectorXd::Zero(d);
  if (rows != nullptr) rows->resize(static_cast<Eigen::Index>(n), d);

  SimulatedGram out;
  std::uint64_t done = 0;
  int blocks_in_partial = 0;
  while (done < n) {
    const int m = static_cast<int>(std::min<std::uint64_t>(R, n - done));
    out.redrawn_rows += source.next_block(block, m);
    if (rows != nullptr) rows->middleRows(static_cast<Eigen::Index>(done), m) = block.topRows(m);
    core::accumulate_block_gram(block.data(), R, d, (m + 3) / 4 * 4, partial, sum_partial);
    done += static_cast<std::uint64_t>(m);
    if (++blocks_in_partial == kBlocksPerPartial) {
      total += partial;
      sum_total += sum_partial;
      partial.setZero();
      sum_partial.setZero();
      blocks_in_partial = 0;
    }
  }
  total += partial;
  sum_total += sum_partial;
  const Eigen::MatrixXd full = total.selfadjointView<Eigen::Lower>();
  out.gram = full - sum_total * sum_total.transpose() / static_cast<double>(n);
  return out;
}

double predictive_mse(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n,
                      const Eigen::Ref<const Eigen::VectorXd>& true_coefficients,
                      const Eigen::Ref<const Eigen::VectorXd>& estimate) {
  constexpr const char* fn = "predictive_mse";
  const Eigen::Index p = true_coefficients.size();
  if (gram.rows() != p + 1 || gram.cols() != p + 1 || estimate.size() != p) {
    core::throw_invalid(fn, "gram must be (p+1)x(p+1) and true_coefficients, estimate of length p");
  }
  core::check_positive_finite(fn, "n", n);
  const Eigen::VectorXd e = true_coefficients - estimate;
  return e.dot(gram.topLeftCorner(p, p) * e) / n;
}

namespace {

using runtime::Cell;
using runtime::MetricSpec;
using runtime::ParameterSpec;
using runtime::ParameterType;

/// What prepare() computes once per cell: the design, the prior and, for a private cell, the
/// mechanism with its ridge and threshold (functions of public parameters only).
struct Prepared {
  SimulationDesign design;
  std::uint64_t n = 0;
  core::CoefficientPrior prior;
  core::ModelPrior model_prior;
  std::optional<core::SspMechanism> mechanism;  ///< none for the non-private analysis and AdaSSP
  std::optional<core::AdaSspRelease> adassp;    ///< the AdaSSP baseline (mechanism adassp)
  bool thresholded = false;
  double regularization = std::nan("");
  double threshold = std::nan("");
  double negligible_log_odds = std::numeric_limits<double>::infinity();  ///< +inf: no pruning
};

class SspSimulation final : public runtime::TypedExperiment<Prepared, SimulatedGram> {
 public:
  std::string name() const override { return "ssp_simulation"; }

  std::vector<ParameterSpec> parameters() const override {
    std::vector<ParameterSpec> ps = {
        {.name = "n",
         .type = ParameterType::integer,
         .data_factor = true,
         .min = 3.0,
         .description = "sample size (rows per data set)"},
        {.name = "p",
         .type = ParameterType::integer,
         .data_factor = true,
         .min = 1.0,
         .max = 20.0,
         .description = "candidate predictors (intercept excluded)"},
        {.name = "true_model_size",
         .type = ParameterType::integer,
         .data_factor = true,
         .min = 0.0,
         .description = "|T|: the first |T| predictors have coefficient b"},
        {.name = "signal_z",
         .type = ParameterType::real,
         .data_factor = true,
         .default_value = 7.0,
         .min = 0.0,
         .min_inclusive = false,
         .description = "z of docs/methods.md A6: b = 1/(z sqrt|T|), sigma = sqrt(8/3)/z (SNR 1/2)"},
        {.name = "n_scale",
         .type = ParameterType::real,
         .data_factor = true,
         .default_value = 1.0,
         .min = 0.0,
         .max = 1.0,
         .min_inclusive = false,
         .description = "quick runs: simulate round(n * n_scale) rows (1 = paper size)"},
        {.name = "generator",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string("sufficient_statistics"),
         .allowed = {"sufficient_statistics", "rows"},
         .description = "sufficient_statistics: exact sampler of G (docs/methods.md §5.8); rows: row by row, "
                        "redrawing |y| >= upper"},
        {.name = "share_predictors",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string("none"),
         .allowed = {"none", "true_model_size", "true_model_size_and_n", "p_true_model_size_and_n"},
         .description = "work shared across cells (a config choice: changes the joint law across cells, never a "
                        "cell's; docs/methods.md §5.8): none; one X for the |T| of a (p, n); one stream of X rows "
                        "per p whose first n rows serve every n; or one stream for every p (its first p columns "
                        "and n rows); needs generator sufficient_statistics"},
        {.name = "mechanism",
         .type = ParameterType::string,
         .allowed = {"none", "laplace", "wishart", "adassp", "adassp-bma"},
         .description = "release of G: none (the non-private G), laplace or wishart (docs/methods.md §5); adassp: "
                        "the AdaSSP baseline's point estimate from G (docs/methods.md \"AdaSSP\"; PMSE only); "
                        "adassp-bma: AdaSSP's released statistics with y'y (budget in four) analysed by model "
                        "averaging (AdaSSP plug-in)"},
        {.name = "epsilon",
         .type = ParameterType::real,
         .default_value = std::numeric_limits<double>::infinity(),
         .min = 0.0,
         .min_inclusive = false,
         .description = "privacy budget of the mechanism (required unless mechanism is none; default inf = none)"},
        {.name = "thresholded",
         .type = ParameterType::integer,
         .default_value = std::int64_t{0},
         .min = 0.0,
         .max = 1.0,
         .description = "1: hard-threshold G* before the ridge (G**_r, docs/methods.md A9); 0: G*_r"},
        {.name = "prior",
         .type = ParameterType::string,
         .description = "coefficient prior (zellner_siow, bic, g_prior, hyper_g, robust, ...)"},
        {.name = "lower",
         .type = ParameterType::real,
         .default_value = -2.0,
         .description = "l: lower bound of the centred data for the mechanisms (< 0)"},
        {.name = "upper",
         .type = ParameterType::real,
         .default_value = 2.0,
         .description = "u: upper bound of the centred data for the mechanisms (> 0)"},
        {.name = "adassp_delta",
         .type = ParameterType::real,
         .default_value = 0.0,
         .min = 0.0,
         .max = 1.0,
         .max_inclusive = false,
         .description = "delta of AdaSSP (mechanism adassp); 0 means 1/n, the Wishart mechanism's",
         .keyed_at_default = false},  // added after results existed: the older cells keep their keys
        {.name = "wishart_delta",
         .type = ParameterType::real,
         .default_value = 0.0,
         .min = 0.0,
         .max = 1.0,
         .description = "delta of the Wishart mechanism; 0 means 1/n (paper)"},
        {.name = "ridge_quantile",
         .type = ParameterType::real,
         .default_value = core::kRidgeConfidence,
         .min = 0.0,
         .max = 1.0,
         .min_inclusive = false,
         .max_inclusive = false,
         .description = "ridge r = this quantile of -eigmin(E) (Laplace, and Wishart with mc99)"},
        {.name = "negligible_model_share",
         .type = ParameterType::real,
         .default_value = 0.0,
         .min = 0.0,
         .max = 1e-6,
         .description = "0: integrate every model; s > 0: skip the models whose total posterior share is provably "
                        "below s (BmaOptions::negligible_log_odds; mixture priors only; docs/bma.md)"},
        {.name = "pruning_share",
         .type = ParameterType::real,
         .default_value = 0.0,
         .min = 0.0,
         .max = 1e-6,
         .description = "as negligible_model_share, but it does not key the noise and calibration streams: a cell "
                        "draws the noise of the same cell without pruning, and its results equal that cell's within "
                        "s (docs/bma.md, docs/decisions.md 2026-12-03); not together with negligible_model_share",
         .keyed_at_default = false,
         .stream_neutral = true},
        {.name = "laplace_ridge_draws",
         .type = ParameterType::integer,
         .default_value = std::int64_t{100000},
         .min = 100.0,
         .description = "Monte Carlo draws of E for the Laplace ridge (once per mechanism and run)"},
    };
    // the release settings shared with cps_bma and linear_design, except their ridge_draws (this
    // experiment's is laplace_ridge_draws)
    for (auto& spec : ssp_release_parameters())
      if (spec.name != "ridge_draws") ps.push_back(std::move(spec));
    return ps;
  }

  void validate(const Cell& cell) const override {
    const auto p = cell.get_int("p");
    const auto t = cell.get_int("true_model_size");
    if (t > p) {
      throw std::invalid_argument("true_model_size: " + std::to_string(t) + " exceeds p = " + std::to_string(p));
    }
    if (cell.get_string("share_predictors") != "none" && cell.get_string("generator") != "sufficient_statistics") {
      throw std::invalid_argument(
          "share_predictors: sharing predictors needs generator: sufficient_statistics (the "
          "row generator draws every data set on its own)");
    }
    const std::uint64_t n = effective_n(cell);
    if (n < static_cast<std::uint64_t>(p + 3)) {
      throw std::invalid_argument("n: round(n * n_scale) = " + std::to_string(n) +
                                  " must be >= p + 3 = " + std::to_string(p + 3));
    }
    if (cell.get_double("negligible_model_share") > 0.0 && cell.get_double("pruning_share") > 0.0) {
      throw std::invalid_argument(
          "pruning_share: give either negligible_model_share (keys the noise streams) or pruning_share (keeps the "
          "unpruned cell's draws), not both");
    }
    if (cell.get_string("generator") == "sufficient_statistics" && n > (std::uint64_t{1} << 31)) {
      throw std::invalid_argument("n: round(n * n_scale) = " + std::to_string(n) +
                                  " exceeds 2^31 = 2147483648, the most rows the exact sampler's 128-bit sums take; "
                                  "use generator: rows or a smaller n");
    }
    if (!(cell.get_double("lower") < 0.0 && cell.get_double("upper") > 0.0)) {
      throw std::invalid_argument("lower: the bounds must satisfy lower < 0 < upper");
    }
    try {
      core::parse_coefficient_prior(cell.get_string("prior"), static_cast<double>(n));
    } catch (const std::exception& e) {
      throw std::invalid_argument("prior: '" + cell.get_string("prior") + "' is not a prior (" + e.what() + ")");
    }
    try {
      core::parse_model_prior(cell.get_string("model_prior"));
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("model_prior: ") + e.what());
    }
    const std::string& mechanism = cell.get_string("mechanism");
    const double epsilon = cell.get_double("epsilon");
    if (mechanism == "none") {
      if (std::isfinite(epsilon)) {
        throw std::invalid_argument(
            "epsilon: the non-private analysis (mechanism none) has no privacy budget; "
            "give epsilon only to the laplace and wishart cells");
      }
      if (cell.get_int("thresholded") != 0) {
        throw std::invalid_argument(
            "thresholded: the non-private analysis (mechanism none) adds no noise to "
            "threshold; use thresholded: 0");
      }
    } else {
      if (!std::isfinite(epsilon)) {
        throw std::invalid_argument("epsilon: mechanism " + mechanism + " needs a privacy budget (set epsilon)");
      }
      if ((mechanism == "adassp" || mechanism == "adassp-bma") && cell.get_int("thresholded") != 0) {
        throw std::invalid_argument("thresholded: the paper's thresholding is not part of AdaSSP (mechanism " +
                                    mechanism + "); use thresholded: 0");
      }
      if (mechanism == "wishart" && epsilon >= 1.0) {
        std::ostringstream v;
        v << epsilon;
        throw std::invalid_argument("epsilon: the Wishart mechanism needs epsilon < 1, got " + v.str());
      }
    }
    if (core::parse_threshold_reference(cell.get_string("threshold_reference")) ==
            core::ThresholdReference::signed_quantile &&
        cell.get_double("threshold_percentile") <= 0.5) {
      throw std::invalid_argument("threshold_percentile: must be > 0.5 with threshold_reference signed");
    }
  }

  std::vector<MetricSpec> metrics(const Cell&) const override {
    return {
        {.name = "predictive_mse", .description = "n^-1 ||V_T beta_T - V beta*||^2 (confidential V'V)"},
        {.name = "prob_true_model",
         .description = "posterior probability of the true model (NaN for adassp: a point estimate, no models)"},
        {.name = "highest_posterior_model_is_true",
         .description = "1 if the highest posterior model equals T (NaN for adassp)"},
        {.name = "mean_pip_active",
         .description = "mean PIP of the |T| active predictors (NaN if |T| = 0, and for adassp)"},
        {.name = "mean_pip_inactive",
         .description = "mean PIP of the p - |T| inactive predictors (NaN if |T| = p, and for adassp)"},
        {.name = "ridge_fallback",
         .description = "1 if r had to be raised to make the matrix PD (NaN for mechanisms none and adassp; for "
                        "adassp-bma: beyond AdaSSP's own ridge)"},
        {.name = "redrawn_rows", .description = "rows redrawn because |y| >= upper bound (expected 0)"},
    };
  }

  Prepared prepare(const Cell& cell, core::RngStream& /*calibration*/,
                   runtime::SharedCalibration& shared) const override {
    Prepared pr;
    const int p = static_cast<int>(cell.get_int("p"));
    pr.n = effective_n(cell);
    const double n = static_cast<double>(pr.n);
    pr.design = simulation_design(p, static_cast<int>(cell.get_int("true_model_size")), cell.get_double("signal_z"));
    pr.prior = core::parse_coefficient_prior(cell.get_string("prior"), n);
    pr.model_prior = core::parse_model_prior(cell.get_string("model_prior"));
    if (const double share = std::max(cell.get_double("negligible_model_share"), cell.get_double("pruning_share"));
        share > 0.0) {
      pr.negligible_log_odds = core::negligible_log_odds_for(p, share);
    }
    const std::string& name = cell.get_string("mechanism");
    if (name == "none") return pr;
    if (name == "adassp" || name == "adassp-bma") {
      // The same reading of the public bounds as the paper's mechanisms in this study: every entry of
      // a centred row in [l, u], so ||x_i|| <= sqrt(p) max(|l|, |u|) and |y_i| <= max(|l|, |u|), and
      // AdaSSP's clipping never binds: its release from G equals its release from the rows
      // (core::AdaSspRelease::release_statistics). Budget (epsilon, adassp_delta or 1/n).
      const double r = std::max(-cell.get_double("lower"), cell.get_double("upper"));
      core::AdaSspSettings a;
      a.epsilon = cell.get_double("epsilon");
      a.delta = cell.get_double("adassp_delta") > 0.0 ? cell.get_double("adassp_delta") : 1.0 / n;
      a.n = pr.n;
      a.d = p;
      a.bound_x = std::sqrt(static_cast<double>(p)) * r;
      a.bound_y = r;
      a.release_yty = name == "adassp-bma";  // y'y too (budget in four): AdaSSP plug-in model averaging
      pr.adassp.emplace(a);
      return pr;
    }
    const auto kind = core::parse_ssp_mechanism(name);
    const double delta = cell.get_double("wishart_delta") > 0.0 ? cell.get_double("wishart_delta") : 1.0 / n;
    core::SspMechanism m{.kind = kind,
                         .p = p,
                         .lower = cell.get_double("lower"),
                         .upper = cell.get_double("upper"),
                         .epsilon = cell.get_double("epsilon"),
                         .delta = kind == core::SspMechanismKind::wishart ? delta : 0.0};
    core::check_ssp_mechanism(m);
    const double q = cell.get_double("ridge_quantile");
    const bool mc = kind == core::SspMechanismKind::laplace || cell.get_string("wishart_ridge") == "mc99";
    pr.regularization = mc ? monte_carlo_ridge(m, static_cast<int>(cell.get_int("laplace_ridge_draws")), q, shared)
                           : core::wishart_regularization(m, 1.0 - q);
    pr.thresholded = cell.get_int("thresholded") != 0;
    if (pr.thresholded) {
      // a function of the public mechanism parameters and the percentile only: computed once per
      // run for the cells that share them (the Wishart one is a long-double quadrature, ≈ 57 ms)
      const double percentile = cell.get_double("threshold_percentile");
      const std::string& reference = cell.get_string("threshold_reference");
      std::ostringstream key = mechanism_key("ssp_threshold", m);
      key << ':' << percentile << ':' << reference;
      pr.threshold = shared.get(key.str(), [&] {
        return std::vector<double>{core::threshold_value(m, percentile, core::parse_threshold_reference(reference))};
      })[0];
    }
    pr.mechanism = m;
    return pr;
  }

  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell&,
                                                                               const Prepared& pr) const override {
    const bool wishart = pr.mechanism && pr.mechanism->kind == core::SspMechanismKind::wishart;
    return {{"regularization", {pr.regularization}},
            {"threshold", {pr.threshold}},
            {"wishart_degrees_of_freedom",
             {wishart ? core::ssp_wishart_parameters(*pr.mechanism).degrees_of_freedom : std::nan("")}},
            {"coefficient", {pr.design.coefficient}},
            {"sigma", {pr.design.sigma}},
            {"simulated_n", {static_cast<double>(pr.n)}}};
  }

  /// The data set of (p, |T|, z, n, n_scale, replicate), streamed into its centred Gram matrix.
  SimulatedGram generate(const Cell& data_cell, core::RngStream& data) const override {
    const SimulationDesign design =
        simulation_design(static_cast<int>(data_cell.get_int("p")),
                          static_cast<int>(data_cell.get_int("true_model_size")), data_cell.get_double("signal_z"));
    const std::uint64_t key0 = data();
    const std::uint64_t key1 = data();
    if (data_cell.get_string("generator") == "rows") {
      return simulate_gram_matrix(design, effective_n(data_cell), key0, key1);
    }
    return sample_gram_matrix(design, effective_n(data_cell), key0, key1);
  }

  /// Shared predictors (share_predictors, docs/methods.md §5.8): the data keys that differ only
  /// in |T| (and n, and p, as chosen) share one stream of predictor rows.
  std::string generation_key(const Cell& data_cell) const override {
    const std::string& share = data_cell.get_string("share_predictors");
    if (share == "none") return {};
    std::ostringstream key;
    key.precision(17);
    key << "ssp_predictors;signal_z=" << data_cell.get_double("signal_z")
        << ";n_scale=" << data_cell.get_double("n_scale") << ";generator=" << data_cell.get_string("generator")
        << ";share_predictors=" << share;
    if (share != "p_true_model_size_and_n") key << ";p=" << data_cell.get_int("p");
    if (share == "true_model_size") key << ";n=" << data_cell.get_int("n");
    return key.str();
  }

  /// One stream of predictor rows for the group; each data key's response from its own stream,
  /// keyed by its data key, so its data set does not depend on the other data keys of the group.
  std::vector<SimulatedGram> generate_shared(std::span<const Cell> data_cells, core::RngStream& data) const override {
    const std::uint64_t key0 = data();
    const std::uint64_t key1 = data();
    std::vector<SharedPredictorRequest> requests;
    requests.reserve(data_cells.size());
    for (const Cell& c : data_cells) {
      requests.push_back(
          {.design = simulation_design(static_cast<int>(c.get_int("p")), static_cast<int>(c.get_int("true_model_size")),
                                       c.get_double("signal_z")),
           .n = effective_n(c),
           .response_stream = c.data_id() | 1U});  // odd: never the predictors' stream 0
    }
    return sample_gram_matrices_shared_predictors(requests, key0, key1);
  }

  /// ETA cost model of a shared generation: the rows of the largest n and p once, plus per data key.
  double generate_shared_cost(std::span<const Cell> data_cells) const override {
    std::uint64_t rows = 0;
    int p = 0;
    for (const Cell& c : data_cells) {
      rows = std::max(rows, effective_n(c));
      p = std::max(p, static_cast<int>(c.get_int("p")));
    }
    return ssp_generate_cost(rows, p, SspGenerator::sufficient_statistic) +
           20000.0 * static_cast<double>(data_cells.size() - 1);
  }

  /// ETA cost model (simulation_cost.hpp): rows of the data set by the configured generator.
  double generate_cost(const Cell& data_cell) const override {
    const auto generator =
        data_cell.get_string("generator") == "rows" ? SspGenerator::rows : SspGenerator::sufficient_statistic;
    return ssp_generate_cost(effective_n(data_cell), static_cast<int>(data_cell.get_int("p")), generator);
  }

  /// ETA cost model: 2^p models, by quadrature for a mixture prior with its exact evidence (the
  /// prior's unit says which; the g-prior, the criteria and BAS's Laplace form are closed forms).
  double analyse_cost(const Cell& cell) const override {
    const core::CoefficientPrior prior = core::parse_coefficient_prior(cell.get_string("prior"));
    const bool quadrature = !core::is_approximate(prior) && core::visit_prior_kind(prior.prior.kind, [](auto unit) {
      return core::priors::is_mixture<typename decltype(unit)::type>;
    });
    return ssp_analyse_cost(static_cast<int>(cell.get_int("p")), quadrature);
  }

  /// Model averaging on the released G (G*_r or G**_r from one G* = G + E of the noise stream;
  /// the non-private G for mechanism none), evaluated against the truth and the confidential G.
  void analyse(const Cell&, const Prepared& pr, const SimulatedGram& sim, core::RngStream& noise,
               runtime::MetricWriter& out) const override {
    const int p = pr.design.p;
    const int t = pr.design.true_model_size;
    const double n = static_cast<double>(pr.n);
    Eigen::VectorXd beta = Eigen::VectorXd::Zero(p);
    beta.head(t).setConstant(pr.design.coefficient);
    const core::ModelMask truth = (core::ModelMask{1} << t) - 1;
    std::optional<core::RegularizedGram> released;
    if (pr.adassp) {
      core::NoiseSource source = core::NoiseSource::simulation(noise);
      const core::AdaSspOutput ada =
          pr.adassp->release_statistics(sim.gram.topLeftCorner(p, p), sim.gram.col(p).head(p), source, sim.gram(p, p));
      if (pr.adassp->settings().release_yty) {
        // AdaSSP plug-in model averaging: AdaSSP's released statistics with its adaptive ridge on the
        // predictors, [X̂'X + λI, X̂'y; ·, ŷ'y], analysed as the paper analyses G*_r (raised to positive
        // definiteness by the §5.4 fallback if needed; post-processing).
        Eigen::MatrixXd gstar(p + 1, p + 1);
        gstar.topLeftCorner(p, p) = ada.gram + ada.ridge * Eigen::MatrixXd::Identity(p, p);
        gstar.col(p).head(p) = ada.xty;
        gstar.row(p).head(p) = ada.xty.transpose();
        gstar(p, p) = ada.yty;
        released = core::regularize(gstar, 0.0);
      } else {
        const double nan = std::nan("");
        out.set("predictive_mse", predictive_mse(sim.gram, n, beta, ada.coefficients));
        for (const char* m : {"prob_true_model", "highest_posterior_model_is_true", "mean_pip_active",
                              "mean_pip_inactive", "ridge_fallback"}) {
          out.set(m, nan);
        }
        out.set("redrawn_rows", static_cast<double>(sim.redrawn_rows));
        return;
      }
    }
    if (pr.mechanism) {
      const Eigen::MatrixXd gstar = core::noisy_gram_matrix(sim.gram, *pr.mechanism, noise);
      released =
          core::regularize(pr.thresholded ? core::hard_threshold(gstar, pr.threshold) : gstar, pr.regularization);
    }
    core::BmaOptions opts;
    opts.credible_level = 0.0;  // no metric uses the credible intervals (they cost ~100x the PIPs)
    opts.top_models = 0;
    opts.interval_max_models = 0;  // nor the best predictive model (no metric uses it)
    opts.keep_all_models = true;
    opts.negligible_log_odds = pr.negligible_log_odds;
    const core::BmaResult res =
        core::bayesian_model_averaging(released ? released->matrix : sim.gram, n, pr.prior, pr.model_prior, opts);
    out.set("predictive_mse", predictive_mse(sim.gram, n, beta, res.model_averaged_coefficients));
    out.set("prob_true_model", std::exp(res.log_posterior_probability(static_cast<Eigen::Index>(truth))));
    out.set("highest_posterior_model_is_true", res.highest_posterior_model == truth ? 1.0 : 0.0);
    const auto& pip = res.posterior_inclusion_probability;
    out.set("mean_pip_active", t > 0 ? pip.head(t).mean() : std::nan(""));
    out.set("mean_pip_inactive", t < p ? pip.tail(p - t).mean() : std::nan(""));
    out.set("ridge_fallback", released ? (released->fallback ? 1.0 : 0.0) : std::nan(""));
    out.set("redrawn_rows", static_cast<double>(sim.redrawn_rows));
  }

 private:
  // Monte Carlo ridge (99th percentile of −eigmin(E)): a function of the public mechanism
  // parameters only (kind, p, l, u, ε, δ, draws, quantile) — not of n, |T|, the prior, the
  // thresholding, the cell or the master seed — drawn from a stream keyed by them, so every cell
  // with the same mechanism gets the same ridge (docs/decisions.md). Computed once per run for
  // each key (runtime::SharedCalibration) and shared by the cells with that mechanism.
  static double monte_carlo_ridge(const core::SspMechanism& m, int draws, double q,
                                  runtime::SharedCalibration& shared) {
    std::ostringstream os = mechanism_key("ssp_ridge", m);
    os << ':' << draws << ':' << q;
    const std::string key = os.str();
    return shared.get(key, [&] {
      core::RngStream rng(kRidgeSeed, core::fnv1a_64(key), 0, core::StreamPurpose::calibration);
      return std::vector<double>{core::monte_carlo_regularization(m, rng, draws, q)};
    })[0];
  }
  static constexpr std::uint64_t kRidgeSeed = 20240521;

  /// "<what>:kind:p:lower:upper:epsilon:delta" (17 significant digits), to be completed by the
  /// caller: the SharedCalibration key of a value that depends on the mechanism's public
  /// parameters only (the ridge's key also seeds its stream, so its bytes must not change).
  static std::ostringstream mechanism_key(const char* what, const core::SspMechanism& m) {
    std::ostringstream os;
    os.precision(17);
    os << what << ':' << static_cast<int>(m.kind) << ':' << m.p << ':' << m.lower << ':' << m.upper << ':' << m.epsilon
       << ':' << m.delta;
    return os;
  }

  static std::uint64_t effective_n(const Cell& cell) {
    const double v = std::round(static_cast<double>(cell.get_int("n")) * cell.get_double("n_scale"));
    return v < 0 ? 0 : static_cast<std::uint64_t>(v);
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_ssp_simulation() { return std::make_unique<SspSimulation>(); }

}  // namespace dpmu::experiments
