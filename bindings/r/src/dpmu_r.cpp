// The R package's native routines: the release API (engine/api: api::bma, api::test, the ledger)
// called through .Call, with the results converted into R lists. Errors become R
// errors carrying dpmu's message (Rcpp's BEGIN_RCPP / END_RCPP).
#include <R_ext/Rdynload.h>
#include <Rcpp.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dpmu/api/adassp.hpp"
#include "dpmu/api/audit.hpp"
#include "dpmu/api/bma.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/api/plan_test.hpp"
#include "dpmu/api/select.hpp"
#include "dpmu/api/test.hpp"
#include "dpmu_bindings.hpp"

namespace {

using dpmu::bindings::Json;

/// JSON → R: objects become named lists; arrays of numbers, strings or booleans become atomic
/// vectors (an empty array becomes list()); other arrays lists; null NULL.
SEXP to_r(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return R_NilValue;
    case Json::value_t::boolean:
      return Rcpp::wrap(j.get<bool>());
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return Rcpp::wrap(j.get<double>());
    case Json::value_t::string:
      return Rcpp::wrap(j.get<std::string>());
    case Json::value_t::array: {
      bool numbers = !j.empty(), strings = !j.empty(), bools = !j.empty();
      for (const auto& e : j) {
        numbers = numbers && e.is_number();
        strings = strings && e.is_string();
        bools = bools && e.is_boolean();
      }
      if (numbers) {
        Rcpp::NumericVector v(j.size());
        for (std::size_t i = 0; i < j.size(); ++i) v[i] = j[i].get<double>();
        return v;
      }
      if (strings) return Rcpp::wrap(j.get<std::vector<std::string>>());
      if (bools) return Rcpp::wrap(j.get<std::vector<bool>>());
      Rcpp::List l(j.size());
      for (std::size_t i = 0; i < j.size(); ++i) l[i] = to_r(j[i]);
      return l;
    }
    case Json::value_t::object: {
      Rcpp::List l(j.size());
      Rcpp::CharacterVector names(j.size());
      std::size_t i = 0;
      for (const auto& [k, v] : j.items()) {
        names[i] = k;
        l[i++] = to_r(v);
      }
      l.attr("names") = names;
      return l;
    }
    default:
      return R_NilValue;
  }
}

/// Field `name` of an options list, or NULL when it is absent.
SEXP field(const Rcpp::List& o, const char* name) {
  const SEXP names = o.attr("names");
  if (Rf_isNull(names)) return R_NilValue;
  for (R_xlen_t i = 0; i < Rf_xlength(names); ++i) {
    if (std::string(CHAR(STRING_ELT(names, i))) == name) return o[i];
  }
  return R_NilValue;
}

/// A string option ("" when NULL).
std::string opt_string(SEXP s) { return Rf_isNull(s) ? std::string() : Rcpp::as<std::string>(s); }

/// The ledger options of a call: ledger (path or NULL), budget ("EPS[,DELTA]" or NULL), data_label.
dpmu::api::LedgerOptions ledger_options(const Rcpp::List& o) {
  dpmu::api::LedgerOptions l;
  l.path = opt_string(field(o, "ledger"));
  l.budget = opt_string(field(o, "budget"));
  l.data_label = opt_string(field(o, "data_label"));
  return l;
}

std::optional<double> opt_double(SEXP s) {
  if (Rf_isNull(s)) return std::nullopt;
  return Rcpp::as<double>(s);
}

/// A seed from R: a whole number in [0, 2^53] (R has no 64-bit integers), or NULL.
std::optional<std::uint64_t> opt_seed(SEXP s) {
  if (Rf_isNull(s)) return std::nullopt;
  const double v = Rcpp::as<double>(s);
  if (!(v >= 0.0 && v <= 9007199254740992.0 && v == static_cast<double>(static_cast<std::uint64_t>(v)))) {
    throw std::invalid_argument("seed must be a whole number between 0 and 2^53 (or NULL for a real release)");
  }
  return static_cast<std::uint64_t>(v);
}

/// The progress callback of a long computation: Ctrl-C (or setTimeLimit) stops it.
/// Rcpp::checkUserInterrupt() at most every 0.1 s (the search reports every few milliseconds); on an
/// interrupt it throws Rcpp::internal::InterruptedException, which unwinds the C++ call and END_RCPP
/// turns into R's interrupt condition. The release API calls no callback between a release's noise
/// draw and its charge (docs/privacy.md "Charge first, then speak"), so an interrupt comes either
/// before the noise (nothing spent) or after the charge: then the release is charged and not
/// delivered, and the console says so.
dpmu::core::ProgressCallback interrupt_check() {
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  const std::uint64_t charges_before = dpmu::api::charges_on_this_thread().count;
  return [last, charges_before](const dpmu::core::Progress&) {
    const auto now = std::chrono::steady_clock::now();
    if (now - *last < std::chrono::milliseconds(100)) return;
    *last = now;
    try {
      Rcpp::checkUserInterrupt();
    } catch (...) {
      const auto& charges = dpmu::api::charges_on_this_thread();
      if (charges.count != charges_before) {
        REprintf(
            "dpmu: interrupted after the release was charged to ledger %s: charged, not delivered (its noise "
            "was drawn, so the spend stands)\n",
            charges.last_ledger.c_str());
      }
      throw;
    }
  };
}

