#pragma once
/// @file uniform_gram.hpp
/// Exact Gram matrix of [1 X] for predictors that are 32-bit uniforms (docs/methods.md §5.8 and
/// "Exact sufficient-statistic sampling"): the column sums Σ k_j and cross products Σ k_a k_b of
/// the integers k ∈ [0, 2³²) behind x = lower + (upper − lower)(k + 1/2) 2⁻³² (the mapping of
/// core::words_to_uniform32) are accumulated **exactly**, in integer arithmetic carried by
/// doubles (every product and partial sum is an integer below 2⁵³) and 64/128-bit integers, or
/// (avx512ifma) in 52-bit integer multiply-adds of Winograd's paired rows.
///
/// Guarantee: because every sum is exact, the result does not depend on the order in which rows
/// are added, the block boundaries, the instruction set (generic x86-64, AVX2 + FMA, AVX-512F,
/// AVX-512 IFMA; FMA or not, since no product or sum is ever rounded — the double paths' split
/// v = 2¹⁶ h + l rounds v to a multiple of 2¹⁶ only to choose h, and l = v − 2¹⁶ h is exact) or
/// the number of threads that produced the blocks. The only floating-point roundings are in centred_gram(): one
/// conversion of an exact 128-bit integer to double, one division by n and one multiplication by the constant (upper −
/// lower)² 2⁻⁶⁴, in a fixed order, so the returned matrix has the same bits on every path and CPU (IEEE-754 double,
/// round to nearest). Tested in tests/core/uniform_gram_test.cpp.

#include <Eigen/Dense>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace dpmu::core {

__extension__ typedef __int128 int128_t;

/// Instruction-set path of the exact kernel. All paths give identical sums (exact arithmetic).
enum class UniformGramPath {
  automatic,   ///< the fastest available: avx512ifma, else avx512, else avx2, else generic
  generic,     ///< x86-64 baseline (SSE2) or portable C++
  avx2,        ///< AVX2 + FMA
  avx512,      ///< AVX-512F
  avx512ifma,  ///< AVX-512F + IFMA: 52-bit integer multiply-adds, Winograd's pairing of rows (half the products)
};

/// True if `path` can run on this CPU (automatic and generic always can).
bool uniform_gram_path_available(UniformGramPath path);

/// Name of a path ("automatic", "generic", "avx2", "avx512", "avx512ifma").
const char* to_string(UniformGramPath path);

/// Allocator of cache-line-aligned (64-byte) storage: the exact kernel's buffers and its callers'
/// word blocks start on a cache line, so no SIMD load is split across two lines and the relative
/// placement of the buffers (hence their 4K aliasing) does not depend on the heap's history.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t alignment{64};
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, alignment); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }
};

/// A block of words for UniformGramAccumulator::add_block (block_words per column), cache-line aligned.
using UniformWordBlock = std::vector<std::uint64_t, CacheLineAllocator<std::uint64_t>>;

/// Streaming exact accumulator of the Gram matrix of [1 X], X with `columns` columns of 32-bit
/// uniforms delivered as 64-bit words (two uniforms per word).
///
/// Block layout (add_block): column j's words are words[j·block_words … j·block_words + 127];
/// row r < 128 of the block is the high half hi32(w_r) of word r, row 128 + r the low half
/// lo32(w_r) (the same halves as core::words_to_uniform32; the assignment of halves to rows is
/// a fixed bijection, so the rows stay iid). Memory O(columns²); no allocation after construction.
class UniformGramAccumulator {
 public:
  static constexpr int block_rows = 256;   ///< rows per full block
  static constexpr int block_words = 128;  ///< words per column per block

  /// @param columns p ≥ 1 (at most 64). @param path instruction set (automatic: the fastest).
  /// @throws std::invalid_argument for columns ∉ [1, 64] or a path this CPU lacks.
  explicit UniformGramAccumulator(int columns, UniformGramPath path = UniformGramPath::automatic);

