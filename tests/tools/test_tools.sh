#!/usr/bin/env bash
# Smoke test of tools/plot_energy.py, render_frames.py, plot_fracture.py and
# plot_chung_ooi.py.
#
# Usage: tests/tools/test_tools.sh BUILD_DIR
#
# Runs a short ring torus impact with BUILD_DIR/apps/dem_torus into a
# temporary folder, plots its energy.csv and renders its VTK frames, and
# checks that the PNGs exist, have the expected size and are not blank; then
# checks that both tools fail cleanly (non-zero exit, a message) on bad input.
# Exits 0 when all checks pass, 1 on a failure, 77 (ctest: skipped) when
# python3 with matplotlib and VTK or xvfb-run is not available.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build_dir=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
app="$build_dir/apps/dem_torus"
plot="$root/tools/plot_energy.py"
render="$root/tools/render_frames.py"

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

[ -x "$app" ] || fail "no executable $app (build first)"

# A python3 that has matplotlib and VTK: $PYTHON, else Debian's, else PATH's.
python=""
for p in "${PYTHON:-}" /usr/bin/python3 python3; do
  [ -n "$p" ] || continue
  if "$p" -c "import matplotlib, numpy, vtkmodules.vtkRenderingOpenGL2" >/dev/null 2>&1; then
    python=$p
    break
  fi
done
if [ -z "$python" ]; then
  echo "SKIP: no python3 with matplotlib and VTK (Debian: python3-matplotlib python3-vtk9)"
  exit 77
fi
if [ -z "${DISPLAY:-}" ] && ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: no DISPLAY and no xvfb-run (Debian: xvfb xauth)"
  exit 77
fi
echo "using $python ($("$python" --version 2>&1))"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dem_tools_test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run="$tmp/run"

# 1. A short ring torus impact: 400 steps of h = 1e-3 (the ring reaches the
#    wall at t ~ 0.16), a frame every 100 steps, an energy row every 10.
"$app" --output-dir "$run" --steps 400 --vtk-every 100 --energy-every 10 --threads 1 --quiet \
  >"$tmp/app.log" 2>&1 || { cat "$tmp/app.log" >&2; fail "dem_torus failed"; }
frames=$(find "$run" -maxdepth 1 -name 'particles_*.vtp' | wc -l)
rows=$(($(wc -l <"$run/energy.csv") - 1))
[ "$frames" -ge 3 ] || fail "expected >= 3 VTK frames, got $frames"
[ "$rows" -ge 10 ] || fail "expected >= 10 energy rows, got $rows"
ok "dem_torus wrote $frames frames and $rows energy rows"

# check_png FILE WIDTH HEIGHT [scene]: the size, and not blank (not one
# colour; at least 1% of the pixels differ from the corner pixel, the
# background). With "scene" (a render_frames.py image) also: the corner has
# render_frames.py's background colour, and the middle of the picture (away
# from the label and the colour bars) is at least 1% particles, so an image
# with only the 2D overlays fails.
check_png() {
  "$python" - "$@" <<'EOF'
import sys
import matplotlib.image as mpimg
import numpy as np
path, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
scene = len(sys.argv) > 4 and sys.argv[4] == "scene"
img = mpimg.imread(path)[..., :3]
if img.shape[:2] != (h, w):
    sys.exit("%s: size %dx%d, expected %dx%d" % (path, img.shape[1], img.shape[0], w, h))
bg = img[0, 0].copy()
if np.all(img == bg):
    sys.exit("%s: blank (every pixel has the same colour)" % path)
not_bg = np.any(np.abs(img - bg) > 1.5 / 255, axis=-1)
differ = np.mean(not_bg)
colours = len(np.unique(img.reshape(-1, 3), axis=0))
if differ < 0.01 or colours < 16:
    sys.exit("%s: nearly blank (%.2f%% of pixels differ from the background, %d colours)"
             % (path, 100 * differ, colours))
extra = ""
if scene:
    expected = np.array([0.32, 0.34, 0.43])
    if np.max(np.abs(bg - expected)) > 2.5 / 255:
        sys.exit("%s: background %s, expected render_frames.py's %s"
                 % (path, np.round(bg, 3), expected))
    middle = np.mean(not_bg[int(0.2 * h):int(0.8 * h), int(0.1 * w):int(0.8 * w)])
    if middle < 0.01:
        sys.exit("%s: no particles drawn in the middle of the picture (%.2f%%)"
                 % (path, 100 * middle))
    extra = ", %.1f%% of the middle" % (100 * middle)
print("%s: %dx%d, %.1f%% non-background pixels%s, %d colours"
      % (path, w, h, 100 * differ, extra, colours))
EOF
}

