/// @file baseline_tests.cpp
/// `nested_test_head_to_head`: the DP tests of H0: y ~ 1 + common against H1: y ~ 1 + common + tested
/// on the same simulated data sets, with the method as an axis (docs/methods.md §4, §11):
///  * `subsample-aggregate` — PB §4 with the likelihood ratio (2 log Λ, censored to [0, U]) and the
///    corrected critical value simulated once per cell (PB §4.3); ε-DP (δ = 0) or (ε, δ) Gaussian;
///  * `test-of-tests` — Kazan et al. (2023) around the partial F-test, (m, α0) by the authors' rule
///    once per cell; pure ε-DP (δ is ignored: the method spends δ = 0);
///  * `dp-f` — Alabi & Vadhan (2022): ρ-zCDP moments with ρ from (ε, δ) (δ > 0 required), the
///    parametric-bootstrap null with K null data sets per replicate.
/// Data (data factors design, n, p_common, q, effect): design `gaussian` — predictors iid N(0, 1);
/// design `hsb` — the HSB2 design (paper §4.4): n rows drawn with replacement from the 200 students'
/// scores, common columns the first p_common of (science, socst), tested the first q of (read,
/// write, math), each standardised by its mean and SD over the 200 students (so `effect` is per SD
/// as in the gaussian design; the scores correlate 0.47–0.66). Either way y = 1 + 0.5 Σ common
/// + effect Σ tested + N(0, 1) (effect 0: H0). Clipping bounds of dp-f: [−bound, bound] on every
/// column. Metrics: reject (at `alpha`), p_value (NaN for subsample-aggregate, which has a critical
/// value instead) and the released statistic.

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/core/dp_f_test.hpp"
#include "dpmu/core/subsample_and_aggregate.hpp"
#include "dpmu/core/test_of_tests.hpp"
#include "dpmu/core/tulap.hpp"
#include "dpmu/experiments/data_files.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {
namespace {

using runtime::Cell;
using runtime::MetricSpec;
using runtime::ParameterSpec;
using runtime::ParameterType;

/// The data of one replicate: rows (common, tested, response).
using Rows = Eigen::MatrixXd;

/// The HSB2 columns of design `hsb`: common predictors, then tested ones, in the order used.
const std::vector<std::string> kHsbCommon = {"science", "socst"};
const std::vector<std::string> kHsbTested = {"read", "write", "math"};

/// The design `hsb`'s population: the 200 students' p_common + q columns (kHsbCommon, kHsbTested),
/// each standardised by its mean and SD (n − 1) over the 200 rows. @throws as read_csv_cached.
Eigen::MatrixXd hsb_population(const Cell& cell) {
  const auto pc = static_cast<std::size_t>(cell.get_int("p_common")), q = static_cast<std::size_t>(cell.get_int("q"));
  std::vector<std::string> columns(kHsbCommon.begin(), kHsbCommon.begin() + static_cast<std::ptrdiff_t>(pc));
  columns.insert(columns.end(), kHsbTested.begin(), kHsbTested.begin() + static_cast<std::ptrdiff_t>(q));
  const auto table = read_csv_cached(resolve_data_file(cell, cell.get_string("data_file")), columns);
  Eigen::MatrixXd x = table->matrix(columns);
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    const double mean = x.col(j).mean();
    x.col(j).array() -= mean;
    x.col(j) /= std::sqrt(x.col(j).squaredNorm() / static_cast<double>(x.rows() - 1));
  }
  return x;
}

/// What a cell computes once: the method's release and its calibration.
struct Prepared {
  std::string method;
  // subsample-aggregate
  core::CensoringLimits limits{0.0, 7.0};
  std::shared_ptr<core::ScalarMechanism> mechanism;
  core::CriticalValue critical_value{};
  // test-of-tests
  std::shared_ptr<core::TestOfTestsRelease> tot;
  double tuned_effect = std::numeric_limits<double>::quiet_NaN();
  // dp-f
  std::shared_ptr<core::DpFTestRelease> dpf;
};

class NestedTestHeadToHead final : public runtime::TypedExperiment<Prepared, Rows> {
 public:
  std::string name() const override { return "nested_test_head_to_head"; }

