#pragma once
/// @file cpu_features.hpp
/// Run-time CPU feature checks for the kernels compiled for several instruction sets (SSE2 and
/// AVX2: block_random.cpp, gram_matrix.cpp; plus AVX-512F: uniform_gram.cpp). All paths give the
/// same bits, so only speed depends on the answer.

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

/// True if the CPU supports AVX2 and FMA (the exact uniform Gram kernel's AVX2 path). Thread-safe.
inline bool cpu_has_avx2_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
  }();
  return yes;
#else
  return false;
#endif
}

/// True if the CPU (and OS) support AVX-512F (the exact uniform Gram kernel's widest path).
/// Only exact integer-valued kernels use it, so the answer changes speed, never bits.
inline bool cpu_has_avx512f() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
#else
  return false;
#endif
}

}  // namespace dpmu::core
