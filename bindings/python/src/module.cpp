// The extension module dpmu._dpmu for the Python package (bindings/python/dpmu): the release API
// (engine/api: api::bma, api::test, the ledger) and the shared conversions (bindings/common). Matrices come
// in as Fortran-ordered float64 arrays (Eigen::Ref: no copy); a fit stays a C++ object (BmaFit) whose
// summaries are NumPy arrays; the test's result is the JSON text of the CLI, parsed in Python.
#include <pybind11/eigen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "dpmu/api/adassp.hpp"
#include "dpmu/api/audit.hpp"
#include "dpmu/api/bma.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/api/plan_test.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/api/select.hpp"
#include "dpmu/api/test.hpp"
#include "dpmu_bindings.hpp"

namespace py = pybind11;

namespace {

using MatrixRef = Eigen::Ref<const Eigen::MatrixXd>;
using VectorRef = Eigen::Ref<const Eigen::VectorXd>;

namespace api = dpmu::api;

/// The ledger options of a call (None: no ledger / no per-call budget / no label).
api::LedgerOptions ledger_options(const std::optional<std::string>& ledger, const std::optional<std::string>& budget,
                                  const std::optional<std::string>& data_label) {
  api::LedgerOptions l;
  l.path = ledger.value_or("");
  l.budget = budget.value_or("");
  l.data_label = data_label.value_or("");
  return l;
}

/// The progress callback of a long model search: Ctrl-C stops it. At most every 0.1 s it takes the GIL
/// and runs Python's signal handlers (PyErr_CheckSignals); a KeyboardInterrupt (or any exception a
/// handler raises) is thrown as py::error_already_set, which unwinds the C++ call and reaches Python as
/// that exception. The release API calls no callback between a release's noise draw and its charge
/// (docs/privacy.md "Charge first, then speak"): an interrupt comes before the noise (nothing spent)
/// or after the charge — then the release is charged and not delivered, and stderr says so.
dpmu::core::ProgressCallback interrupt_check() {
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  const std::uint64_t charges_before = api::charges_on_this_thread().count;
  return [last, charges_before](const dpmu::core::Progress&) {
    const auto now = std::chrono::steady_clock::now();
    if (now - *last < std::chrono::milliseconds(100)) return;
    *last = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      const auto& charges = api::charges_on_this_thread();
      if (charges.count != charges_before) {
        PySys_WriteStderr(
            "dpmu: interrupted after the release was charged to ledger %.3000s: charged, not delivered "
            "(its noise was drawn, so the spend stands)\n",
            charges.last_ledger.c_str());
      }
      throw py::error_already_set();
    }
  };
}

api::BmaFit bma(const MatrixRef& x, const VectorRef& y, const std::vector<std::string>& predictors,
                const std::string& response, const std::string& prior, std::optional<double> g, double a,
                const std::string& model_prior, std::optional<double> epsilon, std::optional<double> delta,
                const std::string& mechanism, const std::vector<double>& bounds, std::optional<std::uint64_t> seed,
                bool rescale, int top_models, bool mcmc, const std::vector<std::string>& always_include,
                double credible_level, std::uint64_t mcmc_max_iterations, std::uint64_t mcmc_max_models,
                std::optional<std::string> ledger, std::optional<std::string> budget,
                std::optional<std::string> data_label, const std::string& uncertainty, std::int64_t noise_aware_draws) {
  api::BmaSettings q;
  q.uncertainty = uncertainty;
  q.noise_aware_draws = noise_aware_draws;
  q.mcmc_max_iterations = mcmc_max_iterations;
  q.mcmc_max_models = mcmc_max_models;
  q.progress = interrupt_check();
  q.ledger = ledger_options(ledger, budget, data_label);
  q.command = "Python dpmu.bma";
  q.prior = prior;
  q.g = g;
  q.a = a;
  q.model_prior = model_prior;
  q.always_include = always_include;
  q.top_models = top_models;
  q.mcmc = mcmc;
  q.credible_level = credible_level;
  q.seed = seed;
  if (epsilon) {
    api::PrivacySettings ps;
    ps.epsilon = *epsilon;
    ps.delta = delta;
    ps.mechanism = mechanism;
    if (bounds.empty()) {
      throw std::invalid_argument("a private run (epsilon given) needs public bounds on the raw values: bounds=[l, u]");
    }
    ps.bounds = dpmu::bindings::bounds_from_pairs(bounds);
    ps.rescale = rescale;
    q.privacy = ps;
  } else if (delta || !bounds.empty() || rescale) {
    throw std::invalid_argument("delta, bounds and rescale need a private run: give epsilon");
  }
  py::gil_scoped_release unlocked;
  return api::bma(x, y, predictors, response, q);
}

