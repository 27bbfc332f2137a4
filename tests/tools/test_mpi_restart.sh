#!/usr/bin/env bash
# Checkpoints restart on another rank count, bit for bit (issues 14 and 28):
# a run on FIRST_RANKS MPI ranks (default 3) stopped at step FIRST (its
# checkpoint in parts: checkpoint.bin indexing one part per rank, written
# by each rank, run/checkpoint_parts.hpp) is continued to step TOTAL on
# each of RESTART_RANKS (default "2 1"; 1: one process, without mpirun),
# by the dem of a build without MPI if NO_MPI_DEM names one,
# and on 2 ranks into a new folder; a whole checkpoint (one process to
# step FIRST) is continued on 2 ranks too; each continued folder must hold the same energy.csv,
# bond_failures.csv, solver.csv and stress.csv as one uninterrupted run without MPI, and a VTK series
# (parallel frames of FIRST_RANKS pieces, then of the new count, or whole
# frames) that reads back as that run's, bit for bit. A copy with one part
# truncated, and one with a byte of a part changed, must be refused naming
# the part.
#
# Usage: [FIRST_RANKS=N] [RESTART_RANKS="..."] [NO_MPI_DEM=PATH] tests/tools/test_mpi_restart.sh BUILD_DIR SCENE FIRST TOTAL
# (FIRST a multiple of the scene's VTK and energy intervals). Exits 1 on any
# difference or failure.
set -uo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 BUILD_DIR SCENE FIRST TOTAL" >&2
  exit 2
fi
build=$1 scene=$2 first=$3 total=$4
dem=${DEM_APP:-$build/apps/dem}
[ -x "$dem" ] || { echo "FAIL: no $dem" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpi_restart.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun --oversubscribe --allow-run-as-root --bind-to none)
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/vtk_compare.sh"

"$dem" run "$scene" --steps "$total" --threads 2 --quiet --output-dir "$tmp/ref" >"$tmp/ref.log" 2>&1 ||
  { cat "$tmp/ref.log"; fail "the run without MPI failed"; }
n0=${FIRST_RANKS:-3}
"${mpi[@]}" -np "$n0" "$dem" run "$scene" --steps "$first" --threads 1 --quiet --output-dir "$tmp/three" \
  >"$tmp/three.log" 2>&1 || { cat "$tmp/three.log"; fail "the $n0-rank run failed"; }