  /// Add the first `rows` ≤ block_rows rows of one block (layout above; a partial block uses the
  /// rows 0 … rows − 1 of that layout, so words beyond them are ignored). Full blocks go through
  /// the SIMD kernel, partial ones through exact scalar code.
  /// @throws std::invalid_argument for rows ∉ [0, 256] or more than 2³¹ rows in total.
  void add_block(const std::uint64_t* words, int rows);
  /// Add the rows first … last − 1 of one block (layout above), by the exact scalar code: adding
  /// [0, m) and then [m, 256) of a block gives the same sums, bit for bit, as add_block(words, 256)
  /// (a stream of rows can be read out at any row count without changing the rows after it).
  /// @throws std::invalid_argument unless 0 ≤ first ≤ last ≤ 256, or for more than 2³¹ rows.
  void add_block_rows(const std::uint64_t* words, int first, int last);

  int columns() const { return columns_; }
  std::uint64_t rows() const { return rows_; }
  UniformGramPath path() const { return path_; }

  /// Exact Σ_i k_ij over the rows added so far.
  int128_t sum(int j) const;
  /// Exact Σ_i k_ia k_ib (symmetric in a, b).
  int128_t cross_sum(int a, int b) const;

  /// The centred Gram matrix of X = lower + (upper − lower)(K + 1/2)2⁻³²:
  /// G_ab = Σ_i (x_ia − x̄_a)(x_ib − x̄_b) = w² 2⁻⁶⁴ (n Σ k_a k_b − Σ k_a Σ k_b) / n, w = upper − lower,
  /// with the numerator exact (128-bit) and then double(numerator) / n · (w² 2⁻⁶⁴).
  /// columns × columns. @throws std::domain_error if fewer than 2 rows or lower ≥ upper.
  Eigen::MatrixXd centred_gram(double lower, double upper) const;

  /// Column means x̄_j = lower + w (Σ k_j / n + 1/2) 2⁻³². @throws std::domain_error if no rows.
  Eigen::VectorXd means(double lower, double upper) const;

 private:
  void fold();                          // int64 lanes → 128-bit totals
  int128_t v_sum(int j) const;          // Σ v_j (totals + lanes)
  int128_t vv_sum(int a, int b) const;  // Σ v_a v_b (a ≥ b; totals + lanes)
  int128_t xi_sum(int j) const;         // avx512ifma: pending Σ over words of hi32(w_j) lo32(w_j)
  int columns_;
  int pairs_;
  UniformGramPath path_;
  std::uint64_t rows_ = 0;
  int pending_chunks_ = 0;          // kernel chunks added to the int64 lanes since the last fold
  std::uint64_t pending_rows_ = 0;  // avx512ifma: rows in the lanes since the last fold
  // Sums of v = k − c (c = 2³¹ + 2¹⁵) split as v = 2¹⁶ h + l (h, l ∈ [−2¹⁵, 2¹⁵)):
  // Σ v_a v_b = 2¹⁶ Σ v_a h_b + Σ v_a l_b. Lanes: 8 int64 per quantity.
  template <class T>
  using Aligned = std::vector<T, CacheLineAllocator<T>>;
  Aligned<std::int64_t> lane_sum_;  // [columns][8]
  Aligned<std::int64_t> lane_h_;    // [pairs][8], pair (a ≥ b) at a(a+1)/2 + b
  Aligned<std::int64_t> lane_l_;    // [pairs][8]
  // avx512ifma instead: lane_sum_ holds Σ k (not v); lane_h_, lane_l_ the high (bits ≥ 52) and low
  // 52-bit parts of Σ over words (hi_a + lo_b)(lo_a + hi_b) (Winograd), as uint64; lane_xi_ the
  // same parts of Σ hi_j lo_j: [columns][2][8].
  Aligned<std::int64_t> lane_xi_;
  std::vector<int128_t> total_sum_;  // Σ v_j
  std::vector<int128_t> total_vv_;   // Σ v_a v_b, packed like the pairs
  Aligned<double> buffer_;           // double paths: one converted chunk, v and 2¹⁶ h
};

/// Exact reference for tests: the same sums from the rows one at a time in 128-bit integers.
/// @param k n × columns matrix of the 32-bit integers (as std::uint32_t, row-major: k[i·columns + j]).
/// Returns the (columns+1)² matrix of Σ over rows of [1 k][1 k]' as 128-bit integers, row-major.
std::vector<int128_t> uniform_gram_reference(const std::vector<std::uint32_t>& k, int columns);

}  // namespace dpmu::core
