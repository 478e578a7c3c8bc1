/// @file cps_bma.cpp
/// The CPS application of Peña & Barrientos (2024, JMLR 25, §5.2.2, Figure 5; docs/methods.md §5.9):
/// experiment `cps_bma`. The data set is fixed (loaded, transformed and permuted once per cell
/// in prepare(); the permutation has its own seed and is the same for every run, mechanism and
/// master seed — the paper permutes once to build its benchmark). Each replicate ("run") draws a
/// new G* = G + E from the noise stream, computes model averaging on the ridge-regularised
/// non-thresholded and thresholded G* (both post-processings of the same release), and the §5.1
/// confidence set of T(G) = E(β_j | G) (rejection sampler with nsim draws, Frobenius norm),
/// summarised as density-scale histograms on bins fixed per cell. Calibration against the
/// non-private fit of the full data (docs/bma.md "Calibration metrics"): coverage of its posterior
/// mean by the 50/80/95 % intervals of both analyses, and the Brier score of their PIPs against its
/// PIPs, computed last and without random numbers (every other metric unchanged).

#include "dpmu/experiments/cps_bma.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/quantile.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/experiments/calibration_metrics.hpp"
#include "dpmu/experiments/column_design.hpp"
#include "dpmu/experiments/data_files.hpp"
#include "dpmu/experiments/ssp_release.hpp"
#include "dpmu/runtime/data_table.hpp"

namespace dpmu::experiments {

using runtime::Cell;
using runtime::MetricSpec;
using runtime::ParameterSpec;
using runtime::ParameterType;

std::vector<std::size_t> random_permutation(std::size_t n, core::RngStream& rng) {
  std::vector<std::size_t> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = i;
  for (std::size_t i = n; i > 1; --i) {
    const auto j = static_cast<std::size_t>(core::uniform_index(rng, i));
    std::swap(perm[i - 1], perm[j]);
  }
  return perm;
}

void permute_columns(Eigen::MatrixXd& x, const std::vector<int>& columns, bool joint, std::uint64_t seed) {
  core::RngStream rng(seed, core::fnv1a_64("cps_bma/permutation"), 0, core::StreamPurpose::data);
  const auto n = static_cast<std::size_t>(x.rows());
  std::vector<std::size_t> perm;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const int j = columns[c];
    if (j < 0 || j >= x.cols()) throw std::invalid_argument("permute_columns: column index out of range");
    if (c == 0 || !joint) perm = random_permutation(n, rng);
    const Eigen::VectorXd old = x.col(j);
    for (std::size_t i = 0; i < n; ++i) x(static_cast<Eigen::Index>(i), j) = old(static_cast<Eigen::Index>(perm[i]));
  }
}

RescaledDesign rescale_columns(const Eigen::MatrixXd& raw, RescaleMode mode,
                               const std::vector<std::pair<double, double>>& bounds) {
  if (raw.rows() < 2) throw std::invalid_argument("rescale_columns: need at least 2 rows");
  if (mode == RescaleMode::public_bounds && bounds.size() != static_cast<std::size_t>(raw.cols())) {
    throw std::invalid_argument("rescale_columns: need one (lower, upper) pair per column");
  }
  RescaledDesign out;
  out.data = raw;
  out.centre.resize(raw.cols());
  out.scale.resize(raw.cols());
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    auto col = out.data.col(j);
    if (mode == RescaleMode::public_bounds) {
      const auto [lo, hi] = bounds[static_cast<std::size_t>(j)];
      for (Eigen::Index i = 0; i < col.size(); ++i) {
        if (col(i) < lo || col(i) > hi) {
          ++out.clamped_entries;
          col(i) = std::clamp(col(i), lo, hi);
        }
      }
    }
    out.centre(j) = col.mean();
    col.array() -= out.centre(j);
    if (mode == RescaleMode::public_bounds) {
      const auto [lo, hi] = bounds[static_cast<std::size_t>(j)];
      out.scale(j) = 2.0 * (hi - lo);  // |x − x̄| ≤ hi − lo for any x, x̄ in [lo, hi]
    } else {
      out.scale(j) = 2.0 * col.cwiseAbs().maxCoeff();
      if (!(out.scale(j) > 0.0)) {
        throw std::domain_error("rescale_columns: column " + std::to_string(j) + " is constant");
      }
    }
    col /= out.scale(j);
  }
  return out;
}

