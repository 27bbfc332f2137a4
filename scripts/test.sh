#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds, and runs the whole
# test suite with ctest (the Python module's pytest suite, tests/python/,
# is the ctest test python_module).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j "$jobs"
# The MPI build: the same sources with -DDEM_WITH_MPI=ON, and its
# tests (label mpi): every layout of 1-4 ranks x 1-2 threads writes the same
# files as the run without MPI; restarts on another rank count.
cmake -S . -B build-mpi -DCMAKE_BUILD_TYPE=Release -DDEM_WITH_MPI=ON -DDEM_BUILD_BENCH=OFF
cmake --build build-mpi -j "$jobs" --target dem
ctest --test-dir build-mpi --output-on-failure -L mpi