/// A count option (mcmc_max_iterations, mcmc_max_models): a whole number in [lowest, 2^53], NULL: `fallback`.
std::uint64_t opt_count(SEXP s, const char* name, std::uint64_t fallback, double lowest) {
  if (Rf_isNull(s)) return fallback;
  const double v = Rf_length(s) == 1 && (Rf_isReal(s) || Rf_isInteger(s)) ? Rf_asReal(s) : NAN;
  if (!(v >= lowest && v <= 9007199254740992.0 && v == std::floor(v))) {
    throw std::invalid_argument(std::string(name) + " must be a whole number >= " +
                                std::to_string(static_cast<int>(lowest)) + " (or NULL for the default)");
  }
  return static_cast<std::uint64_t>(v);
}

std::vector<std::string> strings(SEXP s) {
  if (Rf_isNull(s)) return {};
  return Rcpp::as<std::vector<std::string>>(s);
}

std::vector<double> doubles(SEXP s) {
  if (Rf_isNull(s)) return {};
  return Rcpp::as<std::vector<double>>(s);
}

Eigen::Map<const Eigen::MatrixXd> matrix(SEXP s) {
  if (!Rf_isReal(s) || !Rf_isMatrix(s)) throw std::invalid_argument("internal: expected a numeric matrix");
  return {REAL(s), Rf_nrows(s), Rf_ncols(s)};
}

Eigen::Map<const Eigen::VectorXd> vector(SEXP s) {
  if (!Rf_isReal(s)) throw std::invalid_argument("internal: expected a numeric vector");
  return {REAL(s), Rf_xlength(s)};
}

}  // namespace

