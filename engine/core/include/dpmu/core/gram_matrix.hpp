#pragma once
/// @file gram_matrix.hpp
/// Streaming accumulation of the Gram matrix G = D'D of the data matrix D = [V ; Z]
/// (centred predictors, then the centred response; Peña & Barrientos 2024, JMLR 25, §5;
/// docs/methods.md §1, §5.1). Every entry of D must lie in the public bounds [l, u] on which the
/// privacy guarantee rests: entries outside are clamped into [l, u] and counted, never used as is.

#include <Eigen/Dense>
#include <cstdint>

namespace dpmu::core {

/// One-pass, blocked accumulator of a (p+1)×(p+1) Gram matrix; memory O(p²), so n = 10^7 rows
/// never need to be in memory at once.
///
/// Rows are supplied in blocks (b × (p+1), response last). Each entry is first clamped into
/// [lower, upper] (the count of clamped entries is kept). Then:
///  - centre = false (default): G += B'B (Eigen `selfadjointView<Lower>().rankUpdate`), i.e.
///    G = D'D of the rows exactly as supplied (after clamping) — the statistic whose L1
///    sensitivity is (p+1)(p+2)(l² ∨ u²). Use it for rows that are already centred.
///  - centre = true: the centred cross-product Σ (d_i − d̄)(d_i − d̄)' by merging per-block centred
///    cross-products (Chan, Golub & LeVeque 1983 pairwise update), which avoids the cancellation
///    of Σ d d' − n d̄ d̄'. Bounds then refer to the raw rows (strict mode of docs/methods.md A7).
class GramAccumulator {
 public:
  /// @param columns p + 1 ≥ 2. @param lower, upper bounds with lower < 0 < upper (finite).
  /// @throws std::invalid_argument for columns < 2; std::domain_error for invalid bounds.
  GramAccumulator(int columns, double lower, double upper, bool centre = false);

  /// Add a block of rows (b × columns). @throws std::invalid_argument for a wrong column count;
  /// std::domain_error for a NaN or infinite entry (nothing of the block is added then).
  void add(const Eigen::Ref<const Eigen::MatrixXd>& rows);

  /// The full symmetric (p+1)×(p+1) Gram matrix accumulated so far.
  Eigen::MatrixXd gram_matrix() const;

  /// Column means of the clamped rows (only meaningful with centre = true; zeros otherwise).
  const Eigen::VectorXd& mean() const { return mean_; }
  std::uint64_t rows() const { return rows_; }
  /// Number of entries that were outside [lower, upper] and were clamped.
  std::uint64_t clamped_entries() const { return clamped_; }
  double lower() const { return lower_; }
  double upper() const { return upper_; }

 private:
  int columns_;
  double lower_;
  double upper_;
  bool centre_;
  std::uint64_t rows_ = 0;
  std::uint64_t clamped_ = 0;
  Eigen::VectorXd mean_;
  Eigen::MatrixXd lower_gram_;  // lower triangle authoritative
  Eigen::MatrixXd buffer_;
};

/// Fast kernel for simulated data (no clamping, no checks): adds the lower triangle of B'B to
/// `gram` and the column sums of B to `sums`, where B is a rows × columns block stored
/// variable-major (column j at block + j·stride, contiguous, like an Eigen column-major matrix
/// with leading dimension `stride`). Each entry is a dot product over the rows in 4 interleaved
/// lanes (i mod 4) added in the fixed order ((l0 + l1) + (l2 + l3)), two columns by two at a time,
/// so results do not depend on the instruction set (no FMA contraction assumed; docs/architecture.md §3.3).
/// @param rows a multiple of 4 (pad with zero rows); @param gram columns × columns, only the
/// lower triangle (i ≥ j) is updated; @param sums length columns.
/// @param allow_avx2 false forces the SSE2 path; the AVX2 path (used when the CPU has it) holds
/// the same four lanes in one register and gives bit-identical results (tested).
/// Precondition (unchecked, hot loop): columns ≥ 1, rows ≥ 0, rows % 4 == 0, stride ≥ rows.
/// Source: the Gram matrix G = D'D of Peña & Barrientos (2024) §5.
void accumulate_block_gram(const double* block, std::ptrdiff_t stride, int columns, int rows,
                           Eigen::Ref<Eigen::MatrixXd> gram, Eigen::Ref<Eigen::VectorXd> sums, bool allow_avx2 = true);

/// Convenience: G of a whole n×(p+1) matrix in blocks of 4096 rows (see GramAccumulator).
/// @param clamped_entries if non-null, receives the number of clamped entries.
/// @throws as GramAccumulator.
Eigen::MatrixXd gram_matrix(const Eigen::Ref<const Eigen::MatrixXd>& data, double lower, double upper,
                            bool centre = false, std::uint64_t* clamped_entries = nullptr);

/// The k(k + 1)/2 unique entries of a symmetric k × k matrix (its lower triangle, i ≥ j),
/// column by column: the vector a release of a Gram matrix is compared on (sensitivities, audits).
Eigen::VectorXd unique_entries(const Eigen::Ref<const Eigen::MatrixXd>& symmetric);

}  // namespace dpmu::core
