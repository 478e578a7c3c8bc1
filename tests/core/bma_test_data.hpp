#pragma once
// Simulated data for the model-averaging tests (tests/core/bma_test.cpp, bma_coefficients_test.cpp).
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "dpmu/core/random.hpp"

namespace dpmu::test {

/// n×(p+1) data with response last: y = X beta + noise, correlated predictors.
inline Eigen::MatrixXd simulate(int n, int p, std::uint64_t seed, const std::vector<double>& beta, double sigma = 1.0) {
  core::RngStream rng(seed, 0, 0, core::StreamPurpose::data);
  Eigen::MatrixXd d(n, p + 1);
  for (int i = 0; i < n; ++i) {
    const double common = core::standard_normal(rng);
    double y = sigma * core::standard_normal(rng);
    for (int j = 0; j < p; ++j) {
      d(i, j) = 0.5 * common + core::standard_normal(rng);
      if (j < static_cast<int>(beta.size())) y += beta[static_cast<std::size_t>(j)] * d(i, j);
    }
    d(i, p) = y;
  }
  return d;
}

/// The Gram matrix of the centred columns.
inline Eigen::MatrixXd centred_gram(Eigen::MatrixXd d) {
  d.rowwise() -= d.colwise().mean();
  return d.transpose() * d;
}

}  // namespace dpmu::test