namespace {

/// Header names of a CSV file (first line, comma-separated, blanks and double quotes trimmed).
std::vector<std::string> csv_header(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("data_file: cannot open '" + path + "'");
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  auto names = split_list(line, ',');
  for (auto& s : names) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  }
  return names;
}

struct ParsedDesign {
  std::vector<DesignColumn> predictors;
  ColumnExpression response;
  std::vector<int> permuted;
  std::vector<std::pair<double, double>> bounds;  // p + 1 (response last), public_bounds only
  std::vector<std::string> raw_columns;
};

ParsedDesign parse_design(const DesignOptions& o) {
  ParsedDesign d{parse_design_spec(o.predictors), ColumnExpression::parse(o.response), {}, {}, {}};
  std::set<std::string> raw;
  for (const auto& c : d.predictors) {
    if (c.name == "response") throw std::invalid_argument("predictors: 'response' is reserved for the response");
    for (const auto& r : c.expression.columns()) raw.insert(r);
  }
  for (const auto& r : d.response.columns()) raw.insert(r);
  d.raw_columns.assign(raw.begin(), raw.end());
  for (const auto& name : o.permuted) {
    auto it = std::find_if(d.predictors.begin(), d.predictors.end(), [&](const auto& c) { return c.name == name; });
    if (it == d.predictors.end()) {
      throw std::invalid_argument("permute: '" + name + "' is not one of the predictors");
    }
    d.permuted.push_back(static_cast<int>(it - d.predictors.begin()));
  }
  if (o.rescale == RescaleMode::public_bounds) {
    const auto b = parse_bounds_spec(o.public_bounds);
    std::set<std::string> known{"response"};
    for (const auto& c : d.predictors) {
      auto it = b.find(c.name);
      if (it == b.end()) throw std::invalid_argument("public_bounds: no bounds for predictor '" + c.name + "'");
      d.bounds.push_back(it->second);
      known.insert(c.name);
    }
    auto it = b.find("response");
    if (it == b.end()) throw std::invalid_argument("public_bounds: no bounds for 'response'");
    d.bounds.push_back(it->second);
    for (const auto& [name, v] : b) {
      if (!known.count(name)) throw std::invalid_argument("public_bounds: '" + name + "' is not a design column");
    }
  }
  return d;
}

}  // namespace

RescaledDesign load_design(const DesignOptions& o) {
  const ParsedDesign d = parse_design(o);
  const auto table = read_csv_cached(o.data_file, d.raw_columns);
  const std::size_t n = table->rows();
  const auto p = static_cast<Eigen::Index>(d.predictors.size());
  Eigen::MatrixXd raw(static_cast<Eigen::Index>(n), p + 1);
  auto lookup = [&](const std::string& name) -> const std::vector<double>& { return table->column(name); };
  for (Eigen::Index j = 0; j < p; ++j)
    raw.col(j) = d.predictors[static_cast<std::size_t>(j)].expression.evaluate(lookup, n);
  raw.col(p) = d.response.evaluate(lookup, n);
  // Data problems that would fail every run, named by the config key that causes them.
  auto constant = [&](Eigen::Index j) { return n > 0 && (raw.col(j).array() == raw(0, j)).all(); };
  auto number = [](double x) {
    std::ostringstream s;
    s << x;
    return s.str();
  };
  if (constant(p)) {
    throw std::invalid_argument("response: '" + d.response.text() + "' is constant in " + o.data_file +
                                " (every row is " + number(raw(0, p)) + "): there is nothing to explain");
  }
  for (Eigen::Index j = 0; j < p; ++j) {
    const auto& c = d.predictors[static_cast<std::size_t>(j)];
    if (raw.col(j) == raw.col(p)) {
      throw std::invalid_argument("predictors: '" + c.name + "' (" + c.expression.text() + ") equals the response ('" +
                                  d.response.text() + "') in " + o.data_file +
                                  ": the response cannot be one of the predictors");
    }
    if (constant(j)) {
      throw std::invalid_argument("predictors: '" + c.name + "' (" + c.expression.text() + ") is constant in " +
                                  o.data_file + " (every row is " + number(raw(0, j)) +
                                  "): a constant predictor carries no information and cannot be rescaled; remove it");
    }
  }
  permute_columns(raw, d.permuted, o.joint_permutation, o.permutation_seed);
  RescaledDesign out = rescale_columns(raw, o.rescale, d.bounds);
  for (const auto& c : d.predictors) out.names.push_back(c.name);
  out.names.push_back("response");
  return out;
}

