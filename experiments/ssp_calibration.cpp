/// @file ssp_calibration.cpp
/// `ssp_calibration`: how well the uncertainty of private model averaging is calibrated
/// (docs/methods.md §5.11). Data as `ssp_simulation` (docs/methods.md A6: x ~ U(lower, upper), the
/// first |T| coefficients b = 1/(z √|T|), SNR 1/2; the exact sufficient-statistic sampler of G,
/// sample_gram_matrix). Each replicate releases G* = G + E once (Laplace or Wishart, the paper's
/// reading of the bounds: Δ1 = (p+1)(p+2)(l² ∨ u²), B² = (p+1)(l² ∨ u²)) and analyses that same
/// release twice: the plug-in analysis of G* + rI (the default of every release) and the
/// noise-aware analysis (core::noise_aware_bma: rejection draws of G from p(G | G*) under a flat
/// prior on the Gram matrices the bounds allow, G_jj ≤ n(u − l)²/4). Metrics for both, on the same
/// release: coverage of the true β_j by the equal-tailed 50/80/95 % credible intervals, their
/// width, the Brier score of the PIPs and P(true model), and the reliability tables of the PIPs and
/// of the posterior model probabilities (calibration_metrics.hpp, docs/bma.md "Calibration
/// metrics"). Mechanism none: the non-private analysis of G (reported under plug_in_*; the
/// noise-aware metrics are then the same analysis).
/// Another design (`dpmu plan-bma --coefficients/--sigma/--bounds`): the parameters coefficients (β
/// itself; T = its non-zero entries), sigma and bounds (read as `dpmu bma --bounds` reads them:
/// predictor j ~ U(l_j, u_j), and the sensitivities of that release, core::SspRelease) replace the
/// design of A6 and the paper's reading; at their defaults the cell is the study's.

#include "dpmu/experiments/ssp_calibration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/model_space.hpp"
#include "dpmu/core/noise_aware.hpp"
#include "dpmu/core/noise_aware_sampler.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/experiments/calibration_metrics.hpp"
#include "dpmu/experiments/simulation_cost.hpp"
#include "dpmu/experiments/simulation_gram.hpp"
#include "dpmu/experiments/simulation_ssp.hpp"
#include "dpmu/runtime/experiment.hpp"

