#pragma once
/// @file checks.hpp
/// Argument checks with one message format:
///   "<function>: <name> is <value>, but must be <condition>"
/// Values outside their mathematical domain throw std::domain_error; shapes,
/// sizes and inconsistent options throw std::invalid_argument (docs/architecture.md §3.7).

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dpmu::core {

/// Format a double with enough digits to round-trip (used in error messages).
inline std::string format_value(double x) {
  std::ostringstream os;
  os.precision(17);
  os << x;
  return os.str();
}

/// Throw std::domain_error "<function>: <name> is <value>, but must be <requirement>".
[[noreturn]] inline void throw_domain(std::string_view function, std::string_view name, double value,
                                      std::string_view requirement) {
  std::string msg(function);
  msg += ": ";
  msg += name;
  msg += " is ";
  msg += format_value(value);
  msg += ", but must be ";
  msg += requirement;
  throw std::domain_error(msg);
}

/// Throw std::invalid_argument "<function>: <message>".
[[noreturn]] inline void throw_invalid(std::string_view function, std::string_view message) {
  std::string msg(function);
  msg += ": ";
  msg += message;
  throw std::invalid_argument(msg);
}

/// Require x finite. @throws std::domain_error otherwise.
inline void check_finite(std::string_view function, std::string_view name, double x) {
  if (!std::isfinite(x)) throw_domain(function, name, x, "finite");
}

/// Require every entry of a matrix or vector finite, naming the first entry that is not (column-major
/// order): "<function>: <name>(i, j) is inf, but must be finite" (0-based; "<name>(i)" for a vector).
/// @throws std::domain_error.
template <class Derived>
void check_all_finite(std::string_view function, std::string_view name, const Eigen::DenseBase<Derived>& m) {
  if (m.derived().allFinite()) return;
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      const double x = m(i, j);
      if (std::isfinite(x)) continue;
      std::string entry(name);
      entry += "(" + std::to_string(i);
      if (m.cols() != 1) entry += ", " + std::to_string(j);
      entry += ")";
      throw_domain(function, entry, x, "finite");
    }
  }
}

/// Require x finite and > 0. @throws std::domain_error otherwise.
inline void check_positive_finite(std::string_view function, std::string_view name, double x) {
  if (!(std::isfinite(x) && x > 0.0)) throw_domain(function, name, x, "finite and > 0");
}

/// Require lo < x < hi. @throws std::domain_error otherwise (also for NaN).
inline void check_open_interval(std::string_view function, std::string_view name, double x, double lo, double hi) {
  if (!(x > lo && x < hi)) {
    throw_domain(function, name, x, "in (" + format_value(lo) + ", " + format_value(hi) + ")");
  }
}

/// Require lo <= x < hi. @throws std::domain_error otherwise (also for NaN).
inline void check_half_open_interval(std::string_view function, std::string_view name, double x, double lo, double hi) {
  if (!(x >= lo && x < hi)) {
    throw_domain(function, name, x, "in [" + format_value(lo) + ", " + format_value(hi) + ")");
  }
}

/// Require a finite lower < upper (censoring limits and similar).
/// @throws std::domain_error otherwise.
inline void check_ordered_limits(std::string_view function, std::string_view lower_name, double lower,
                                 std::string_view upper_name, double upper) {
  check_finite(function, lower_name, lower);
  check_finite(function, upper_name, upper);
  if (!(lower < upper)) {
    throw_domain(function, lower_name, lower, "smaller than " + std::string(upper_name) + " = " + format_value(upper));
  }
}

}  // namespace dpmu::core
