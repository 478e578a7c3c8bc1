/// @file simulation_ssp.cpp
/// `ssp_simulation`: the simulation study of Peña & Barrientos (2024, JMLR 25) §5.2.1
/// (Figures 3, 4 with the Zellner–Siow prior; Appendix C Figures 8, 9 with BIC).
///
/// One data set per (p, |T|, n, replicate) is streamed into its centred Gram matrix G
/// (simulate_gram_matrix) and analysed by every variant inside one replicate (common random
/// numbers, and the data are generated once for all variants):
///   for each prior in `priors`: [non-private G] + for each ε in `epsilons`, for each mechanism
///   in `mechanisms`, {non-thresholded G*_r, thresholded G**_r}.
/// Vector metrics have one component per variant in that order (prior-major, then ε, then
/// mechanism, then non-thresholded before thresholded). /calibration/variant_* describe each
/// component (prior index, ε, mechanism code 0 = none/1 = laplace/2 = wishart, thresholded 0/1).
/// Noise: for each ε, for each mechanism, one G* = G + E from the noise stream; the same G*
/// serves both threshold variants and every prior (PB §5.3: both are post-processing).

#include "dpmu/experiments/simulation_ssp.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/core/block_random.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/model_space.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
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

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    out.push_back(b == std::string::npos ? std::string() : item.substr(b, e - b + 1));
  }
  if (!text.empty() && text.back() == ',') out.emplace_back();  // getline drops a trailing empty item
  return out;
}

/// The items of a comma-separated list parameter; an empty item ("0.5,", "a,,b") or an item
/// listed twice is an error naming the parameter (duplicates would silently analyse a variant twice).
std::vector<std::string> list_items(const std::string& name, const std::string& text) {
  const auto items = split_list(text);
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].empty() && items.size() > 1) {
      throw std::invalid_argument(name + ": \"" + text + "\" has an empty item (remove the extra comma)");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (items[j] == items[i]) {
        throw std::invalid_argument(name + ": '" + items[i] + "' is listed twice in \"" + text + "\"");
      }
    }
  }
  return items;
}

std::vector<double> parse_epsilons(const std::string& text) {
  std::vector<double> out;
  for (const auto& s : list_items("epsilons", text)) {
    double v = std::nan("");
    std::size_t used = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (s.empty() || used != s.size() || !std::isfinite(v) || v <= 0.0) {
      throw std::invalid_argument("epsilons: '" + s + "' in \"" + text +
                                  "\" is not a positive number (expected a comma-separated list such as \"0.5,0.9\")");
    }
    out.push_back(v);
  }
  if (out.empty()) throw std::invalid_argument("epsilons: the list is empty");
  return out;
}

std::vector<core::SspMechanismKind> parse_mechanisms(const std::string& text) {
  std::vector<core::SspMechanismKind> out;
  for (const auto& s : list_items("mechanisms", text)) {
    if (s == "laplace") {
      out.push_back(core::SspMechanismKind::laplace);
    } else if (s == "wishart") {
      out.push_back(core::SspMechanismKind::wishart);
    } else {
      throw std::invalid_argument("mechanisms: '" + s + "' in \"" + text +
                                  "\" is not a mechanism (allowed: laplace, wishart)");
    }
  }
  if (out.empty()) throw std::invalid_argument("mechanisms: the list is empty");
  return out;
}

std::vector<core::CoefficientPrior> parse_priors(const std::string& text, double n) {
  std::vector<core::CoefficientPrior> out;
  for (const auto& s : list_items("priors", text)) {
    try {
      out.push_back(core::parse_coefficient_prior(s, n));
    } catch (const std::exception& e) {
      throw std::invalid_argument("priors: '" + s + "' in \"" + text + "\" is not a prior (" + e.what() + ")");
    }
  }
  if (out.empty()) throw std::invalid_argument("priors: the list is empty");
  return out;
}

struct Variant {
  int prior = 0;
  int epsilon = -1;    // index into epsilons; -1 = non-private
  int mechanism = -1;  // index into mechanisms; -1 = non-private
  bool thresholded = false;
};

