/// @file hypothesis_tests.cpp
/// Differentially private tests by subsample and aggregate (paper §4), as engine experiments:
///  * `hsb_posterior`, `hsb_likelihood_ratio` — one class, `dp_test_real_data`, on a CSV data set
///    (HSB2 by default; paper §4.4, Figures 1, 2, 6, 7). The data are fixed; each replicate redraws
///    the random split and the noise from the replicate's noise stream. They differ only in their
///    defaults (g-prior with probability-scale censoring vs the likelihood ratio with L = 0, U = 7).
///  * `type1_calibration` — data simulated under H0 (new data set per replicate from the data
///    stream), rejection with corrected and uncorrected critical values.
/// Corrected critical values at α = 0.05 and 0.01 are simulated once per cell in prepare()
/// (paper §4.3) for lr/bic/aic; Bayesian priors have none (their reject metrics are NaN).

#include <cmath>
#include <filesystem>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/core/information_criteria.hpp"
#include "dpmu/core/linear_model.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"
#include "dpmu/experiments/column_design.hpp"
#include "dpmu/experiments/data_files.hpp"
#include "dpmu/experiments/dp_test.hpp"
#include "dpmu/runtime/data_table.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

using runtime::Cell;
using runtime::MetricSpec;
using runtime::ParameterSpec;
using runtime::ParameterType;

namespace {
core::Prior prior_of(const Cell& cell, const std::string& prior_key) {
  core::Prior prior;
  prior.kind = core::parse_prior_kind(cell.get_string(prior_key));
  return prior;
}
}  // namespace

std::vector<ParameterSpec> dp_test_parameters(const std::string& default_prior, const std::string& default_scale,
                                              double default_lower, double default_upper,
                                              const std::string& prior_key) {
  return {
      {.name = prior_key,
       .type = ParameterType::string,
       .default_value = default_prior,
       .allowed = core::prior_kind_names(),
       .description = "prior on g or information criterion"},
      {.name = "prior_h0",
       .type = ParameterType::real,
       .default_value = 0.5,
       .min = 0.0,
       .max = 1.0,
       .min_inclusive = false,
       .max_inclusive = false,
       .description = "prior probability of H0"},
      {.name = "epsilon",
       .type = ParameterType::real,
       .min = 0.0,
       .min_inclusive = false,
       .description = "privacy parameter epsilon > 0"},
      {.name = "delta",
       .type = ParameterType::real,
       .default_value = 0.0,
       .min = 0.0,
       .max = 1.0,
       .max_inclusive = false,
       .description = "privacy parameter delta in [0, 1); 0 = Laplace"},
      {.name = "num_subsets", .type = ParameterType::integer, .min = 1.0, .description = "number of subsets M"},
      {.name = "censoring_scale",
       .type = ParameterType::string,
       .default_value = default_scale,
       .allowed = {"probability", "log"},
       .description = "censor_lower/upper as posterior probabilities of H1 or on the statistic's log scale"},
      {.name = "censor_lower",
       .type = ParameterType::real,
       .default_value = default_lower,
       .description = "lower censoring limit L (or its posterior probability)"},
      {.name = "censor_upper",
       .type = ParameterType::real,
       .default_value = default_upper,
       .description = "upper censoring limit U (or its posterior probability)"},
      {.name = "gaussian_calibration",
       .type = ParameterType::string,
       .default_value = std::string("exact"),
       .allowed = {"exact", "paper_literal"},
       .description = "Gaussian noise: exact BW sigma or the paper's variance"},
      {.name = "null_simulations",
       .type = ParameterType::integer,
       .default_value = std::int64_t{100000},
       .min = 100.0,
       .description = "null draws for corrected critical values (lr, bic, aic)"},
  };
}