# 2. plot_energy.py: default output beside the CSV, 1000 x 600 pixels.
"$python" "$plot" "$run/energy.csv" --title "test run" || fail "plot_energy.py failed"
[ -s "$run/energy.png" ] || fail "plot_energy.py wrote no $run/energy.png"
check_png "$run/energy.png" 1000 600 || fail "energy.png is wrong"
ok "plot_energy.py made energy.png"

# A table without U_gravity (older builds) is accepted.
"$python" - "$run/energy.csv" "$tmp/no_gravity.csv" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
if "U_gravity" in rows[0]:
    k = rows[0].index("U_gravity")
    rows = [r[:k] + r[k + 1:] for r in rows]
csv.writer(open(sys.argv[2], "w", newline="")).writerows(rows)
EOF
"$python" "$plot" "$tmp/no_gravity.csv" -o "$tmp/no_gravity.png" >/dev/null ||
  fail "plot_energy.py rejected a table without U_gravity"
check_png "$tmp/no_gravity.png" 1000 600 >/dev/null || fail "no_gravity.png is wrong"
ok "plot_energy.py accepts a table without U_gravity"

# 3. render_frames.py: every frame, 320 x 240 pixels (restarts itself under
#    xvfb-run when DISPLAY is not set).
"$python" "$render" "$run" -o "$tmp/png" --size 320x240 || fail "render_frames.py failed"
pngs=$(find "$tmp/png" -maxdepth 1 -name 'frame_*.png' | wc -l)
[ "$pngs" -eq "$frames" ] || fail "render_frames.py made $pngs PNGs for $frames frames"
for f in "$tmp"/png/frame_*.png; do
  check_png "$f" 320 240 scene || fail "$f is wrong"
done
ok "render_frames.py made $pngs frames"

# --frames and --every select frames; the default output folder is RUN_DIR/png.
"$python" "$render" "$run" --frames 0,last --size 200x150 -q >/dev/null ||
  fail "render_frames.py --frames 0,last failed"
last=$(printf "frame_%06d.png" $((frames - 1)))
made=$(find "$run/png" -maxdepth 1 -type f | wc -l)
if [ ! -s "$run/png/frame_000000.png" ] || [ ! -s "$run/png/$last" ] || [ "$made" -ne 2 ]; then
  fail "--frames 0,last did not make exactly frame_000000.png and $last in $run/png"
fi
check_png "$run/png/$last" 200 150 scene >/dev/null || fail "$last is wrong"
ok "render_frames.py --frames 0,last wrote 2 frames into RUN_DIR/png"

# 4. Bad input: non-zero exit and an error message, no traceback.
expect_error() {  # expect_error WHAT COMMAND...
  local what=$1
  shift
  if "$@" >"$tmp/err.out" 2>"$tmp/err.txt"; then
    fail "$what: exit status 0, expected an error"
  fi
  grep -q "error" "$tmp/err.txt" || fail "$what: no error message: $(cat "$tmp/err.txt")"
  if grep -q "Traceback" "$tmp/err.txt"; then
    fail "$what: a Python traceback: $(cat "$tmp/err.txt")"
  fi
  ok "$what -> $(head -n 1 "$tmp/err.txt")"
}
head -n 1 "$run/energy.csv" >"$tmp/header_only.csv"
cut -d, -f1-3,5- "$run/energy.csv" >"$tmp/no_bend.csv"
mkdir "$tmp/empty_run"
expect_error "plot_energy.py, missing file" "$python" "$plot" "$tmp/missing.csv"
expect_error "plot_energy.py, header only" "$python" "$plot" "$tmp/header_only.csv" -o "$tmp/x.png"
expect_error "plot_energy.py, missing column" "$python" "$plot" "$tmp/no_bend.csv" -o "$tmp/x.png"
expect_error "render_frames.py, missing folder" "$python" "$render" "$tmp/missing_run"
expect_error "render_frames.py, no frames" "$python" "$render" "$tmp/empty_run"
expect_error "render_frames.py, unknown frame" "$python" "$render" "$run" --frames 999
[ ! -e "$tmp/x.png" ] || fail "plot_energy.py left $tmp/x.png after an error"

# 5. Fracture: 300 steps of the plate drop (failures from step 106), then
#    plot_fracture.py on its folder (broken bonds, fragments, the ledger).
dem_bin="$(dirname "$app")/dem"
source_dir="$(cd "$(dirname "$0")/../.." && pwd)"
fracture="$(dirname "$plot")/plot_fracture.py"
"$dem_bin" run "$source_dir/scenes/plate_drop.toml" --output-dir "$tmp/plate" --steps 300 --threads 1 --quiet \
  >"$tmp/plate.log" 2>&1 || { cat "$tmp/plate.log" >&2; fail "dem run plate_drop failed"; }