namespace {

constexpr const char* kDefaultPredictors =
    "age = age; age_squared = age^2; married = marital == 1; male = 1 - female; education = education; "
    "white = race == 1";

DesignOptions design_options(const Cell& cell, bool resolve) {
  DesignOptions o;
  o.data_file = resolve ? resolve_data_file(cell, cell.get_string("data_file")) : cell.get_string("data_file");
  o.response = cell.get_string("response");
  o.predictors = cell.get_string("predictors");
  o.permuted = cell.get_string_list("permute");
  o.joint_permutation = cell.get_string("permutation") == "joint";
  o.permutation_seed = static_cast<std::uint64_t>(cell.get_int("permutation_seed"));
  o.rescale = cell.get_string("rescale") == "public_bounds" ? RescaleMode::public_bounds : RescaleMode::data_range;
  o.public_bounds = cell.get_string("public_bounds");
  return o;
}

std::vector<int> coefficient_indices(const Cell& cell, int p) {
  std::vector<int> out;
  for (const std::int64_t j : cell.get_int_list("coefficients")) {
    if (j < 1 || j > p) {
      throw std::invalid_argument("coefficients: " + std::to_string(j) + " is not a predictor index in 1.." +
                                  std::to_string(p));
    }
    out.push_back(static_cast<int>(j - 1));
  }
  if (out.empty()) throw std::invalid_argument("coefficients: name at least one predictor index (1-based)");
  return out;
}

/// Everything a run needs, computed once per cell.
struct CpsSetup {
  RescaledDesign design;
  Eigen::MatrixXd gram;
  double n = 0.0;
  int p = 0;
  core::SspMechanism mechanism;
  core::CoefficientPrior prior;
  core::ModelPrior model_prior;
  core::BmaOptions bma_options;
  double regularization = 0.0;
  double threshold = 0.0;
  core::BmaResult non_private;
  std::vector<int> coefficients;           // 0-based
  std::vector<std::vector<double>> edges;  // per coefficient, K + 1 equal-width edges
  int simulations = 0;
  double confidence = 0.95;
  core::MatrixNorm norm = core::MatrixNorm::frobenius;
};

core::BmaResult averaging(const CpsSetup& s, const Eigen::MatrixXd& g) {
  return core::bayesian_model_averaging(g, s.n, s.prior, s.model_prior, s.bma_options);
}

/// Density histogram of `values` on fixed edges: d_k = #B_k / (N (t_k − t_{k−1})), N = all
/// values (those outside [t_0, t_K] count in N but in no bin; the last bin is closed).
/// Returns the number of values outside.
std::size_t fixed_bin_density(const std::vector<double>& values, const std::vector<double>& edges, double* density) {
  const std::size_t k = edges.size() - 1;
  std::vector<double> counts(k, 0.0);
  std::size_t outside = 0;
  const double lo = edges.front(), hi = edges.back(), width = (hi - lo) / static_cast<double>(k);
  for (double v : values) {
    if (!(v >= lo && v <= hi)) {
      ++outside;
      continue;
    }
    auto b = static_cast<std::size_t>((v - lo) / width);
    b = std::min(b, k - 1);
    // guard against rounding at the edges computed as lo + i·width
    while (b > 0 && v < edges[b]) --b;
    while (b + 1 < k && v >= edges[b + 1]) ++b;
    counts[b] += 1.0;
  }
  const double total = static_cast<double>(values.size());
  for (std::size_t b = 0; b < k; ++b) density[b] = total > 0 ? counts[b] / (total * (edges[b + 1] - edges[b])) : 0.0;
  return outside;
}

/// The two post-processings of a release whose calibration is measured: metric suffix, description.
const std::pair<std::string, std::string> kCalibrated[2] = {{"_non_thresholded", "G*_r"}, {"_thresholded", "G**_r"}};

class CpsBma final : public runtime::TypedExperiment<CpsSetup> {
 public:
  std::string name() const override { return "cps_bma"; }

