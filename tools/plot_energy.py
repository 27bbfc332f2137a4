#!/usr/bin/env python3
"""Plot the energy partition of a dem_torus / dem_pendulum run over time.

Reads the energy table a run writes (energy.csv) and draws, like Baker &
Gonzalez (2021), Figure 4:

  * top panel: translational and rotational kinetic energy, each potential
    that is not zero throughout, and the total energy;
  * bottom panel: the relative total-energy error (E_total - E_0)/|E_0|
    (the absolute error E_total - E_0 when E_0 == 0; the axis label says so).

Uses matplotlib's Agg backend, so no display is needed. The PNG is written to
a temporary name beside the target and renamed into place.

Example:
    python3 tools/plot_energy.py torus_output/energy.csv
    python3 tools/plot_energy.py run/energy.csv -o energy.png --title "Ring torus, map (25)"
"""

import argparse
import csv
import math
import os
import sys
import tempfile

from system_python import rerun_or_exit

try:
    import numpy as np
    import matplotlib
except ImportError as exc:
    rerun_or_exit(__file__, "plot_energy", exc, "python3-matplotlib (it brings numpy)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the backend)

# Columns of energy.csv (docs/running.md, "The energy table"). U_gravity is optional
# (older builds did not write it) and read as zero when missing; momentum
# columns are not plotted and not required.
TIME = "t"
KINETIC = [("E_kin_trans", "translational kinetic"),
           ("E_kin_rot", "rotational kinetic")]
POTENTIALS = [("U_bend", "bending/torsion bonds"),
              ("U_axial", "axial bonds"),
              ("U_shear", "shear bonds"),
              ("U_contact", "particle-particle contact"),
              ("U_wall", "particle-wall contact"),
              ("U_gravity", "gravity")]
TOTAL = "E_total"
OPTIONAL = {"U_gravity"}
REQUIRED = [TIME] + [c for c, _ in KINETIC] + [c for c, _ in POTENTIALS
                                                if c not in OPTIONAL] + [TOTAL]

FIG_SIZE_IN = (10.0, 6.0)  # with DPI: a 1000 x 600 pixel PNG
DPI = 100


class InputError(Exception):
    """A problem with the input table, reported without a traceback."""


def read_table(path):
    """Returns {column: numpy array} for the columns plot_energy uses."""
    if not os.path.exists(path):
        raise InputError("no such file: %s" % path)
    if os.path.isdir(path):
        raise InputError("%s is a folder, not an energy table (give .../energy.csv)" % path)
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise InputError("%s is empty (expected a header line starting with "
                                 "'t,E_kin_trans,...')" % path)
            header = [h.strip() for h in header]
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise InputError("%s lacks the column(s) %s (header: %s)"
                                 % (path, ", ".join(missing), ",".join(header)))
            wanted = REQUIRED + [c for c in OPTIONAL if c in header]
            index = {c: header.index(c) for c in wanted}
            rows = []
            for lineno, row in enumerate(reader, start=2):
                if not row or all(not x.strip() for x in row):
                    continue  # tolerate blank lines (e.g. a trailing one)
                if len(row) != len(header):
                    raise InputError("%s line %d: %d values, the header has %d columns"
                                     % (path, lineno, len(row), len(header)))
                try:
                    rows.append([float(row[index[c]]) for c in wanted])
                except ValueError:
                    bad = next(c for c in wanted if not _is_float(row[index[c]]))
                    raise InputError("%s line %d: column %s is not a number: %r"
                                     % (path, lineno, bad, row[index[bad]]))
    except OSError as exc:
        raise InputError("cannot read %s: %s" % (path, exc.strerror or exc))
    except UnicodeDecodeError:
        raise InputError("%s is not a text (CSV) file" % path)
    if not rows:
        raise InputError("%s has a header but no data rows" % path)
    data = np.array(rows, dtype=float)
    table = {c: data[:, i] for i, c in enumerate(wanted)}
    for c in OPTIONAL:
        table.setdefault(c, np.zeros(len(rows)))
    return table


def _is_float(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def plot(table, title):
    """Draws the two panels and returns the figure."""
    t = table[TIME]
    fig, (ax_e, ax_err) = plt.subplots(
        2, 1, sharex=True, figsize=FIG_SIZE_IN, dpi=DPI,
        gridspec_kw={"height_ratios": [2.2, 1.0]})

    for col, label in KINETIC:
        ax_e.plot(t, table[col], lw=1.4, label="%s (%s)" % (label, col))
    skipped = []
    for col, label in POTENTIALS:
        if np.all(table[col] == 0.0):
            skipped.append(col)
            continue
        ax_e.plot(t, table[col], lw=1.2, label="%s (%s)" % (label, col))
    ax_e.plot(t, table[TOTAL], color="black", lw=1.8, label="total (%s)" % TOTAL)
    if skipped:
        # An invisible entry so the legend says what was left out.
        ax_e.plot([], [], " ", label="zero throughout, not shown: " + ", ".join(skipped))
    ax_e.set_ylabel("energy")
    ax_e.grid(True, alpha=0.3)
    ax_e.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    if title:
        ax_e.set_title(title)

    e0 = table[TOTAL][0]
    if e0 != 0.0 and math.isfinite(e0):
        err = (table[TOTAL] - e0) / abs(e0)
        ax_err.set_ylabel(r"$(E_{total} - E_0)/|E_0|$")
    else:
        err = table[TOTAL] - e0
        ax_err.set_ylabel(r"$E_{total} - E_0$" + "\n(absolute: $E_0 = 0$)")
    ax_err.plot(t, err, color="tab:red", lw=1.2)
    ax_err.axhline(0.0, color="grey", lw=0.8)
    ax_err.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3), useOffset=False)
    ax_err.grid(True, alpha=0.3)
    ax_err.set_xlabel("time t")
    fig.tight_layout()
    return fig


