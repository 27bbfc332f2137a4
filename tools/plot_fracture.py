#!/usr/bin/env python3
"""Plot the fracture of a run: broken bonds and fragments over time, and the
force-displacement curves of its particle groups.

Reads the run folder's energy.csv (columns n_broken, n_fragments, and the
ledger W_fracture, E_total, E_balance), bond_failures.csv (docs/model.md §10.4:
one row per failed bond, mode tensile or shear) and, when present,
groups.csv (reaction force and centroid displacement of each [[group]]).

  * top left: broken bonds over time, split tensile / shear (from
    bond_failures.csv), and the n_broken column;
  * top right: fragments (connected components of the live-bond graph);
  * bottom left: the energy ledger: E_total, W_fracture, E_balance;
  * bottom right: for each group that moves, the reaction force along its
    motion against its displacement (--component picks x, y or z; default:
    the largest displacement's component).

Uses matplotlib's Agg backend; the PNG is written to a temporary name and
renamed into place.

Example:
    python3 tools/plot_fracture.py plate_output                # -> plate_output/fracture.png
    python3 tools/plot_fracture.py bending_output -o f.png --component z
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
    rerun_or_exit(__file__, "plot_fracture", exc, "python3-matplotlib")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


class InputError(Exception):
    """A problem with the input, reported without a traceback."""


def read_table(path, required):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    if rows:
        missing = [c for c in required if c not in rows[0]]
        if missing:
            raise InputError(f"{path}: missing column(s) {', '.join(missing)} (a table of an older build?)")
    return rows


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="the run's output folder (energy.csv, bond_failures.csv, groups.csv)")
    parser.add_argument("-o", "--output", help="PNG file (default: FOLDER/fracture.png)")
    parser.add_argument("--component", choices=["x", "y", "z"], help="force and displacement component of the groups")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    folder = args.folder
    energy_path = os.path.join(folder, "energy.csv")
    if not os.path.isfile(energy_path):
        raise InputError(f"{folder}: no energy.csv (not a run folder?)")
    energy = read_table(energy_path, ["t", "E_total", "n_broken", "n_fragments", "W_fracture", "E_balance"])
    if not energy:
        raise InputError(f"{energy_path}: no rows")
    failures_path = os.path.join(folder, "bond_failures.csv")
    failures = read_table(failures_path, ["t", "mode"]) if os.path.isfile(failures_path) else []
    groups_path = os.path.join(folder, "groups.csv")
    groups = read_table(groups_path, ["group", "F_x", "u_x"]) if os.path.isfile(groups_path) else []

    t = [float(r["t"]) for r in energy]
    fig, ax = plt.subplots(2, 2, figsize=(12, 8), dpi=100)
    # Broken bonds.
    for mode, colour in (("tensile", "tab:red"), ("shear", "tab:blue")):
        times = sorted(float(r["t"]) for r in failures if r["mode"] == mode)
        if times:
            ax[0][0].step(times, range(1, len(times) + 1), where="post", color=colour, label=f"{mode} ({len(times)})")
    ax[0][0].plot(t, [int(r["n_broken"]) for r in energy], "k.", markersize=3, label="n_broken (energy.csv)")
    ax[0][0].set_xlabel("t")
    ax[0][0].set_ylabel("broken bonds")
    ax[0][0].legend(loc="upper left")
    ax[0][1].plot(t, [int(r["n_fragments"]) for r in energy], "k-")
    ax[0][1].set_xlabel("t")
    ax[0][1].set_ylabel("fragments")
    for column, style in (("E_total", "b-"), ("W_fracture", "r-"), ("E_balance", "k--")):
        ax[1][0].plot(t, [float(r[column]) for r in energy], style, label=column)
    ax[1][0].set_xlabel("t")
    ax[1][0].set_ylabel("energy")
    ax[1][0].legend(loc="best")
    # Groups that move: force against displacement.
    names = []
    for r in groups:
        if r["group"] not in names:
            names.append(r["group"])
    drawn = 0
    for name in names:
        rows = [r for r in groups if r["group"] == name]
        comp = args.component
        if comp is None:
            last = rows[-1]
            comp = max("xyz", key=lambda c: abs(float(last["u_" + c])))
        u = [float(r["u_" + comp]) for r in rows]
        if max(abs(x) for x in u) == 0.0:
            continue
        f = [float(r["F_" + comp]) for r in rows]
        ax[1][1].plot([abs(x) for x in u], [abs(x) for x in f], "-", label=f"{name} ({comp})")
        drawn += 1
    ax[1][1].set_xlabel("|displacement|")
    ax[1][1].set_ylabel("|reaction force|")
    if drawn:
        ax[1][1].legend(loc="best")
    else:
        ax[1][1].text(0.5, 0.5, "no group moves", ha="center", va="center", transform=ax[1][1].transAxes)
    fig.suptitle(args.title or f"fracture: {folder}")
    fig.tight_layout()
    out = args.output or os.path.join(folder, "fracture.png")
    save_png(fig, out)
    print(out)
    return 0


def save_png(fig, out):
    """Writes the figure to a temporary name beside `out` and renames it."""
    directory = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=directory)
    os.close(fd)
    try:
        fig.savefig(tmp, format="png")
        os.replace(tmp, out)
    except OSError as e:
        os.unlink(tmp)
        raise InputError(f"{out}: cannot write: {e.strerror}")


def run_cli(main, name):
    """Runs main(argv) as a command: an InputError is one line on stderr, exit status 1."""
    try:
        sys.exit(main(sys.argv[1:]))
    except InputError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    run_cli(main, "plot_fracture.py")
