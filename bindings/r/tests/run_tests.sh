#!/usr/bin/env bash
# ctest bindings.r_test: install the R package from this checkout into a temporary library and run
# its testthat tests against the dpmu command. Usage: run_tests.sh DPMU_EXE SOURCE_DIR BUILD_DIR.
# Exit 77 (skipped) when R, Rcpp or testthat is missing.
set -euo pipefail
exe=$1 src=$2 build=$3
if ! command -v Rscript >/dev/null 2>&1; then echo "SKIP: R (Rscript) is not installed (r-base-core)"; exit 77; fi
for pkg in Rcpp testthat; do
  if ! Rscript -e "quit(status = !requireNamespace('$pkg', quietly = TRUE))" >/dev/null 2>&1; then
    echo "SKIP: the R package $pkg is not installed (r-cran-$(echo $pkg | tr A-Z a-z))"; exit 77
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A copy of the package, so that R CMD INSTALL's objects never land in the source tree.
cp -r "$src/bindings/r" "$tmp/dpmu"
mkdir "$tmp/lib"
DPMU_BUILD_DIR="$build" R CMD INSTALL --no-test-load -l "$tmp/lib" "$tmp/dpmu" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"; echo "R CMD INSTALL failed"; exit 1; }
cd "$tmp/dpmu/tests"
DPMU_EXE="$exe" DPMU_SOURCE_DIR="$src" R_LIBS="$tmp/lib" Rscript --vanilla -e '
  library(testthat); library(dpmu)
  r <- test_dir("testthat", package = "dpmu", load_package = "installed", reporter = "summary", stop_on_failure = FALSE)
  d <- as.data.frame(r)
  cat(sprintf("\n%d expectations, %d failed, %d skipped, %d errors\n", sum(d$nb), sum(d$failed), sum(d$skipped), sum(d$error)))
  quit(status = if (sum(d$failed) > 0 || any(d$error)) 1 else 0)'
