#!/usr/bin/env bash
# Quasi-static three-point bending at a punch speed of 1 mm/s (issue 29,
# docs/verification.md "Quasi-static three-point bending"), side by side in
# one invocation:
#   - implicitly: scenes/three_point_bending{_low,}_quasi_static.toml at each
#     step of IMPLICIT_STEPS (default "8e-3 4e-3" s), the event control on,
#     with each CG preconditioner of PRECONDITIONER (default "two-level", the
#     scenes' own; "block-jacobi two-level amg" for all three) and
#     HESSIAN_UPDATE ([run] hessian_update: default the scenes' own,
#     "when-slow"; "every-iteration" for Newton's method);
#   - explicitly: the same scene with integrator = "rrp25", the "auto" step
#     (0.2 of the limit) and [damping] viscous = ALPHA (default 100 1/s,
#     docs/model.md §11.10), to EXPLICIT_T_END (default: the scene's end,
#     1.1 s; a shorter stretch is projected to the end by its wall time per
#     simulated second, and the row says so);
# and compares them with tools/compare_bending.py (peak punch force of the
# force averaged over SMOOTH = 2e-3 s, the time the beam is in two), writing
# OUT/bending_<resolution>.png. Prints one row per run:
#   resolution,integrator,time_step,threads,simulated_s,wall_s,
#   wall_s_to_end,newton_per_step,cg_per_step,rejected_steps
# (integrator: "implicit+" and the preconditioner, e.g. "implicit+two-level")
# (wall_s_to_end: the wall time to the scene's end, measured or projected),
# then each resolution's comparison table.
#
# Builds the engine with scripts/setup.sh if build/apps/dem is missing. Runs
# from any directory. Environment: RESOLUTIONS ("low middle"), THREADS (2),
# IMPLICIT_STEPS ("8e-3 4e-3"), PRECONDITIONER ("two-level"), HESSIAN_UPDATE (the scenes'), ALPHA (100), EXPLICIT_T_END (the scene's
# end), SMOOTH (2e-3), OUT (./quasi_static_bending), DEM_BUILD_DIR (build),
# TOLERANCE (unset: none; else every run's peak force and time in two must be
# within it of the explicit run's, relative, or the script exits 2: the
# ctest quasi_static_bending_low runs it so).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
build=${DEM_BUILD_DIR:-build}
resolutions=${RESOLUTIONS:-"low middle"}
threads=${THREADS:-2}
implicit_steps=${IMPLICIT_STEPS:-"8e-3 4e-3"}
preconditioners=${PRECONDITIONER:-two-level}
hessian_update=${HESSIAN_UPDATE:-}
alpha=${ALPHA:-100}
explicit_t_end=${EXPLICIT_T_END:-}
smooth=${SMOOTH:-2e-3}
out_dir=${OUT:-$PWD/quasi_static_bending}
case "$out_dir" in /*) ;; *) out_dir="$repo/$out_dir" ;; esac
[ -x "$build/apps/dem" ] || bash scripts/setup.sh
case "$build" in /*) dem="$build/apps/dem" ;; *) dem="$repo/$build/apps/dem" ;; esac
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3
mkdir -p "$out_dir"
work=$(mktemp -d "${TMPDIR:-/tmp}/quasi_static_bending.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run_one NAME SCENE_FILE T_END_ARGS...: runs into $work/NAME, prints its row.
run_one() {
  local name=$1 file=$2 resolution=$3 integrator=$4 dt=$5 scene_end=$6
  shift 6
  local result t wall broken fragments newton cg rejected to_end
  if ! result=$("$python" bench/run_log.py "$work/$name.log" "$work/$name" -- \
      "$dem" run "$file" --quiet --threads "$threads" --output-dir "$work/$name" "$@"); then
    echo "$resolution,$integrator,$dt,$threads,$result" >&2
    return 1
  fi
  read -r t wall broken fragments newton cg rejected <<<"$result"
  to_end=$("$python" -c "import sys; t, w, e = map(float, sys.argv[1:4]); print(f'{w:.4g}' if t >= e * (1 - 1e-9) else f'{w * e / t:.4g} (projected from {t:.4g} s)')" "$t" "$wall" "$scene_end")
  echo "$resolution,$integrator,$dt,$threads,$t,$wall,$to_end,$newton,$cg,$rejected"
}

status=0
echo "resolution,integrator,time_step,threads,simulated_s,wall_s,wall_s_to_end,newton_per_step,cg_per_step,rejected_steps"
for resolution in $resolutions; do
  case $resolution in
    low) scene=scenes/three_point_bending_low_quasi_static.toml ;;
    middle) scene=scenes/three_point_bending_quasi_static.toml ;;
    *) echo "quasi_static_bending.sh: unknown resolution '$resolution' (low, middle)" >&2; exit 1 ;;
  esac
  scene_end=$(sed -n 's/^end_time = //p' "$scene")
  runs=()
  explicit="$work/$resolution-explicit.toml"
  sed -e 's|^integrator = .*|integrator = "rrp25"|' -e 's|^time_step = .*|time_step = "auto"\ntime_step_fraction = 0.2|' \
      -e '/^newton_tolerance/d' -e '/^event_tolerance/d' -e '/^preconditioner/d' -e '/^hessian_update/d' -e 's|^energy_every = .*|energy_every = 41|' -e 's|^vtk_every = .*|vtk_every = 0|' "$scene" >"$explicit"
  printf '\n[damping]\nviscous = %s\n' "$alpha" >>"$explicit"
  end_args=()
  [ -n "$explicit_t_end" ] && end_args=(--t-end "$explicit_t_end")
  if run_one "$resolution-explicit" "$explicit" "$resolution" "rrp25+damping $alpha" auto "$scene_end" "${end_args[@]}"; then
    runs+=("$work/$resolution-explicit=explicit (damping $alpha/s)")
  fi
  for dt in $implicit_steps; do
    for pc in $preconditioners; do
      local_name="$resolution-implicit-$dt-$pc"
      implicit="$work/$local_name.toml"
      sed -e "s|^time_step = .*|time_step = $dt|" -e 's|^vtk_every = .*|vtk_every = 0|' -e '/^preconditioner = /d' \
          -e "s|^integrator = \"implicit\"\$|&\npreconditioner = \"$pc\"|" \
          ${hessian_update:+-e "s|^hessian_update = .*|hessian_update = \"$hessian_update\"|"} "$scene" >"$implicit"
      label="implicit+$pc${hessian_update:++$hessian_update}"
      if run_one "$local_name" "$implicit" "$resolution" "$label" "$dt" "$scene_end"; then
        runs+=("$work/$local_name=$label $dt s")
      fi
    done
  done
  echo "# $resolution: compared with the first run (tools/compare_bending.py --smooth $smooth)"
  [ ${#runs[@]} -eq $((1 + $(echo $implicit_steps | wc -w) * $(echo $preconditioners | wc -w))) ] || status=2
  "$python" tools/compare_bending.py "${runs[@]}" --smooth "$smooth" ${TOLERANCE:+--tolerance "$TOLERANCE"} \
    --title "three-point bending ($resolution) at 1 mm/s: explicit (damped) and implicit" \
    -o "$out_dir/bending_$resolution.png" || status=2
done
exit $status
