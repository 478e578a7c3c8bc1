/// @file linear_design.cpp
/// `linear_design`: a simulation study of a linear-model data design given in the config
/// (linear_design.hpp; docs/linear-design.md), so that users can run sensitivity studies on their
/// own designs without C++.
///
/// Data factors (n, predictors, coefficients, intercept, error, data_file): generate() simulates
/// one data set (X, y) per (data key, replicate) from the data stream; every method cell of the
/// data key analyses that same data set (common random numbers). Method axes (`method` and its
/// settings): analyse() runs
///  * bma: non-private model averaging on the centred Gram matrix of the unclamped data;
///  * ssp_laplace, ssp_wishart: model averaging on a released G* = G + E (Peña & Barrientos 2024,
///    JMLR 25, §5; docs/methods.md §5), G the Gram matrix of the data clamped into the public
///    bounds, centred and rescaled into [−0.5, 0.5] (rescale_columns, public_bounds mode, as the
///    CPS application with public bounds; docs/methods.md A7), optionally hard-thresholded, with
///    the ridge of the mechanism;
///  * dp_test: the DP test by subsample and aggregate (PB §4) of H0: β_j = 0 for j in `tested`,
///    the other predictors and the intercept common to both models (dp_test.hpp).
/// bma and ssp_* also write the calibration metrics against the design's β and true model
/// (calibration_metrics.hpp, docs/bma.md "Calibration metrics"), after the other metrics and
/// without random numbers.

#include "dpmu/experiments/linear_design.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/model_space.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"
#include "dpmu/experiments/calibration_metrics.hpp"
#include "dpmu/experiments/column_design.hpp"
#include "dpmu/experiments/cps_bma.hpp"
#include "dpmu/experiments/data_files.hpp"
#include "dpmu/experiments/dp_test.hpp"
#include "dpmu/experiments/simulation_ssp.hpp"
#include "dpmu/experiments/ssp_release.hpp"
#include "dpmu/runtime/experiment.hpp"
#include "dpmu/runtime/memory.hpp"

