"""Fragment size distribution of a finished run, read from its checkpoint:
the fragments are the connected components of the live bonds (docs/model.md
§10.4); their sizes (particles) as a histogram (PNG).

    build/apps/dem run scenes/plate_drop.toml --output-dir plate_output
    PYTHONPATH=build/python python3 examples/fragment_sizes.py plate_output/checkpoint.bin

With --make-steps N and no checkpoint it first runs the plate drop for N
steps from Python and writes the checkpoint itself (the tests do so).
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


def fragment_sizes(n_particles, ends, broken):
    """Sizes of the connected components of the live bonds (union-find)."""
    parent = np.arange(n_particles)

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in ends[~broken]:
        ri, rj = root(i), root(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    roots = np.array([root(i) for i in range(n_particles)])
    return np.bincount(np.unique(roots, return_inverse=True)[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint", nargs="?", help="a run's checkpoint.bin")
    ap.add_argument("--make-steps", type=int, default=None,
                    help="without a checkpoint: run the plate drop this many steps first")
    ap.add_argument("--out", default="fragments", help="folder for the figure")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    path = a.checkpoint
    if path is None:
        if a.make_steps is None:
            ap.error("give a checkpoint, or --make-steps N")
        sim = dem_rrp.Simulation.from_file(ROOT / "scenes" / "plate_drop.toml")
        sim.run(steps=a.make_steps)
        path = os.path.join(a.out, "checkpoint.bin")
        sim.write_checkpoint(path)
    sim = dem_rrp.Simulation.restart(path)
    bonds = sim.bonds
    sizes = fragment_sizes(sim.n_particles, bonds["ends"], bonds["broken"])
    print("t = %g: %d particles, %d of %d bonds broken, %d fragments (largest %d particles)"
          % (sim.time, sim.n_particles, sim.n_broken, sim.n_bonds, len(sizes), sizes.max()))
    assert len(sizes) == sim.energies()["n_fragments"]
    fig, ax = plt.subplots(figsize=(6, 4))
    bins = np.unique(np.round(np.logspace(0, np.log10(sizes.max() + 1), 30)))
    ax.hist(sizes, bins=bins)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("fragment size (particles)")
    ax.set_ylabel("fragments")
    ax.set_title("fragment sizes at t = %.3g s" % sim.time)
    fig.tight_layout()
    out = os.path.join(a.out, "fragment_sizes.png")
    fig.savefig(out, dpi=120)
    print("figure:", out)


if __name__ == "__main__":
    main()
