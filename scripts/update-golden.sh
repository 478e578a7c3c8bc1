#!/usr/bin/env bash
# Refresh the golden summaries of the end-to-end tests (tests/e2e/golden/) from the current build.
# Golden files change only through this script, and the diff goes in the commit with the reason.
# Usage: bash scripts/update-golden.sh [path/to/dpmu]
set -euo pipefail
cd "$(dirname "$0")/.."
DPMU=${1:-build/engine/dpmu}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$DPMU" run configs/smoke/normal_mean.yaml --out "$tmp/smoke.h5" --quiet
"$DPMU" summarize "$tmp/smoke.h5" > tests/e2e/golden/normal_mean_smoke.json
echo "update-golden: wrote tests/e2e/golden/normal_mean_smoke.json"
git --no-pager diff --stat -- tests/e2e/golden/ || true
