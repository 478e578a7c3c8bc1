#!/usr/bin/env bash
# The README's test command: install dependencies, build, and run every default test
# (unit, statistical with fixed seeds, end-to-end). Hidden soak tests are not run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure --parallel "$(nproc)" "$@"
