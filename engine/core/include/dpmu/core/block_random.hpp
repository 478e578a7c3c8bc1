#pragma once
/// @file block_random.hpp
/// Fast generator for simulation hot loops (docs/architecture.md §3.3: "RngStream may seed a fast sequential
/// generator such as xoshiro256++ from one Philox block"): xoshiro256++ (Blackman & Vigna 2021,
/// "Scrambled linear pseudorandom number generators", ACM TOMS 47(4); period 2²⁵⁶ − 1, passes
/// BigCrush) seeded with the four words of Philox4x64-10 block 0 under a key drawn from the
/// replicate's data stream, so numbers stay a pure function of (master_seed, stream key,
/// replicate, purpose). Plus array conversions of 64-bit words to uniforms.
/// Simulation data only: never use for releasing real data.

#include <Random123/philox.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace dpmu::core {

/// Four independent xoshiro256++ streams (lane l seeded with the four words of Philox4x64-10
/// block l, counter {l, stream, 0, 0}, under key {key0, key1}), interleaved: word 4k + l of the output
/// sequence is the k-th output of lane l. The four lanes advance together in SIMD registers
/// (SSE2, or AVX2 when the CPU has it; integer arithmetic, so both give the same words).
/// Models UniformRandomBitGenerator (64-bit outputs; operator() serves words from an internal
/// buffer of 64) and fills arrays; the sequence is a deterministic function of (key0, key1) and
/// the order of calls. ≈ 0.3–0.6 ns per word. Simulation data only.
class Xoshiro256ppX4 {
 public:
  using result_type = std::uint64_t;
  static constexpr int lanes = 4;

  /// @param key0, key1 Philox key of the seeding blocks (an all-zero lane state, probability
  /// 2⁻²⁵⁶, is replaced by s0 = 1). @param stream selects the seeding counters {l, stream, 0, 0}:
  /// generators of one key with different streams are independent (distinct Philox blocks);
  /// stream 0 is the default sequence.
  Xoshiro256ppX4(std::uint64_t key0, std::uint64_t key1, std::uint64_t stream = 0);

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  /// Next word of the sequence.
  result_type operator()() {
    if (pos_ == kBuffer) {
      fill_words(std::span<std::uint64_t>(buffer_, kBuffer));  // advances the sequence by kBuffer
      pos_ = 0;
    }
    return buffer_[pos_++];
  }

  /// Fill `out` (size a multiple of 4) with the next out.size() words of the lanes (bypassing the
  /// buffer of operator(), whose remaining words stay queued). @throws std::invalid_argument if
  /// out.size() is not a multiple of 4. @param allow_avx2 false forces the SSE2 path (tests
  /// check that both paths give the same words).
  void fill_words(std::span<std::uint64_t> out, bool allow_avx2 = true);

 private:
  static constexpr int kBuffer = 64;
  alignas(32) std::uint64_t state_[4][lanes];  // state_[i][l]: word i of lane l's state
  alignas(32) std::uint64_t buffer_[kBuffer];
  int pos_ = kBuffer;
};

/// Uniform(lower, upper) at 32-bit resolution from 64-bit words: word w gives
/// u = (hi32(w) + 1/2)·2⁻³² and (lo32(w) + 1/2)·2⁻³², both in the open interval (0, 1), then
/// lower + (upper − lower)·u. `out.size()` must be 2·words.size(). Deterministic.
/// Resolution (upper − lower)·2⁻³² (≈ 1e-9 for (−2, 2)); the values never equal the bounds.
/// (Integer to double by the exact 2⁵² bit trick; SSE2 or AVX2 chosen at run time, element-wise
/// IEEE operations, so the same values on both paths — tested; allow_avx2 = false forces SSE2.)
/// @throws std::invalid_argument if out.size() != 2·words.size().
void words_to_uniform32(std::span<const std::uint64_t> words, double lower, double upper, std::span<double> out,
                        bool allow_avx2 = true);

}  // namespace dpmu::core
