// The extension module dpmu._dpmu: the shared entry points (bindings/common/dpmu_bindings.hpp) for
// the Python package (bindings/python/dpmu). Matrices come in as Fortran-ordered float64 arrays
// (Eigen::Ref: no copy); results go out as the JSON text of the CLI, which dpmu/__init__.py parses.
#include <pybind11/eigen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "dpmu_bindings.hpp"

namespace py = pybind11;

namespace {

using MatrixRef = Eigen::Ref<const Eigen::MatrixXd>;
using VectorRef = Eigen::Ref<const Eigen::VectorXd>;

std::string bma(const MatrixRef& x, const VectorRef& y, const std::vector<std::string>& predictors,
                const std::string& response, const std::string& prior, std::optional<double> g, double a,
                const std::string& model_prior, std::optional<double> epsilon, std::optional<double> delta,
                const std::string& mechanism, const std::vector<double>& bounds, std::optional<std::uint64_t> seed,
                bool rescale, int top_models, bool mcmc, const std::vector<std::string>& always_include) {
  dpmu::bindings::BmaRequest q;
  q.prior = prior;
  q.g = g;
  q.a = a;
  q.model_prior = model_prior;
  q.epsilon = epsilon;
  q.delta = delta;
  q.mechanism = mechanism;
  q.bounds = bounds;
  q.seed = seed;
  q.rescale = rescale;
  q.top_models = top_models;
  q.mcmc = mcmc;
  q.always_include = always_include;
  py::gil_scoped_release unlocked;
  return dpmu::bindings::bma(x, y, predictors, response, q).dump();
}

std::string test(const MatrixRef& common, const MatrixRef& tested, const VectorRef& y,
                 const std::vector<std::string>& common_names, const std::vector<std::string>& tested_names,
                 const std::string& response, const std::string& prior, std::optional<double> g, double a,
                 double prior_h0, std::optional<double> epsilon, double delta, std::optional<std::size_t> groups,
                 const std::vector<double>& censor, const std::vector<double>& censor_probability,
                 const std::vector<double>& alpha, std::optional<std::uint64_t> seed, std::size_t simulations,
                 const std::string& gaussian_calibration) {
  dpmu::bindings::TestRequest q;
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
  py::gil_scoped_release unlocked;
  return dpmu::bindings::test(common, tested, y, common_names, tested_names, response, q).dump();
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
  m.def("bma", &bma, py::arg("x").noconvert(false), py::arg("y"), py::arg("predictors"), py::arg("response"),
        py::arg("prior"), py::arg("g"), py::arg("a"), py::arg("model_prior"), py::arg("epsilon"), py::arg("delta"),
        py::arg("mechanism"), py::arg("bounds"), py::arg("seed"), py::arg("rescale"), py::arg("top_models"),
        py::arg("mcmc"), py::arg("always_include"), "Model averaging (JSON of dpmu bma)");
  m.def("test", &test, py::arg("common"), py::arg("tested"), py::arg("y"), py::arg("common_names"),
        py::arg("tested_names"), py::arg("response"), py::arg("prior"), py::arg("g"), py::arg("a"), py::arg("prior_h0"),
        py::arg("epsilon"), py::arg("delta"), py::arg("groups"), py::arg("censor"), py::arg("censor_probability"),
        py::arg("alpha"), py::arg("seed"), py::arg("simulations"), py::arg("gaussian_calibration"),
        "Nested test (JSON of dpmu test)");
}
