#!/usr/bin/env bash
# Time and peak memory of a packing genesis against the particle count
# (issue 27's performance target; docs/model.md §21.3): `dem check` of a
# generated scene, a walled cube of polydisperse spheres (d uniform in
# [1/3, 1] mm, size ratio 3) at SOLID_FRACTION (default "dense"), for each
# count given (default 10000 100000 1000000), on THREADS cores (default 2, by
# taskset: oneTBB uses the cores the process may run on).
#
#   bench/packing_scaling.sh BUILD_DIR [COUNT...]
#   THREADS=2 SOLID_FRACTION=0.6 bench/packing_scaling.sh build 10000
#   TILE_PARTICLES=2000 bench/packing_scaling.sh build 10000
#
# TILE_PARTICLES (unset: the default, tiled above 20,000 particles; 0: no
# tiling) sets `tile_particles` (docs/model.md §21.8).
#
# Prints: count, seconds, peak resident memory (MB, /usr/bin/time -v), and
# dem check's packing lines.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [COUNT...]}
shift
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(10000 100000 1000000)
threads=${THREADS:-2}
fraction=${SOLID_FRACTION:-'"dense"'}
tile=${TILE_PARTICLES:+tile_particles = $TILE_PARTICLES}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%10s %10s %12s\n' particles seconds peak_MB
for n in "${counts[@]}"; do
  # Side of the cube holding n particles at 0.64: E[pi d^3/6] of d uniform
  # in [a, 3a] is pi/6 (81 - 1) a^3 / (4 * 2) / 1 with a = 1/3 mm.
  side=$(python3 -c "import math; a=1/3e3; ev=math.pi/6*((3*a)**4-a**4)/(4*2*a); print(f'{(${n}*ev/0.64)**(1/3):.6g}')")
  cat > "$work/p.toml" <<TOML
[run]
time_step = "auto"
steps = 1
[[material]]
name = "grain"
density = 2650.0
E = 5e7
[contact]
law = "penalty"
[[particles]]
source = "packing"
material = "grain"
region = "box"
lower = [0.0, 0.0, 0.0]
upper = [$side, $side, $side]
size_distribution = "uniform"
d_min = 3.333333e-4
d_max = 1e-3
solid_fraction = $fraction
seed = 1
$tile
TOML
  /usr/bin/time -v taskset -c "0-$((threads - 1))" "$build/apps/dem" check "$work/p.toml" > "$work/out" 2> "$work/time" || {
    cat "$work/out" "$work/time"; exit 1; }
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + t[i]; print s}' "$work/time")
  peak=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$work/time")
  printf '%10s %10s %12s\n' "$n" "$secs" "$peak"
  grep -E 'packing:|memory estimate' "$work/out" | grep -v 'packing: relaxation' | sed 's/^ */    /'
done
