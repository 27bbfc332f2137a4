#!/usr/bin/env bash
# A periodic cell against an open box (issue 26, performance): the same
# bonded FCC lattice (N x N x N cubic cells of side sqrt(2) d, d = 2 mm,
# BDEM bonds between nearest neighbours found by distance, penalty
# contact, the lattice at rest: the force loop's cost alone) run in a fully
# periodic cell (bonds through the faces: every site has 12) and as an open
# block (the same particles, no [domain]: the sites on the faces have
# fewer bonds). Runs dem_bench on both side by side and prints the time per
# step, particle-steps per second and the time per bond-step of each: a
# periodic cell should cost nothing beyond its extra bonds (docs/model.md
# §20.4).
#
# Usage: bench/periodic_vs_open.sh [STEPS] [THREADS] [N]
#   (defaults 200 steps, 1 thread, N = 20: 32,000 particles)
# Environment: DEM_BUILD_DIR (default build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${DEM_BUILD_DIR:-$root/build}
steps=${1:-200} threads=${2:-1} n=${3:-20}
bench="$build/bench/dem_bench"
[ -x "$bench" ] || { echo "no $bench: build the target dem_bench first" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/periodic_vs_open.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
a=$(python3 -c "print(repr(2e-3 * 2 ** 0.5))")        # the cubic cell's side
edge=$(python3 -c "print(repr($n * 2e-3 * 2 ** 0.5))")  # the periodic cell's edge
half=$(python3 -c "print(repr(0.5 * 2e-3 * 2 ** -0.5))")
scene() {  # scene PERIODIC(true|false)
  cat <<TOML
[run]
time_step = 2e-8
steps = $steps
[[material]]
name = "m"
density = 2400.0
E = 1e9
nu = 0.25
beta = 0.8
[[particles]]
source = "fcc_block"
material = "m"
spacing = 2e-3
cells = [$n, $n, $n]
periodic = true
origin = [$half, $half, $half]
[bonds]
law = "bdem"
pairs = "distance"
distance = 2.2e-3
[contact]
law = "penalty"
stiffness = 1e6
skin = 2e-4
TOML
  if [ "$1" = true ]; then
    printf '[domain]\nlower = [0.0, 0.0, 0.0]\nupper = [%s, %s, %s]\nperiodic = [true, true, true]\n' "$edge" "$edge" "$edge"
  fi
}
scene true >"$tmp/periodic.toml"
scene false >"$tmp/open.toml"
for s in open periodic; do
  "$build/apps/dem" check "$tmp/$s.toml" >"$tmp/$s.check" 2>&1 || { cat "$tmp/$s.check" >&2; exit 1; }
  "$bench" plate --scene-file "$tmp/$s.toml" --steps "$steps" --threads "$threads" >"$tmp/$s.csv" 2>"$tmp/$s.log"
done
particles=$(tail -1 "$tmp/open.csv" | cut -d, -f2)
echo "bonded FCC lattice of $particles particles, $steps steps, $threads thread(s):"
for s in open periodic; do
  seconds=$(tail -1 "$tmp/$s.csv" | cut -d, -f6)
  bonds=$(grep -o "bonds: [0-9]*" "$tmp/$s.check" | head -1 | cut -d' ' -f2)
  python3 -c "
s, n, b, k = $seconds, $particles, $bonds, $steps
print('  %-8s %8d bonds: %.4f s/step, %.4g particle-steps/s, %.3g ns per bond-step' % ('$s', b, s / k, n * k / s, 1e9 * s / (b * k)))"
done
