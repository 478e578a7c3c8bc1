/// @file column_design.cpp
/// Column expressions and design/bounds specifications (see column_design.hpp).

#include "dpmu/experiments/column_design.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>

namespace dpmu::experiments {

struct ColumnExpression::Node {
  enum class Kind { number, column, unary_minus, binary, function } kind = Kind::number;
  double value = 0.0;
  std::string name;  // column or function name, or operator text for binary
  std::shared_ptr<const Node> left, right;
};

namespace {

using Node = ColumnExpression::Node;
using NodePtr = std::shared_ptr<const Node>;

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  NodePtr parse() {
    skip();
    if (pos_ >= s_.size()) fail("empty expression");
    NodePtr n = comparison();
    skip();
    if (pos_ < s_.size()) fail(std::string("unexpected '") + s_[pos_] + "'");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("column expression '" + std::string(s_) + "': " + what + " at position " +
                                std::to_string(pos_ + 1));
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool accept(std::string_view op) {
    skip();
    if (s_.substr(pos_, op.size()) == op) {
      pos_ += op.size();
      return true;
    }
    return false;
  }
  static NodePtr binary(std::string op, NodePtr a, NodePtr b) {
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::binary;
    n->name = std::move(op);
    n->left = std::move(a);
    n->right = std::move(b);
    return n;
  }
  NodePtr comparison() {
    NodePtr a = additive();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (accept(op)) {
        NodePtr b = additive();
        return binary(op, a, b);
      }
    }
    return a;
  }
  NodePtr additive() {
    NodePtr a = multiplicative();
    for (;;) {
      if (accept("+"))
        a = binary("+", a, multiplicative());
      else if (accept("-"))
        a = binary("-", a, multiplicative());
      else
        return a;
    }
  }
  NodePtr multiplicative() {
    NodePtr a = unary();
    for (;;) {
      if (accept("*"))
        a = binary("*", a, unary());
      else if (accept("/"))
        a = binary("/", a, unary());
      else
        return a;
    }
  }
  NodePtr unary() {
    if (accept("-")) {
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::unary_minus;
      n->left = unary();
      return n;
    }
    if (accept("+")) return unary();
    return power();
  }
  NodePtr power() {
    NodePtr a = primary();
    if (accept("^")) return binary("^", a, unary());  // right-associative; exponent may be negative
    return a;
  }
  NodePtr primary() {
    skip();
    if (pos_ >= s_.size()) fail("expression ends early");
    const char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      NodePtr n = comparison();
      if (!accept(")")) fail("missing ')'");
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      double v = 0.0;
      const char* first = s_.data() + pos_;
      auto res = std::from_chars(first, s_.data() + s_.size(), v);
      if (res.ec != std::errc()) fail("malformed number");
      pos_ += static_cast<std::size_t>(res.ptr - first);
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::number;
      n->value = v;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.')) {
        ++pos_;
      }
      std::string name(s_.substr(start, pos_ - start));
      auto n = std::make_shared<Node>();
      if (accept("(")) {
        if (name != "log" && name != "exp" && name != "sqrt" && name != "abs") {
          pos_ = start;
          fail("unknown function '" + name + "' (known: log, exp, sqrt, abs)");
        }
        n->kind = Node::Kind::function;
        n->name = name;
        n->left = comparison();
        if (!accept(")")) fail("missing ')'");
        return n;
      }
      n->kind = Node::Kind::column;
      n->name = std::move(name);
      return n;
    }
    fail(std::string("unexpected '") + c + "'");
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

void collect(const Node& n, std::set<std::string>& out) {
  if (n.kind == Node::Kind::column) out.insert(n.name);
  if (n.left) collect(*n.left, out);
  if (n.right) collect(*n.right, out);
}

Eigen::VectorXd eval(const Node& n, const std::function<const std::vector<double>&(const std::string&)>& column,
                     std::size_t rows) {
  const auto r = static_cast<Eigen::Index>(rows);
  switch (n.kind) {
    case Node::Kind::number:
      return Eigen::VectorXd::Constant(r, n.value);
    case Node::Kind::column: {
      const auto& c = column(n.name);
      if (c.size() != rows) {
        throw std::invalid_argument("column expression: column '" + n.name + "' has " + std::to_string(c.size()) +
                                    " rows, expected " + std::to_string(rows));
      }
      return Eigen::Map<const Eigen::VectorXd>(c.data(), r);
    }
    case Node::Kind::unary_minus:
      return -eval(*n.left, column, rows);
    case Node::Kind::function: {
      const Eigen::ArrayXd a = eval(*n.left, column, rows).array();
      if (n.name == "log") return a.log().matrix();
      if (n.name == "exp") return a.exp().matrix();
      if (n.name == "sqrt") return a.sqrt().matrix();
      return a.abs().matrix();
    }
    case Node::Kind::binary: {
      const Eigen::ArrayXd a = eval(*n.left, column, rows).array();
      const Eigen::ArrayXd b = eval(*n.right, column, rows).array();
      const std::string& op = n.name;
      if (op == "+") return (a + b).matrix();
      if (op == "-") return (a - b).matrix();
      if (op == "*") return (a * b).matrix();
      if (op == "/") return (a / b).matrix();
      if (op == "^") return a.binaryExpr(b, [](double x, double y) { return std::pow(x, y); }).matrix();
      Eigen::VectorXd out(r);
      for (Eigen::Index i = 0; i < r; ++i) {
        bool v = false;
        if (op == "==")
          v = a(i) == b(i);
        else if (op == "!=")
          v = a(i) != b(i);
        else if (op == "<")
          v = a(i) < b(i);
        else if (op == "<=")
          v = a(i) <= b(i);
        else if (op == ">")
          v = a(i) > b(i);
        else
          v = a(i) >= b(i);
        out(i) = v ? 1.0 : 0.0;
      }
      return out;
    }
  }
  return {};
}

double parse_number(const std::string& text, const std::string& context) {
  double v = 0.0;
  const std::string t = trim(text);
  auto res = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || res.ec != std::errc() || res.ptr != t.data() + t.size() || !std::isfinite(v)) {
    throw std::invalid_argument(context + ": '" + t + "' is not a finite number");
  }
  return v;
}

}  // namespace

