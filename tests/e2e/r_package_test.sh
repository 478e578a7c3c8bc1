#!/usr/bin/env bash
# ctest e2e.r_package_test: the R source package as a user gets it. Builds dpmu_<version>.tar.gz
# with scripts/build-r-package.sh into a temporary directory (it must not compile: the vignette is
# precomputed; its CPU time is printed), installs it into a temporary library (no CMake build used:
# DPMU_BUILD_DIR is unset; CPU time printed; the shared library must carry no debug information),
# checks that its non-private BMA of hsb2 gives the PIPs of `dpmu bma --non-private` to 1e-10, and
# runs `R CMD check --as-cran --no-manual` on it, failing on any ERROR, WARNING or NOTE other than
# the one that needs the network ("unable to verify current time": future file timestamps).
# Usage: r_package_test.sh DPMU_EXE SOURCE_DIR.
# Exit 77 (skipped) when R or a package the build needs (Rcpp, RcppEigen, BH, knitr, rmarkdown) is
# missing.
set -euo pipefail
exe=$1 src=$2
if ! command -v R >/dev/null 2>&1 || ! command -v Rscript >/dev/null 2>&1; then
  echo "SKIP: R is not installed (r-base-core)"; exit 77
fi
for pkg in Rcpp RcppEigen BH knitr rmarkdown; do
  if ! Rscript -e "quit(status = !requireNamespace('$pkg', quietly = TRUE))" >/dev/null 2>&1; then
    echo "SKIP: the R package $pkg is not installed (r-cran-$(echo $pkg | tr A-Z a-z))"; exit 77
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset DPMU_BUILD_DIR DPMU_EXE DPMU DPMU_LEDGER
# The package has no PDF (HTML vignette, --no-manual): without qpdf, --as-cran would warn that it cannot
# check PDF sizes. Install qpdf to run that check for real.
command -v qpdf >/dev/null 2>&1 || export R_QPDF=true
export MAKEFLAGS="${MAKEFLAGS:--j$(nproc)}"
start=$(date +%s)

cpu() { awk '/^(user|sys) /{ s += $2 } END { printf "%.0f", s }' "$1"; }  # user + sys of `time -p` (children included)
{ time -p bash "$src/scripts/build-r-package.sh" "$tmp" >"$tmp/tarball.txt"; } 2>"$tmp/build.time" || {
  cat "$tmp/build.time"; echo "FAIL: build-r-package.sh"; exit 1; }
tarball=$(cat "$tmp/tarball.txt")
echo "built $(basename "$tarball") ($(du -k "$tarball" | cut -f1) kB) in $(( $(date +%s) - start )) s, $(cpu "$tmp/build.time") CPU-s"
# The listing and the contents are read into files first: `tar … | grep -q` under pipefail fails
# whenever grep stops reading before tar has written everything (SIGPIPE), so a found file could
# read as missing and a forbidden string as absent.
tar tzf "$tarball" >"$tmp/listing"
tar xzOf "$tarball" >"$tmp/contents"
for f in inst/doc/dpmu.html build/vignette.rds; do
  grep -q "^dpmu/$f$" "$tmp/listing" || { echo "FAIL: the tarball has no $f (the precomputed vignette)"; exit 1; }
done
if grep -q '\.orig$' "$tmp/listing"; then echo "FAIL: the vignette's .orig source is in the tarball"; exit 1; fi
if grep -a -q "$src/build" "$tmp/contents"; then
  echo "FAIL: the tarball refers to the repository's build directory $src/build"; exit 1
fi

mkdir "$tmp/lib"
t0=$(date +%s)
{ time -p R CMD INSTALL -l "$tmp/lib" "$tarball" >"$tmp/install.log" 2>&1; } 2>"$tmp/install.time" || {
  cat "$tmp/install.log"; echo "FAIL: R CMD INSTALL of the tarball"; exit 1; }
echo "installed in $(( $(date +%s) - t0 )) s, $(cpu "$tmp/install.time") CPU-s (MAKEFLAGS=$MAKEFLAGS)"
so="$tmp/lib/dpmu/libs/dpmu.so"
if command -v readelf >/dev/null 2>&1 && readelf -S "$so" >"$tmp/sections" && grep -q '\.debug_info' "$tmp/sections"; then
  echo "FAIL: $so carries debug information ($(du -k "$so" | cut -f1) kB)"; exit 1
fi
echo "installed size: $(du -sk "$tmp/lib/dpmu" | cut -f1) kB"

# The smoke test: the same PIPs as the CLI (when DPMU_EXE is a dpmu binary).
predictors=female,write,math,science,socst
expected=""
if [ -x "$exe" ]; then
  expected=$("$exe" bma --non-private --data "$src/experiments/data/hsb2.csv" --response read \
               --predictors "$predictors" --prior zellner-siow)
fi
cd "$tmp"
EXPECTED="$expected" R_LIBS="$tmp/lib" Rscript --vanilla -e '
  library(dpmu)
  fit <- bma(read ~ female + write + math + science + socst, data = hsb2, prior = "zellner-siow")
  print(fit$pip)
  e <- Sys.getenv("EXPECTED")
  if (nzchar(e)) {
    cli <- unlist(dpmu:::parse_json(e)$posterior_inclusion_probabilities)[names(fit$pip)]
    d <- max(abs(fit$pip - cli))
    cat(sprintf("max |PIP(R package) - PIP(dpmu bma --non-private)| = %.3g\n", d))
    if (!(d <= 1e-10)) quit(status = 1)
  } else cat("no dpmu binary: PIPs not compared with the CLI\n")
  print(bma(mpg ~ wt + hp, mtcars)$pip)' || { echo "FAIL: smoke test of the installed package"; exit 1; }

t0=$(date +%s)
_R_CHECK_CRAN_INCOMING_REMOTE_=false _R_CHECK_FORCE_SUGGESTS_=false R CMD check --as-cran --no-manual -o "$tmp" "$tarball" >"$tmp/check.out" 2>&1 || true
echo "R CMD check in $(( $(date +%s) - t0 )) s"
log="$tmp/dpmu.Rcheck/00check.log"
if [ ! -f "$log" ]; then cat "$tmp/check.out"; echo "FAIL: no 00check.log"; exit 1; fi
grep -E '(WARNING|ERROR|NOTE)$' -A12 "$log" || true
status=$(grep '^Status:' "$log" || echo "Status: unknown")
echo "$status"
if echo "$status" | grep -q -E 'ERROR|WARNING|unknown'; then
  # An unfinished check (Status: unknown) says why only on its own output, e.g. a package in
  # Suggests that is not installed makes --as-cran look it up on CRAN, which needs the network.
  cat "$log"; [ "$status" = "Status: unknown" ] && tail -20 "$tmp/check.out"
  echo "FAIL: R CMD check --as-cran: $status"; exit 1
fi
# A NOTE is a failure too, except "checking for future file timestamps ... NOTE: unable to verify
# current time" (it needs the network).
notes=$(grep -E '^\* checking .* NOTE$' "$log" | grep -v 'future file timestamps' || true)
if [ -n "$notes" ]; then
  cat "$log"; echo "FAIL: R CMD check --as-cran NOTEs: $notes"; exit 1
fi
echo "PASS in $(( $(date +%s) - start )) s"
