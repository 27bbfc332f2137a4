#!/usr/bin/env python3
"""Plot a confined compression test from walls.csv: axial stress against
axial strain, and the confining stress the servo walls hold.

Reads the walls table a run writes (walls.csv, docs/scene-format.md): for
the platen named by --axial (default "top") the axial stress is
-F.n / area (its normal force over --area, m^2) and the axial strain its
displacement along its normal over --height (m); each wall named
--servo-prefix* (default "side") gives a confining stress -F.n / area.
The platen's normal force is the component of F along its axis (--axis,
default z); a servo wall's, its component of largest magnitude (the
others are friction).

Uses matplotlib's Agg backend, so no display is needed. The PNG is written
to a temporary name beside the target and renamed into place.

Example (scenes/confined_compression.toml):
    python3 tools/plot_walls.py confined_output/walls.csv \\
        --area 2.6e-4 --height 0.0161421356237 -o docs/images/confined_compression.png
"""

import argparse
import csv
import os
import sys
import tempfile

from system_python import rerun_or_exit

try:
    import matplotlib
except ImportError as exc:
    rerun_or_exit(__file__, "plot_walls", exc, "python3-matplotlib")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the backend)

AXES = {"x": "F_x", "y": "F_y", "z": "F_z"}


def read_table(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{path}: no rows")
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("walls_csv")
    p.add_argument("-o", "--output", default="walls.png")
    p.add_argument("--axial", default="top", help="name of the moving platen")
    p.add_argument("--axis", default="z", choices=sorted(AXES), help="the platen's axis")
    p.add_argument("--servo-prefix", default="side", help="names of the servo walls begin with this")
    p.add_argument("--area", type=float, required=True, help="loaded area of every wall (m^2)")
    p.add_argument("--height", type=float, required=True, help="initial specimen height (m)")
    p.add_argument("--title", default="Confined compression (scenes/confined_compression.toml)")
    a = p.parse_args()

    rows = read_table(a.walls_csv)
    names = sorted({k.rsplit("_", 2)[0] for k in rows[0] if k.endswith("_u_n")})
    if a.axial not in names:
        sys.exit(f"{a.walls_csv}: no wall named {a.axial!r} (walls: {', '.join(names)})")
    force = f"{a.axial}_{AXES[a.axis]}"
    strain = [abs(float(r[f"{a.axial}_u_n"])) / a.height for r in rows]
    axial = [abs(float(r[force])) / a.area for r in rows]
    servo = [n for n in names if n.startswith(a.servo_prefix)]

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=False)
    top.plot([100 * e for e in strain], [s / 1e3 for s in axial], "k-", label="axial stress (top platen)")
    top.set_xlabel("axial strain (%)")
    top.set_ylabel("stress (kPa)")
    top.set_title(a.title)
    top.grid(True, alpha=0.3)
    t = [1e3 * float(r["t"]) for r in rows]
    for n in servo:
        # The normal force: the component of largest magnitude at the last
        # row (a side wall's normal is a coordinate axis); the others are
        # friction.
        comps = [f"{n}_F_x", f"{n}_F_y", f"{n}_F_z"]
        normal = max(comps, key=lambda c: abs(float(rows[-1][c])))
        stress = [abs(float(r[normal])) / a.area / 1e3 for r in rows]
        bottom.plot(t, stress, label=f"{n} (|{normal.rsplit('_', 2)[-2]}_{normal[-1]}| / area)")
    bottom.set_xlabel("t (ms)")
    bottom.set_ylabel("confining stress (kPa)")
    bottom.grid(True, alpha=0.3)
    if servo:
        bottom.legend(fontsize="small")
    top.legend(fontsize="small")
    fig.tight_layout()
    out = os.path.abspath(a.output)
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=os.path.dirname(out))
    os.close(fd)
    fig.savefig(tmp, dpi=120)
    os.replace(tmp, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
