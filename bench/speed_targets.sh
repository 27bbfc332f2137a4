#!/usr/bin/env bash
# The speed targets of the vectorised kernels (core/simd.hpp), side by side in one
# invocation on this machine: the solid torus at 10^6 particles, the large
# plate (iBDEM's Plate, BDEM bonds with fracture) and the lattice against
# LAMMPS, each at 1 and 2 threads, with the peak memory and a stage profile
# of each scene at 2 threads. Prints one line per run and a summary table.
#
#   bash bench/speed_targets.sh
#
# Environment: TORUS_STEPS (100), PLATE_STEPS (5952: one 1/480 s frame, the
# impact and fracture included), REPEAT (runs of each timing, best kept; 1),
# PLATE_REPEAT (runs of the plate frame; REPEAT),
# DEM_SIMD (the SIMD target, core/simd.hpp; default the best the CPU has),
# DEM_BUILD_DIR (build). Builds the engine first if dem_bench is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DEM_BUILD_DIR:-build}
torus_steps=${TORUS_STEPS:-100}
plate_steps=${PLATE_STEPS:-5952}
repeat=${REPEAT:-1}
plate_repeat=${PLATE_REPEAT:-$repeat}
bench="$build/bench/dem_bench"
[ -x "$bench" ] || bash scripts/setup.sh
out=$(mktemp -d "${TMPDIR:-/tmp}/speed_targets.XXXXXX")
trap 'rm -rf "$out"' EXIT

best() {  # best particle-steps/s of the CSV rows in $1 for thread count $2
  awk -F, -v t="$2" 'NR > 1 && $4 == t && $7 > m { m = $7 } END { printf "%.4g", m }' "$1"
}
peak() {  # largest peak RSS (bytes per particle) of the CSV rows in $1
  awk -F, 'NR > 1 && $8 / $2 > m { m = $8 / $2 } END { printf "%.0f", m }' "$1"
}

echo "speed_targets: solid torus, 10^6 particles, $torus_steps steps, 1 and 2 threads ($repeat run(s) each) ..."
"$bench" solid-torus --particles 1000000 --steps "$torus_steps" --threads 1,2 --repeat "$repeat" \
  >"$out/torus.csv" 2>"$out/torus.log"
grep '^dem_bench' "$out/torus.log"
echo "speed_targets: large plate, $plate_steps steps, 1 and 2 threads ($plate_repeat run(s) each) ..."
"$bench" plate --steps "$plate_steps" --threads 1,2 --repeat "$plate_repeat" >"$out/plate.csv" 2>"$out/plate.log"
grep '^dem_bench' "$out/plate.log"
echo "speed_targets: lattice against LAMMPS ..."
REPEAT=$repeat bash bench/compare_lammps.sh | tee "$out/lammps.txt" | tail -5

echo "speed_targets: stage profiles at 2 threads ..."
"$bench" solid-torus --particles 1000000 --steps 30 --threads 2 --profile 2>&1 >/dev/null | grep '^profile'
"$bench" plate --steps 400 --threads 2 --profile 2>&1 >/dev/null | grep '^profile'
"$bench" lattice --particles 68921 --threads 2 --profile 2>&1 >/dev/null | grep '^profile'

t1=$(best "$out/torus.csv" 1); t2=$(best "$out/torus.csv" 2)
p1=$(best "$out/plate.csv" 1); p2=$(best "$out/plate.csv" 2)
echo
echo "scene                     1 thread     2 threads    efficiency  peak B/particle"
awk -v a="$t1" -v b="$t2" -v m="$(peak "$out/torus.csv")" \
  'BEGIN { printf "solid torus 10^6          %-12.4g %-12.4g %5.1f%%      %s\n", a, b, 100 * b / (2 * a), m }'
awk -v a="$p1" -v b="$p2" -v m="$(peak "$out/plate.csv")" \
  'BEGIN { printf "large plate               %-12.4g %-12.4g %5.1f%%      %s\n", a, b, 100 * b / (2 * a), m }'
awk -v a="$p2" -v b="$t2" 'BEGIN { printf "plate / torus at 2 threads: %.2f\n", a / b }'
grep -E '^(LAMMPS|engine) ' "$out/lammps.txt"
