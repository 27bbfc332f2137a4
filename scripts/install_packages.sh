#!/usr/bin/env bash
# Installs, with apt-get (through sudo when not root), whichever of the
# engine's Debian 12 packages are missing, plus any extra packages named on
# the command line. Used by setup.sh and fuzz.sh, so the list lives here once.
#
#   bash scripts/install_packages.sh [EXTRA_PACKAGE...]
set -euo pipefail

packages=(build-essential cmake pkg-config libeigen3-dev libtbb-dev libnanoflann-dev
          libvtk9-dev libdeflate-dev libgtest-dev libbenchmark-dev libcli11-dev
          libtomlplusplus-dev nlohmann-json3-dev libhwy-dev libboost-dev libopenmpi-dev openmpi-bin libhypre-dev zlib1g-dev python3-matplotlib python3-vtk9 xvfb xauth
          pybind11-dev python3-dev python3-numpy python3-pytest "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install_packages: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
