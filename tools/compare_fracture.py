#!/usr/bin/env python3
"""Compare the fracture of several runs: broken bonds and fragments over
time, one line per run folder (for instance the explicit map against the
implicit integrator at several steps, with and without the event control of
docs/model.md §12.8).

Reads each folder's energy.csv (columns t, n_broken, n_fragments). A folder
may be given as FOLDER=LABEL to name its line (default: the folder's name).
Uses matplotlib's Agg backend; the PNG is written to a temporary name and
renamed into place.

Example:
    python3 tools/compare_fracture.py explicit=map25 implicit_2h="implicit 5e-7 s" -o compare.png
"""

import argparse
import os

from plot_fracture import InputError, plt, read_table, run_cli, save_png


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run output folders, each FOLDER or FOLDER=LABEL")
    parser.add_argument("-o", "--output", default="compare_fracture.png", help="PNG file (default: %(default)s)")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5), dpi=100)
    for run in args.runs:
        folder, _, label = run.partition("=")
        energy_path = os.path.join(folder, "energy.csv")
        if not os.path.isfile(energy_path):
            raise InputError(f"{folder}: no energy.csv (not a run folder?)")
        rows = read_table(energy_path, ["t", "n_broken", "n_fragments"])
        if not rows:
            raise InputError(f"{energy_path}: no rows")
        t = [float(r["t"]) for r in rows]
        label = label or os.path.basename(os.path.normpath(folder))
        ax[0].plot(t, [int(r["n_broken"]) for r in rows], "-", label=f"{label} ({rows[-1]['n_broken']})")
        ax[1].plot(t, [int(r["n_fragments"]) for r in rows], "-", label=f"{label} ({rows[-1]['n_fragments']})")
    for a, name in ((ax[0], "broken bonds"), (ax[1], "fragments")):
        a.set_xlabel("t")
        a.set_ylabel(name)
        a.legend(loc="upper left")
    fig.suptitle(args.title or "fracture compared")
    fig.tight_layout()
    save_png(fig, args.output)
    print(args.output)
    return 0


if __name__ == "__main__":
    run_cli(main, "compare_fracture.py")