namespace {

Rcpp::NumericVector named(const Eigen::VectorXd& v, const std::vector<std::string>& names) {
  Rcpp::NumericVector out(v.data(), v.data() + v.size());
  if (static_cast<std::size_t>(v.size()) == names.size()) out.attr("names") = Rcpp::wrap(names);
  return out;
}

SEXP opt_number(const std::optional<double>& v) { return v ? Rcpp::wrap(*v) : R_NilValue; }

/// api::BmaSummary → list (one entry per field; vectors named by predictor).
Rcpp::List summary_list(const dpmu::api::BmaSummary& s, const std::vector<std::string>& names) {
  const std::size_t k = s.models.size();
  Rcpp::List model_predictors(k);
  Rcpp::NumericVector prob(k), log_prob(k), log_prior(k), log_marginal(k), r2(k), shrinkage(k);
  for (std::size_t i = 0; i < k; ++i) {
    const auto& m = s.models[i];
    model_predictors[i] = Rcpp::wrap(m.predictors);
    prob[i] = m.posterior_probability;
    log_prob[i] = m.log_posterior_probability;
    log_prior[i] = m.log_prior_probability;
    log_marginal[i] = m.log_marginal;
    r2[i] = m.r_squared;
    shrinkage[i] = m.shrinkage;
  }
  Rcpp::List models = Rcpp::List::create(
      Rcpp::Named("predictors") = model_predictors, Rcpp::Named("posterior_probability") = prob,
      Rcpp::Named("log_posterior_probability") = log_prob, Rcpp::Named("log_prior_probability") = log_prior,
      Rcpp::Named("log_marginal") = log_marginal, Rcpp::Named("r_squared") = r2, Rcpp::Named("shrinkage") = shrinkage);
  SEXP mcmc = R_NilValue;
  if (s.mcmc) {
    mcmc = Rcpp::List::create(Rcpp::Named("iterations") = static_cast<double>(s.mcmc->iterations),
                              Rcpp::Named("max_iterations") = static_cast<double>(s.mcmc->max_iterations),
                              Rcpp::Named("models_visited") = static_cast<double>(s.mcmc->models_visited),
                              Rcpp::Named("evaluations_unstored") = static_cast<double>(s.mcmc->evaluations_unstored),
                              Rcpp::Named("acceptance_rate") = s.mcmc->acceptance_rate,
                              Rcpp::Named("converged") = s.mcmc->converged,
                              Rcpp::Named("max_pip_difference_between_halves") = s.mcmc->max_pip_difference);
  }
  Rcpp::List out;
  out["pip"] = named(s.posterior_inclusion_probability, names);
  out["prior_inclusion"] = named(s.prior_inclusion_probability, names);
  out["mean"] = named(s.posterior_mean, names);
  out["sd"] = named(s.posterior_sd, names);
  out["sd_bas"] = named(s.posterior_sd_bas, names);
  out["intercept"] = opt_number(s.intercept);
  out["intercept_sd"] = s.intercept_sd;
  out["intercept_sd_bas"] = s.intercept_sd_bas;
  out["credible_level"] = s.credible_level;
  out["uncertainty"] = s.uncertainty;
  if (s.noise_aware) {
    const auto& na = *s.noise_aware;
    out["noise_aware"] = Rcpp::List::create(
        Rcpp::Named("sampler") = na.sampler, Rcpp::Named("chains") = na.chains,
        Rcpp::Named("warmup_per_chain") = na.warmup, Rcpp::Named("draws_per_chain") = na.draws_per_chain,
        Rcpp::Named("max_draws_per_chain") = na.max_draws_per_chain, Rcpp::Named("max_rhat") = na.max_rhat,
        Rcpp::Named("min_ess") = na.min_ess, Rcpp::Named("converged") = na.converged,
        Rcpp::Named("not_converged_because") = na.reason, Rcpp::Named("pip_mc_se") = named(na.pip_mc_se, names),
        Rcpp::Named("mean_mc_se") = named(na.mean_mc_se, names), Rcpp::Named("error_variance") = na.sigma2,
        Rcpp::Named("error_variance_mc_se") = na.sigma2_mc_se);
  }
  out["lower"] = named(s.lower, names);
  out["upper"] = named(s.upper, names);
  out["intercept_lower"] = opt_number(s.intercept_lower);
  out["intercept_upper"] = opt_number(s.intercept_upper);
  out["interval_omitted_mass"] = s.interval_omitted_mass;
  out["highest_posterior_model"] = Rcpp::wrap(s.highest_posterior_model);
  out["median_probability_model"] = Rcpp::wrap(s.median_probability_model);
  out["best_predictive_model"] = Rcpp::wrap(s.best_predictive_model);
  out["highest_posterior_model_coefficients"] = named(s.highest_posterior_model_coefficients, names);
  out["median_probability_model_coefficients"] = named(s.median_probability_model_coefficients, names);
  out["best_predictive_model_coefficients"] = named(s.best_predictive_model_coefficients, names);
  out["expected_model_size"] = s.expected_model_size;
  out["models"] = models;
  out["models_evaluated"] = static_cast<double>(s.models_evaluated);
  out["models_rank_deficient"] = static_cast<double>(s.models_rank_deficient);
  out["models_exact_fit"] = static_cast<double>(s.models_exact_fit);
  out["mcmc"] = mcmc;
  return out;
}

/// api::BmaRelease → list: the released matrix with its column names, the ridge, and the clamp
/// count (a diagnostic, present only for a seeded run).
Rcpp::List release_list(const dpmu::api::BmaRelease& r, const std::vector<std::string>& columns) {
  Rcpp::NumericMatrix g(r.released_gram.rows(), r.released_gram.cols(), r.released_gram.data());
  g.attr("dimnames") = Rcpp::List::create(Rcpp::wrap(columns), Rcpp::wrap(columns));
  Rcpp::List out;
  out["released_gram"] = g;
  out["column_scale"] = named(r.column_scale, columns);
  out["ridge_requested"] = r.ridge_requested;
  out["ridge_method"] = r.ridge_method;
  out["regularization"] = r.regularized.regularization;
  out["regularization_fallback"] = r.regularized.fallback;
  if (r.clamped_entries) out["clamped_entries"] = static_cast<double>(*r.clamped_entries);
  return out;
}

}  // namespace

