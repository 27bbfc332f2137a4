#!/usr/bin/env bash
# The cost of MPI at equal cores (mpi/domain.hpp): the solid torus at about 10^6
# particles on 2 MPI ranks x 1 thread against 1 process x 2 threads, same
# scene, same steps, same bits (the files are compared too).
#
#   bash bench/mpi_overhead.sh            # on build/apps/dem-mpi (built if needed)
#   STEPS_SHORT=100 STEPS_LONG=600 DIAMETER=0.5e-3 bash bench/mpi_overhead.sh
#   SCENE=implicit bash bench/mpi_overhead.sh   # the implicit plate drop
#     (tests/scenes/plate_drop_implicit.toml, 8123 particles, steps 8..24)
#
# Each layout runs the scene twice, to STEPS_SHORT and to STEPS_LONG steps;
# the rate is (STEPS_LONG - STEPS_SHORT) N / (t_long - t_short) with the
# stepping-loop times `dem run` prints, so set-up and the closing checkpoint
# (gathered on rank 0) cancel out. Peak memory: the largest resident set of
# each process (/usr/bin/time), summed over the ranks. A third layout, 4
# ranks x 1 thread to STEPS_SHORT (oversubscribed here), gives the memory
# at 4 ranks against the 1-process run to the same step (issue 28: at most
# 1.25 times), with its tables compared too. The last column is the wall
# time of the run to STEPS_SHORT less its stepping loop: start-up, set-up
# and the closing checkpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
implicit=no
[ "${SCENE:-}" = implicit ] && implicit=yes
if [ $implicit = yes ]; then
  short=${STEPS_SHORT:-8}
  long=${STEPS_LONG:-24}
else
  short=${STEPS_SHORT:-100}
  long=${STEPS_LONG:-600}
fi
diameter=${DIAMETER:-0.5e-3}
. bench/mpi_dem.sh
command -v /usr/bin/time >/dev/null || bash scripts/install_packages.sh time
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpi_overhead.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
scene="$tmp/scene.toml"
if [ $implicit = yes ]; then
  sed -e 's/^vtk_every = .*/vtk_every = 0/' -e 's/^energy_every = .*/energy_every = 8/' \
      tests/scenes/plate_drop_implicit.toml >"$scene"
else
  sed -e "s/^particle_diameter = .*/particle_diameter = $diameter/" -e 's/^vtk_every = .*/vtk_every = 0/' \
      -e 's/^energy_every = .*/energy_every = 100/' -e 's/^checkpoint_every = .*/checkpoint_every = 0/' \
      scenes/solid_torus.toml >"$scene"
fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none
run() {  # run LABEL STEPS THREADS LAUNCHER...: prints the loop seconds
  local label=$1 steps=$2 threads=$3; shift 3
  : >"$tmp/peaks"  # each process appends its peak (KiB), one line each (time -a -o)
  local t0; t0=$(date +%s.%N)
  "$@" "$dem" run "$scene" --steps "$steps" --threads "$threads" --quiet --overwrite \
    --output-dir "$tmp/$label" >"$tmp/$label.log" 2>"$tmp/$label.err" ||
    { cat "$tmp/$label.log" "$tmp/$label.err" >&2; exit 1; }
  awk '{s += $1} END {print s * 1024}' "$tmp/peaks" >"$tmp/$label.mem"
  local loop; loop=$(sed -n 's/^done: [0-9]* steps in \([0-9.e+-]*\) s.*/\1/p' "$tmp/$label.log")
  # The rest of the wall time: start-up, set-up and the closing checkpoint.
  python3 -c "import sys; print(f'{float(sys.argv[1]) - float(sys.argv[2]) - float(sys.argv[3]):.1f}')" \
    "$(date +%s.%N)" "$t0" "$loop" >"$tmp/$label.setup"
  echo "$loop"
}
one=(/usr/bin/time -a -o "$tmp/peaks" -f %M)
two=(mpirun --oversubscribe --allow-run-as-root --bind-to none -np 2 /usr/bin/time -a -o "$tmp/peaks" -f %M)
a_short=$(run threads_short "$short" 2 "${one[@]}")
a_long=$(run threads_long "$long" 2 "${one[@]}")
b_short=$(run ranks_short "$short" 1 "${two[@]}")
b_long=$(run ranks_long "$long" 1 "${two[@]}")
# 4 ranks x 1 thread (oversubscribed on 2 cores: memory and bits only).
four=(mpirun --oversubscribe --allow-run-as-root --bind-to none -np 4 /usr/bin/time -a -o "$tmp/peaks" -f %M)
OMPI_MCA_mpi_yield_when_idle=1 run four_short "$short" 1 "${four[@]}" >/dev/null
n=$(sed -n 's/^  particles: \([0-9]*\).*/\1/p' "$tmp/threads_long.log")
same=yes
for f in "$tmp/threads_long"/energy.csv "$tmp/threads_long"/solver.csv; do
  [ -e "$f" ] || continue
  cmp -s "$f" "$tmp/ranks_long/$(basename "$f")" || same=no
done
for f in "$tmp/threads_short"/energy.csv "$tmp/threads_short"/solver.csv; do
  [ -e "$f" ] || continue
  cmp -s "$f" "$tmp/four_short/$(basename "$f")" || same=no
done
python3 - "$n" "$short" "$long" "$a_short" "$a_long" "$b_short" "$b_long" "$(cat "$tmp/threads_long.mem")" \
  "$(cat "$tmp/ranks_long.mem")" "$same" "$([ $implicit = yes ] && echo "implicit plate drop" || echo "solid torus")" \
  "$(cat "$tmp/four_short.mem")" "$(cat "$tmp/threads_short.mem")" \
  "$(cat "$tmp/threads_short.setup")" "$(cat "$tmp/ranks_short.setup")" "$(cat "$tmp/four_short.setup")" <<'PY'
import sys
n, s, l = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
a0, a1, b0, b1 = map(float, sys.argv[4:8])
ma, mb = float(sys.argv[8]), float(sys.argv[9])
ra = (l - s) * n / (a1 - a0)
rb = (l - s) * n / (b1 - b0)
print(f"{sys.argv[11]}, {n} particles, steps {s}..{l} (tables identical: {sys.argv[10]})")
m4, ms = float(sys.argv[12]), float(sys.argv[13])
ua, ub, u4 = sys.argv[14:17]
print("| layout | particle-steps/s | peak memory (all processes) | per particle | set-up etc. s (run to step %d) |" % s)
print("|---|---|---|---|---|")
print(f"| 1 process x 2 threads | {ra/1e6:.3g} M | {ma/2**30:.2f} GiB | {ma/n:.0f} B | {ua} |")
print(f"| 2 MPI ranks x 1 thread | {rb/1e6:.3g} M | {mb/2**30:.2f} GiB | {mb/n:.0f} B | {ub} |")
print(f"| 4 MPI ranks x 1 thread (to step {s}) | - | {m4/2**30:.2f} GiB | {m4/n:.0f} B | {u4} |")
print(f"MPI at equal cores: {rb/ra:.2f} of the threaded rate; peak memory of all ranks over the 1-process peak: "
      f"{mb/ma:.2f} at 2 ranks, {m4/ms:.2f} at 4 (to step {s})")
PY
