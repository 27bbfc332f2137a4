#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds, and runs the whole
# test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j "$jobs"