  std::vector<ParameterSpec> parameters() const override {
    std::vector<ParameterSpec> ps = {
        {.name = "data_file",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string("experiments/data/cps09mar.csv"),
         .description = "CSV with a header row (relative: the config's folder, then the source tree)",
         .path = true},
        {.name = "response",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string("earnings"),
         .description = "expression for the response (column_design.hpp)"},
        {.name = "predictors",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string(kDefaultPredictors),
         .description = "'name = expression; ...' in β order (column_design.hpp)"},
        {.name = "permute",
         .type = ParameterType::string_list,
         .data_factor = true,
         .default_value = std::vector<std::string>{"married", "education"},
         .description = "predictors whose rows are permuted (empty list: none)"},
        {.name = "permutation",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string("independent"),
         .allowed = {"independent", "joint"},
         .description = "one permutation per permuted column, or one shared permutation"},
        {.name = "permutation_seed",
         .type = ParameterType::integer,
         .data_factor = true,
         .default_value = std::int64_t{20240325},
         .min = 0.0,
         .description = "seed of the fixed permutation (same for every run and mechanism)"},
        {.name = "rescale",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string("data_range"),
         .allowed = {"data_range", "public_bounds"},
         .description = "centre, then divide by 2 max|centred| (paper, not private) or by 2 (upper - lower)"},
        {.name = "public_bounds",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string(""),
         .description = "'name = lower, upper; ...' for every predictor and 'response' (raw scale)"},
        {.name = "mechanism",
         .type = ParameterType::string,
         .allowed = {"laplace", "wishart"},
         .description = "perturbation of G"},
        {.name = "epsilon",
         .type = ParameterType::real,
         .default_value = 0.9,
         .min = 0.0,
         .min_inclusive = false,
         .description = "privacy parameter (Wishart: < 1)"},
        {.name = "delta",
         .type = ParameterType::real,
         .default_value = 0.0,
         .min = 0.0,
         .max = 1.0,
         .max_inclusive = false,
         .description = "Wishart delta; 0 means 1/n (docs/methods.md A14)"},
        {.name = "prior",
         .type = ParameterType::string,
         .default_value = std::string("zellner-siow"),
         .allowed = {"zellner-siow", "zellner-siow-laplace", "g-prior", "hyper-g", "hyper-g-n", "robust", "bic"},
         .description = "prior on g (paper: Zellner-Siow)"},
        {.name = "simulations",
         .type = ParameterType::integer,
         .default_value = std::int64_t{10000},
         .min = 10.0,
         .description = "nsim of the confidence-set rejection sampler (A12)"},
        {.name = "confidence",
         .type = ParameterType::real,
         .default_value = 0.95,
         .min = 0.0,
         .max = 1.0,
         .min_inclusive = false,
         .max_inclusive = false,
         .description = "1 - alpha"},
        {.name = "norm",
         .type = ParameterType::string,
         .default_value = std::string("frobenius"),
         .allowed = {"frobenius", "spectral", "max-abs"},
         .description = "matrix norm of the confidence set"},
        {.name = "coefficients",
         .type = ParameterType::integer_list,
         .default_value = std::vector<std::int64_t>{1, 3, 4},
         .description = "1-based predictor indices j of the histograms of E(beta_j | G)"},
        {.name = "histogram_bins",
         .type = ParameterType::integer,
         .default_value = std::int64_t{40},
         .min = 1.0,
         .max = 1000.0,
         .description = "K equal-width bins, common to all runs of a cell"},
        {.name = "bin_pilot_runs",
         .type = ParameterType::integer,
         .default_value = std::int64_t{20},
         .min = 1.0,
         .description = "pilot runs (calibration stream) that fix the bin range"},
        {.name = "bin_quantile",
         .type = ParameterType::real,
         .default_value = 0.005,
         .min = 0.0,
         .max = 0.5,
         .max_inclusive = false,
         .description = "bin range from the [q, 1 - q] quantiles of pooled pilot values"},
        {.name = "bin_margin",
         .type = ParameterType::real,
         .default_value = 0.1,
         .min = 0.0,
         .description = "bin range widened by this fraction of its width on each side"},
    };
    // the release's parameters after `prior` (docs/configs.md lists them in this order)
    const auto prior = std::find_if(ps.begin(), ps.end(), [](const ParameterSpec& p) { return p.name == "prior"; });
    const auto release = ssp_release_parameters();
    ps.insert(prior + 1, release.begin(), release.end());
    return ps;
  }

