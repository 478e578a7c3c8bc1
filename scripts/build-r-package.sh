#!/usr/bin/env bash
# Build the R source package dpmu_<version>.tar.gz (R CMD build of a staging copy of bindings/r)
# that installs with R CMD INSTALL alone: no CMake build of dpmu, no OpenSSL, fmt or HDF5.
# Usage: bash scripts/build-r-package.sh [OUTDIR]   (default: the current directory)
#
# Everything the package compiles is copied in here from the repository (never edited by hand in
# the tarball; the repository stays the single source), and only what the R package calls (the
# closure of the symbols of src/dpmu_r.cpp, docs/performance.md "R package install"):
#   src/engine/core/{include,src}     the statistics core (all but the sources listed in $unused)
#   src/engine/api/{include,src}      the release API
#   src/engine/runtime/...            the ledger (ledger, sha256, secure_random: .hpp, .cpp) and the
#                                     header-only experiment contract (experiment.hpp, streams.hpp)
#   src/experiments/...               ssp_calibration and its simulator, which plan_bma() runs (the
#                                     files of dpmu_simulation in engine/CMakeLists.txt)
#   src/bindings/common/              the code shared with the Python package
#   src/vendor/Random123/             Random123 (header-only, BSD-3-Clause; Debian librandom123-dev)
#   src/vendor/nlohmann/              nlohmann/json (header-only, MIT; Debian nlohmann-json3-dev)
# Eigen comes from LinkingTo: RcppEigen; Boost.Math from the system's headers or the R package BH's
# (the package's configure finds them). The licences of the vendored headers go to inst/COPYRIGHTS
# and inst/licenses/. src/Makevars.in lists every object; the package's configure
# (bindings/r/configure) sees the vendored sources and writes src/Makevars from it (the compiler's
# -ffp-contract=off, Boost's include directory, and strip --strip-debug of the shared library).
#
# The vignette is precomputed (as CRAN packages with heavy code do): vignettes/dpmu.Rmd is the
# output of knitting vignettes/dpmu.Rmd.orig with the installed package
# (scripts/precompute-r-vignette.sh), so it runs no code of the package. This script renders it to
# HTML itself and runs R CMD build --no-build-vignettes, so R CMD build never compiles the package.
# Environment: R (default R), RANDOM123_DIR (default /usr/include/Random123), NLOHMANN_DIR (default
# /usr/include/nlohmann), DPMU_R_BUILD_ARGS (extra arguments of R CMD build), DPMU_R_STAGING_DIR (keep
# the staging copy there, for a developer's repeated R CMD INSTALL of the directory).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
outdir=${1:-.}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
R=${R:-R}
random123=${RANDOM123_DIR:-/usr/include/Random123}
nlohmann=${NLOHMANN_DIR:-/usr/include/nlohmann}
random123_copyright=${RANDOM123_COPYRIGHT:-/usr/share/doc/librandom123-dev/copyright}
nlohmann_copyright=${NLOHMANN_COPYRIGHT:-/usr/share/doc/nlohmann-json3-dev/copyright}
for f in "$random123/philox.h" "$random123_copyright" "$nlohmann/json.hpp" "$nlohmann_copyright"; do
  if [ ! -f "$f" ]; then
    echo "build-r-package: $f is missing (Debian: apt-get install librandom123-dev nlohmann-json3-dev)" >&2
    exit 1
  fi
