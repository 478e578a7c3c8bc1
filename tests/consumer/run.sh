#!/usr/bin/env bash
# Install dpmu from BUILD into a temporary prefix, then build and run tests/consumer against it with
# find_package(dpmu) (mode cmake) or pkg-config (mode pkg-config).
# Usage: run.sh BUILD_DIR SOURCE_DIR cmake|pkg-config
set -euo pipefail
build=$1
src=$2
mode=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
if [ "$mode" = cmake ]; then
  cmake -S "$src/tests/consumer" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$tmp/build" >/dev/null
  "$tmp/build/consumer"
else
  if ! command -v pkg-config >/dev/null 2>&1; then
    echo "SKIP: pkg-config is not installed"
    exit 77
  fi
  pc=$(find "$tmp/prefix" -name dpmu.pc -print -quit)
  export PKG_CONFIG_PATH
  PKG_CONFIG_PATH=$(dirname "$pc")
  # shellcheck disable=SC2046
  c++ -std=c++20 -O1 "$src/tests/consumer/main.cpp" -o "$tmp/consumer" $(pkg-config --cflags --libs dpmu)
  "$tmp/consumer"
fi