core::CensoringLimits dp_test_limits(const Cell& cell, const std::string& prior_key) {
  const double lo = cell.get_double("censor_lower"), hi = cell.get_double("censor_upper");
  if (cell.get_string("censoring_scale") == "probability") {
    if (core::parse_prior_kind(cell.get_string(prior_key)) == core::PriorKind::lr) {
      throw std::invalid_argument("censoring_scale: the likelihood ratio (lr) needs censoring_scale: log");
    }
    if (!(lo > 0 && lo < hi && hi < 1)) {
      throw std::invalid_argument("censor_lower: probability limits need 0 < censor_lower < censor_upper < 1");
    }
    return core::censoring_limits_from_posterior_probabilities(lo, hi, cell.get_double("prior_h0"));
  }
  if (!(lo < hi)) throw std::invalid_argument("censor_lower: must be smaller than censor_upper");
  return {lo, hi};
}

void prepare_dp_test(DpTestSetup& s, const Cell& cell, std::size_t n, int p, int p0, core::RngStream& calibration,
                     const std::string& prior_key) {
  s.prior = prior_of(cell, prior_key);
  s.limits = dp_test_limits(cell, prior_key);
  const auto m = static_cast<std::size_t>(cell.get_int("num_subsets"));
  core::check_num_subsets(n, m, p, p0);
  core::SubsampleAggregateSettings rs;
  rs.prior = s.prior;
  rs.epsilon = cell.get_double("epsilon");
  rs.delta = cell.get_double("delta");
  rs.num_subsets = m;
  rs.limits = s.limits;
  rs.calibration = core::parse_gaussian_calibration(cell.get_string("gaussian_calibration"));
  rs.n = n;
  rs.p = p;
  rs.p0 = p0;
  s.release.emplace(rs);
  s.sizes = core::subset_sizes(n, m);
  s.corrected.assign(2, std::nan(""));
  s.corrected_mcse.assign(2, std::nan(""));
  s.uncorrected.assign(2, std::nan(""));
  if (!core::is_bayesian(s.prior.kind)) {
    const auto null =
        core::simulate_null_distribution(s.prior, s.sizes, p, p0, s.limits, s.mechanism(),
                                         static_cast<std::size_t>(cell.get_int("null_simulations")), calibration);
    s.null_probability_at_upper = null.probability_at_upper;
    for (int k = 0; k < 2; ++k) {
      const auto cv = core::corrected_critical_value(null, kDpTestLevels[k], s.limits);
      s.critical_values.push_back(cv);
      s.corrected[k] = cv.value;
      s.corrected_mcse[k] = cv.mcse;
      s.uncorrected[k] = core::uncorrected_critical_value(s.prior.kind, s.sizes, p, kDpTestLevels[k]);
    }
  }
}

namespace {
/// "alpha=0.05", "alpha=0.01": the components of the reject_* metrics (kDpTestLevels).
std::vector<std::string> level_labels() {
  std::vector<std::string> out;
  for (double alpha : kDpTestLevels) {
    std::ostringstream os;
    os << "alpha=" << alpha;
    out.push_back(os.str());
  }
  return out;
}

}  // namespace

std::vector<MetricSpec> dp_test_metrics() {
  return {{.name = "log_statistic", .description = "released T* = censored noisy average (log scale)"},
          {.name = "noisy_statistic", .description = "T~ before the second censoring"},
          {.name = "posterior_probability_h1", .description = "P*(H1|D) from T* (NaN for lr)"},
          {.name = "reject_corrected",
           .size = 2,
           .is_vector = true,
           .description = "T* > corrected critical value at alpha = 0.05, 0.01 (NaN for Bayesian priors)",
           .component_labels = level_labels()},
          {.name = "reject_uncorrected",
           .size = 2,
           .is_vector = true,
           .description = "T* > uncorrected (chi-square) critical value at alpha = 0.05, 0.01",
           .component_labels = level_labels()},
          {.name = "reject_corrected_randomized",
           .size = 2,
           .is_vector = true,
           .description = "corrected test randomized at the atom T* = U (exact level), alpha = 0.05, 0.01",
           .component_labels = level_labels()},
          {.name = "censored_average",
           .description =
               "confidential (1/M) sum of T_i^c, each T_i censored to [L, U] (T~ less the noise; simulation only)"},
          {.name = "noise_interval_covers",
           .size = 2,
           .is_vector = true,
           .description = "1 if T~ -/+ eta_{1-alpha/2} (PB §4.2, end points not censored) covers censored_average, "
                          "alpha = 0.05, 0.01",
           .component_labels = level_labels()}};
}

