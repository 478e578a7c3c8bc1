// The R package's native routines: the shared entry points (bindings/common/dpmu_bindings.hpp)
// called through .Call, with dpmu's JSON result converted into R lists. Errors become R errors
// carrying dpmu's message (Rcpp's BEGIN_RCPP / END_RCPP).
#include <R_ext/Rdynload.h>
#include <Rcpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

extern "C" SEXP dpmu_bma_c(SEXP x, SEXP y, SEXP predictors, SEXP response, SEXP options) {
  BEGIN_RCPP
  const Rcpp::List o(options);
  dpmu::bindings::BmaRequest q;
  q.prior = Rcpp::as<std::string>(o["prior"]);
  q.g = opt_double(o["g"]);
  q.a = Rcpp::as<double>(o["a"]);
  q.model_prior = Rcpp::as<std::string>(o["model_prior"]);
  q.epsilon = opt_double(o["epsilon"]);
  q.delta = opt_double(o["delta"]);
  q.mechanism = Rcpp::as<std::string>(o["mechanism"]);
  q.bounds = doubles(o["bounds"]);
  q.seed = opt_seed(o["seed"]);
  q.rescale = Rcpp::as<bool>(o["rescale"]);
  q.top_models = Rcpp::as<int>(o["top_models"]);
  q.mcmc = Rcpp::as<bool>(o["mcmc"]);
  q.always_include = strings(o["always_include"]);
  const Json out = dpmu::bindings::bma(matrix(x), vector(y), strings(predictors), Rcpp::as<std::string>(response), q);
  return to_r(out);
  END_RCPP
}

extern "C" SEXP dpmu_test_c(SEXP common, SEXP tested, SEXP y, SEXP common_names, SEXP tested_names, SEXP response,
                            SEXP options) {
  BEGIN_RCPP
  const Rcpp::List o(options);
  dpmu::bindings::TestRequest q;
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
  const Json out = dpmu::bindings::test(matrix(common), matrix(tested), vector(y), strings(common_names),
                                        strings(tested_names), Rcpp::as<std::string>(response), q);
  return to_r(out);
  END_RCPP
}

/// JSON text → R list (the same conversion as the results; used by the tests to read the CLI's output).
extern "C" SEXP dpmu_parse_json_c(SEXP text) {
  BEGIN_RCPP
  return to_r(Json::parse(Rcpp::as<std::string>(text)));
  END_RCPP
}

static const R_CallMethodDef kCallMethods[] = {{"dpmu_bma_c", reinterpret_cast<DL_FUNC>(&dpmu_bma_c), 5},
                                               {"dpmu_test_c", reinterpret_cast<DL_FUNC>(&dpmu_test_c), 7},
                                               {"dpmu_parse_json_c", reinterpret_cast<DL_FUNC>(&dpmu_parse_json_c), 1},
                                               {nullptr, nullptr, 0}};

extern "C" void R_init_dpmu(DllInfo* dll) {
  R_registerRoutines(dll, nullptr, kCallMethods, nullptr, nullptr);
  R_useDynamicSymbols(dll, FALSE);
}
