#!/usr/bin/env python3
"""Compare loading tests (three-point bending, compression, Brazilian disc)
between runs: the peak force on a loading group, the time of the first bond
failure and the time the specimen is in two, one row per run folder, with the
relative differences from the first run; and a figure of the force and the
broken bonds over time.

A run folder is the output of `dem run` on a scene with a moving group (the
punch or platen): its groups.csv (columns t, group, F_x, F_y, F_z), energy.csv
(t, n_broken, n_fragments) and bond_failures.csv. A folder may be given as
FOLDER=LABEL to name its row and line (default: the folder's name).

Definitions (docs/verification.md, "Quasi-static three-point bending"):
  - force: F_<axis> of the group in groups.csv, the force the rest of the
    specimen exerts on the group's particles (positive up on a punch moving
    down; --sign -1 turns it round);
  - in two: the first energy.csv row with n_fragments >= 2 (empty if never);
  - peak force: the largest force up to "in two" (the whole run if never),
    of the force averaged over the trailing window (t - SMOOTH, t] with
    --smooth SMOOTH (as a load cell's low-pass would; default: none). An
    explicit run rings after each bond failure at frequencies that a
    quasi-static test does not resolve; an implicit run's steps average
    over their length already;
  - first failure: the first row of bond_failures.csv (empty if none).

With --tolerance TOL, exits with status 2 when a run's peak force or time in
two differs from the first run's by more than TOL (relative), or a run is in
two and the first is not (or the other way round): a check for tests and
benchmarks. The PNG (optional, -o) is written to a temporary name and renamed.

Example:
    python3 tools/compare_bending.py explicit=map25 implicit_1ms="implicit 1 ms" \\
        --group punch --tolerance 0.03 -o bending.png
"""

import argparse
import csv
import os

from plot_fracture import InputError, plt, read_table, run_cli, save_png


def trailing_mean(series, window):
    """Each (t, f) of `series` with f averaged over the rows in (t - window, t]."""
    if not window:
        return list(series)
    out, total, first = [], 0.0, 0
    for k, (t, f) in enumerate(series):
        total += f
        while series[first][0] <= t - window:
            total -= series[first][1]
            first += 1
        out.append((t, total / (k + 1 - first)))
    return out


def load_run(folder, group, axis, sign, smooth):
    """The force series, fracture series and the summary of one run folder."""
    groups_path = os.path.join(folder, "groups.csv")
    energy_path = os.path.join(folder, "energy.csv")
    for path in (groups_path, energy_path):
        if not os.path.isfile(path):
            raise InputError(f"{folder}: no {os.path.basename(path)} (not a run folder of a scene with groups?)")
    column = "F_" + axis
    rows = [r for r in read_table(groups_path, ["t", "group", column]) if r["group"] == group]
    if not rows:
        raise InputError(f"{groups_path}: no rows of group '{group}'")
    force = [(float(r["t"]), sign * float(r[column])) for r in rows]
    energy = read_table(energy_path, ["t", "n_broken", "n_fragments"])
    if not energy:
        raise InputError(f"{energy_path}: no rows")
    broken = [(float(r["t"]), int(r["n_broken"])) for r in energy]
    t_two = next((float(r["t"]) for r in energy if int(r["n_fragments"]) >= 2), None)
    smoothed = trailing_mean(force, smooth)
    before = [f for f in smoothed if t_two is None or f[0] <= t_two]
    t_peak, peak = max(before, key=lambda f: f[1])
    t_first = None
    failures_path = os.path.join(folder, "bond_failures.csv")
    if os.path.isfile(failures_path):
        with open(failures_path, newline="") as f:
            first = next(csv.DictReader(f), None)
        if first is not None:
            t_first = float(first["t"])
    return {"force": force, "smoothed": smoothed if smooth else None, "broken": broken, "peak": peak, "t_peak": t_peak, "t_two": t_two,
            "t_first": t_first, "t_end": broken[-1][0]}


def relative(a, b):
    return (a - b) / abs(b) if b else float("inf")


def fmt(x):
    return "-" if x is None else f"{x:.6g}"


