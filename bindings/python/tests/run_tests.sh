#!/usr/bin/env bash
# ctest bindings.python_test: pip-install the Python package from this checkout (with the module the
# CMake build made) into a temporary directory and run its pytest tests against the dpmu command.
# Usage: run_tests.sh DPMU_EXE SOURCE_DIR BUILD_DIR. Exit 77 (skipped) when something is missing.
set -euo pipefail
exe=$1 src=$2 build=$3
py=/usr/bin/python3
if [ ! -x "$py" ]; then echo "SKIP: $py is not installed"; exit 77; fi
for mod in numpy pandas pytest pip setuptools wheel; do
  if ! "$py" -c "import $mod" >/dev/null 2>&1; then echo "SKIP: Python module $mod is missing (python3-$mod)"; exit 77; fi
done
if ! ls "$build"/bindings/python/_dpmu*.so >/dev/null 2>&1; then
  echo "SKIP: the extension module was not built (pybind11-dev missing when CMake ran)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/bindings/python" "$tmp/src"
rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info
DPMU_BUILD_DIR="$build" "$py" -m pip install --no-build-isolation --no-deps --no-index --quiet \
  --target "$tmp/site" "$tmp/src" >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; echo "pip install failed"; exit 1; }
cd "$tmp"
DPMU_EXE="$exe" DPMU_SOURCE_DIR="$src" PYTHONPATH="$tmp/site" PYTHONDONTWRITEBYTECODE=1 \
  "$py" -m pytest -q -p no:cacheprovider "$src/bindings/python/tests"