extern "C" SEXP dpmu_bma_c(SEXP x, SEXP y, SEXP predictors, SEXP response, SEXP options) {
  BEGIN_RCPP
  const Rcpp::List o(options);
  dpmu::api::BmaSettings q;
  q.prior = Rcpp::as<std::string>(o["prior"]);
  q.g = opt_double(o["g"]);
  q.a = Rcpp::as<double>(o["a"]);
  q.model_prior = Rcpp::as<std::string>(o["model_prior"]);
  q.always_include = strings(o["always_include"]);
  if (!Rf_isNull(field(o, "heredity_groups"))) {
    const Rcpp::List groups(field(o, "heredity_groups"));
    for (R_xlen_t i = 0; i < groups.size(); ++i) q.heredity_groups.push_back(strings(groups[i]));
  }
  if (!Rf_isNull(field(o, "heredity_parents"))) {
    const Rcpp::List rules(field(o, "heredity_parents"));
    for (R_xlen_t i = 0; i < rules.size(); ++i) {
      const Rcpp::List rule(rules[i]);
      q.heredity_parents.emplace_back(strings(rule["term"]), strings(rule["parents"]));
    }
  }
  q.top_models = Rcpp::as<int>(o["top_models"]);
  q.mcmc = Rcpp::as<bool>(o["mcmc"]);
  q.credible_level = Rcpp::as<double>(o["credible_level"]);
  q.seed = opt_seed(o["seed"]);
  q.ledger = ledger_options(o);
  q.command = "R dpmu::bma";
  if (!Rf_isNull(field(o, "uncertainty"))) q.uncertainty = Rcpp::as<std::string>(field(o, "uncertainty"));
  q.noise_aware_draws =
      static_cast<std::int64_t>(opt_count(field(o, "noise_aware_draws"), "noise_aware_draws", 1000, 20));
  q.mcmc_max_iterations = opt_count(field(o, "mcmc_max_iterations"), "mcmc_max_iterations", 0, 1.0);
  q.mcmc_max_models = opt_count(field(o, "mcmc_max_models"), "mcmc_max_models", dpmu::core::kDefaultMcmcMaxModels, 1.0);
  q.progress = interrupt_check();
  if (!Rf_isNull(o["epsilon"])) {
    dpmu::api::PrivacySettings ps;
    ps.epsilon = Rcpp::as<double>(o["epsilon"]);
    ps.delta = opt_double(o["delta"]);
    ps.mechanism = Rcpp::as<std::string>(o["mechanism"]);
    if (Rf_isNull(o["bounds"])) {
      throw std::invalid_argument(
          "a private run (epsilon given) needs public bounds on the raw values: bounds = c(l, u)");
    }
    ps.bounds = dpmu::bindings::bounds_from_pairs(doubles(o["bounds"]));
    ps.rescale = Rcpp::as<bool>(o["rescale"]);
    q.privacy = ps;
  } else if (!Rf_isNull(o["delta"]) || !Rf_isNull(o["bounds"]) || Rcpp::as<bool>(o["rescale"])) {
    throw std::invalid_argument("delta, bounds and rescale need a private run: give epsilon");
  }
  const std::vector<std::string> names = strings(predictors);
  const std::string resp = Rcpp::as<std::string>(response);
  auto* fit = new dpmu::api::BmaFit(dpmu::api::bma(matrix(x), vector(y), names, resp, q));
  Rcpp::XPtr<dpmu::api::BmaFit> pointer(fit, true);
  std::vector<std::string> columns = names;
  columns.push_back(resp);
  Rcpp::List out;
  out["pointer"] = pointer;
  out["report"] = to_r(dpmu::api::privacy_json(*fit));
  out["ledger"] = to_r(dpmu::bindings::ledger_json(fit->ledger));
  out["n"] = static_cast<double>(fit->n);
  out["prior"] = fit->prior;
  out["model_prior"] = fit->model_prior;
  out["search"] = fit->search;
  out["seed"] = std::to_string(fit->seed);
  out["messages"] = Rcpp::wrap(fit->messages);
  out["posterior"] = summary_list(fit->posterior, names);
  out["thresholded"] = fit->thresholded ? SEXP(summary_list(*fit->thresholded, names)) : R_NilValue;
  out["release"] = fit->release ? SEXP(release_list(*fit->release, columns)) : R_NilValue;
  return out;
  END_RCPP
}

/// Predictions of a fit at the rows of newx (columns as the fit's predictors).
extern "C" SEXP dpmu_predict_c(SEXP pointer, SEXP newx, SEXP estimator) {
  BEGIN_RCPP
  auto* fit = static_cast<dpmu::api::BmaFit*>(R_ExternalPtrAddr(pointer));
  if (fit == nullptr) {
    throw std::invalid_argument(
        "this dpmu_bma object was saved and reloaded, and its fit is gone: run dpmu::bma again to predict");
  }
  const Eigen::VectorXd v =
      dpmu::api::predict(*fit, matrix(newx), dpmu::api::parse_estimator(Rcpp::as<std::string>(estimator)));
  return Rcpp::NumericVector(v.data(), v.data() + v.size());
  END_RCPP
}

/// The fit behind an external pointer, or an error saying it is gone (a saved and reloaded object).
static dpmu::api::BmaFit& fit_of(SEXP pointer, const char* what) {
  auto* fit = TYPEOF(pointer) == EXTPTRSXP ? static_cast<dpmu::api::BmaFit*>(R_ExternalPtrAddr(pointer)) : nullptr;
  if (fit == nullptr) {
    throw std::invalid_argument(std::string("this dpmu_bma object was saved and reloaded (or copied from another R "
                                            "session), and its C++ fit is gone: run dpmu::bma again to ") +
                                what);
  }
  return *fit;
}

