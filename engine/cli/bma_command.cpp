// `dpmu bma`: differentially private Bayesian model averaging and selection by sufficient-statistic
// perturbation (Peña & Barrientos 2024, §5). See docs/bma.md for every field of the JSON output.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "audit_command.hpp"
#include "commands.hpp"
#include "data_options.hpp"
#include "dpmu/api/adassp.hpp"
#include "dpmu/api/bma.hpp"
#include "dpmu/api/bma_pipeline.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/progress.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/core/synthetic_data.hpp"
#include "dpmu/runtime/data_table.hpp"
#include "dpmu/runtime/memory.hpp"
#include "dpmu/runtime/secure_random.hpp"

namespace dpmu::cli {

namespace {

using json = nlohmann::ordered_json;

struct BmaCliOptions {
  std::string data;
  std::string sep = "auto";
  std::string response;
  std::vector<std::string> predictors;
  std::vector<std::string> always_include;
  std::vector<double> bounds;
  std::optional<double> epsilon;
  std::optional<double> delta;
  std::string mechanism = "laplace";
  std::optional<double> threshold;
  std::string threshold_reference = "absolute";
  std::string ridge = "auto";
  std::int64_t ridge_draws = 100000;
  std::string prior = "zellner-siow";
  std::optional<double> g;
  double a = 3.0;
  std::string model_prior = "beta-binomial:1,1";
  std::optional<double> confidence;
  std::int64_t simulations = 10000;
  std::int64_t bins = 40;
  std::string norm = "frobenius";
  std::optional<std::uint64_t> seed;  ///< unset: a real release (secure noise)
  bool non_private = false;
  bool rescale = false;
  std::string synthetic_out;
  bool force = false;
  api::LedgerOptions ledger;
  std::int64_t top_models = 10;
  bool mcmc = false;
  double mcmc_tolerance = 0.005;
  std::uint64_t mcmc_max_iterations = 0;  ///< 0: core::default_mcmc_max_iterations(p)
  std::uint64_t mcmc_max_models = core::kDefaultMcmcMaxModels;
  bool progress = false;  ///< a progress line on stderr even when it is not a terminal
  double credible_level = 0.95;
  std::string plot;
  std::string uncertainty;  ///< empty: noise-aware for a release (the default)
  std::int64_t noise_aware_draws = 1000;
  std::string method = "ssp";  ///< ssp (PB §5 model averaging) | adassp (the AdaSSP baseline, §11.3)
  /// The options given on the command line (their long names), for refusing the ones --method adassp
  /// does not take.
  std::vector<std::string> given;
};

/// The progress line of a long model search on stderr (docs/bma.md "Cost of the model search"):
/// nothing during the first 2 s; then, on a terminal, one line redrawn every 0.5 s (or, with
/// --progress and stderr not a terminal, a line every 10 s), with the ETA of the phase at its rate
/// so far. For MCMC the ETA is to the iteration bound: the chain stops earlier once it converges.
/// Standard output (the JSON) is never touched.
class SearchProgressLine {
 public:
  explicit SearchProgressLine(bool asked)
      : tty_(::isatty(STDERR_FILENO) == 1), enabled_(asked || tty_), start_(Clock::now()) {}
  SearchProgressLine(const SearchProgressLine&) = delete;
  SearchProgressLine& operator=(const SearchProgressLine&) = delete;
  ~SearchProgressLine() { finish(); }

  /// The callback for api::Search::progress (empty when disabled); valid while this object lives.
  core::ProgressCallback callback() {
    if (!enabled_) return {};
    return [this](const core::Progress& p) { update(p); };
  }

  /// End the redrawn line (before other messages or the end of the command).
  void finish() {
    if (shown_ && tty_) std::fputs("\n", stderr);
    shown_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;

  void update(const core::Progress& p) {
    const Clock::time_point now = Clock::now();
    if (phase_ != p.phase || p.done < last_done_) {  // a new phase, or the next search
      phase_ = p.phase;
      phase_start_ = now;
      phase_done_ = p.done;
    }
    last_done_ = p.done;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed < 2.0) return;
    if (shown_ && std::chrono::duration<double>(now - last_).count() < (tty_ ? 0.5 : 10.0)) return;
    last_ = now;
    const double phase_elapsed = std::chrono::duration<double>(now - phase_start_).count();
    const double rate = phase_elapsed > 0.0 ? static_cast<double>(p.done - phase_done_) / phase_elapsed : 0.0;
    const double eta = rate > 0.0 ? static_cast<double>(p.total - p.done) / rate : -1.0;
    const std::string what = phase_ == "mcmc"                   ? "MCMC iterations"
                             : phase_ == "mcmc-summary"         ? "visited models summarised"
                             : phase_ == "ridge-calibration"    ? "ridge calibration draws"
                             : phase_ == "noise-aware-warmup"   ? "noise-aware warm-up sweeps"
                             : phase_ == "noise-aware-sampling" ? "noise-aware saved sweeps"
                                                                : "models enumerated";
    char line[256];
    std::snprintf(line, sizeof line, "dpmu bma: %s %llu/%llu (%.0f%%), %.0f s elapsed, ETA %s%s", what.c_str(),
                  static_cast<unsigned long long>(p.done), static_cast<unsigned long long>(p.total),
                  p.total > 0 ? 100.0 * static_cast<double>(p.done) / static_cast<double>(p.total) : 100.0, elapsed,
                  eta < 0.0 ? "?" : duration_text(eta).c_str(),
                  phase_ == "mcmc" ? " (at most; stops earlier when converged)" : "");
    if (tty_) {
      std::fprintf(stderr, "\r%s\033[K", line);
    } else {
      std::fprintf(stderr, "%s\n", line);
    }
    std::fflush(stderr);
    shown_ = true;
  }

  static std::string duration_text(double s) {
    const auto t = static_cast<long long>(s + 0.5);
    char b[32];
    if (t >= 3600) {
      std::snprintf(b, sizeof b, "%lldh%02lldm", t / 3600, (t % 3600) / 60);
    } else if (t >= 60) {
      std::snprintf(b, sizeof b, "%lldm%02llds", t / 60, t % 60);
    } else {
      std::snprintf(b, sizeof b, "%llds", t);
    }
    return b;
  }

