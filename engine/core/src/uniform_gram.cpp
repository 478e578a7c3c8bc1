#include "dpmu/core/uniform_gram.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "dpmu/core/checks.hpp"
#include "dpmu/core/cpu_features.hpp"

namespace dpmu::core {

namespace {

constexpr int kLanes = 8;         // int64 lane accumulators per quantity (max path width)
constexpr int kRowsPerLane = 16;  // rows a double lane accumulator adds before conversion
constexpr int kFoldEvery = 4096;  // kernel chunks (≤ 128 rows) between int64 → int128 folds
constexpr std::int64_t kOffset = (1LL << 31) + (1LL << 15);  // c: v = k − c = 2¹⁶ h + l

// Exactness budget (docs/methods.md §5.8 "Exact sufficient-statistic sampling"):
//  v = k − c with |v| ≤ 2³¹ + 2¹⁵ is split as v = 2¹⁶ h + l with h = round(v / 2¹⁶) (ties to even:
//  v / 2¹⁶ ∈ [−2¹⁵ − ½, 2¹⁵ − ½) gives h ∈ [−2¹⁵, 2¹⁵)) and |l| ≤ 2¹⁵, so |v·h|, |v·l| ≤ 2⁴⁶ + 2³⁰;
//  a double lane adds 16 of them per chunk: < 2⁵⁰·¹, an integer < 2⁵¹ held exactly by a double and
//  converted exactly by the 1.5·2⁵² trick (the v·h lanes hold v·(2¹⁶ h), the same integers times
//  2¹⁶, converted by 1.5·2⁶⁸); an int64 lane receives < 2⁵⁰·⁰¹ per chunk and is folded after at
//  most 4 096 chunks (< 2⁶²·⁰¹ < 2⁶³). The doubles 2¹⁶ h = (v + 1.5·2⁶⁸) − 1.5·2⁶⁸ and
//  l = v − 2¹⁶ h are exact (one rounding, to a multiple of 2¹⁶, in the first addition).

}  // namespace

// ---- the kernel: written once, compiled for three instruction sets; exact, so FMA is allowed ----
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")

namespace {

#define DPMU_INLINE inline __attribute__((always_inline))

// N-lane vectors (N = 2: SSE2, 4: AVX2, 8: AVX-512F).
template <int N>
struct Vec {
  typedef double D __attribute__((vector_size(8 * N)));
  typedef std::uint64_t U __attribute__((vector_size(8 * N)));
  typedef std::int64_t I __attribute__((vector_size(8 * N)));
  typedef std::uint32_t W __attribute__((vector_size(8 * N)));  // 2N 32-bit halves
};

template <class T>
DPMU_INLINE T load(const void* p) {
  T v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

template <class T>
DPMU_INLINE void store(void* p, T v) {
  __builtin_memcpy(p, &v, sizeof(v));
}

// Keep a value in a register (the compiler would otherwise fold its load into every use).
template <class T>
DPMU_INLINE void pin(T& x) {
  __asm__("" : "+v"(x));
}

// An integer-valued double x = 2^S m with |m| < 2⁵¹, added to the lanes as the int64 m, exactly:
// bits(x + 1.5·2^(52+S)) − bits(1.5·2^(52+S)). S = 0: the value itself; S = 16: a high half 2¹⁶ h.
template <int N, int S = 0>
DPMU_INLINE void add_as_int64(std::int64_t* lanes, typename Vec<N>::D x) {
  using I = typename Vec<N>::I;
  static_assert(S >= 0 && S < 62);
  constexpr double kOffset = 0x1.8p52 * static_cast<double>(std::int64_t{1} << S);
  constexpr std::int64_t kOffsetBits = std::bit_cast<std::int64_t>(kOffset);
  const typename Vec<N>::D y = x + kOffset;
  const I bits = load<I>(&y);
  store<I>(lanes, load<I>(lanes) + (bits - kOffsetBits));
}
static_assert(std::bit_cast<std::int64_t>(0x1.8p52) == 0x4338000000000000LL);
static_assert(std::bit_cast<std::int64_t>(0x1.8p52 * 65536.0) == 0x4438000000000000LL);

// The 2N halves of N words as doubles 2⁵² + k (the exponent bits of 2⁵² put above each half):
// `lo` takes the two halves of the even words of each 128-bit lane, `hi` those of the odd ones.
// Which row lands in which lane does not matter (the sums are exact), only that every column
// uses the same assignment.
template <int N>
DPMU_INLINE void halves(typename Vec<N>::U x, typename Vec<N>::D& lo, typename Vec<N>::D& hi) {
  using W = typename Vec<N>::W;
  using D = typename Vec<N>::D;
  const W w = load<W>(&x);
  W e;
  for (int i = 0; i < 2 * N; ++i) e[i] = 0x43300000U;  // high 32 bits of 2⁵²
  W a, b;
  if constexpr (N == 2) {
    a = __builtin_shufflevector(w, e, 0, 4, 1, 5);
    b = __builtin_shufflevector(w, e, 2, 6, 3, 7);
  } else if constexpr (N == 4) {
    a = __builtin_shufflevector(w, e, 0, 8, 1, 9, 4, 12, 5, 13);
    b = __builtin_shufflevector(w, e, 2, 10, 3, 11, 6, 14, 7, 15);
  } else {
    a = __builtin_shufflevector(w, e, 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
    b = __builtin_shufflevector(w, e, 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
  }
  lo = load<D>(&a);
  hi = load<D>(&b);
}

// Convert a chunk of 16·N rows (8·N words of each column, from `words`) into v = k − c and
// s = 2¹⁶ h with h = round(v / 2¹⁶) (ties to even), so that v = s + l with |l| ≤ 2¹⁵, |h| ≤ 2¹⁵
// (row stride 16·N); adds the chunk's lane sums of v to lane_sum.
template <int N>
DPMU_INLINE void convert_chunk(const std::uint64_t* words, int columns, double* v, double* s, std::int64_t* lane_sum) {
  using D = typename Vec<N>::D;
  using U = typename Vec<N>::U;
  constexpr int rows = kRowsPerLane * N;
  constexpr double off_v = 0x1.0p52 + static_cast<double>(kOffset);
  constexpr double round16 = 0x1.8p68;  // v + 1.5·2⁶⁸ rounds v to a multiple of 2¹⁶
  for (int j = 0; j < columns; ++j) {
    const std::uint64_t* w = words + j * UniformGramAccumulator::block_words;
    D sum = {};
    for (int r = 0; r < rows; r += 2 * N) {
      D lo, hi;
      halves<N>(load<U>(w + r / 2), lo, hi);
      const D v0 = lo - off_v, v1 = hi - off_v;
      D t0 = v0 + round16, t1 = v1 + round16;
      pin(t0);  // keep (v + M) − M from being simplified (it is not v: the addition rounds)
      pin(t1);
      store<D>(v + j * rows + r, v0);
      store<D>(v + j * rows + r + N, v1);
      store<D>(s + j * rows + r, t0 - round16);
      store<D>(s + j * rows + r + N, t1 - round16);
      sum += v0 + v1;
    }
    add_as_int64<N>(lane_sum + j * kLanes, sum);
  }
}

// Lane sums of v_a s_b and v_a l_b (l_b = v_b − s_b) over one converted chunk for the TA × TB
// pairs (a0 + i, b0 + t), all with a ≥ b.
template <int N, int TA, int TB>
DPMU_INLINE void tile_sums(const double* v, const double* s, int a0, int b0, std::int64_t* lane_h,
                           std::int64_t* lane_l) {
  using D = typename Vec<N>::D;
  constexpr int rows = kRowsPerLane * N;
  D ah[TA][TB] = {}, al[TA][TB] = {};
  for (int g = 0; g < kRowsPerLane; ++g) {
    const int o = g * N;
    D x[TA];
    for (int i = 0; i < TA; ++i) x[i] = load<D>(v + (a0 + i) * rows + o);
    for (int t = 0; t < TB; ++t) {
      D ys = load<D>(s + (b0 + t) * rows + o);
      D yl = load<D>(v + (b0 + t) * rows + o) - ys;
      pin(ys);
      pin(yl);
      for (int i = 0; i < TA; ++i) {
        ah[i][t] += x[i] * ys;
        al[i][t] += x[i] * yl;
      }
    }
  }
  for (int i = 0; i < TA; ++i) {
    for (int t = 0; t < TB; ++t) {
      const int a = a0 + i, b = b0 + t;
      const int idx = a * (a + 1) / 2 + b;
      add_as_int64<N, 16>(lane_h + idx * kLanes, ah[i][t]);
      add_as_int64<N>(lane_l + idx * kLanes, al[i][t]);
    }
  }
}

// The diagonal pairs (d[i], d[i]), i < K.
template <int N, int K>
DPMU_INLINE void diagonal_sums(const double* v, const double* s, const int* d, std::int64_t* lane_h,
                               std::int64_t* lane_l) {
  using D = typename Vec<N>::D;
  constexpr int rows = kRowsPerLane * N;
  D ah[K] = {}, al[K] = {};
  for (int g = 0; g < kRowsPerLane; ++g) {
    const int o = g * N;
    for (int i = 0; i < K; ++i) {
      D x = load<D>(v + d[i] * rows + o);
      D ys = load<D>(s + d[i] * rows + o);
      D yl = x - ys;
      pin(x);
      ah[i] += x * ys;
      al[i] += x * yl;
    }
  }
  for (int i = 0; i < K; ++i) {
    const int idx = d[i] * (d[i] + 1) / 2 + d[i];
    add_as_int64<N, 16>(lane_h + idx * kLanes, ah[i]);
    add_as_int64<N>(lane_l + idx * kLanes, al[i]);
  }
}

// All p(p+1)/2 pairs of one converted chunk, without padding: rows in pairs {a, a+1} (for odd p
// after a first row {0}), full 2 × 2 tiles below the diagonal, then the diagonal pieces.
template <int N>
DPMU_INLINE void chunk_sums(const double* v, const double* s, int columns, std::int64_t* lane_h, std::int64_t* lane_l) {
  int diag[64];
  int nd = 0;
  const int first = columns % 2;
  if (first) diag[nd++] = 0;
  for (int a = first; a + 1 < columns; a += 2) {
    // rows a, a + 1; full tiles for b0 + 1 < a + first ... : columns b < a + first
    const int full = a + first;  // b < full are below or on the diagonal for both rows
    for (int b0 = 0; b0 < full; b0 += 2) tile_sums<N, 2, 2>(v, s, a, b0, lane_h, lane_l);
    if (first) {
      diag[nd++] = a + 1;
    } else {
      tile_sums<N, 1, 2>(v, s, a + 1, a, lane_h, lane_l);  // (a + 1, a), (a + 1, a + 1)
      diag[nd++] = a;
    }
  }
  int i = 0;
  for (; i + 4 <= nd; i += 4) diagonal_sums<N, 4>(v, s, diag + i, lane_h, lane_l);
  switch (nd - i) {
    case 3:
      diagonal_sums<N, 3>(v, s, diag + i, lane_h, lane_l);
      break;
    case 2:
      diagonal_sums<N, 2>(v, s, diag + i, lane_h, lane_l);
      break;
    case 1:
      diagonal_sums<N, 1>(v, s, diag + i, lane_h, lane_l);
      break;
    default:
      break;
  }
}

// A full block (256 rows) in chunks of 16·N rows; returns the number of chunks.
template <int N>
DPMU_INLINE int full_block(const std::uint64_t* words, int columns, double* buffer, std::int64_t* lane_sum,
                           std::int64_t* lane_h, std::int64_t* lane_l) {
  constexpr int rows = kRowsPerLane * N;
  constexpr int chunks = UniformGramAccumulator::block_rows / rows;
  double* v = buffer;
  double* s = v + columns * rows;
  for (int c = 0; c < chunks; ++c) {
    convert_chunk<N>(words + c * rows / 2, columns, v, s, lane_sum);
    chunk_sums<N>(v, s, columns, lane_h, lane_l);
  }
  return chunks;
}

int full_block_generic(const std::uint64_t* words, int columns, double* buffer, std::int64_t* s, std::int64_t* h,
                       std::int64_t* l) {
  return full_block<2>(words, columns, buffer, s, h, l);  // SSE2: 2 lanes, 16 xmm registers
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) int full_block_avx2(const std::uint64_t* words, int columns, double* buffer,
                                                        std::int64_t* s, std::int64_t* h, std::int64_t* l) {
  return full_block<4>(words, columns, buffer, s, h, l);  // 4 lanes, 16 ymm registers
}
__attribute__((target("avx512f,fma"))) int full_block_avx512(const std::uint64_t* words, int columns, double* buffer,
                                                             std::int64_t* s, std::int64_t* h, std::int64_t* l) {
  return full_block<8>(words, columns, buffer, s, h, l);  // 8 lanes
}
#endif

// ---- avx512ifma: Winograd's inner products in exact 52-bit integer multiply-adds ----
//
// Pair the two rows of each word, x = hi32(w), y = lo32(w) (any fixed pairing of the rows works;
// the sums do not depend on it): over the words of a block,
//   Σ_rows k_a k_b = Σ_words (x_a x_b + y_a y_b) = Σ_words (x_a + y_b)(y_a + x_b) − ξ_a − ξ_b,
//   ξ_j = Σ_words x_j y_j,
// one product per pair and word instead of one per pair and row (Winograd 1968). The factors are
// below 2³³, the product below 2⁶⁶; vpmadd52luq / vpmadd52huq add its bits 0–51 and 52–103 to two
// uint64 lanes: below 2⁵² and 2¹⁴ per word, so a lane takes 2 047 words (< 2⁶³) before a fold.
#if defined(__x86_64__) && defined(__GNUC__)

#define DPMU_IFMA __attribute__((target("avx512f,avx512ifma"), always_inline)) inline

constexpr int kIfmaSteps = UniformGramAccumulator::block_words / 8;  // words per lane per block

// The halves x = hi32(w), y = lo32(w) of 8 words, zero-extended (computed where used: cheaper than
// storing them).
DPMU_IFMA void ifma_halves(const std::uint64_t* w, __m512i& x, __m512i& y) {
  const Vec<8>::U u = load<Vec<8>::U>(w);
  const Vec<8>::U hi = u >> 32, lo = u & 0xffffffffULL;
  x = load<__m512i>(&hi);
  y = load<__m512i>(&lo);
}

// Pairs (a0 + i, b0 + t) of one block (all with a ≥ b; DIAG: a0 = b0 and only t ≤ i), from the
// words (column j at words + j·128).
template <int TA, int TB, bool DIAG>
DPMU_IFMA void ifma_tile(const std::uint64_t* words, int a0, int b0, std::int64_t* lane_hi, std::int64_t* lane_lo) {
  constexpr int W = UniformGramAccumulator::block_words;
  __m512i lo[TA][TB], hi[TA][TB];
  for (int i = 0; i < TA; ++i) {
    for (int t = 0; t < TB; ++t) {
      if (DIAG && t > i) continue;
      const int a = a0 + i, b = b0 + t, q = a * (a + 1) / 2 + b;
      lo[i][t] = _mm512_loadu_si512(lane_lo + q * kLanes);
      hi[i][t] = _mm512_loadu_si512(lane_hi + q * kLanes);
    }
  }
  for (int g = 0; g < kIfmaSteps; ++g) {
    __m512i xa[TA], ya[TA];
    for (int i = 0; i < TA; ++i) ifma_halves(words + (a0 + i) * W + 8 * g, xa[i], ya[i]);
    for (int t = 0; t < TB; ++t) {
      __m512i xb, yb;
      if constexpr (DIAG) {
        xb = xa[t];
        yb = ya[t];
      } else {
        ifma_halves(words + (b0 + t) * W + 8 * g, xb, yb);
      }
      for (int i = 0; i < TA; ++i) {
        if (DIAG && t > i) continue;
        const __m512i f = _mm512_add_epi64(xa[i], yb), e = _mm512_add_epi64(ya[i], xb);
        lo[i][t] = _mm512_madd52lo_epu64(lo[i][t], f, e);
        hi[i][t] = _mm512_madd52hi_epu64(hi[i][t], f, e);
      }
    }
  }
  for (int i = 0; i < TA; ++i) {
    for (int t = 0; t < TB; ++t) {
      if (DIAG && t > i) continue;
      const int a = a0 + i, b = b0 + t, q = a * (a + 1) / 2 + b;
      _mm512_storeu_si512(lane_lo + q * kLanes, lo[i][t]);
      _mm512_storeu_si512(lane_hi + q * kLanes, hi[i][t]);
    }
  }
}

template <int TA>
DPMU_IFMA void ifma_row_group(const std::uint64_t* words, int a0, std::int64_t* lane_hi, std::int64_t* lane_lo) {
  for (int b0 = 0; b0 < a0; b0 += 3) ifma_tile<TA, 3, false>(words, a0, b0, lane_hi, lane_lo);
  ifma_tile<TA, TA, true>(words, a0, a0, lane_hi, lane_lo);
}

// One full block: the column sums and ξ into the lanes, then all pairs in groups of three columns.
__attribute__((target("avx512f,avx512ifma"))) void full_block_avx512ifma(const std::uint64_t* words, int columns,
                                                                         std::int64_t* lane_sum, std::int64_t* lane_xi,
                                                                         std::int64_t* lane_hi, std::int64_t* lane_lo) {
  constexpr int W = UniformGramAccumulator::block_words;
  for (int j = 0; j < columns; ++j) {
    __m512i sum = _mm512_loadu_si512(lane_sum + j * kLanes);
    __m512i xi_lo = _mm512_loadu_si512(lane_xi + (2 * j) * kLanes);
    __m512i xi_hi = _mm512_loadu_si512(lane_xi + (2 * j + 1) * kLanes);
    for (int g = 0; g < kIfmaSteps; ++g) {
      __m512i x, y;
      ifma_halves(words + j * W + 8 * g, x, y);
      sum = _mm512_add_epi64(sum, _mm512_add_epi64(x, y));
      xi_lo = _mm512_madd52lo_epu64(xi_lo, x, y);
      xi_hi = _mm512_madd52hi_epu64(xi_hi, x, y);
    }
    _mm512_storeu_si512(lane_sum + j * kLanes, sum);
    _mm512_storeu_si512(lane_xi + (2 * j) * kLanes, xi_lo);
    _mm512_storeu_si512(lane_xi + (2 * j + 1) * kLanes, xi_hi);
  }
  int a0 = 0;
  for (; a0 + 3 <= columns; a0 += 3) ifma_row_group<3>(words, a0, lane_hi, lane_lo);
  if (columns - a0 == 2) ifma_row_group<2>(words, a0, lane_hi, lane_lo);
  if (columns - a0 == 1) ifma_row_group<1>(words, a0, lane_hi, lane_lo);
}

#undef DPMU_IFMA

#endif

#undef DPMU_INLINE

}  // namespace

#pragma GCC pop_options

// ---- the accumulator ----

bool uniform_gram_path_available(UniformGramPath path) {
  switch (path) {
    case UniformGramPath::automatic:
    case UniformGramPath::generic:
      return true;
    case UniformGramPath::avx2:
      return cpu_has_avx2_fma();
    case UniformGramPath::avx512:
      return cpu_has_avx512f();
    case UniformGramPath::avx512ifma:
      return cpu_has_avx512ifma();
  }
  return false;
}

const char* to_string(UniformGramPath path) {
  switch (path) {
    case UniformGramPath::automatic:
      return "automatic";
    case UniformGramPath::generic:
      return "generic";
    case UniformGramPath::avx2:
      return "avx2";
    case UniformGramPath::avx512:
      return "avx512";
    case UniformGramPath::avx512ifma:
      return "avx512ifma";
  }
  return "?";
}

UniformGramAccumulator::UniformGramAccumulator(int columns, UniformGramPath path)
    : columns_(columns), pairs_(columns * (columns + 1) / 2), path_(path) {
  constexpr const char* fn = "UniformGramAccumulator";
  if (columns < 1 || columns > 64) {
    throw_invalid(fn, "columns is " + std::to_string(columns) + ", but must be in [1, 64]");
  }
  if (path_ == UniformGramPath::automatic) {
    path_ = cpu_has_avx512ifma() ? UniformGramPath::avx512ifma
            : cpu_has_avx512f()  ? UniformGramPath::avx512
            : cpu_has_avx2_fma() ? UniformGramPath::avx2
                                 : UniformGramPath::generic;
  }
  if (!uniform_gram_path_available(path_)) {
    throw_invalid(fn, std::string("the ") + to_string(path_) + " path is not supported by this CPU");
  }
  lane_sum_.assign(static_cast<std::size_t>(columns) * kLanes, 0);
  lane_h_.assign(static_cast<std::size_t>(pairs_) * kLanes, 0);
  lane_l_.assign(static_cast<std::size_t>(pairs_) * kLanes, 0);
  lane_xi_.assign(static_cast<std::size_t>(columns) * 2 * kLanes, 0);
  total_sum_.assign(static_cast<std::size_t>(columns), 0);
  total_vv_.assign(static_cast<std::size_t>(pairs_), 0);
  buffer_.assign(static_cast<std::size_t>(2 * columns) * kRowsPerLane * kLanes, 0.0);
}

// The lanes of the avx512ifma path hold uint64 parts (see uniform_gram.hpp).
namespace {
int128_t lane_total(const std::int64_t* lanes) {
  int128_t t = 0;
  for (int s = 0; s < kLanes; ++s) t += static_cast<std::uint64_t>(lanes[s]);
  return t;
}
}  // namespace

int128_t UniformGramAccumulator::xi_sum(int j) const {
  const std::int64_t* lanes = lane_xi_.data() + static_cast<std::size_t>(j) * 2 * kLanes;
  return lane_total(lanes) + lane_total(lanes + kLanes) * (int128_t{1} << 52);
}

int128_t UniformGramAccumulator::v_sum(int j) const {
  const std::int64_t* lanes = lane_sum_.data() + static_cast<std::size_t>(j) * kLanes;
  if (path_ == UniformGramPath::avx512ifma) {  // lanes: Σ k of pending_rows_ rows
    return total_sum_[static_cast<std::size_t>(j)] + lane_total(lanes) -
           static_cast<int128_t>(kOffset) * static_cast<int128_t>(pending_rows_);
  }
  int128_t v = total_sum_[static_cast<std::size_t>(j)];
  for (int s = 0; s < kLanes; ++s) v += lanes[s];
  return v;
}

int128_t UniformGramAccumulator::vv_sum(int a, int b) const {
  const std::size_t q = static_cast<std::size_t>(a * (a + 1) / 2 + b);
  const std::int64_t* h = lane_h_.data() + q * kLanes;
  const std::int64_t* l = lane_l_.data() + q * kLanes;
  if (path_ == UniformGramPath::avx512ifma) {
    // pending Σ k_a k_b = W − ξ_a − ξ_b; centred: − c (Σ k_a + Σ k_b) + m c²
    const int128_t w = lane_total(l) + lane_total(h) * (int128_t{1} << 52);
    const int128_t kk = w - xi_sum(a) - xi_sum(b);
    const std::int64_t* sa = lane_sum_.data() + static_cast<std::size_t>(a) * kLanes;
    const std::int64_t* sb = lane_sum_.data() + static_cast<std::size_t>(b) * kLanes;
    const int128_t c = kOffset;
    const int128_t m = static_cast<int128_t>(pending_rows_);
    return total_vv_[q] + kk - c * (lane_total(sa) + lane_total(sb)) + m * c * c;
  }
  int128_t hsum = 0, lsum = 0;
  for (int s = 0; s < kLanes; ++s) {
    hsum += h[s];
    lsum += l[s];
  }
  return total_vv_[q] + hsum * 65536 + lsum;  // Σ v_a v_b = 2¹⁶ Σ v_a h_b + Σ v_a l_b
}

void UniformGramAccumulator::fold() {
  std::vector<int128_t> vv(static_cast<std::size_t>(pairs_)), vs(static_cast<std::size_t>(columns_));
  for (int a = 0; a < columns_; ++a) {
    vs[static_cast<std::size_t>(a)] = v_sum(a);
    for (int b = 0; b <= a; ++b) vv[static_cast<std::size_t>(a * (a + 1) / 2 + b)] = vv_sum(a, b);
  }
  total_sum_.swap(vs);
  total_vv_.swap(vv);
  std::fill(lane_sum_.begin(), lane_sum_.end(), 0);
  std::fill(lane_h_.begin(), lane_h_.end(), 0);
  std::fill(lane_l_.begin(), lane_l_.end(), 0);
  std::fill(lane_xi_.begin(), lane_xi_.end(), 0);
  pending_chunks_ = 0;
  pending_rows_ = 0;
}

void UniformGramAccumulator::add_block(const std::uint64_t* words, int rows) {
  constexpr const char* fn = "UniformGramAccumulator::add_block";
  if (rows < 0 || rows > block_rows) {
    throw_invalid(fn, "rows is " + std::to_string(rows) + ", but must be in [0, 256]");
  }
  if (rows_ + static_cast<std::uint64_t>(rows) > (std::uint64_t{1} << 31)) {
    throw_invalid(fn, "more than 2^31 rows: the exact 128-bit centring would overflow");
  }
  if (rows == block_rows) {
    double* buf = buffer_.data();
    std::int64_t* s = lane_sum_.data();
    std::int64_t* h = lane_h_.data();
    std::int64_t* l = lane_l_.data();
    switch (path_) {
#if defined(__x86_64__) && defined(__GNUC__)
      case UniformGramPath::avx512ifma:
        full_block_avx512ifma(words, columns_, s, lane_xi_.data(), h, l);
        pending_chunks_ += kIfmaSteps;  // here: words per lane
        pending_rows_ += static_cast<std::uint64_t>(rows);
        break;
      case UniformGramPath::avx512:
        pending_chunks_ += full_block_avx512(words, columns_, buf, s, h, l);
        break;
      case UniformGramPath::avx2:
        pending_chunks_ += full_block_avx2(words, columns_, buf, s, h, l);
        break;
#else
      case UniformGramPath::avx512ifma:  // not built here: uniform_gram_path_available rejects them
      case UniformGramPath::avx512:
      case UniformGramPath::avx2:
#endif
      case UniformGramPath::automatic:  // resolved in the constructor
      case UniformGramPath::generic:
        pending_chunks_ += full_block_generic(words, columns_, buf, s, h, l);
        break;
    }
    // a block adds at most 8 chunks (generic path); avx512ifma: at most 2 047 words per lane
    const int limit = path_ == UniformGramPath::avx512ifma ? 2047 - kIfmaSteps : kFoldEvery - 8;
    if (pending_chunks_ > limit) fold();
    rows_ += static_cast<std::uint64_t>(rows);
  } else {
    add_block_rows(words, 0, rows);
  }
}

void UniformGramAccumulator::add_block_rows(const std::uint64_t* words, int first, int last) {
  constexpr const char* fn = "UniformGramAccumulator::add_block_rows";
  if (first < 0 || last < first || last > block_rows) {
    throw_invalid(fn, "rows [" + std::to_string(first) + ", " + std::to_string(last) + ") are not within [0, 256]");
  }
  const int rows = last - first;
  if (rows_ + static_cast<std::uint64_t>(rows) > (std::uint64_t{1} << 31)) {
    throw_invalid(fn, "more than 2^31 rows: the exact 128-bit centring would overflow");
  }
  // Exact scalar sums straight into the 128-bit totals.
  std::int64_t vrow[64];
  for (int r = first; r < last; ++r) {
    for (int j = 0; j < columns_; ++j) {
      const std::uint64_t w = words[j * block_words + (r < block_words ? r : r - block_words)];
      const std::int64_t k = static_cast<std::int64_t>(r < block_words ? (w >> 32) : (w & 0xffffffffULL));
      vrow[j] = k - kOffset;
      total_sum_[static_cast<std::size_t>(j)] += vrow[j];
    }
    for (int a = 0; a < columns_; ++a) {
      for (int b = 0; b <= a; ++b) {
        total_vv_[static_cast<std::size_t>(a * (a + 1) / 2 + b)] += static_cast<int128_t>(vrow[a]) * vrow[b];
      }
    }
  }
  rows_ += static_cast<std::uint64_t>(rows);
}

int128_t UniformGramAccumulator::sum(int j) const {
  return v_sum(j) + static_cast<int128_t>(kOffset) * static_cast<int128_t>(rows_);
}

int128_t UniformGramAccumulator::cross_sum(int a, int b) const {
  if (b > a) std::swap(a, b);
  // Σ k_a k_b = Σ (v_a + c)(v_b + c) = Σ v_a v_b + c (Σ v_a + Σ v_b) + n c²
  const int128_t c = kOffset;
  const int128_t n = static_cast<int128_t>(rows_);
  return vv_sum(a, b) + c * (v_sum(a) + v_sum(b)) + n * c * c;
}

Eigen::MatrixXd UniformGramAccumulator::centred_gram(double lower, double upper) const {
  constexpr const char* fn = "UniformGramAccumulator::centred_gram";
  if (rows_ < 2) throw_domain(fn, "rows", static_cast<double>(rows_), ">= 2");
  check_ordered_limits(fn, "lower", lower, "upper", upper);
  const double width = upper - lower;
  const double scale = width * width * 0x1.0p-64;
  const int128_t n = static_cast<int128_t>(rows_);
  const double nd = static_cast<double>(rows_);
  // Shift invariance: n Σ k_a k_b − Σ k_a Σ k_b = n Σ v_a v_b − Σ v_a Σ v_b; |·| < 2¹²⁶ for n ≤ 2³¹.
  std::vector<int128_t> vs(static_cast<std::size_t>(columns_));
  for (int j = 0; j < columns_; ++j) vs[static_cast<std::size_t>(j)] = v_sum(j);
  Eigen::MatrixXd g(columns_, columns_);
  for (int a = 0; a < columns_; ++a) {
    for (int b = 0; b <= a; ++b) {
      const int128_t vv = vv_sum(a, b);
      const int128_t numerator = n * vv - vs[static_cast<std::size_t>(a)] * vs[static_cast<std::size_t>(b)];
      const double value = static_cast<double>(numerator) / nd * scale;
      g(a, b) = value;
      g(b, a) = value;
    }
  }
  return g;
}

Eigen::VectorXd UniformGramAccumulator::means(double lower, double upper) const {
  constexpr const char* fn = "UniformGramAccumulator::means";
  if (rows_ < 1) throw_domain(fn, "rows", 0.0, ">= 1");
  check_ordered_limits(fn, "lower", lower, "upper", upper);
  Eigen::VectorXd m(columns_);
  for (int j = 0; j < columns_; ++j) {
    const double mean_k = static_cast<double>(sum(j)) / static_cast<double>(rows_);
    m(j) = lower + (upper - lower) * ((mean_k + 0.5) * 0x1.0p-32);
  }
  return m;
}

std::vector<int128_t> uniform_gram_reference(const std::vector<std::uint32_t>& k, int columns) {
  const int d = columns + 1;
  std::vector<int128_t> out(static_cast<std::size_t>(d * d), 0);
  const std::size_t n = k.size() / static_cast<std::size_t>(columns);
  std::vector<int128_t> row(static_cast<std::size_t>(d));
  for (std::size_t i = 0; i < n; ++i) {
    row[0] = 1;
    for (int j = 0; j < columns; ++j)
      row[static_cast<std::size_t>(j + 1)] = k[i * static_cast<std::size_t>(columns) + static_cast<std::size_t>(j)];
    for (int a = 0; a < d; ++a) {
      for (int b = 0; b < d; ++b)
        out[static_cast<std::size_t>(a * d + b)] += row[static_cast<std::size_t>(a)] * row[static_cast<std::size_t>(b)];
    }
  }
  return out;
}

}  // namespace dpmu::core