/// Re-analysis of a fit (api::reanalyse: post-processing, no noise, no ledger charge). `options`:
/// prior, g, a, model_prior, always_include, top_models, credible_level, mcmc, uncertainty,
/// noise_aware_draws; a NULL (or absent)
/// entry keeps the fit's setting, except g (NULL: n for the g-prior) when prior is given.
extern "C" SEXP dpmu_reanalyse_c(SEXP pointer, SEXP options) {
  BEGIN_RCPP
  const dpmu::api::BmaFit& fit = fit_of(pointer, "re-analyse it");
  const Rcpp::List o(options);
  dpmu::api::BmaSettings q = fit.analysis;
  if (!Rf_isNull(field(o, "prior"))) {
    q.prior = Rcpp::as<std::string>(field(o, "prior"));
    q.g = opt_double(field(o, "g"));
  } else if (!Rf_isNull(field(o, "g"))) {
    q.g = opt_double(field(o, "g"));
  }
  if (!Rf_isNull(field(o, "a"))) q.a = Rcpp::as<double>(field(o, "a"));
  if (!Rf_isNull(field(o, "model_prior"))) q.model_prior = Rcpp::as<std::string>(field(o, "model_prior"));
  if (!Rf_isNull(field(o, "always_include"))) q.always_include = strings(field(o, "always_include"));
  if (!Rf_isNull(field(o, "top_models"))) q.top_models = Rcpp::as<int>(field(o, "top_models"));
  if (!Rf_isNull(field(o, "credible_level"))) q.credible_level = Rcpp::as<double>(field(o, "credible_level"));
  if (!Rf_isNull(field(o, "mcmc"))) q.mcmc = Rcpp::as<bool>(field(o, "mcmc"));
  if (!Rf_isNull(field(o, "uncertainty"))) q.uncertainty = Rcpp::as<std::string>(field(o, "uncertainty"));
  if (!Rf_isNull(field(o, "noise_aware_draws"))) {
    q.noise_aware_draws =
        static_cast<std::int64_t>(opt_count(field(o, "noise_aware_draws"), "noise_aware_draws", 1000, 20));
  }
  q.progress = interrupt_check();
  auto* out_fit = new dpmu::api::BmaFit(dpmu::api::reanalyse(fit, q));
  Rcpp::XPtr<dpmu::api::BmaFit> out_pointer(out_fit, true);
  Rcpp::List out;
  out["pointer"] = out_pointer;
  out["prior"] = out_fit->prior;
  out["model_prior"] = out_fit->model_prior;
  out["search"] = out_fit->search;
  out["seed"] = std::to_string(out_fit->seed);
  out["messages"] = Rcpp::wrap(out_fit->messages);
  out["posterior"] = summary_list(out_fit->posterior, out_fit->predictors);
  out["thresholded"] =
      out_fit->thresholded ? SEXP(summary_list(*out_fit->thresholded, out_fit->predictors)) : R_NilValue;
  return out;
  END_RCPP
}

/// Predictions with standard errors and an interval (api::predict_with_se; non-private fits).
/// `top`: 0 for every model (BAS's predict(top = NULL)), else the top most probable.
extern "C" SEXP dpmu_predict_se_c(SEXP pointer, SEXP newx, SEXP estimator, SEXP level, SEXP prediction, SEXP top) {
  BEGIN_RCPP
  const dpmu::api::BmaFit& fit = fit_of(pointer, "predict");
  const auto r = dpmu::api::predict_with_se(
      fit, matrix(newx), dpmu::api::parse_estimator(Rcpp::as<std::string>(estimator)), Rcpp::as<double>(level),
      Rcpp::as<bool>(prediction), static_cast<std::size_t>(Rcpp::as<double>(top)));
  const auto vec = [](const Eigen::VectorXd& v) { return Rcpp::NumericVector(v.data(), v.data() + v.size()); };
  const auto mat = [](const Eigen::MatrixXd& m) { return Rcpp::NumericMatrix(m.rows(), m.cols(), m.data()); };
  Rcpp::List out;
  out["fit"] = vec(r.fit);
  out["se_fit"] = vec(r.se_fit);
  out["se_pred"] = vec(r.se_pred);
  out["lower"] = r.level > 0.0 ? SEXP(vec(r.lower)) : R_NilValue;
  out["upper"] = r.level > 0.0 ? SEXP(vec(r.upper)) : R_NilValue;
  out["df"] = r.df;
  out["models"] = static_cast<double>(r.models);
  out["omitted_mass"] = r.omitted_mass;
  out["model_fit"] = mat(r.model_fit);
  out["model_se_fit"] = mat(r.model_se_fit);
  out["model_se_pred"] = mat(r.model_se_pred);
  out["model_probability"] = vec(r.model_probability);
  out["model_df"] = vec(r.model_df);
  out["model_predictors"] = Rcpp::wrap(r.model_predictors);
  return out;
  END_RCPP
}

/// Posterior density of coefficient `coefficient` (0-based; -1 the intercept) on `grid`.
extern "C" SEXP dpmu_coef_density_c(SEXP pointer, SEXP coefficient, SEXP grid) {
  BEGIN_RCPP
  const dpmu::api::BmaFit& fit = fit_of(pointer, "draw the coefficients' densities");
  const auto r = dpmu::api::coefficient_density(fit, Rcpp::as<int>(coefficient), vector(grid));
  Rcpp::List out;
  out["density"] = Rcpp::NumericVector(r.density.data(), r.density.data() + r.density.size());
  out["probability_zero"] = r.probability_zero;
  out["models"] = static_cast<double>(r.models);
  out["omitted_mass"] = r.omitted_mass;
  out["range"] = Rcpp::NumericVector::create(r.range_lower, r.range_upper);
  return out;
  END_RCPP
}