  bool tty_;
  bool enabled_;
  Clock::time_point start_;
  Clock::time_point last_{};
  Clock::time_point phase_start_{};
  std::uint64_t phase_done_ = 0;
  std::uint64_t last_done_ = 0;
  std::string phase_;
  bool shown_ = false;
};

std::vector<std::string> non_empty(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

json keyed(const Eigen::VectorXd& v, const std::vector<std::string>& names) {
  json o = json::object();
  for (std::size_t j = 0; j < names.size(); ++j) o[names[j]] = v(static_cast<Eigen::Index>(j));
  return o;
}

json histogram_json(const core::Histogram& h) {
  json o;
  o["interval"] = {h.edges.front(), h.edges.back()};
  o["edges"] = h.edges;
  o["counts"] = h.counts;
  o["density"] = h.density;
  o["degenerate"] = h.degenerate;
  return o;
}

using api::keyed_or_null;

json number_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

/// What the SDs, intervals and probabilities of an analysis carry (docs/bma.md "Uncertainty").
json uncertainty_json(const api::BmaSummary& r, const std::vector<std::string>& names) {
  json u;
  u["kind"] = r.uncertainty;
  if (r.uncertainty == "exact") {
    u["carries"] = "sampling uncertainty of the confidential data (non-private)";
  } else if (r.uncertainty == "plug-in") {
    u["carries"] =
        "sampling only: the released matrix G* + rI is analysed as if it were the data's Gram matrix; the privacy "
        "noise is NOT in these SDs, intervals and probabilities";
  } else {
    u["carries"] =
        "sampling and privacy noise: the posterior given the release, the confidential Gram matrix a latent variable "
        "of a data-augmentation sampler (docs/methods.md Sec. 5.12); Monte Carlo SEs and convergence below";
  }
  if (r.noise_aware) {
    const auto& na = *r.noise_aware;
    u["sampler"] = na.sampler;
    u["chains"] = na.chains;
    u["warmup_per_chain"] = na.warmup;
    u["draws_per_chain"] = na.draws_per_chain;
    u["max_draws_per_chain"] = na.max_draws_per_chain;
    u["max_rhat"] = na.max_rhat;
    u["min_ess"] = na.min_ess;
    u["converged"] = na.converged;
    if (!na.converged) u["not_converged_because"] = na.reason;
    u["pip_mc_se"] = keyed_or_null(na.pip_mc_se, names);
    u["posterior_mean_mc_se"] = keyed_or_null(na.mean_mc_se, names);
    u["error_variance"] = na.sigma2;
    u["error_variance_mc_se"] = na.sigma2_mc_se;
  }
  return u;
}

/// The JSON of one analysis (docs/bma.md lists every field).
json result_json(const api::BmaSummary& r, const std::vector<std::string>& names) {
  json o;
  o["posterior_inclusion_probabilities"] = keyed(r.posterior_inclusion_probability, names);
  o["posterior_means"] = keyed(r.posterior_mean, names);
  o["posterior_sds"] = keyed_or_null(r.posterior_sd, names);
  o["posterior_sds_bas"] = keyed_or_null(r.posterior_sd_bas, names);
  json intercept;
  intercept["posterior_mean"] = r.intercept ? json(*r.intercept) : json(nullptr);
  intercept["posterior_sd"] = number_or_null(r.intercept_sd);
  intercept["posterior_sd_bas"] = number_or_null(r.intercept_sd_bas);
  if (r.credible_level > 0.0 && r.intercept_lower) {
    intercept["credible_interval"] = {*r.intercept_lower, *r.intercept_upper};
  }
  o["intercept"] = intercept;
  if (r.credible_level > 0.0) {
    json ci;
    ci["level"] = r.credible_level;
    ci["kind"] = r.uncertainty == "noise-aware"
                     ? "equal-tailed quantiles of the sampler's pooled draws (docs/methods.md Sec. 5.12)"
                     : "equal-tailed, exact mixture over models (docs/bma.md)";
    json bounds = json::object();
    for (std::size_t j = 0; j < names.size(); ++j) {
      const auto jj = static_cast<Eigen::Index>(j);
      bounds[names[j]] = {r.lower(jj), r.upper(jj)};
    }
    ci["intervals"] = bounds;
    ci["omitted_mass"] = r.interval_omitted_mass;
    ci["models"] = r.interval_models;
    o["credible_intervals"] = ci;
  }
  o["uncertainty"] = uncertainty_json(r, names);
  o["prior_inclusion_probabilities"] = keyed(r.prior_inclusion_probability, names);
  o["expected_model_size"] = r.expected_model_size;
  o["highest_posterior_model"] = r.highest_posterior_model;
  o["median_probability_model"] = r.median_probability_model;
  o["best_predictive_model"] = r.best_predictive_model;
  o["model_coefficients"] = {
      {"highest_posterior_model", keyed_or_null(r.highest_posterior_model_coefficients, names)},
      {"median_probability_model", keyed_or_null(r.median_probability_model_coefficients, names)},
      {"best_predictive_model", keyed_or_null(r.best_predictive_model_coefficients, names)}};
  json top = json::array();
  for (const auto& t : r.models) {
    json m;
    m["predictors"] = t.predictors;
    m["posterior_probability"] = t.posterior_probability;
    m["log_posterior_probability"] = t.log_posterior_probability;
    m["log_prior_probability"] = t.log_prior_probability;
    m["log_marginal"] = t.log_marginal;
    m["r_squared"] = t.r_squared;
    m["shrinkage"] = t.shrinkage;
    top.push_back(m);
  }
  o["top_models"] = top;
  o["models_evaluated"] = r.models_evaluated;
  o["models_rank_deficient"] = r.models_rank_deficient;
  o["models_exact_fit"] = r.models_exact_fit;
  if (r.mcmc) {
    o["mcmc"] = {{"iterations", r.mcmc->iterations},
                 {"max_iterations", r.mcmc->max_iterations},
                 {"models_visited", r.mcmc->models_visited},
                 {"evaluations_unstored", r.mcmc->evaluations_unstored},
                 {"acceptance_rate", r.mcmc->acceptance_rate},
                 {"converged", r.mcmc->converged},
                 {"max_pip_difference_between_halves", r.mcmc->max_pip_difference}};
  }
  return o;
}

/// Print the API's messages on stderr as this command's.
void print_messages(const std::vector<std::string>& messages) {
  for (const auto& m : messages) std::cerr << "dpmu bma: " << m << "\n";
}

/// Write the CSV to a temporary file in the same folder, then rename it into place, so that a
/// failure never leaves a partial file under the final name.
void write_csv(const std::string& path, const Eigen::MatrixXd& d, const std::vector<std::string>& header) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error("cannot write --synthetic-out file '" + path + "'");
    for (std::size_t j = 0; j < header.size(); ++j) out << (j ? "," : "") << header[j];
    out << "\n" << std::setprecision(17);
    for (Eigen::Index i = 0; i < d.rows(); ++i) {
      for (Eigen::Index j = 0; j < d.cols(); ++j) out << (j ? "," : "") << d(i, j);
      out << "\n";
    }
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error("error while writing '" + path + "' (disk full?); nothing was written");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot move the synthetic data into '" + path + "'");
  }
}

json lower_triangle(const Eigen::MatrixXd& g) {
  json rows = json::array();
  for (Eigen::Index i = 0; i < g.rows(); ++i) {
    json r = json::array();
    for (Eigen::Index j = 0; j <= i; ++j) r.push_back(g(i, j));
    rows.push_back(r);
  }
  return rows;
}

/// The image of the model space (like BAS's image.bas): the top models as JSON into
/// plotting/bma_image.py (python3 with matplotlib), which writes the PNG. The plot logic is in Python.
void write_model_space_plot(const std::string& path, const api::BmaSummary& a, const std::vector<std::string>& names,
                            const std::string& response) {
  json models = json::array();
  for (const auto& m : a.models) {
    models.push_back({{"predictors", m.predictors},
                      {"log_posterior_probability", m.log_posterior_probability},
                      {"posterior_probability", m.posterior_probability}});
  }
  const json doc = {{"response", response},
                    {"predictors", names},
                    {"posterior_inclusion_probabilities", keyed(a.posterior_inclusion_probability, names)},
                    {"models", models}};
  const std::string tmp = path + ".json.tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << api::json_text(doc) << "\n";
    if (!out) throw std::runtime_error("cannot write the plot data next to --plot '" + path + "'");
  }
  const char* dir = std::getenv("DPMU_PLOTTING_DIR");
  const char* python = std::getenv("DPMU_PYTHON");
  const std::string script = std::string(dir != nullptr ? dir : DPMU_SOURCE_DIR "/plotting") + "/bma_image.py";
  // An argument vector, never a shell command line: a file name is data, not code.
  const std::string interpreter = python != nullptr ? python : "/usr/bin/python3";
  std::vector<std::string> args = {interpreter, script, tmp, path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int status = -1;
  if (::posix_spawn(&pid, interpreter.c_str(), nullptr, nullptr, argv.data(), environ) == 0) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  std::remove(tmp.c_str());
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    throw std::runtime_error("--plot: " + script +
                             " failed (python3 with matplotlib is needed: apt-get install python3-matplotlib)");
  }
}

