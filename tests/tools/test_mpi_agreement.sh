#!/usr/bin/env bash
# Issue 22, item 10: MPI ranks started on different scenes
# (`mpirun -np 2 dem run a.toml : -np 1 dem run b.toml`) or with different
# options ran and wrote mixed results. Every rank must agree on the scene
# text, the run options and the build before the first step, or all stop
# with exit 1 naming what differs and where. An implicit scene with
# preconditioner = "amg" (one process only: hypre's coarsening depends on the
# parts) is refused on 2 ranks before the first step, and runs on one rank.
# A run whose memory estimate per rank is over --max-memory is refused on
# every rank before the first step.
#
# Usage: tests/tools/test_mpi_agreement.sh BUILD_DIR SCENE_A SCENE_B [IMPLICIT_SCENE]
# Prints one line per case and "N passed, M failed"; exits 1 on a failure.
set -uo pipefail
build=$1 a=$2 b=$3 implicit=${4:-}
dem=${DEM_APP:-$build/apps/dem}
[ -x "$dem" ] || { echo "FAIL: no $dem" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpi_agreement.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun --oversubscribe --allow-run-as-root --bind-to none)
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1
passed=0 failed=0
expect() {  # expect NAME STATUS TEXT -- COMMAND...: exit status and a text in the output
  local name=$1 status=$2 text=$3
  shift 4
  "$@" >"$tmp/out.log" 2>&1
  local got=$?
  if [ "$got" -eq "$status" ] && grep -qF -- "$text" "$tmp/out.log"; then
    echo "ok: $name"
    passed=$((passed + 1))
  else
    echo "FAIL: $name (exit $got, expected $status and \"$text\"):"
    sed 's/^/    /' "$tmp/out.log" | tail -20
    failed=$((failed + 1))
  fi
}
expect "two scenes" 1 "the scene text differs from rank 0's on rank 2" -- \
  "${mpi[@]}" -np 2 "$dem" run "$a" --steps 20 --quiet --threads 1 --output-dir "$tmp/x" : \
  -np 1 "$dem" run "$b" --steps 20 --quiet --threads 1 --output-dir "$tmp/x"
expect "two step counts" 1 "the run (end step, output folder, time step, integrator, start step) differs from rank 0's on rank 1" -- \
  "${mpi[@]}" -np 1 "$dem" run "$a" --steps 20 --quiet --threads 1 --output-dir "$tmp/y" : \
  -np 1 "$dem" run "$a" --steps 30 --quiet --threads 1 --output-dir "$tmp/y"
[ ! -e "$tmp/x/energy.csv" ] && [ ! -e "$tmp/y/energy.csv" ] || { echo "FAIL: a refused run wrote energy.csv"; failed=$((failed + 1)); }
expect "one scene" 0 "done:" -- \
  "${mpi[@]}" -np 2 "$dem" run "$a" --steps 20 --quiet --threads 1 --output-dir "$tmp/z"
# Memory per rank (issue 28): the estimate of one rank (40 MiB of program
# under Open MPI) is over a --max-memory that the run on one process (18 MiB)
# fits: refused on 2 ranks before the first step, run on 1.
expect "memory per rank over --max-memory" 1 "per MPI rank at 2 ranks" -- \
  "${mpi[@]}" -np 2 "$dem" run "$a" --steps 20 --quiet --threads 1 --max-memory 30M --output-dir "$tmp/m2"
[ ! -e "$tmp/m2/energy.csv" ] || { echo "FAIL: the run refused for its memory wrote energy.csv"; failed=$((failed + 1)); }
expect "memory of one rank within --max-memory" 0 "done:" -- \
  "${mpi[@]}" -np 1 "$dem" run "$a" --steps 20 --quiet --threads 1 --max-memory 30M --output-dir "$tmp/m1"
if [ -n "$implicit" ]; then
  sed 's/^integrator = "implicit"$/&\npreconditioner = "amg"/' "$implicit" > "$tmp/amg.toml"
  grep -q '^preconditioner = "amg"$' "$tmp/amg.toml" || { echo "FAIL: no integrator = \"implicit\" line in $implicit"; exit 2; }
  if grep -q '^HYPRE_LIBRARY:FILEPATH=/' "$build/CMakeCache.txt"; then
    expect "AMG on 2 ranks" 1 'preconditioner = "amg" runs in one process only' -- \
      "${mpi[@]}" -np 2 "$dem" run "$tmp/amg.toml" --steps 2 --quiet --threads 1 --output-dir "$tmp/amg2"
    [ ! -e "$tmp/amg2/energy.csv" ] || { echo "FAIL: the refused AMG run wrote energy.csv"; failed=$((failed + 1)); }
    expect "AMG on 1 rank" 0 "done:" -- \
      "${mpi[@]}" -np 1 "$dem" run "$tmp/amg.toml" --steps 2 --quiet --threads 1 --output-dir "$tmp/amg1"
  else
    expect "AMG without hypre" 1 "not in this build" -- \
      "${mpi[@]}" -np 2 "$dem" run "$tmp/amg.toml" --steps 2 --quiet --threads 1 --output-dir "$tmp/amg2"
  fi
  # The two-level preconditioner's aggregates are runs of a process's
  # particles: one process only, as AMG.
  sed 's/^integrator = "implicit"$/&\npreconditioner = "two-level"/' "$implicit" > "$tmp/two_level.toml"
  expect "two-level on 2 ranks" 1 'preconditioner = "two-level" runs in one process only' -- \
    "${mpi[@]}" -np 2 "$dem" run "$tmp/two_level.toml" --steps 2 --quiet --threads 1 --output-dir "$tmp/tl2"
  [ ! -e "$tmp/tl2/energy.csv" ] || { echo "FAIL: the refused two-level run wrote energy.csv"; failed=$((failed + 1)); }
  expect "two-level on 1 rank" 0 "done:" -- \
    "${mpi[@]}" -np 1 "$dem" run "$tmp/two_level.toml" --steps 2 --quiet --threads 1 --output-dir "$tmp/tl1"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