namespace dpmu::experiments {

namespace {

using runtime::Cell;
using runtime::MetricSpec;
using runtime::ParameterSpec;
using runtime::ParameterType;

/// plug_in: the paper's analysis; noise_aware: the rejection sampler (docs/methods.md §5.11);
/// augmented: the data-augmentation sampler (§5.12), run when augmented_draws > 0 (else NaN).
constexpr const char* kMethods[3] = {"plug_in", "noise_aware", "augmented"};
constexpr std::uint64_t kRidgeSeed = 20240521;

/// The data-generating design of a (data) cell: docs/methods.md A6 (the first |T| coefficients b,
/// sigma = sqrt(8/3)/z, x ~ U(-2, 2)), with the coefficients, sigma and predictor ranges of the
/// parameters coefficients, sigma and bounds where they are given.
SimulationDesign calibration_design(const Cell& cell) {
  const int p = static_cast<int>(cell.get_int("p"));
  SimulationDesign d =
      simulation_design(p, static_cast<int>(cell.get_int("true_model_size")), cell.get_double("signal_z"));
  d.coefficients = cell.get_real_list("coefficients");
  if (cell.get_double("sigma") > 0.0) d.sigma = cell.get_double("sigma");
  const std::vector<double>& bounds = cell.get_real_list("bounds");
  if (!bounds.empty()) {
    for (int j = 0; j < p; ++j) {
      const std::size_t at = bounds.size() == 2 ? 0 : 2 * static_cast<std::size_t>(j);
      d.widths.push_back(bounds[at + 1] - bounds[at]);
    }
  }
  return d;
}

/// The p + 1 public (lower, upper) pairs of a cell: `bounds` expanded, or (-2, 2) for every column.
std::vector<core::ColumnBounds> calibration_bounds(const Cell& cell, const SimulationDesign& design) {
  const std::vector<double>& bounds = cell.get_real_list("bounds");
  std::vector<core::ColumnBounds> out;
  for (int j = 0; j <= design.p; ++j) {
    if (bounds.empty()) {
      out.push_back({design.lower, design.upper});
    } else {
      const std::size_t at = bounds.size() == 2 ? 0 : 2 * static_cast<std::size_t>(j);
      out.push_back({bounds[at], bounds[at + 1]});
    }
  }
  return out;
}

struct PreparedCalibration {
  SimulationDesign design;
  std::uint64_t n = 0;
  core::CoefficientPrior prior;
  core::ModelPrior model_prior;
  std::optional<core::SspMechanism> mechanism;
  double regularization = 0.0;
  Eigen::VectorXd max_diagonal;
  core::NoiseAwareOptions options;
  std::optional<core::AugmentedModelPrior> augmented_prior;  ///< set when augmented_draws > 0
  core::NoiseAwareSamplerOptions augmented;
};

/// Equal-tailed intervals at kCalibrationLevels from pooled draws (rows) of the coefficients
/// (columns): the type-7 quantiles (1 ∓ level)/2 of each column.
std::vector<core::CredibleIntervals> draw_intervals(const Eigen::MatrixXd& draws) {
  std::vector<core::CredibleIntervals> out;
  const Eigen::Index p = draws.cols();
  const Eigen::Index m = draws.rows();
  std::vector<std::vector<double>> sorted(static_cast<std::size_t>(p));
  for (Eigen::Index j = 0; j < p; ++j) {
    auto& v = sorted[static_cast<std::size_t>(j)];
    v.assign(draws.col(j).data(), draws.col(j).data() + m);
    std::sort(v.begin(), v.end());
  }
  const auto quantile = [m](const std::vector<double>& v, double q) {
    const double h = (static_cast<double>(m) - 1.0) * q;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (h - std::floor(h)) * (v[hi] - v[lo]);
  };
  for (const double level : kCalibrationLevels) {
    core::CredibleIntervals ci;
    ci.level = level;
    ci.lower.resize(p);
    ci.upper.resize(p);
    for (Eigen::Index j = 0; j < p; ++j) {
      ci.lower(j) = quantile(sorted[static_cast<std::size_t>(j)], (1.0 - level) / 2.0);
      ci.upper(j) = quantile(sorted[static_cast<std::size_t>(j)], (1.0 + level) / 2.0);
    }
    out.push_back(std::move(ci));
  }
  return out;
}

class SspCalibration final : public runtime::TypedExperiment<PreparedCalibration, SimulatedGram> {
 public:
  std::string name() const override { return "ssp_calibration"; }