namespace dpmu::experiments {

namespace {

std::string shortest(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

/// "name(a, b)" → name and the trimmed argument texts. @throws std::invalid_argument.
std::pair<std::string, std::vector<std::string>> split_call(std::string_view item, const std::string& hint) {
  const auto open = item.find('(');
  if (open == std::string_view::npos || item.back() != ')') {
    throw std::invalid_argument("is not of the form name(arguments); " + hint);
  }
  std::string name(item.substr(0, open));
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  const std::string_view inside = item.substr(open + 1, item.size() - open - 2);
  std::vector<std::string> args = split_list(inside, ',');
  if (args.size() != static_cast<std::size_t>(std::count(inside.begin(), inside.end(), ',')) + 1 &&
      !(args.empty() && inside.find_first_not_of(" \t") == std::string_view::npos)) {
    throw std::invalid_argument("has an empty argument; " + hint);
  }
  return {name, args};
}

double number(const std::string& text, const char* what) {
  double v = 0;
  const char* end = text.data() + text.size();
  const char* begin = text.data() + (text.rfind('+', 0) == 0 ? 1 : 0);
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) {
    throw std::invalid_argument(std::string(what) + " '" + text + "' is not a finite number");
  }
  return v;
}

constexpr const char* kPredictorHint =
    "write uniform(a, b), normal(mu, sd), correlated_normal(k, rho), correlated_normal(k, rho, mu, sd), "
    "bernoulli(p) or csv(column)";
constexpr const char* kErrorHint = "write normal(sigma), t(df, scale) or heteroscedastic(sigma, j)";

void expect_arguments(const std::vector<std::string>& args, std::initializer_list<std::size_t> counts,
                      const std::string& usage) {
  if (std::find(counts.begin(), counts.end(), args.size()) == counts.end()) {
    throw std::invalid_argument("has " + std::to_string(args.size()) + " argument" + (args.size() == 1 ? "" : "s") +
                                "; write " + usage);
  }
}

PredictorDistribution parse_predictor_item(const std::string& item) {
  using Kind = PredictorDistribution::Kind;
  PredictorDistribution d;
  d.text = item;
  const auto [name, args] = split_call(item, kPredictorHint);
  auto numbers = [&args = args](std::initializer_list<const char*> names) {
    std::vector<double> v;
    std::size_t i = 0;
    for (const char* n : names) {
      if (i < args.size()) v.push_back(number(args[i], n));
      ++i;
    }
    return v;
  };
  if (name == "uniform") {
    expect_arguments(args, {2}, "uniform(a, b)");
    d.kind = Kind::uniform;
    d.arguments = numbers({"a", "b"});
    if (!(d.arguments[0] < d.arguments[1])) throw std::invalid_argument("needs a < b");
  } else if (name == "normal") {
    expect_arguments(args, {2}, "normal(mu, sd)");
    d.kind = Kind::normal;
    d.arguments = numbers({"mu", "sd"});
    if (!(d.arguments[1] > 0)) throw std::invalid_argument("needs sd > 0");
  } else if (name == "correlated_normal") {
    expect_arguments(args, {2, 4}, "correlated_normal(k, rho) or correlated_normal(k, rho, mu, sd)");
    d.kind = Kind::correlated_normal;
    d.arguments = numbers({"k", "rho", "mu", "sd"});
    if (args.size() == 2) d.arguments.insert(d.arguments.end(), {0.0, 1.0});
    const double k = d.arguments[0];
    if (!(k >= 2 && k <= 20 && k == std::trunc(k))) {
      throw std::invalid_argument("needs an integer block size k in [2, 20]");
    }
    if (!(d.arguments[1] >= 0 && d.arguments[1] < 1)) {
      throw std::invalid_argument("needs 0 <= rho < 1 (equicorrelated block)");
    }
    if (!(d.arguments[3] > 0)) throw std::invalid_argument("needs sd > 0");
  } else if (name == "bernoulli") {
    expect_arguments(args, {1}, "bernoulli(p)");
    d.kind = Kind::bernoulli;
    d.arguments = numbers({"p"});
    if (!(d.arguments[0] > 0 && d.arguments[0] < 1)) {
      throw std::invalid_argument("needs 0 < p < 1 (p = 0 or 1 is a constant column)");
    }
  } else if (name == "csv") {
    expect_arguments(args, {1}, "csv(column)");
    d.kind = Kind::csv;
    d.column = args[0];
  } else {
    throw std::invalid_argument("'" + name + "' is not a distribution; " + kPredictorHint);
  }
  return d;
}

}  // namespace

std::vector<PredictorDistribution> parse_predictor_spec(std::string_view text) {
  const std::vector<std::string> items = split_list(text, ';');
  if (items.empty()) throw std::invalid_argument("no predictors; " + std::string(kPredictorHint));
  std::vector<PredictorDistribution> out;
  std::set<std::string> columns;
  for (std::size_t k = 0; k < items.size(); ++k) {
    try {
      out.push_back(parse_predictor_item(items[k]));
      if (out.back().kind == PredictorDistribution::Kind::csv && !columns.insert(out.back().column).second) {
        throw std::invalid_argument("names a column that is already a predictor (two equal columns)");
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("item " + std::to_string(k + 1) + " '" + items[k] + "' " + e.what());
    }
  }
  return out;
}

double median_abs_student_t(double df) {
  if (!(df > 0.0)) throw std::domain_error("median_abs_student_t: df must be > 0");
  if (std::isinf(df)) return 0.6744897501960817;  // the standard normal's median |Z|
  double x = 0.0;
  try {
    x = boost::math::ibeta_inv(0.5 * df, 0.5, 0.5);  // the median of Beta(df/2, 1/2) = 1 - B
  } catch (const std::exception&) {
    x = 0.0;  // underflow or no convergence at a vanishing df: the law has no finite typical size
  }
  if (!(x > 0.0)) return std::numeric_limits<double>::infinity();
  return std::sqrt(df * (1.0 - x) / x);
}

ErrorDistribution parse_error_spec(std::string_view text, int p) {
  using Kind = ErrorDistribution::Kind;
  ErrorDistribution e;
  e.text = std::string(text);
  try {
    const auto [name, args] = split_call(text.empty() ? std::string_view(" ") : text, kErrorHint);
    if (name == "normal") {
      expect_arguments(args, {1}, "normal(sigma)");
      e.kind = Kind::normal;
      e.sigma = number(args[0], "sigma");
    } else if (name == "t") {
      expect_arguments(args, {2}, "t(df, scale)");
      e.kind = Kind::student_t;
      e.df = number(args[0], "df");
      e.sigma = number(args[1], "scale");
      if (!(e.df > 0)) throw std::invalid_argument("needs df > 0");
    } else if (name == "heteroscedastic") {
      expect_arguments(args, {2}, "heteroscedastic(sigma, j)");
      e.kind = Kind::heteroscedastic;
      e.sigma = number(args[0], "sigma");
      const double j = number(args[1], "j");
      if (!(j >= 1 && j <= p && j == std::trunc(j))) {
        throw std::invalid_argument("needs a predictor index j in 1.." + std::to_string(p));
      }
      e.predictor = static_cast<int>(j) - 1;
    } else {
      throw std::invalid_argument("'" + name + "' is not an error distribution; " + kErrorHint);
    }
    if (!(e.sigma > 0)) throw std::invalid_argument("needs a scale > 0");
  } catch (const std::invalid_argument& x) {
    throw std::invalid_argument("'" + std::string(text) + "' " + x.what());
  }
  return e;
}

int predictor_count(const std::vector<PredictorDistribution>& predictors) {
  int p = 0;
  for (const auto& d : predictors) p += d.width();
  return p;
}

std::vector<std::string> csv_columns(const std::vector<PredictorDistribution>& predictors) {
  std::vector<std::string> out;
  for (const auto& d : predictors) {
    if (d.kind == PredictorDistribution::Kind::csv) out.push_back(d.column);
  }
  return out;
}

LinearData simulate_linear_data(const LinearDesign& design, std::size_t n, core::RngStream& rng,
                                const runtime::DataTable* csv) {
  using Kind = PredictorDistribution::Kind;
  const int p = predictor_count(design.predictors);
  if (design.coefficients.size() != p) {
    throw std::invalid_argument("simulate_linear_data: " + std::to_string(design.coefficients.size()) +
                                " coefficients for " + std::to_string(p) + " predictors");
  }
  std::vector<const std::vector<double>*> columns;
  for (const auto& name : csv_columns(design.predictors)) {
    if (csv == nullptr || csv->rows() == 0) {
      throw std::invalid_argument("simulate_linear_data: csv(" + name + ") needs a data table with rows");
    }
    columns.push_back(&csv->column(name));
  }
  LinearData d{Eigen::MatrixXd(static_cast<Eigen::Index>(n), p), Eigen::VectorXd(static_cast<Eigen::Index>(n))};
  for (std::size_t r = 0; r < n; ++r) {
    const auto i = static_cast<Eigen::Index>(r);
    const std::size_t row = columns.empty() ? 0 : static_cast<std::size_t>(core::uniform_index(rng, csv->rows()));
    Eigen::Index j = 0;
    std::size_t c = 0;
    for (const auto& item : design.predictors) {
      const auto& a = item.arguments;
      switch (item.kind) {
        case Kind::uniform:
          d.x(i, j++) = a[0] + (a[1] - a[0]) * core::uniform_open01(rng);
          break;
        case Kind::normal:
          d.x(i, j++) = a[0] + a[1] * core::standard_normal(rng);
          break;
        case Kind::correlated_normal: {
          const double shared = std::sqrt(a[1]) * core::standard_normal(rng);
          const double own = std::sqrt(1.0 - a[1]);
          for (int l = 0; l < item.width(); ++l)
            d.x(i, j++) = a[2] + a[3] * (shared + own * core::standard_normal(rng));
          break;
        }
        case Kind::bernoulli:
          d.x(i, j++) = core::uniform_open01(rng) < a[0] ? 1.0 : 0.0;
          break;
        case Kind::csv:
          d.x(i, j++) = (*columns[c++])[row];
          break;
      }
    }
    const auto& e = design.error;
    double err = 0.0;
    switch (e.kind) {
      case ErrorDistribution::Kind::normal:
        err = e.sigma * core::standard_normal(rng);
        break;
      case ErrorDistribution::Kind::student_t: {
        const double z = core::standard_normal(rng);
        err = e.sigma * z / std::sqrt(core::chi_square(rng, e.df) / e.df);
        break;
      }
      case ErrorDistribution::Kind::heteroscedastic:
        err = e.sigma * (1.0 + std::abs(d.x(i, e.predictor))) * core::standard_normal(rng);
        break;
    }
    d.y(i) = design.intercept + d.x.row(i).dot(design.coefficients) + err;
  }
  return d;
}

namespace {

using runtime::Cell;
using runtime::MetricSpec;
using runtime::ParameterSpec;
using runtime::ParameterType;

enum class Method { bma, ssp_laplace, ssp_wishart, dp_test };

Method parse_method(const std::string& name) {
  if (name == "bma") return Method::bma;
  if (name == "ssp_laplace") return Method::ssp_laplace;
  if (name == "ssp_wishart") return Method::ssp_wishart;
  return Method::dp_test;
}

bool is_ssp(Method m) { return m == Method::ssp_laplace || m == Method::ssp_wishart; }

/// The order of magnitude of a predictor's values (|x| at its typical size; csv columns: 0, their
/// values are checked with the data).
double typical_magnitude(const PredictorDistribution& d) {
  const auto& a = d.arguments;
  switch (d.kind) {
    case PredictorDistribution::Kind::uniform:
      return std::max(std::abs(a[0]), std::abs(a[1]));
    case PredictorDistribution::Kind::normal:
      return std::abs(a[0]) + a[1];
    case PredictorDistribution::Kind::correlated_normal:
      return std::abs(a[2]) + a[3];
    case PredictorDistribution::Kind::bernoulli:
      return 1.0;
    case PredictorDistribution::Kind::csv:
      return 0.0;
  }
  return 0.0;
}

/// A design whose data overflow in (practically) every replicate is refused before any work: the
/// sums of squares of the Gram matrix, n·(typical |x_j|)² and n·(typical |y|)², must be finite
/// (|y| typically |intercept| + Σ|β_j|·|x_j| + the error's scale). @throws naming the key.
void check_no_certain_overflow(const LinearDesign& d, double n) {
  // The error's typical size: its scale, or for a t law with df < 1 the scale times median |T_df|
  // (which exceeds 1 there, without bound as df -> 0: t(1e-300, 1) draws are infinite).
  const double error = d.error.kind == ErrorDistribution::Kind::student_t && d.error.df < 1.0
                           ? d.error.sigma * median_abs_student_t(d.error.df)
                           : d.error.sigma;
  if (!std::isfinite(n * error * error)) {
    throw std::invalid_argument("error: '" + d.error.text + "' has errors of typical size " + shortest(error) +
                                (d.error.kind == ErrorDistribution::Kind::student_t
                                     ? " (the scale times the median of |t| with df = " + shortest(d.error.df) + ")"
                                     : std::string()) +
                                ", so the response's sum of squares over n = " + shortest(n) +
                                " rows overflows a double in most replicates; use a larger df or a smaller scale "
                                "(the analyses are scale-equivariant)");
  }
  double response = std::abs(d.intercept) + error;
  Eigen::Index j = 0;
  for (const auto& item : d.predictors) {
    const double x = typical_magnitude(item);
    if (!std::isfinite(n * x * x)) {
      throw std::invalid_argument("predictors: item '" + item.text + "' has values of order " + shortest(x) +
                                  ", so their sum of squares over n = " + shortest(n) +
                                  " rows overflows a double in every replicate; rescale the predictor");
    }
    for (int k = 0; k < item.width(); ++k, ++j) response += std::abs(d.coefficients(j)) * x;
  }
  if (!std::isfinite(n * response * response)) {
    throw std::invalid_argument("coefficients: with intercept " + shortest(d.intercept) + " and error '" +
                                d.error.text + "' the response is of order " + shortest(response) +
                                ", so its sum of squares over n = " + shortest(n) +
                                " rows overflows a double in every replicate; rescale the coefficients, intercept or "
                                "error (the analyses are scale-equivariant)");
  }
}

/// The design of a (data) cell. @throws std::invalid_argument("key: ...") naming the parameter.
LinearDesign design_of(const Cell& cell) {
  LinearDesign d;
  try {
    d.predictors = parse_predictor_spec(cell.get_string("predictors"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("predictors: ") + e.what());
  }
  const int p = predictor_count(d.predictors);
  if (p > 20) {
    throw std::invalid_argument("predictors: " + std::to_string(p) +
                                " predictors; at most 20 (model averaging enumerates all 2^p models)");
  }
  const auto& beta = cell.get_real_list("coefficients");
  if (beta.size() != static_cast<std::size_t>(p)) {
    throw std::invalid_argument("coefficients: " + std::to_string(beta.size()) + " values for " + std::to_string(p) +
                                " predictors (correlated_normal(k, ...) counts k); give one coefficient per predictor");
  }
  d.coefficients = Eigen::Map<const Eigen::VectorXd>(beta.data(), p);
  d.intercept = cell.get_double("intercept");
  try {
    d.error = parse_error_spec(cell.get_string("error"), p);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("error: ") + e.what());
  }
  const bool uses_csv = !csv_columns(d.predictors).empty();
  const bool has_file = !cell.get_string("data_file").empty();
  if (uses_csv && !has_file) {
    throw std::invalid_argument("data_file: the predictors include csv(column) items; set data_file to the CSV file");
  }
  if (!uses_csv && has_file) {
    throw std::invalid_argument("data_file: no predictor is csv(column); remove data_file or add csv(...) items");
  }
  return d;
}

/// The csv columns of a cell's design, read and checked (null if the design has none).
/// @throws std::invalid_argument("data_file: ..." or "predictors: ...").
std::shared_ptr<const runtime::DataTable> csv_table(const Cell& cell, const LinearDesign& design) {
  const auto columns = csv_columns(design.predictors);
  if (columns.empty()) return nullptr;
  std::shared_ptr<const runtime::DataTable> table;
  try {
    table = read_csv_cached(resolve_data_file(cell, cell.get_string("data_file")), columns);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const auto& c : columns) {
      if (what.find("no column '" + c + "'") != std::string::npos) {
        throw std::invalid_argument("predictors: csv(" + c + "): " + what);
      }
    }
    throw std::invalid_argument(what.rfind("data_file: ", 0) == 0 ? what : "data_file: " + what);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(std::string("data_file: ") + e.what());
  }
  for (const auto& c : columns) {
    check_not_constant(*table, c, "predictors", "a constant predictor is collinear with the intercept; remove it");
  }
  return table;
}

/// Names of the predictors in the order of β: x1, ..., xp.
std::vector<std::string> predictor_names(int p) {
  std::vector<std::string> out;
  for (int j = 1; j <= p; ++j) out.push_back("x" + std::to_string(j));
  return out;
}

/// Public bounds (p predictors, then the response) of an SSP cell from `public_bounds`.
/// @throws std::invalid_argument("public_bounds: ...").
std::vector<std::pair<double, double>> public_bounds_of(const Cell& cell, int p) {
  std::map<std::string, std::pair<double, double>> spec;
  try {
    spec = parse_bounds_spec(cell.get_string("public_bounds"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("public_bounds: ") + e.what());
  }
  auto names = predictor_names(p);
  names.push_back("response");
  std::vector<std::pair<double, double>> out;
  for (const auto& name : names) {
    const auto it = spec.find(name);
    if (it == spec.end()) {
      throw std::invalid_argument("public_bounds: no bounds for '" + name +
                                  "'; the SSP methods need 'x1 = lower, upper; ...; xp = ...; response = lower, "
                                  "upper' (public, data-independent bounds)");
    }
    out.push_back(it->second);
  }
  for (const auto& [name, b] : spec) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw std::invalid_argument("public_bounds: '" + name + "' is not x1..x" + std::to_string(p) + " or response");
    }
  }
  return out;
}

std::vector<int> tested_indices(const Cell& cell, int p) {
  std::vector<int> out;
  for (std::int64_t j : cell.get_int_list("tested")) {
    if (j < 1 || j > p) {
      throw std::invalid_argument("tested: predictor " + std::to_string(j) + " is not in 1.." + std::to_string(p));
    }
    if (std::find(out.begin(), out.end(), static_cast<int>(j) - 1) != out.end()) {
      throw std::invalid_argument("tested: predictor " + std::to_string(j) + " is listed twice");
    }
    out.push_back(static_cast<int>(j) - 1);
  }
  if (out.empty()) throw std::invalid_argument("tested: the dp_test method needs the 1-based predictors to test");
  std::sort(out.begin(), out.end());
  return out;
}

/// The common columns [1, X_j for j not tested] and the tested columns of X.
std::pair<Eigen::MatrixXd, Eigen::MatrixXd> split_tested(const Eigen::MatrixXd& x, const std::vector<int>& tested) {
  const Eigen::Index n = x.rows(), p = x.cols();
  const auto t = static_cast<Eigen::Index>(tested.size());
  Eigen::MatrixXd common(n, 1 + p - t), test(n, t);
  common.col(0).setOnes();
  Eigen::Index c = 1, k = 0;
  for (Eigen::Index j = 0; j < p; ++j) {
    if (std::binary_search(tested.begin(), tested.end(), static_cast<int>(j))) {
      test.col(k++) = x.col(j);
    } else {
      common.col(c++) = x.col(j);
    }
  }
  return {common, test};
}

/// What prepare() computes once per cell.
struct Prepared {
  Method method = Method::bma;
  LinearDesign design;
  int p = 0;
  double n = 0.0;
  core::ModelMask truth = 0;  ///< the nonzero coefficients
  core::CoefficientPrior prior;
  core::ModelPrior model_prior;
  // SSP methods
  std::optional<core::SspMechanism> mechanism;
  std::vector<std::pair<double, double>> bounds;  ///< p predictors, then the response
  bool thresholded = false;
  double regularization = std::nan("");
  double threshold = std::nan("");
  // dp_test
  std::vector<int> tested;
  DpTestSetup test;
};

class LinearDesignExperiment final : public runtime::TypedExperiment<Prepared, LinearData> {
 public:
  std::string name() const override { return "linear_design"; }

