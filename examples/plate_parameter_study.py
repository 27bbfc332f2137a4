"""Parameter study of the plate edge drop (scenes/plate_drop.toml,
docs/model.md §13.3): the same plate dropped at 2, 5 and 10 m/s, its broken
bonds against time, and a figure of them (PNG).

    PYTHONPATH=build/python python3 examples/plate_parameter_study.py --out plate_study
    PYTHONPATH=build/python python3 examples/plate_parameter_study.py --steps 200 --out /tmp/s  # quick

Each speed is one Simulation of the scene file with every particle's
velocity set from Python before the first step.
"""

import argparse
import os
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import dem_rrp  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def broken_against_time(speed, steps, threads, every):
    """(t, n_broken) every `every` steps of a drop at `speed` (m/s)."""
    sim = dem_rrp.Simulation.from_file(ROOT / "scenes" / "plate_drop.toml", threads=threads)
    sim.set_velocity(np.arange(sim.n_particles), [0.0, 0.0, -speed])
    t, broken = [sim.time], [sim.n_broken]

    def record(s):
        t.append(s.time)
        broken.append(s.n_broken)

    sim.run(steps=steps if steps is not None else None, callback=record, every=every)
    return np.array(t), np.array(broken), sim.n_bonds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--speeds", type=float, nargs="+", default=[2.0, 5.0, 10.0], help="impact speeds (m/s)")
    ap.add_argument("--steps", type=int, default=None, help="steps of each drop (default: the scene's 1600)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--every", type=int, default=20, help="steps between samples")
    ap.add_argument("--out", default="plate_study", help="folder for the figure and table")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    for speed in a.speeds:
        t, broken, bonds = broken_against_time(speed, a.steps, a.threads, a.every)
        print("v = %g m/s: %d of %d bonds broken at t = %.3g s" % (speed, broken[-1], bonds, t[-1]))
        np.savetxt(os.path.join(a.out, "broken_v%g.csv" % speed), np.column_stack([t, broken]), delimiter=",",
                   header="t,n_broken", comments="")
        ax.plot(t * 1e6, broken, label="%g m/s" % speed)
    ax.set_xlabel("t (µs)")
    ax.set_ylabel("broken bonds")
    ax.set_title("plate edge drop: broken bonds against time")
    ax.legend()
    fig.tight_layout()
    path = os.path.join(a.out, "broken_bonds.png")
    fig.savefig(path, dpi=120)
    print("figure:", path)


if __name__ == "__main__":
    main()