std::vector<std::pair<std::string, std::vector<double>>> dp_test_calibration_outputs(const DpTestSetup& s) {
  return {{"critical_value_corrected", s.corrected},
          {"critical_value_corrected_mcse", s.corrected_mcse},
          {"critical_value_uncorrected", s.uncorrected},
          {"randomization_probability", s.critical_values.empty()
                                            ? std::vector<double>{std::nan(""), std::nan("")}
                                            : std::vector<double>{s.critical_values[0].randomization_probability,
                                                                  s.critical_values[1].randomization_probability}},
          {"null_probability_at_upper", {s.null_probability_at_upper}},
          {"censoring_limits", {s.limits.lower, s.limits.upper}},
          {"noise_sd", {s.mechanism().noise_sd()}},
          {"noise_interval_half_width",
           {s.mechanism().noise_quantile(1.0 - kDpTestLevels[0] / 2.0),
            s.mechanism().noise_quantile(1.0 - kDpTestLevels[1] / 2.0)}},
          {"non_private_log_statistic", {s.non_private_log_statistic}},
          {"non_private_posterior_probability_h1", {s.non_private_posterior}}};
}

void write_dp_test_release(const DpTestSetup& s, const Cell& cell, const std::vector<double>& t, core::RngStream& noise,
                           runtime::MetricWriter& out) {
  core::NoiseSource source = core::NoiseSource::simulation(noise);
  const auto rel = s.release->release_statistics(t, source);
  out.set("log_statistic", rel.released_statistic);
  out.set("noisy_statistic", rel.noisy_statistic);
  // The confidential average and the coverage of the paper §4.2 interval: diagnostics of a
  // simulation stream (no draw: the noise stream is used as before).
  if (rel.diagnostics) {
    const double average = rel.diagnostics->mean_censored;
    out.set("censored_average", average);
    for (std::size_t k = 0; k < 2; ++k) {
      const auto c = core::noise_interval(rel.noisy_statistic, s.mechanism(), kDpTestLevels[k]);
      out.set("noise_interval_covers", k, c.lower <= average && average <= c.upper ? 1.0 : 0.0);
    }
  }
  out.set("posterior_probability_h1",
          s.prior.kind == core::PriorKind::lr
              ? std::nan("")
              : core::posterior_probability_h1(rel.released_statistic, cell.get_double("prior_h0")));
  for (std::size_t k = 0; k < 2; ++k) {
    out.set("reject_corrected", k,
            std::isnan(s.corrected[k]) ? std::nan("") : (rel.released_statistic > s.corrected[k] ? 1.0 : 0.0));
    out.set("reject_uncorrected", k,
            std::isnan(s.uncorrected[k]) ? std::nan("") : (rel.released_statistic > s.uncorrected[k] ? 1.0 : 0.0));
  }
  // Randomized decision at the atom: one uniform per level, always drawn (fixed stream use).
  for (std::size_t k = 0; k < 2; ++k) {
    const double u = core::uniform_open01(noise);
    out.set(
        "reject_corrected_randomized", k,
        s.critical_values.empty()
            ? std::nan("")
            : (u < core::rejection_probability(s.critical_values[k], rel.released_statistic, s.limits) ? 1.0 : 0.0));
  }
}

