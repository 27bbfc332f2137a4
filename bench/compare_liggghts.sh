#!/usr/bin/env bash
# The frictional settling benchmark side by side in one invocation: this
# engine (1 and 2 threads), LIGGGHTS (Debian `liggghts`, 1 and 2 MPI ranks)
# and LAMMPS (Debian `lammps`, pair_style granular, 1 and 2 ranks) on the
# same spheres, materials, walls and steps (bench/compare_liggghts/make_case.py
# says what they are and how each code's model maps onto the others):
#
#   3k    the 3,000 spheres of ../shared/peers/settling/ settling in a 130 mm
#         box, 25,000 steps of 2e-5 s (the case of issue 24)
#   108k  LIGGGHTS's settled 3k bed tiled 6 x 6 (108,000 spheres, a 780 mm
#         box), at rest under gravity, 2,000 steps: the contact-dominated
#         regime at 10^5 spheres without 25,000 steps of each code
#
# Prints, per code and worker count, the wall time of the whole process, the
# time-stepping loop's time (each code's own report), particle-steps per
# second of the loop, peak memory (resident set) and the engine's speed over
# LIGGGHTS's at the same worker count; the table also goes to
# $WORK/compare_liggghts.md.
#
# Installs liggghts and lammps with apt-get --no-install-recommends if missing
# (LIGGGHTS's recommended ParaView would replace the libvtk9-dev the engine
# builds against). Needs the engine built (scripts/setup.sh).
#
# Environment: CASES ("3k 108k"), WORKERS ("1 2"), REPEAT (runs of each
# configuration, the fastest kept; 1), WORK (/tmp/compare_liggghts),
# SETTLING (the shared inputs; <repo>/../shared/peers/settling), DEM (the
# engine's CLI; <repo>/build/apps/dem), LAMMPS=0 to leave LAMMPS out.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cases=${CASES:-3k 108k}
workers=${WORKERS:-1 2}
repeat=${REPEAT:-1}
work=${WORK:-/tmp/compare_liggghts}
settling=${SETTLING:-$repo/../shared/peers/settling}
dem=${DEM:-$repo/build/apps/dem}
with_lammps=${LAMMPS:-1}

install() {  # package...
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "compare_liggghts: installing $* (Debian packages)" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "$@" >&2
}
command -v liggghts >/dev/null || install liggghts
[ "$with_lammps" = 0 ] || command -v lmp >/dev/null || install lammps
command -v mpirun >/dev/null || install openmpi-bin
[ -x "$dem" ] || { echo "compare_liggghts: no engine at $dem (build it with scripts/setup.sh, or set DEM)" >&2; exit 1; }
[ -f "$settling/positions.csv" ] || { echo "compare_liggghts: no $settling/positions.csv (set SETTLING)" >&2; exit 1; }
mpi=(mpirun -np)
[ "$(id -u)" -eq 0 ] && mpi=(mpirun --allow-run-as-root --oversubscribe -np)
mkdir -p "$work"

# run NAME DIR CMD...: the command in DIR, REPEAT times; prints "wall_s peak_kib log"
# of the fastest run (its log kept as NAME.log).
run() {
  local name=$1 dir=$2 best="" line
  shift 2
  for ((r = 0; r < repeat; r++)); do
    (cd "$dir" && /usr/bin/time -f "%e %M" -o "$name.time" "$@" >"$name.run.log" 2>&1) ||
      { echo "compare_liggghts: $name failed, see $dir/$name.run.log" >&2; tail -5 "$dir/$name.run.log" >&2; exit 1; }
    line=$(cat "$dir/$name.time")
    if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
      best=$line
      cp "$dir/$name.run.log" "$dir/$name.log"
    fi
  done
  echo "$best"
}

# loop_seconds LOG: the time-stepping loop's seconds (LAMMPS/LIGGGHTS "Loop
# time of", the engine's "done: N steps in T s").
loop_seconds() {
  sed -n -e 's/^Loop time of \([0-9.e+-]*\) .*/\1/p' -e 's/^done: [0-9]* steps in \([0-9.e+-]*\) s.*/\1/p' "$1" | tail -1
}

table=$work/compare_liggghts.md
{
  echo "| case | code | workers | wall s | loop s | particle-steps/s | peak MiB | engine / LIGGGHTS |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|"
} >"$table"
declare -A lig_rate
for c in $cases; do
  dir=$work/$c
  case $c in
    3k) python3 "$here/compare_liggghts/make_case.py" --positions "$settling/positions.csv" --steps 25000 "$dir" ;;
    108k)
      [ -f "$work/3k/final.dump" ] || { echo "compare_liggghts: 108k tiles the 3k case's settled bed: run CASES=\"3k 108k\"" >&2; exit 1; }
      python3 "$here/compare_liggghts/make_case.py" --tile "$work/3k/final.dump" --tiles 6 --steps 2000 "$dir" ;;
    *) echo "compare_liggghts: unknown case '$c' (3k, 108k)" >&2; exit 1 ;;
  esac
  n=$(($(wc -l <"$dir/positions.csv") - 1))
  steps=$(sed -n 's/^steps = //p' "$dir/engine.toml")
  for w in $workers; do
    launch=("${mpi[@]}" "$w")
    [ "$w" = 1 ] && launch=()  # one rank: the code itself, so that its peak memory is measured
    for code in liggghts engine lammps; do
      case $code in
        liggghts) res=$(run "lig$w" "$dir" ${launch[@]+"${launch[@]}"} liggghts -in lig.in -log "lig$w.lammps.log") ;;
        engine) res=$(run "dem$w" "$dir" "$dem" run engine.toml --threads "$w" --output-dir "out$w" --overwrite) ;;
        lammps)
          [ "$with_lammps" = 0 ] && continue
          res=$(run "lmp$w" "$dir" ${launch[@]+"${launch[@]}"} lmp -in lmp.in -log "lmp$w.lammps.log") ;;
      esac
      wall=${res%% *}
      kib=${res#* }
      case $code in liggghts) short=lig ;; engine) short=dem ;; lammps) short=lmp ;; esac
      loop=$(loop_seconds "$dir/$short$w.log")
      rate=$(awk -v n="$n" -v s="$steps" -v t="$loop" 'BEGIN { printf "%.3g", n * s / t }')
      # mpirun's %M is the launcher's; the ranks' peak is in LAMMPS's log only
      # as an estimate, so the peers' memory is left out with more than one rank.
      mem=$(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }')
      [ "$code" != engine ] && [ "$w" -gt 1 ] && mem="-"
      ratio="-"
      [ "$code" = liggghts ] && lig_rate[$c.$w]=$rate
      [ "$code" != liggghts ] && ratio=$(awk -v a="$rate" -v b="${lig_rate[$c.$w]}" 'BEGIN { printf "%.2f", a / b }')
      echo "| $c ($n spheres, $steps steps) | $code | $w | $wall | $loop | $rate | $mem | $ratio |" | tee -a "$table"
    done
  done
done
echo
cat "$table"
