#pragma once
/// @file lei_baseline.hpp
/// Helpers of the LCSSF (Lei et al. 2018) experiments `lei_simulation` and `lei_real_data`
/// (experiments/lei_baseline.cpp), exposed for tests.

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "dpmu/core/random.hpp"

namespace dpmu::experiments {

/// A simulated LCSSF data set (docs/methods.md §6.6): X n×6 iid Uniform[−1, 1], Y = Xβ0 + W, W ~ N(0, 1).
struct LeiData {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

/// β0 of LCSSF's model 1 (1, 1, 1, 0, 0, 0) or model 2 (1.5, 1, 0.5, 0, 0, 0).
/// @throws std::invalid_argument for another name.
Eigen::VectorXd lei_true_coefficients(const std::string& beta_model);

/// Draw one data set from `rng`, row by row: the 6 uniforms of row i (2u − 1 from uniform_open01),
/// then its normal error. Deterministic given the stream.
LeiData lei_simulate_data(int n, const Eigen::VectorXd& beta, core::RngStream& rng);

/// The φ grid: num_penalties equally spaced values on [0, n/2] (docs/methods.md §6.6 [R]).
std::vector<double> lei_penalty_grid(int n, int num_penalties);

}  // namespace dpmu::experiments