  std::vector<ParameterSpec> parameters() const override {
    return {
        {.name = "n", .type = ParameterType::integer, .data_factor = true, .min = 10.0, .description = "rows"},
        {.name = "p",
         .type = ParameterType::integer,
         .data_factor = true,
         .min = 1.0,
         .max = 12.0,
         .description = "candidate predictors"},
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
        {.name = "mechanism",
         .type = ParameterType::string,
         .allowed = {"none", "laplace", "wishart"},
         .description = "release of G: none (non-private), laplace or wishart"},
        {.name = "epsilon",
         .type = ParameterType::real,
         .default_value = std::numeric_limits<double>::infinity(),
         .min = 0.0,
         .min_inclusive = false,
         .description = "privacy budget (required unless mechanism is none)"},
        {.name = "prior",
         .type = ParameterType::string,
         .default_value = std::string("g_prior"),
         .description = "coefficient prior (g_prior: g = n, one shrinkage node per model)"},
        {.name = "model_prior",
         .type = ParameterType::string,
         .default_value = std::string("beta-binomial:1,1"),
         .description = "prior over models"},
        {.name = "noise_aware_draws",
         .type = ParameterType::integer,
         .default_value = std::int64_t{100},
         .min = 1.0,
         .max = 100000.0,  // api::kMaxNoiseAwareDraws: the per-release work and memory stay bounded
         .description = "M: accepted draws of G per release (noise-aware)"},
        {.name = "augmented_draws",
         .type = ParameterType::integer,
         .default_value = std::int64_t{0},
         .min = 0.0,
         .max = 100000.0,
         .description = "data-augmentation sampler (the releases' default analysis, docs/methods.md 5.12): warm-up "
                        "sweeps and first batch of saved draws per chain (4 chains, extended until R-hat <= 1.01 and "
                        "ESS >= 400, at most 16x); 0: not run (its augmented_* metrics are NaN)",
         // added after the calibration study was run: at 0 in no key, so its cells keep their streams
         .keyed_at_default = false},
        {.name = "max_proposals",
         .type = ParameterType::integer,
         .default_value = std::int64_t{20000},
         .min = 1.0,
         .max = 1e9,  // an int: 100 x the largest noise_aware_draws, with room
         .description = "noise draws at most per release; fewer than min_accepted accepted: plug-in fallback"},
        {.name = "min_accepted",
         .type = ParameterType::integer,
         .default_value = std::int64_t{20},
         .min = 1.0,
         .description = "fewest accepted draws for the noise-aware mixture"},
        {.name = "ridge_draws",
         .type = ParameterType::integer,
         .default_value = std::int64_t{20000},
         .min = 100.0,
         .description = "Monte Carlo draws of E for the plug-in ridge (99th percentile of -eigmin(E))"},
        {.name = "coefficients",
         .type = ParameterType::real_list,
         .data_factor = true,
         .default_value = std::vector<double>{},
         .description = "beta itself, length p (T = its non-zero entries, |T| = true_model_size); empty: b on the "
                        "first |T|",
         .keyed_at_default = false},
        {.name = "sigma",
         .type = ParameterType::real,
         .data_factor = true,
         .default_value = 0.0,
         .min = 0.0,
         .description = "error SD; 0: sqrt(8/3)/z of docs/methods.md A6",
         .keyed_at_default = false},
        {.name = "bounds",
         .type = ParameterType::real_list,
         .data_factor = true,
         .default_value = std::vector<double>{},
         .description = "public bounds l,u of every column or l1,u1,...,l(p+1),u(p+1) (response last), read as "
                        "`dpmu bma --bounds` reads them (predictor j ~ U(l_j, u_j)); empty: (-2, 2), the paper's "
                        "reading",
         .keyed_at_default = false},
        {.name = "delta",
         .type = ParameterType::real,
         .default_value = 0.0,
         .min = 0.0,
         .max = 1.0,
         .max_inclusive = false,
         .description = "wishart's delta; 0: 1/n",
         .keyed_at_default = false},
    };
  }

  void validate(const Cell& cell) const override {
    const auto p = cell.get_int("p");
    if (cell.get_int("true_model_size") > p) throw std::invalid_argument("true_model_size: exceeds p");
    if (cell.get_int("n") < p + 3) throw std::invalid_argument("n: must be >= p + 3");
    const std::string& mechanism = cell.get_string("mechanism");
    const double epsilon = cell.get_double("epsilon");
    if (mechanism == "none" && std::isfinite(epsilon)) {
      throw std::invalid_argument("epsilon: mechanism none has no privacy budget");
    }
    if (mechanism != "none" && !std::isfinite(epsilon)) {
      throw std::invalid_argument("epsilon: mechanism " + mechanism + " needs a privacy budget");
    }
    if (mechanism == "wishart" && epsilon >= 1.0) throw std::invalid_argument("epsilon: wishart needs epsilon < 1");
    if (mechanism != "wishart" && cell.get_double("delta") != 0.0) {
      throw std::invalid_argument("delta: only wishart has a delta (" + mechanism + " is pure epsilon-DP)");
    }
    const std::vector<double>& beta = cell.get_real_list("coefficients");
    if (!beta.empty()) {
      if (beta.size() != static_cast<std::size_t>(p)) {
        throw std::invalid_argument("coefficients: " + std::to_string(beta.size()) +
                                    " given, p = " + std::to_string(p) + "; give one coefficient per predictor");
      }
      std::int64_t nonzero = 0;
      for (const double b : beta) {
        if (!std::isfinite(b)) throw std::invalid_argument("coefficients: every coefficient must be finite");
        nonzero += b != 0.0 ? 1 : 0;
      }
      if (cell.get_int("true_model_size") != nonzero) {
        throw std::invalid_argument("true_model_size: must equal the number of non-zero coefficients (" +
                                    std::to_string(nonzero) + ")");
      }
    }
    const std::vector<double>& bounds = cell.get_real_list("bounds");
    if (!bounds.empty()) {
      const std::size_t d = static_cast<std::size_t>(p) + 1;
      if (bounds.size() != 2 && bounds.size() != 2 * d) {
        throw std::invalid_argument("bounds: give l,u (every column) or " + std::to_string(2 * d) +
                                    " numbers l1,u1,...,l(p+1),u(p+1) (predictors in order, response last); " +
                                    std::to_string(bounds.size()) + " given");
      }
      for (std::size_t j = 0; j < bounds.size(); j += 2) {
        if (!(std::isfinite(bounds[j]) && std::isfinite(bounds[j + 1]) && bounds[j] < bounds[j + 1])) {
          throw std::invalid_argument("bounds: need finite l < u for " + (bounds.size() == 2
                                                                              ? std::string("every column")
                                                                              : "column " + std::to_string(j / 2 + 1)));
        }
      }
    }
    try {
      core::parse_coefficient_prior(cell.get_string("prior"), static_cast<double>(cell.get_int("n")));
      core::parse_model_prior(cell.get_string("model_prior"));
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("prior: ") + e.what());
    }
  }