  std::vector<ParameterSpec> parameters() const override {
    return {
        {.name = "n", .type = ParameterType::integer, .data_factor = true, .min = 4.0, .description = "rows"},
        {.name = "p_common",
         .type = ParameterType::integer,
         .data_factor = true,
         .default_value = std::int64_t{1},
         .min = 0.0,
         .description = "common predictors besides the intercept"},
        {.name = "q",
         .type = ParameterType::integer,
         .data_factor = true,
         .default_value = std::int64_t{1},
         .min = 1.0,
         .description = "tested predictors"},
        {.name = "effect",
         .type = ParameterType::real,
         .data_factor = true,
         .default_value = 0.0,
         .description = "coefficient of every tested predictor (0: H0)"},
        {.name = "design",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string("gaussian"),
         .allowed = {"gaussian", "hsb"},
         .description = "predictors: gaussian (iid N(0, 1)) or hsb (HSB2's standardised scores resampled; "
                        "common: science, socst; tested: read, write, math)",
         .keyed_at_default = false},  // added after results existed: the older cells keep their keys
        {.name = "data_file",
         .type = ParameterType::string,
         .data_factor = true,
         .default_value = std::string("experiments/data/hsb2.csv"),
         .description = "design hsb: the HSB2 CSV (relative: the config's folder, then the source tree)",
         .path = true,
         .keyed_at_default = false},
        {.name = "method",
         .type = ParameterType::string,
         .allowed = {"subsample-aggregate", "test-of-tests", "dp-f"},
         .description = "the DP test"},
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
         .description = "delta: subsample-aggregate Gaussian if > 0; dp-f needs > 0; test-of-tests ignores it"},
        {.name = "alpha",
         .type = ParameterType::real,
         .default_value = 0.05,
         .min = 0.0,
         .max = 1.0,
         .min_inclusive = false,
         .max_inclusive = false,
         .description = "significance level"},
        {.name = "num_subsets",
         .type = ParameterType::integer,
         .default_value = std::int64_t{10},
         .min = 1.0,
         .description = "subsample-aggregate: number of subsets M"},
        {.name = "censor_upper",
         .type = ParameterType::real,
         .default_value = 7.0,
         .min = 0.0,
         .min_inclusive = false,
         .description = "subsample-aggregate: upper censoring limit U of 2 log Lambda (L = 0)"},
        {.name = "null_simulations",
         .type = ParameterType::integer,
         .default_value = std::int64_t{20000},
         .min = 100.0,
         .description = "subsample-aggregate: null draws for the corrected critical value"},
        {.name = "bound",
         .type = ParameterType::real,
         .default_value = 3.0,
         .min = 0.0,
         .min_inclusive = false,
         .description = "dp-f: clipping bounds [-bound, bound] on every column"},
        {.name = "bootstrap",
         .type = ParameterType::integer,
         .default_value = std::int64_t{0},
         .min = 0.0,
         .description = "dp-f: null data sets K per test (0: ceil(10/alpha), the authors' choice)"},
        {.name = "power_target",
         .type = ParameterType::real,
         .default_value = 0.9,
         .min = 0.0,
         .max = 1.0,
         .min_inclusive = false,
         .max_inclusive = false,
         .description = "test-of-tests: target power of the authors' rule for (m, alpha0)"},
    };
  }

  void validate(const Cell& cell) const override {
    const auto n = cell.get_int("n");
    const auto p0 = cell.get_int("p_common") + 1, q = cell.get_int("q");
    if (n <= p0 + q + 1) throw std::invalid_argument("n: must exceed p_common + q + 2");
    if (cell.get_string("design") == "hsb") {
      if (p0 - 1 > static_cast<std::int64_t>(kHsbCommon.size())) {
        throw std::invalid_argument("p_common: design hsb has 2 common predictors (science, socst); got " +
                                    std::to_string(p0 - 1));
      }
      if (q > static_cast<std::int64_t>(kHsbTested.size())) {
        throw std::invalid_argument("q: design hsb has 3 tested predictors (read, write, math); got " +
                                    std::to_string(q));
      }
      (void)hsb_population(cell);  // the file and its columns, checked before any work
    }
    const std::string method = cell.get_string("method");
    if (method == "dp-f" && !(cell.get_double("delta") > 0.0)) {
      throw std::invalid_argument("delta: method dp-f needs delta > 0 (zCDP reported as (epsilon, delta))");
    }
    if (method == "subsample-aggregate") {
      core::check_num_subsets(static_cast<std::size_t>(n), static_cast<std::size_t>(cell.get_int("num_subsets")),
                              static_cast<int>(q), static_cast<int>(p0));
    }
  }

  std::vector<MetricSpec> metrics(const Cell&) const override {
    return {{.name = "reject", .description = "1 if H0 is rejected at alpha, else 0"},
            {.name = "p_value", .description = "released p-value (NaN for subsample-aggregate)"},
            {.name = "statistic",
             .description = "released statistic: T* (subsample-aggregate), noisy count (test-of-tests), F (dp-f)"}};
  }

  Prepared prepare(const Cell& cell, core::RngStream& calibration, runtime::SharedCalibration&) const override {
    Prepared s;
    s.method = cell.get_string("method");
    const auto n = static_cast<std::size_t>(cell.get_int("n"));
    const int p0 = static_cast<int>(cell.get_int("p_common")) + 1, q = static_cast<int>(cell.get_int("q"));
    const double eps = cell.get_double("epsilon"), delta = cell.get_double("delta"), alpha = cell.get_double("alpha");
    if (s.method == "subsample-aggregate") {
      const auto m = static_cast<std::size_t>(cell.get_int("num_subsets"));
      s.limits = {0.0, cell.get_double("censor_upper")};
      s.mechanism =
          std::make_shared<core::ScalarMechanism>(core::subsample_and_aggregate_mechanism(eps, delta, s.limits, m));
      core::Prior lr;
      lr.kind = core::PriorKind::lr;
      const auto sizes = core::subset_sizes(n, m);
      const auto null =
          core::simulate_null_distribution(lr, sizes, q, p0, s.limits, *s.mechanism,
                                           static_cast<std::size_t>(cell.get_int("null_simulations")), calibration);
      s.critical_value = core::corrected_critical_value(null, alpha, s.limits);
    } else if (s.method == "test-of-tests") {
      const auto min_rows = static_cast<std::size_t>(p0 + q + 1);
      std::vector<double> effects;
      for (int i = 0; i <= 28; ++i) effects.push_back(0.1 + 0.05 * i);
      const double eps_used = core::tulap_dyadic_epsilon(eps);
      const core::PublicTestPower power = [p0, q, min_rows](double effect, std::size_t rows, double a0) {
        return rows < min_rows ? std::nan("") : core::partial_f_test_power(effect, rows, p0, q, a0);
      };
      const auto t = core::practical_m_alpha0(cell.get_double("power_target"), power, eps_used, n,
                                              core::test_of_tests_m_grid(n, min_rows), effects, alpha);
      core::TestOfTestsSettings ts;
      ts.epsilon = eps;
      ts.n = n;
      ts.num_subsets = t.m;
      ts.alpha0 = t.alpha0;
      ts.p0 = p0;
      ts.q = q;
      s.tot = std::make_shared<core::TestOfTestsRelease>(ts);
      s.tuned_effect = t.effect;
    } else {
      core::DpFTestSettings ds;
      ds.rho = core::zcdp_rho_for_epsilon(eps, delta);
      ds.n = n;
      ds.p0 = p0;
      ds.q = q;
      const double b = cell.get_double("bound");
      ds.bounds = {{-b, b}};
      s.dpf = std::make_shared<core::DpFTestRelease>(ds);
    }
    return s;
  }

  std::vector<std::pair<std::string, std::vector<double>>> calibration_outputs(const Cell&,
                                                                               const Prepared& s) const override {
    if (s.method == "subsample-aggregate") return {{"critical_value", {s.critical_value.value}}};
    if (s.method == "test-of-tests") {
      return {{"num_subsets", {static_cast<double>(s.tot->settings().num_subsets)}},
              {"alpha0", {s.tot->settings().alpha0}},
              {"tuned_effect", {s.tuned_effect}}};
    }
    return {{"rho", {s.dpf->settings().rho}}};
  }

  std::vector<runtime::DataFile> data_files(const Cell& cell) const override {
    if (cell.get_string("design") != "hsb") return {};
    return {data_file(cell, "data_file", cell.get_string("data_file"))};
  }

  Rows generate(const Cell& cell, core::RngStream& data) const override {
    const auto n = static_cast<Eigen::Index>(cell.get_int("n"));
    const auto pc = static_cast<Eigen::Index>(cell.get_int("p_common")),
               q = static_cast<Eigen::Index>(cell.get_int("q"));
    const double effect = cell.get_double("effect");
    const bool hsb = cell.get_string("design") == "hsb";
    const Eigen::MatrixXd population = hsb ? hsb_population(cell) : Eigen::MatrixXd();
    Rows rows(n, pc + q + 1);
    for (Eigen::Index i = 0; i < n; ++i) {
      if (hsb) {
        const auto r =
            static_cast<Eigen::Index>(core::uniform_index(data, static_cast<std::uint64_t>(population.rows())));
        rows.row(i).head(pc + q) = population.row(r);
      }
      double y = 1.0;
      for (Eigen::Index j = 0; j < pc + q; ++j) {
        if (!hsb) rows(i, j) = core::standard_normal_ziggurat(data);
        y += (j < pc ? 0.5 : effect) * rows(i, j);
      }
      rows(i, pc + q) = y + core::standard_normal_ziggurat(data);
    }
    return rows;
  }

  void analyse(const Cell& cell, const Prepared& s, const Rows& rows, core::RngStream& noise_rng,
               runtime::MetricWriter& out) const override {
    const double alpha = cell.get_double("alpha");
    const auto n = rows.rows();
    const auto pc = static_cast<Eigen::Index>(cell.get_int("p_common")),
               q = static_cast<Eigen::Index>(cell.get_int("q"));
    Eigen::MatrixXd common(n, pc + 1);
    common.col(0).setOnes();
    common.rightCols(pc) = rows.leftCols(pc);
    if (s.method == "subsample-aggregate") {
      core::Prior lr;
      lr.kind = core::PriorKind::lr;
      const auto part = core::random_partition(static_cast<std::size_t>(n),
                                               static_cast<std::size_t>(cell.get_int("num_subsets")), noise_rng);
      const auto t = core::subset_statistics(common, rows.middleCols(pc, q), rows.col(pc + q), part, lr);
      const double t_star = core::aggregate_and_release(t, s.limits, *s.mechanism, noise_rng).released_statistic;
      // 1 above c_alpha; the randomized test's probability at the atom T* = U when c_alpha = U (PB §4.3)
      out.set("reject", core::rejection_probability(s.critical_value, t_star, s.limits));
      out.set("p_value", std::numeric_limits<double>::quiet_NaN());
      out.set("statistic", t_star);
      return;
    }
    core::NoiseSource noise = core::NoiseSource::simulation(noise_rng);
    if (s.method == "test-of-tests") {
      const auto r = s.tot->release(common, rows.middleCols(pc, q), rows.col(pc + q), noise);
      out.set("reject", r.p_value <= alpha ? 1.0 : 0.0);
      out.set("p_value", r.p_value);
      out.set("statistic", r.noisy_count);
      return;
    }
    const auto r = s.dpf->release(rows, noise);
    const auto k = cell.get_int("bootstrap");
    const auto K = k > 0 ? static_cast<std::size_t>(k) : static_cast<std::size_t>(std::ceil(10.0 / alpha - 1e-9));
    const double p =
        core::DpFTestRelease::monte_carlo_p_value(r.statistic, s.dpf->null_statistics(r.moments, K, noise_rng));
    out.set("reject", p <= alpha ? 1.0 : 0.0);
    out.set("p_value", p);
    out.set("statistic", r.statistic);
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_nested_test_head_to_head() {
  return std::make_unique<NestedTestHeadToHead>();
}

}  // namespace dpmu::experiments
