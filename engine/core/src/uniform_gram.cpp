#include "dpmu/core/uniform_gram.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/cpu_features.hpp"

namespace dpmu::core {

namespace {

constexpr int kLanes = 8;
constexpr int kHalfRows = 128;                               // rows per kernel call (one half of a block)
constexpr int kGroups = kHalfRows / kLanes;                  // 16 rows per lane per half
constexpr int kFoldEvery = 2048;                             // halves between int64 → int128 folds
constexpr std::int64_t kOffset = (1LL << 31) + (1LL << 15);  // c: v = k − c = 2¹⁶ h + l

// Exactness budget (docs/methods.md "Exact sufficient-statistic sampling"):
//  |v| ≤ 2³¹ + 2¹⁵, |h|, |l| ≤ 2¹⁵, so |v·h|, |v·l| ≤ 2⁴⁶ + 2³⁰; a lane adds 16 of them per half:
//  < 2⁵⁰·¹, an integer < 2⁵¹ held exactly by a double and converted exactly by the 1.5·2⁵² trick;
//  the int64 lanes receive < 2⁵¹ per half and are folded after 2 048 halves (< 2⁶²).

int round_up(int x, int m) { return (x + m - 1) / m * m; }

}  // namespace

// ---- the kernel: written once, compiled for three instruction sets; exact, so FMA is allowed ----
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")

namespace {

typedef double v8d __attribute__((vector_size(64)));
typedef std::uint64_t u8x64 __attribute__((vector_size(64)));
typedef std::int64_t i8x64 __attribute__((vector_size(64)));

#define DPMU_INLINE inline __attribute__((always_inline))

DPMU_INLINE v8d load8(const double* p) {
  v8d v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

DPMU_INLINE void store8(double* p, v8d v) { __builtin_memcpy(p, &v, sizeof(v)); }

// An integer-valued double x with |x| < 2⁵¹ as int64, exactly: bits(x + 1.5·2⁵²) − bits(1.5·2⁵²).
DPMU_INLINE void add_as_int64(std::int64_t* lanes, v8d x) {
  constexpr double magic = 0x1.8p52;
  const v8d m = {magic, magic, magic, magic, magic, magic, magic, magic};
  const v8d y = x + m;
  i8x64 bits, acc;
  __builtin_memcpy(&bits, &y, sizeof(bits));
  __builtin_memcpy(&acc, lanes, sizeof(acc));
  constexpr std::int64_t magic_bits = 0x4338000000000000LL;
  acc += bits - magic_bits;
  __builtin_memcpy(lanes, &acc, sizeof(acc));
}

// Convert one half (0: high 32 bits of the words, 1: low 32 bits) of a block into v, h, l.
DPMU_INLINE void convert_half(const std::uint64_t* words, int columns, int half, double* v, double* h, double* l) {
  constexpr std::uint64_t two52 = 0x4330000000000000ULL;  // bits of 2⁵²
  const v8d off_v = v8d{} + (0x1.0p52 + static_cast<double>(kOffset));
  const v8d off_hl = v8d{} + (0x1.0p52 + 0x1.0p15);
  for (int j = 0; j < columns; ++j) {
    const std::uint64_t* w = words + j * UniformGramAccumulator::block_words;
    for (int r = 0; r < kHalfRows; r += kLanes) {
      u8x64 x;
      __builtin_memcpy(&x, w + r, sizeof(x));
      const u8x64 k = half == 0 ? (x >> 32) : (x & 0xffffffffULL);
      const u8x64 kv = k | two52;
      const u8x64 kh = (k >> 16) | two52;
      const u8x64 kl = (k & 0xffffULL) | two52;
      v8d dv, dh, dl;
      __builtin_memcpy(&dv, &kv, sizeof(dv));
      __builtin_memcpy(&dh, &kh, sizeof(dh));
      __builtin_memcpy(&dl, &kl, sizeof(dl));
      store8(v + j * kHalfRows + r, dv - off_v);
      store8(h + j * kHalfRows + r, dh - off_hl);
      store8(l + j * kHalfRows + r, dl - off_hl);
    }
  }
}

// Lane sums of v_j and of v_a h_b, v_a l_b (a ≥ b) over one converted half, in 2 × 4 tiles of
// (a, b); padded columns (a < 2⌈p/2⌉, b < 4⌈p/4⌉) hold zeros and their results are dropped.
DPMU_INLINE void half_sums(const double* v, const double* h, const double* l, int columns, std::int64_t* lane_sum,
                           std::int64_t* lane_h, std::int64_t* lane_l) {
  for (int j = 0; j < columns; ++j) {
    v8d acc = {};
    for (int g = 0; g < kGroups; ++g) acc += load8(v + j * kHalfRows + g * kLanes);
    add_as_int64(lane_sum + j * kLanes, acc);
  }
  for (int a0 = 0; a0 < columns; a0 += 2) {
    for (int b0 = 0; b0 <= a0 + 1 && b0 < columns; b0 += 4) {
      v8d ah[2][4] = {}, al[2][4] = {};
      const double* va0 = v + a0 * kHalfRows;
      const double* va1 = va0 + kHalfRows;
      const double* hb = h + b0 * kHalfRows;
      const double* lb = l + b0 * kHalfRows;
      for (int g = 0; g < kGroups; ++g) {
        const int o = g * kLanes;
        const v8d x0 = load8(va0 + o), x1 = load8(va1 + o);
        for (int t = 0; t < 4; ++t) {
          const v8d yh = load8(hb + t * kHalfRows + o), yl = load8(lb + t * kHalfRows + o);
          ah[0][t] += x0 * yh;
          al[0][t] += x0 * yl;
          ah[1][t] += x1 * yh;
          al[1][t] += x1 * yl;
        }
      }
      for (int s = 0; s < 2; ++s) {
        const int a = a0 + s;
        if (a >= columns) continue;
        for (int t = 0; t < 4; ++t) {
          const int b = b0 + t;
          if (b > a) continue;
          const int idx = a * (a + 1) / 2 + b;
          add_as_int64(lane_h + idx * kLanes, ah[s][t]);
          add_as_int64(lane_l + idx * kLanes, al[s][t]);
        }
      }
    }
  }
}

DPMU_INLINE void full_block(const std::uint64_t* words, int columns, double* buffer, std::int64_t* lane_sum,
                            std::int64_t* lane_h, std::int64_t* lane_l) {
  const int pa = round_up(columns, 2);
  const int pb = round_up(columns, 4);
  double* v = buffer;
  double* h = v + pa * kHalfRows;
  double* l = h + pb * kHalfRows;
  for (int half = 0; half < 2; ++half) {
    convert_half(words, columns, half, v, h, l);
    half_sums(v, h, l, columns, lane_sum, lane_h, lane_l);
  }
}

void full_block_generic(const std::uint64_t* words, int columns, double* buffer, std::int64_t* s, std::int64_t* h,
                        std::int64_t* l) {
  full_block(words, columns, buffer, s, h, l);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) void full_block_avx2(const std::uint64_t* words, int columns, double* buffer,
                                                         std::int64_t* s, std::int64_t* h, std::int64_t* l) {
  full_block(words, columns, buffer, s, h, l);
}
__attribute__((target("avx512f,fma"))) void full_block_avx512(const std::uint64_t* words, int columns, double* buffer,
                                                              std::int64_t* s, std::int64_t* h, std::int64_t* l) {
  full_block(words, columns, buffer, s, h, l);
}
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
    path_ = cpu_has_avx512f()    ? UniformGramPath::avx512
            : cpu_has_avx2_fma() ? UniformGramPath::avx2
                                 : UniformGramPath::generic;
  }
  if (!uniform_gram_path_available(path_)) {
    throw_invalid(fn, std::string("the ") + to_string(path_) + " path is not supported by this CPU");
  }
  lane_sum_.assign(static_cast<std::size_t>(columns) * kLanes, 0);
  lane_h_.assign(static_cast<std::size_t>(pairs_) * kLanes, 0);
  lane_l_.assign(static_cast<std::size_t>(pairs_) * kLanes, 0);
  total_sum_.assign(static_cast<std::size_t>(columns), 0);
  total_vv_.assign(static_cast<std::size_t>(pairs_), 0);
  buffer_.assign(static_cast<std::size_t>(round_up(columns, 2) + 2 * round_up(columns, 4)) * kHalfRows, 0.0);
}

void UniformGramAccumulator::fold() {
  for (int j = 0; j < columns_; ++j) {
    for (int s = 0; s < kLanes; ++s) {
      total_sum_[static_cast<std::size_t>(j)] += lane_sum_[static_cast<std::size_t>(j * kLanes + s)];
    }
  }
  for (int q = 0; q < pairs_; ++q) {
    int128_t hsum = 0, lsum = 0;
    for (int s = 0; s < kLanes; ++s) {
      hsum += lane_h_[static_cast<std::size_t>(q * kLanes + s)];
      lsum += lane_l_[static_cast<std::size_t>(q * kLanes + s)];
    }
    total_vv_[static_cast<std::size_t>(q)] += hsum * 65536 + lsum;
  }
  std::fill(lane_sum_.begin(), lane_sum_.end(), 0);
  std::fill(lane_h_.begin(), lane_h_.end(), 0);
  std::fill(lane_l_.begin(), lane_l_.end(), 0);
  pending_halves_ = 0;
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
      case UniformGramPath::avx512:
        full_block_avx512(words, columns_, buf, s, h, l);
        break;
      case UniformGramPath::avx2:
        full_block_avx2(words, columns_, buf, s, h, l);
        break;
#endif
      default:
        full_block_generic(words, columns_, buf, s, h, l);
        break;
    }
    pending_halves_ += 2;
    if (pending_halves_ >= kFoldEvery) fold();
  } else {
    // Partial block: exact scalar sums straight into the 128-bit totals.
    std::int64_t vrow[64];
    for (int r = 0; r < rows; ++r) {
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
  }
  rows_ += static_cast<std::uint64_t>(rows);
}

