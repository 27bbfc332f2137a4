#!/usr/bin/env bash
# Weak scaling of the MPI set-up and memory (issue 28 item 5): the solid
# torus with PER_RANK particles a rank (target_particles = PER_RANK x P) on
# P = 1, 2, 4, 8 ranks x 1 thread (oversubscribed on a small machine), each
# to STEPS steps with a checkpoint at the end (in parts with P > 1).
#
#   bash bench/mpi_weak_scaling.sh               # PER_RANK=25000 STEPS=40 RANKS="1 2 4 8"
#   PER_RANK=100000 RANKS="1 2 4" bash bench/mpi_weak_scaling.sh
#
# Per P it prints: the particles, the largest and the summed peak resident
# memory of the ranks (/usr/bin/time per rank), the largest per particle of
# the whole system and per particle the rank owns, the wall time of the
# whole command, the stepping loop's time (`dem run`'s "done:" line) and
# their difference (set-up, MPI start and the closing checkpoint), and
# `dem check --ranks P`'s estimate of one rank's peak. With
# flat memory per rank the largest peak would stay the same as P grows;
# while every rank sets the whole scene up (docs/scaling.md) it grows with
# the system. On fewer cores than ranks the rates are not a scaling figure.
set -euo pipefail
cd "$(dirname "$0")/.."
per_rank=${PER_RANK:-25000}
steps=${STEPS:-40}
ranks_list=${RANKS:-1 2 4 8}
. bench/mpi_dem.sh
command -v /usr/bin/time >/dev/null || bash scripts/install_packages.sh time
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpi_weak.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1
echo "| ranks | particles | largest rank peak | dem check --ranks estimate | all ranks | largest per particle | largest per owned particle | wall s | loop s | set-up etc. s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for p in $ranks_list; do
  n=$((per_rank * p))
  scene="$tmp/torus_$p.toml"
  sed -e "s/^particle_diameter = .*/target_particles = $n/" -e 's/^vtk_every = .*/vtk_every = 0/' \
      -e 's/^energy_every = .*/energy_every = 10/' -e 's/^checkpoint_every = .*/checkpoint_every = 0/' \
      scenes/solid_torus.toml >"$scene"
  estimate=$("$dem" check "$scene" --ranks "$p" |
             sed -n 's/.*memory estimate per MPI rank at [0-9]* ranks: \([0-9.]* [KMGT]*i*B\).*/\1/p')
  t0=$(date +%s.%N)
  : >"$tmp/$p.peaks"  # each rank appends its peak (KiB), one line each (time -a -o)
  mpirun --oversubscribe --allow-run-as-root --bind-to none -np "$p" /usr/bin/time -a -o "$tmp/$p.peaks" -f %M "$dem" run \
    "$scene" --steps "$steps" --threads 1 --quiet --output-dir "$tmp/out_$p" >"$tmp/$p.log" 2>"$tmp/$p.err" ||
    { cat "$tmp/$p.log" "$tmp/$p.err" >&2; exit 1; }
  t1=$(date +%s.%N)
  got=$(sed -n 's/^  particles: \([0-9]*\).*/\1/p' "$tmp/$p.log")
  loop=$(sed -n 's/^done: [0-9]* steps in \([0-9.e+-]*\) s.*/\1/p' "$tmp/$p.log")
  grep -Eo '^[0-9]+$' "$tmp/$p.peaks" | python3 -c '
import sys
kib = [int(x) for x in sys.stdin.read().split()]
p, n, t0, t1, loop, est = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
big, total = max(kib) * 1024, sum(kib) * 1024
wall = t1 - t0
print(f"| {p} | {n} | {big / 2**20:.0f} MiB | {est} | {total / 2**20:.0f} MiB | {big / n:.0f} B | {big * p / n:.0f} B | "
      f"{wall:.1f} | {loop:.1f} | {wall - loop:.1f} |")' "$p" "$got" "$t0" "$t1" "$loop" "$estimate"
done
