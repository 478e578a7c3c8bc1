#pragma once
/// @file column_design.hpp
/// A generic, text-configured mapping from the columns of a CSV file to the columns of a design
/// matrix (used by the CPS application, paper §5.2.2, so that another file — e.g. the March 2000
/// CPS extract of the paper — can be dropped in by changing the config only).
///
/// A design specification is a list "name = expression; name = expression; ...". An expression
/// is arithmetic over the raw CSV columns:
///   numbers, column names ([A-Za-z_][A-Za-z0-9_.]*), parentheses, unary -, binary + - * /,
///   ^ (power, right-associative, binds tighter than unary minus: -a^2 = -(a^2)),
///   comparisons == != < <= > >= (lowest precedence; value 1 if true, 0 if false),
///   functions log(x), exp(x), sqrt(x), abs(x).
/// Examples: "age^2", "marital == 1", "1 - female", "log(earnings)".
/// Bounds specifications are "name = lower, upper; ...".

#include <Eigen/Dense>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dpmu::experiments {

/// A parsed column expression (immutable; cheap to copy).
class ColumnExpression {
 public:
  struct Node;
  /// Parse `text`. @throws std::invalid_argument "column expression 'x': <what> at position k"
  /// for a syntax error, an unknown function or an empty expression.
  static ColumnExpression parse(std::string_view text);
  /// Names of the raw columns the expression reads (sorted, unique).
  std::vector<std::string> columns() const;
  /// Evaluate on `rows` rows; `column(name)` returns a raw column of length `rows`.
  /// @throws std::domain_error if a value is NaN or infinite (e.g. log of 0), naming the
  /// expression and the 0-based row; whatever `column` throws for an unknown name.
  Eigen::VectorXd evaluate(const std::function<const std::vector<double>&(const std::string&)>& column,
                           std::size_t rows) const;
  /// The text it was parsed from.
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

/// One column of a design: its name and the expression that computes it.
struct DesignColumn {
  std::string name;
  ColumnExpression expression;
};

/// Parse "name = expression; ...". Names must be identifiers and distinct.
/// @throws std::invalid_argument naming the offending item (missing '=', empty name, duplicated
/// name, syntax error in an expression, empty specification).
std::vector<DesignColumn> parse_design_spec(std::string_view text);

/// Parse "name = lower, upper; ..." into name → (lower, upper), lower < upper, both finite.
/// An empty text gives an empty map. @throws std::invalid_argument for malformed items,
/// duplicated names, non-numbers, or lower ≥ upper.
std::map<std::string, std::pair<double, double>> parse_bounds_spec(std::string_view text);

/// Split "a, b ,c" into trimmed non-empty items.
std::vector<std::string> split_list(std::string_view text, char separator = ',');

}  // namespace dpmu::experiments
