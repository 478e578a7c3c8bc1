#pragma once
/// @file simulation_ssp.hpp
/// Building blocks of the `ssp_simulation` experiment (Peña & Barrientos 2024, JMLR 25, §5.2.1,
/// Figures 3, 4, 8, 9; docs/methods.md §5.8, A6, A7, A13), exposed for tests and benchmarks.

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "dpmu/core/block_random.hpp"

namespace dpmu::experiments {

/// Data-generating design of the simulation study: x_ij iid Uniform(lower, upper), zero intercept,
/// y_i = b Σ_{j < |T|} x_ij + σ w_i, w_i ~ N(0, 1).
struct SimulationDesign {
  int p = 2;                 ///< candidate predictors (intercept excluded)
  int true_model_size = 0;   ///< |T|: the first |T| predictors are active
  double coefficient = 0.0;  ///< b (β_j = b for j < |T|, 0 otherwise)
  double sigma = 0.0;        ///< error standard deviation σ
  double lower = -2.0;       ///< predictors' lower bound; rows with y ∉ (lower, upper) are redrawn
  double upper = 2.0;        ///< predictors' upper bound
  /// If not empty (length p): β itself, any values (the true model T is {j : β_j ≠ 0}; coefficient
  /// and true_model_size are then not read). Exact sampler only (sample_gram_matrix).
  std::vector<double> coefficients = {};
  /// If not empty (length p): predictor j is Uniform on a range of width widths[j] (the centred Gram
  /// matrix does not depend on where the range lies; lower and upper are then not read). Exact
  /// sampler only (sample_gram_matrix).
  std::vector<double> widths = {};
};

/// β of a design: `coefficients` if given, else b on the first |T| predictors and 0 elsewhere.
Eigen::VectorXd design_coefficients(const SimulationDesign& design);

/// The design of docs/methods.md A6 for Uniform(−2, 2) predictors: SNR = Var(x'β)/σ² = 1/2 with
/// Var(x'β) = (4/3) b² |T|, b = 1/(z √|T|) (0 when |T| = 0) and σ = √(8/3)/z, so
/// Var(y) = 4 b² |T| + σ² and P(|y| ≥ 2) ≈ 2Φ(−z·2/√(...)) (< 3e-12 at z = 7). Deterministic.
/// @param p ≥ 1; @param true_model_size in [0, p]; @param z > 0 (the paper-default 7).
/// @throws std::domain_error for values outside these ranges.
SimulationDesign simulation_design(int p, int true_model_size, double z);

/// The simulated rows of one data set, produced a block at a time (the data stream of the
/// experiment). Random numbers: four interleaved xoshiro256++ lanes seeded from Philox4x64-10
/// blocks under (key0, key1) (core::Xoshiro256ppX4); per block of `block_rows` rows, first the predictors
/// column by column (one 64-bit word gives two 32-bit uniforms, core::words_to_uniform32), then
/// one ziggurat normal per row for the errors (core::standard_normal_ziggurat), y = x'β + σ w;
/// then every row with y ∉ (lower, upper) is redrawn whole (new x and w) from the same
/// generator until it is inside (docs/methods.md A6). Deterministic given the design and the key.
class SimulatedRows {
 public:
  static constexpr int block_rows = 256;  ///< rows per block (a multiple of 4)

  /// @throws std::domain_error for an invalid design (see simulation_design) or bounds.
  SimulatedRows(const SimulationDesign& design, std::uint64_t key0, std::uint64_t key1);

  /// Fill `block` (block_rows × (p+1), column-major: columns 0..p−1 the predictors, column p the
  /// response) with the next m ≤ block_rows rows; rows m..block_rows−1 are set to 0 so the whole
  /// block can be folded into a Gram matrix. The matrix is resized if needed.
  /// @return rows redrawn in this block.
  std::uint64_t next_block(Eigen::MatrixXd& block, int m);

 private:
  void redraw_row(Eigen::MatrixXd& block, int i);
  SimulationDesign design_;
  core::Xoshiro256ppX4 gen_;
  std::vector<std::uint64_t> words_;
  std::vector<double> sums_;
};

/// Result of streaming one simulated data set into its Gram matrix.
struct SimulatedGram {
  Eigen::MatrixXd gram;            ///< (p+1)×(p+1) G = D'D of the sample-mean-centred [X, y] (y last)
  std::uint64_t redrawn_rows = 0;  ///< rows whose y fell outside (lower, upper) and were redrawn
};

/// Simulate n rows of `design` and fold them into the centred Gram matrix, 256 rows at a time
/// (memory O(p²), never n × p). Rows come from SimulatedRows(design, key0, key1), so the data set
/// is a pure function of the key; blocks are folded with core::accumulate_block_gram.
/// Centring: G = S − s s'/n with S = Σ d_i d_i' and s = Σ d_i (raw rows, accumulated in
/// partial sums of 16 384 rows). Deterministic given the key.
/// @param rows if not null, receives the n × (p+1) raw (uncentred) rows (tests only).
/// @throws std::domain_error if n < 2 or the design is invalid.
SimulatedGram simulate_gram_matrix(const SimulationDesign& design, std::uint64_t n, std::uint64_t key0,
                                   std::uint64_t key1, Eigen::MatrixXd* rows = nullptr);

/// Predictive mean squared error n⁻¹‖V β_true − V β̂‖² = n⁻¹ (β_true − β̂)' (V'V) (β_true − β̂)
/// (paper §5.2.1; V'V is the leading p×p block of the confidential centred G; evaluation only).
/// @param gram (p+1)×(p+1); @param n rows; @param true_coefficients, estimate length p.
/// @throws std::invalid_argument on size mismatch. Deterministic.
double predictive_mse(const Eigen::Ref<const Eigen::MatrixXd>& gram, double n,
                      const Eigen::Ref<const Eigen::VectorXd>& true_coefficients,
                      const Eigen::Ref<const Eigen::VectorXd>& estimate);

}  // namespace dpmu::experiments