struct Prepared {
  SimulationDesign design;
  std::uint64_t n = 0;
  std::vector<double> epsilons;
  std::vector<core::SspMechanismKind> mechanisms;
  std::vector<core::CoefficientPrior> priors;
  core::ModelPrior model_prior;
  // [epsilon][mechanism]
  std::vector<std::vector<core::SspMechanism>> mechanism;
  std::vector<std::vector<double>> regularization;
  std::vector<std::vector<double>> threshold;
  std::vector<Variant> variants;
};

class SspSimulation final : public runtime::Experiment {
 public:
  std::string name() const override { return "ssp_simulation"; }

  std::vector<ParameterSpec> parameters() const override {
    return {
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
        {.name = "lower",
         .type = ParameterType::real,
         .default_value = -2.0,
         .description = "l: lower bound of the centred data for the mechanisms (< 0)"},
        {.name = "upper",
         .type = ParameterType::real,
         .default_value = 2.0,
         .description = "u: upper bound of the centred data for the mechanisms (> 0)"},
        {.name = "epsilons",
         .type = ParameterType::string,
         .default_value = std::string("0.5,0.9"),
         .description = "comma-separated privacy budgets, each analysed on the same data"},
        {.name = "mechanisms",
         .type = ParameterType::string,
         .default_value = std::string("laplace,wishart"),
         .description = "comma-separated subset of laplace, wishart"},
        {.name = "priors",
         .type = ParameterType::string,
         .default_value = std::string("zellner_siow,bic"),
         .description = "comma-separated coefficient priors (zellner_siow, bic, g_prior, hyper_g, robust, ...)"},
        {.name = "model_prior",
         .type = ParameterType::string,
         .default_value = std::string("beta-binomial:1,1"),
         .description = "prior over models (default: hierarchical uniform, Scott & Berger 2010)"},
        {.name = "wishart_delta",
         .type = ParameterType::real,
         .default_value = 0.0,
         .min = 0.0,
         .max = 1.0,
         .description = "delta of the Wishart mechanism; 0 means 1/n (paper)"},
        {.name = "threshold_percentile",
         .type = ParameterType::real,
         .default_value = 0.95,
         .min = 0.0,
         .max = 1.0,
         .min_inclusive = false,
         .max_inclusive = false,
         .description = "lambda of hard thresholding (docs/methods.md A9)"},
        {.name = "threshold_reference",
         .type = ParameterType::string,
         .default_value = std::string("absolute"),
         .allowed = {"absolute", "signed"},
         .description = "threshold = lambda-quantile of |E_ij| (absolute) or of E_ij (signed)"},
        {.name = "ridge_quantile",
         .type = ParameterType::real,
         .default_value = core::kRidgeConfidence,
         .min = 0.0,
         .max = 1.0,
         .min_inclusive = false,
         .max_inclusive = false,
         .description = "ridge r = this quantile of -eigmin(E) (Laplace, and Wishart with mc99)"},
        {.name = "laplace_ridge_draws",
         .type = ParameterType::integer,
         .default_value = std::int64_t{100000},
         .min = 100.0,
         .description = "Monte Carlo draws of E for the Laplace ridge (per cell, in prepare)"},
        {.name = "wishart_ridge",
         .type = ParameterType::string,
         .default_value = std::string("analytic"),
         .allowed = {"analytic", "mc99"},
         .description = "Wishart ridge: analytic bound (A10) or Monte Carlo"},
    };
  }

