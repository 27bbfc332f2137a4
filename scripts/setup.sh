#!/usr/bin/env bash
# Installs the Debian 12 packages the engine needs (if missing) and builds it
# in Release mode into ./build. Used by run_torus.sh, test.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libeigen3-dev libtbb-dev libnanoflann-dev
          libvtk9-dev libdeflate-dev libgtest-dev libbenchmark-dev libcli11-dev
          libtomlplusplus-dev zlib1g-dev python3-matplotlib python3-vtk9 xvfb xauth)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