/// Everything checked before the data are read.
struct BmaPlan {
  std::size_t p = 0;
  std::vector<std::string> columns;  // predictors, then the response
  core::BmaOptions options;
  core::CoefficientPrior prior;
  core::ModelPrior model_prior;
  core::ThresholdReference threshold_reference = core::ThresholdReference::absolute;
  std::optional<double> ridge;
  core::MatrixNorm norm = core::MatrixNorm::frobenius;
  std::vector<core::ColumnBounds> bounds;
  core::SspMechanismKind mechanism = core::SspMechanismKind::laplace;
};

/// The bounds of an MCMC search, checked up front (api::check_search_bounds) when it will run.
api::Search search_of(const BmaCliOptions& o) {
  api::Search search;
  search.mcmc = o.mcmc;
  search.tolerance = o.mcmc_tolerance;
  search.max_iterations = o.mcmc_max_iterations;
  search.max_models = o.mcmc_max_models;
  return search;
}

void check_search_bounds(const BmaCliOptions& o) {
  api::check_search_bounds(search_of(o), o.predictors.size(), "--mcmc-max-models", "--mcmc-max-iterations");
}

/// The columns a bma run reads: --predictors in order, then --response; a name given twice is refused.
std::vector<std::string> model_columns(const BmaCliOptions& o) {
  std::vector<std::string> columns = o.predictors;
  columns.push_back(o.response);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (columns[i] == columns[j]) throw std::invalid_argument("column '" + columns[i] + "' is named twice");
    }
  }
  return columns;
}

/// --bounds as pairs: one l,u for every column or one per column of `columns` (predictors, then the
/// response), each finite with l < u. @throws std::invalid_argument naming the option and the column.
std::vector<core::ColumnBounds> bounds_option(const std::vector<double>& bounds,
                                              const std::vector<std::string>& columns) {
  const std::size_t d = columns.size();
  if (bounds.size() != 2 && bounds.size() != 2 * d) {
    throw std::invalid_argument("--bounds: give l,u (public bounds on the raw values of every column) or " +
                                std::to_string(2 * d) + " numbers l1,u1,...,l" + std::to_string(d) + ",u" +
                                std::to_string(d) + " (predictors in order, response last); " +
                                std::to_string(bounds.size()) + " given");
  }
  std::vector<core::ColumnBounds> out;
  for (std::size_t j = 0; j < bounds.size(); j += 2) {
    const std::string col = bounds.size() == 2 ? "every column" : "column '" + columns[j / 2] + "'";
    if (!(std::isfinite(bounds[j]) && std::isfinite(bounds[j + 1]) && bounds[j] < bounds[j + 1])) {
      throw std::invalid_argument("--bounds for " + col + ": need finite l < u, got " + core::format_value(bounds[j]) +
                                  "," + core::format_value(bounds[j + 1]));
    }
    out.push_back({bounds[j], bounds[j + 1]});
  }
  return out;
}