/// api::BmaSummary → dict of NumPy arrays and lists (in predictor order).
py::dict summary_dict(const api::BmaSummary& s) {
  py::dict d;
  d["pip"] = s.posterior_inclusion_probability;
  d["prior_inclusion"] = s.prior_inclusion_probability;
  d["mean"] = s.posterior_mean;
  d["sd"] = s.posterior_sd;
  d["sd_bas"] = s.posterior_sd_bas;
  d["intercept"] = s.intercept;
  d["intercept_sd"] = s.intercept_sd;
  d["intercept_sd_bas"] = s.intercept_sd_bas;
  d["credible_level"] = s.credible_level;
  d["uncertainty"] = s.uncertainty;
  if (s.noise_aware) {
    py::dict na;
    const auto& a = *s.noise_aware;
    na["sampler"] = a.sampler;
    na["chains"] = a.chains;
    na["warmup_per_chain"] = a.warmup;
    na["draws_per_chain"] = a.draws_per_chain;
    na["max_draws_per_chain"] = a.max_draws_per_chain;
    na["max_rhat"] = a.max_rhat;
    na["min_ess"] = a.min_ess;
    na["converged"] = a.converged;
    na["not_converged_because"] = a.reason;
    na["pip_mc_se"] = a.pip_mc_se;
    na["mean_mc_se"] = a.mean_mc_se;
    na["error_variance"] = a.sigma2;
    na["error_variance_mc_se"] = a.sigma2_mc_se;
    d["noise_aware"] = na;
  }
  d["lower"] = s.lower;
  d["upper"] = s.upper;
  d["intercept_lower"] = s.intercept_lower;
  d["intercept_upper"] = s.intercept_upper;
  d["interval_omitted_mass"] = s.interval_omitted_mass;
  d["highest_posterior_model"] = s.highest_posterior_model;
  d["median_probability_model"] = s.median_probability_model;
  d["best_predictive_model"] = s.best_predictive_model;
  d["highest_posterior_model_coefficients"] = s.highest_posterior_model_coefficients;
  d["median_probability_model_coefficients"] = s.median_probability_model_coefficients;
  d["best_predictive_model_coefficients"] = s.best_predictive_model_coefficients;
  d["expected_model_size"] = s.expected_model_size;
  py::list models;
  for (const auto& m : s.models) {
    py::dict md;
    md["predictors"] = m.predictors;
    md["posterior_probability"] = m.posterior_probability;
    md["log_posterior_probability"] = m.log_posterior_probability;
    md["log_prior_probability"] = m.log_prior_probability;
    md["log_marginal"] = m.log_marginal;
    md["r_squared"] = m.r_squared;
    md["shrinkage"] = m.shrinkage;
    models.append(md);
  }
  d["models"] = models;
  d["models_evaluated"] = s.models_evaluated;
  d["models_rank_deficient"] = s.models_rank_deficient;
  d["models_exact_fit"] = s.models_exact_fit;
  if (s.mcmc) {
    py::dict mc;
    mc["iterations"] = s.mcmc->iterations;
    mc["max_iterations"] = s.mcmc->max_iterations;
    mc["models_visited"] = s.mcmc->models_visited;
    mc["evaluations_unstored"] = s.mcmc->evaluations_unstored;
    mc["acceptance_rate"] = s.mcmc->acceptance_rate;
    mc["converged"] = s.mcmc->converged;
    mc["max_pip_difference_between_halves"] = s.mcmc->max_pip_difference;
    d["mcmc"] = mc;
  } else {
    d["mcmc"] = py::none();
  }
  return d;
}

/// api::BmaRelease → dict: the released matrix, the ridge, and the clamp count (a diagnostic,
/// present only for a seeded run).
py::dict release_dict(const api::BmaRelease& r) {
  py::dict d;
  d["released_gram"] = r.released_gram;
  d["column_scale"] = r.column_scale;
  d["ridge_requested"] = r.ridge_requested;
  d["ridge_method"] = r.ridge_method;
  d["regularization"] = r.regularized.regularization;
  d["regularization_fallback"] = r.regularized.fallback;
  if (r.clamped_entries) d["clamped_entries"] = *r.clamped_entries;
  return d;
}