namespace {

/// The fixed data set of a DP test: [1, common] (intercept first), tested, response.
struct RealDataSet {
  Eigen::MatrixXd common, tested;
  Eigen::VectorXd response;
  std::vector<std::string> column_names;  ///< "(intercept)", common, tested
};

/// Load a cell's data set and check what would make every replicate fail, naming the config key:
/// the response among the predictors, a column named twice, a constant column (collinear with the
/// intercept), a constant response. Missing columns and non-numeric or NaN values are read_csv's
/// errors (naming the file, line and column).
RealDataSet load_real_data_set(const Cell& cell) {
  const auto common = split_list(cell.get_string("common"));
  const auto tested = split_list(cell.get_string("tested"));
  const std::string response = cell.get_string("response");
  std::vector<std::string> wanted = common;
  wanted.insert(wanted.end(), tested.begin(), tested.end());
  for (const auto& [key, names] : {std::pair{"common", &common}, std::pair{"tested", &tested}}) {
    for (const auto& c : *names) {
      if (c == response) {
        throw std::invalid_argument(std::string(key) + ": '" + c +
                                    "' is the response; the response cannot be a predictor");
      }
    }
  }
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (wanted[i] == wanted[j]) {
        throw std::invalid_argument(std::string(i < common.size() ? "common" : "tested") + ": column '" + wanted[i] +
                                    "' is listed twice (common and tested must name distinct columns)");
      }
    }
  }
  wanted.push_back(response);
  std::shared_ptr<const runtime::DataTable> table;
  try {
    table = read_csv_cached(resolve_data_file(cell, cell.get_string("data_file")), wanted);
  } catch (const std::invalid_argument& e) {
    // A missing column is reported at the key that names it; anything else at data_file.
    const std::string what = e.what();
    for (const auto& [key, names] : {std::pair{"common", &common}, std::pair{"tested", &tested}}) {
      for (const auto& c : *names) {
        if (what.find("no column '" + c + "'") != std::string::npos)
          throw std::invalid_argument(std::string(key) + ": " + what);
      }
    }
    if (what.find("no column '" + response + "'") != std::string::npos)
      throw std::invalid_argument("response: " + what);
    throw std::invalid_argument(what.rfind("data_file: ", 0) == 0 ? what : "data_file: " + what);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(std::string("data_file: ") + e.what());
  }
  for (const auto& c : common) check_not_constant(*table, c, "common", "it is collinear with the intercept; remove it");
  for (const auto& c : tested) check_not_constant(*table, c, "tested", "it is collinear with the intercept; remove it");
  check_not_constant(*table, response, "response", "there is nothing to explain");
  RealDataSet d;
  const auto n = static_cast<Eigen::Index>(table->rows());
  d.common.resize(n, static_cast<Eigen::Index>(common.size() + 1));
  d.common.col(0).setOnes();
  d.common.rightCols(static_cast<Eigen::Index>(common.size())) = table->matrix(common);
  d.tested = table->matrix(tested);
  const auto& y = table->column(response);
  d.response = Eigen::Map<const Eigen::VectorXd>(y.data(), n);
  d.column_names.push_back("(intercept)");
  d.column_names.insert(d.column_names.end(), common.begin(), common.end());
  d.column_names.insert(d.column_names.end(), tested.begin(), tested.end());
  return d;
}

/// A DP test on a fixed CSV data set.
class DpTestRealData final : public runtime::TypedExperiment<DpTestSetup> {
 public:
  DpTestRealData(std::string name, std::string prior, std::string scale, double lower, double upper, std::string common,
                 std::string tested)
      : name_(std::move(name)),
        prior_(std::move(prior)),
        scale_(std::move(scale)),
        lower_(lower),
        upper_(upper),
        common_(std::move(common)),
        tested_(std::move(tested)) {}

  std::string name() const override { return name_; }

  std::vector<ParameterSpec> parameters() const override {
    auto ps = dp_test_parameters(prior_, scale_, lower_, upper_);
    ps.push_back({.name = "test",
                  .type = ParameterType::string,
                  .default_value = std::string("test"),
                  .description = "label of the test in outputs and plots (e.g. H1, H2)"});
    ps.push_back({.name = "data_file",
                  .type = ParameterType::string,
                  .data_factor = true,
                  .default_value = std::string("experiments/data/hsb2.csv"),
                  .description = "CSV with a header row (relative: the config's folder, then the source tree)",
                  .path = true});
    ps.push_back({.name = "response",
                  .type = ParameterType::string,
                  .data_factor = true,
                  .default_value = std::string("math"),
                  .description = "response column"});
    ps.push_back({.name = "common",
                  .type = ParameterType::string,
                  .data_factor = true,
                  .default_value = common_,
                  .description = "comma-separated common predictors (an intercept is always included)"});
    ps.push_back({.name = "tested",
                  .type = ParameterType::string,
                  .data_factor = true,
                  .default_value = tested_,
                  .description = "comma-separated tested predictors"});
    return ps;
  }