done
command -v "$R" >/dev/null 2>&1 || { echo "build-r-package: R is not installed (r-base-core)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pkg="$tmp/dpmu"
if [ -n "${DPMU_R_STAGING_DIR:-}" ]; then
  rm -rf "$DPMU_R_STAGING_DIR/dpmu"
  mkdir -p "$DPMU_R_STAGING_DIR"
  pkg=$(cd "$DPMU_R_STAGING_DIR" && pwd)/dpmu
fi
# The package as it is in the repository, without anything a developer's install left behind.
cp -r "$repo/bindings/r" "$pkg"
rm -f "$pkg/src/Makevars" "$pkg/src/Makevars.in"
find "$pkg/src" \( -name '*.o' -o -name '*.so' -o -name '*.dll' \) -delete

# The C++ sources, copied with their directory layout (two files are called bma.cpp, audit.cpp or
# ledger.cpp, so the objects keep their directories: OBJECTS below).
src="$pkg/src"
copy() {  # copy FILE... into $src/<path relative to the repository>
  for f in "$@"; do
    mkdir -p "$src/$(dirname "$f")"
    cp "$repo/$f" "$src/$f"
  done
}
cd "$repo"
# Core sources nothing the R package calls needs (checked: scripts/r-package-unused-sources.py).
unused="engine/api/src/interrupt_deferral.cpp"  # the `dpmu` command's signal handler (_exit): R is interrupted cooperatively
core_files=$(find engine/core/include engine/core/src engine/api/include engine/api/src -type f \( -name '*.hpp' -o -name '*.cpp' \) | sort)
for f in $unused; do core_files=$(echo "$core_files" | grep -v -x "$f"); done
# shellcheck disable=SC2086
copy $core_files
for m in ledger sha256 secure_random; do
  copy "engine/runtime/include/dpmu/runtime/$m.hpp" "engine/runtime/src/$m.cpp"
done
copy engine/runtime/include/dpmu/runtime/experiment.hpp engine/runtime/include/dpmu/runtime/streams.hpp
for m in ssp_calibration simulation_gram simulation_ssp simulation_cost ssp_release calibration_metrics; do
  copy "experiments/$m.cpp" "experiments/include/dpmu/experiments/$m.hpp"
done
copy $(find bindings/common -maxdepth 1 -type f \( -name '*.hpp' -o -name '*.cpp' \) | sort)
mkdir -p "$src/vendor"
cp -r "$random123" "$src/vendor/Random123"
cp -r "$nlohmann" "$src/vendor/nlohmann"
find "$src/vendor" -type f ! -name '*.h' ! -name '*.hpp' -delete
# R CMD check --as-cran warns about pragmas that silence compiler diagnostics: drop nlohmann/json's
# `#pragma GCC/clang diagnostic` lines (push, pop and ignored together; they only silence warnings).
find "$src/vendor/nlohmann" -type f -exec sed -i -E '/^[[:space:]]*#[[:space:]]*pragma[[:space:]]+(GCC|clang)[[:space:]]+diagnostic/d' {} +

# Licences of the vendored headers.
mkdir -p "$pkg/inst/licenses"
cp "$random123_copyright" "$pkg/inst/licenses/Random123"
cp "$nlohmann_copyright" "$pkg/inst/licenses/nlohmann-json"
nlohmann_version=$(sed -n 's/^#define NLOHMANN_JSON_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' \
                     "$nlohmann/detail/abi_macros.hpp" "$nlohmann/json.hpp" 2>/dev/null | head -3 | paste -sd.)
random123_version=$(dpkg-query -W -f '${Version}' librandom123-dev 2>/dev/null || echo "unknown")
cat >"$pkg/inst/COPYRIGHTS" <<EOF
The dpmu package contains code from the following projects, copied into src/vendor/ when
the source package is built (scripts/build-r-package.sh in the dpmu repository):

src/vendor/Random123/   Random123 (Debian librandom123-dev ${random123_version}),
                        Copyright 2010-2021 D. E. Shaw Research, BSD-3-Clause;
                        the full notice is in licenses/Random123.
src/vendor/nlohmann/    JSON for Modern C++ ${nlohmann_version:+${nlohmann_version} }(https://github.com/nlohmann/json),
                        Copyright 2013-2022 Niels Lohmann, MIT;
                        the full notice is in licenses/nlohmann-json.

The only change: the `#pragma GCC/clang diagnostic` lines of nlohmann/json (which silence compiler
warnings) are removed.

All other files: the dpmu authors (see the file LICENSE).
EOF

# The precomputed vignette, rendered here (no package code runs), with the index R CMD build writes
# (build/vignette.rds), so that R CMD build --no-build-vignettes ships it and never installs the package.
rm -f "$pkg"/vignettes/*.orig "$pkg"/vignettes/*.html
if [ -f "$pkg/vignettes/dpmu.Rmd" ]; then
  (cd "$pkg" && "$R" --vanilla --no-echo -e '
    v <- tools::buildVignettes(dir = ".", tangle = TRUE)
    vigns <- tools::pkgVignettes(dir = ".", output = TRUE, source = TRUE)
    dir.create(file.path("inst", "doc"), recursive = TRUE, showWarnings = FALSE)
    stopifnot(all(file.copy(unique(c(vigns$docs, vigns$outputs, unlist(vigns$sources))), file.path("inst", "doc"),
                            overwrite = TRUE)))
    unlink(c(vigns$outputs, unlist(vigns$sources)))
    dir.create("build", showWarnings = FALSE)
    saveRDS(tools:::.build_vignette_index(vigns), file.path("build", "vignette.rds"), version = 2L)' \
    >"$tmp/vignette.log" 2>&1) || { cat "$tmp/vignette.log" >&2; exit 1; }
fi

# src/Makevars.in: configure turns it into src/Makevars.
# One unity translation unit (docs/performance.md "R package install"): most of the compile time of
# a source is parsing and instantiating the same headers (Eigen, Boost.Math, nlohmann/json, Rcpp,
# the core's templates) and compiling the same Eigen kernels, so every source is compiled once, in
# src/dpmu_unity.cpp, which #includes them all (they stay in src/ with their directories): the
# package's own dpmu_r.cpp first (Rcpp's headers must precede R's), then the others in sorted order.
# Hence file-local names may not collide across the sources (a collision is a compile error naming
# both; the Python wheel's build, bindings/CMakeLists.txt, compiles the same single unit).
# DPMU_R_UNITY=0 compiles every source on its own (for a developer looking for such a collision).
all_sources=$(cd "$src" && find . -name '*.cpp' ! -path './vendor/*' ! -name 'dpmu_unity*' | sed 's|^\./||; s|\.cpp$||' | sort)
if [ "${DPMU_R_UNITY:-1}" != "0" ]; then
  {
    echo "// Written by scripts/build-r-package.sh: every C++ source of the package in one translation unit."
    echo "#include \"dpmu_r.cpp\""
    for f in $all_sources; do [ "$f" = dpmu_r ] || echo "#include \"$f.cpp\""; done
  } >"$src/dpmu_unity.cpp"
  objects="dpmu_unity.o"
else
  objects=$(echo "$all_sources" | sed 's|$|.o|')
fi
{
  echo "# Written by scripts/build-r-package.sh; ./configure writes src/Makevars from it."
  echo "CXX_STD = CXX20"
  echo "PKG_CPPFLAGS = -Iengine/core/include -Iengine/api/include -Iengine/runtime/include -Iexperiments/include \\"
  echo "  -Ibindings/common \\"
  echo "  -Ivendor @DPMU_BOOST_CPPFLAGS@ -DEIGEN_DONT_PARALLELIZE"
  echo "# The same floating point as the CMake build (no FMA contraction), so results equal the CLI's,"
  echo "# and no variable tracking for -g's debug information (the cost of one large unit): configure puts"
  echo "# -ffp-contract=off -fno-var-tracking-assignments -fno-var-tracking here when the compiler takes them."
  echo "PKG_CXXFLAGS = @DPMU_FP_FLAGS@"
  echo "OBJECTS = \\"
  echo "$objects" | sed '$!s/$/ \\/; s/^/  /'
  echo ""
  echo "# The shared library is stripped of debug information (R's default flags have -g; the"
  echo "# installed size would be ~90 MB), when configure finds GNU strip."
  echo "all: \$(SHLIB) dpmu_strip"
  echo "dpmu_strip: \$(SHLIB)"
  printf '\t@DPMU_STRIP@\n'
  echo ".PHONY: all dpmu_strip"
} >"$src/Makevars.in"

# A configuration of the smoke study for the example of ?read_results.
mkdir -p "$pkg/inst/extdata"
cp "$repo/configs/smoke/normal_mean.yaml" "$pkg/inst/extdata/"

# The package's configure and cleanup stay those of bindings/r (configure sees src/vendor).
cd "$tmp"
# shellcheck disable=SC2086
"$R" CMD build --no-build-vignettes ${DPMU_R_BUILD_ARGS:-} "$pkg" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }
tarball=$(ls dpmu_*.tar.gz)
cp "$tarball" "$outdir/"
echo "$outdir/$tarball"
