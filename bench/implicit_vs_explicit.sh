#!/usr/bin/env bash
# iBDEM's speed claim (docs/model.md §12, §13.1) measured on this engine, side by
# side in one invocation: wall time per simulated millisecond of the
# implicit integrator (integrator = "implicit") and the explicit map (25) on
#   (a) the plate edge drop of docs/model.md §13.3 (scenes/plate_drop.toml): h =
#       2.5e-7 s explicit, Dt = 2.5e-6 and 2.5e-5 s implicit, to PLATE_T_END,
#       with broken bonds and fragments beside each;
#   (b) the beam stretch of iBDEM's class (scenes/beam_stretch.toml, 19013
#       particles, E = 1e7): explicit at 0.2 of the limit of docs/model.md §9.6,
#       implicit at 123 times T = 2/omega_est (Table 1's ratio), to
#       BEAM_T_END;
#   (c) the large plate (scenes/plate_drop_large.toml, 220,523 particles):
#       LARGE_EXPLICIT_STEPS explicit steps of 3.5e-7 s and
#       LARGE_IMPLICIT_STEPS implicit steps of iBDEM's 3.5e-5 s.
# Each at THREADS (a list, default "1 2"). Prints one row per run:
#   case,integrator,dt,threads,simulated_s,wall_s,wall_s_per_simulated_ms,
#   broken_bonds,fragments,newton_per_step,cg_per_step,hessian_blocks,
#   event_tolerance,rejected_steps,preconditioner,implicit_scheme,hessian_update
# (rejected_steps: implicit steps the event control of docs/model.md §12.8
# retried shorter to locate bond failures).
#
# Builds the engine with scripts/setup.sh if build/apps/dem is missing. Runs
# from any directory. Environment: THREADS ("1 2"), PLATE_T_END (4e-4),
# BEAM_T_END (2e-3), LARGE_EXPLICIT_STEPS (200), LARGE_IMPLICIT_STEPS (2),
# CASES ("a b c"), DEM_BUILD_DIR (build), HESSIAN (the implicit runs' [run]
# hessian_blocks, a list: "projected", "gauss-newton"; default
# "gauss-newton"), EVENTS (the implicit runs' [run] event_tolerance, a list;
# 0 turns the event control off; default "1e-3"), PRECONDITIONER (the
# implicit runs' [run] preconditioner, a list: "block-jacobi", "amg", "two-level";
# default "block-jacobi"), SCHEME (the implicit runs' [run]
# implicit_scheme, a list: "backward-euler", "midpoint" (docs/model.md
# §12.9); default "backward-euler"), HESSIAN_UPDATE (the implicit runs'
# [run] hessian_update, a list: "every-iteration", "when-slow"; default
# "every-iteration").
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
build=${DEM_BUILD_DIR:-build}
threads_list=${THREADS:-"1 2"}
plate_t_end=${PLATE_T_END:-4e-4}
beam_t_end=${BEAM_T_END:-2e-3}
large_explicit=${LARGE_EXPLICIT_STEPS:-200}
large_implicit=${LARGE_IMPLICIT_STEPS:-2}
cases=${CASES:-"a b c"}
hessian_list=${HESSIAN:-gauss-newton}
events_list=${EVENTS:-1e-3}
preconditioner_list=${PRECONDITIONER:-block-jacobi}
scheme_list=${SCHEME:-backward-euler}
update_list=${HESSIAN_UPDATE:-every-iteration}
[ -x "$build/apps/dem" ] || bash scripts/setup.sh
dem="$repo/$build/apps/dem"
work=$(mktemp -d "${TMPDIR:-/tmp}/implicit_vs_explicit.XXXXXX")
trap 'rm -rf "$work"' EXIT

# scene_with SCENE INTEGRATOR TIME_STEP OUT BLOCKS EVENTS PRECONDITIONER SCHEME UPDATE:
# the scene with its [run] integrator and time step replaced (and
# hessian_blocks = BLOCKS, event_tolerance = EVENTS, preconditioner =
# PRECONDITIONER, implicit_scheme = SCHEME, hessian_update = UPDATE when
# implicit), no VTK frames,
# written to OUT.
scene_with() {
  local blocks=""
  [ "$2" = implicit ] &&
    blocks="\nhessian_blocks = \"$5\"\nevent_tolerance = $6\npreconditioner = \"$7\"\nimplicit_scheme = \"$8\"\nhessian_update = \"$9\""
  sed -e "s|^integrator = .*|integrator = \"$2\"$blocks|" -e "s|^time_step = .*|time_step = $3|" \
      -e "s|^time_step_fraction = .*||" -e "s|^vtk_every = .*|vtk_every = 0|" \
      -e "s|^checkpoint_every = .*|checkpoint_every = 0|" "$1" > "$4"
}