int128_t UniformGramAccumulator::sum(int j) const {
  int128_t v = total_sum_[static_cast<std::size_t>(j)];
  for (int s = 0; s < kLanes; ++s) v += lane_sum_[static_cast<std::size_t>(j * kLanes + s)];
  return v + static_cast<int128_t>(kOffset) * static_cast<int128_t>(rows_);
}

int128_t UniformGramAccumulator::cross_sum(int a, int b) const {
  if (b > a) std::swap(a, b);
  const int q = a * (a + 1) / 2 + b;
  int128_t hsum = 0, lsum = 0;
  for (int s = 0; s < kLanes; ++s) {
    hsum += lane_h_[static_cast<std::size_t>(q * kLanes + s)];
    lsum += lane_l_[static_cast<std::size_t>(q * kLanes + s)];
  }
  const int128_t vv = total_vv_[static_cast<std::size_t>(q)] + hsum * 65536 + lsum;
  // Σ k_a k_b = Σ (v_a + c)(v_b + c) = Σ v_a v_b + c (Σ v_a + Σ v_b) + n c²
  const int128_t c = kOffset;
  const int128_t n = static_cast<int128_t>(rows_);
  const int128_t va = sum(a) - c * n;
  const int128_t vb = sum(b) - c * n;
  return vv + c * (va + vb) + n * c * c;
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
  for (int j = 0; j < columns_; ++j) vs[static_cast<std::size_t>(j)] = sum(j) - static_cast<int128_t>(kOffset) * n;
  Eigen::MatrixXd g(columns_, columns_);
  for (int a = 0; a < columns_; ++a) {
    for (int b = 0; b <= a; ++b) {
      const int q = a * (a + 1) / 2 + b;
      int128_t hsum = 0, lsum = 0;
      for (int s = 0; s < kLanes; ++s) {
        hsum += lane_h_[static_cast<std::size_t>(q * kLanes + s)];
        lsum += lane_l_[static_cast<std::size_t>(q * kLanes + s)];
      }
      const int128_t vv = total_vv_[static_cast<std::size_t>(q)] + hsum * 65536 + lsum;
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