  void validate(const Cell& cell) const override {
    const DesignOptions o = design_options(cell, true);
    const ParsedDesign d = parse_design(o);
    const auto header = csv_header(o.data_file);
    for (const auto& c : d.raw_columns) {
      if (std::find(header.begin(), header.end(), c) == header.end()) {
        std::string list;
        for (const auto& h : header) list += (list.empty() ? "" : ", ") + h;
        throw std::invalid_argument("predictors: column '" + c + "' is not in " + o.data_file + " (columns: " + list +
                                    ")");
      }
    }
    const int p = static_cast<int>(d.predictors.size());
    if (p > 20) throw std::invalid_argument("predictors: at most 20 predictors (full enumeration)");
    coefficient_indices(cell, p);
    core::parse_model_prior(cell.get_string("model_prior"));
    if (cell.get_string("mechanism") == "wishart" && !(cell.get_double("epsilon") < 1.0)) {
      throw std::invalid_argument("epsilon: the Wishart mechanism needs epsilon < 1");
    }
    if (o.rescale == RescaleMode::data_range && !o.public_bounds.empty()) {
      throw std::invalid_argument("public_bounds: only used with rescale: public_bounds");
    }
  }

  std::vector<runtime::DataFile> data_files(const Cell& cell) const override {
    return {data_file(cell, "data_file", cell.get_string("data_file"))};
  }

  void check_data(const Cell& cell) const override { load_design(design_options(cell, true)); }

