#include "dpmu/core/block_random.hpp"

#include <stdexcept>
#include <string>

#include "dpmu/core/cpu_features.hpp"

namespace dpmu::core {

namespace {

typedef std::uint64_t u64x4 __attribute__((vector_size(32)));

#define DPMU_INLINE inline __attribute__((always_inline))

DPMU_INLINE u64x4 rotl(u64x4 x, int k) { return (x << k) | (x >> (64 - k)); }

// The four lanes' xoshiro256++ step (Blackman & Vigna 2021). Written once and inlined into two
// functions compiled for different instruction sets (generic x86-64 = SSE2, and AVX2).
DPMU_INLINE void xoshiro_x4(std::uint64_t (*state)[4], std::uint64_t* out, std::size_t n) {
  u64x4 s0, s1, s2, s3;
  __builtin_memcpy(&s0, state[0], sizeof(s0));
  __builtin_memcpy(&s1, state[1], sizeof(s1));
  __builtin_memcpy(&s2, state[2], sizeof(s2));
  __builtin_memcpy(&s3, state[3], sizeof(s3));
  for (std::size_t k = 0; k < n; k += 4) {
    const u64x4 w = rotl(s0 + s3, 23) + s0;
    const u64x4 t = s1 << 17;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 45);
    __builtin_memcpy(out + k, &w, sizeof(w));
  }
  __builtin_memcpy(state[0], &s0, sizeof(s0));
  __builtin_memcpy(state[1], &s1, sizeof(s1));
  __builtin_memcpy(state[2], &s2, sizeof(s2));
  __builtin_memcpy(state[3], &s3, sizeof(s3));
}

// 32-bit uniforms from words (see block_random.hpp), compiled for SSE2 and AVX2 like xoshiro_x4.
DPMU_INLINE void uniform32(const std::uint64_t* words, std::size_t m, double lower, double width, double* out) {
  constexpr double k = 0x1.0p-32;
  constexpr std::uint64_t two52_bits = 0x4330000000000000ULL;  // the double 2^52
  constexpr double two52 = 0x1.0p52;
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint64_t x = words[i];
    const std::uint64_t hi_bits = two52_bits | (x >> 32);
    const std::uint64_t lo_bits = two52_bits | (x & 0xffffffffULL);
    double hi, lo;
    __builtin_memcpy(&hi, &hi_bits, sizeof(double));
    __builtin_memcpy(&lo, &lo_bits, sizeof(double));
    out[2 * i] = lower + width * (((hi - two52) + 0.5) * k);
    out[2 * i + 1] = lower + width * (((lo - two52) + 0.5) * k);
  }
}

void uniform32_generic(const std::uint64_t* words, std::size_t m, double lower, double width, double* out) {
  uniform32(words, m, lower, width, out);
}

void fill_generic(std::uint64_t (*state)[4], std::uint64_t* out, std::size_t n) { xoshiro_x4(state, out, n); }

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void fill_avx2(std::uint64_t (*state)[4], std::uint64_t* out, std::size_t n) {
  xoshiro_x4(state, out, n);
}
__attribute__((target("avx2"))) void uniform32_avx2(const std::uint64_t* words, std::size_t m, double lower,
                                                    double width, double* out) {
  uniform32(words, m, lower, width, out);
}
#endif

#undef DPMU_INLINE

}  // namespace

Xoshiro256ppX4::Xoshiro256ppX4(std::uint64_t key0, std::uint64_t key1, std::uint64_t stream) {
  r123::Philox4x64 philox;
  for (int l = 0; l < lanes; ++l) {
    const auto r = philox(r123::Philox4x64::ctr_type{{static_cast<std::uint64_t>(l), stream, 0, 0}},
                          r123::Philox4x64::key_type{{key0, key1}});
    for (int i = 0; i < 4; ++i) state_[i][l] = r.v[i];
    if ((r.v[0] | r.v[1] | r.v[2] | r.v[3]) == 0) state_[0][l] = 1;
  }
}

void Xoshiro256ppX4::fill_words(std::span<std::uint64_t> out, bool allow_avx2) {
  if (out.size() % lanes != 0) {
    throw std::invalid_argument("Xoshiro256ppX4::fill_words: out.size() is " + std::to_string(out.size()) +
                                ", but must be a multiple of 4");
  }
#if defined(__x86_64__) && defined(__GNUC__)
  if (allow_avx2 && cpu_has_avx2()) {
    fill_avx2(state_, out.data(), out.size());
    return;
  }
#endif
  fill_generic(state_, out.data(), out.size());
}

void words_to_uniform32(std::span<const std::uint64_t> words, double lower, double upper, std::span<double> out,
                        bool allow_avx2) {
  if (out.size() != 2 * words.size()) {
    throw std::invalid_argument("words_to_uniform32: out.size() is " + std::to_string(out.size()) +
                                ", but must be 2 * words.size() = " + std::to_string(2 * words.size()));
  }
#if defined(__x86_64__) && defined(__GNUC__)
  if (allow_avx2 && cpu_has_avx2()) {
    uniform32_avx2(words.data(), words.size(), lower, upper - lower, out.data());
    return;
  }
#endif
  uniform32_generic(words.data(), words.size(), lower, upper - lower, out.data());
}

}  // namespace dpmu::core