  std::vector<MetricSpec> metrics(const Cell& cell) const override {
    const auto p = static_cast<std::size_t>(cell.get_int("p"));
    std::vector<std::string> labels;
    for (std::size_t j = 1; j <= p; ++j) labels.push_back("beta" + std::to_string(j));
    std::vector<MetricSpec> out;
    for (const char* m : kMethods) {
      const std::string u(m);
      const MetricAffix affix{u + "_", ""};
      for (auto& spec : interval_calibration_metrics(affix, labels, u, "the true beta_j", "1[j in T]")) {
        out.push_back(std::move(spec));
      }
      out.push_back({.name = u + "_pip",
                     .size = p,
                     .is_vector = true,
                     .description = "posterior inclusion probability of predictor j (" + u + ")",
                     .component_labels = labels});
      out.push_back({.name = u + "_prob_true_model", .description = "posterior probability of T (" + u + ")"});
      for (const char* base : {"pip", "model"}) {
        for (auto& spec : reliability_metrics(affix, base, u)) out.push_back(std::move(spec));
      }
    }
    out.push_back({.name = "augmented_converged",
                   .description = "1 if the data-augmentation chain converged (R-hat <= 1.01, ESS >= 400)"});
    out.push_back({.name = "augmented_max_rhat", .description = "largest split R-hat of the augmented chain"});
    out.push_back({.name = "augmented_min_ess", .description = "smallest bulk ESS of the augmented chain"});
    out.push_back({.name = "accepted_draws", .description = "admissible draws of G kept (noise-aware)"});
    out.push_back({.name = "acceptance_rate", .description = "accepted / proposed noise draws"});
    out.push_back({.name = "fallback", .description = "1 if the noise-aware analysis fell back to the plug-in"});
    out.push_back({.name = "pip_mc_se_max", .description = "largest Monte Carlo SE of the noise-aware PIPs"});
    return out;
  }