  std::vector<MetricSpec> metrics(const Cell& cell) const override {
    std::vector<std::string> predictors;  // component labels: predictor names, in β order
    for (const auto& column : parse_design_spec(cell.get_string("predictors"))) predictors.push_back(column.name);
    const auto p = predictors.size();
    std::vector<std::string> coefficients, bins;  // the histogrammed predictors; "name;bin=k"
    const auto k = static_cast<std::size_t>(cell.get_int("histogram_bins"));
    for (int j : coefficient_indices(cell, static_cast<int>(p))) {
      coefficients.push_back(predictors[static_cast<std::size_t>(j)]);
      for (std::size_t b = 0; b < k; ++b) bins.push_back(coefficients.back() + ";bin=" + std::to_string(b));
    }
    const auto m = coefficients.size();
    std::vector<MetricSpec> out = {
        {"pip_non_thresholded", p, true, "posterior inclusion probabilities from G*_r", predictors},
        {"pip_thresholded", p, true, "posterior inclusion probabilities from G**_r", predictors},
        {"posterior_mean_non_thresholded", p, true, "E*(beta_j | D) from G*_r (rescaled units)", predictors},
        {"posterior_mean_thresholded", p, true, "E*(beta_j | D) from G**_r (rescaled units)", predictors},
        {"confidence_set_density", m * k, true,
         "per coefficient (in `coefficients` order) K densities of T(C) on the cell's bins", bins},
        {"confidence_set_lower", m, true, "t_0 = min T(C): lower end of the 1 - alpha interval", coefficients},
        {"confidence_set_upper", m, true, "t_K = max T(C): upper end of the 1 - alpha interval", coefficients},
        {"confidence_set_outside_bins", m, true, "fraction of T(C) outside the cell's bin range", coefficients},
        {"confidence_set_size", 1, false, "|T(C)|: accepted candidates that are PD"},
        {"confidence_set_covers_gram", 1, false,
         "1 if ||G* - G|| <= q: the §5.1 set {G* - E : ||E|| <= q} holds the confidential G (its coverage)"},
        {"ridge_fallback_non_thresholded", 1, false, "1 if the ridge had to be raised (G*_r)"},
        {"ridge_fallback_thresholded", 1, false, "1 if the ridge had to be raised (G**_r)"},
    };
    // Calibration against the non-private analysis of the full data (docs/bma.md "Calibration metrics"):
    // deterministic post-processing of G*_r and G**_r, after every existing metric's computation.
    for (const auto& [suffix, what] : kCalibrated) {
      for (auto& spec : interval_calibration_metrics(MetricAffix{"", suffix}, predictors, what,
                                                     "the non-private posterior mean", "non-private PIP_j")) {
        out.push_back(std::move(spec));
      }
    }
    return out;
  }