  std::vector<ParameterSpec> parameters() const override {
    std::vector<ParameterSpec> ps = {
        {.name = "n",
         .type = ParameterType::integer,
         .data_factor = true,
         .min = 4.0,
         .description = "rows per simulated data set"},
        {.name = "predictors",
         .type = ParameterType::string,
         .data_factor = true,
         .description = "'dist; dist; ...': uniform(a, b), normal(mu, sd), correlated_normal(k, rho[, mu, sd]), "
                        "bernoulli(p), csv(column) (docs/linear-design.md)"},
        {.name = "coefficients",
         .type = ParameterType::real_list,
         .data_factor = true,
         .description = "true beta, one per predictor (blocks expanded); the nonzero ones are the true model"},
        {.name = "intercept",
         .type = ParameterType::real,
         .data_factor = true,
         .default_value = 0.0,
         .description = "true intercept"},
        {.name = "error",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string("normal(1)"),
         .description = "normal(sigma), t(df, scale) or heteroscedastic(sigma, j): sd sigma (1 + |x_j|)"},
        {.name = "data_file",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string(""),
         .description = "CSV of the csv(column) predictors, rows resampled with replacement (relative: the "
                        "config's folder, then the source tree)",
         .path = true},
        {.name = "method",
         .type = ParameterType::string,
         .allowed = {"bma", "ssp_laplace", "ssp_wishart", "dp_test"},
         .description = "bma (non-private), ssp_laplace / ssp_wishart (model averaging on a released G), "
                        "dp_test (subsample and aggregate)"},
        {.name = "prior",
         .type = ParameterType::string,
         .default_value = std::string("zellner-siow"),
         .description = "bma, ssp_*: coefficient prior (zellner-siow, g-prior, hyper-g, robust, bic, ...)"},
        {.name = "public_bounds",
         .type = ParameterType::string,
         .default_value = std::string(""),
         .description = "ssp_*: 'x1 = lower, upper; ...; response = lower, upper' (raw scale; data are clamped "
                        "into them)"},
        {.name = "wishart_delta",
         .type = ParameterType::real,
         .default_value = 0.0,
         .min = 0.0,
         .max = 1.0,
         .max_inclusive = false,
         .description = "ssp_wishart: delta; 0 means 1/n"},
        {.name = "thresholded",
         .type = ParameterType::integer,
         .default_value = std::int64_t{0},
         .min = 0.0,
         .max = 1.0,
         .description = "ssp_*: 1 hard-thresholds G* before the ridge (docs/methods.md A9)"},
        {.name = "tested",
         .type = ParameterType::integer_list,
         .default_value = std::vector<std::int64_t>{},
         .description = "dp_test: 1-based predictors of H0: beta_j = 0 (the others are common)"},
    };
    for (auto& spec : ssp_release_parameters()) {
      if (spec.name != "model_prior") spec.description = "ssp_*: " + spec.description;
      ps.push_back(std::move(spec));
    }
    for (auto& spec : dp_test_parameters("g-prior", "probability", 0.01, 0.99, "test_prior")) {
      if (spec.name == "epsilon") {
        spec.default_value = std::numeric_limits<double>::infinity();
        spec.description = "privacy budget of ssp_* and dp_test (required for them; default inf = bma)";
      } else if (spec.name == "delta") {
        spec.description = "dp_test: delta in [0, 1); 0 = Laplace noise";
      } else if (spec.name == "num_subsets") {
        spec.default_value = std::int64_t{10};
        spec.description = "dp_test: number of subsets M";
      } else {
        spec.description = "dp_test: " + spec.description;
      }
      ps.push_back(std::move(spec));
    }
    return ps;
  }