extern "C" SEXP dpmu_test_c(SEXP common, SEXP tested, SEXP y, SEXP common_names, SEXP tested_names, SEXP response,
                            SEXP options) {
  BEGIN_RCPP
  const Rcpp::List o(options);
  dpmu::api::TestRequest q;
  q.prior = Rcpp::as<std::string>(o["prior"]);
  q.g = opt_double(o["g"]);
  q.a = Rcpp::as<double>(o["a"]);
  q.prior_h0 = Rcpp::as<double>(o["prior_h0"]);
  q.epsilon = opt_double(o["epsilon"]);
  q.delta = Rcpp::as<double>(o["delta"]);
  if (!Rf_isNull(o["groups"])) {
    const double m = Rcpp::as<double>(o["groups"]);
    if (!(m >= 1.0 && m == static_cast<double>(static_cast<std::size_t>(m)))) {
      throw std::invalid_argument("groups must be a whole number >= 1");
    }
    q.groups = static_cast<std::size_t>(m);
  }
  q.censor = doubles(o["censor"]);
  q.censor_probability = doubles(o["censor_probability"]);
  q.alpha = doubles(o["alpha"]);
  q.seed = opt_seed(o["seed"]);
  q.simulations = static_cast<std::size_t>(Rcpp::as<double>(o["simulations"]));
  q.gaussian_calibration = Rcpp::as<std::string>(o["gaussian_calibration"]);
  if (!Rf_isNull(field(o, "method"))) q.method = Rcpp::as<std::string>(o["method"]);
  q.bounds = doubles(field(o, "bounds"));
  q.alpha0 = opt_double(field(o, "alpha0"));
  if (!Rf_isNull(field(o, "power_target"))) q.power_target = Rcpp::as<double>(o["power_target"]);
  q.ledger = ledger_options(o);
  q.command = "R dpmu::test";
  q.progress = interrupt_check();
  const Json out = dpmu::api::test(matrix(common), matrix(tested), vector(y), strings(common_names),
                                   strings(tested_names), Rcpp::as<std::string>(response), q);
  return to_r(out);
  END_RCPP
}

extern "C" SEXP dpmu_select_c(SEXP x, SEXP y, SEXP predictors, SEXP response, SEXP options) {
  BEGIN_RCPP
  const Rcpp::List o(options);
  dpmu::api::SelectRequest q;
  q.algorithm = Rcpp::as<int>(o["algorithm"]);
  q.epsilon = Rcpp::as<double>(o["epsilon"]);
  q.delta = opt_double(field(o, "delta"));
  q.radius = Rcpp::as<double>(o["radius"]);
  q.penalty = Rcpp::as<double>(o["penalty"]);
  q.data_bound = Rcpp::as<std::string>(o["data_bound"]);
  if (!Rf_isNull(field(o, "lcssf_delta"))) q.lcssf_delta = Rcpp::as<std::string>(o["lcssf_delta"]);
  if (!Rf_isNull(field(o, "objective_scale"))) q.objective_scale = Rcpp::as<double>(o["objective_scale"]);
  if (!Rf_isNull(field(o, "noise_factor"))) q.noise_factor = Rcpp::as<double>(o["noise_factor"]);
  if (!Rf_isNull(field(o, "variance_floor"))) q.variance_floor = Rcpp::as<double>(o["variance_floor"]);
  if (!Rf_isNull(field(o, "alg2_selection"))) q.alg2_selection = Rcpp::as<std::string>(o["alg2_selection"]);
  q.seed = opt_seed(field(o, "seed"));
  q.ledger = ledger_options(o);
  q.command = "R dpmu::select";
  return to_r(dpmu::api::select(matrix(x), vector(y), strings(predictors), Rcpp::as<std::string>(response), q));
  END_RCPP
}

