#!/usr/bin/env bash
# Speed of two builds of the engine side by side, measured in one invocation
# on the same machine: OLD_BUILD_DIR/bench/dem_bench against
# NEW_BUILD_DIR/bench/dem_bench on
#   dem_bench ring --steps 50000   (80 particles: the default 1,000 steps take 14 ms, too short to time)
#   dem_bench solid-torus --particles 100000 --steps 200
#   dem_bench lattice
# each at --threads 1 and --threads 2, one thread count per process (so each
# row's peak_rss_bytes is that run's own). Every configuration is run REPEAT
# times for each build, interleaved old/new in ABBA order (old,new,new,old,...)
# so that drift of the machine (thermal state, other load) hits both alike.
# The best (largest) particle_steps_per_s of each build is kept.
#
# Prints one table row per configuration: scene, threads, old and new
# millions of particle-steps per second, new/old, and the peak RSS (MiB, the
# largest over the repeats) of each. Progress goes to stderr.
#
# Usage: bash bench/compare_revisions.sh OLD_BUILD_DIR NEW_BUILD_DIR [REPEAT]
#   REPEAT defaults to 3. Exits 1 when a run fails, 2 on bad usage.
# Environment: RAW_CSV=FILE also keeps every dem_bench row, with a column
# `build` (old/new) in front.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 OLD_BUILD_DIR NEW_BUILD_DIR [REPEAT]" >&2
  exit 2
fi
old_bench="$1/bench/dem_bench"
new_bench="$2/bench/dem_bench"
repeat=${3:-3}
case "$repeat" in ''|*[!0-9]*|0) echo "REPEAT must be a positive integer, got '$repeat'" >&2; exit 2 ;; esac
for b in "$old_bench" "$new_bench"; do
  [ -x "$b" ] || { echo "no executable $b (build first)" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare_revisions.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rows="$tmp/rows.csv"   # build,scene,particles,bonds,threads,steps,seconds,rate,rss
: >"$rows"

configs=(
  "ring --steps 50000"
  "solid-torus --particles 100000 --steps 200"
  "lattice"
)

# run_one BUILD(old|new) THREADS ARGS...: one dem_bench process, its row appended to $rows.
run_one() {
  local build=$1 threads=$2; shift 2
  local bin=$old_bench
  [ "$build" = new ] && bin=$new_bench
  if ! "$bin" "$@" --threads "$threads" >"$tmp/out" 2>"$tmp/err"; then
    echo "error: $build: dem_bench $* --threads $threads failed:" >&2
    cat "$tmp/err" >&2
    exit 1
  fi
  local row
  row=$(sed -n 2p "$tmp/out")
  if [ -z "$row" ] || [ "$(head -1 "$tmp/out")" != "scene,particles,bonds,threads,steps,seconds,particle_steps_per_s,peak_rss_bytes" ]; then
    echo "error: $build: unexpected output of dem_bench $* --threads $threads:" >&2
    cat "$tmp/out" >&2
    exit 1
  fi
  echo "$build,$row" >>"$rows"
  echo "  $build: $row" >&2
}

start=$(date +%s)
for cfg in "${configs[@]}"; do
  for threads in 1 2; do
    echo "dem_bench $cfg --threads $threads" >&2
    for ((r = 0; r < repeat; r++)); do
      if ((r % 2 == 0)); then
        run_one old "$threads" $cfg
        run_one new "$threads" $cfg
      else
        run_one new "$threads" $cfg
        run_one old "$threads" $cfg
      fi
    done
  done
done
[ -n "${RAW_CSV:-}" ] && { echo "build,scene,particles,bonds,threads,steps,seconds,particle_steps_per_s,peak_rss_bytes"; cat "$rows"; } >"$RAW_CSV"

echo "old: $1"
echo "new: $2"
echo "best of $repeat run(s) each; M = 1e6 particle-steps/s; RSS in MiB"
awk -F, '
  {
    key = $2 SUBSEP $5
    if (!(key in seen)) { seen[key] = 1; order[++n] = key; name[key] = $2; thr[key] = $5; parts[key] = $3 }
    if ($8 + 0 > best[$1, key] + 0) best[$1, key] = $8
    if ($9 + 0 > rss[$1, key] + 0) rss[$1, key] = $9
  }
  END {
    printf "%-12s %9s %7s %10s %10s %9s %9s %9s\n", "scene", "particles", "threads", "old M/s", "new M/s", "new/old", "old RSS", "new RSS"
    for (i = 1; i <= n; i++) {
      k = order[i]; o = best["old", k]; w = best["new", k]
      printf "%-12s %9d %7d %10.3f %10.3f %9.3f %9.1f %9.1f\n", name[k], parts[k], thr[k], o / 1e6, w / 1e6,
             (o > 0 ? w / o : 0), rss["old", k] / 1048576, rss["new", k] / 1048576
    }
  }' "$rows"
echo "($(( $(date +%s) - start )) s)"