  void validate(const Cell& cell) const override {
    dp_test_limits(cell);
    if (split_list(cell.get_string("tested")).empty()) throw std::invalid_argument("tested: name at least one column");
  }

  std::vector<runtime::DataFile> data_files(const Cell& cell) const override {
    return {data_file(cell, "data_file", cell.get_string("data_file"))};
  }

  void check_data(const Cell& cell) const override {
    const RealDataSet d = load_real_data_set(cell);
    const auto n = static_cast<std::size_t>(d.response.size());
    const int p = static_cast<int>(d.tested.cols()), p0 = static_cast<int>(d.common.cols());
    // core messages start with the function's name; the user needs the config key and the data
    auto without_function = [](const std::string& what, const std::string& fn) {
      return what.rfind(fn + ": ", 0) == 0 ? what.substr(fn.size() + 2) : what;
    };
    try {
      core::check_num_subsets(n, static_cast<std::size_t>(cell.get_int("num_subsets")), p, p0);
    } catch (const std::exception& e) {
      throw std::invalid_argument("num_subsets: " + without_function(e.what(), "check_num_subsets") + " (" +
                                  cell.get_string("data_file") + " has " + std::to_string(n) + " rows)");
    }
    try {  // rank of [1, common, tested] and a response that is not constant given the common predictors
      core::fit_nested_models(d.common, d.tested, d.response, d.column_names);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("tested: the data in " + cell.get_string("data_file") +
                                  " cannot be analysed: " + without_function(e.what(), "fit_nested_models"));
    }
  }

  std::vector<MetricSpec> metrics(const Cell&) const override { return dp_test_metrics(); }

  DpTestSetup prepare(const Cell& cell, core::RngStream& calibration, runtime::SharedCalibration&) const override {
    DpTestSetup s;
    RealDataSet d = load_real_data_set(cell);
    s.common = std::move(d.common);
    s.tested = std::move(d.tested);
    s.response = std::move(d.response);
    const auto n = s.response.size();
    const int p = static_cast<int>(s.tested.cols()), p0 = static_cast<int>(s.common.cols());
    prepare_dp_test(s, cell, static_cast<std::size_t>(n), p, p0, calibration);
    const auto fit = core::fit_nested_models(s.common, s.tested, s.response);
    s.non_private_log_statistic =
        core::subset_statistic(s.prior, fit.log_one_minus_r_squared, static_cast<double>(n), p, p0);
    if (s.prior.kind != core::PriorKind::lr) {
      s.non_private_posterior =
          core::posterior_probability_h1(s.non_private_log_statistic, cell.get_double("prior_h0"));
    }
    return s;
  }

  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell&,
                                                                               const DpTestSetup& s) const override {
    return dp_test_calibration_outputs(s);
  }

  void analyse(const Cell& cell, const DpTestSetup& s, const runtime::Nothing&, core::RngStream& noise,
               runtime::MetricWriter& out) const override {
    const auto partition = core::random_partition(static_cast<std::size_t>(s.response.size()), s.sizes.size(), noise);
    const auto t =
        core::subset_statistics(s.common, s.tested, s.response, partition, s.prior, s.release->failure_value());
    write_dp_test_release(s, cell, t, noise, out);
  }

 private:
  std::string name_, prior_, scale_;
  double lower_, upper_;
  std::string common_, tested_;
};

/// Type-I error of DP tests on data simulated under H0.
/// One data set simulated under H0 (Type1Calibration::generate).
struct NullDataSet {
  Eigen::MatrixXd common, tested;
  Eigen::VectorXd response;
};

class Type1Calibration final : public runtime::TypedExperiment<DpTestSetup, NullDataSet> {
 public:
  std::string name() const override { return "type1_calibration"; }