  PreparedCalibration prepare(const Cell& cell, core::RngStream& /*calibration*/,
                              runtime::SharedCalibration& shared) const override {
    PreparedCalibration pr;
    const int p = static_cast<int>(cell.get_int("p"));
    pr.n = static_cast<std::uint64_t>(cell.get_int("n"));
    const double n = static_cast<double>(pr.n);
    pr.design = calibration_design(cell);
    pr.prior = core::parse_coefficient_prior(cell.get_string("prior"), n);
    pr.model_prior = core::parse_model_prior(cell.get_string("model_prior"));
    const std::vector<core::ColumnBounds> bounds = calibration_bounds(cell, pr.design);
    Eigen::VectorXd widths(p + 1);
    for (int j = 0; j <= p; ++j)
      widths(j) = bounds[static_cast<std::size_t>(j)].upper - bounds[static_cast<std::size_t>(j)].lower;
    pr.max_diagonal = core::gram_diagonal_bounds(n, widths);
    pr.options.draws = static_cast<int>(cell.get_int("noise_aware_draws"));
    pr.options.max_proposals = static_cast<int>(cell.get_int("max_proposals"));
    pr.options.min_accepted = static_cast<int>(cell.get_int("min_accepted"));
    pr.options.bma.credible_level = 0.0;
    pr.options.bma.top_models = 0;
    pr.options.extra_levels = {kCalibrationLevels[0], kCalibrationLevels[1], kCalibrationLevels[2]};
    if (const std::int64_t m = cell.get_int("augmented_draws"); m > 0) {
      if (pr.prior.prior.kind != core::PriorKind::g_prior && pr.prior.prior.kind != core::PriorKind::zellner_siow) {
        throw std::invalid_argument("ssp_calibration: augmented_draws > 0 needs prior g_prior or zellner_siow, not '" +
                                    cell.get_string("prior") + "'");
      }
      pr.augmented_prior = core::default_augmented_prior(widths, pr.prior.prior);
      pr.augmented.iterations = static_cast<int>(m);
      pr.augmented.warmup = static_cast<int>(m);
      pr.augmented.max_iterations = static_cast<int>(16 * m);
      pr.augmented.credible_level = 0.0;  // the study's three levels come from the kept draws
      pr.augmented.top_models = 0;
      pr.augmented.keep_draws = true;
    }
    const std::string& name = cell.get_string("mechanism");
    if (name == "none") return pr;
    const auto kind = core::parse_ssp_mechanism(name);
    const bool wishart = kind == core::SspMechanismKind::wishart;
    const double delta = cell.get_double("delta") > 0.0 ? cell.get_double("delta") : 1.0 / n;
    core::SspMechanism m{.kind = kind,
                         .p = p,
                         .lower = pr.design.lower,
                         .upper = pr.design.upper,
                         .epsilon = cell.get_double("epsilon"),
                         .delta = wishart ? delta : 0.0};
    const bool given_bounds = !cell.get_real_list("bounds").empty();
    if (given_bounds) {
      // Given bounds: the sensitivities of the release `dpmu bma --bounds` makes (core::SspRelease).
      m = core::SspRelease(core::SspReleaseSettings{.mechanism = kind,
                                                    .bounds = bounds,
                                                    .epsilon = m.epsilon,
                                                    .delta = m.delta,
                                                    .n = static_cast<std::size_t>(pr.n),
                                                    .p = p})
              .mechanism();
    }
    core::check_ssp_mechanism(m);
    if (kind == core::SspMechanismKind::laplace) {
      std::ostringstream key;
      key.precision(17);
      key << "calibration_ridge:" << p << ':' << m.epsilon << ':' << cell.get_int("ridge_draws");
      if (given_bounds) key << ':' << core::ssp_l1_sensitivity(m);
      // a function of public parameters only, from a stream keyed by them (the same for every cell)
      pr.regularization = shared.get(key.str(), [&] {
        core::RngStream rng(kRidgeSeed, core::fnv1a_64(key.str()), 0, core::StreamPurpose::calibration);
        return std::vector<double>{
            core::monte_carlo_regularization(m, rng, static_cast<int>(cell.get_int("ridge_draws")))};
      })[0];
    } else {
      pr.regularization = core::wishart_regularization(m);
    }
    pr.mechanism = m;
    return pr;
  }

  SimulatedGram generate(const Cell& data_cell, core::RngStream& data) const override {
    const SimulationDesign design = calibration_design(data_cell);
    const std::uint64_t key0 = data();
    const std::uint64_t key1 = data();
    return sample_gram_matrix(design, static_cast<std::uint64_t>(data_cell.get_int("n")), key0, key1);
  }

  double generate_cost(const Cell& data_cell) const override {
    return ssp_generate_cost(static_cast<std::uint64_t>(data_cell.get_int("n")),
                             static_cast<int>(data_cell.get_int("p")), SspGenerator::sufficient_statistic);
  }

  double analyse_cost(const Cell& cell) const override {
    // the augmented chain: 4 chains x (warm-up + saved) sweeps, each about 1.5 model averagings
    // (its 2^p model fits and the slice updates of G), saved draws extended about once
    const double sweeps = 4.0 * 3.0 * static_cast<double>(cell.get_int("augmented_draws"));
    return (static_cast<double>(cell.get_int("noise_aware_draws") + 1) + 1.5 * sweeps) *
           ssp_analyse_cost(static_cast<int>(cell.get_int("p")), false);
  }