BmaPlan plan_bma(BmaCliOptions& o) {
  constexpr const char* fn = "dpmu bma";
  BmaPlan plan;
  o.predictors = non_empty(o.predictors);
  o.always_include = non_empty(o.always_include);
  if (o.predictors.empty()) throw std::invalid_argument("--predictors needs at least one column");
  if (o.predictors.size() > static_cast<std::size_t>(core::kMaxPredictors)) {
    throw std::invalid_argument("--predictors: " + std::to_string(o.predictors.size()) + " given, at most " +
                                std::to_string(core::kMaxPredictors) +
                                " (a model is a 64-bit mask; see dpmu bma --help)");
  }
  const bool mcmc_requested = o.mcmc;
  if (o.predictors.size() > 24) o.mcmc = true;  // enumeration keeps 2^p weights: MCMC beyond p = 24
  plan.columns = model_columns(o);
  plan.p = o.predictors.size();
  plan.options.top_models = count_option("--top-models", o.top_models, 0, 100000);
  for (const auto& name : o.always_include) {
    std::size_t j = 0;
    while (j < plan.p && o.predictors[j] != name) ++j;
    if (j == plan.p) throw std::invalid_argument("--always-include: '" + name + "' is not one of --predictors");
    plan.options.always_included |= (1ULL << j);
  }
  plan.prior = core::parse_coefficient_prior(o.prior, o.g, o.a);
  plan.model_prior = core::parse_model_prior(o.model_prior);
  if (o.mcmc) core::check_positive_finite(fn, "--mcmc-tolerance", o.mcmc_tolerance);
  check_search_bounds(o);
  if (o.credible_level != 0.0) core::check_open_interval(fn, "--credible-level", o.credible_level, 0.0, 1.0);
  plan.options.credible_level = o.credible_level;
  if (!o.uncertainty.empty() && o.uncertainty != "plug-in" && o.uncertainty != "noise-aware") {
    throw std::invalid_argument("--uncertainty must be noise-aware (the default for a release) or plug-in, not '" +
                                o.uncertainty + "'");
  }
  if (o.uncertainty == "noise-aware" && o.non_private) {
    throw std::invalid_argument(
        "--uncertainty noise-aware integrates over the privacy noise of a release; a --non-private fit has none");
  }
  if (!o.non_private && o.uncertainty.empty()) o.uncertainty = "noise-aware";
  if (o.uncertainty == "noise-aware") {
    api::check_noise_aware_draws(o.noise_aware_draws, "--noise-aware-draws");
    // n is checked once the data are read (before the release)
    api::check_noise_aware_plan(api::AnalysisPlan{plan.prior, plan.model_prior, plan.options}, static_cast<int>(plan.p),
                                INFINITY, mcmc_requested, "cli");
  }
  // Outputs never collide with an input, the ledger, its key or each other (docs/reliability.md).
  const std::vector<std::string> kept = {o.data, o.ledger.path,
                                         o.ledger.path.empty() ? "" : runtime::ledger_key_path(o.ledger.path)};
  if (!o.plot.empty()) check_new_output_file("--plot", o.plot, kept, o.force);
  if (o.non_private) {
    if (o.threshold || o.confidence || o.epsilon || o.delta || !o.bounds.empty() || o.rescale) {
      throw std::invalid_argument(
          "--threshold, --confidence, --epsilon, --delta, --bounds and --rescale need a private run (drop "
          "--non-private)");
    }
  } else {
    plan.bounds = bounds_option(o.bounds, plan.columns);
    if (!o.epsilon) throw std::invalid_argument("--epsilon is required unless --non-private");
    core::check_positive_finite(fn, "--epsilon", *o.epsilon);
    check_epsilon_floor(fn, "--epsilon", *o.epsilon);
    plan.mechanism = core::parse_ssp_mechanism(o.mechanism);
    if (plan.mechanism == core::SspMechanismKind::laplace && o.delta) {
      throw std::invalid_argument("--delta applies to the wishart mechanism only (laplace is epsilon-DP)");
    }
    if (plan.mechanism == core::SspMechanismKind::wishart) {
      core::check_open_interval(fn, "--epsilon (wishart)", *o.epsilon, 0.0, 1.0);
      if (!o.delta) {
        throw std::invalid_argument(
            "--delta is required for the wishart mechanism (no default for a privacy parameter; "
            "choose delta well below 1/n, e.g. 1e-6)");
      }
      core::check_open_interval(fn, "--delta", *o.delta, 0.0, 1.0);
    }
    if (o.threshold) {
      if (core::parse_threshold_reference(o.threshold_reference) == core::ThresholdReference::signed_quantile) {
        core::check_open_interval(fn, "--threshold (signed)", *o.threshold, 0.5, 1.0);
      } else {
        core::check_open_interval(fn, "--threshold", *o.threshold, 0.0, 1.0);
      }
    }
    if (o.confidence) {
      core::check_open_interval(fn, "--confidence", *o.confidence, 0.0, 1.0);
      count_option("--simulations", o.simulations, 1, 100000000);
      // core::mechanism_confidence_set keeps every draw E_i ((p+1)² doubles) and its norm.
      const double dim = static_cast<double>(o.predictors.size()) + 1.0;
      runtime::check_fits_in_memory(static_cast<double>(o.simulations) * (8.0 * dim * dim + 64.0),
                                    "--simulations " + std::to_string(o.simulations) + " (the Sec. 5.1 confidence set)",
                                    "use fewer --simulations (10^4 to 10^5 give the quantile to 2-3 digits)", 2.0);
      // The histograms keep 3 doubles a bin for each of 2p summaries: 10^5 bins is far finer than the
      // simulations can fill, and bounded memory.
      if (o.bins < 1 || o.bins > 100000) {
        throw std::invalid_argument("--bins must be a whole number in [1, 100000], got " + std::to_string(o.bins) +
                                    " (the default 40 suits 10^4 --simulations)");
      }
    }
    count_option("--ridge-draws", o.ridge_draws, 100, 100000000);
  }
  plan.threshold_reference = core::parse_threshold_reference(o.threshold_reference);
  if (o.ridge != "auto") {
    std::size_t used = 0;
    double v = NAN;
    try {
      v = std::stod(o.ridge, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != o.ridge.size()) {
      throw std::invalid_argument("--ridge must be 'auto' or a number, not '" + o.ridge + "'");
    }
    if (!(std::isfinite(v) && v >= 0.0)) core::throw_domain(fn, "--ridge", v, "finite and >= 0");
    plan.ridge = v;
  }
  plan.norm = core::parse_matrix_norm(o.norm);
  if (!o.synthetic_out.empty()) {
    std::vector<std::string> taken = kept;
    taken.push_back(o.plot);
    check_new_output_file("--synthetic-out", o.synthetic_out, taken, o.force);
  }
  api::check_ledger_options(o.ledger, !o.seed && !o.non_private);
  return plan;
}

/// Options that `--method adassp` takes; any other given option is refused, naming it.
const std::vector<std::string> kAdaSspOptions = {"--data",   "--sep",     "--response", "--predictors",
                                                 "--bounds", "--epsilon", "--delta",    "--seed",
                                                 "--ledger", "--budget",  "--method"};

/// The AdaSSP request of `dpmu bma --method adassp` (and its audit), checked before any data are read.
api::AdaSspRequest adassp_request(BmaCliOptions& o) {
  for (const auto& name : o.given) {
    if (std::find(kAdaSspOptions.begin(), kAdaSspOptions.end(), name) == kAdaSspOptions.end()) {
      throw std::invalid_argument(name +
                                  " does not apply to --method adassp (a ridge point estimate of the full model: no "
                                  "priors, models, intervals or SSP options); drop it, or use --method ssp");
    }
  }
  if (o.non_private) throw std::invalid_argument("--method adassp is a private release: drop --non-private");
  o.predictors = non_empty(o.predictors);
  if (o.predictors.empty()) throw std::invalid_argument("--predictors needs at least one column");
  api::AdaSspRequest q;
  q.bounds = bounds_option(o.bounds, model_columns(o));
  q.epsilon = o.epsilon;
  q.delta = o.delta;
  q.seed = o.seed;
  q.ledger = o.ledger;
  q.ledger.data_label = o.data;
  (void)api::adassp_settings(q, 1, o.predictors.size());  // every option checked before the data are read
  api::check_ledger_options(o.ledger, !o.seed);
  return q;
}

/// `dpmu bma --method adassp`: the AdaSSP release (api::adassp), printed as JSON.
void run_adassp(BmaCliOptions o) {
  const api::AdaSspRequest q = adassp_request(o);
  const std::vector<std::string> columns = model_columns(o);
  const DataFile file = read_data_file("dpmu bma", o.data, columns, o.sep);
  const Eigen::MatrixXd rows = file.table.matrix(columns);
  const auto out = api::adassp(rows, o.predictors, o.response, q, file.bytes, o.data);
  std::cout << api::json_text(out, 2) << "\n";
}

/// The long names of the options of `cmd` given on its command line.
std::vector<std::string> given_options(const CLI::App* cmd) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : cmd->get_options()) {
    if (opt->count() > 0 && !opt->get_lnames().empty()) out.push_back("--" + opt->get_lnames().front());
  }
  return out;
}

