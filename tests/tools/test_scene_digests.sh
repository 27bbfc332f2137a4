#!/usr/bin/env bash
# Regression guard: the energy tables of the shipped scenes must not move a bit.
#
# Usage: tests/tools/test_scene_digests.sh BUILD_DIR SOURCE_DIR
#
# For each line `SCENE STEPS THREADS SHA256` of SOURCE_DIR/tests/scene_digests.txt
# (SCENE relative to SOURCE_DIR; '#' lines are comments) it runs
#   BUILD_DIR/apps/dem run SOURCE_DIR/SCENE --output-dir TMP --quiet \
#       --threads THREADS --steps STEPS
# into a temporary folder and compares the sha256sum of TMP/energy.csv with
# SHA256. A mismatch (or a failed run) is reported with the scene and thread
# count; the last line is `N passed, M failed`. Exits 0 when all pass, 1 when
# any fails, 2 on bad usage or a missing binary / digest file.
# A digest that changes must be explained (see the header of scene_digests.txt),
# not re-recorded silently.
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build_dir=$1
source_dir=$2
dem="$build_dir/apps/dem"
table="$source_dir/tests/scene_digests.txt"

[ -x "$dem" ] || { echo "FAIL: no executable $dem (build first)" >&2; exit 2; }
[ -f "$table" ] || { echo "FAIL: no digest table $table" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/scene_digests.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
while read -r scene steps threads expected rest; do
  case "$scene" in ''|'#'*) continue ;; esac
  if [ -z "$expected" ] || [ -n "$rest" ]; then
    echo "FAIL: malformed line in $table: $scene $steps $threads $expected $rest"
    failed=$((failed + 1))
    continue
  fi
  label="$scene --steps $steps --threads $threads"
  out="$tmp/run"
  rm -rf "$out"
  if ! "$dem" run "$source_dir/$scene" --output-dir "$out" --quiet \
       --threads "$threads" --steps "$steps" >"$tmp/log" 2>&1; then
    echo "FAIL: $label: dem run failed; its output:"
    sed 's/^/    /' "$tmp/log"
    failed=$((failed + 1))
    continue
  fi
  if [ ! -f "$out/energy.csv" ]; then
    echo "FAIL: $label: no energy.csv written"
    failed=$((failed + 1))
    continue
  fi
  # The whole table, ledger columns included (since the digests were
  # re-recorded with exact sums, issue 14).
  got=$(sha256sum "$out/energy.csv" | cut -d' ' -f1)
  if [ "$got" = "$expected" ]; then
    echo "ok: $label"
    passed=$((passed + 1))
  else
    echo "FAIL: $label: energy.csv digest differs"
    echo "    expected $expected"
    echo "    got      $got"
    failed=$((failed + 1))
  fi
done <"$table"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