/// bma(method="adassp"): the AdaSSP release (api::adassp) of [x, y], as JSON text.
std::string adassp(const MatrixRef& x, const VectorRef& y, const std::vector<std::string>& predictors,
                   const std::string& response, std::optional<double> epsilon, std::optional<double> delta,
                   const std::vector<double>& bounds, std::optional<std::uint64_t> seed,
                   std::optional<std::string> ledger, std::optional<std::string> budget,
                   std::optional<std::string> data_label) {
  api::AdaSspRequest q;
  q.epsilon = epsilon;
  q.delta = delta;
  if (bounds.size() % 2 != 0) throw std::invalid_argument("bounds: give pairs l, u");
  for (std::size_t i = 0; i < bounds.size(); i += 2) q.bounds.push_back({bounds[i], bounds[i + 1]});
  q.seed = seed;
  q.ledger = ledger_options(ledger, budget, data_label);
  q.command = "Python dpmu.bma(method=\"adassp\")";
  Eigen::MatrixXd rows(x.rows(), x.cols() + 1);
  rows.leftCols(x.cols()) = x;
  rows.col(x.cols()) = y;
  py::gil_scoped_release unlocked;
  return api::json_text(api::adassp(rows, predictors, response, q, {}, q.ledger.data_label));
}

std::string test(const MatrixRef& common, const MatrixRef& tested, const VectorRef& y,
                 const std::vector<std::string>& common_names, const std::vector<std::string>& tested_names,
                 const std::string& response, const std::string& prior, std::optional<double> g, double a,
                 double prior_h0, std::optional<double> epsilon, double delta, std::optional<std::size_t> groups,
                 const std::vector<double>& censor, const std::vector<double>& censor_probability,
                 const std::vector<double>& alpha, std::optional<std::uint64_t> seed, std::size_t simulations,
                 const std::string& gaussian_calibration, std::optional<std::string> ledger,
                 std::optional<std::string> budget, std::optional<std::string> data_label, const std::string& method,
                 const std::vector<double>& bounds, std::optional<double> alpha0, double power_target) {
  api::TestRequest q;
  q.method = method;
  q.bounds = bounds;
  q.alpha0 = alpha0;
  q.power_target = power_target;
  q.ledger = ledger_options(ledger, budget, data_label);
  q.command = "Python dpmu.test";
  q.prior = prior;
  q.g = g;
  q.a = a;
  q.prior_h0 = prior_h0;
  q.epsilon = epsilon;
  q.delta = delta;
  q.groups = groups;
  q.censor = censor;
  q.censor_probability = censor_probability;
  q.alpha = alpha;
  q.seed = seed;
  q.simulations = simulations;
  q.gaussian_calibration = gaussian_calibration;
  q.progress = interrupt_check();
  py::gil_scoped_release unlocked;
  return api::json_text(api::test(common, tested, y, common_names, tested_names, response, q));
}

std::string select_models(const MatrixRef& x, const VectorRef& y, const std::vector<std::string>& predictors,
                          const std::string& response, int algorithm, double epsilon, std::optional<double> delta,
                          double radius, double penalty, const std::string& data_bound, const std::string& lcssf_delta,
                          double objective_scale, double noise_factor, double variance_floor,
                          const std::string& alg2_selection, std::optional<std::uint64_t> seed,
                          std::optional<std::string> ledger, std::optional<std::string> budget,
                          std::optional<std::string> data_label) {
  api::SelectRequest q;
  q.algorithm = algorithm;
  q.epsilon = epsilon;
  q.delta = delta;
  q.radius = radius;
  q.penalty = penalty;
  q.data_bound = data_bound;
  q.lcssf_delta = lcssf_delta;
  q.objective_scale = objective_scale;
  q.noise_factor = noise_factor;
  q.variance_floor = variance_floor;
  q.alg2_selection = alg2_selection;
  q.seed = seed;
  q.ledger = ledger_options(ledger, budget, data_label);
  q.command = "Python dpmu.select";
  py::gil_scoped_release unlocked;
  return api::json_text(api::select(x, y, predictors, response, q));
}