echo "case,integrator,dt,threads,simulated_s,wall_s,wall_s_per_simulated_ms,broken_bonds,fragments,newton_per_step,cg_per_step,hessian_blocks,event_tolerance,rejected_steps,preconditioner,implicit_scheme,hessian_update"
# run CASE SCENE INTEGRATOR DT THREADS END_ARGS...: implicit runs once per
# HESSIAN, EVENTS, PRECONDITIONER, SCHEME and HESSIAN_UPDATE entry.
run() {
  if [ "$3" = implicit ]; then
    local blocks events preconditioner scheme update
    for blocks in $hessian_list; do
      for events in $events_list; do
        for preconditioner in $preconditioner_list; do
          for scheme in $scheme_list; do
            for update in $update_list; do run_one "$blocks" "$events" "$preconditioner" "$scheme" "$update" "$@"; done
          done
        done
      done
    done
  else
    run_one - - - - - "$@"
  fi
}
# run_one BLOCKS EVENTS PRECONDITIONER SCHEME UPDATE CASE SCENE INTEGRATOR DT THREADS END_ARGS...
run_one() {
  local blocks=$1 events=$2 preconditioner=$3 scheme=$4 update=$5 name=$6 scene=$7 integrator=$8 dt=$9 threads=${10}
  shift 10
  local file="$work/$name-$integrator-$dt.toml" out="$work/out"
  scene_with "$scene" "$integrator" "$dt" "$file" "$blocks" "$events" "$preconditioner" "$scheme" "$update"
  rm -rf "$out"
  local result t wall broken fragments newton cg rejected per_ms
  if ! result=$(python3 bench/run_log.py "$work/log" "$out" -- \
      "$dem" run "$file" --quiet --threads "$threads" --output-dir "$out" "$@"); then
    echo "$name,$integrator,$dt,$threads,$result ($blocks, $preconditioner, $scheme, $update)" >&2
    return 0
  fi
  read -r t wall broken fragments newton cg rejected <<<"$result"
  per_ms=$(python3 -c "import sys; print(f'{float(sys.argv[2]) / (float(sys.argv[1]) * 1e3):.4g}')" "$t" "$wall")
  echo "$name,$integrator,$dt,$threads,$t,$wall,$per_ms,$broken,$fragments,$newton,$cg,$blocks,$events,$rejected,$preconditioner,$scheme,$update"
}

for threads in $threads_list; do
  for c in $cases; do
    case $c in
      a)
        run plate scenes/plate_drop.toml rrp25 2.5e-7 "$threads" --t-end "$plate_t_end"
        run plate scenes/plate_drop.toml implicit 2.5e-6 "$threads" --t-end "$plate_t_end"
        run plate scenes/plate_drop.toml implicit 2.5e-5 "$threads" --t-end "$plate_t_end"
        ;;
      b)
        # T = 2/omega_est of docs/model.md §9.6 for E = 1e7, rho = 1000, r = 1.0102 mm.
        t_limit=$(python3 -c "import math; print(2 / (2.9 * math.sqrt(1e7 / (1000 * 0.0010101525445522107 ** 2))))")
        run stretch scenes/beam_stretch.toml rrp25 "$(python3 -c "print(0.2 * $t_limit)")" "$threads" --t-end "$beam_t_end"
        run stretch scenes/beam_stretch.toml implicit "$(python3 -c "print(123 * $t_limit)")" "$threads" --t-end "$beam_t_end"
        ;;
      c)
        run large scenes/plate_drop_large.toml rrp25 3.5e-7 "$threads" --steps "$large_explicit"
        run large scenes/plate_drop_large.toml implicit 3.5e-5 "$threads" --steps "$large_implicit"
        ;;
    esac
  done
done