void run_bma(BmaCliOptions o) {
  default_ledger_from_environment(o.ledger, !o.seed && !o.non_private);
  if (o.method == "adassp") {
    run_adassp(o);
    return;
  }
  if (o.method != "ssp") {
    throw std::invalid_argument("--method must be ssp (the default: SSP model averaging) or adassp, not '" + o.method +
                                "'");
  }
  const BmaPlan plan = plan_bma(o);
  const std::size_t p = plan.p;
  const std::vector<std::string>& all = plan.columns;
  const core::CoefficientPrior& prior = plan.prior;
  const core::ModelPrior& mp = plan.model_prior;
  const api::AnalysisPlan analysis{plan.prior, plan.model_prior, plan.options};

  const DataFile file = read_data_file("dpmu bma", o.data, all, o.sep);
  const runtime::DataTable& table = file.table;
  const auto n_rows = static_cast<Eigen::Index>(table.rows());
  const double n = static_cast<double>(n_rows);
  const std::size_t forced = o.always_include.size();
  if (n <= static_cast<double>(forced) + 2.0) {
    throw std::invalid_argument("need more rows than forced predictors + 2 (n = " + std::to_string(n_rows) + ")");
  }
  if (o.uncertainty == "noise-aware") api::check_noise_aware_plan(analysis, static_cast<int>(p), n, false, "cli");
  if (n <= static_cast<double>(p) + 1.0 && !o.mcmc) {
    o.mcmc = true;  // p > n: MCMC over the estimable models (n > |γ| + 1)
    std::cerr << "dpmu bma: note: n = " << n_rows << " rows for " << p
              << " predictors: models with n <= |model| + 1 are not estimable and get probability 0; searching the "
                 "others by MCMC\n";
    check_search_bounds(o);
  }
  const Eigen::MatrixXd raw = table.matrix(all);

  // Streams for public computations (ridge calibration, MCMC, confidence sets, synthetic data):
  // the given seed, or a fresh one from the kernel CSPRNG for a real release.
  const bool secure = !o.seed && !o.non_private;
  runtime::SecureRng secure_rng;
  const std::uint64_t seed = o.seed ? *o.seed : secure_rng();
  api::Search search = search_of(o);
  search.seed = seed;
  SearchProgressLine progress_line(o.progress);
  search.progress = progress_line.callback();

  api::ReleaseReport report(secure || o.non_private, "SSP model averaging (Pena & Barrientos 2024, Sec. 5)");
  report.setting("data", o.data);
  report.setting("response", o.response);
  report.setting("predictors", o.predictors);
  report.setting("always_include", o.always_include);
  report.setting("n", n_rows);
  report.setting("p", p);
  report.setting("prior", core::to_string(prior));
  if (prior.prior.kind == core::PriorKind::g_prior) report.setting("g", prior.prior.g.value_or(n));
  if (prior.prior.kind == core::PriorKind::hyper_g || prior.prior.kind == core::PriorKind::hyper_g_n) {
    report.setting("a", prior.prior.a);
  }
  report.setting("model_prior", core::to_string(mp));
  report.setting("centring", "sample means of the clamped data (intercept always included)");
  report.setting("top_models", o.top_models);
  report.setting("search", o.mcmc ? "mcmc" : "enumeration");
  report.setting("credible_level", o.credible_level);
  report.setting("uncertainty", o.non_private ? std::string("exact") : o.uncertainty);
  if (o.uncertainty == "noise-aware") report.setting("noise_aware_draws", o.noise_aware_draws);
  report.setting("seed", o.seed ? json(*o.seed) : json(nullptr));
  std::vector<std::string> names = o.predictors;

  if (o.non_private) {
    report.not_private("--non-private: exact model averaging of the confidential data, no noise");
    const api::NonPrivateGram np = api::non_private_gram(raw, all);
    const Eigen::MatrixXd& gram = np.gram;
    std::vector<core::RankDeficientColumn> deficient;
    if (n > static_cast<double>(p) + 1.0) {  // for p > n every column beyond rank n - 1 is collinear
      deficient = core::rank_deficient_columns(gram, plan.options.collinearity_tolerance);
      print_messages(api::rank_deficient_messages(deficient, names));
    }
    if (!o.synthetic_out.empty() && (!deficient.empty() || n <= static_cast<double>(p) + 1.0)) {
      throw std::invalid_argument(
          "--synthetic-out needs a full-rank Gram matrix (synthetic data with D'D = G, Prop. 3), but " +
          (deficient.empty() ? std::string("there are more predictors than rows")
                             : "predictor '" + names[static_cast<std::size_t>(deficient.front().column)] + "' is " +
                                   (deficient.front().constant ? "constant" : "collinear with earlier predictors")) +
          "; drop it");
    }
    const api::BmaSummary a = api::analyse(gram, n, analysis, np.scale, search, names, o.response, false,
                                           np.means(static_cast<Eigen::Index>(p)));
    progress_line.finish();
    print_messages(api::excluded_model_messages(a, false));
    json r = result_json(a, names);
    r["predictor_means"] = keyed(np.means.head(static_cast<Eigen::Index>(p)), names);
    if (!o.plot.empty()) write_model_space_plot(o.plot, a, names, o.response);
    report.released("posterior_inclusion_probabilities", r["posterior_inclusion_probabilities"]);
    report.released("posterior_means", r["posterior_means"]);
    report.released("non_private", r);
    if (!o.synthetic_out.empty()) {
      core::RngStream rng(seed, core::fnv1a_64("bma/synthetic"), 0, core::StreamPurpose::data);
      Eigen::MatrixXd syn = core::synthetic_data(gram, n_rows, rng);
      for (Eigen::Index j = 0; j < syn.cols(); ++j) syn.col(j) *= np.scale(j);
      write_csv(o.synthetic_out, syn, all);
      report.released("synthetic_out", o.synthetic_out);
    }
    std::cout << api::json_text(report.finish(), 2) << "\n";
    return;
  }

  core::SspReleaseSettings rs;
  rs.mechanism = plan.mechanism;
  rs.bounds = plan.bounds;
  rs.epsilon = *o.epsilon;
  rs.delta = o.delta.value_or(0.0);
  rs.n = static_cast<std::size_t>(n_rows);
  rs.p = static_cast<int>(p);
  rs.rescale = o.rescale;
  const core::SspRelease release = api::ssp_release(rs);
  const core::SspMechanism& mech = release.mechanism();
  const Eigen::VectorXd& scale = release.column_scale();
  print_messages(api::release_warnings(rs, secure));

  report.privacy(release.privacy());
  if (plan.mechanism == core::SspMechanismKind::wishart) {
    const auto w = core::ssp_wishart_parameters(mech);
    report.privacy_detail("wishart_degrees_of_freedom", w.degrees_of_freedom);
    report.privacy_detail("wishart_scale", w.scale);
  } else {
    report.privacy_detail("laplace_scale", core::ssp_laplace_scale(mech));
  }
  json bounds = json::object();
  for (std::size_t j = 0; j <= p; ++j)
    bounds[all[j]] = {rs.bounds.size() == 1 ? rs.bounds[0].lower : rs.bounds[j].lower,
                      rs.bounds.size() == 1 ? rs.bounds[0].upper : rs.bounds[j].upper};
  report.setting("bounds", bounds);
  report.setting("bounds_refer_to", "raw values: each value is clamped into its column's bounds before centring");
  report.setting("rescale", o.rescale);
  report.setting("column_scale", keyed(scale, all));
  report.setting("column_scale_source", o.rescale ? "public bound widths u - l" : "none (1)");

  api::LedgerOptions ledger = o.ledger;
  ledger.data_label = o.data;
  // The budget is checked now, before any work; the charge is made as soon as the noise is drawn,
  // before anything computed from it is written, printed or timed (docs/privacy.md "Charge first,
  // then speak").
  api::ReleaseCharge charge(ledger, "dpmu bma", release.privacy(),
                            json::array({"released_gram", "and post-processing of it"}));
  api::ReleaseOptions ro;
  ro.ridge = plan.ridge;
  ro.ridge_draws = static_cast<int>(o.ridge_draws);  // checked: <= 10^8
  ro.threshold = o.threshold;
  ro.threshold_reference = plan.threshold_reference;
  ro.progress = search.progress;
  std::vector<std::string> messages;
  const api::BmaRelease rel =
      api::release_gram(raw, release, ro, seed, secure ? &secure_rng : nullptr, charge, file.bytes, messages);
  if (const auto& c = charge.charge()) report.setting("ledger", api::to_json(*c));
  print_messages(messages);
  const Eigen::MatrixXd& noisy = rel.released_gram;
  report.released("released_gram", lower_triangle(noisy));
  report.released("released_gram_columns", all);
  if (rel.clamped_entries) {
    report.diagnostic("clamped_entries", *rel.clamped_entries);
    report.diagnostic("clamped_fraction", static_cast<double>(*rel.clamped_entries) / (n * static_cast<double>(p + 1)));
  }
  json reg;
  reg["method"] = rel.ridge_method;
  reg["requested"] = rel.ridge_requested;
  reg["non_thresholded"] = {{"regularization", rel.regularized.regularization}, {"fallback", rel.regularized.fallback}};

  std::vector<std::string> na_messages;
  const api::BmaSummary a =
      o.uncertainty == "noise-aware"
          ? api::noise_aware_analysis(rel, n, analysis, search, o.noise_aware_draws, names, o.response, na_messages)
          : api::analyse(rel.regularized.matrix, n, analysis, scale, search, names, o.response, true, std::nullopt);
  progress_line.finish();
  print_messages(na_messages);
  print_messages(api::excluded_model_messages(a, true));
  const json nt = result_json(a, names);
  report.released("posterior_inclusion_probabilities", nt["posterior_inclusion_probabilities"]);
  report.released("posterior_means", nt["posterior_means"]);
  report.released("non_thresholded", nt);
  if (rel.thresholded_regularized) {
    reg["thresholded"] = {{"regularization", rel.thresholded_regularized->regularization},
                          {"fallback", rel.thresholded_regularized->fallback}};
    const api::BmaSummary b = api::analyse(rel.thresholded_regularized->matrix, n, analysis, scale, search, names,
                                           o.response, true, std::nullopt);
    progress_line.finish();
    print_messages(api::excluded_model_messages(b, true));
    json t = result_json(b, names);
    t["threshold_percentile"] = *o.threshold;
    t["threshold_reference"] = o.threshold_reference;
    t["threshold_value"] = *rel.threshold_value;
    t["off_diagonal_entries_zeroed"] = rel.off_diagonal_entries_zeroed;
    report.released("thresholded", t);
  }
  report.released("regularization", reg);

  if (o.confidence) {
    core::BmaOptions copt = plan.options;
    copt.keep_all_models = false;
    copt.top_models = 0;
    copt.credible_level = 0.0;
    copt.interval_max_models = 0;
    const auto pp = static_cast<Eigen::Index>(p);
    api::Search quiet_search = search;  // one search per simulation: no progress line for each
    quiet_search.progress = nullptr;
    const auto summary = [&](const Eigen::MatrixXd& cand) {
      const core::BmaResult res = api::run_search(cand, n, prior, mp, copt, quiet_search, nullptr);
      Eigen::VectorXd v(2 * pp);
      v.head(pp) = res.posterior_inclusion_probability;
      v.tail(pp) = res.model_averaged_coefficients.cwiseProduct(
          Eigen::VectorXd::Constant(pp, scale(pp)).cwiseQuotient(scale.head(pp)));
      return v;
    };
    core::RngStream cs_rng(seed, core::fnv1a_64("bma/confidence"), 0, core::StreamPurpose::noise);
    const core::MechanismConfidenceSet cs = core::mechanism_confidence_set(
        noisy, mech, cs_rng, static_cast<int>(o.simulations), *o.confidence, summary, plan.norm);
    json c;
    c["confidence"] = cs.confidence;
    c["norm"] = core::to_string(plan.norm);
    c["simulations"] = cs.simulations;
    c["norm_quantile"] = cs.norm_quantile;
    c["accepted"] = cs.accepted;
    c["positive_definite"] = cs.positive_definite;
    c["bins"] = o.bins;
    c["empty"] = cs.summaries.empty();
    if (cs.summaries.empty()) {
      std::cerr << "dpmu bma: note: the Sec. 5.1 confidence set is empty (no candidate G* - E_i is positive "
                   "definite); raise --simulations or --confidence\n";
    }
    json pips = json::object();
    json means = json::object();
    if (!cs.summaries.empty()) {
      for (Eigen::Index j = 0; j < pp; ++j) {
        std::vector<double> vp, vm;
        for (const auto& s : cs.summaries) {
          vp.push_back(s(j));
          vm.push_back(s(pp + j));
        }
        pips[names[static_cast<std::size_t>(j)]] = histogram_json(core::make_histogram(vp, static_cast<int>(o.bins)));
        means[names[static_cast<std::size_t>(j)]] = histogram_json(core::make_histogram(vm, static_cast<int>(o.bins)));
      }
    }
    c["posterior_inclusion_probabilities"] = pips;
    c["posterior_means"] = means;
    report.released("confidence_sets", c);
  }

  Eigen::MatrixXd synthetic;
  if (!o.synthetic_out.empty()) {
    core::RngStream rng(seed, core::fnv1a_64("bma/synthetic"), 0, core::StreamPurpose::data);
    synthetic = core::synthetic_data(rel.regularized.matrix, n_rows, rng);
    for (Eigen::Index j = 0; j < synthetic.cols(); ++j) synthetic.col(j) *= scale(j);
    report.released("synthetic_out", o.synthetic_out);
  }
  // Charged when the noise was drawn: deliver it (files first, then standard output).
  if (!o.plot.empty()) write_model_space_plot(o.plot, a, names, o.response);
  if (!o.synthetic_out.empty()) write_csv(o.synthetic_out, synthetic, all);
  std::cout << api::json_text(report.finish(), 2) << "\n";
}