std::string plan_test(std::size_t n, int p, int p0, const std::string& prior, std::optional<double> g, double a,
                      double epsilon, double delta, const std::vector<std::size_t>& groups,
                      const std::vector<std::pair<double, double>>& censor, std::optional<double> r_squared,
                      std::size_t simulations, std::optional<std::uint64_t> seed,
                      const std::string& gaussian_calibration) {
  api::PlanTestRequest q;
  q.n = n;
  q.p = p;
  q.p0 = p0;
  q.prior = prior;
  q.g = g;
  q.a = a;
  q.epsilon = epsilon;
  q.delta = delta;
  q.groups = groups;
  for (const auto& [l, u] : censor) q.censor.push_back({l, u});
  q.r_squared = r_squared;
  q.simulations = simulations;
  q.seed = seed;
  q.gaussian_calibration = gaussian_calibration;
  py::gil_scoped_release unlocked;
  return api::json_text(api::plan_test(q));
}

std::string plan_bma(std::int64_t n, std::optional<std::int64_t> p, std::optional<std::vector<double>> coefficients,
                     std::optional<double> sigma, std::optional<std::vector<double>> bounds,
                     const std::string& mechanism, double epsilon, std::optional<double> delta,
                     const std::string& prior, const std::string& model_prior, std::int64_t noise_aware_draws,
                     std::uint64_t simulations, std::uint64_t seed, const std::string& uncertainty,
                     std::optional<std::int64_t> true_model_size, std::optional<double> signal_z) {
  api::PlanBmaRequest q;
  q.n = n;
  q.p = p;
  q.coefficients = std::move(coefficients);
  q.sigma = sigma;
  q.bounds = std::move(bounds);
  q.mechanism = mechanism;
  q.epsilon = epsilon;
  q.delta = delta;
  q.prior = prior;
  q.model_prior = model_prior;
  q.noise_aware_draws = noise_aware_draws;
  q.replicates = simulations;
  q.seed = seed;
  q.uncertainty = uncertainty;
  q.true_model_size = true_model_size;
  q.signal_z = signal_z;
  q.progress = interrupt_check();
  py::gil_scoped_release unlocked;
  return api::json_text(dpmu::bindings::plan_bma(q));
}

std::string audit_samples(const MatrixRef& first, const MatrixRef& second, double epsilon, double delta,
                          double confidence, const std::string& score) {
  const auto rows = [](const MatrixRef& m) {
    std::vector<Eigen::VectorXd> out;
    for (Eigen::Index i = 0; i < m.rows(); ++i) out.push_back(m.row(i).transpose());
    return out;
  };
  api::AuditClaim claim;
  claim.epsilon = epsilon;
  claim.delta = delta;
  claim.confidence = confidence;
  claim.score = score;
  return api::json_text(api::audit_samples(rows(first), rows(second), claim));
}

}  // namespace