  void validate(const Cell& cell) const override {
    const LinearDesign d = design_of(cell);
    const int p = predictor_count(d.predictors);
    const auto n = cell.get_int("n");
    if (n < p + 3) {
      throw std::invalid_argument("n: " + std::to_string(n) + " rows for " + std::to_string(p) +
                                  " predictors; need n >= p + 3 = " + std::to_string(p + 3));
    }
    // One simulated data set (X and y) is held in memory by each thread.
    runtime::check_fits_in_memory(
        8.0 * static_cast<double>(n) * (p + 1),
        "n: " + std::to_string(n) + " rows x " + std::to_string(p + 1) + " columns (one simulated data set per thread)",
        "use a smaller n", 2.0);
    check_no_certain_overflow(d, static_cast<double>(n));
    const Method method = parse_method(cell.get_string("method"));
    const double epsilon = cell.get_double("epsilon");
    if (method == Method::bma && std::isfinite(epsilon)) {
      throw std::invalid_argument(
          "epsilon: the non-private method bma has no privacy budget; put bma in its own grid block without "
          "epsilon");
    }
    if (method != Method::bma && !std::isfinite(epsilon)) {
      throw std::invalid_argument("epsilon: method " + cell.get_string("method") +
                                  " needs a privacy budget (set epsilon)");
    }
    if (method != Method::dp_test) {
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
    }
    if (!is_ssp(method) && cell.get_int("thresholded") != 0) {
      throw std::invalid_argument("thresholded: only the ssp_* methods release a noisy G to threshold; use 0");
    }
    if (is_ssp(method)) {
      public_bounds_of(cell, p);
      if (method == Method::ssp_wishart && !(epsilon < 1.0)) {
        throw std::invalid_argument("epsilon: the Wishart mechanism needs epsilon < 1, got " + shortest(epsilon));
      }
    }
    if (method == Method::dp_test) {
      const auto tested = tested_indices(cell, p);
      dp_test_limits(cell, "test_prior");
      const int t = static_cast<int>(tested.size()), p0 = 1 + p - t;
      const auto m = static_cast<std::size_t>(cell.get_int("num_subsets"));
      const auto largest = core::largest_admissible_num_subsets(static_cast<std::size_t>(n), t, p0);
      if (m > largest) {
        throw std::invalid_argument("num_subsets: " + std::to_string(m) +
                                    " subsets leave too few rows; the largest admissible M for n = " +
                                    std::to_string(n) + " is " + std::to_string(largest));
      }
    }
  }

