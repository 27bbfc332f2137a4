#!/usr/bin/env bash
# The main job: the particle-binder ring torus of Baker & Gonzalez (2021,
# section 4.1) hitting a rigid wall, map (25), h = 1e-3, t_N = 35.
# Sets everything up on a fresh Debian 12 machine, then runs dem_torus.
# Extra arguments are passed to dem_torus (see README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=${DEM_OUTPUT_DIR:-torus_output}
./build/apps/dem_torus --integrator 25 --dt 1e-3 --t-end 35 --output-dir "$out" "$@"
echo "ParaView files and energy.csv are in: $(cd "$out" && pwd)"
