#!/usr/bin/env bash
# Issue 22, item 14: SIGINT under mpirun. Open MPI's mpirun, given Ctrl-C
# itself, terminates the ranks (SIGTERM, then SIGKILL after its
# odls_base_sigkill_timeout of 1 s) and exits 1, before a checkpoint of a
# large system is written; the documented way to stop a decomposed run is
# to signal the dem processes. Then every rank finishes the same step, the
# checkpoint is written, every rank exits 3 and so does mpirun, and the
# checkpoint restarts (on another rank count) to the end.
#
# Usage: tests/tools/test_mpi_interrupt.sh BUILD_DIR SCENE
# Prints one line per check and "N passed, M failed"; exits 1 on a failure.
set -uo pipefail
build=$1 scene=$2
dem=${DEM_APP:-$(cd "$build/apps" && pwd)/dem}
[ -x "$dem" ] || { echo "FAIL: no $dem" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpi_interrupt.XXXXXX")
trap 'pkill -KILL -f "^$dem run $scene" 2>/dev/null; rm -rf "$tmp"' EXIT
mpi=(mpirun --oversubscribe --allow-run-as-root --bind-to none)
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1
passed=0 failed=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then echo "ok: $name"; passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
"${mpi[@]}" -np 2 "$dem" run "$scene" --threads 1 --quiet --output-dir "$tmp/out" >"$tmp/run.log" 2>&1 &
runner=$!
# Wait until the run steps (its first energy rows are written), then signal the ranks.
for _ in $(seq 1 300); do
  [ -s "$tmp/out/energy.csv" ] && [ "$(wc -l <"$tmp/out/energy.csv")" -ge 3 ] && break
  sleep 0.1
done
pkill -INT -f "^$dem run $scene"
wait $runner
status=$?
check "mpirun exits 3 (got $status)" [ "$status" -eq 3 ]
check "the run says it was interrupted" grep -q "interrupted by SIGINT" "$tmp/run.log"
check "a checkpoint was written" [ -s "$tmp/out/checkpoint.bin" ]
"$dem" restart "$tmp/out/checkpoint.bin" --threads 1 --quiet >"$tmp/restart.log" 2>&1
check "it restarts on one process to the end" [ $? -eq 0 ]
[ "$failed" -eq 0 ] || sed 's/^/    /' "$tmp/run.log" | tr '\r' '\n' | tail -15
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
