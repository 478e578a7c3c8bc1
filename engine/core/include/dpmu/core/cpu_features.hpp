#pragma once
/// @file cpu_features.hpp
/// Run-time CPU feature checks for the kernels compiled twice (SSE2 and AVX2; block_random.cpp,
/// gram_matrix.cpp). Both paths give the same bits, so only speed depends on the answer.

namespace dpmu::core {

/// True if the CPU supports AVX2 (x86-64 with GCC or Clang; false elsewhere). Thread-safe,
/// computed once.
inline bool cpu_has_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = [] {
    __builtin_cpu_init();  // needed if first called before the libgcc constructor has run
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
#else
  return false;
#endif
}

}  // namespace dpmu::core
