#!/usr/bin/env bash
# The lattice contact benchmark (scene/lattice_scene.hpp) side by side in
# one invocation: LAMMPS (Debian `lammps`, pair_style granular hertz) on 1 and
# 2 MPI ranks and this engine's dem_bench on 1 and 2 threads, same system
# (a cube of spheres of diameter 1 overlapping their face neighbours by about
# 2%, frictionless Hertz, 500 steps of h = 1e-3, skin 0.1). Prints
# seconds of the time-stepping loop and particle-steps per second of each,
# and the ratio engine / LAMMPS at equal rank and thread counts.
#
# The engine runs as many spheres as LAMMPS reports in its "Loop time" line:
# in.lattice.lmp with n = 40 creates 41^3 = 68,921 atoms (create_atoms keeps
# the lattice points on the upper face of a shrink-wrapped box), not 40^3.
# (Its lattice spacing also comes out 0.980588 d rather than 0.98 d, as
# change_box remaps through the shrink-wrapped box; with that spacing the
# engine reproduces LAMMPS's kinetic energy to 1e-13, tests/test_lattice_scene.cpp.)
#
# Installs lammps (and its MPI launcher) with apt-get if `lmp` is missing,
# and builds the engine with scripts/setup.sh if build/bench/dem_bench is
# missing. Runs from any directory.
#
# Environment: LATTICE_N (the variable n of in.lattice.lmp, 40), LATTICE_STEPS (500),
# REPEAT (runs of each configuration, best kept; 1), DEM_BUILD_DIR (the
# engine's build folder, relative to the repository root; build).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
repo=$(pwd)

n=${LATTICE_N:-40}
steps=${LATTICE_STEPS:-500}
repeat=${REPEAT:-1}
build=${DEM_BUILD_DIR:-build}
for pair in "LATTICE_N:$n" "LATTICE_STEPS:$steps" "REPEAT:$repeat"; do
  if ! [[ ${pair#*:} =~ ^[1-9][0-9]*$ ]]; then
    echo "compare_lammps: ${pair%%:*} must be a positive whole number, got '${pair#*:}'" >&2
    exit 1
  fi
done

# --- LAMMPS -----------------------------------------------------------------
if ! command -v lmp >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
  echo "compare_lammps: installing lammps (Debian package; brings openmpi-bin for mpirun)" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends lammps openmpi-bin
fi

# --- the engine ---------------------------------------------------------------
bench="$build/bench/dem_bench"
if [ ! -x "$bench" ]; then
  if [ "$build" = build ]; then
    echo "compare_lammps: building the engine (scripts/setup.sh)" >&2
    bash scripts/setup.sh
  else
    echo "compare_lammps: building dem_bench in $build" >&2
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
    cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target dem_bench
  fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

input="$repo/../shared/peers/in.lattice.lmp"
if [ ! -f "$input" ]; then
  # The same system as the peers' input.
  input="$work/in.lattice.lmp"
  cat >"$input" <<'LMP'
units           lj
atom_style      sphere
boundary        s s s
comm_modify     vel yes
lattice         sc 1.0
region          box block 0 ${n} 0 ${n} 0 ${n}
create_box      1 box
create_atoms    1 box
change_box      all x scale 0.98 y scale 0.98 z scale 0.98 remap
set             type 1 diameter 1.0 density 1.9099
velocity        all create 0.01 4928459 loop geom
pair_style      granular
pair_coeff      * * hertz 2100.0 0.0 tangential linear_nohistory 0.0 0.0
neighbor        0.1 bin
neigh_modify    delay 0 every 1 check yes
timestep        0.001
fix             1 all nve/sphere
thermo          100
run             ${steps}
LMP
fi

# "SECONDS ATOMS" of LAMMPS's loop on R ranks (best of $repeat), from its
# line "Loop time of X on R procs for S steps with N atoms".
lammps_run() {
  local ranks=$1 best="" r out line
  for ((r = 0; r < repeat; r++)); do
    out=$(cd "$work" && OMP_NUM_THREADS=1 mpirun --allow-run-as-root --oversubscribe \
            -np "$ranks" lmp -var n "$n" -var steps "$steps" -in "$input" -log none 2>&1) || {
      echo "compare_lammps: LAMMPS failed on $ranks ranks:" >&2
      echo "$out" | tail -20 >&2
      exit 1
    }
    line=$(echo "$out" | awk -v r="$ranks" -v s="$steps" \
      '/^Loop time of/ && $6 == r && $9 == s { print $4, $12 }')
    if [ -z "$line" ]; then
      echo "compare_lammps: no 'Loop time of ... on $ranks procs for $steps steps' line:" >&2
      echo "$out" | tail -20 >&2
      exit 1
    fi
    if [ -z "$best" ] || awk -v a="${line% *}" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then
      best=$line
    fi
  done
  echo "$best"
}

# Seconds of dem_bench's loop with COUNT spheres on T threads (best of $repeat).
engine_seconds() {
  local count=$1 threads=$2 csv
  csv=$("$bench" lattice --particles "$count" --steps "$steps" --threads "$threads" \
          --repeat "$repeat")
  echo "$csv" | awk -F, -v a="$count" 'NR > 1 && $2 == a {
      if (best == "" || $6 < best) best = $6 } END { if (best == "") exit 1; print best }' || {
    echo "compare_lammps: dem_bench did not run $count spheres (not a cube?):" >&2
    echo "$csv" >&2
    exit 1
  }
}

echo "compare_lammps: lattice n = $n, $steps steps of h = 1e-3, best of $repeat run(s)" >&2
declare -A seconds atoms
for c in 1 2; do
  echo "compare_lammps: LAMMPS on $c rank(s) ..." >&2
  line=$(lammps_run "$c")
  seconds[lammps,$c]=${line% *}
  atoms[$c]=${line#* }
  echo "compare_lammps: engine on $c thread(s), ${atoms[$c]} spheres ..." >&2
  seconds[engine,$c]=$(engine_seconds "${atoms[$c]}" "$c")
done

rate() { awk -v a="$1" -v s="$steps" -v t="$2" 'BEGIN { printf "%.4g", a * s / t }'; }
printf '%-8s %14s %8s %10s %18s %14s\n' code ranks/threads spheres seconds particle-steps/s engine/LAMMPS
for c in 1 2; do
  printf '%-8s %14s %8s %10.4f %18s %14s\n' LAMMPS "$c" "${atoms[$c]}" "${seconds[lammps,$c]}" \
    "$(rate "${atoms[$c]}" "${seconds[lammps,$c]}")" ""
  printf '%-8s %14s %8s %10.4f %18s %14s\n' engine "$c" "${atoms[$c]}" "${seconds[engine,$c]}" \
    "$(rate "${atoms[$c]}" "${seconds[engine,$c]}")" \
    "$(awk -v l="${seconds[lammps,$c]}" -v e="${seconds[engine,$c]}" 'BEGIN { printf "%.2f", l / e }')"
done
