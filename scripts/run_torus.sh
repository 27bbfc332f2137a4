#!/usr/bin/env bash
# The main job: the shipped scene scenes/ring_torus.toml, the particle-binder
# ring torus of Baker & Gonzalez (2021, section 4.1) hitting a rigid wall,
# map (25), h = 1e-3, t_N = 35. Sets everything up on a fresh Debian 12
# machine, then runs `dem run`. Extra arguments go to `dem run` (README.md);
# DEM_SCENE picks another scene file (e.g. scenes/solid_torus.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
scene=${DEM_SCENE:-scenes/ring_torus.toml}
out=${DEM_OUTPUT_DIR:-torus_output}
./build/apps/dem run "$scene" --output-dir "$out" "$@"
echo "ParaView files (particles.pvd, bonds.pvd), energy.csv and checkpoint.bin are in: $(cd "$out" && pwd)"
