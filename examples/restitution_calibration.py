"""Calibration loop: which restitution coefficient `e` must a sphere's
material have so that it rebounds from a floor of another material (e =
0.9) with a measured restitution of 0.7? Each trial is a scene built from a
Python dict (Hertz-Mindlin contact, docs/model.md §11.5), run until the
sphere leaves the floor; bisection on the material's e.

    PYTHONPATH=build/python python3 examples/restitution_calibration.py --target 0.7

The floor pair takes the geometric mean of the two materials' e, and
Hertz-Mindlin's e is the restitution at every speed, so the answer is
close to target^2 / 0.9: the loop finds it by measurement alone.
"""

import argparse
import pathlib
import tempfile

import dem_rrp

RADIUS = 0.005  # m
SPEED = 1.0  # m/s towards the floor


class Rebound(Exception):
    """Raised by the callback to stop the run once the sphere has left the floor."""


def scene(e_sphere, e_floor, csv_name):
    return {
        "run": {"time_step": "auto", "steps": 1000000},
        "output": {"energy_every": 0},
        "material": [
            {"name": "glass", "density": 2500.0, "E": 1e8, "nu": 0.3, "e": e_sphere, "mu_s": 0.0},
            {"name": "steel", "E": 2e9, "nu": 0.3, "e": e_floor, "mu_s": 0.0},
        ],
        "particles": [{"source": "csv", "file": csv_name, "material": "glass"}],
        "contact": {"law": "hertz-mindlin"},
        "wall": [{"point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0], "material": "steel"}],
    }


def measured_restitution(e_sphere, e_floor, folder):
    sim = dem_rrp.Simulation.from_dict(scene(e_sphere, e_floor, "sphere.csv"), base_dir=folder)

    def left_the_floor(s):
        z = s.particles.position[0, 2]
        vz = s.particles.velocity[0, 2]
        if z > RADIUS and vz > 0.0:
            raise Rebound(vz)

    try:
        sim.run(callback=left_the_floor)
    except Rebound as r:
        return r.args[0] / SPEED
    raise RuntimeError("the sphere did not rebound")


def calibrate(target, e_floor, tolerance, folder, log=print):
    lo, hi = 0.05, 1.0
    for trial in range(60):
        e = 0.5 * (lo + hi)
        got = measured_restitution(e, e_floor, folder)
        log("trial %2d: material e = %.6f -> measured %.6f" % (trial + 1, e, got))
        if abs(got - target) < tolerance:
            return e, got
        lo, hi = (e, hi) if got < target else (lo, e)
    raise RuntimeError("no convergence")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", type=float, default=0.7)
    ap.add_argument("--floor-e", type=float, default=0.9)
    ap.add_argument("--tolerance", type=float, default=1e-4)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        # One sphere just above the floor, falling at SPEED (no gravity).
        pathlib.Path(folder, "sphere.csv").write_text(
            "x,y,z,diameter,vx,vy,vz\n0.0,0.0,%r,%r,0.0,0.0,%r\n" % (RADIUS * 1.001, 2 * RADIUS, -SPEED))
        e, got = calibrate(a.target, a.floor_e, a.tolerance, folder)
    print("material e = %.6f gives a measured restitution of %.6f (target %g; target^2/e_floor = %.6f)"
          % (e, got, a.target, a.target ** 2 / a.floor_e))


if __name__ == "__main__":
    main()
