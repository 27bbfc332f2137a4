#!/usr/bin/env bash
# Issue 22: every shipped scene continues from a checkpoint at an odd step
# exactly as the uninterrupted run: each scene (its output intervals set to
# a few steps so that rows and frames fall on both sides of the checkpoint)
# is run to STEPS, and to CUT then restarted to STEPS in its folder and into
# a new one (`dem restart --output-dir NEW`, which copies the series up to
# the checkpoint); every file of the folders but run.id and checkpoint.bin
# (which holds the run's identity) is byte-identical, and the folders hold
# the same files.
#
# Usage: tests/tools/test_restart_scenes.sh BUILD_DIR SCENE...
# Environment: STEPS (default 24), CUT (default 11).
# Prints one line per scene and "N passed, M failed"; exits 1 on a failure.
set -uo pipefail
build=$1
shift
dem="$build/apps/dem"
[ -x "$dem" ] || { echo "FAIL: no $dem" >&2; exit 2; }
steps=${STEPS:-24} cut=${CUT:-11}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/restart_scenes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# set_key FILE KEY VALUE: KEY = VALUE in FILE's [output] table.
set_key() {
  local f=$1 key=$2 value=$3
  if grep -q "^$key *=" "$f"; then
    sed -i "s|^$key *=.*|$key = $value|" "$f"
  elif grep -q '^\[output\]' "$f"; then
    sed -i "/^\[output\]/a $key = $value" "$f"
  else
    printf '\n[output]\n%s = %s\n' "$key" "$value" >>"$f"
  fi
}
passed=0 failed=0
for scene in "$@"; do
  name=$(basename "$scene" .toml)
  d="$tmp/$name"
  mkdir -p "$d"
  cp "$scene" "$d/scene.toml"
  # CSV files and the like beside the scene, and the mesh files of [[mesh]] tables.
  for f in "$(dirname "$scene")"/*.csv; do [ -e "$f" ] && cp "$f" "$d/"; done
  [ -d "$(dirname "$scene")/meshes" ] && cp -r "$(dirname "$scene")/meshes" "$d/"
  set_key "$d/scene.toml" energy_every 3
  set_key "$d/scene.toml" vtk_every 8
  set_key "$d/scene.toml" checkpoint_every 0
  ok=1
  "$dem" run "$d/scene.toml" --steps "$steps" --quiet --output-dir "$d/whole" >"$d/whole.log" 2>&1 || ok=0
  "$dem" run "$d/scene.toml" --steps "$cut" --quiet --output-dir "$d/part" >"$d/part.log" 2>&1 || ok=0
  cp -r "$d/part" "$d/cut"
  "$dem" restart "$d/part/checkpoint.bin" --steps "$steps" --quiet >>"$d/part.log" 2>&1 || ok=0
  "$dem" restart "$d/cut/checkpoint.bin" --steps "$steps" --quiet --output-dir "$d/new" >>"$d/part.log" 2>&1 || ok=0
  if [ $ok -eq 0 ]; then
    echo "FAIL: $name: a run failed:"; tail -5 "$d/whole.log" "$d/part.log" | sed 's/^/    /'
    failed=$((failed + 1)); rm -rf "$d"; continue
  fi
  list() { (cd "$1" && ls | grep -v -x -e run.id -e checkpoint.bin | sort); }
  bad=""
  for other in part new; do
    if [ "$(list "$d/whole")" != "$(list "$d/$other")" ]; then
      echo "FAIL: $name: the folders whole and $other hold different files:"
      diff <(list "$d/whole") <(list "$d/$other") | sed 's/^/    /'
      bad="$bad (file list of $other)"
      continue
    fi
    for f in $(list "$d/whole"); do cmp -s "$d/whole/$f" "$d/$other/$f" || bad="$bad $other/$f"; done
  done
  if [ -n "$bad" ]; then
    echo "FAIL: $name: differs after the restart at step $cut:$bad"; failed=$((failed + 1))
  else
    echo "ok: $name: $(list "$d/whole" | wc -l) files byte-identical after a restart at step $cut of $steps"
    passed=$((passed + 1))
  fi
  rm -rf "$d"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