  void analyse(const Cell&, const PreparedCalibration& pr, const SimulatedGram& sim, core::RngStream& noise,
               runtime::MetricWriter& out) const override {
    const int p = pr.design.p;
    const double n = static_cast<double>(pr.n);
    const Eigen::VectorXd beta = design_coefficients(pr.design);
    core::ModelMask truth = 0;  // T = {j : beta_j != 0} (the first |T| in the design of A6)
    for (int j = 0; j < p; ++j) truth |= beta(j) != 0.0 ? core::ModelMask{1} << j : core::ModelMask{0};
    // The plug-in analysis: one "draw", the regularised release (or G itself), with the interval
    // options of the default analysis (averaging_with_intervals: mix_bma_draws of one matrix).
    core::NoiseAwareResult plug;
    core::NoiseAwareResult aware;
    Eigen::MatrixXd gstar;
    if (!pr.mechanism) {
      plug = averaging_with_intervals(sim.gram, n, pr.prior, pr.model_prior, pr.options.bma);
      aware = plug;
      aware.accepted = 0;
    } else {
      gstar = core::noisy_gram_matrix(sim.gram, *pr.mechanism, noise);
      const core::RegularizedGram reg = core::regularize(gstar, pr.regularization);
      plug = averaging_with_intervals(reg.matrix, n, pr.prior, pr.model_prior, pr.options.bma);
      aware = core::noise_aware_bma(gstar, *pr.mechanism, pr.max_diagonal, n, pr.prior, pr.model_prior, reg.matrix,
                                    noise, pr.options);
      if (aware.fallback) {
        aware.extra_intervals = plug.extra_intervals;
        aware.posterior = plug.posterior;
      }
    }
    // The data-augmentation sampler on the same release (non-private: the release is G itself, with
    // no noise law to integrate, so it is not run).
    core::NoiseAwareResult augmented;
    std::optional<core::NoiseAwareSamplerResult> chain;
    if (pr.augmented_prior && pr.mechanism) {
      chain =
          core::noise_aware_sampler(gstar, *pr.mechanism, n, *pr.augmented_prior, pr.model_prior, noise, pr.augmented);
      augmented.posterior = chain->posterior;
      augmented.extra_intervals = draw_intervals(chain->beta_draws);
    }
    const Eigen::VectorXd included = inclusion_indicators(truth, p);
    for (int u = 0; u < 3; ++u) {
      if (u == 2 && !chain) continue;
      const core::NoiseAwareResult& r = u == 0 ? plug : u == 1 ? aware : augmented;
      const std::string name(kMethods[u]);
      const MetricAffix affix{name + "_", ""};
      write_interval_calibration(out, affix, r.extra_intervals, beta);
      const Eigen::VectorXd& pip = r.posterior.posterior_inclusion_probability;
      out.set(name + "_pip", std::span<const double>(pip.data(), static_cast<std::size_t>(p)));
      out.set(name + "_brier", core::brier_score(pip, included));
      out.set(name + "_prob_true_model",
              std::exp(r.posterior.log_posterior_probability(static_cast<Eigen::Index>(truth))));
      write_reliability(out, affix, "pip", pip_reliability(pip, truth));
      write_reliability(out, affix, "model", model_reliability(r.posterior.log_posterior_probability, truth));
    }
    if (chain) {
      out.set("augmented_converged", chain->converged ? 1.0 : 0.0);
      out.set("augmented_max_rhat", chain->max_rhat);
      out.set("augmented_min_ess", chain->min_ess);
    }
    out.set("accepted_draws", static_cast<double>(aware.accepted));
    out.set("acceptance_rate",
            aware.proposals > 0 ? static_cast<double>(aware.accepted) / aware.proposals : std::nan(""));
    out.set("fallback", aware.fallback ? 1.0 : 0.0);
    out.set("pip_mc_se_max", aware.pip_mc_se.size() > 0 ? aware.pip_mc_se.maxCoeff() : std::nan(""));
  }
};

}  // namespace

std::unique_ptr<runtime::Experiment> make_ssp_calibration() { return std::make_unique<SspCalibration>(); }

}  // namespace dpmu::experiments