ColumnExpression ColumnExpression::parse(std::string_view text) {
  ColumnExpression e;
  e.text_ = trim(text);
  e.root_ = Parser(e.text_).parse();
  return e;
}

std::vector<std::string> ColumnExpression::columns() const {
  std::set<std::string> s;
  collect(*root_, s);
  return {s.begin(), s.end()};
}

Eigen::VectorXd ColumnExpression::evaluate(const std::function<const std::vector<double>&(const std::string&)>& column,
                                           std::size_t rows) const {
  Eigen::VectorXd v = eval(*root_, column, rows);
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v(i))) {
      throw std::domain_error("column expression '" + text_ + "': value " + std::to_string(v(i)) + " in row " +
                              std::to_string(i) + " is not finite");
    }
  }
  return v;
}

std::vector<std::string> split_list(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    std::string item = trim(text.substr(start, end - start));
    if (!item.empty()) out.push_back(std::move(item));
    start = end + 1;
  }
  return out;
}

std::vector<DesignColumn> parse_design_spec(std::string_view text) {
  std::vector<DesignColumn> out;
  std::set<std::string> seen;
  for (const auto& item : split_list(text, ';')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || (eq + 1 < item.size() && item[eq + 1] == '=')) {
      throw std::invalid_argument("design item '" + item + "': expected 'name = expression'");
    }
    const std::string name = trim(std::string_view(item).substr(0, eq));
    if (!is_identifier(name)) throw std::invalid_argument("design item '" + item + "': '" + name + "' is not a name");
    if (!seen.insert(name).second) throw std::invalid_argument("design: column '" + name + "' defined twice");
    out.push_back({name, ColumnExpression::parse(std::string_view(item).substr(eq + 1))});
  }
  if (out.empty()) throw std::invalid_argument("design: the specification defines no column");
  return out;
}

std::map<std::string, std::pair<double, double>> parse_bounds_spec(std::string_view text) {
  std::map<std::string, std::pair<double, double>> out;
  for (const auto& item : split_list(text, ';')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("bounds item '" + item + "': expected 'name = lower, upper'");
    const std::string name = trim(std::string_view(item).substr(0, eq));
    if (!is_identifier(name)) throw std::invalid_argument("bounds item '" + item + "': '" + name + "' is not a name");
    const auto parts = split_list(std::string_view(item).substr(eq + 1), ',');
    if (parts.size() != 2)
      throw std::invalid_argument("bounds item '" + item + "': expected two numbers 'lower, upper'");
    const double lo = parse_number(parts[0], "bounds item '" + item + "'");
    const double hi = parse_number(parts[1], "bounds item '" + item + "'");
    if (!(lo < hi)) throw std::invalid_argument("bounds item '" + item + "': lower must be < upper");
    if (!out.emplace(name, std::make_pair(lo, hi)).second) {
      throw std::invalid_argument("bounds: column '" + name + "' given twice");
    }
  }
  return out;
}

}  // namespace dpmu::experiments
