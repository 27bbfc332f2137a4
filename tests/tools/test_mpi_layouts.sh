#!/usr/bin/env bash
# The promise of issue 14: a scene run over 1-4 MPI ranks, each at 1 and 2
# threads, writes byte-identical energy.csv, bond_failures.csv, groups.csv,
# walls.csv, stress.csv and (implicit runs) solver.csv
# to the run without MPI, and parallel VTK frames (one piece per rank) that
# VTK's reader (vtkXMLPPolyDataReader, as in ParaView) reads back with every
# particle once and every particle's and bond's state the reference's bits.
# Once per call it also checks that the comparison fails on a frame with a
# piece missing and on one with a piece named twice.
#
# Usage: tests/tools/test_mpi_layouts.sh BUILD_DIR SCENE STEPS [RANKS...]
#   BUILD_DIR  a build with -DDEM_WITH_MPI=ON (its apps/dem), or with
#              DEM_APP the dem with MPI to run (a default build's apps/dem-mpi)
#   SCENE      a scene file; STEPS: steps to run (--steps)
#   RANKS      rank counts to try (default 2 3 4)
# Environment: REPARTITION (default 0): with N > 0 the decomposed runs also
# make new parts every N steps (DEM_REPARTITION_EVERY), so that particles
# migrate between ranks many times. MIN_PARTS (default 0): each decomposed
# run must report ("parts made N times") at least that many parts made.
# Each decomposed run must print every rank's peak memory and the largest,
# and the most its parts held as a fraction of the whole system (particles
# and records). PART_FRACTION="R:F" (default none): at R ranks that
# fraction must be below F on every rank (issue 28: a rank holds its part
# and its shell, through every migration, never the system).
# The reference is `dem run` on 1 process at 2 threads. Prints one line per
# layout and "N passed, M failed"; exits 1 on any difference or failure.
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 BUILD_DIR SCENE STEPS [RANKS...]" >&2
  exit 2
fi
build=$1 scene=$2 steps=$3
shift 3
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(2 3 4)
dem=${DEM_APP:-$build/apps/dem}
[ -x "$dem" ] || { echo "FAIL: no $dem" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "FAIL: no mpirun (openmpi-bin)" >&2; exit 2; }
. "$(dirname "$0")/vtk_compare.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpi_layouts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun --oversubscribe --allow-run-as-root --bind-to none)
export OMPI_MCA_rmaps_base_oversubscribe=1
# Containers often lack the kernel's cross-memory attach: copy through shared memory.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# More ranks than cores (oversubscribed): ranks waiting in MPI give the core up.
export OMPI_MCA_mpi_yield_when_idle=1

if ! "$dem" run "$scene" --steps "$steps" --threads 2 --quiet --output-dir "$tmp/ref" >"$tmp/ref.log" 2>&1; then
  echo "FAIL: the run without MPI failed:"; sed 's/^/    /' "$tmp/ref.log"; exit 1
fi
compare() {  # compare DIR: the files of a run against the reference
  local d=$1 bad=0 f
  for f in "$tmp/ref"/energy.csv "$tmp/ref"/bond_failures.csv "$tmp/ref"/groups.csv "$tmp/ref"/walls.csv \
           "$tmp/ref"/solver.csv "$tmp/ref"/stress.csv; do
    [ -e "$f" ] || continue
    if ! cmp -s "$f" "$d/$(basename "$f")"; then
      echo "    differs: $(basename "$f")"
      bad=1
    fi
  done
  compare_vtk "$tmp/ref" "$d" "$d.vtk.log" || bad=1
  return $bad
}
negatives_done=0
negatives() {  # the comparison must see a lost piece and a piece listed twice
  local d=$1 last
  last=$(ls "$d"/particles_*.pvtp 2>/dev/null | tail -1)
  [ -n "$last" ] || { echo "FAIL: $d holds no parallel frame"; return 1; }
  cp -r "$d" "$tmp/lost"
  rm -f "$tmp/lost/$(basename "${last%.pvtp}")_1.vtp"
  if compare_vtk "$tmp/ref" "$tmp/lost" >/dev/null; then echo "FAIL: a lost piece went unnoticed"; return 1; fi
  cp -r "$d" "$tmp/twice"
  sed -i 's|_1.vtp"/>|_0.vtp"/>|' "$tmp/twice/$(basename "$last")"
  if compare_vtk "$tmp/ref" "$tmp/twice" >/dev/null; then echo "FAIL: a piece read twice went unnoticed"; return 1; fi
  rm -rf "$tmp/lost" "$tmp/twice"
  echo "ok: the comparison fails without piece 1 of $(basename "$last") and with piece 0 read twice"
}
passed=0 failed=0
for r in "${ranks[@]}"; do
  for t in 1 2; do
    label="$(basename "$scene") --steps $steps: $r ranks x $t threads"
    out="$tmp/r${r}t${t}"
    if ! DEM_REPARTITION_EVERY=${REPARTITION:-0} "${mpi[@]}" -np "$r" "$dem" run "$scene" --steps "$steps" \
         --threads "$t" --quiet --output-dir "$out" >"$out.log" 2>&1; then
      echo "FAIL: $label: the run failed:"; tail -20 "$out.log" | sed 's/^/    /'
      failed=$((failed + 1)); continue
    fi
    made=$(sed -n 's/.*MPI: parts made \([0-9]*\) times.*/\1/p' "$out.log")
    if [ "${made:-0}" -lt "${MIN_PARTS:-0}" ]; then
      echo "FAIL: $label: parts made ${made:-0} times, expected at least $MIN_PARTS"
      failed=$((failed + 1)); continue
    fi
    # Every rank's peak memory, and the largest (issue 28 item 4).
    peaks=$(sed -n 's/.*MPI: peak memory per rank (MiB):\([^;]*\); largest .*/\1/p' "$out.log" | wc -w)
    if [ "$peaks" -ne "$r" ]; then
      echo "FAIL: $label: expected the peak memory of $r ranks, got: $(grep 'peak memory per rank' "$out.log")"
      failed=$((failed + 1)); continue
    fi
    fraction=$(sed -n 's/.*largest part fraction \([0-9.e+-]*\) (rank.*/\1/p' "$out.log")
    if [ -z "$fraction" ]; then
      echo "FAIL: $label: no 'largest part fraction' in the run's output"
      failed=$((failed + 1)); continue
    fi
    if [ -n "${PART_FRACTION:-}" ] && [ "${PART_FRACTION%%:*}" = "$r" ] &&
       ! awk -v f="$fraction" -v m="${PART_FRACTION#*:}" 'BEGIN { exit !(f < m) }'; then
      echo "FAIL: $label: a rank's parts held $fraction of the system, not below ${PART_FRACTION#*:}:"
      grep 'parts held' "$out.log" | sed 's/^/    /'
      failed=$((failed + 1)); continue
    fi
    if compare "$out"; then
      echo "ok: $label ($(ls "$out"/particles_*.pvtp 2>/dev/null | wc -l) parallel frames, $(($(wc -l <"$out/energy.csv") - 1)) energy rows, largest part fraction $fraction)"
      passed=$((passed + 1))
      if [ $negatives_done -eq 0 ]; then
        negatives "$out" || failed=$((failed + 1))
        negatives_done=1
      fi
    else
      echo "FAIL: $label: files differ from the run without MPI"
      failed=$((failed + 1))
    fi
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
