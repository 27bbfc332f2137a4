#!/usr/bin/env bash
# Do two builds of the engine produce the same results? Runs
# OLD_BUILD_DIR/apps/dem and NEW_BUILD_DIR/apps/dem on the shipped scenes
# (the scenes/ folder of this script's repository, the same files for both):
#   scenes/ring_torus.toml   full run (the scene's own end)
#   scenes/solid_torus.toml  --steps 300
#   scenes/clumps.toml       full run
#   scenes/lattice.toml      --steps 300
# each at --threads 1 and --threads 2, and reports for each scene and thread
# count whether old and new energy.csv are byte-identical (cmp). Where they
# are not, it prints, for every column that differs, the largest absolute and
# the largest relative difference |a - b| / max(|a|, |b|) over the rows (and
# says so if the row counts or headers differ).
#
# Usage: bash bench/compare_outputs.sh OLD_BUILD_DIR NEW_BUILD_DIR
# Exits 0 when every pair is identical, 1 when any differs or a run fails,
# 2 on bad usage. Environment: SCENES_DIR (default: this repository's
# scenes/), PYTHON (default python3).
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 OLD_BUILD_DIR NEW_BUILD_DIR" >&2
  exit 2
fi
old_dem="$1/apps/dem"
new_dem="$2/apps/dem"
scenes=${SCENES_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../scenes" && pwd)}
python=${PYTHON:-python3}
for b in "$old_dem" "$new_dem"; do
  [ -x "$b" ] || { echo "no executable $b (build first)" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare_outputs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Per column: largest absolute and relative difference of two energy.csv files.
column_diff() {
  "$python" - "$1" "$2" <<'PY'
import csv, sys
with open(sys.argv[1]) as f: a = list(csv.reader(f))
with open(sys.argv[2]) as f: b = list(csv.reader(f))
if not a or not b or a[0] != b[0]:
    print("    headers differ:", a[0] if a else None, "vs", b[0] if b else None)
    sys.exit()
if len(a) != len(b):
    print(f"    row counts differ: old {len(a) - 1}, new {len(b) - 1}; comparing the first {min(len(a), len(b)) - 1}")
print(f"    {'column':<16} {'max |old-new|':>14} {'max rel diff':>13}  (at t of the rel. max)")
for j, name in enumerate(a[0]):
    worst_abs = worst_rel = 0.0
    at = None
    for ra, rb in zip(a[1:], b[1:]):
        x, y = float(ra[j]), float(rb[j])
        d = abs(x - y)
        scale = max(abs(x), abs(y))
        r = d / scale if scale > 0 else 0.0
        worst_abs = max(worst_abs, d)
        if r > worst_rel:
            worst_rel, at = r, ra[0]
    if worst_abs > 0:
        print(f"    {name:<16} {worst_abs:14.3e} {worst_rel:13.3e}  (t = {at})")
PY
}

runs=(
  "ring_torus.toml"
  "solid_torus.toml --steps 300"
  "clumps.toml"
  "lattice.toml --steps 300"
)
start=$(date +%s)
same=0
differ=0
for spec in "${runs[@]}"; do
  read -r scene extra <<<"$spec"
  for threads in 1 2; do
    label="$scene${extra:+ $extra} --threads $threads"
    ok=1
    for build in old new; do
      bin=$old_dem
      [ "$build" = new ] && bin=$new_dem
      out="$tmp/$build"
      rm -rf "$out"
      # shellcheck disable=SC2086
      if ! "$bin" run "$scenes/$scene" --output-dir "$out" --quiet --threads "$threads" $extra \
           >"$tmp/$build.log" 2>&1 || [ ! -f "$out/energy.csv" ]; then
        echo "FAILED RUN ($build): $label"
        sed 's/^/    /' "$tmp/$build.log"
        ok=0
      fi
    done
    if [ "$ok" = 0 ]; then
      differ=$((differ + 1))
    elif cmp -s "$tmp/old/energy.csv" "$tmp/new/energy.csv"; then
      echo "identical: $label ($(($(wc -l <"$tmp/old/energy.csv") - 1)) rows)"
      same=$((same + 1))
    else
      echo "DIFFERENT: $label"
      column_diff "$tmp/old/energy.csv" "$tmp/new/energy.csv"
      differ=$((differ + 1))
    fi
  done
done
echo "$same identical, $differ different or failed ($(( $(date +%s) - start )) s)"
[ "$differ" -eq 0 ]