extern "C" SEXP dpmu_plan_test_c(SEXP options) {
  BEGIN_RCPP
  const Rcpp::List o(options);
  dpmu::api::PlanTestRequest q;
  const double n = Rcpp::as<double>(o["n"]);
  if (!(n >= 1.0 && n == static_cast<double>(static_cast<std::size_t>(n)))) {
    throw std::invalid_argument("n must be a whole number >= 1");
  }
  q.n = static_cast<std::size_t>(n);
  q.p = Rcpp::as<int>(o["p"]);
  q.p0 = Rcpp::as<int>(o["p0"]);
  q.prior = Rcpp::as<std::string>(o["prior"]);
  q.g = opt_double(field(o, "g"));
  q.a = Rcpp::as<double>(o["a"]);
  q.epsilon = Rcpp::as<double>(o["epsilon"]);
  q.delta = Rcpp::as<double>(o["delta"]);
  q.groups.clear();
  for (double m : doubles(o["groups"])) {
    if (!(m >= 1.0 && m == static_cast<double>(static_cast<std::size_t>(m)))) {
      throw std::invalid_argument("groups must be whole numbers >= 1");
    }
    q.groups.push_back(static_cast<std::size_t>(m));
  }
  const std::vector<double> censor = doubles(field(o, "censor"));
  if (censor.size() % 2 != 0) throw std::invalid_argument("censor: give pairs L, U (a vector c(L1, U1, L2, U2, ...))");
  for (std::size_t i = 0; i < censor.size(); i += 2) q.censor.push_back({censor[i], censor[i + 1]});
  q.r_squared = opt_double(field(o, "r_squared"));
  q.simulations = static_cast<std::size_t>(Rcpp::as<double>(o["simulations"]));
  q.seed = opt_seed(field(o, "seed"));
  q.gaussian_calibration = Rcpp::as<std::string>(o["gaussian_calibration"]);
  return to_r(dpmu::api::plan_test(q));
  END_RCPP
}

/// The audit's verdict from releases on D (rows of `first`) and on D' (rows of `second`).
extern "C" SEXP dpmu_audit_c(SEXP first, SEXP second, SEXP options) {
  BEGIN_RCPP
  const Rcpp::List o(options);
  const auto rows = [](SEXP m) {
    const auto a = matrix(m);
    std::vector<Eigen::VectorXd> out;
    for (Eigen::Index i = 0; i < a.rows(); ++i) out.push_back(a.row(i).transpose());
    return out;
  };
  dpmu::api::AuditClaim claim;
  claim.epsilon = Rcpp::as<double>(o["epsilon"]);
  claim.delta = Rcpp::as<double>(o["delta"]);
  claim.confidence = Rcpp::as<double>(o["confidence"]);
  claim.score = Rcpp::as<std::string>(o["score"]);
  return to_r(dpmu::api::audit_samples(rows(first), rows(second), claim));
  END_RCPP
}

extern "C" SEXP dpmu_ledger_init_c(SEXP path, SEXP budget, SEXP accountant) {
  BEGIN_RCPP
  dpmu::api::ledger_init(Rcpp::as<std::string>(path), Rcpp::as<std::string>(budget), Rcpp::as<std::string>(accountant));
  return R_NilValue;
  END_RCPP
}

extern "C" SEXP dpmu_ledger_set_budget_c(SEXP path, SEXP budget, SEXP reason) {
  BEGIN_RCPP
  dpmu::api::ledger_set_budget(Rcpp::as<std::string>(path), Rcpp::as<std::string>(budget),
                               Rcpp::as<std::string>(reason));
  return R_NilValue;
  END_RCPP
}

extern "C" SEXP dpmu_ledger_summary_c(SEXP path) {
  BEGIN_RCPP
  return to_r(dpmu::api::ledger_summary(Rcpp::as<std::string>(path)));
  END_RCPP
}

/// JSON text → R list (the same conversion as the results; used by the tests to read the CLI's output).
extern "C" SEXP dpmu_parse_json_c(SEXP text) {
  BEGIN_RCPP
  return to_r(Json::parse(Rcpp::as<std::string>(text)));
  END_RCPP
}

extern "C" SEXP dpmu_plan_bma_c(SEXP options) {
  BEGIN_RCPP
  const Rcpp::List o(options);
  dpmu::api::PlanBmaRequest q;
  const auto whole = [](SEXP s, const char* name, double lowest) -> std::optional<std::int64_t> {
    if (Rf_isNull(s)) return std::nullopt;
    const double v = Rf_length(s) == 1 && (Rf_isReal(s) || Rf_isInteger(s)) ? Rf_asReal(s) : NAN;
    if (!(v >= lowest && v <= 9007199254740992.0 && v == std::floor(v))) {
      throw std::invalid_argument(std::string(name) +
                                  ": must be one whole number >= " + std::to_string(static_cast<int>(lowest)));
    }
    return static_cast<std::int64_t>(v);
  };
  const auto number = [](SEXP s, const char* name) -> std::optional<double> {
    if (Rf_isNull(s)) return std::nullopt;
    if (Rf_length(s) != 1 || !(Rf_isReal(s) || Rf_isInteger(s))) {
      throw std::invalid_argument(std::string(name) + ": must be one number");
    }
    return Rf_asReal(s);
  };
  const auto numbers = [](SEXP s, const char* name) -> std::optional<std::vector<double>> {
    if (Rf_isNull(s)) return std::nullopt;
    if (!(Rf_isReal(s) || Rf_isInteger(s))) throw std::invalid_argument(std::string(name) + ": must be numeric");
    return Rcpp::as<std::vector<double>>(s);
  };
  const auto text = [](SEXP s, const char* name) {
    if (!Rf_isString(s) || Rf_length(s) != 1) throw std::invalid_argument(std::string(name) + ": must be one string");
    return Rcpp::as<std::string>(s);
  };
  q.n = *whole(field(o, "n"), "n", 1);
  q.p = whole(field(o, "p"), "p", 1);
  q.coefficients = numbers(field(o, "coefficients"), "coefficients");
  q.sigma = number(field(o, "sigma"), "sigma");
  q.bounds = numbers(field(o, "bounds"), "bounds");
  q.mechanism = text(field(o, "mechanism"), "mechanism");
  q.epsilon = *number(field(o, "epsilon"), "epsilon");
  q.delta = number(field(o, "delta"), "delta");
  q.prior = text(field(o, "prior"), "prior");
  q.model_prior = text(field(o, "model_prior"), "model_prior");
  q.noise_aware_draws = *whole(field(o, "noise_aware_draws"), "noise_aware_draws", 1);
  q.replicates = static_cast<std::uint64_t>(*whole(field(o, "simulations"), "simulations", 0));
  q.seed = static_cast<std::uint64_t>(*whole(field(o, "seed"), "seed", 0));
  q.uncertainty = text(field(o, "uncertainty"), "uncertainty");
  q.true_model_size = whole(field(o, "true_model_size"), "true_model_size", 0);
  q.signal_z = number(field(o, "signal_z"), "signal_z");
  q.progress = interrupt_check();
  return to_r(dpmu::bindings::plan_bma(q));
  END_RCPP
}