  std::vector<runtime::DataFile> data_files(const Cell& cell) const override {
    const std::string& path = cell.get_string("data_file");
    if (path.empty()) return {};
    return {data_file(cell, "data_file", path)};
  }

  void check_data(const Cell& cell) const override { csv_table(cell, design_of(cell)); }

  std::vector<MetricSpec> metrics(const Cell& cell) const override {
    const int p = predictor_count(design_of(cell).predictors);
    const auto names = predictor_names(p);
    const auto up = static_cast<std::size_t>(p);
    std::vector<MetricSpec> out = {
        {"pip", up, true, "bma, ssp_*: posterior inclusion probabilities", names},
        {"posterior_mean", up, true, "bma, ssp_*: model-averaged E(beta_j | data), original units", names},
        {"prob_true_model", 1, false, "bma, ssp_*: posterior probability of the true model (nonzero beta)"},
        {"highest_posterior_model_is_true", 1, false, "bma, ssp_*: 1 if the highest posterior model is the true one"},
        {"mean_pip_active", 1, false, "bma, ssp_*: mean PIP of the nonzero coefficients (NaN if none)"},
        {"mean_pip_inactive", 1, false, "bma, ssp_*: mean PIP of the zero coefficients (NaN if none)"},
        {"predictive_mse", 1, false, "bma, ssp_*: n^-1 ||V beta - V beta_hat||^2 (centred unclamped V)"},
        {"coefficient_rmse", 1, false, "bma, ssp_*: sqrt(mean_j (beta_hat_j - beta_j)^2), original units"},
        {"ridge_fallback", 1, false, "ssp_*: 1 if the ridge had to be raised to make G*_r PD"},
        {"clamped_entries", 1, false, "ssp_*: raw values moved into their public bounds"},
    };
    for (auto& m : dp_test_metrics()) {
      m.description = "dp_test: " + m.description;
      out.push_back(std::move(m));
    }
    // Calibration against the design's truth (calibration_metrics.hpp; docs/bma.md "Calibration metrics")
    const MetricAffix plain;
    for (auto& m : interval_calibration_metrics(plain, names, "original units", "the true beta_j", "1[beta_j != 0]")) {
      m.description = "bma, ssp_*: " + m.description;
      out.push_back(std::move(m));
    }
    for (const char* base : {"pip", "model"}) {
      for (auto& m : reliability_metrics(plain, base, "bma, ssp_*")) {
        m.description = "bma, ssp_*: " + m.description;
        out.push_back(std::move(m));
      }
    }
    return out;
  }

