#pragma once
/// @file block_random.hpp
/// Block generators for simulation hot loops: counter-based Philox4x64-10 (Salmon, Moraes, Dror
/// & Shaw 2011, "Parallel random numbers: as easy as 1, 2, 3", SC'11; Random123) producing
/// whole arrays of uniforms and normals without per-number branches or virtual calls.
///
/// Use: key a `PhiloxBlockGenerator` with two 64-bit words drawn from a replicate's `RngStream`
/// (STYLE.md §3.3: "RngStream may seed a fast generator from one Philox block"), so the numbers
/// stay a pure function of (master_seed, stream key, replicate, purpose).
/// Simulation noise only: never use for releasing real data.

#include <Random123/philox.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

namespace dpmu::core {

/// Philox4x64-10 in counter mode with a fixed key; the counter is {block, 0, 0, 0} and each
/// call of the bijection yields four 64-bit words. Deterministic given (key0, key1).
class PhiloxBlockGenerator {
 public:
  /// @param key0, key1 the Philox key (e.g. two words of a replicate's data stream).
  PhiloxBlockGenerator(std::uint64_t key0, std::uint64_t key1) : key_{{key0, key1}} {}

  /// Fill `out` with the next out.size() 64-bit words (whole Philox blocks; if out.size() is
  /// not a multiple of 4 the unused words of the last block are discarded). Deterministic.
  void fill_words(std::span<std::uint64_t> out) {
    std::size_t i = 0;
    const std::size_t n = out.size();
    r123::Philox4x64 philox;
    for (; i + 4 <= n; i += 4) {
      const auto r = philox(r123::Philox4x64::ctr_type{{counter_++, 0, 0, 0}}, key_);
      out[i] = r.v[0];
      out[i + 1] = r.v[1];
      out[i + 2] = r.v[2];
      out[i + 3] = r.v[3];
    }
    if (i < n) {
      const auto r = philox(r123::Philox4x64::ctr_type{{counter_++, 0, 0, 0}}, key_);
      for (std::size_t j = 0; i < n; ++i, ++j) out[i] = r.v[j];
    }
  }

  /// Philox blocks used so far (the counter).
  std::uint64_t blocks_used() const { return counter_; }

 private:
  r123::Philox4x64::key_type key_;
  std::uint64_t counter_ = 0;
};

/// xoshiro256++ (Blackman & Vigna 2021, "Scrambled linear pseudorandom number generators", ACM
/// TOMS 47(4)), a sequential generator (period 2²⁵⁶ − 1, passes BigCrush), seeded with the four
/// words of Philox4x64-10 block 0 under key (key0, key1) — the seeding STYLE.md §3.3 allows.
/// Same interface as PhiloxBlockGenerator (fill_words); ≈ 1 ns per word instead of ≈ 4.
/// Deterministic given (key0, key1).
class Xoshiro256ppBlockGenerator {
 public:
  /// @param key0, key1 key of the Philox block that seeds the state (never all zero).
  Xoshiro256ppBlockGenerator(std::uint64_t key0, std::uint64_t key1) {
    r123::Philox4x64 philox;
    const auto r = philox(r123::Philox4x64::ctr_type{{0, 0, 0, 0}}, r123::Philox4x64::key_type{{key0, key1}});
    for (int i = 0; i < 4; ++i) s_[i] = r.v[i];
    if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;
  }

  /// Fill `out` with the next out.size() 64-bit words. Deterministic.
  void fill_words(std::span<std::uint64_t> out) {
    std::uint64_t s0 = s_[0], s1 = s_[1], s2 = s_[2], s3 = s_[3];
    for (auto& w : out) {
      w = rotl(s0 + s3, 23) + s0;
      const std::uint64_t t = s1 << 17;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = rotl(s3, 45);
    }
    s_[0] = s0;
    s_[1] = s1;
    s_[2] = s2;
    s_[3] = s3;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

/// Uniform(lower, upper) at 32-bit resolution from 64-bit words: word w gives
/// u = (hi32(w) + 1/2)·2⁻³² and (lo32(w) + 1/2)·2⁻³², both in the open interval (0, 1), then
/// lower + (upper − lower)·u. `out.size()` must be 2·words.size(). Deterministic.
/// Resolution (upper − lower)·2⁻³² (≈ 1e-9 for (−2, 2)); the values never equal the bounds.
inline void words_to_uniform32(std::span<const std::uint64_t> words, double lower, double upper,
                               std::span<double> out) {
  constexpr double k = 0x1.0p-32;
  const double w = upper - lower;
  const std::size_t m = words.size();
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint64_t x = words[i];
    out[2 * i] = lower + w * ((static_cast<double>(x >> 32) + 0.5) * k);
    out[2 * i + 1] = lower + w * ((static_cast<double>(x & 0xffffffffULL) + 0.5) * k);
  }
}

/// Standard normals by the Box–Muller transform (Box & Muller 1958) from pairs of 64-bit words:
/// u1, u2 ∈ (0, 1) at 53-bit resolution, r = √(−2 log u1), z = (r cos 2πu2, r sin 2πu2).
/// `out.size()` must equal words.size() (even). Exact in distribution up to the 53-bit grid of
/// u1 (|z| ≤ 8.57); deterministic.
inline void words_to_standard_normal(std::span<const std::uint64_t> words, std::span<double> out) {
  constexpr double k = 0x1.0p-53;
  constexpr double two_pi = 6.283185307179586476925286766559;
  const std::size_t m = words.size() / 2;
  for (std::size_t i = 0; i < m; ++i) {
    const double u1 = (static_cast<double>(words[2 * i] >> 11) + 0.5) * k;
    const double u2 = (static_cast<double>(words[2 * i + 1] >> 11) + 0.5) * k;
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = two_pi * u2;
    out[2 * i] = r * std::cos(a);
    out[2 * i + 1] = r * std::sin(a);
  }
}

}  // namespace dpmu::core