def compare(runs, tolerance):
    """Prints the table; returns the list of tolerance violations."""
    ref_label, ref = runs[0]
    print("run,peak_force,t_peak,t_first_failure,t_in_two,t_end,peak_vs_first,t_in_two_vs_first")
    problems = []
    for label, r in runs:
        dp = relative(r["peak"], ref["peak"])
        dt = relative(r["t_two"], ref["t_two"]) if r["t_two"] is not None and ref["t_two"] is not None else None
        print(f"{label},{fmt(r['peak'])},{fmt(r['t_peak'])},{fmt(r['t_first'])},{fmt(r['t_two'])},"
              f"{fmt(r['t_end'])},{dp:+.4f},{'-' if dt is None else f'{dt:+.4f}'}")
        if tolerance is None or r is ref:
            continue
        if abs(dp) > tolerance:
            problems.append(f"{label}: peak force {r['peak']:.6g} differs from {ref_label}'s {ref['peak']:.6g} "
                            f"by {dp:+.2%} (tolerance {tolerance:.2%})")
        if (r["t_two"] is None) != (ref["t_two"] is None):
            problems.append(f"{label}: in two at {fmt(r['t_two'])}, {ref_label} at {fmt(ref['t_two'])}")
        elif dt is not None and abs(dt) > tolerance:
            problems.append(f"{label}: in two at {r['t_two']:.6g}, {ref_label} at {ref['t_two']:.6g}: "
                            f"{dt:+.2%} (tolerance {tolerance:.2%})")
    return problems


def draw(runs, group, axis, smooth, title, out):
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5), dpi=100)
    for label, r in runs:
        shown = r["smoothed"] or r["force"]
        line, = ax[0].plot([f[0] for f in shown], [f[1] for f in shown], "-",
                           label=f"{label} (peak {r['peak']:.4g} N at {r['t_peak']:.4g} s)")
        if r["smoothed"]:  # the force as written, faint behind its average
            ax[0].plot([f[0] for f in r["force"]], [f[1] for f in r["force"]], "-", color=line.get_color(),
                       alpha=0.25, linewidth=0.6)
        ax[0].plot([r["t_peak"]], [r["peak"]], "o", color=line.get_color())
        ax[1].plot([b[0] for b in r["broken"]], [b[1] for b in r["broken"]], "-", color=line.get_color(),
                   label=f"{label} (in two at {fmt(r['t_two'])} s)")
    ax[0].set_xlabel("t (s)")
    ax[0].set_ylabel(f"force on '{group}', {axis} (N)" + (f", averaged over {smooth:g} s" if smooth else ""))
    ax[1].set_xlabel("t (s)")
    ax[1].set_ylabel("broken bonds")
    for a in ax:
        a.legend(loc="upper left", fontsize=8)
    fig.suptitle(title or "loading test compared")
    fig.tight_layout()
    save_png(fig, out)
    print(out)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run output folders, each FOLDER or FOLDER=LABEL; the first is the reference")
    parser.add_argument("--group", default="punch", help="the loading group in groups.csv (default: %(default)s)")
    parser.add_argument("--axis", default="z", choices=["x", "y", "z"], help="the loading direction (default: %(default)s)")
    parser.add_argument("--sign", type=float, default=1.0, choices=[-1.0, 1.0],
                        help="multiplies F_<axis> (default: %(default)s)")
    parser.add_argument("--smooth", type=float, default=0.0,
                        help="average the force over this trailing time window before taking its peak (default: none)")
    parser.add_argument("--tolerance", type=float, default=None,
                        help="relative tolerance on peak force and time in two (exit status 2 beyond it)")
    parser.add_argument("-o", "--output", default=None, help="PNG file (default: no figure)")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    if not args.smooth >= 0:
        raise InputError(f"--smooth must be a time >= 0, got {args.smooth}")
    if args.tolerance is not None and not args.tolerance > 0:
        raise InputError(f"--tolerance must be positive, got {args.tolerance}")
    runs = []
    for run in args.runs:
        folder, _, label = run.partition("=")
        runs.append((label or os.path.basename(os.path.normpath(folder)),
                     load_run(folder, args.group, args.axis, args.sign, args.smooth)))
    problems = compare(runs, args.tolerance)
    if args.output:
        draw(runs, args.group, args.axis, args.smooth, args.title, args.output)
    for p in problems:
        print(f"compare_bending.py: beyond tolerance: {p}")
    return 2 if problems else 0


if __name__ == "__main__":
    run_cli(main, "compare_bending.py")
