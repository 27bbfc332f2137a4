#!/usr/bin/env python3
"""Plot the stress-strain curve of a run in a deforming periodic cell.

Reads the run folder's stress.csv (docs/model.md §19, §20.3: the whole
cell's Love-Weber stress, Pa, tension positive) and energy.csv (n_broken).
The strain is the rate times the time: give the velocity gradient's entry
of the component with --rate (1/s; default 50, the L_xy of
scenes/periodic_shear.toml).

  * left: the stress component against the strain rate x time (engineering
    shear strain gamma for an off-diagonal component), with the initial
    slope given by --modulus drawn for comparison;
  * right: broken bonds against the same strain.

Uses matplotlib's Agg backend; the PNG is written to a temporary name and
renamed into place.

Example:
    python3 tools/plot_stress_strain.py shear_output --rate 50 --modulus 7.69e8   # -> shear_output/stress_strain.png
    python3 tools/plot_stress_strain.py shear_output --rate 50 --modulus 7.69e8 -o docs/images/periodic_shear.png
    python3 tools/plot_stress_strain.py out --component s_xx --rate 0.5 -o curve.png
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
    rerun_or_exit(__file__, "plot_stress_strain", exc, "python3-matplotlib")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COMPONENTS = ["s_xx", "s_yy", "s_zz", "s_yz", "s_xz", "s_xy"]


class InputError(Exception):
    """A problem with the input, reported without a traceback."""


def read_table(path, required):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    if not rows:
        raise InputError(f"{path}: no rows")
    missing = [c for c in required if c not in rows[0]]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}")
    return rows


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", help="the run's output folder (stress.csv, energy.csv)")
    p.add_argument("-o", "--output", default=None, help="the PNG to write (default FOLDER/stress_strain.png)")
    p.add_argument("--component", default="s_xy", choices=COMPONENTS, help="stress component (default s_xy)")
    p.add_argument("--rate", type=float, default=50.0,
                   help="the strain rate: the velocity gradient's entry of that component (1/s, default 50)")
    p.add_argument("--modulus", type=float, default=None,
                   help="the initial slope to draw (Pa; default: none; C44 = 7.69e8 for scenes/periodic_shear.toml)")
    p.add_argument("--title", default="Periodic simple shear of a bonded FCC cell (scenes/periodic_shear.toml)")
    a = p.parse_args(argv)
    try:
        stress = read_table(os.path.join(a.folder, "stress.csv"), ["t", a.component])
        energy = read_table(os.path.join(a.folder, "energy.csv"), ["t", "n_broken"])
    except InputError as e:
        sys.exit(f"plot_stress_strain: {e}")
    strain = [a.rate * float(r["t"]) for r in stress]
    sigma = [float(r[a.component]) / 1e6 for r in stress]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), dpi=100)
    left.plot([100 * g for g in strain], sigma, "-", color="tab:blue", label=a.component + " (whole cell)")
    if a.modulus is not None:
        # The slope up to a little past the first peak (where the stress first drops).
        first_drop = next((k for k in range(1, len(sigma)) if abs(sigma[k]) < abs(sigma[k - 1])), len(sigma) - 1)
        g_end = min(max(strain), 1.2 * strain[first_drop])
        left.plot([0, 100 * g_end], [0, a.modulus * g_end / 1e6], "--", color="gray",
                  label=f"slope {a.modulus:.3g} Pa")
    shear = a.component in ("s_yz", "s_xz", "s_xy")
    left.set_xlabel(("shear strain gamma" if shear else "strain") + " (%)")
    left.set_ylabel(a.component + " (MPa)")
    left.grid(True, alpha=0.3)
    left.legend()
    right.plot([100 * a.rate * float(r["t"]) for r in energy], [float(r["n_broken"]) for r in energy], "-",
               color="tab:red")
    right.set_xlabel(("shear strain gamma" if shear else "strain") + " (%)")
    right.set_ylabel("broken bonds")
    right.grid(True, alpha=0.3)
    fig.suptitle(a.title)
    fig.tight_layout()
    out = os.path.abspath(a.output or os.path.join(a.folder, "stress_strain.png"))
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=os.path.dirname(out))
    os.close(fd)
    try:
        fig.savefig(tmp)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print(out)


if __name__ == "__main__":
    main(sys.argv[1:])
