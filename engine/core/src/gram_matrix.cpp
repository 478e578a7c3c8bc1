#include "dpmu/core/gram_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/cpu_features.hpp"

namespace dpmu::core {

GramAccumulator::GramAccumulator(int columns, double lower, double upper, bool centre)
    : columns_(columns), lower_(lower), upper_(upper), centre_(centre) {
  constexpr const char* fn = "GramAccumulator";
  if (columns < 2) throw_invalid(fn, "columns is " + std::to_string(columns) + ", but must be >= 2 (p + 1)");
  check_finite(fn, "lower", lower);
  check_finite(fn, "upper", upper);
  if (!(lower < 0.0)) throw_domain(fn, "lower", lower, "< 0");
  if (!(upper > 0.0)) throw_domain(fn, "upper", upper, "> 0");
  mean_ = Eigen::VectorXd::Zero(columns);
  lower_gram_ = Eigen::MatrixXd::Zero(columns, columns);
}

void GramAccumulator::add(const Eigen::Ref<const Eigen::MatrixXd>& rows) {
  constexpr const char* fn = "GramAccumulator::add";
  if (rows.cols() != columns_) {
    throw_invalid(fn,
                  "rows has " + std::to_string(rows.cols()) + " columns, but must have " + std::to_string(columns_));
  }
  const Eigen::Index b = rows.rows();
  if (b == 0) return;
  check_all_finite(fn, "rows", rows);
  std::uint64_t clamped = 0;
  buffer_.resize(b, columns_);
  for (Eigen::Index j = 0; j < columns_; ++j) {
    for (Eigen::Index i = 0; i < b; ++i) {
      const double v = rows(i, j);
      if (v < lower_) {
        buffer_(i, j) = lower_;
        ++clamped;
      } else if (v > upper_) {
        buffer_(i, j) = upper_;
        ++clamped;
      } else {
        buffer_(i, j) = v;
      }
    }
  }
  clamped_ += clamped;
  if (!centre_) {
    lower_gram_.selfadjointView<Eigen::Lower>().rankUpdate(buffer_.transpose());
    rows_ += static_cast<std::uint64_t>(b);
    return;
  }
  const Eigen::VectorXd block_mean = buffer_.colwise().mean().transpose();
  buffer_.rowwise() -= block_mean.transpose();
  Eigen::MatrixXd block = Eigen::MatrixXd::Zero(columns_, columns_);
  block.selfadjointView<Eigen::Lower>().rankUpdate(buffer_.transpose());
  const double na = static_cast<double>(rows_);
  const double nb = static_cast<double>(b);
  const double nt = na + nb;
  const Eigen::VectorXd delta = block_mean - mean_;
  lower_gram_ += block;
  lower_gram_.selfadjointView<Eigen::Lower>().rankUpdate(delta, na * nb / nt);
  mean_ += delta * (nb / nt);
  rows_ += static_cast<std::uint64_t>(b);
}

Eigen::MatrixXd GramAccumulator::gram_matrix() const {
  Eigen::MatrixXd g = lower_gram_.selfadjointView<Eigen::Lower>();
  return g;
}

namespace {

// Rows are split into 4 lanes (i mod 4), each a sequential sum; lanes are combined as
// ((l0 + l1) + (l2 + l3)). The generic path holds the lanes in two SSE2 registers, the AVX2 path
// in one: the same operations in the same order, so the same bits (FMA contraction is disabled
// for the whole build, CMakeLists.txt -ffp-contract=off).
typedef double v4d __attribute__((vector_size(32)));

#define DPMU_INLINE inline __attribute__((always_inline))

DPMU_INLINE v4d load4(const double* p) {
  v4d v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

DPMU_INLINE double lane_sum(v4d v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// The kernel, written once and inlined into two functions compiled for different instruction sets
// (generic x86-64 = SSE2, and AVX2): the lower triangle of B'B in 2 × 2 tiles of columns (jr, kc),
// and the column sums.
DPMU_INLINE void block_gram(const double* block, std::ptrdiff_t stride, int columns, int rows, double* gram,
                            std::ptrdiff_t ld, double* sums) {
  for (int j = 0; j < columns; ++j) {
    const double* x = block + j * stride;
    v4d acc = {};
    for (int i = 0; i < rows; i += 4) acc += load4(x + i);
    sums[j] += lane_sum(acc);
  }
  for (int jr = 0; jr < columns; jr += 2) {
    const int a = columns - jr >= 2 ? 2 : 1;
    const double* x0 = block + jr * stride;
    const double* x1 = block + (jr + a - 1) * stride;
    for (int kc = 0; kc <= jr; kc += 2) {
      const double* y0 = block + kc * stride;
      const double* y1 = block + (kc + 1) * stride;  // kc + 1 <= jr < columns here
      v4d a00 = {}, a01 = {}, a10 = {}, a11 = {};
      if (kc < jr) {
        for (int i = 0; i < rows; i += 4) {
          const v4d u0 = load4(x0 + i), u1 = load4(x1 + i), w0 = load4(y0 + i), w1 = load4(y1 + i);
          a00 += u0 * w0;
          a01 += u0 * w1;
          a10 += u1 * w0;
          a11 += u1 * w1;
        }
        gram[kc * ld + jr] += lane_sum(a00);
        gram[(kc + 1) * ld + jr] += lane_sum(a01);
        if (a == 2) {
          gram[kc * ld + jr + 1] += lane_sum(a10);
          gram[(kc + 1) * ld + jr + 1] += lane_sum(a11);
        }
      } else {  // diagonal tile: (jr, jr), (jr + 1, jr), (jr + 1, jr + 1)
        for (int i = 0; i < rows; i += 4) {
          const v4d u0 = load4(x0 + i), u1 = load4(x1 + i);
          a00 += u0 * u0;
          a10 += u1 * u0;
          a11 += u1 * u1;
        }
        gram[jr * ld + jr] += lane_sum(a00);
        if (a == 2) {
          gram[jr * ld + jr + 1] += lane_sum(a10);
          gram[(jr + 1) * ld + jr + 1] += lane_sum(a11);
        }
      }
    }
  }
}

void block_gram_generic(const double* block, std::ptrdiff_t stride, int columns, int rows, double* gram,
                        std::ptrdiff_t ld, double* sums) {
  block_gram(block, stride, columns, rows, gram, ld, sums);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void block_gram_avx2(const double* block, std::ptrdiff_t stride, int columns, int rows,
                                                     double* gram, std::ptrdiff_t ld, double* sums) {
  block_gram(block, stride, columns, rows, gram, ld, sums);
}
#endif

#undef DPMU_INLINE

}  // namespace

void accumulate_block_gram(const double* block, std::ptrdiff_t stride, int columns, int rows,
                           Eigen::Ref<Eigen::MatrixXd> gram, Eigen::Ref<Eigen::VectorXd> sums, bool allow_avx2) {
  // gram is column-major with leading dimension outerStride(); entry (i, j) at i + j·ld.
  const std::ptrdiff_t ld = gram.outerStride();
#if defined(__x86_64__) && defined(__GNUC__)
  if (allow_avx2 && cpu_has_avx2()) {
    block_gram_avx2(block, stride, columns, rows, gram.data(), ld, sums.data());
    return;
  }
#endif
  block_gram_generic(block, stride, columns, rows, gram.data(), ld, sums.data());
}

Eigen::MatrixXd gram_matrix(const Eigen::Ref<const Eigen::MatrixXd>& data, double lower, double upper, bool centre,
                            std::uint64_t* clamped_entries) {
  GramAccumulator acc(static_cast<int>(data.cols()), lower, upper, centre);
  constexpr Eigen::Index kBlock = 4096;
  for (Eigen::Index start = 0; start < data.rows(); start += kBlock) {
    const Eigen::Index b = std::min(kBlock, data.rows() - start);
    acc.add(data.middleRows(start, b));
  }
  if (clamped_entries != nullptr) *clamped_entries = acc.clamped_entries();
  return acc.gram_matrix();
}

Eigen::VectorXd unique_entries(const Eigen::Ref<const Eigen::MatrixXd>& symmetric) {
  const Eigen::Index k = symmetric.rows();
  Eigen::VectorXd v(k * (k + 1) / 2);
  Eigen::Index u = 0;
  for (Eigen::Index j = 0; j < symmetric.cols(); ++j) {
    for (Eigen::Index i = j; i < k; ++i) v(u++) = symmetric(i, j);
  }
  return v;
}

}  // namespace dpmu::core
