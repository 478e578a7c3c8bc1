// `dpmu bma`: differentially private Bayesian model averaging and selection by sufficient-statistic
// perturbation (Peña & Barrientos 2024, §5). See docs/bma.md for every field of the JSON output.
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "dpmu/core/bma.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/gram_matrix.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/ssp.hpp"
#include "dpmu/core/synthetic_data.hpp"
#include "dpmu/runtime/data_table.hpp"

namespace dpmu::cli {

namespace {

using json = nlohmann::ordered_json;

struct BmaCliOptions {
  std::string data;
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
  std::uint64_t seed = 1;
  bool non_private = false;
  bool rescale = false;
  std::string synthetic_out;
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
  if (a.mcmc) {
    o["mcmc"] = {{"iterations", a.mcmc->iterations},
                 {"models_visited", a.mcmc->models_visited},
                 {"acceptance_rate", a.mcmc->acceptance_rate},
                 {"converged", a.mcmc->converged},
                 {"max_pip_difference_between_halves", a.mcmc->max_pip_difference}};
  }
  return o;
}

void write_csv(const std::string& path, const Eigen::MatrixXd& d, const std::vector<std::string>& header) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write --synthetic-out file '" + path + "'");
  for (std::size_t j = 0; j < header.size(); ++j) out << (j ? "," : "") << header[j];
  out << "\n" << std::setprecision(17);
  for (Eigen::Index i = 0; i < d.rows(); ++i) {
    for (Eigen::Index j = 0; j < d.cols(); ++j) out << (j ? "," : "") << d(i, j);
    out << "\n";
  }
  if (!out) throw std::runtime_error("error while writing '" + path + "'");
}

void run_bma(BmaCliOptions o) {
  constexpr const char* fn = "dpmu bma";
  o.predictors = non_empty(o.predictors);
  o.always_include = non_empty(o.always_include);
  if (o.predictors.empty()) throw std::invalid_argument("--predictors needs at least one column");
  if (o.predictors.size() > 63) throw std::invalid_argument("--predictors: at most 63 predictors");
  if (o.predictors.size() > 24) o.mcmc = true;  // enumeration keeps 2^p weights: MCMC beyond p = 24
  std::vector<std::string> all = o.predictors;
  all.push_back(o.response);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (all[i] == all[j]) throw std::invalid_argument("column '" + all[i] + "' is named twice");
    }
  }
  const std::size_t p = o.predictors.size();
  core::BmaOptions opt;
  opt.top_models = o.top_models;
  for (const auto& name : o.always_include) {
    std::size_t j = 0;
    while (j < p && o.predictors[j] != name) ++j;
    if (j == p) throw std::invalid_argument("--always-include: '" + name + "' is not one of --predictors");
    opt.always_included |= (1ULL << j);
  }
  const core::CoefficientPrior prior = core::parse_coefficient_prior(o.prior, o.g, o.a);
  const core::ModelPrior mp = core::parse_model_prior(o.model_prior);
  if (o.top_models < 0) core::throw_domain(fn, "--top-models", o.top_models, ">= 0");

  core::SspMechanism mech;
  mech.p = static_cast<int>(p);
  if (!o.non_private) {
    if (o.bounds.size() != 2)
      throw std::invalid_argument("--bounds l,u is required (two numbers) unless --non-private");
    if (!o.epsilon) throw std::invalid_argument("--epsilon is required unless --non-private");
    mech.kind = core::parse_ssp_mechanism(o.mechanism);
    mech.lower = o.bounds[0];
    mech.upper = o.bounds[1];
    mech.epsilon = *o.epsilon;
    if (mech.kind == core::SspMechanismKind::laplace && o.delta) {
      throw std::invalid_argument("--delta applies to the wishart mechanism only (laplace is epsilon-DP)");
    }
    if (mech.kind == core::SspMechanismKind::wishart) mech.delta = o.delta.value_or(0.5);  // placeholder; set below
    core::check_ssp_mechanism(mech);  // checks bounds, epsilon, (Wishart) epsilon < 1 before reading data
    if (o.delta && mech.kind == core::SspMechanismKind::wishart) {
      if (!(*o.delta > 0.0 && *o.delta <= 1.0)) core::throw_domain(fn, "--delta", *o.delta, "in (0, 1]");
    }
    if (o.threshold) core::check_open_interval(fn, "--threshold", *o.threshold, 0.0, 1.0);
    if (o.confidence) {
      core::check_open_interval(fn, "--confidence", *o.confidence, 0.0, 1.0);
      if (o.simulations < 1) core::throw_domain(fn, "--simulations", o.simulations, ">= 1");
      if (o.bins < 1) core::throw_domain(fn, "--bins", o.bins, ">= 1");
    }
    if (o.ridge_draws < 100) core::throw_domain(fn, "--ridge-draws", o.ridge_draws, ">= 100");
  } else if (o.threshold || o.confidence || o.epsilon) {
    throw std::invalid_argument("--threshold, --confidence and --epsilon need a private run (drop --non-private)");
  }
  const core::ThresholdReference threshold_reference = o.threshold_reference == "signed"
                                                           ? core::ThresholdReference::signed_quantile
                                                           : core::ThresholdReference::absolute;
  if (o.threshold_reference != "signed" && o.threshold_reference != "absolute") {
    throw std::invalid_argument("--threshold-reference must be absolute or signed");
  }
  std::optional<double> ridge_value;
  if (o.ridge != "auto") {
    std::size_t used = 0;
    double v = NAN;
    try {
      v = std::stod(o.ridge, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != o.ridge.size())
      throw std::invalid_argument("--ridge must be 'auto' or a number, not '" + o.ridge + "'");
    if (!(std::isfinite(v) && v >= 0.0)) core::throw_domain(fn, "--ridge", v, "finite and >= 0");
    ridge_value = v;
  }
  const core::MatrixNorm norm = core::parse_matrix_norm(o.norm);

  // ---- data: centre (and optionally rescale), clamp into the bounds, accumulate G = D'D ----
  const runtime::DataTable table = runtime::read_csv(o.data, all);
  const auto n_rows = static_cast<Eigen::Index>(table.rows());
  const double n = static_cast<double>(n_rows);
  if (n <= static_cast<double>(p) + 1.0) {
    throw std::invalid_argument("need more rows than predictors + 1 (n = " + std::to_string(n_rows) + ")");
  }
  Eigen::MatrixXd d = table.matrix(all);
  const Eigen::RowVectorXd means = d.colwise().mean();
  d.rowwise() -= means;
  Eigen::VectorXd scale = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(p + 1));
  if (o.rescale) {
    for (Eigen::Index j = 0; j <= static_cast<Eigen::Index>(p); ++j) {
      const double m = d.col(j).cwiseAbs().maxCoeff();
      scale(j) = m > 0.0 ? 2.0 * m : 1.0;
      d.col(j) /= scale(j);
    }
  }
  if (o.non_private) {
    mech.lower = -std::numeric_limits<double>::max();
    mech.upper = std::numeric_limits<double>::max();
  }
  if (!o.non_private && mech.kind == core::SspMechanismKind::wishart && !o.delta) mech.delta = 1.0 / n;
  core::GramAccumulator acc(static_cast<int>(p + 1), mech.lower, mech.upper, false);
  constexpr Eigen::Index kBlock = 4096;
  for (Eigen::Index s = 0; s < n_rows; s += kBlock) acc.add(d.middleRows(s, std::min(kBlock, n_rows - s)));
  const Eigen::MatrixXd gram = acc.gram_matrix();

  Search search;
  search.mcmc = o.mcmc;
  search.tolerance = o.mcmc_tolerance;
  search.seed = o.seed;
  if (o.mcmc) core::check_positive_finite(fn, "--mcmc-tolerance", o.mcmc_tolerance);
  json out;
  json settings;
  settings["data"] = o.data;
  settings["response"] = o.response;
  settings["predictors"] = o.predictors;
  settings["always_include"] = o.always_include;
  settings["private"] = !o.non_private;
  settings["n"] = n_rows;
  settings["p"] = p;
  settings["prior"] = core::to_string(prior);
  if (prior.prior.kind == core::PriorKind::g_prior) settings["g"] = prior.prior.g.value_or(n);
  if (prior.prior.kind == core::PriorKind::hyper_g || prior.prior.kind == core::PriorKind::hyper_g_n) {
    settings["a"] = prior.prior.a;
  }
  settings["model_prior"] = core::to_string(mp);
  settings["centring"] = "sample means (intercept always included)";
  settings["rescale"] = o.rescale;
  settings["column_scale"] = keyed(scale, all);
  settings["seed"] = o.seed;
  settings["top_models"] = o.top_models;
  settings["search"] = o.mcmc ? "mcmc" : "enumeration";
  out["settings"] = settings;
  std::vector<std::string> names = o.predictors;

  if (o.non_private) {
    const Analysis a = analyse(gram, n, prior, mp, opt, scale, search);
    out["non_private"] = result_json(a, names);
    out["posterior_inclusion_probabilities"] = out["non_private"]["posterior_inclusion_probabilities"];
    out["posterior_means"] = out["non_private"]["posterior_means"];
    if (!o.synthetic_out.empty()) {
      core::RngStream rng(o.seed, core::fnv1a_64("bma/synthetic"), 0, core::StreamPurpose::data);
      Eigen::MatrixXd syn = core::synthetic_data(gram, n_rows, rng);
      for (Eigen::Index j = 0; j < syn.cols(); ++j) syn.col(j) *= scale(j);
      write_csv(o.synthetic_out, syn, all);
      out["synthetic_out"] = o.synthetic_out;
    }
    std::cout << out.dump(2) << "\n";
    return;
  }

  // ---- privacy ----
  json priv;
  priv["mechanism"] = core::to_string(mech.kind);
  priv["epsilon"] = mech.epsilon;
  if (mech.kind == core::SspMechanismKind::wishart) {
    priv["delta"] = mech.delta;
    priv["delta_default_one_over_n"] = !o.delta.has_value();
    const auto w = core::ssp_wishart_parameters(mech);
    priv["wishart_degrees_of_freedom"] = w.degrees_of_freedom;
    priv["wishart_scale"] = w.scale;
  } else {
    priv["delta"] = 0.0;
    priv["l1_sensitivity"] = core::l1_sensitivity(mech.p, mech.lower, mech.upper);
    priv["laplace_scale"] = core::ssp_laplace_scale(mech);
  }
  priv["bounds"] = {mech.lower, mech.upper};
  priv["bounds_refer_to"] = o.rescale ? "centred and rescaled data (each column / (2 max |centred value|))"
                                      : "centred data (column minus its sample mean)";
  priv["clamped_entries"] = acc.clamped_entries();
  out["privacy"] = priv;

  core::RngStream noise_rng(o.seed, core::fnv1a_64("bma/noise"), 0, core::StreamPurpose::noise);
  const Eigen::MatrixXd noisy = core::noisy_gram_matrix(gram, mech, noise_rng);
  double r = 0.0;
  std::string ridge_method;
  if (ridge_value) {
    r = *ridge_value;
    ridge_method = "user";
  } else if (mech.kind == core::SspMechanismKind::laplace) {
    core::RngStream cal(o.seed, core::fnv1a_64("bma/ridge"), 0, core::StreamPurpose::calibration);
    r = core::monte_carlo_regularization(mech, cal, o.ridge_draws, 0.99);
    ridge_method = "monte-carlo 99th percentile of -eigmin(E), " + std::to_string(o.ridge_draws) + " draws";
  } else {
    r = core::wishart_regularization(mech, 0.01);
    ridge_method = "analytic (Gaussian singular-value bound, nu = 0.01)";
  }
  const core::RegularizedGram g_r = core::regularize(noisy, r);
  json reg;
  reg["method"] = ridge_method;
  reg["requested"] = r;
  reg["non_thresholded"] = {{"regularization", g_r.regularization}, {"fallback", g_r.fallback}};

  const Analysis a = analyse(g_r.matrix, n, prior, mp, opt, scale, search);
  out["non_thresholded"] = result_json(a, names);
  out["posterior_inclusion_probabilities"] = out["non_thresholded"]["posterior_inclusion_probabilities"];
  out["posterior_means"] = out["non_thresholded"]["posterior_means"];
  if (o.threshold) {
    const double thr = core::threshold_value(mech, *o.threshold, threshold_reference);
    const Eigen::MatrixXd gt = core::hard_threshold(noisy, thr);
    const core::RegularizedGram gt_r = core::regularize(gt, r);
    reg["thresholded"] = {{"regularization", gt_r.regularization}, {"fallback", gt_r.fallback}};
    const Analysis b = analyse(gt_r.matrix, n, prior, mp, opt, scale, search);
    json t = result_json(b, names);
    t["threshold_percentile"] = *o.threshold;
    t["threshold_reference"] = o.threshold_reference;
    t["threshold_value"] = thr;
    int zeroed = 0;
    for (Eigen::Index i = 0; i < gt.rows(); ++i) {
      for (Eigen::Index j = 0; j < i; ++j) zeroed += gt(i, j) == 0.0 && noisy(i, j) != 0.0;
    }
    t["off_diagonal_entries_zeroed"] = zeroed;
    out["thresholded"] = t;
  }
  out["regularization"] = reg;

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
    core::RngStream cs_rng(o.seed, core::fnv1a_64("bma/confidence"), 0, core::StreamPurpose::noise);
    const core::MechanismConfidenceSet cs =
        core::mechanism_confidence_set(noisy, mech, cs_rng, o.simulations, *o.confidence, summary, norm);
    json c;
    c["confidence"] = cs.confidence;
    c["norm"] = core::to_string(norm);
    c["simulations"] = cs.simulations;
    c["norm_quantile"] = cs.norm_quantile;
    c["accepted"] = cs.accepted;
    c["positive_definite"] = cs.positive_definite;
    c["bins"] = o.bins;
    if (!cs.summaries.empty()) {
      json pips = json::object();
      json means = json::object();
      for (Eigen::Index j = 0; j < pp; ++j) {
        std::vector<double> vp, vm;
        for (const auto& s : cs.summaries) {
          vp.push_back(s(j));
          vm.push_back(s(pp + j));
        }
        pips[names[static_cast<std::size_t>(j)]] = histogram_json(core::make_histogram(vp, o.bins));
        means[names[static_cast<std::size_t>(j)]] = histogram_json(core::make_histogram(vm, o.bins));
      }
      c["posterior_inclusion_probabilities"] = pips;
      c["posterior_means"] = means;
    }
    out["confidence_sets"] = c;
  }

  if (!o.synthetic_out.empty()) {
    core::RngStream rng(o.seed, core::fnv1a_64("bma/synthetic"), 0, core::StreamPurpose::data);
    Eigen::MatrixXd syn = core::synthetic_data(g_r.matrix, n_rows, rng);
    for (Eigen::Index j = 0; j < syn.cols(); ++j) syn.col(j) *= scale(j);
    write_csv(o.synthetic_out, syn, all);
    out["synthetic_out"] = o.synthetic_out;
  }
  std::cout << out.dump(2) << "\n";
}

}  // namespace

