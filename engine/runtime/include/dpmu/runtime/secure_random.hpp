#pragma once
/// @file secure_random.hpp
/// A cryptographically secure, non-reproducible generator for real data releases: 64-bit
/// words from the Linux getrandom(2) system call (the kernel CSPRNG). Models
/// UniformRandomBitGenerator, so every sampler of dpmu::core accepts it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace dpmu::runtime {

class SecureRng {
 public:
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  /// Next 64 random bits. @throws std::runtime_error if the kernel refuses entropy.
  result_type operator()();

 private:
  void refill();
  std::array<std::uint64_t, 32> buffer_{};
  std::size_t index_ = 32;
};

}  // namespace dpmu::runtime