def save_png(fig, out):
    """Writes fig to a temporary file beside out, then renames it to out."""
    out_dir = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(out_dir):
        raise InputError("output folder does not exist: %s" % out_dir)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(out), suffix=".tmp",
                               dir=out_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format="png", dpi=DPI)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="plot_energy.py",
        description="Plot the energy partition over time from a run's energy.csv "
                    "(kinetic energies, each non-zero potential and the total; below, "
                    "the relative total-energy error (E_total - E_0)/|E_0|) as a PNG.",
        epilog="The table is the energy.csv written by dem_torus/dem_pendulum: header "
               "t,E_kin_trans,E_kin_rot,U_bend,U_axial,U_shear,U_contact,U_wall,"
               "U_gravity,E_total,... (a missing U_gravity column counts as zero). "
               "Potentials that are zero throughout are not drawn; the legend lists them. "
               "Exit status: 0 on success, 1 on a bad or missing input, 2 on bad usage.")
    parser.add_argument("energy_csv", metavar="ENERGY_CSV",
                        help="the energy table, e.g. torus_output/energy.csv")
    parser.add_argument("-o", "--output", metavar="OUT.png",
                        help="PNG to write (default: energy.png beside ENERGY_CSV)")
    parser.add_argument("--title", metavar="TEXT",
                        help="title over the top panel (default: the CSV's path)")
    args = parser.parse_args(argv)

    out = args.output or os.path.join(os.path.dirname(args.energy_csv) or ".", "energy.png")
    title = args.title if args.title is not None else args.energy_csv
    try:
        table = read_table(args.energy_csv)
        fig = plot(table, title)
        save_png(fig, out)
        plt.close(fig)
    except InputError as exc:
        print("plot_energy: error: %s" % exc, file=sys.stderr)
        return 1
    except OSError as exc:
        print("plot_energy: error: cannot write %s: %s" % (out, exc.strerror or exc),
              file=sys.stderr)
        return 1
    n = len(table[TIME])
    print("plot_energy: %d rows, t = %.6g .. %.6g -> %s"
          % (n, table[TIME][0], table[TIME][-1], out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
