#!/usr/bin/env bash
# End-to-end test of the Python wheel that pip builds itself (bindings/python/setup.py runs CMake with
# -DDPMU_PACKAGE_ONLY=ON; no prior build, nothing downloaded):
#  1. pip wheel --no-build-isolation --no-deps --no-index SOURCE_DIR/bindings/python into a temporary
#     directory, with setuptools' and CMake's build directory there too (DPMU_WHEEL_BUILD_DIR), so
#     concurrent runs do not collide; the build leaves nothing in the checkout that git would see;
#  2. the wheel holds the package and the compiled module dpmu/_dpmu*.so, which links only the C/C++
#     runtime (ldd: no HDF5, libcsv, fmt, yaml-cpp, oneTBB, curl, ...);
#  3. installed into a fresh venv (--system-site-packages for Debian's numpy/pandas/pytest), the
#     package's pytest tests pass against the installed package (run_tests.sh --installed), which
#     include dpmu.bma = `dpmu bma --non-private` (DPMU_EXE).
# Skips (exit 77) without python3-venv, pybind11 (pybind11-dev / python3-pybind11), the Python
# headers, cmake or the Python modules the build and the tests need.
# Usage: python_wheel_test.sh /path/to/dpmu /path/to/source-tree
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DPMU_EXE SOURCE_DIR" >&2; exit 2; }
exe=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
py=/usr/bin/python3
skip() { echo "SKIPPED: $*"; exit 77; }

[ -x "$py" ] || skip "$py is not installed"
for mod in pip setuptools wheel numpy pandas pytest; do
  "$py" -c "import $mod" >/dev/null 2>&1 || skip "Python module $mod is missing (python3-$mod)"
done
"$py" -c 'import ensurepip, venv' >/dev/null 2>&1 || skip "python3-venv is not installed"
"$py" -c 'import pybind11' >/dev/null 2>&1 || [ -e /usr/lib/cmake/pybind11/pybind11Config.cmake ] ||
  [ -e /usr/share/cmake/pybind11/pybind11Config.cmake ] || skip "pybind11 is not installed (pybind11-dev)"
"$py" -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' \
  >/dev/null 2>&1 || skip "the Python headers are not installed (python3-dev)"
command -v cmake >/dev/null || skip "cmake is not installed"
command -v ldd >/dev/null || skip "ldd is not installed"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dpmu-wheel-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# What git sees in the checkout before the build (untracked, not ignored).
untracked() { git -C "$src" status --porcelain --untracked-files=all -- bindings/python 2>/dev/null | grep '^??' || true; }
have_git=0
git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 && have_git=1
[ "$have_git" = 1 ] && untracked >"$tmp/untracked.before"

# 1. The wheel.
start=$(date +%s)
if ! DPMU_WHEEL_BUILD_DIR="$tmp/build" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 \
  "$py" -m pip wheel --no-build-isolation --no-deps --no-index "$src/bindings/python" -w "$tmp/dist" \
  >"$tmp/wheel.log" 2>&1; then
  tail -60 "$tmp/wheel.log"
  echo "FAIL: pip wheel"
  exit 1
fi
wheels=("$tmp"/dist/dpmu-*.whl)
[ ${#wheels[@]} -eq 1 ] && [ -f "${wheels[0]}" ] || { ls -l "$tmp/dist"; echo "FAIL: expected one dpmu wheel"; exit 1; }
wheel=${wheels[0]}
echo "built $(basename "$wheel") ($(stat -c %s "$wheel") bytes) in $(($(date +%s) - start)) s"
if [ "$have_git" = 1 ]; then
  untracked >"$tmp/untracked.after"
  if ! diff "$tmp/untracked.before" "$tmp/untracked.after" >"$tmp/untracked.diff"; then
    cat "$tmp/untracked.diff"
    echo "FAIL: the wheel build left files in the checkout that git sees"
    exit 1
  fi
fi

# 2. Its contents and the module's shared libraries.
"$py" - "$wheel" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for need in ("dpmu/__init__.py", "dpmu/_tools.py"):
    assert need in names, f"FAIL: {need} is not in the wheel: {names}"
modules = [n for n in names if n.startswith("dpmu/_dpmu") and n.endswith(".so")]
assert len(modules) == 1, f"FAIL: expected one dpmu/_dpmu*.so in the wheel: {names}"
print("wheel:", ", ".join(sorted(names)))
EOF

# 3. A fresh venv with the wheel.
"$py" -m venv --system-site-packages "$tmp/venv"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/python" -m pip install --no-deps --no-index --quiet "$wheel"
so=$(echo "$tmp"/venv/lib/python3*/site-packages/dpmu/_dpmu*.so)
[ -f "$so" ] || { echo "FAIL: the installed package has no module"; exit 1; }
echo "ldd $(basename "$so"):"
ldd "$so" | tee "$tmp/ldd.txt"
if grep -q "not found" "$tmp/ldd.txt"; then echo "FAIL: the module needs a library that is not installed"; exit 1; fi
# Only the C and C++ runtime (and the dynamic loader).
extra=$(awk '{print $1}' "$tmp/ldd.txt" | grep -Ev '^(linux-vdso\.so|linux-gate\.so|/lib.*/ld-linux.*\.so|ld-linux.*\.so|libstdc\+\+\.so|libm\.so|libgcc_s\.so|libc\.so|libpthread\.so|libdl\.so|librt\.so)' || true)
if [ -n "$extra" ]; then
  echo "FAIL: the module links more than the C/C++ runtime: $extra"
  exit 1
fi
bash "$src/bindings/python/tests/run_tests.sh" --installed "$tmp/venv/bin/python" "$exe" "$src"
echo "PASS: python_wheel_test"