  void validate(const Cell& cell) const override {
    const auto p = cell.get_int("p");
    const auto t = cell.get_int("true_model_size");
    if (t > p) {
      throw std::invalid_argument("true_model_size: " + std::to_string(t) + " exceeds p = " + std::to_string(p));
    }
    const std::uint64_t n = effective_n(cell);
    if (n < static_cast<std::uint64_t>(p + 3)) {
      throw std::invalid_argument("n: round(n * n_scale) = " + std::to_string(n) +
                                  " must be >= p + 3 = " + std::to_string(p + 3));
    }
    if (!(cell.get_double("lower") < 0.0 && cell.get_double("upper") > 0.0)) {
      throw std::invalid_argument("lower: the bounds must satisfy lower < 0 < upper");
    }
    const auto eps = parse_epsilons(cell.get_string("epsilons"));
    const auto mech = parse_mechanisms(cell.get_string("mechanisms"));
    parse_priors(cell.get_string("priors"), static_cast<double>(n));
    try {
      core::parse_model_prior(cell.get_string("model_prior"));
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("model_prior: ") + e.what());
    }
    const bool wishart = std::find(mech.begin(), mech.end(), core::SspMechanismKind::wishart) != mech.end();
    for (double e : eps) {
      if (wishart && e >= 1.0) {
        std::ostringstream v;
        v << e;
        throw std::invalid_argument("epsilons: the Wishart mechanism needs epsilon < 1, got " + v.str());
      }
    }
    if (core::parse_threshold_reference(cell.get_string("threshold_reference")) ==
            core::ThresholdReference::signed_quantile &&
        cell.get_double("threshold_percentile") <= 0.5) {
      throw std::invalid_argument("threshold_percentile: must be > 0.5 with threshold_reference signed");
    }
  }

  std::vector<MetricSpec> metrics(const Cell& cell) const override {
    const std::size_t k = variant_count(cell);
    return {
        {.name = "predictive_mse",
         .size = k,
         .is_vector = true,
         .description = "n^-1 ||V_T beta_T - V beta*||^2 per variant (confidential V'V)",
         .component_labels = variant_labels(cell)},
        {.name = "prob_true_model",
         .size = k,
         .is_vector = true,
         .description = "posterior probability of the true model per variant",
         .component_labels = variant_labels(cell)},
        {.name = "highest_posterior_model_is_true",
         .size = k,
         .is_vector = true,
         .description = "1 if the highest posterior model equals T, per variant",
         .component_labels = variant_labels(cell)},
        {.name = "mean_pip_active",
         .size = k,
         .is_vector = true,
         .description = "mean PIP of the |T| active predictors (NaN if |T| = 0)",
         .component_labels = variant_labels(cell)},
        {.name = "mean_pip_inactive",
         .size = k,
         .is_vector = true,
         .description = "mean PIP of the p - |T| inactive predictors (NaN if |T| = p)",
         .component_labels = variant_labels(cell)},
        {.name = "ridge_fallback",
         .size = k,
         .is_vector = true,
         .description = "1 if r had to be raised to make the matrix PD (NaN for the non-private variant)",
         .component_labels = variant_labels(cell)},
        {.name = "redrawn_rows", .description = "rows redrawn because |y| >= upper bound (expected 0)"},
    };
  }

  std::shared_ptr<const void> prepare(const Cell& cell, core::RngStream& /*calibration*/) const override {
    auto pr = std::make_shared<Prepared>();
    const int p = static_cast<int>(cell.get_int("p"));
    pr->n = effective_n(cell);
    const double n = static_cast<double>(pr->n);
    pr->design = simulation_design(p, static_cast<int>(cell.get_int("true_model_size")), cell.get_double("signal_z"));
    pr->epsilons = parse_epsilons(cell.get_string("epsilons"));
    pr->mechanisms = parse_mechanisms(cell.get_string("mechanisms"));
    pr->priors = parse_priors(cell.get_string("priors"), n);
    pr->model_prior = core::parse_model_prior(cell.get_string("model_prior"));
    const double lower = cell.get_double("lower");
    const double upper = cell.get_double("upper");
    const double delta = cell.get_double("wishart_delta") > 0.0 ? cell.get_double("wishart_delta") : 1.0 / n;
    const double lambda = cell.get_double("threshold_percentile");
    const auto reference = core::parse_threshold_reference(cell.get_string("threshold_reference"));
    const double q = cell.get_double("ridge_quantile");
    const int draws = static_cast<int>(cell.get_int("laplace_ridge_draws"));
    const bool wishart_mc = cell.get_string("wishart_ridge") == "mc99";
    for (double eps : pr->epsilons) {
      std::vector<core::SspMechanism> ms;
      std::vector<double> rs, ts;
      for (auto kind : pr->mechanisms) {
        core::SspMechanism m{.kind = kind,
                             .p = p,
                             .lower = lower,
                             .upper = upper,
                             .epsilon = eps,
                             .delta = kind == core::SspMechanismKind::wishart ? delta : 0.0};
        core::check_ssp_mechanism(m);
        const bool mc = kind == core::SspMechanismKind::laplace || wishart_mc;
        rs.push_back(mc ? monte_carlo_ridge(m, draws, q) : core::wishart_regularization(m, 1.0 - q));
        ts.push_back(core::threshold_value(m, lambda, reference));
        ms.push_back(m);
      }
      pr->mechanism.push_back(ms);
      pr->regularization.push_back(rs);
      pr->threshold.push_back(ts);
    }
    for (int a = 0; a < static_cast<int>(pr->priors.size()); ++a) {
      pr->variants.push_back({a, -1, -1, false});
      for (int e = 0; e < static_cast<int>(pr->epsilons.size()); ++e) {
        for (int m = 0; m < static_cast<int>(pr->mechanisms.size()); ++m) {
          pr->variants.push_back({a, e, m, false});
          pr->variants.push_back({a, e, m, true});
        }
      }
    }
    return pr;
  }

  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell&,
                                                                               const void* prepared) const override {
    const auto& pr = *static_cast<const Prepared*>(prepared);
    std::vector<double> vp, ve, vm, vt, reg, thr, dof;
    for (const auto& v : pr.variants) {
      vp.push_back(v.prior);
      ve.push_back(v.epsilon < 0 ? std::nan("") : pr.epsilons[static_cast<std::size_t>(v.epsilon)]);
      vm.push_back(
          v.mechanism < 0
              ? 0.0
              : (pr.mechanisms[static_cast<std::size_t>(v.mechanism)] == core::SspMechanismKind::laplace ? 1.0 : 2.0));
      vt.push_back(v.thresholded ? 1.0 : 0.0);
      if (v.epsilon < 0) {
        reg.push_back(std::nan(""));
        thr.push_back(std::nan(""));
        dof.push_back(std::nan(""));
      } else {
        const auto e = static_cast<std::size_t>(v.epsilon);
        const auto m = static_cast<std::size_t>(v.mechanism);
        reg.push_back(pr.regularization[e][m]);
        thr.push_back(v.thresholded ? pr.threshold[e][m] : std::nan(""));
        dof.push_back(pr.mechanisms[m] == core::SspMechanismKind::wishart
                          ? core::ssp_wishart_parameters(pr.mechanism[e][m]).degrees_of_freedom
                          : std::nan(""));
      }
    }
    return {{"variant_prior", vp},
            {"variant_epsilon", ve},
            {"variant_mechanism", vm},
            {"variant_thresholded", vt},
            {"regularization", reg},
            {"threshold", thr},
            {"wishart_degrees_of_freedom", dof},
            {"coefficient", {pr.design.coefficient}},
            {"sigma", {pr.design.sigma}},
            {"simulated_n", {static_cast<double>(pr.n)}}};
  }

  void run_replicate(const Cell&, const void* prepared, core::RngStream& data, core::RngStream& noise,
                     std::span<double> out) const override {
    const auto& pr = *static_cast<const Prepared*>(prepared);
    const int p = pr.design.p;
    const int t = pr.design.true_model_size;
    const double n = static_cast<double>(pr.n);
    const std::uint64_t key0 = data();
    const std::uint64_t key1 = data();
    const SimulatedGram sim = simulate_gram_matrix(pr.design, pr.n, key0, key1);
    Eigen::VectorXd beta = Eigen::VectorXd::Zero(p);
    beta.head(t).setConstant(pr.design.coefficient);
    const core::ModelMask truth = (core::ModelMask{1} << t) - 1;

    // DP releases: one G* per (epsilon, mechanism), thresholded and not (post-processing).
    const std::size_t ne = pr.epsilons.size();
    const std::size_t nm = pr.mechanisms.size();
    std::vector<core::RegularizedGram> released(ne * nm * 2);
    for (std::size_t e = 0; e < ne; ++e) {
      for (std::size_t m = 0; m < nm; ++m) {
        const Eigen::MatrixXd gstar = core::noisy_gram_matrix(sim.gram, pr.mechanism[e][m], noise);
        released[(e * nm + m) * 2] = core::regularize(gstar, pr.regularization[e][m]);
        released[(e * nm + m) * 2 + 1] =
            core::regularize(core::hard_threshold(gstar, pr.threshold[e][m]), pr.regularization[e][m]);
      }
    }

    const std::size_t k = pr.variants.size();
    core::BmaOptions opts;
    opts.top_models = 0;
    opts.keep_all_models = true;
    for (std::size_t v = 0; v < k; ++v) {
      const Variant& var = pr.variants[v];
      const core::RegularizedGram* rel =
          var.epsilon < 0
              ? nullptr
              : &released[(static_cast<std::size_t>(var.epsilon) * nm + static_cast<std::size_t>(var.mechanism)) * 2 +
                          (var.thresholded ? 1 : 0)];
      const core::BmaResult res = core::bayesian_model_averaging(
          rel ? rel->matrix : sim.gram, n, pr.priors[static_cast<std::size_t>(var.prior)], pr.model_prior, opts);
      out[v] = predictive_mse(sim.gram, n, beta, res.model_averaged_coefficients);
      out[k + v] = std::exp(res.log_posterior_probability(static_cast<Eigen::Index>(truth)));
      out[2 * k + v] = res.highest_posterior_model == truth ? 1.0 : 0.0;
      const auto& pip = res.posterior_inclusion_probability;
      out[3 * k + v] = t > 0 ? pip.head(t).mean() : std::nan("");
      out[4 * k + v] = t < p ? pip.tail(p - t).mean() : std::nan("");
      out[5 * k + v] = rel ? (rel->fallback ? 1.0 : 0.0) : std::nan("");
    }
    out[6 * k] = static_cast<double>(sim.redrawn_rows);
  }

 private:
  // Monte Carlo ridge (99th percentile of −eigmin(E)): a function of the public mechanism
  // parameters only (kind, p, l, u, ε, δ, draws, quantile) — not of n, |T|, the cell or the
  // master seed — computed once per distinct parameter set from a stream keyed by them, and
  // cached. 72 cells of the full study need 6 computations instead of 144 (docs/decisions.md).
  double monte_carlo_ridge(const core::SspMechanism& m, int draws, double q) const {
    std::ostringstream os;
    os.precision(17);
    os << "ssp_ridge:" << static_cast<int>(m.kind) << ':' << m.p << ':' << m.lower << ':' << m.upper << ':' << m.epsilon
       << ':' << m.delta << ':' << draws << ':' << q;
    const std::string key = os.str();
    const std::lock_guard<std::mutex> lock(ridge_mutex_);
    const auto it = ridge_cache_.find(key);
    if (it != ridge_cache_.end()) return it->second;
    core::RngStream rng(kRidgeSeed, core::fnv1a_64(key), 0, core::StreamPurpose::calibration);
    const double r = core::monte_carlo_regularization(m, rng, draws, q);
    ridge_cache_.emplace(key, r);
    return r;
  }
  static constexpr std::uint64_t kRidgeSeed = 20240521;
  mutable std::mutex ridge_mutex_;
  mutable std::map<std::string, double> ridge_cache_;

  static std::uint64_t effective_n(const Cell& cell) {
    const double v = std::round(static_cast<double>(cell.get_int("n")) * cell.get_double("n_scale"));
    return v < 0 ? 0 : static_cast<std::uint64_t>(v);
  }
  /// One label per variant, in the order of Prepared::variants: per prior "prior=P;mechanism=none",
  /// then per epsilon and mechanism "prior=P;mechanism=M;epsilon=E;thresholded=no" and "...=yes".
  static std::vector<std::string> variant_labels(const Cell& cell) {
    std::vector<std::string> out;
    for (const auto& prior : split_list(cell.get_string("priors"))) {
      out.push_back("prior=" + prior + ";mechanism=none");
      for (const auto& epsilon : split_list(cell.get_string("epsilons"))) {
        for (const auto& mechanism : split_list(cell.get_string("mechanisms"))) {
          const std::string base = "prior=" + prior + ";mechanism=" + mechanism + ";epsilon=" + epsilon;
          out.push_back(base + ";thresholded=no");
          out.push_back(base + ";thresholded=yes");
        }
      }
    }
    return out;
  }
  static std::size_t variant_count(const Cell& cell) {
    const std::size_t np = split_list(cell.get_string("priors")).size();
    const std::size_t ne = split_list(cell.get_string("epsilons")).size();
    const std::size_t nm = split_list(cell.get_string("mechanisms")).size();
    return np * (1 + ne * nm * 2);
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_ssp_simulation() { return std::make_unique<SspSimulation>(); }

}  // namespace dpmu::experiments
