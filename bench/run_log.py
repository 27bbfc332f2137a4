#!/usr/bin/env python3
"""The figures of one `dem run` from its log and output folder, for the
benchmark scripts (bench/implicit_vs_explicit.sh, bench/quasi_static_bending.sh).

    python3 bench/run_log.py LOG OUTPUT_FOLDER

prints one line of space-separated fields:
    simulated_s wall_s broken_bonds fragments newton_per_step cg_per_step rejected_steps
(the last row of energy.csv; the summary's "done: N steps in W s"; its
implicit line, "-" for an explicit run, or where energy.csv has no fracture
columns).
"""

import csv
import re
import sys


def main(log_file, out):
    log = open(log_file).read()
    wall = float(re.search(r"done: \d+ steps in ([0-9.e+-]+) s", log).group(1))
    rows = list(csv.DictReader(open(out + "/energy.csv")))
    t = float(rows[-1]["t"])
    broken = rows[-1].get("n_broken") or "-"
    fragments = rows[-1].get("n_fragments") or "-"
    newton = cg = "-"
    m = re.search(r"per step ([0-9.e+-]+) Newton iterations, ([0-9.e+-]+) CG iterations", log)
    if m:
        newton, cg = m.group(1), m.group(2)
    m = re.search(r"(\d+) implicit steps retried shorter", log)
    rejected = m.group(1) if m else "-"
    print(f"{t:.6g} {wall:.4g} {broken} {fragments} {newton} {cg} {rejected}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
