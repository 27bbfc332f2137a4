#!/usr/bin/env bash
# A triangle-mesh floor against the analytic plane (issue 26, performance):
# the same granular block of about 10^5 Hertz-Mindlin spheres (FCC, 30 x 30
# x 28 cells of side sqrt(2) d, d = 2 mm, unbonded, gravity) resting on a
# floor z = 0 that is either a [[wall]] or a [[mesh]] of about 10^5
# triangles (a K x K grid of squares, each split along an alternating
# diagonal: one planar patch). Runs dem_bench on both scene files side by
# side and prints the time per step of each and their ratio (target <= 1.5).
# The mesh floor must give the wall's energy table (docs/model.md §11.9):
# the script also prints the two runs' final E_balance.
#
# Usage: bench/mesh_vs_wall.sh [STEPS] [THREADS] [K]
#   (defaults 100 steps, 1 thread, K = 224: 100,352 triangles)
# Environment: DEM_BUILD_DIR (default build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${DEM_BUILD_DIR:-$root/build}
steps=${1:-100} threads=${2:-1} k=${3:-224}
bench="$build/bench/dem_bench"
[ -x "$bench" ] || { echo "no $bench: build the target dem_bench first" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mesh_vs_wall.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/floor.stl" "$k" <<'PY'
import sys
path, k = sys.argv[1], int(sys.argv[2])
lo, hi = -0.02, 0.105
step = (hi - lo) / k
with open(path, "w") as out:
    out.write("solid floor\n")
    def tri(a, b, c):
        out.write("facet normal 0 0 1\n outer loop\n")
        for p in (a, b, c):
            out.write("  vertex %.9g %.9g 0\n" % p)
        out.write(" endloop\nendfacet\n")
    for i in range(k):
        for j in range(k):
            x0, y0 = lo + i * step, lo + j * step
            x1, y1 = x0 + step, y0 + step
            if (i + j) % 2:
                tri((x0, y0), (x1, y0), (x1, y1)); tri((x0, y0), (x1, y1), (x0, y1))
            else:
                tri((x0, y0), (x1, y0), (x0, y1)); tri((x1, y0), (x1, y1), (x0, y1))
    out.write("endsolid floor\n")
PY
scene() {  # scene FLOOR_TABLE
  cat <<TOML
[run]
time_step = 5e-7
steps = $steps
[[material]]
name = "grain"
density = 2500.0
E = 1e8
nu = 0.3
e = 0.5
mu_s = 0.3
[[particles]]
source = "fcc_block"
material = "grain"
spacing = 2e-3
cells = [30, 30, 28]
lowest_z = 1.0e-3
[bonds]
pairs = "none"
[contact]
law = "hertz-mindlin"
$1
[gravity]
acceleration = [0.0, 0.0, -9.81]
TOML
}
scene $'[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]' >"$tmp/wall.toml"
scene $'[[mesh]]\nname = "floor"\nfile = "floor.stl"' >"$tmp/mesh.toml"
for s in wall mesh; do
  "$bench" plate --scene-file "$tmp/$s.toml" --steps "$steps" --threads "$threads" >"$tmp/$s.csv" 2>"$tmp/$s.log"
done
seconds() { tail -1 "$tmp/$1.csv" | cut -d, -f6; }
wall=$(seconds wall) mesh=$(seconds mesh)
tri=$(grep -c "^facet" "$tmp/floor.stl")
echo "floor of $tri triangles against $(tail -1 "$tmp/mesh.csv" | cut -d, -f2) spheres, $steps steps, $threads threads:"
echo "  plane wall: $wall s"
echo "  mesh:       $mesh s"
python3 -c "print('  ratio mesh/wall: %.3f' % ($mesh / $wall))"
grep -h "drift" "$tmp/wall.log" "$tmp/mesh.log" | sed 's/^/  /' || true