  Prepared prepare(const Cell& cell, core::RngStream& calibration, runtime::SharedCalibration&) const override {
    Prepared pr;
    pr.method = parse_method(cell.get_string("method"));
    pr.design = design_of(cell);
    pr.p = predictor_count(pr.design.predictors);
    pr.n = static_cast<double>(cell.get_int("n"));
    for (int j = 0; j < pr.p; ++j) {
      if (pr.design.coefficients(j) != 0.0) pr.truth |= core::ModelMask{1} << j;
    }
    if (pr.method == Method::dp_test) {
      pr.tested = tested_indices(cell, pr.p);
      const int t = static_cast<int>(pr.tested.size());
      prepare_dp_test(pr.test, cell, static_cast<std::size_t>(pr.n), t, 1 + pr.p - t, calibration, "test_prior");
      return pr;
    }
    pr.prior = core::parse_coefficient_prior(cell.get_string("prior"), pr.n);
    pr.model_prior = core::parse_model_prior(cell.get_string("model_prior"));
    if (pr.method == Method::bma) return pr;
    pr.bounds = public_bounds_of(cell, pr.p);
    const auto kind =
        pr.method == Method::ssp_laplace ? core::SspMechanismKind::laplace : core::SspMechanismKind::wishart;
    const SspReleaseSetup release =
        prepare_ssp_release(cell, kind, pr.p, pr.n, cell.get_double("wishart_delta"), calibration);
    pr.regularization = release.regularization;
    pr.thresholded = cell.get_int("thresholded") != 0;
    if (pr.thresholded) pr.threshold = release.threshold;
    pr.mechanism = release.mechanism;
    return pr;
  }

  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell&,
                                                                               const Prepared& pr) const override {
    std::vector<std::pair<std::string, std::vector<double>>> out = {
        {"regularization", {pr.regularization}},
        {"threshold", {pr.threshold}},
        {"l1_sensitivity", {pr.mechanism ? core::ssp_l1_sensitivity(*pr.mechanism) : std::nan("")}},
        {"wishart_delta",
         {pr.mechanism && pr.mechanism->kind == core::SspMechanismKind::wishart ? pr.mechanism->delta : std::nan("")}},
    };
    if (pr.method == Method::dp_test) {
      for (auto& c : dp_test_calibration_outputs(pr.test)) out.push_back(std::move(c));
    }
    return out;
  }

