#!/usr/bin/env bash
# End to end: DPMU_SIMD (engine/core/include/dpmu/core/cpu_features.hpp) caps the instruction sets
# of the dispatched kernels (exact uniform Gram: generic / AVX2 + FMA / AVX-512F / AVX-512 IFMA; xoshiro words and
# uniforms: generic / AVX2). The smoke configuration of Figures 3, 4, 8, 9 must give bit-identical
# replicate arrays, calibration and summaries under every cap; the cap must reach the kernels'
# availability checks (the [simd] unit test run under it); a bad value is reported and ignored.
# Usage: simd_paths_test.sh /path/to/dpmu /path/to/source-tree /path/to/dpmu_tests
set -u
DPMU="$1"
SRC="$2"
TESTS="$3"
. "$(dirname "$0")/lib.sh"
cd "$SRC"
for cap in native avx2 generic; do
  if DPMU_SIMD=$cap "$DPMU" run configs/smoke/fig3_4_zellner_siow.yaml --out "$TMP/$cap.h5" --quiet --threads 2 \
    2>"$TMP/err"; then pass; else fail "DPMU_SIMD=$cap dpmu run: $(cat "$TMP/err")"; fi
  if DPMU_SIMD=$cap "$TESTS" "[simd]" >"$TMP/unit.txt" 2>&1; then pass; else
    fail "DPMU_SIMD=$cap dpmu_tests [simd]: $(tail -20 "$TMP/unit.txt")"; fi
done
for cap in avx2 generic; do
  if same_arrays "$TMP/native.h5" "$TMP/$cap.h5"; then pass; else fail "DPMU_SIMD=$cap differs from native"; fi
done
if DPMU_SIMD=sse9 "$DPMU" run configs/smoke/fig8_9_bic.yaml --replicates 1 --out "$TMP/bad.h5" --quiet \
  2>"$TMP/err" && grep -q "DPMU_SIMD='sse9'" "$TMP/err"; then pass; else
  fail "DPMU_SIMD=sse9: no message on stderr: $(cat "$TMP/err")"; fi
finish simd_paths_test
