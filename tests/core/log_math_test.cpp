#include "dpmu/core/log_math.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

TEST_CASE("log_sum_exp is exact at ±1e6 and handles -inf", "[log_math]") {
  const std::vector<double> big{1e6, 1e6};
  CHECK(dpmu::core::log_sum_exp(big) == Approx(1e6 + std::log(2.0)).epsilon(1e-15));
  const std::vector<double> small{-1e6, -1e6 - std::log(3.0)};
  CHECK(dpmu::core::log_sum_exp(small) == Approx(-1e6 + std::log(4.0 / 3.0)).epsilon(1e-15));
  const double ninf = -std::numeric_limits<double>::infinity();
  const std::vector<double> empty;
  CHECK(dpmu::core::log_sum_exp(empty) == ninf);
  CHECK(dpmu::core::log_sum_exp(ninf, 2.0) == 2.0);
  CHECK(dpmu::core::log_sum_exp(1.0, 1.0) == Approx(1.0 + std::log(2.0)));
  const std::vector<double> with_nan{1.0, std::nan("")};
  CHECK(std::isnan(dpmu::core::log_sum_exp(with_nan)));
}

TEST_CASE("softplus, logistic and their logs are accurate in both tails", "[log_math]") {
  CHECK(dpmu::core::log1p_exp(1e6) == 1e6);
  CHECK(dpmu::core::log1p_exp(-800.0) == Approx(std::exp(-800.0)).epsilon(1e-12));
  CHECK(dpmu::core::log1p_exp(0.0) == Approx(std::log(2.0)));
  CHECK(dpmu::core::logistic(1e6) == 1.0);
  CHECK(dpmu::core::logistic(-1e6) == 0.0);
  CHECK(dpmu::core::logistic(-700.0) == Approx(std::exp(-700.0)).epsilon(1e-12));
  CHECK(dpmu::core::logistic(2.0) + dpmu::core::logistic(-2.0) == Approx(1.0).epsilon(1e-15));
  CHECK(dpmu::core::log_logistic(-1e6) == -1e6);
  CHECK(dpmu::core::logit(dpmu::core::logistic(3.5)) == Approx(3.5).epsilon(1e-14));
  CHECK(dpmu::core::logit(0.99) == Approx(std::log(99.0)).epsilon(1e-14));
  CHECK(dpmu::core::log1m_exp(-1e-20) == Approx(std::log(1e-20)).epsilon(1e-12));
  CHECK(dpmu::core::log1m_exp(-50.0) == Approx(-std::exp(-50.0)).epsilon(1e-12));
}
