#!/usr/bin/env python3
"""Plot the engine's Chung & Ooi (2011) test 4 beside rigid-body theory.

Reads the table tests/test_chung_ooi writes when DEM_CHUNG_OOI_CSV names a
file (columns material, theta, e_n, e_t, spin, rebound_angle, e_t_sliding,
rebound_angle_sliding; docs/verification.md "Chung & Ooi") and draws the
tangential restitution of the centre and the contact patch's rebound angle
against the incidence angle, each material's points with the line of
rigid-body impact theory where the contact slides throughout
(tan(theta) >= 3.5 mu (1 + e)). The PNG is written to a temporary name beside
the target and renamed into place.

Example:
    DEM_CHUNG_OOI_CSV=/tmp/t4.csv build/tests/test_chung_ooi --gtest_filter='*Test4*'
    python3 tools/plot_chung_ooi.py /tmp/t4.csv -o docs/images/chung_ooi_test4.png
"""

import argparse
import csv
import math
import os
import sys
import tempfile

from system_python import rerun_or_exit

try:
    import matplotlib
except ImportError as exc:
    rerun_or_exit(__file__, "plot_chung_ooi", exc, "python3-matplotlib")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the backend)

COLUMNS = ["material", "theta", "e_n", "e_t", "spin", "rebound_angle", "e_t_sliding", "rebound_angle_sliding"]
MU, E_N = 0.092, 0.98  # the paper's test 4 (the test's kMu4, kE4)


def read_rows(path):
    """The table's rows by material, as floats (but the material)."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            sys.exit("plot_chung_ooi: error: %s lacks the columns %s" % (path, ", ".join(missing)))
        rows = {}
        for r in reader:
            rows.setdefault(r["material"], []).append({c: (r[c] if c == "material" else float(r[c])) for c in COLUMNS})
    if not rows:
        sys.exit("plot_chung_ooi: error: %s has no rows" % path)
    return rows


def sliding_line(theta_from):
    """Rigid-body theory with sliding throughout, from theta_from to 89 degrees."""
    thetas = [theta_from + k * (89.0 - theta_from) / 200 for k in range(201)]
    j = MU * (1 + E_N)
    e_t = [1 - j / math.tan(math.radians(t)) for t in thetas]
    angle = [math.degrees(math.atan((math.tan(math.radians(t)) - 3.5 * j) / E_N)) for t in thetas]
    return thetas, e_t, angle


def plot(rows, out):
    fig, (ax_t, ax_a) = plt.subplots(1, 2, figsize=(11, 4.5))
    marks = ["o", "s", "^", "D"]
    for k, (name, rs) in enumerate(sorted(rows.items())):
        th = [r["theta"] for r in rs]
        ax_t.plot(th, [r["e_t"] for r in rs], marks[k % 4], mfc="none", label="engine, " + name)
        ax_a.plot(th, [r["rebound_angle"] for r in rs], marks[k % 4], mfc="none", label="engine, " + name)
    onset = math.degrees(math.atan(3.5 * MU * (1 + E_N)))
    thetas, e_t, angle = sliding_line(onset)
    ax_t.plot(thetas, e_t, "k-", label="rigid body, sliding throughout")
    ax_a.plot(thetas, angle, "k-", label="rigid body, sliding throughout")
    ax_t.axhline(5.0 / 7.0, color="grey", ls=":", label="rigid body, rolling (5/7)")
    for ax, label in ((ax_t, "tangential restitution v_t'/v_t"), (ax_a, "rebound angle of the contact patch (deg)")):
        ax.axvline(onset, color="grey", ls="--", lw=0.8)
        ax.set_xlabel("incidence angle (deg)")
        ax.set_ylabel(label)
        ax.set_xlim(0, 90)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    ax_a.axhline(0.0, color="grey", lw=0.8)
    fig.suptitle("Chung & Ooi (2011) test 4: spheres on a rigid wall at 3.9 m/s, mu = 0.092, e = 0.98")
    fig.tight_layout()
    folder = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=folder)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=100)
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table", help="the CSV test_chung_ooi wrote (DEM_CHUNG_OOI_CSV)")
    ap.add_argument("-o", "--output", help="PNG to write (default: the table's name with .png)")
    args = ap.parse_args()
    if not os.path.isfile(args.table):
        sys.exit("plot_chung_ooi: error: no such file: %s" % args.table)
    out = args.output or os.path.splitext(args.table)[0] + ".png"
    if not os.path.isdir(os.path.dirname(os.path.abspath(out))):
        sys.exit("plot_chung_ooi: error: the output folder of %s does not exist" % out)
    plot(read_rows(args.table), out)
    print(out)


if __name__ == "__main__":
    main()
