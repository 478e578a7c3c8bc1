// read_results / read_replicates: the tidy tables of dpmu/runtime/tidy.hpp as
// data frames.
#include <Rcpp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dpmu/runtime/tidy.hpp"

namespace {

/// A tidy table (dpmu/runtime/tidy.hpp) as a data.frame: real columns numeric,
/// integer columns integer (numeric when a value does not fit in R's 32-bit
/// integers), string columns character; missing values NA.
SEXP tidy_frame(const dpmu::runtime::TidyTable &t) {
  Rcpp::List out(t.columns.size());
  Rcpp::CharacterVector names(t.columns.size());
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    const auto &col = t.columns[c];
    names[c] = col.name;
    if (const auto *d = std::get_if<std::vector<double>>(&col.values)) {
      out[c] = Rcpp::NumericVector(d->begin(), d->end());
    } else if (const auto *i = std::get_if<std::vector<std::int64_t>>(&col.values)) {
      bool fits = true;
      for (std::int64_t v : *i) {
        fits = fits && (v == dpmu::runtime::kTidyMissingInteger || (v > INT32_MIN && v <= INT32_MAX));
      }
      if (fits) {
        Rcpp::IntegerVector v(i->size());
        for (std::size_t k = 0; k < i->size(); ++k) {
          v[k] = (*i)[k] == dpmu::runtime::kTidyMissingInteger ? NA_INTEGER : static_cast<int>((*i)[k]);
        }
        out[c] = v;
      } else {
        Rcpp::NumericVector v(i->size());
        for (std::size_t k = 0; k < i->size(); ++k) {
          v[k] = (*i)[k] == dpmu::runtime::kTidyMissingInteger ? NA_REAL : static_cast<double>((*i)[k]);
        }
        out[c] = v;
      }
    } else {
      const auto &s = std::get<std::vector<std::string>>(col.values);
      Rcpp::CharacterVector v(s.size());
      for (std::size_t k = 0; k < s.size(); ++k) {
        if (s[k] == dpmu::runtime::kTidyMissingString) {
          v[k] = NA_STRING;
        } else {
          v[k] = s[k];
        }
      }
      out[c] = v;
    }
  }
  out.attr("names") = names;
  out.attr("class") = "data.frame";
  out.attr("row.names") = Rcpp::IntegerVector::create(NA_INTEGER, -static_cast<int>(t.rows()));
  return out;
}

}  // namespace

extern "C" SEXP dpmu_read_results_c(SEXP path) {
  BEGIN_RCPP
  return tidy_frame(dpmu::runtime::tidy_summaries(Rcpp::as<std::string>(path)));
  END_RCPP
}

extern "C" SEXP dpmu_read_replicates_c(SEXP path, SEXP metric) {
  BEGIN_RCPP
  return tidy_frame(dpmu::runtime::tidy_replicates(Rcpp::as<std::string>(path), Rcpp::as<std::string>(metric)));
  END_RCPP
}
