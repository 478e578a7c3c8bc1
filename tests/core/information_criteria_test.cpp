#include "dpmu/core/information_criteria.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using Catch::Matchers::Contains;
using dpmu::core::PriorKind;

TEST_CASE("information criteria follow Eq. (4) with their penalties", "[information_criteria]") {
  const double n = 200, log_q = std::log1p(-0.1);
  const double half_dev = -0.5 * n * log_q;
  CHECK(dpmu::core::two_log_likelihood_ratio(log_q, n) == Approx(2 * half_dev));
  CHECK(dpmu::core::log_information_criterion(PriorKind::lr, log_q, n, 3) == Approx(half_dev));
  CHECK(dpmu::core::log_information_criterion(PriorKind::bic, log_q, n, 3) == Approx(half_dev - 1.5 * std::log(n)));
  // AIC: ρ = 2p / log n  ⇒  penalty (ρ/2) log n = p
  CHECK(dpmu::core::log_information_criterion(PriorKind::aic, log_q, n, 3) == Approx(half_dev - 3.0));
  // log_statistic dispatches
  dpmu::core::Prior bic;
  bic.kind = PriorKind::bic;
  CHECK(dpmu::core::log_statistic(bic, log_q, n, 3, 1) ==
        dpmu::core::log_information_criterion(PriorKind::bic, log_q, n, 3));
  // no overflow at n = 1e7, R² = 1 - 1e-12
  CHECK(std::isfinite(dpmu::core::log_information_criterion(PriorKind::bic, std::log(1e-12), 1e7, 2)));
}

TEST_CASE("posterior probability of H1 is the logistic of the log posterior odds", "[information_criteria]") {
  CHECK(dpmu::core::posterior_probability_h1(0.0, 0.5) == Approx(0.5));
  CHECK(dpmu::core::posterior_probability_h1(std::log(3.0), 0.5) == Approx(0.75));
  // prior odds 1/3 with B10 = 3 gives posterior odds 1
  CHECK(dpmu::core::posterior_probability_h1(std::log(3.0), 0.75) == Approx(0.5));
  CHECK(dpmu::core::posterior_probability_h1(1e6, 0.5) == 1.0);
  CHECK(dpmu::core::posterior_probability_h1(-1e6, 0.5) == 0.0);
  CHECK(dpmu::core::posterior_probability_h1(-745.0, 0.5) > 0.0);
  CHECK_THROWS_WITH(dpmu::core::posterior_probability_h1(0.0, 1.0), Contains("prior_probability_h0 is 1"));
  CHECK_THROWS_AS(dpmu::core::posterior_probability_h1(std::nan(""), 0.5), std::domain_error);
  CHECK_THROWS_AS(dpmu::core::log_information_criterion(PriorKind::zellner_siow, -0.1, 10, 1), std::invalid_argument);
  CHECK_THROWS_WITH(dpmu::core::two_log_likelihood_ratio(0.5, 10), Contains("log_one_minus_r_squared is 0.5"));
}
