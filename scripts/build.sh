#!/usr/bin/env bash
# Install dependencies (Debian packages) and build dpmu in ./build (Release).
# Usage: bash scripts/build.sh [TARGET...]   (no target: everything — the tests and benchmarks too;
# `bash scripts/build.sh dpmu` builds only the command, which is what the main job needs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
launcher=()
# ccache (optional, not installed by setup-deps) shares compiled objects between checkouts.
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build --parallel "$(nproc)" "${targets[@]}"
