#!/usr/bin/env bash
# How the packing genesis grows with the particle count (issue 27,
# performance): a dense polydisperse packing (diameters uniform in
# [1, 3] mm: size ratio 3; solid_fraction "dense") in a walled cube sized
# for about N particles, made by `dem check` (which builds the scene, the
# genesis included, and runs nothing). Prints, for each N, the particles
# made, the wall time, the peak memory (/usr/bin/time's maximum resident
# set) against dem check's own estimate of dem run's peak, and the packing
# report's solid fraction.
#
# Usage: bench/packing_scaling.sh [THREADS] [N...]
#   (defaults: 2 threads; N = 10000 100000; add 1000000 for the issue's
#   target of 10^6 in at most 5 minutes)
# Environment: DEM_BUILD_DIR (default build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${DEM_BUILD_DIR:-$root/build}
threads=${1:-2}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(10000 100000)
dem="$build/apps/dem"
[ -x "$dem" ] || { echo "no $dem: build the target dem first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "no /usr/bin/time (Debian package time)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/packing_scaling.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '%-10s %-10s %-10s %-14s %-14s %s\n' "N asked" particles "time (s)" "peak (MiB)" "estimate" "solid fraction"
for n in "${counts[@]}"; do
  # E[d^3] of d uniform in [1, 3] mm is (3^4 - 1)/(4 * 2) = 10 mm^3: a sphere
  # of pi/6 * 10 mm^3 on average; the cube holds n of them at 0.64.
  side=$(python3 -c "import math; print(repr((${n} * math.pi / 6 * 10e-9 / 0.64) ** (1 / 3)))")
  cat >"$tmp/p$n.toml" <<TOML
[run]
time_step = 1e-7
steps = 1
[[material]]
name = "grain"
density = 2500
E = 1e9
nu = 0.3
[[particles]]
source = "packing"
material = "grain"
region = "box"
lower = [0, 0, 0]
upper = [$side, $side, $side]
size_distribution = "uniform"
d_min = 0.001
d_max = 0.003
solid_fraction = "dense"
seed = 1
[contact]
law = "hertz-mindlin"
TOML
  /usr/bin/time -v "$dem" check "$tmp/p$n.toml" --max-memory 20G >"$tmp/out$n" 2>"$tmp/time$n" || {
    echo "dem check failed for N = $n:" >&2; cat "$tmp/out$n" "$tmp/time$n" >&2; exit 1; }
  made=$(grep -o 'particles: [0-9]*' "$tmp/out$n" | head -1 | awk '{print $2}')
  wall=$(grep 'Elapsed (wall clock)' "$tmp/time$n" | awk '{print $NF}' |
    awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
  peak=$(grep 'Maximum resident set size' "$tmp/time$n" | awk '{printf "%.0f", $NF / 1024}')
  estimate=$(grep -o 'memory estimate: [0-9.]* [KMG]iB' "$tmp/out$n" | awk '{print $3 " " $4}')
  phi=$(grep -o 'solid fraction [0-9.]*' "$tmp/out$n" | head -1 | awk '{print $3}')
  printf '%-10s %-10s %-10s %-14s %-14s %s\n' "$n" "$made" "$wall" "$peak" "$estimate" "$phi"
done
