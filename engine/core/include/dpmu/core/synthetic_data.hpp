#pragma once
/// @file synthetic_data.hpp
/// Synthetic data with a prescribed Gram matrix (Peña & Barrientos 2024, JMLR 25, Proposition 3
/// and Appendix A.5; docs/methods.md §5.6): any standard model-averaging software run on the returned
/// D reproduces the inference computed from G (e.g. R's `bas.lm` on a DP G*).

#include <Eigen/Dense>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/random.hpp"

namespace dpmu::core {

/// D = Q_c G^{1/2}, where Q_c = M_c (M_c'M_c)^{-1/2} is the orthonormal factor of the centred
/// random matrix M_c = (I − 11'/n) U (U iid Uniform(−1/2, 1/2), n×(p+1)), computed by Householder
/// QR with the signs fixed so that its R factor is the (positive-diagonal) upper Cholesky factor,
/// and G^{1/2} is the upper Cholesky factor of G. Then D'D = G (to rounding) and every column of D
/// sums to zero.
/// @param gram (p+1)×(p+1) symmetric positive definite (e.g. a regularised G*), response last.
/// @param n rows, n > p + 2.
/// @throws std::invalid_argument (non-square, n too small); std::domain_error (G not PD,
///         non-finite). Draws n(p+1) uniforms from `rng`.
template <class Rng>
Eigen::MatrixXd synthetic_data(const Eigen::Ref<const Eigen::MatrixXd>& gram, Eigen::Index n, Rng& rng) {
  constexpr const char* fn = "synthetic_data";
  if (gram.rows() != gram.cols() || gram.rows() < 1) throw_invalid(fn, "gram must be square (p+1)x(p+1)");
  const Eigen::Index d = gram.rows();
  if (n <= d + 1) throw_invalid(fn, "n = " + std::to_string(n) + " must exceed p + 2 = " + std::to_string(d + 1));
  check_all_finite(fn, "gram", gram);
  const Eigen::MatrixXd sym = 0.5 * (gram + gram.transpose());
  Eigen::LLT<Eigen::MatrixXd> llt(sym);
  if (llt.info() != Eigen::Success)
    throw_domain(fn, "gram (smallest diagonal)", sym.diagonal().minCoeff(), "positive definite");
  const Eigen::MatrixXd root = llt.matrixU();
  Eigen::MatrixXd u(n, d);
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) u(i, j) = uniform_open01(rng) - 0.5;
  }
  u.rowwise() -= u.colwise().mean();
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(u);
  Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(n, d);
  const Eigen::MatrixXd r = qr.matrixQR().topRows(d).triangularView<Eigen::Upper>();
  for (Eigen::Index j = 0; j < d; ++j) {
    if (r(j, j) < 0.0) q.col(j) = -q.col(j);
  }
  // Remove the O(1e-17) column means left by rounding (Q's columns are orthogonal to 1).
  q.rowwise() -= q.colwise().mean();
  return q * root;
}

}  // namespace dpmu::core
