#!/usr/bin/env bash
# The main job: the shipped scene scenes/ring_torus.toml, the particle-binder
# ring torus of Baker & Gonzalez (2021, section 4.1) hitting a rigid wall,
# map (25), h = 1e-3, t_N = 35. Sets everything up on a fresh Debian 12
# machine, then runs `dem run`. Extra arguments go to `dem run` (docs/running.md);
# DEM_SCENE picks another scene file (e.g. scenes/solid_torus.toml),
# DEM_OUTPUT_DIR the output folder (default torus_output). DEM_BUILD_DIR
# runs an existing build instead of setting up and building into build/.
#
# The output folder is this script's own: when it holds an earlier run's
# files (run twice), they are replaced (`dem run --overwrite`, which removes
# only the files the engine writes), and the script says so.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DEM_BUILD_DIR:-}
if [ -z "$build" ]; then
  bash scripts/setup.sh
  build=build
fi
scene=${DEM_SCENE:-scenes/ring_torus.toml}
out=${DEM_OUTPUT_DIR:-torus_output}
replace=()
if [ -e "$out/run.id" ] || [ -e "$out/energy.csv" ] || [ -e "$out/particles.pvd" ] || [ -e "$out/checkpoint.bin" ]; then
  echo "run_torus.sh: $out holds an earlier run; replacing its files (dem run --overwrite)"
  replace=(--overwrite)
fi
"$build/apps/dem" run "$scene" --output-dir "$out" "${replace[@]}" "$@"
written=$(cd "$out" && ls -d particles.pvd bonds.pvd energy.csv checkpoint.bin 2>/dev/null | paste -sd ' ' || true)
echo "Output ($written) in: $(cd "$out" && pwd)"
