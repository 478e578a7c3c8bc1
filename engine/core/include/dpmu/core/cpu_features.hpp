#pragma once
/// @file cpu_features.hpp
/// Run-time CPU feature checks for the kernels compiled for several instruction sets (SSE2 and
/// AVX2: block_random.cpp, gram_matrix.cpp; plus AVX-512F and AVX-512 IFMA: uniform_gram.cpp). All paths give the
/// same bits, so only speed depends on the answer.
///
/// The environment variable DPMU_SIMD caps the instruction sets the dispatched kernels may use
/// (for benchmarks of a narrower machine and for the bit-identity tests across paths; read once
/// per process): `generic` (x86-64 baseline: no AVX2, FMA or AVX-512), `avx2` (AVX2 + FMA, no
/// AVX-512), `avx512` or `native` or unset (whatever the CPU has). Any other value is ignored (the
/// `dpmu` command reports it on standard error at start-up). A cap never changes results, only speed
/// (tests/e2e/simd_paths_test.sh).

#include <cstdlib>
#include <cstring>

namespace dpmu::core {

/// The widest instruction set the kernels may use, as set by DPMU_SIMD.
enum class SimdCap { generic = 0, avx2 = 1, native = 2 };

/// Parse a DPMU_SIMD value: nullptr, "", "native" and "avx512" → native; "avx2" → avx2;
/// "generic" → generic; anything else → native with `valid` set to false.
inline SimdCap parse_simd_cap(const char* value, bool& valid) {
  valid = true;
  if (value == nullptr || *value == '\0' || std::strcmp(value, "native") == 0 || std::strcmp(value, "avx512") == 0)
    return SimdCap::native;
  if (std::strcmp(value, "avx2") == 0) return SimdCap::avx2;
  if (std::strcmp(value, "generic") == 0) return SimdCap::generic;
  valid = false;
  return SimdCap::native;
}

/// DPMU_SIMD of this process (parse_simd_cap), read once. Thread-safe. An invalid value is ignored
/// silently here (the core writes nothing to the console; R packages may not): the `dpmu` command
/// reports it at start-up (simd_cap_invalid_value).
inline SimdCap simd_cap() {
  static const SimdCap cap = [] {
    bool valid = true;
    return parse_simd_cap(std::getenv("DPMU_SIMD"), valid);
  }();
  return cap;
}

/// The value of DPMU_SIMD if parse_simd_cap refuses it (then simd_cap() ignores it), else nullptr.
inline const char* simd_cap_invalid_value() {
  const char* value = std::getenv("DPMU_SIMD");
  bool valid = true;
  (void)parse_simd_cap(value, valid);
  return valid ? nullptr : value;
}

/// True if the CPU supports AVX2 and DPMU_SIMD allows it (x86-64 with GCC or Clang; false
/// elsewhere). Thread-safe, computed once.
inline bool cpu_has_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = [] {
    __builtin_cpu_init();  // needed if first called before the libgcc constructor has run
    return __builtin_cpu_supports("avx2") != 0 && simd_cap() >= SimdCap::avx2;
  }();
  return yes;
#else
  return false;
#endif
}

/// True if the CPU supports AVX2 and FMA (the exact uniform Gram kernel's AVX2 path) and
/// DPMU_SIMD allows them. Thread-safe.
inline bool cpu_has_avx2_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0 && simd_cap() >= SimdCap::avx2;
  }();
  return yes;
#else
  return false;
#endif
}

/// True if the CPU (and OS) support AVX-512F (the exact uniform Gram kernel's widest path) and
/// DPMU_SIMD allows it. Only exact integer-valued kernels use it, so the answer changes speed,
/// never bits.
inline bool cpu_has_avx512f() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0 && simd_cap() >= SimdCap::native;
  }();
  return yes;
#else
  return false;
#endif
}

/// True if the CPU (and OS) support AVX-512F and AVX-512 IFMA (52-bit integer multiply-add; the
/// exact uniform Gram kernel's avx512ifma path) and DPMU_SIMD allows AVX-512. Exact integer
/// arithmetic only, so the answer changes speed, never bits.
inline bool cpu_has_avx512ifma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512ifma") != 0 &&
           simd_cap() >= SimdCap::native;
  }();
  return yes;
#else
  return false;
#endif
}

}  // namespace dpmu::core
