"""What stepping from Python costs (docs/python.md "Speed"), side by side in
one invocation on one machine:

 1. the solid torus of about 1e5 particles: `dem run --steps N` against
    Simulation.run(steps=N) with the same output folder work (open_output /
    close_output), each in a fresh process, alternated, particle-steps per
    second of each (best of --repeat);
 2. the ring torus (80 particles): run(steps=N) without a callback, with a
    callback every step, and step() called N times from a Python loop: the
    cost per callback call and per step() call.

    PYTHONPATH=build/python python3 bench/python_overhead.py [--threads 2] [--steps 200]

Prints one line per figure. Needs the build with -DDEM_WITH_PYTHON=ON
(build/apps/dem and build/python).
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import dem_rrp

ROOT = pathlib.Path(__file__).resolve().parents[1]


def torus_text(particles):
    text = (ROOT / "scenes" / "solid_torus.toml").read_text()
    text, n = re.subn(r"(?m)^particle_diameter\s*=.*$", "target_particles = %d" % particles, text)
    assert n == 1
    return text


def dem_rate(dem, scene, steps, threads, out):
    """Seconds of dem run's stepping loop (its summary: from the first rows
    and frame to the closing checkpoint)."""
    r = subprocess.run([str(dem), "run", str(scene), "--steps", str(steps), "--threads", str(threads),
                        "--output-dir", str(out), "--quiet"], capture_output=True, text=True, check=True)
    m = re.search(r"done: (\d+) steps in ([0-9.e+-]+) s", r.stdout)
    return float(m.group(2))


def python_rate_in_new_process(scene, steps, threads, out):
    """python_rate() in a fresh Python process, as cold as dem run's own
    (a process that has run before reuses its freed memory and is faster)."""
    r = subprocess.run([sys.executable, __file__, "--once", str(scene), str(steps), str(threads), str(out)],
                       capture_output=True, text=True, check=True, env=dict(os.environ))
    secs, n = r.stdout.split()
    return float(secs), int(n)


def python_rate(scene, steps, threads, out):
    """Seconds of the same: open_output (first rows and frame), run, close_output."""
    sim = dem_rrp.Simulation.from_file(scene, threads=threads)
    t0 = time.perf_counter()
    sim.open_output(out)
    sim.run(steps=steps)
    sim.close_output()
    return time.perf_counter() - t0, sim.n_particles


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--once":
        secs, n = python_rate(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
        print(secs, n)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dem", default=str(ROOT / "build" / "apps" / "dem"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--particles", type=int, default=100000)
    ap.add_argument("--steps", type=int, default=200, help="solid torus steps")
    ap.add_argument("--ring-steps", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        scene = pathlib.Path(tmp, "solid_torus_1e5.toml")
        scene.write_text(torus_text(a.particles))
        cli, py, n = [], [], 0
        for k in range(a.repeat):  # alternate, so both see the same machine
            cli.append(dem_rate(a.dem, scene, a.steps, a.threads, pathlib.Path(tmp, "cli%d" % k)))
            secs, n = python_rate_in_new_process(scene, a.steps, a.threads, pathlib.Path(tmp, "py%d" % k))
            py.append(secs)
        c, p = min(cli), min(py)
        print("solid torus, %d particles, %d steps, %d threads, output on the scene's schedule:" % (n, a.steps,
                                                                                                  a.threads))
        print("  dem run:               %.4g s  %.4g particle-steps/s" % (c, n * a.steps / c))
        print("  Simulation.run:        %.4g s  %.4g particle-steps/s  (%+.2f%% time)" % (p, n * a.steps / p,
                                                                                        100 * (p / c - 1)))

    sphere = {"run": {"time_step": 1e-3, "steps": 10**9}, "output": {"energy_every": 0},
              "particles": [{"source": "ring_torus", "count": 4, "torus_diameter": 3.0, "mass": 1.0,
                             "inertia": 1.0, "speed": 1.0}],
              "bonds": {"pairs": "generator", "bending": 1.0, "axial": 1.0, "shear": 1.0},
              "contact": {"stiffness": 2100.0}}
    for label, sim in (("ring torus, 80 particles", dem_rrp.Simulation.from_file(
                            ROOT / "scenes" / "ring_torus.toml", threads=1)),
                       ("a ring of 4 bonded spheres", dem_rrp.Simulation.from_dict(sphere, threads=1))):
        sim.run(steps=200)  # warm up
        n = a.ring_steps
        plain, calls, stepped = [], [], []
        for _ in range(a.repeat):  # interleaved, best of each
            for out, f in ((plain, lambda: sim.run(steps=n)),
                           (calls, lambda: sim.run(steps=n, callback=lambda s: None)),
                           (stepped, lambda: [sim.step() for _ in range(n)])):
                t0 = time.perf_counter()
                f()
                out.append(time.perf_counter() - t0)
        p, c, s = min(plain), min(calls), min(stepped)
        print("%s, %d steps, 1 thread:" % (label, n))
        print("  run(steps=N):                   %.3f us/step" % (1e6 * p / n))
        print("  run with a callback every step: %.3f us/step: %.3f us per callback call" % (1e6 * c / n,
                                                                                           1e6 * (c - p) / n))
        print("  step() in a Python loop:        %.3f us/step: %.3f us per call" % (1e6 * s / n,
                                                                                  1e6 * (s - p) / n))


if __name__ == "__main__":
    main()
