#!/usr/bin/env bash
# Precompute the R package's vignette (as CRAN packages with heavy code do): knit
# bindings/r/vignettes/dpmu.Rmd.orig with the installed dpmu package into
# bindings/r/vignettes/dpmu.Rmd (code and its output as text, figures as dpmu-*.png next to it).
# scripts/build-r-package.sh renders that file to HTML without running any code of the package, so
# R CMD build never compiles it. Run this after a change to the .orig or to what it prints, then
# commit dpmu.Rmd and the figures.
# Usage: bash scripts/precompute-r-vignette.sh [LIBRARY]   (LIBRARY: where dpmu is installed;
#        default: R's library path)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:-}
cd "$repo/bindings/r/vignettes"
rm -f dpmu-*.png
R_LIBS="${lib}${lib:+:}${R_LIBS:-}" Rscript --vanilla -e '
  if (!requireNamespace("dpmu", quietly = TRUE)) stop("install the dpmu package first (scripts/build-r-package.sh; R CMD INSTALL)")
  set.seed(1)
  knitr::knit("dpmu.Rmd.orig", "dpmu.Rmd", quiet = TRUE)
  cat("wrote", normalizePath("dpmu.Rmd"), "with dpmu", format(packageVersion("dpmu")), "\n")'
# The temporary paths of the ledger in the output are the only machine-specific text: make them stable.
sed -i -E 's#/tmp/[A-Za-z0-9]+/file[0-9a-f]+\.jsonl#/tmp/RtmpXXXXXX/ledger.jsonl#g' dpmu.Rmd