[ "$(($(wc -l <"$tmp/plate/bond_failures.csv") - 1))" -gt 0 ] || fail "the plate drop broke no bond in 300 steps"
"$python" "$fracture" "$tmp/plate" -o "$tmp/fracture.png" >/dev/null || fail "plot_fracture.py failed"
check_png "$tmp/fracture.png" 1200 800 || fail "plot_fracture.py wrote a bad picture"
ok "plot_fracture.py drew the plate drop's broken bonds and fragments"
expect_error "plot_fracture.py, not a run folder" "$python" "$fracture" "$tmp/empty_run"
compare="$(dirname "$plot")/compare_fracture.py"
"$python" "$compare" "$tmp/plate=first" "$tmp/plate=again" -o "$tmp/compare.png" >/dev/null || fail "compare_fracture.py failed"
check_png "$tmp/compare.png" 1200 450 || fail "compare_fracture.py wrote a bad picture"
ok "compare_fracture.py drew two runs' broken bonds and fragments"
expect_error "compare_fracture.py, not a run folder" "$python" "$compare" "$tmp/plate" "$tmp/empty_run"
# compare_bending.py on 4 implicit steps of the quasi-static bending test:
# a run against itself passes --tolerance, against a copy whose punch force
# is 10% larger it fails with status 2.
bending="$(dirname "$plot")/compare_bending.py"
"$dem_bin" run "$source_dir/scenes/three_point_bending_low_quasi_static.toml" --output-dir "$tmp/bend" --steps 4 \
  --threads 1 --quiet >"$tmp/bend.log" 2>&1 || { cat "$tmp/bend.log" >&2; fail "dem run three_point_bending_low_quasi_static failed"; }
"$python" "$bending" "$tmp/bend=first" "$tmp/bend=again" --tolerance 0.03 -o "$tmp/bending.png" >"$tmp/bending.txt" ||
  fail "compare_bending.py failed on a run against itself"
check_png "$tmp/bending.png" 1200 450 || fail "compare_bending.py wrote a bad picture"
grep -q "^again,.*,+0.0000,-$" "$tmp/bending.txt" || fail "compare_bending.py: $(cat "$tmp/bending.txt")"
cp -r "$tmp/bend" "$tmp/bend_stiffer"
"$python" -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    if r["group"] == "punch":
        r["F_z"] = repr(1.1 * float(r["F_z"]))
with open(sys.argv[1], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
' "$tmp/bend_stiffer/groups.csv"
status=0
"$python" "$bending" "$tmp/bend" "$tmp/bend_stiffer" --tolerance 0.03 >"$tmp/bending2.txt" || status=$?
{ [ $status -eq 2 ] && grep -q "peak force" "$tmp/bending2.txt"; } || fail "compare_bending.py let a 10% larger force pass (status $status)"
ok "compare_bending.py compared two bending runs and caught a 10% larger peak force"
expect_error "compare_bending.py, no such group" "$python" "$bending" "$tmp/bend" --group platen
"$python" "$render" "$tmp/plate" -o "$tmp/plate_png" --frames last --color-by fragment --size 640x360 \
  >"$tmp/render_plate.log" 2>&1 || { cat "$tmp/render_plate.log" >&2; fail "render_frames.py --color-by fragment failed"; }
last_png=$(find "$tmp/plate_png" -name 'frame_*.png' | head -n 1)
check_png "$last_png" 640 360 scene || fail "render_frames.py --color-by fragment wrote a bad picture"
ok "render_frames.py coloured the plate's fragments"
expect_error "render_frames.py --color-by fragment, a run without fracture" "$python" "$render" "$run" --frames 0 --color-by fragment -o "$tmp/nofrag"

# 6. plot_chung_ooi.py on the table test_chung_ooi writes (test 4's curves).
chung="$build_dir/tests/test_chung_ooi"
plot_chung="$(dirname "$plot")/plot_chung_ooi.py"
if [ -x "$chung" ]; then
  DEM_CHUNG_OOI_CSV="$tmp/t4.csv" "$chung" --gtest_filter='*Test4Oblique*' >"$tmp/chung.log" 2>&1 ||
    { cat "$tmp/chung.log" >&2; fail "test_chung_ooi failed"; }
  "$python" "$plot_chung" "$tmp/t4.csv" -o "$tmp/t4.png" >/dev/null || fail "plot_chung_ooi.py failed"
  check_png "$tmp/t4.png" 1100 450 || fail "plot_chung_ooi.py wrote a bad picture"
  ok "plot_chung_ooi.py drew test 4"
  expect_error "plot_chung_ooi.py, missing column" "$python" "$plot_chung" "$tmp/no_bend.csv" -o "$tmp/y.png"
fi

echo "all tool checks passed"