  CpsSetup prepare(const Cell& cell, core::RngStream& calibration, runtime::SharedCalibration&) const override {
    CpsSetup s;
    s.design = load_design(design_options(cell, true));
    s.p = static_cast<int>(s.design.data.cols()) - 1;
    s.n = static_cast<double>(s.design.data.rows());
    std::uint64_t clamped = 0;
    s.gram = core::gram_matrix(s.design.data, -0.5, 0.5, false, &clamped);
    if (clamped != 0) throw std::logic_error("cps_bma: rescaled data outside [-0.5, 0.5]");
    s.prior = core::parse_coefficient_prior(cell.get_string("prior"));
    s.model_prior = core::parse_model_prior(cell.get_string("model_prior"));
    s.bma_options.keep_all_models = false;
    s.bma_options.credible_level = 0.0;  // no metric uses the credible intervals
    s.bma_options.top_models = 1;
    s.non_private = averaging(s, s.gram);

    const SspReleaseSetup release = prepare_ssp_release(cell, core::parse_ssp_mechanism(cell.get_string("mechanism")),
                                                        s.p, s.n, cell.get_double("delta"), calibration);
    s.mechanism = release.mechanism;
    s.regularization = release.regularization;
    s.threshold = release.threshold;
    const core::SspMechanism& m = s.mechanism;
    s.coefficients = coefficient_indices(cell, s.p);
    s.simulations = static_cast<int>(cell.get_int("simulations"));
    s.confidence = cell.get_double("confidence");
    s.norm = core::parse_matrix_norm(cell.get_string("norm"));

    // Bin range (docs/methods.md A12 adapted to streaming runs): pilot runs from the calibration
    // stream (the same computation as a replicate, with min(nsim, 2000) draws); range = the
    // [bin_quantile, 1 − bin_quantile] quantiles of the pooled pilot confidence-set values, extended
    // to cover the non-private value and the pilot DP estimates, widened by bin_margin of its width.
    const std::size_t mc = s.coefficients.size();
    std::vector<std::vector<double>> pooled(mc);
    std::vector<double> lo(mc), hi(mc);
    for (std::size_t c = 0; c < mc; ++c) lo[c] = hi[c] = s.non_private.model_averaged_coefficients(s.coefficients[c]);
    const int pilots = static_cast<int>(cell.get_int("bin_pilot_runs"));
    for (int r = 0; r < pilots; ++r) {
      const Eigen::MatrixXd noisy = core::noisy_gram_matrix(s.gram, m, calibration);
      const auto set = confidence_set(s, noisy, calibration, std::min(s.simulations, 2000));
      for (const auto& t : set.summaries) {
        for (std::size_t c = 0; c < mc; ++c) pooled[c].push_back(t(static_cast<Eigen::Index>(c)));
      }
      for (const Eigen::MatrixXd& a :
           {core::regularize(noisy, s.regularization).matrix,
            core::regularize(core::hard_threshold(noisy, s.threshold), s.regularization).matrix}) {
        const auto b = averaging(s, a);
        for (std::size_t c = 0; c < mc; ++c) {
          lo[c] = std::min(lo[c], b.model_averaged_coefficients(s.coefficients[c]));
          hi[c] = std::max(hi[c], b.model_averaged_coefficients(s.coefficients[c]));
        }
      }
    }
    const double tail = cell.get_double("bin_quantile");
    for (std::size_t c = 0; c < mc; ++c) {
      auto& v = pooled[c];
      if (v.empty()) continue;
      lo[c] = std::min(lo[c], core::type7_quantile(v, tail));
      hi[c] = std::max(hi[c], core::type7_quantile(v, 1.0 - tail));
    }
    const int k = static_cast<int>(cell.get_int("histogram_bins"));
    const double margin = cell.get_double("bin_margin");
    for (std::size_t c = 0; c < mc; ++c) {
      double width = hi[c] - lo[c];
      if (!(width > 0)) width = std::max(1e-12, std::abs(lo[c]) * 1e-6);
      const double a = lo[c] - margin * width, b = hi[c] + margin * width;
      std::vector<double> e(static_cast<std::size_t>(k) + 1);
      for (int i = 0; i <= k; ++i) e[static_cast<std::size_t>(i)] = a + (b - a) * i / k;
      e.back() = b;
      s.edges.push_back(std::move(e));
    }
    return s;
  }

  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell&,
                                                                               const CpsSetup& s) const override {
    auto vec = [](const Eigen::VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); };
    std::vector<double> edges, coefs;
    for (const auto& e : s.edges) edges.insert(edges.end(), e.begin(), e.end());
    for (int j : s.coefficients) coefs.push_back(j + 1);
    const bool wishart = s.mechanism.kind == core::SspMechanismKind::wishart;
    return {
        {"non_private_pip", vec(s.non_private.posterior_inclusion_probability)},
        {"non_private_posterior_mean", vec(s.non_private.model_averaged_coefficients)},
        {"histogram_edges", edges},
        {"histogram_coefficients", coefs},
        {"n", {s.n}},
        {"regularization", {s.regularization}},
        {"threshold", {s.threshold}},
        {"delta", {s.mechanism.delta}},
        {"l1_sensitivity", {core::ssp_l1_sensitivity(s.mechanism)}},
        {"laplace_scale", {wishart ? std::nan("") : core::ssp_laplace_scale(s.mechanism)}},
        {"wishart_degrees_of_freedom",
         {wishart ? core::ssp_wishart_parameters(s.mechanism).degrees_of_freedom : std::nan("")}},
        {"column_centre", vec(s.design.centre)},
        {"column_scale", vec(s.design.scale)},
        {"clamped_entries", {static_cast<double>(s.design.clamped_entries)}},
    };
  }

  void analyse(const Cell&, const CpsSetup& s, const runtime::Nothing&, core::RngStream& noise,
               runtime::MetricWriter& out) const override {
    const Eigen::MatrixXd noisy = core::noisy_gram_matrix(s.gram, s.mechanism, noise);
    const auto g_r = core::regularize(noisy, s.regularization);
    const auto gt_r = core::regularize(core::hard_threshold(noisy, s.threshold), s.regularization);
    const auto a = averaging(s, g_r.matrix);
    const auto b = averaging(s, gt_r.matrix);
    auto put = [&](const char* name, const Eigen::VectorXd& v) {
      out.set(name, std::span<const double>(v.data(), static_cast<std::size_t>(v.size())));
    };
    put("pip_non_thresholded", a.posterior_inclusion_probability);
    put("pip_thresholded", b.posterior_inclusion_probability);
    put("posterior_mean_non_thresholded", a.model_averaged_coefficients);
    put("posterior_mean_thresholded", b.model_averaged_coefficients);
    const auto set = confidence_set(s, noisy, noise, s.simulations);
    const std::size_t mc = s.coefficients.size();
    const std::size_t k = s.edges.front().size() - 1;
    const std::span<double> histogram = out.components("confidence_set_density");
    for (std::size_t c = 0; c < mc; ++c) {
      std::vector<double> values;
      values.reserve(set.summaries.size());
      for (const auto& t : set.summaries) values.push_back(t(static_cast<Eigen::Index>(c)));
      if (values.empty()) continue;
      const std::size_t out_count = fixed_bin_density(values, s.edges[c], histogram.subspan(c * k, k).data());
      out.set("confidence_set_lower", c, *std::min_element(values.begin(), values.end()));
      out.set("confidence_set_upper", c, *std::max_element(values.begin(), values.end()));
      out.set("confidence_set_outside_bins", c, static_cast<double>(out_count) / static_cast<double>(values.size()));
    }
    out.set("confidence_set_size", static_cast<double>(set.summaries.size()));
    // PB §5.1: does the confidence set cover G itself? G* − G is the noise drawn, G is PD, so G is a
    // candidate of the set exactly when its norm is within the simulated quantile (no random numbers).
    out.set("confidence_set_covers_gram", core::matrix_norm(noisy - s.gram, s.norm) <= set.norm_quantile ? 1.0 : 0.0);
    out.set("ridge_fallback_non_thresholded", g_r.fallback ? 1.0 : 0.0);
    out.set("ridge_fallback_thresholded", gt_r.fallback ? 1.0 : 0.0);
    // Calibration metrics (no random numbers): intervals of G*_r and G**_r against the non-private
    // posterior mean, their PIPs scored against the non-private PIPs (docs/decisions.md 2026-12-03).
    for (int t = 0; t < 2; ++t) {
      const Eigen::MatrixXd& released = t == 0 ? g_r.matrix : gt_r.matrix;
      const core::BmaResult& fit = t == 0 ? a : b;
      const MetricAffix affix{"", kCalibrated[t].first};
      const auto intervals = averaging_with_intervals(released, s.n, s.prior, s.model_prior, s.bma_options);
      write_interval_calibration(out, affix, intervals.extra_intervals, s.non_private.model_averaged_coefficients);
      out.set(affix.name("brier"),
              core::brier_score(fit.posterior_inclusion_probability, s.non_private.posterior_inclusion_probability));
    }
  }

 private:
  /// §5.1 confidence set of (E(β_j | G))_{j in coefficients}, with no ridge on the candidates.
  static core::MechanismConfidenceSet confidence_set(const CpsSetup& s, const Eigen::MatrixXd& noisy,
                                                     core::RngStream& rng, int simulations) {
    return core::mechanism_confidence_set(
        noisy, s.mechanism, rng, simulations, s.confidence,
        [&s](const Eigen::MatrixXd& g) {
          const auto r = averaging(s, g);
          Eigen::VectorXd t(static_cast<Eigen::Index>(s.coefficients.size()));
          for (std::size_t c = 0; c < s.coefficients.size(); ++c) {
            t(static_cast<Eigen::Index>(c)) = r.model_averaged_coefficients(s.coefficients[c]);
          }
          return t;
        },
        s.norm);
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_cps_bma() { return std::make_unique<CpsBma>(); }

}  // namespace dpmu::experiments