void register_bma_options(CLI::App* cmd, BmaCliOptions& o) {
  cmd->add_option("--data", o.data, "CSV file with a header row")->required()->check(CLI::ExistingFile);
  add_separator_option(cmd, o.sep);
  cmd->add_option("--response", o.response, "Response column Y")->required();
  cmd->add_option("--predictors", o.predictors,
                  "Comma-separated candidate predictors. Limits: at most 63 (a model is a 64-bit mask); full "
                  "enumeration up to 24, MCMC beyond; with n <= p + 1 rows, MCMC over the estimable models "
                  "(n > |model| + 1), the others get probability 0")
      ->required()
      ->delimiter(',');
  cmd->add_option("--always-include", o.always_include, "Predictors forced into every model")->delimiter(',');
  cmd->add_option("--bounds", o.bounds,
                  "Public bounds on the raw values: l,u for every column, or l1,u1,...,l(p+1),u(p+1) (predictors in "
                  "order, response last). Values are clamped into them before centring.")
      ->delimiter(',');
  cmd->add_option("--epsilon", o.epsilon, "Privacy parameter epsilon > 0 (wishart: < 1)");
  cmd->add_option("--delta", o.delta, "Privacy parameter delta in (0, 1) (wishart only; required)");
  cmd->add_option("--mechanism", o.mechanism, "laplace | wishart")->capture_default_str();
  cmd->add_option("--threshold", o.threshold, "Also report the hard-thresholded analysis at this percentile in (0,1)");
  cmd->add_option("--threshold-reference", o.threshold_reference,
                  "absolute (percentile of |E_ij|) | signed (percentile of E_ij)")
      ->capture_default_str();
  cmd->add_option("--ridge", o.ridge, "auto | VALUE: ridge r added to the diagonal of G*")->capture_default_str();
  cmd->add_option("--ridge-draws", o.ridge_draws, "Monte Carlo draws for the Laplace ridge")
      ->capture_default_str()
      ->check(unsigned_integer());
  cmd->add_option("--prior", o.prior,
                  "zellner-siow | zellner-siow-laplace | g-prior | hyper-g | hyper-g-n | robust | bic | aic | lr")
      ->capture_default_str();
  cmd->add_option("--g", o.g, "Fixed g of the g-prior (default: n)");
  cmd->add_option("--a", o.a, "Parameter a > 2 of hyper-g and hyper-g-n")->capture_default_str();
  cmd->add_option("--model-prior", o.model_prior, "beta-binomial:A,B | uniform | bernoulli:W")->capture_default_str();
  cmd->add_option("--confidence", o.confidence, "Confidence level of the mechanism confidence sets (Sec. 5.1)");
  cmd->add_option("--simulations", o.simulations, "Noise draws for the confidence sets")
      ->capture_default_str()
      ->check(unsigned_integer());
  cmd->add_option("--bins", o.bins, "Histogram bins")->capture_default_str()->check(unsigned_integer());
  cmd->add_option("--norm", o.norm, "frobenius | spectral | max-abs")->capture_default_str();
  cmd->add_option("--seed", o.seed,
                  "Seed: reproducible simulation noise; the output says \"private\": false. Without it, secure noise")
      ->check(unsigned_integer());
  cmd->add_flag("--non-private", o.non_private, "Exact (confidential) model averaging, no noise");
  cmd->add_flag("--rescale", o.rescale,
                "Divide each column by the width u - l of its public bounds before centring (noise in proportion to "
                "each column's range)");
  cmd->add_option("--synthetic-out", o.synthetic_out,
                  "Write synthetic data with D'D = G*+rI (Prop. 3) to this new CSV (never the input)");
  cmd->add_flag("--force", o.force, "Allow --synthetic-out to replace an existing file (never the input)");
  cmd->add_option("--top-models", o.top_models, "Number of most probable models to list")
      ->capture_default_str()
      ->check(unsigned_integer());
  cmd->add_flag("--mcmc", o.mcmc, "Sample models by MCMC instead of enumerating them (automatic for p > 24)");
  cmd->add_option("--mcmc-tolerance", o.mcmc_tolerance, "MCMC stopping rule: max PIP difference between halves")
      ->capture_default_str();
  cmd->add_option("--mcmc-max-iterations", o.mcmc_max_iterations,
                  "MCMC iteration bound (default 10^5 p, at most 4*10^6; docs/bma.md \"Cost of the model search\")")
      ->check(positive_integer());
  cmd->add_option("--mcmc-max-models", o.mcmc_max_models,
                  "Distinct models the MCMC search stores (memory <= 256 bytes each; beyond it, models are "
                  "re-evaluated, not stored)")
      ->capture_default_str()
      ->check(unsigned_integer());
  cmd->add_flag("--progress", o.progress,
                "Progress line with an ETA on stderr for searches longer than 2 s even when stderr is not a "
                "terminal (on a terminal it is always shown)");
  cmd->add_option("--credible-level", o.credible_level,
                  "Level of the model-averaged credible intervals of the coefficients (0: none)")
      ->capture_default_str();
  cmd->add_option("--uncertainty", o.uncertainty,
                  "noise-aware (the default for a release: sampling and privacy noise, the posterior given the "
                  "release by data augmentation; post-processing, no extra budget; docs/bma.md) | plug-in (the "
                  "paper's analysis: G* + rI analysed as the data's statistics, sampling uncertainty only)");
  cmd->add_option("--noise-aware-draws", o.noise_aware_draws,
                  "Noise-aware: warm-up sweeps and first batch of saved draws per chain (4 chains; extended until "
                  "R-hat <= 1.01 and ESS >= 400, at most 16x)")
      ->capture_default_str();
  cmd->add_option("--plot", o.plot,
                  "Write an image of the model space (top models x predictors, coloured by log posterior odds) to "
                  "this new PNG file (python3 with matplotlib; plotting/bma_image.py)");
  cmd->add_option("--method", o.method,
                  "ssp: SSP model averaging (Pena & Barrientos 2024, Sec. 5) | adassp: the AdaSSP baseline (Wang "
                  "2018), a private ridge point estimate of the full model, no model uncertainty; takes only "
                  "--data, --sep, --response, --predictors, --bounds, --epsilon, --delta (required), --seed, "
                  "--ledger, --budget")
      ->capture_default_str();
  add_ledger_options(cmd, o.ledger);
}