[ -f "$tmp/three/checkpoint.bin" ] || fail "the $n0-rank run wrote no checkpoint"
parts=$(ls "$tmp/three"/checkpoint_parts/step_"$first"_of_"$n0"/part_*.bin 2>/dev/null | wc -l)
[ "$parts" -eq "$n0" ] || fail "the $n0-rank checkpoint has $parts part files, not $n0"
# A damaged part is refused, naming it (and nothing runs).
damaged() {  # damaged LABEL EXPECTED-TEXT: restart the copy in $tmp/bad, which must fail saying EXPECTED-TEXT
  if "$dem" restart "$tmp/bad/checkpoint.bin" --steps "$total" --quiet >"$tmp/bad.log" 2>&1; then
    fail "a checkpoint with $1 restarted"
  fi
  grep -q "$2" "$tmp/bad.log" || { cat "$tmp/bad.log"; fail "the refusal of $1 does not say '$2'"; }
  echo "ok: a checkpoint with $1 is refused: $(grep -o "checkpoint part [0-9]* of [0-9]*[^:]*: [a-z ]*" "$tmp/bad.log" | head -1)"
}
last=$((n0 - 1)) part_file="$tmp/bad/checkpoint_parts/step_${first}_of_${n0}/part_${last}.bin"
cp -r "$tmp/three" "$tmp/bad"
truncate -s -64 "$part_file"
damaged "part $last truncated" "checkpoint part $last of $n0.*truncated"
rm -rf "$tmp/bad" && cp -r "$tmp/three" "$tmp/bad"
printf '\x5a' | dd of="$part_file" bs=1 seek=200 conv=notrunc status=none
damaged "a byte of part $last changed" "checkpoint part $last of $n0.*checksum mismatch"
rm -rf "$tmp/bad"
failed=0
check() {  # check DIR LABEL [FIRST-LABEL]: DIR's tables and VTK series against the uninterrupted run
  local d=$1 bad=0 f before=${3:-"$n0 ranks"}
  for f in "$tmp/ref"/energy.csv "$tmp/ref"/bond_failures.csv "$tmp/ref"/solver.csv "$tmp/ref"/stress.csv; do
    [ -e "$f" ] || continue
    cmp -s "$f" "$d/$(basename "$f")" || { echo "    differs: $(basename "$f")"; bad=1; }
  done
  compare_vtk "$tmp/ref" "$d" || bad=1
  if [ $bad -eq 0 ]; then
    echo "ok: $(basename "$scene"): $before to step $first, then $2 to step $total"
  else
    echo "FAIL: $(basename "$scene"): $before to step $first, then $2: differs from the uninterrupted run"
    failed=$((failed + 1))
  fi
}
for ranks in ${RESTART_RANKS:-2 1}; do
  out="$tmp/on$ranks"
  cp -r "$tmp/three" "$out"
  if [ "$ranks" -eq 1 ]; then
    "$dem" restart "$out/checkpoint.bin" --steps "$total" --threads 2 --quiet >"$out.log" 2>&1
  else
    "${mpi[@]}" -np "$ranks" "$dem" restart "$out/checkpoint.bin" --steps "$total" --threads 1 --quiet >"$out.log" 2>&1
  fi || { cat "$out.log"; echo "FAIL: the restart on $ranks rank(s) failed"; failed=$((failed + 1)); continue; }
  check "$out" "$ranks rank(s)"
done
# On one process of a build without MPI (NO_MPI_DEM: its dem, when it is built).
if [ -n "${NO_MPI_DEM:-}" ]; then
  if [ -x "$NO_MPI_DEM" ]; then
    out="$tmp/nompi"
    cp -r "$tmp/three" "$out"
    if "$NO_MPI_DEM" restart "$out/checkpoint.bin" --steps "$total" --threads 2 --quiet >"$out.log" 2>&1; then
      check "$out" "a build without MPI"
    else
      cat "$out.log"; echo "FAIL: the restart by the build without MPI failed"; failed=$((failed + 1))
    fi
  else
    echo "note: no build without MPI at $NO_MPI_DEM: that restart is not run"
  fi
fi
# Continued on 2 ranks in a new folder: the frames up to the checkpoint
# (parallel frames of FIRST_RANKS pieces) are taken over with their pieces.
"${mpi[@]}" -np 2 "$dem" restart "$tmp/three/checkpoint.bin" --output-dir "$tmp/new2" --steps "$total" --threads 1 \
  --quiet >"$tmp/new2.log" 2>&1 || { cat "$tmp/new2.log"; echo "FAIL: the restart into a new folder failed"; exit 1; }
check "$tmp/new2" "2 ranks in a new folder"
# A whole checkpoint (one process without mpirun, stopped at step FIRST)
# continued on 2 ranks: its contact list is not built on any rank, its
# build and histories go to the parts as read (Simulation::Start::restored).
"$dem" run "$scene" --steps "$first" --threads 2 --quiet --output-dir "$tmp/whole" >"$tmp/whole.log" 2>&1 ||
  { cat "$tmp/whole.log"; fail "the run without mpirun to step $first failed"; }
[ ! -d "$tmp/whole/checkpoint_parts" ] || fail "the run without mpirun wrote its checkpoint in parts"
"${mpi[@]}" -np 2 "$dem" restart "$tmp/whole/checkpoint.bin" --steps "$total" --threads 1 --quiet >"$tmp/whole2.log" 2>&1 ||
  { cat "$tmp/whole2.log"; echo "FAIL: the restart of a whole checkpoint on 2 ranks failed"; exit 1; }
check "$tmp/whole" "2 ranks" "one process (a whole checkpoint)"
[ "$failed" -eq 0 ]