/// bma(method = "adassp"): the AdaSSP release (api::adassp) of [x, y].
extern "C" SEXP dpmu_adassp_c(SEXP x, SEXP y, SEXP predictors, SEXP response, SEXP options) {
  BEGIN_RCPP
  const Rcpp::List o(options);
  dpmu::api::AdaSspRequest q;
  q.epsilon = opt_double(field(o, "epsilon"));
  q.delta = opt_double(field(o, "delta"));
  const std::vector<double> b = doubles(field(o, "bounds"));
  if (b.size() % 2 != 0) throw std::invalid_argument("bounds: give pairs l, u");
  for (std::size_t i = 0; i < b.size(); i += 2) q.bounds.push_back({b[i], b[i + 1]});
  q.seed = opt_seed(field(o, "seed"));
  q.ledger = ledger_options(o);
  q.command = "R dpmu::bma(method = \"adassp\")";
  const Eigen::MatrixXd xm = matrix(x);
  const Eigen::VectorXd yv = vector(y);
  Eigen::MatrixXd rows(xm.rows(), xm.cols() + 1);
  rows.leftCols(xm.cols()) = xm;
  rows.col(xm.cols()) = yv;
  return to_r(
      dpmu::api::adassp(rows, strings(predictors), Rcpp::as<std::string>(response), q, {}, q.ledger.data_label));
  END_RCPP
}

static const R_CallMethodDef kCallMethods[] = {
    {"dpmu_adassp_c", reinterpret_cast<DL_FUNC>(&dpmu_adassp_c), 5},
    {"dpmu_bma_c", reinterpret_cast<DL_FUNC>(&dpmu_bma_c), 5},
    {"dpmu_predict_c", reinterpret_cast<DL_FUNC>(&dpmu_predict_c), 3},
    {"dpmu_reanalyse_c", reinterpret_cast<DL_FUNC>(&dpmu_reanalyse_c), 2},
    {"dpmu_predict_se_c", reinterpret_cast<DL_FUNC>(&dpmu_predict_se_c), 6},
    {"dpmu_coef_density_c", reinterpret_cast<DL_FUNC>(&dpmu_coef_density_c), 3},
    {"dpmu_test_c", reinterpret_cast<DL_FUNC>(&dpmu_test_c), 7},
    {"dpmu_parse_json_c", reinterpret_cast<DL_FUNC>(&dpmu_parse_json_c), 1},
    {"dpmu_select_c", reinterpret_cast<DL_FUNC>(&dpmu_select_c), 5},
    {"dpmu_plan_test_c", reinterpret_cast<DL_FUNC>(&dpmu_plan_test_c), 1},
    {"dpmu_plan_bma_c", reinterpret_cast<DL_FUNC>(&dpmu_plan_bma_c), 1},
    {"dpmu_audit_c", reinterpret_cast<DL_FUNC>(&dpmu_audit_c), 3},
    {"dpmu_ledger_init_c", reinterpret_cast<DL_FUNC>(&dpmu_ledger_init_c), 3},
    {"dpmu_ledger_set_budget_c", reinterpret_cast<DL_FUNC>(&dpmu_ledger_set_budget_c), 3},
    {"dpmu_ledger_summary_c", reinterpret_cast<DL_FUNC>(&dpmu_ledger_summary_c), 1},
    {nullptr, nullptr, 0}};

extern "C" void R_init_dpmu(DllInfo* dll) {
  R_registerRoutines(dll, nullptr, kCallMethods, nullptr, nullptr);
  R_useDynamicSymbols(dll, FALSE);
}