/// `dpmu audit bma`: the release path up to G* (everything after it is post-processing).
AuditTarget adassp_audit_target(BmaCliOptions o) {
  o.seed.reset();
  const api::AdaSspRequest q = adassp_request(o);
  const std::vector<std::string> columns = model_columns(o);
  const runtime::DataTable table = read_data_file("dpmu audit bma", o.data, columns, o.sep).table;
  AuditTarget t;
  t.command = "dpmu bma --method adassp";
  t.data = table.matrix(columns);
  t.columns = columns;
  auto release = std::make_shared<const core::AdaSspRelease>(
      api::adassp_settings(q, static_cast<std::size_t>(t.data.rows()), o.predictors.size()));
  t.guarantee = release->privacy();
  for (std::size_t j = 0; j < columns.size(); ++j) t.bounds.push_back(api::adassp_column_bounds(q, j));
  t.bounds_source = "--bounds (public)";
  // The released triple (lambda_min_noisy, unique entries of the released Gram matrix, X'y);
  // everything else is post-processing of it.
  t.release = [release, q](const Eigen::MatrixXd& rows, core::NoiseSource& noise) {
    Eigen::MatrixXd design;
    Eigen::VectorXd w;
    api::adassp_design(rows, q, design, w);
    const core::AdaSspOutput out = release->release(design, w, noise);
    const Eigen::VectorXd gram = core::unique_entries(out.gram);
    Eigen::VectorXd v(1 + gram.size() + out.xty.size());
    v << out.lambda_min_noisy, gram, out.xty;
    return v;
  };
  return t;
}

