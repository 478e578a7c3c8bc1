#!/usr/bin/env bash
# Install dpmu's build and plotting dependencies from Debian 12 packages.
# Idempotent: packages already installed are skipped; nothing is downloaded
# except through apt-get. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev libtbb-dev libhdf5-dev libyaml-cpp-dev libfmt-dev catch2
  libboost-dev libboost-math-dev librandom123-dev libcli11-dev
  nlohmann-json3-dev libcsv-dev libbenchmark-dev libssl-dev
  python3 python3-numpy python3-h5py python3-matplotlib python3-scipy
  slurm-wlm munge clang-format chromium
  r-base-core r-cran-rcpp r-cran-rcppeigen r-cran-testthat r-cran-hdf5r r-cran-jsonlite r-cran-batchtools r-cran-mass
  pybind11-dev python3-pybind11 python3-pandas python3-pytest python3-pip python3-setuptools python3-wheel
  r-cran-bh r-cran-knitr r-cran-rmarkdown r-base-dev qpdf devscripts python3-skbuild python3-venv ccache
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-deps: done"