  std::vector<ParameterSpec> parameters() const override {
    auto ps = dp_test_parameters("lr", "log", 0.0, 7.0);
    ps.push_back({.name = "n",
                  .type = ParameterType::integer,
                  .data_factor = true,
                  .min = 3.0,
                  .description = "rows per simulated data set"});
    ps.push_back({.name = "p",
                  .type = ParameterType::integer,
                  .data_factor = true,
                  .default_value = std::int64_t{1},
                  .min = 1.0,
                  .description = "tested predictors"});
    ps.push_back({.name = "p0",
                  .type = ParameterType::integer,
                  .data_factor = true,
                  .default_value = std::int64_t{1},
                  .min = 1.0,
                  .description = "common columns, intercept included"});
    return ps;
  }

  void validate(const Cell& cell) const override {
    dp_test_limits(cell);
    const auto n = static_cast<std::size_t>(cell.get_int("n"));
    const int p = static_cast<int>(cell.get_int("p")), p0 = static_cast<int>(cell.get_int("p0"));
    const auto m = static_cast<std::size_t>(cell.get_int("num_subsets"));
    if (m > core::largest_admissible_num_subsets(n, p, p0)) {
      throw std::invalid_argument("num_subsets: " + std::to_string(m) +
                                  " subsets leave too few rows; the largest "
                                  "admissible M for n = " +
                                  std::to_string(n) + " is " +
                                  std::to_string(core::largest_admissible_num_subsets(n, p, p0)));
    }
    if (core::is_bayesian(core::parse_prior_kind(cell.get_string("prior")))) {
      throw std::invalid_argument("prior: type-I error calibration needs lr, bic or aic");
    }
  }

  std::vector<MetricSpec> metrics(const Cell&) const override { return dp_test_metrics(); }

  DpTestSetup prepare(const Cell& cell, core::RngStream& calibration, runtime::SharedCalibration&) const override {
    DpTestSetup s;
    prepare_dp_test(s, cell, static_cast<std::size_t>(cell.get_int("n")), static_cast<int>(cell.get_int("p")),
                    static_cast<int>(cell.get_int("p0")), calibration);
    return s;
  }

  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell&,
                                                                               const DpTestSetup& s) const override {
    return dp_test_calibration_outputs(s);
  }

  /// H0: y = 1 + 0.5 Σ z_j + N(0, 1); tested columns correlated with the common ones.
  NullDataSet generate(const Cell& data_cell, core::RngStream& data) const override {
    const auto n = static_cast<Eigen::Index>(data_cell.get_int("n"));
    const auto p = static_cast<Eigen::Index>(data_cell.get_int("p"));
    const auto p0 = static_cast<Eigen::Index>(data_cell.get_int("p0"));
    NullDataSet d{Eigen::MatrixXd(n, p0), Eigen::MatrixXd(n, p), Eigen::VectorXd(n)};
    for (Eigen::Index i = 0; i < n; ++i) {
      d.common(i, 0) = 1.0;
      double mean = 1.0, zsum = 0.0;
      for (Eigen::Index j = 1; j < p0; ++j) {
        d.common(i, j) = core::standard_normal(data);
        mean += 0.5 * d.common(i, j);
        zsum += d.common(i, j);
      }
      for (Eigen::Index j = 0; j < p; ++j) d.tested(i, j) = 0.3 * zsum + core::standard_normal(data);
      d.response(i) = mean + core::standard_normal(data);
    }
    return d;
  }

  void analyse(const Cell& cell, const DpTestSetup& s, const NullDataSet& d, core::RngStream& noise,
               runtime::MetricWriter& out) const override {
    const auto partition = core::random_partition(static_cast<std::size_t>(d.response.size()), s.sizes.size(), noise);
    const auto t =
        core::subset_statistics(d.common, d.tested, d.response, partition, s.prior, s.release->failure_value());
    write_dp_test_release(s, cell, t, noise, out);
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_hsb_posterior() {
  return std::make_unique<DpTestRealData>("hsb_posterior", "g-prior", "probability", 0.01, 0.99, "", "female");
}
std::unique_ptr<runtime::Experiment> make_hsb_likelihood_ratio() {
  return std::make_unique<DpTestRealData>("hsb_likelihood_ratio", "lr", "log", 0.0, 7.0, "science", "read");
}
std::unique_ptr<runtime::Experiment> make_type1_calibration() { return std::make_unique<Type1Calibration>(); }

}  // namespace dpmu::experiments
