#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds, and runs the whole
# test suite with ctest (the Python module's pytest suite, tests/python/,
# is the ctest test python_module). The MPI tests (label mpi, one at a
# time) run build/apps/dem-mpi, the same dem with MPI on the same libraries:
# every layout of 1-4 ranks x 1-2 threads writes the same files as the run
# without MPI; restarts on another rank count.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
[ -x build/apps/dem-mpi ] || { echo "error: build/apps/dem-mpi was not built (Open MPI not found by cmake)" >&2; exit 1; }
ctest --test-dir build --output-on-failure -j "$jobs"
