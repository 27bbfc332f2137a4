#!/usr/bin/env bash
# Installs the Debian 12 packages the engine needs (if missing) and builds it
# in Release mode into ./build, with the Python module (build/python/dem_rrp,
# docs/python.md). Used by run_torus.sh, test.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install_packages.sh

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDEM_WITH_PYTHON=ON
cmake --build build -j "$jobs"
