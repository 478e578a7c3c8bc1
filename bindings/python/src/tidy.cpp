// The tidy tables of dpmu/runtime/tidy.hpp for dpmu.read_results /
// read_replicates: columns as NumPy arrays that own the core's vectors (moved,
// not copied).
#include "dpmu/runtime/tidy.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace {

/// The vector as a NumPy array that owns it (moved, not copied).
template <class T>
py::array_t<T> owned_array(std::vector<T> &&v) {
  auto *heap = new std::vector<T>(std::move(v));
  py::capsule owner(heap, [](void *p) { delete static_cast<std::vector<T> *>(p); });
  return py::array_t<T>(static_cast<py::ssize_t>(heap->size()), heap->data(), owner);
}

/// A tidy table (dpmu/runtime/tidy.hpp) as a list of (name, values): real and
/// integer columns as NumPy arrays (integer missing values are
/// kTidyMissingInteger; dpmu/__init__.py makes them NA), string columns as
/// lists of str.
py::list tidy_columns(dpmu::runtime::TidyTable &&t) {
  py::list out;
  for (auto &col : t.columns) {
    py::object values;
    if (auto *d = std::get_if<std::vector<double>>(&col.values)) {
      values = owned_array(std::move(*d));
    } else if (auto *i = std::get_if<std::vector<std::int64_t>>(&col.values)) {
      values = owned_array(std::move(*i));
    } else {
      values = py::cast(std::get<std::vector<std::string>>(col.values));
    }
    out.append(py::make_tuple(col.name, values));
  }
  return out;
}

}  // namespace

void add_tidy_functions(py::module_ &m) {
  m.def(
      "tidy_summaries",
      [](const std::string &path) {
        dpmu::runtime::TidyTable t;
        {
          py::gil_scoped_release unlocked;
          t = dpmu::runtime::tidy_summaries(path);
        }
        return tidy_columns(std::move(t));
      },
      py::arg("path"), "Summaries of a results file as (name, column) pairs");
  m.def(
      "tidy_replicates",
      [](const std::string &path, const std::string &metric) {
        dpmu::runtime::TidyTable t;
        {
          py::gil_scoped_release unlocked;
          t = dpmu::runtime::tidy_replicates(path, metric);
        }
        return tidy_columns(std::move(t));
      },
      py::arg("path"), py::arg("metric"), "Replicates of a results file as (name, column) pairs");
  m.attr("missing_integer") = dpmu::runtime::kTidyMissingInteger;
  m.attr("missing_string") = dpmu::runtime::kTidyMissingString;
}