AuditTarget bma_audit_target(BmaCliOptions o) {
  if (o.non_private) throw std::invalid_argument("dpmu audit bma audits a private release: drop --non-private");
  if (!o.ledger.path.empty()) throw std::invalid_argument("dpmu audit is not a release: drop --ledger");
  if (o.seed) {
    throw std::invalid_argument("dpmu audit draws its releases from --audit-seed (reproducible); drop --seed");
  }
  if (o.method == "adassp") return adassp_audit_target(o);
  o.seed.reset();
  o.synthetic_out.clear();
  const BmaPlan plan = plan_bma(o);
  const runtime::DataTable table = read_data_file("dpmu audit bma", o.data, plan.columns, o.sep).table;
  AuditTarget t;
  t.command = "dpmu bma";
  t.data = table.matrix(plan.columns);
  t.columns = plan.columns;
  core::SspReleaseSettings rs;
  rs.mechanism = plan.mechanism;
  rs.bounds = plan.bounds;
  rs.epsilon = *o.epsilon;
  rs.delta = o.delta.value_or(0.0);
  rs.n = static_cast<std::size_t>(t.data.rows());
  rs.p = static_cast<int>(plan.p);
  rs.rescale = o.rescale;
  auto release = std::make_shared<const core::SspRelease>(api::ssp_release(rs));
  t.guarantee = release->privacy();
  t.bounds = release->settings().bounds;
  t.bounds_source = "--bounds (public)";
  t.release = [release](const Eigen::MatrixXd& rows, core::NoiseSource& noise) {
    return core::unique_entries(release->release(rows, noise).released_gram);
  };
  return t;
}

}  // namespace

void add_bma_command(CLI::App& app, CLI::App& audit) {
  auto o = std::make_shared<BmaCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bma",
      "Differentially private Bayesian model averaging and selection by perturbing the Gram matrix of the "
      "centred data (Pena & Barrientos 2024, Sec. 5). Prints JSON.");
  register_bma_options(cmd, *o);
  cmd->callback([o, cmd] {
    o->given = given_options(cmd);
    run_bma(*o);
  });
  auto ao = std::make_shared<BmaCliOptions>();
  auto audit_options = std::make_shared<AuditCliOptions>();
  CLI::App* acmd = audit.add_subcommand(
      "bma", "Audit the release of dpmu bma (the noisy Gram matrix) on neighbouring data sets built from --bounds");
  register_bma_options(acmd, *ao);
  add_audit_options(acmd, *audit_options);
  acmd->callback([ao, audit_options, acmd] {
    ao->given = given_options(acmd);
    for (const char* audit_option :
         {"--audit-samples", "--audit-seed", "--audit-events", "--audit-confidence", "--audit-pilot"}) {
      std::erase(ao->given, std::string(audit_option));
    }
    run_audit(bma_audit_target(*ao), *audit_options);
  });
}

}  // namespace dpmu::cli
