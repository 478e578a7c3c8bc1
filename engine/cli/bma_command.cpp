// `dpmu bma`: differentially private Bayesian model averaging and selection by sufficient-statistic
// perturbation (Peña & Barrientos 2024, §5). See docs/bma.md for every field of the JSON output.
#include <unistd.h>

#include <cmath>
#include <cstdio>
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
#include "dpmu/core/bma.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/core/synthetic_data.hpp"
#include "dpmu/runtime/data_table.hpp"
#include "dpmu/runtime/secure_random.hpp"
#include "release_ledger.hpp"
#include "release_report.hpp"

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
  int ridge_draws = 100000;
  std::string prior = "zellner-siow";
  std::optional<double> g;
  double a = 3.0;
  std::string model_prior = "beta-binomial:1,1";
  std::optional<double> confidence;
  int simulations = 10000;
  int bins = 40;
  std::string norm = "frobenius";
  std::optional<std::uint64_t> seed;  ///< unset: a real release (secure noise)
  bool non_private = false;
  bool rescale = false;
  std::string synthetic_out;
  bool force = false;
  LedgerOptions ledger;
  int top_models = 10;
  bool mcmc = false;
  double mcmc_tolerance = 0.005;
};

std::vector<std::string> non_empty(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

std::vector<std::string> model_names(core::ModelMask m, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (std::size_t j = 0; j < names.size(); ++j) {
    if ((m >> j) & 1U) out.push_back(names[j]);
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

struct Analysis {
  core::BmaResult result;
  Eigen::VectorXd coefficients_original_scale;
  std::optional<core::McmcDiagnostics> mcmc;
};

struct Search {
  bool mcmc = false;
  double tolerance = 0.005;
  std::uint64_t seed = 1;
  std::uint64_t stream = 0;
};

core::BmaResult run_search(const Eigen::MatrixXd& gram, double n, const core::CoefficientPrior& prior,
                           const core::ModelPrior& mp, const core::BmaOptions& opt, const Search& search,
                           core::McmcDiagnostics* diag) {
  if (!search.mcmc) return core::bayesian_model_averaging(gram, n, prior, mp, opt);
  core::McmcOptions mo;
  mo.always_included = opt.always_included;
  mo.p0 = opt.p0;
  mo.tolerance = search.tolerance;
  mo.top_models = opt.top_models;
  core::RngStream rng(search.seed, core::fnv1a_64("bma/mcmc") ^ search.stream, 0, core::StreamPurpose::noise);
  return core::bayesian_model_averaging_mcmc(gram, n, prior, mp, rng, mo, diag);
}

Analysis analyse(const Eigen::MatrixXd& gram, double n, const core::CoefficientPrior& prior, const core::ModelPrior& mp,
                 const core::BmaOptions& opt, const Eigen::VectorXd& scale, const Search& search) {
  Analysis a;
  core::McmcDiagnostics diag;
  a.result = run_search(gram, n, prior, mp, opt, search, &diag);
  if (search.mcmc) a.mcmc = diag;
  const Eigen::Index p = gram.rows() - 1;
  a.coefficients_original_scale = a.result.model_averaged_coefficients.cwiseProduct(
      Eigen::VectorXd::Constant(p, scale(p)).cwiseQuotient(scale.head(p)));
  return a;
}

json result_json(const Analysis& a, const std::vector<std::string>& names) {
  const core::BmaResult& r = a.result;
  json o;
  o["posterior_inclusion_probabilities"] = keyed(r.posterior_inclusion_probability, names);
  o["posterior_means"] = keyed(a.coefficients_original_scale, names);
  o["prior_inclusion_probabilities"] = keyed(r.prior_inclusion_probability, names);
  o["expected_model_size"] = r.expected_model_size;
  o["highest_posterior_model"] = model_names(r.highest_posterior_model, names);
  o["median_probability_model"] = model_names(r.median_probability_model, names);
  json top = json::array();
  for (const auto& t : r.top_models) {
    json m;
    m["predictors"] = model_names(t.model, names);
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
  if (a.mcmc) {
    o["mcmc"] = {{"iterations", a.mcmc->iterations},
                 {"models_visited", a.mcmc->models_visited},
                 {"acceptance_rate", a.mcmc->acceptance_rate},
                 {"converged", a.mcmc->converged},
                 {"max_pip_difference_between_halves", a.mcmc->max_pip_difference}};
  }
  return o;
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

/// The centred Gram matrix of the confidential data for --non-private, and the column scales.
struct NonPrivateGram {
  Eigen::MatrixXd gram;   ///< of the scaled columns
  Eigen::VectorXd scale;  ///< column j of the data = scale(j) × column j of the scaled data
};

/// Scale invariance: PIPs, Bayes factors and R² do not depend on the scale of any column, so each
/// column is divided by the power of two 2^e with max |x_j| in [2^(e−1), 2^e) before the Gram matrix
/// (exact: no rounding), and the slopes are multiplied back (Analysis::coefficients_original_scale).
/// Columns of magnitude 1e-300 or 1e300 then give the answers of unit-scale ones instead of
/// overflowing or underflowing in G. A constant column is centred to exactly 0 (the rounding of its
/// mean would otherwise leave ±1-ulp residues that look like a tiny non-constant predictor). The
/// response must vary. Non-private mode only: a release never uses a data-dependent scale.
NonPrivateGram non_private_gram(const Eigen::MatrixXd& raw, const std::vector<std::string>& columns) {
  NonPrivateGram out;
  const Eigen::Index d = raw.cols();
  out.scale = Eigen::VectorXd::Ones(d);
  Eigen::MatrixXd scaled = raw;
  std::vector<bool> constant(static_cast<std::size_t>(d));
  for (Eigen::Index j = 0; j < d; ++j) {
    const double m = raw.col(j).cwiseAbs().maxCoeff();
    constant[static_cast<std::size_t>(j)] = raw.col(j).maxCoeff() == raw.col(j).minCoeff();
    if (m > 0.0) {
      int e = 0;
      std::frexp(m, &e);
      out.scale(j) = std::ldexp(1.0, e);
      scaled.col(j) = scaled.col(j).unaryExpr([e](double v) { return std::ldexp(v, -e); });  // 2^-e may overflow
    }
  }
  if (constant.back()) {
    throw std::invalid_argument("the response '" + columns.back() + "' is constant (every value is " +
                                core::format_value(raw(0, d - 1)) + "): there is nothing for a model to explain");
  }
  out.gram = core::gram_matrix(scaled, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max(), true);
  for (Eigen::Index j = 0; j < d; ++j) {
    if (constant[static_cast<std::size_t>(j)]) {
      out.gram.row(j).setZero();
      out.gram.col(j).setZero();
    }
  }
  return out;
}

std::string quoted_list(core::ModelMask m, const std::vector<std::string>& names) {
  std::string out;
  for (const auto& s : model_names(m, names)) out += (out.empty() ? "'" : ", '") + s + "'";
  return out.empty() ? "(none)" : out;
}

/// Name the constant and collinear predictors of the confidential data on stderr (non-private mode
/// only: in a release the collinearity of the columns is confidential).
void warn_rank_deficient_columns(const std::vector<core::RankDeficientColumn>& deficient,
                                 const std::vector<std::string>& names) {
  for (const auto& c : deficient) {
    const std::string& name = names[static_cast<std::size_t>(c.column)];
    if (c.constant) {
      std::cerr << "dpmu bma: warning: predictor '" << name
                << "' is constant; every model that contains it is rank-deficient and excluded (its inclusion "
                   "probability is 0)\n";
    } else {
      std::cerr << "dpmu bma: warning: predictor '" << name << "' is collinear with "
                << quoted_list(c.collinear_with, names)
                << "; every model that contains it together with all of them is rank-deficient and excluded\n";
    }
  }
}

/// The count of excluded models, on stderr. In a release it is said in terms of the released matrix
/// (post-processing of G*, no disclosure).
void warn_excluded_models(const core::BmaResult& r, bool release) {
  if (r.models_rank_deficient > 0) {
    const std::uint64_t total = r.models_rank_deficient + r.models_evaluated;
    if (release) {
      std::cerr << "dpmu bma: note: " << r.models_rank_deficient << " of " << total
                << " models are numerically singular in the regularised released matrix G* + rI and were excluded "
                   "(models_rank_deficient)\n";
    } else {
      std::cerr << "dpmu bma: warning: " << r.models_rank_deficient << " of " << total
                << " models are rank-deficient and were excluded (models_rank_deficient), as BAS does; drop the "
                   "predictors named above to average over full-rank models only\n";
    }
  }
  if (r.models_exact_fit > 0) {
    std::cerr << "dpmu bma: note: " << r.models_exact_fit << " model(s) fit the response exactly (R^2 = 1"
              << (release ? " in the regularised released matrix" : "")
              << "); the g-prior's finite limit log B = ((n-1-k)/2) log(1+g) is used for them (docs/bma.md)\n";
  }
}

/// analyse(), with an exact fit under a prior that gives it infinite evidence explained in terms of
/// the predictors (docs/decisions.md: what R² = 1 means per prior).
Analysis analyse_or_explain(const Eigen::MatrixXd& gram, double n, const core::CoefficientPrior& prior,
                            const core::ModelPrior& mp, const core::BmaOptions& opt, const Eigen::VectorXd& scale,
                            const Search& search, const std::vector<std::string>& names, const std::string& response,
                            bool release) {
  try {
    return analyse(gram, n, prior, mp, opt, scale, search);
  } catch (const core::ExactFitError& e) {
    throw std::domain_error(
        std::string(release ? "in the regularised released matrix G* + rI, " : "") + "the model with predictors " +
        quoted_list(e.model(), names) + " fits the response '" + response + "' exactly (R^2 = 1). Under --prior " +
        core::to_string(prior) +
        " an exact fit has infinite evidence, so model averaging has no answer; --prior g-prior gives it the finite "
        "limit log B = ((n-1-k)/2) log(1+g) (docs/bma.md), or drop predictors so that none fits exactly");
  }
}

/// --ridge is never raised silently: when G* + rI is not positive definite and regularize() raises r
/// (regularization.<version>.fallback = true in the output), say so on stderr (a property of the
/// released matrix: no disclosure).
void warn_ridge_fallback(const core::RegularizedGram& g, double requested, const std::string& method,
                         const char* version) {
  if (!g.fallback) return;
  std::cerr << "dpmu bma: warning: " << (method == "user" ? "--ridge " : "the automatic ridge ")
            << core::format_value(requested) << " leaves the " << version
            << " released matrix G* + rI not positive definite; the ridge was raised to "
            << core::format_value(g.regularization) << " (regularization." << version << ".fallback = true)\n";
}

/// The widths w_j of the public bounds (1 with --rescale) must keep the Gram matrix, its
/// sensitivity ((n−1)/n)((Σw)² + Σw²)/2 and the noise within the range of a double; beyond it the
/// release would be inf/NaN ("l1_sensitivity is inf", "regularize: matrix is nan"). Public inputs
/// only. @throws std::invalid_argument naming --bounds.
void check_release_magnitudes(const core::SspReleaseSettings& rs, double epsilon) {
  double sum = 0.0;
  double sum_sq = 0.0;
  double widest = 0.0;
  for (std::size_t j = 0; j < static_cast<std::size_t>(rs.p + 1); ++j) {
    const core::ColumnBounds& b = rs.bounds.size() == 1 ? rs.bounds[0] : rs.bounds[j];
    const double w = rs.rescale ? 1.0 : b.upper - b.lower;
    widest = std::max(widest, b.upper - b.lower);
    sum += w;
    sum_sq += w * w;
  }
  const double s = 0.5 * (sum * sum + sum_sq);
  const double n = static_cast<double>(rs.n);
  if (!std::isfinite(widest) || !std::isfinite(s * n) || !std::isfinite(64.0 * s / epsilon)) {
    throw std::invalid_argument(
        "--bounds: widths u - l up to " + core::format_value(widest) +
        " make the Gram matrix (up to n w^2), its sensitivity ((n-1)/n)((sum w)^2 + sum w^2)/2 = " +
        core::format_value(s) + " or the noise (sensitivity / epsilon) overflow a double" +
        (rs.rescale ? "" : "; choose narrower public bounds, or add --rescale (each column divided by its width)"));
  }
}

/// The noise the release will add must be finite: Laplace scale, or the Wishart k·B² (its mean
/// shift). Public quantities only. @throws std::invalid_argument naming --epsilon and --bounds.
void check_noise_magnitude(const core::SspRelease& release, const core::SspReleaseSettings& rs, double n) {
  const core::SspMechanism& mech = release.mechanism();
  double noise = 0.0;
  if (mech.kind == core::SspMechanismKind::laplace) {
    noise = 64.0 * core::ssp_laplace_scale(mech);
  } else {
    const auto w = core::ssp_wishart_parameters(mech);
    noise = 64.0 * w.degrees_of_freedom * w.scale;
  }
  const double g = release.privacy().sensitivity * n;
  if (!std::isfinite(noise + g)) {
    throw std::invalid_argument("--epsilon " + core::format_value(rs.epsilon) + " with these --bounds gives noise of " +
                                "magnitude " + core::format_value(noise) +
                                ", beyond the range of a double; choose a larger --epsilon or narrower --bounds");
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

BmaPlan plan_bma(BmaCliOptions& o) {
  constexpr const char* fn = "dpmu bma";
  BmaPlan plan;
  o.predictors = non_empty(o.predictors);
  o.always_include = non_empty(o.always_include);
  if (o.predictors.empty()) throw std::invalid_argument("--predictors needs at least one column");
  if (o.predictors.size() > 63) throw std::invalid_argument("--predictors: at most 63 predictors");
  if (o.predictors.size() > 24) o.mcmc = true;  // enumeration keeps 2^p weights: MCMC beyond p = 24
  plan.columns = o.predictors;
  plan.columns.push_back(o.response);
  for (std::size_t i = 0; i < plan.columns.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (plan.columns[i] == plan.columns[j]) {
        throw std::invalid_argument("column '" + plan.columns[i] + "' is named twice");
      }
    }
  }
  plan.p = o.predictors.size();
  plan.options.top_models = o.top_models;
  for (const auto& name : o.always_include) {
    std::size_t j = 0;
    while (j < plan.p && o.predictors[j] != name) ++j;
    if (j == plan.p) throw std::invalid_argument("--always-include: '" + name + "' is not one of --predictors");
    plan.options.always_included |= (1ULL << j);
  }
  plan.prior = core::parse_coefficient_prior(o.prior, o.g, o.a);
  plan.model_prior = core::parse_model_prior(o.model_prior);
  if (o.top_models < 0) core::throw_domain(fn, "--top-models", o.top_models, ">= 0");
  if (o.mcmc) core::check_positive_finite(fn, "--mcmc-tolerance", o.mcmc_tolerance);
  if (o.non_private) {
    if (o.threshold || o.confidence || o.epsilon || o.delta || !o.bounds.empty() || o.rescale) {
      throw std::invalid_argument(
          "--threshold, --confidence, --epsilon, --delta, --bounds and --rescale need a private run (drop "
          "--non-private)");
    }
  } else {
    const std::size_t d = plan.p + 1;
    if (o.bounds.size() != 2 && o.bounds.size() != 2 * d) {
      throw std::invalid_argument("--bounds: give l,u (public bounds on the raw values of every column) or " +
                                  std::to_string(2 * d) + " numbers l1,u1,...,l" + std::to_string(d) + ",u" +
                                  std::to_string(d) + " (predictors in order, response last); " +
                                  std::to_string(o.bounds.size()) + " given");
    }
    for (std::size_t j = 0; j < o.bounds.size(); j += 2) {
      const std::string col = o.bounds.size() == 2 ? "every column" : "column '" + plan.columns[j / 2] + "'";
      if (!(std::isfinite(o.bounds[j]) && std::isfinite(o.bounds[j + 1]) && o.bounds[j] < o.bounds[j + 1])) {
        throw std::invalid_argument("--bounds for " + col + ": need finite l < u, got " +
                                    core::format_value(o.bounds[j]) + "," + core::format_value(o.bounds[j + 1]));
      }
      plan.bounds.push_back({o.bounds[j], o.bounds[j + 1]});
    }
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
      if (o.simulations < 1) core::throw_domain(fn, "--simulations", o.simulations, ">= 1");
      if (o.bins < 1) core::throw_domain(fn, "--bins", o.bins, ">= 1");
    }
    if (o.ridge_draws < 100) core::throw_domain(fn, "--ridge-draws", o.ridge_draws, ">= 100");
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
  if (!o.synthetic_out.empty()) check_new_output_file("--synthetic-out", o.synthetic_out, {o.data}, o.force);
  ReleaseLedger::check_options(o.ledger, o.data, !o.seed && !o.non_private);
  return plan;
}

void run_bma(BmaCliOptions o) {
  const BmaPlan plan = plan_bma(o);
  const std::size_t p = plan.p;
  const std::vector<std::string>& all = plan.columns;
  const core::CoefficientPrior& prior = plan.prior;
  const core::ModelPrior& mp = plan.model_prior;
  const core::BmaOptions& opt = plan.options;

  const runtime::DataTable table = read_data_file("dpmu bma", o.data, all, o.sep);
  const auto n_rows = static_cast<Eigen::Index>(table.rows());
  const double n = static_cast<double>(n_rows);
  if (n <= static_cast<double>(p) + 1.0) {
    throw std::invalid_argument("need more rows than predictors + 1 (n = " + std::to_string(n_rows) + ")");
  }
  const Eigen::MatrixXd raw = table.matrix(all);

  // Streams for public computations (ridge calibration, MCMC, confidence sets, synthetic data):
  // the given seed, or a fresh one from the kernel CSPRNG for a real release.
  const bool secure = !o.seed && !o.non_private;
  runtime::SecureRng secure_rng;
  const std::uint64_t seed = o.seed ? *o.seed : secure_rng();
  Search search;
  search.mcmc = o.mcmc;
  search.tolerance = o.mcmc_tolerance;
  search.seed = seed;

  ReleaseReport report(secure || o.non_private, "SSP model averaging (Pena & Barrientos 2024, Sec. 5)");
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
  report.setting("seed", o.seed ? json(*o.seed) : json(nullptr));
  std::vector<std::string> names = o.predictors;

  if (o.non_private) {
    ReleaseLedger(o.ledger, "dpmu bma", o.data, core::PrivacyGuarantee{}, false);  // refuses --ledger
    report.not_private("--non-private: exact model averaging of the confidential data, no noise");
    const NonPrivateGram np = non_private_gram(raw, all);
    const Eigen::MatrixXd& gram = np.gram;
    const auto deficient = core::rank_deficient_columns(gram, opt.collinearity_tolerance);
    warn_rank_deficient_columns(deficient, names);
    if (!o.synthetic_out.empty() && !deficient.empty()) {
      throw std::invalid_argument(
          "--synthetic-out needs a full-rank Gram matrix (synthetic data with D'D = G, Prop. 3), but predictor '" +
          names[static_cast<std::size_t>(deficient.front().column)] + "' is " +
          (deficient.front().constant ? "constant" : "collinear with earlier predictors") + "; drop it");
    }
    const Analysis a = analyse_or_explain(gram, n, prior, mp, opt, np.scale, search, names, o.response, false);
    warn_excluded_models(a.result, false);
    const json r = result_json(a, names);
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
    std::cout << report.finish().dump(2) << "\n";
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
  check_release_magnitudes(rs, o.epsilon.value());
  const core::SspRelease release(rs);
  const core::SspMechanism& mech = release.mechanism();
  check_noise_magnitude(release, rs, n);
  const Eigen::VectorXd& scale = release.column_scale();
  if (secure && plan.mechanism == core::SspMechanismKind::wishart) {
    std::cerr << "dpmu bma: warning: the Wishart release is a floating-point Bartlett draw, not hardened against "
                 "floating-point attacks (Mironov 2012); prefer --mechanism laplace for a real release\n";
    if (rs.delta > std::min(1.0 / (n * n), 1e-5)) {
      std::cerr << "dpmu bma: warning: --delta " << rs.delta
                << " is above min(1/n^2, 1e-5) = " << std::min(1.0 / (n * n), 1e-5)
                << "; a large delta allows rare catastrophic disclosure\n";
    }
  }

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

  ReleaseLedger ledger(o.ledger, "dpmu bma", o.data, release.privacy(), secure,
                       {"released_gram", "and post-processing of it"});  // before any noise
  core::RngStream noise_rng(seed, core::fnv1a_64("bma/noise"), 0, core::StreamPurpose::noise);
  core::NoiseSource noise = secure ? core::NoiseSource::secure([&secure_rng] { return secure_rng(); })
                                   : core::NoiseSource::simulation(noise_rng);
  const core::SspOutput released = release.release(raw, noise);
  const Eigen::MatrixXd& noisy = released.released_gram;
  report.released("released_gram", lower_triangle(noisy));
  report.released("released_gram_columns", all);
  if (released.diagnostics) {
    const auto clamped = released.diagnostics->clamped_entries;
    const double fraction = static_cast<double>(clamped) / (n * static_cast<double>(p + 1));
    report.diagnostic("clamped_entries", clamped);
    report.diagnostic("clamped_fraction", fraction);
    if (fraction > 0.1) {
      std::cerr << "dpmu bma: warning (simulation mode): --bounds clamp " << clamped << " of the "
                << n_rows * static_cast<Eigen::Index>(p + 1) << " values (" << 100.0 * fraction
                << "%); widen the bounds or the analysis measures the bounds, not the data\n";
    }
  }

  double r = 0.0;
  std::string ridge_method;
  if (plan.ridge) {
    r = *plan.ridge;
    ridge_method = "user";
  } else if (mech.kind == core::SspMechanismKind::laplace) {
    core::RngStream cal(seed, core::fnv1a_64("bma/ridge"), 0, core::StreamPurpose::calibration);
    r = core::monte_carlo_regularization(mech, cal, o.ridge_draws);
    ridge_method = "monte-carlo 99th percentile of -eigmin(E), " + std::to_string(o.ridge_draws) + " draws";
  } else {
    r = core::wishart_regularization(mech);
    ridge_method = "analytic (Gaussian singular-value bound, nu = 0.01)";
  }
  const core::RegularizedGram g_r = core::regularize(noisy, r);
  json reg;
  reg["method"] = ridge_method;
  reg["requested"] = r;
  reg["non_thresholded"] = {{"regularization", g_r.regularization}, {"fallback", g_r.fallback}};
  warn_ridge_fallback(g_r, r, ridge_method, "non_thresholded");

  const Analysis a = analyse_or_explain(g_r.matrix, n, prior, mp, opt, scale, search, names, o.response, true);
  warn_excluded_models(a.result, true);
  const json nt = result_json(a, names);
  report.released("posterior_inclusion_probabilities", nt["posterior_inclusion_probabilities"]);
  report.released("posterior_means", nt["posterior_means"]);
  report.released("non_thresholded", nt);
  if (o.threshold) {
    const double thr = core::threshold_value(mech, *o.threshold, plan.threshold_reference);
    const Eigen::MatrixXd gt = core::hard_threshold(noisy, thr);
    const core::RegularizedGram gt_r = core::regularize(gt, r);
    reg["thresholded"] = {{"regularization", gt_r.regularization}, {"fallback", gt_r.fallback}};
    warn_ridge_fallback(gt_r, r, ridge_method, "thresholded");
    const Analysis b = analyse_or_explain(gt_r.matrix, n, prior, mp, opt, scale, search, names, o.response, true);
    warn_excluded_models(b.result, true);
    json t = result_json(b, names);
    t["threshold_percentile"] = *o.threshold;
    t["threshold_reference"] = o.threshold_reference;
    t["threshold_value"] = thr;
    int zeroed = 0;
    for (Eigen::Index i = 0; i < gt.rows(); ++i) {
      for (Eigen::Index j = 0; j < i; ++j) zeroed += gt(i, j) == 0.0 && noisy(i, j) != 0.0;
    }
    t["off_diagonal_entries_zeroed"] = zeroed;
    report.released("thresholded", t);
  }
  report.released("regularization", reg);

  if (o.confidence) {
    core::BmaOptions copt = opt;
    copt.keep_all_models = false;
    copt.top_models = 0;
    const auto pp = static_cast<Eigen::Index>(p);
    const auto summary = [&](const Eigen::MatrixXd& cand) {
      const core::BmaResult res = run_search(cand, n, prior, mp, copt, search, nullptr);
      Eigen::VectorXd v(2 * pp);
      v.head(pp) = res.posterior_inclusion_probability;
      v.tail(pp) = res.model_averaged_coefficients.cwiseProduct(
          Eigen::VectorXd::Constant(pp, scale(pp)).cwiseQuotient(scale.head(pp)));
      return v;
    };
    core::RngStream cs_rng(seed, core::fnv1a_64("bma/confidence"), 0, core::StreamPurpose::noise);
    const core::MechanismConfidenceSet cs =
        core::mechanism_confidence_set(noisy, mech, cs_rng, o.simulations, *o.confidence, summary, plan.norm);
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
        pips[names[static_cast<std::size_t>(j)]] = histogram_json(core::make_histogram(vp, o.bins));
        means[names[static_cast<std::size_t>(j)]] = histogram_json(core::make_histogram(vm, o.bins));
      }
    }
    c["posterior_inclusion_probabilities"] = pips;
    c["posterior_means"] = means;
    report.released("confidence_sets", c);
  }

  if (!o.synthetic_out.empty()) {
    core::RngStream rng(seed, core::fnv1a_64("bma/synthetic"), 0, core::StreamPurpose::data);
    Eigen::MatrixXd syn = core::synthetic_data(g_r.matrix, n_rows, rng);
    for (Eigen::Index j = 0; j < syn.cols(); ++j) syn.col(j) *= scale(j);
    write_csv(o.synthetic_out, syn, all);
    report.released("synthetic_out", o.synthetic_out);
  }
  ledger.verify_unchanged();
  std::cout << report.finish().dump(2) << "\n";
}

void register_bma_options(CLI::App* cmd, BmaCliOptions& o) {
  cmd->add_option("--data", o.data, "CSV file with a header row")->required()->check(CLI::ExistingFile);
  add_separator_option(cmd, o.sep);
  cmd->add_option("--response", o.response, "Response column Y")->required();
  cmd->add_option("--predictors", o.predictors,
                  "Comma-separated candidate predictors (at most 63; MCMC search beyond 24)")
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
  add_ledger_options(cmd, o.ledger);
}

/// `dpmu audit bma`: the release path up to G* (everything after it is post-processing).
AuditTarget bma_audit_target(BmaCliOptions o) {
  if (o.non_private) throw std::invalid_argument("dpmu audit bma audits a private release: drop --non-private");
  if (!o.ledger.ledger.empty()) throw std::invalid_argument("dpmu audit is not a release: drop --ledger");
  o.seed.reset();
  o.synthetic_out.clear();
  const BmaPlan plan = plan_bma(o);
  const runtime::DataTable table = read_data_file("dpmu audit bma", o.data, plan.columns, o.sep);
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
  auto release = std::make_shared<const core::SspRelease>(rs);
  t.guarantee = release->privacy();
  t.bounds = release->settings().bounds;
  t.bounds_source = "--bounds (public)";
  t.release = [release](const Eigen::MatrixXd& rows, core::NoiseSource& noise) {
    const Eigen::MatrixXd g = release->release(rows, noise).released_gram;
    Eigen::VectorXd v(g.rows() * (g.rows() + 1) / 2);
    Eigen::Index u = 0;
    for (Eigen::Index j = 0; j < g.cols(); ++j) {
      for (Eigen::Index i = j; i < g.rows(); ++i) v(u++) = g(i, j);
    }
    return v;
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
  cmd->callback([o] { run_bma(*o); });
  auto ao = std::make_shared<BmaCliOptions>();
  auto audit_options = std::make_shared<AuditCliOptions>();
  CLI::App* acmd = audit.add_subcommand(
      "bma", "Audit the release of dpmu bma (the noisy Gram matrix) on neighbouring data sets built from --bounds");
  register_bma_options(acmd, *ao);
  add_audit_options(acmd, *audit_options);
  acmd->callback([ao, audit_options] { run_audit(bma_audit_target(*ao), *audit_options); });
}

}  // namespace dpmu::cli
