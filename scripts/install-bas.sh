#!/usr/bin/env bash
# Install the R package BAS (not packaged in Debian) from a source tarball into a private R
# library outside the repository, for bench/r_pipeline (docs/performance.md "dpmu against the R
# pipeline"). BAS's code is never copied into the repository: the tarball stays where it is.
#
# Usage: bash scripts/install-bas.sh [TARBALL] [LIBRARY]
#   TARBALL  default: $BAS_TARBALL, else ../shared/vendor/BAS_*.tar.gz next to the repository
#   LIBRARY  default: $DPMU_R_LIBRARY, else $HOME/.local/share/dpmu/Rlib (outside the repository)
# Idempotent: if BAS already loads from LIBRARY the script says so and exits 0.
# Then: export R_LIBS_USER=LIBRARY (bench/r_pipeline/run.sh also looks there by itself).
# Needs R's build tools (r-base-dev: a C and Fortran compiler, BLAS/LAPACK headers; installed by
# scripts/setup-deps.sh). Exits 1 with a message if the tarball is absent.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"

tarball="${1:-${BAS_TARBALL:-}}"
if [ -z "$tarball" ]; then
  # The shared folder sits beside the repository (for a worktree: beside the main checkout).
  for dir in "$repo/../shared/vendor" "$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)/../../shared/vendor"; do
    candidate="$(ls -1 "$dir"/BAS_*.tar.gz 2>/dev/null | sort | tail -n 1 || true)"
    if [ -n "$candidate" ]; then tarball="$candidate"; break; fi
  done
fi
library="${2:-${DPMU_R_LIBRARY:-$HOME/.local/share/dpmu/Rlib}}"

if ! command -v R >/dev/null 2>&1; then
  echo "install-bas: R not found (apt-get install r-base-core r-base-dev, or bash scripts/setup-deps.sh)" >&2
  exit 1
fi

if [ -d "$library" ] && R_LIBS_USER="$library" Rscript -e \
  'suppressPackageStartupMessages(library(BAS, lib.loc = Sys.getenv("R_LIBS_USER"))); cat(as.character(packageVersion("BAS")))' \
  >"${TMPDIR:-/tmp}/install-bas.$$" 2>/dev/null; then
  echo "install-bas: BAS $(cat "${TMPDIR:-/tmp}/install-bas.$$") already installed in $library (nothing to do)"
  rm -f "${TMPDIR:-/tmp}/install-bas.$$"
  exit 0
fi
rm -f "${TMPDIR:-/tmp}/install-bas.$$"

if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
  echo "install-bas: no BAS source tarball found${tarball:+ at $tarball}." >&2
  echo "  Pass its path (bash scripts/install-bas.sh /path/to/BAS_x.y.z.tar.gz) or set BAS_TARBALL;" >&2
  echo "  the default is ../shared/vendor/BAS_*.tar.gz beside the repository. BAS is not in Debian" >&2
  echo "  and is not shipped with dpmu (bench/r_pipeline/README.md)." >&2
  exit 1
fi
case "$library" in
  "$repo"|"$repo"/*)
    echo "install-bas: refusing to install into the repository ($library); choose a library outside it" >&2
    exit 1 ;;
esac

mkdir -p "$library"
echo "install-bas: installing $(basename "$tarball") into $library (a few minutes: BAS compiles C and Fortran)"
R CMD INSTALL --no-docs --no-multiarch --library="$library" "$tarball"
R_LIBS_USER="$library" Rscript -e \
  'suppressPackageStartupMessages(library(BAS, lib.loc = Sys.getenv("R_LIBS_USER"))); cat("install-bas: BAS", as.character(packageVersion("BAS")), "loads\n")'
echo "install-bas: done; export R_LIBS_USER=$library"
