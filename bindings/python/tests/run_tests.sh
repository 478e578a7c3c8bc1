#!/usr/bin/env bash
# pytest tests of the Python package against the dpmu command (DPMU_EXE), in one of two modes:
#
#   run_tests.sh DPMU_EXE SOURCE_DIR BUILD_DIR
#     (ctest bindings.python_test) pip-install the package from this checkout, with the module that the
#     CMake build in BUILD_DIR made (setup.py with DPMU_BUILD_DIR), into a temporary directory and test it.
#   run_tests.sh --installed PYTHON DPMU_EXE SOURCE_DIR
#     test the package already installed for the interpreter PYTHON (e.g. venv/bin/python with the
#     wheel installed: tests/e2e/python_wheel_test.sh); fails if `import dpmu` would find the source tree.
#
# The tests are SOURCE_DIR/bindings/python/tests, run from a temporary directory (so the checkout's
# dpmu/ is never imported) without writing caches into the checkout. Exit 77 (skipped) when
# something is missing.
set -euo pipefail
if [ "${1:-}" = "--installed" ]; then
  [ $# -eq 4 ] || { echo "usage: $0 --installed PYTHON DPMU_EXE SOURCE_DIR" >&2; exit 2; }
  mode=installed py=$2 exe=$3 src=$4 build=
else
  [ $# -eq 3 ] || { echo "usage: $0 DPMU_EXE SOURCE_DIR BUILD_DIR | $0 --installed PYTHON DPMU_EXE SOURCE_DIR" >&2; exit 2; }
  mode=build py=/usr/bin/python3 exe=$1 src=$2 build=$3
fi
src=$(cd "$src" && pwd)
if [ ! -x "$py" ]; then echo "SKIP: $py is not installed"; exit 77; fi
modules="numpy pandas pytest"
[ "$mode" = build ] && modules="$modules pip setuptools wheel"
for mod in $modules; do
  if ! "$py" -c "import $mod" >/dev/null 2>&1; then echo "SKIP: Python module $mod is missing (python3-$mod)"; exit 77; fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
if [ "$mode" = build ]; then
  if ! ls "$build"/bindings/python/_dpmu*.so >/dev/null 2>&1; then
    echo "SKIP: the extension module was not built (pybind11-dev missing when CMake ran)"; exit 77
  fi
  cp -r "$src/bindings/python" "$tmp/src"
  rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info "$tmp/src/dpmu"/_dpmu*.so
  DPMU_BUILD_DIR="$build" DPMU_WHEEL_BUILD_DIR="$tmp/pip-build" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$py" -m pip install --no-build-isolation --no-deps --no-index --quiet --target "$tmp/site" "$tmp/src" \
    >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; echo "pip install failed"; exit 1; }
  export PYTHONPATH="$tmp/site"
else
  unset PYTHONPATH
  where=$("$py" -c 'import dpmu, os; print(os.path.dirname(os.path.realpath(dpmu.__file__)))' 2>"$tmp/import.log") || {
    cat "$tmp/import.log"; echo "FAIL: $py cannot import dpmu (install the wheel first)"; exit 1; }
  case "$where/" in
    "$src/bindings/python/"*) echo "FAIL: $py imports dpmu from the source tree ($where), not an installed package"; exit 1 ;;
  esac
  echo "testing the installed package $where"
fi
DPMU_EXE="$exe" DPMU_SOURCE_DIR="$src" PYTHONDONTWRITEBYTECODE=1 \
  "$py" -m pytest -q -p no:cacheprovider "$src/bindings/python/tests"
