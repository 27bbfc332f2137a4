#!/usr/bin/env python3
"""Runs one `dem run` for the benchmark scripts (bench/implicit_vs_explicit.sh,
bench/quasi_static_bending.sh) and prints its figures.

    python3 bench/run_log.py LOG OUTPUT_FOLDER -- DEM run SCENE ... --output-dir OUTPUT_FOLDER

runs the command after `--`, its output (stdout and stderr) kept in LOG. If
it fails: prints "failed: " and the first line of its output that says
"error", and exits 1. Else prints one line of space-separated fields:
    simulated_s wall_s broken_bonds fragments newton_per_step cg_per_step rejected_steps
(the last row of OUTPUT_FOLDER/energy.csv; the summary's "done: N steps in W
s"; its implicit line, "-" for an explicit run, or where energy.csv has no
fracture columns).
"""

import csv
import re
import subprocess
import sys


def figures(log, out):
    wall = float(re.search(r"done: \d+ steps in ([0-9.e+-]+) s", log).group(1))
    with open(out + "/energy.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    t = float(rows[-1]["t"])
    broken = rows[-1].get("n_broken") or "-"
    fragments = rows[-1].get("n_fragments") or "-"
    newton = cg = "-"
    m = re.search(r"per step ([0-9.e+-]+) Newton iterations, ([0-9.e+-]+) CG iterations", log)
    if m:
        newton, cg = m.group(1), m.group(2)
    m = re.search(r"(\d+) implicit steps retried shorter", log)
    rejected = m.group(1) if m else "-"
    return f"{t:.6g} {wall:.4g} {broken} {fragments} {newton} {cg} {rejected}"


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        sys.exit("usage: run_log.py LOG OUTPUT_FOLDER -- COMMAND...")
    log_file, out, command = argv[0], argv[1], argv[3:]
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(log_file, "w") as f:
        f.write(run.stdout)
    if run.returncode != 0:
        error = next((line for line in run.stdout.splitlines() if "error" in line), f"exit status {run.returncode}")
        print(f"failed: {error}")
        return 1
    print(figures(run.stdout, out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