PYBIND11_MODULE(_dpmu, m) {
  m.doc() = "dpmu's C++ core (use the functions of the dpmu package)";
  // dpmu's errors (bad input, a domain error, a damaged file) become ValueError with dpmu's message.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  py::class_<api::BmaFit>(m, "BmaFit", "A model-averaging fit (dpmu/api/bma.hpp)")
      .def_readonly("response", &api::BmaFit::response)
      .def_readonly("predictors", &api::BmaFit::predictors)
      .def_readonly("n", &api::BmaFit::n)
      .def_readonly("prior", &api::BmaFit::prior)
      .def_readonly("model_prior", &api::BmaFit::model_prior)
      .def_readonly("search", &api::BmaFit::search)
      .def_readonly("seed", &api::BmaFit::seed)
      .def_readonly("messages", &api::BmaFit::messages)
      .def("posterior", [](const api::BmaFit& f) { return summary_dict(f.posterior); })
      .def("thresholded",
           [](const api::BmaFit& f) -> py::object {
             return f.thresholded ? py::object(summary_dict(*f.thresholded)) : py::none();
           })
      .def("release",
           [](const api::BmaFit& f) -> py::object {
             return f.release ? py::object(release_dict(*f.release)) : py::none();
           })
      .def("privacy", [](const api::BmaFit& f) { return api::json_text(api::privacy_json(f)); })
      .def(
          "predict",
          [](const api::BmaFit& f, const MatrixRef& x, const std::string& estimator) {
            return api::predict(f, x, api::parse_estimator(estimator));
          },
          py::arg("x"), py::arg("estimator"));
  m.def("bma", &bma, py::arg("x"), py::arg("y"), py::arg("predictors"), py::arg("response"), py::arg("prior"),
        py::arg("g"), py::arg("a"), py::arg("model_prior"), py::arg("epsilon"), py::arg("delta"), py::arg("mechanism"),
        py::arg("bounds"), py::arg("seed"), py::arg("rescale"), py::arg("top_models"), py::arg("mcmc"),
        py::arg("always_include"), py::arg("credible_level"), py::arg("mcmc_max_iterations") = 0,
        py::arg("mcmc_max_models") = dpmu::core::kDefaultMcmcMaxModels, py::arg("ledger") = py::none(),
        py::arg("budget") = py::none(), py::arg("data_label") = py::none(), py::arg("uncertainty") = "",
        py::arg("noise_aware_draws") = 1000, "Model averaging (api::bma)");
  m.def("adassp", &adassp, py::arg("x"), py::arg("y"), py::arg("predictors"), py::arg("response"), py::arg("epsilon"),
        py::arg("delta"), py::arg("bounds"), py::arg("seed"), py::arg("ledger") = py::none(),
        py::arg("budget") = py::none(), py::arg("data_label") = py::none(),
        "AdaSSP release (JSON of dpmu bma --method adassp)");
  m.def("test", &test, py::arg("common"), py::arg("tested"), py::arg("y"), py::arg("common_names"),
        py::arg("tested_names"), py::arg("response"), py::arg("prior"), py::arg("g"), py::arg("a"), py::arg("prior_h0"),
        py::arg("epsilon"), py::arg("delta"), py::arg("groups"), py::arg("censor"), py::arg("censor_probability"),
        py::arg("alpha"), py::arg("seed"), py::arg("simulations"), py::arg("gaussian_calibration"),
        py::arg("ledger") = py::none(), py::arg("budget") = py::none(), py::arg("data_label") = py::none(),
        py::arg("method") = "subsample-aggregate", py::arg("bounds") = std::vector<double>{},
        py::arg("alpha0") = py::none(), py::arg("power_target") = 0.9, "Nested test (JSON of dpmu test)");
  m.def("select", &select_models, py::arg("x"), py::arg("y"), py::arg("predictors"), py::arg("response"),
        py::arg("algorithm"), py::arg("epsilon"), py::arg("delta"), py::arg("radius"), py::arg("penalty"),
        py::arg("data_bound"), py::arg("lcssf_delta"), py::arg("objective_scale"), py::arg("noise_factor"),
        py::arg("variance_floor"), py::arg("alg2_selection"), py::arg("seed"), py::arg("ledger") = py::none(),
        py::arg("budget") = py::none(), py::arg("data_label") = py::none(),
        "DP model selection of Lei et al. (JSON of dpmu select)");
  m.def("plan_bma", &plan_bma, py::arg("n"), py::arg("p"), py::arg("coefficients"), py::arg("sigma"), py::arg("bounds"),
        py::arg("mechanism"), py::arg("epsilon"), py::arg("delta"), py::arg("prior"), py::arg("model_prior"),
        py::arg("noise_aware_draws"), py::arg("simulations"), py::arg("seed"), py::arg("uncertainty"),
        py::arg("true_model_size"), py::arg("signal_z"),
        "Plan a private model-averaging release (JSON of dpmu plan-bma)");
  m.def("plan_test", &plan_test, py::arg("n"), py::arg("p"), py::arg("p0"), py::arg("prior"), py::arg("g"),
        py::arg("a"), py::arg("epsilon"), py::arg("delta"), py::arg("groups"), py::arg("censor"), py::arg("r_squared"),
        py::arg("simulations"), py::arg("seed"), py::arg("gaussian_calibration"),
        "Plan a private test (JSON of dpmu plan-test)");
  m.def("audit_samples", &audit_samples, py::arg("first"), py::arg("second"), py::arg("epsilon"), py::arg("delta"),
        py::arg("confidence"), py::arg("score"), "Audit verdict from releases on D and D' (rows)");
  m.def("ledger_init", &api::ledger_init, py::arg("path"), py::arg("budget"), py::arg("accountant") = "",
        "Create a ledger with its budget and accountant (basic, tight or zcdp; empty: the default)");
  m.def("ledger_set_budget", &api::ledger_set_budget, py::arg("path"), py::arg("budget"), py::arg("reason"),
        "Record a new budget");
  m.def(
      "ledger_summary", [](const std::string& path) { return api::json_text(api::ledger_summary(path)); },
      py::arg("path"), "A ledger as JSON (dpmu ledger FILE)");
}