void add_bma_command(CLI::App& app) {
  auto o = std::make_shared<BmaCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bma",
      "Differentially private Bayesian model averaging and selection by perturbing the Gram matrix of the "
      "centred data (Pena & Barrientos 2024, Sec. 5). Prints JSON.");
  cmd->add_option("--data", o->data, "CSV file with a header row")->required()->check(CLI::ExistingFile);
  cmd->add_option("--response", o->response, "Response column Y")->required();
  cmd->add_option("--predictors", o->predictors, "Comma-separated candidate predictors")->required()->delimiter(',');
  cmd->add_option("--always-include", o->always_include, "Predictors forced into every model")->delimiter(',');
  cmd->add_option("--bounds", o->bounds, "l,u: bounds (l < 0 < u) on every entry of the centred data matrix")
      ->delimiter(',');
  cmd->add_option("--epsilon", o->epsilon, "Privacy parameter epsilon > 0 (wishart: < 1)");
  cmd->add_option("--delta", o->delta, "Privacy parameter delta in (0, 1] (wishart only; default 1/n)");
  cmd->add_option("--mechanism", o->mechanism, "laplace | wishart")->capture_default_str();
  cmd->add_option("--threshold", o->threshold, "Also report the hard-thresholded analysis at this percentile in (0,1)");
  cmd->add_option("--threshold-reference", o->threshold_reference,
                  "absolute (percentile of |E_ij|) | signed (percentile of E_ij)")
      ->capture_default_str();
  cmd->add_option("--ridge", o->ridge, "auto | VALUE: ridge r added to the diagonal of G*")->capture_default_str();
  cmd->add_option("--ridge-draws", o->ridge_draws, "Monte Carlo draws for the Laplace ridge")->capture_default_str();
  cmd->add_option("--prior", o->prior,
                  "zellner-siow | zellner-siow-laplace | g-prior | hyper-g | hyper-g-n | robust | bic | aic | lr")
      ->capture_default_str();
  cmd->add_option("--g", o->g, "Fixed g of the g-prior (default: n)");
  cmd->add_option("--a", o->a, "Parameter a > 2 of hyper-g and hyper-g-n")->capture_default_str();
  cmd->add_option("--model-prior", o->model_prior, "beta-binomial:A,B | uniform | bernoulli:W")->capture_default_str();
  cmd->add_option("--confidence", o->confidence, "Confidence level of the mechanism confidence sets (Sec. 5.1)");
  cmd->add_option("--simulations", o->simulations, "Noise draws for the confidence sets")->capture_default_str();
  cmd->add_option("--bins", o->bins, "Histogram bins")->capture_default_str();
  cmd->add_option("--norm", o->norm, "frobenius | spectral | max-abs")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Master seed of the noise streams")->capture_default_str();
  cmd->add_flag("--non-private", o->non_private, "Exact (confidential) model averaging, no noise");
  cmd->add_flag("--rescale", o->rescale,
                "Divide each centred column by 2 max|value| (into [-0.5, 0.5]; data-dependent, not private)");
  cmd->add_option("--synthetic-out", o->synthetic_out, "Write synthetic data with D'D = G*+rI (Prop. 3) to this CSV");
  cmd->add_option("--top-models", o->top_models, "Number of most probable models to list")->capture_default_str();
  cmd->add_flag("--mcmc", o->mcmc, "Sample models by MCMC instead of enumerating them (automatic for p > 24)");
  cmd->add_option("--mcmc-tolerance", o->mcmc_tolerance, "MCMC stopping rule: max PIP difference between halves")
      ->capture_default_str();
  cmd->callback([o] { run_bma(*o); });
}

}  // namespace dpmu::cli
