// Argument checks (engine/core/include/dpmu/core/checks.hpp): one message format, naming the entry.
#include "dpmu/core/checks.hpp"

#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <limits>

#include "dpmu/core/bma.hpp"
#include "dpmu/core/ssp.hpp"

using namespace dpmu::core;

namespace {
std::string message_of(const auto& f) {
  try {
    f();
  } catch (const std::domain_error& e) {
    return e.what();
  }
  return "(no exception)";
}
}  // namespace

TEST_CASE("check_all_finite names the first non-finite entry and its value", "[checks]") {
  Eigen::MatrixXd m = Eigen::MatrixXd::Ones(3, 3);
  CHECK_NOTHROW(check_all_finite("f", "gram", m));
  m(2, 1) = std::numeric_limits<double>::infinity();
  m(1, 2) = -std::numeric_limits<double>::infinity();  // later in column-major order
  CHECK(message_of([&] { check_all_finite("f", "gram", m); }) == "f: gram(2, 1) is inf, but must be finite");
  m(0, 0) = std::nan("");
  CHECK(message_of([&] { check_all_finite("f", "gram", m); }) == "f: gram(0, 0) is nan, but must be finite");
  Eigen::VectorXd v = Eigen::VectorXd::Zero(4);
  v(3) = -std::numeric_limits<double>::infinity();
  CHECK(message_of([&] { check_all_finite("g", "xty", v); }) == "g: xty(3) is -inf, but must be finite");
}

TEST_CASE("core entry points report +inf in a Gram matrix as inf, not nan", "[checks]") {
  Eigen::MatrixXd gram = Eigen::MatrixXd::Identity(3, 3) * 10.0;
  gram(1, 0) = gram(0, 1) = std::numeric_limits<double>::infinity();
  const auto msg = message_of([&] { (void)regularize(gram, 0.0); });
  CHECK(msg == "regularize: matrix(1, 0) is inf, but must be finite");
}

#include "dpmu/core/quantile.hpp"

TEST_CASE("type7_quantile equals R's quantile(type = 7)", "[quantile]") {
  // R: quantile(1:10, c(0, 0.025, 0.25, 0.5, 0.75, 0.975, 1)) = 1, 1.225, 3.25, 5.5, 7.75, 9.775, 10
  const std::vector<double> want = {1, 1.225, 3.25, 5.5, 7.75, 9.775, 10};
  const std::vector<double> qs = {0, 0.025, 0.25, 0.5, 0.75, 0.975, 1};
  for (std::size_t i = 0; i < qs.size(); ++i) {
    std::vector<double> x = {7, 3, 10, 1, 5, 9, 2, 8, 4, 6};  // unsorted: selection, not a sort, is relied on
    CHECK(type7_quantile(x, qs[i]) == Approx(want[i]).epsilon(1e-15));
  }
  std::vector<double> one = {4.5};
  CHECK(type7_quantile(one, 0.3) == 4.5);
  std::vector<double> none;
  CHECK(std::isnan(type7_quantile(none, 0.5)));
  CHECK_THROWS_AS(type7_quantile(one, 1.5), std::domain_error);
}