  LinearData generate(const Cell& data_cell, core::RngStream& data) const override {
    const LinearDesign design = design_of(data_cell);
    const auto table = csv_table(data_cell, design);
    return simulate_linear_data(design, static_cast<std::size_t>(data_cell.get_int("n")), data, table.get());
  }

  void analyse(const Cell& cell, const Prepared& pr, const LinearData& d, core::RngStream& noise,
               runtime::MetricWriter& out) const override {
    // Simulated data that overflowed (huge coefficients, an error law with a tiny scale or df) are a
    // failed replicate, never analysed: a DP test would turn every subset into the failure value
    // and report a plausible P(H1), a silently wrong answer.
    if (!d.x.allFinite() || !d.y.allFinite()) {
      throw std::domain_error(
          "linear_design: the simulated data have a non-finite value (the predictors, coefficients, intercept or "
          "error law overflow a double); choose smaller coefficients or error scales");
    }
    if (pr.method == Method::dp_test) {
      const auto [common, tested] = split_tested(d.x, pr.tested);
      const auto partition = core::random_partition(static_cast<std::size_t>(d.y.size()), pr.test.sizes.size(), noise);
      const auto t =
          core::subset_statistics(common, tested, d.y, partition, pr.test.prior, pr.test.release->failure_value());
      write_dp_test_release(pr.test, cell, t, noise, out);
      return;
    }
    const Eigen::Index p = pr.p;
    Eigen::MatrixXd raw(d.x.rows(), p + 1);
    raw << d.x, d.y;
    Eigen::MatrixXd centred = raw.rowwise() - raw.colwise().mean();
    const Eigen::MatrixXd confidential = centred.transpose() * centred;  // evaluation (and bma)
    core::BmaOptions opts;
    opts.credible_level = 0.0;  // the intervals at 50/80/95 % come from averaging_with_intervals
    opts.top_models = 0;
    opts.keep_all_models = true;
    core::BmaResult res;
    Eigen::VectorXd estimate;
    std::vector<core::CredibleIntervals> intervals;  // at kCalibrationLevels, original units
    if (pr.method == Method::bma) {
      res = core::bayesian_model_averaging(confidential, pr.n, pr.prior, pr.model_prior, opts);
      estimate = res.model_averaged_coefficients;
      intervals = averaging_with_intervals(confidential, pr.n, pr.prior, pr.model_prior, opts).extra_intervals;
    } else {
      const RescaledDesign rescaled = rescale_columns(raw, RescaleMode::public_bounds, pr.bounds);
      std::uint64_t clamped = 0;
      const Eigen::MatrixXd g = core::gram_matrix(rescaled.data, -0.5, 0.5, false, &clamped);
      if (clamped != 0) throw std::logic_error("linear_design: rescaled data outside [-0.5, 0.5]");
      const Eigen::MatrixXd gstar = core::noisy_gram_matrix(g, *pr.mechanism, noise);
      const auto released =
          core::regularize(pr.thresholded ? core::hard_threshold(gstar, pr.threshold) : gstar, pr.regularization);
      res = core::bayesian_model_averaging(released.matrix, pr.n, pr.prior, pr.model_prior, opts);
      // slopes of the rescaled data back to the original units: beta_j = beta~_j s_y / s_j
      estimate = res.model_averaged_coefficients.cwiseQuotient(rescaled.scale.head(p)) * rescaled.scale(p);
      const Eigen::VectorXd to_original = rescaled.scale.head(p).cwiseInverse() * rescaled.scale(p);
      intervals = rescale_intervals(
          averaging_with_intervals(released.matrix, pr.n, pr.prior, pr.model_prior, opts).extra_intervals, to_original);
      out.set("ridge_fallback", released.fallback ? 1.0 : 0.0);
      out.set("clamped_entries", static_cast<double>(rescaled.clamped_entries));
    }
    const auto& pip = res.posterior_inclusion_probability;
    out.set("pip", std::span<const double>(pip.data(), static_cast<std::size_t>(p)));
    out.set("posterior_mean", std::span<const double>(estimate.data(), static_cast<std::size_t>(p)));
    out.set("prob_true_model", std::exp(res.log_posterior_probability(static_cast<Eigen::Index>(pr.truth))));
    out.set("highest_posterior_model_is_true", res.highest_posterior_model == pr.truth ? 1.0 : 0.0);
    double active = 0.0, inactive = 0.0;
    int n_active = 0;
    for (Eigen::Index j = 0; j < p; ++j) {
      if ((pr.truth >> j) & 1U) {
        active += pip(j);
        ++n_active;
      } else {
        inactive += pip(j);
      }
    }
    out.set("mean_pip_active", n_active > 0 ? active / n_active : std::nan(""));
    out.set("mean_pip_inactive", n_active < p ? inactive / static_cast<double>(p - n_active) : std::nan(""));
    out.set("predictive_mse", predictive_mse(confidential, pr.n, pr.design.coefficients, estimate));
    out.set("coefficient_rmse", std::sqrt((estimate - pr.design.coefficients).squaredNorm() / static_cast<double>(p)));
    const MetricAffix plain;
    write_interval_calibration(out, plain, intervals, pr.design.coefficients);
    out.set("brier", core::brier_score(pip, inclusion_indicators(pr.truth, static_cast<int>(p))));
    write_reliability(out, plain, "pip", pip_reliability(pip, pr.truth));
    write_reliability(out, plain, "model", model_reliability(res.log_posterior_probability, pr.truth));
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_linear_design() { return std::make_unique<LinearDesignExperiment>(); }

}  // namespace dpmu::experiments
