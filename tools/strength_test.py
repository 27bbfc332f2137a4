#!/usr/bin/env python3
"""Evaluate the standard strength tests of a bonded specimen from a run's
output folder, print their numbers (and one JSON line) and draw a figure.

  ucs        uniaxial compression between two platens (walls.csv of the
             moving platen --platen, default "top", moving along z):
             axial stress -F_z / (pi R^2) against axial strain u / H;
             Young's modulus E = the slope of the stress-strain curve
             between 20% and 50% of the peak (least squares; the toe of
             first contact excluded); Poisson's ratio from the particles'
             frames (particles.pvd, by id): the lateral strain of the
             outer particles (initial distance from the axis above
             R - d_max) in the middle half of the height, against the
             axial strain, over the frames inside that same stress range;
             UCS = the peak stress.
  brazilian  the splitting test of a disc of diameter D and thickness t
             between platens moving along y: P = the platen's load, the
             splitting tensile strength 2 P_max / (pi D t), and the
             broken bonds' places (bond_failures.csv) in the disc's plane:
             the crack along the loaded diameter.
  bending    three-point bending: the punch's load (walls.csv, a [[mesh]]
             or wall named --punch) against its displacement, the peak
             load and the flexural strength 3 P L / (2 b h^2).

Uses matplotlib's Agg backend (no display needed) and VTK's Python
modules for the frames (python3-vtk9). The PNG is written to a temporary
name and renamed into place.

Examples (the scenes say which numbers to pass):
    python3 tools/strength_test.py ucs ucs_output --radius 0.005 --height 0.02 -o docs/images/ucs_cylinder.png
    python3 tools/strength_test.py brazilian brazilian_output --radius 0.01 --thickness 0.005 \\
        -o docs/images/brazilian_disc.png
"""

import argparse
import csv
import json
import math
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

from system_python import rerun_or_exit

try:
    import matplotlib
    import numpy as np
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
    from vtkmodules.util.numpy_support import vtk_to_numpy
except ImportError as exc:
    rerun_or_exit(__file__, "strength_test", exc, "python3-matplotlib python3-vtk9 python3-numpy")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the backend)


def read_table(path):
    if not os.path.exists(path):
        sys.exit(f"strength_test: {path}: no such file (is this a run's output folder?)")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"strength_test: {path}: no rows")
    return rows


def column(rows, name, path):
    if name not in rows[0]:
        walls = sorted({k.rsplit("_", 2)[0] for k in rows[0] if k.endswith("_u_n")})
        sys.exit(f"strength_test: {path}: no column {name!r} (walls and meshes: {', '.join(walls)})")
    return np.array([float(r[name]) for r in rows])


def load_curve(folder, platen, axis):
    """Time, the platen's displacement along its normal and its load
    (the magnitude of its force along `axis`) from walls.csv."""
    path = os.path.join(folder, "walls.csv")
    rows = read_table(path)
    t = column(rows, "t", path)
    u = np.abs(column(rows, f"{platen}_u_n", path))
    f = np.abs(column(rows, f"{platen}_F_{axis}", path))
    return t, u, f


def group_curve(folder, group, axis):
    """Time, the group's displacement along `axis` and the magnitude of the
    force on it along `axis`, from groups.csv (one row per group and time)."""
    path = os.path.join(folder, "groups.csv")
    rows = [r for r in read_table(path) if r["group"] == group]
    if not rows:
        sys.exit(f"strength_test: {path}: no rows of a group named {group!r}")
    t = np.array([float(r["t"]) for r in rows])
    return t, np.abs([float(r[f"u_{axis}"]) for r in rows]), np.abs([float(r[f"F_{axis}"]) for r in rows])


def curve(a, axis):
    """The loading platen's (or group's, --group) time, displacement and load."""
    return group_curve(a.folder, a.group, axis) if a.group else load_curve(a.folder, a.platen, axis)


def frames(folder):
    """(time, id -> position array) of every particle frame in particles.pvd."""
    pvd = os.path.join(folder, "particles.pvd")
    if not os.path.exists(pvd):
        return []
    out = []
    for d in ET.parse(pvd).getroot().iter("DataSet"):
        r = vtkXMLPolyDataReader()
        r.SetFileName(os.path.join(folder, d.get("file")))
        r.Update()
        poly = r.GetOutput()
        ids = vtk_to_numpy(poly.GetPointData().GetArray("id"))
        x = vtk_to_numpy(poly.GetPoints().GetData())
        diameter = poly.GetPointData().GetArray("diameter")
        rad = 0.5 * vtk_to_numpy(diameter) if diameter is not None else None
        order = np.argsort(ids)
        out.append((float(d.get("timestep")), x[order], None if rad is None else rad[order]))
    return out


def linear_range(stress, lo=0.2, hi=0.5):
    """Indices of the rising branch before the peak with stress in [lo, hi] of it."""
    peak = first_peak(stress)
    s_max = stress[peak]
    return [k for k in range(peak + 1) if lo * s_max <= stress[k] <= hi * s_max], peak


def first_peak(load, drop=0.6):
    """The index of the peak before the load first falls below `drop` of its
    running maximum, once that maximum is at least half the largest load
    (the first failure; later oscillations of the broken specimen may
    exceed it), else of the largest load."""
    top, largest = 0, max(load)
    for k in range(len(load)):
        if load[k] > load[top]:
            top = k
        elif load[k] < drop * load[top] and load[top] >= 0.5 * largest:  # (not the first contacts' wiggles)
            return top
    return top


def save(fig, output):
    folder = os.path.dirname(os.path.abspath(output))
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=folder)
    os.close(fd)
    fig.savefig(tmp, dpi=120)
    os.replace(tmp, output)


def ucs(a):
    t, u, f = curve(a, "z")
    area = math.pi * a.radius ** 2
    strain, stress = u / a.height, f / area
    idx, peak = linear_range(stress)
    if len(idx) < 3:
        sys.exit("strength_test: fewer than 3 rows of walls.csv between 20% and 50% of the peak: write rows more often")
    e_mod = np.polyfit(strain[idx], stress[idx], 1)[0]
    result = {"test": "ucs", "ucs_Pa": float(stress[peak]), "strain_at_peak": float(strain[peak]),
              "youngs_modulus_Pa": float(e_mod)}
    # Poisson's ratio from the frames inside the linear range.
    fr = frames(a.folder)
    lateral, gauge = [], []
    if fr:
        x0 = fr[0][1]
        r0 = np.hypot(x0[:, 0] - a.centre[0], x0[:, 1] - a.centre[1])
        d_max = 2.0 * fr[0][2].max() if fr[0][2] is not None else 0.1 * a.radius
        mid = (x0[:, 2] > 0.25 * a.height) & (x0[:, 2] < 0.75 * a.height)
        outer = mid & (r0 > a.radius - d_max)
        s_lo, s_hi = 0.2 * stress[peak], 0.5 * stress[peak]
        for time, x, _ in fr[1:]:
            k = int(np.argmin(np.abs(t - time)))
            if k > peak or not (s_lo <= stress[k] <= s_hi):
                continue
            r = np.hypot(x[:, 0] - a.centre[0], x[:, 1] - a.centre[1])
            lateral.append((strain[k], float(np.mean((r[outer] - r0[outer]) / r0[outer]))))
            # The middle half's axial strain: minus the slope of the grains'
            # axial displacement against their initial height.
            gauge.append((-float(np.polyfit(x0[mid, 2], x[mid, 2] - x0[mid, 2], 1)[0]), stress[k]))
    if len(gauge) >= 2:
        # E from the strain of the middle half (a strain gauge: no platen
        # contact compliance), over the same frames.
        result["youngs_modulus_gauge_Pa"] = float(np.polyfit([g[0] for g in gauge], [g[1] for g in gauge], 1)[0])
    if len(lateral) >= 2:
        # Compression positive, lateral expansion positive: nu = d(lateral)/d(axial).
        nu = np.polyfit([p[0] for p in lateral], [p[1] for p in lateral], 1)[0]
        result["poisson_ratio"] = float(nu)
        result["poisson_frames"] = len(lateral)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(100 * strain, stress / 1e6, "k-", label="axial stress")
    fit = np.array([strain[idx[0]], strain[idx[-1]]])
    b = np.polyfit(strain[idx], stress[idx], 1)[1]
    ax.plot(100 * fit, (e_mod * fit + b) / 1e6, "r--", lw=2,
            label=f"E = {e_mod / 1e6:.1f} MPa (20-50% of the peak)")
    ax.plot([100 * strain[peak]], [stress[peak] / 1e6], "bo", label=f"UCS = {stress[peak] / 1e6:.3f} MPa")
    if lateral:
        ax2 = ax.twinx()
        ax2.plot([100 * p[0] for p in lateral], [100 * p[1] for p in lateral], "g^", ms=4)
        ax2.set_ylabel("lateral expansion (%, outer grains)", color="g")
        ax.plot([], [], "g^", label=f"lateral strain: nu = {result.get('poisson_ratio', float('nan')):.3f}")
    ax.set_xlabel("axial strain (%)")
    ax.set_ylabel("axial stress (MPa)")
    ax.set_title(a.title or "Uniaxial compression of a bonded packing")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    save(fig, a.output)
    return result


def failures(folder):
    path = os.path.join(folder, "bond_failures.csv")
    if not os.path.exists(path):
        return np.zeros((0, 3))
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return np.array([[float(r["x"]), float(r["y"]), float(r["z"])] for r in rows]).reshape(-1, 3)


def brazilian(a):
    t, u, f = curve(a, "y")
    d = 2.0 * a.radius
    k = first_peak(f)
    bts = 2.0 * f[k] / (math.pi * d * a.thickness)
    broken = failures(a.folder)
    # The crack: broken bonds near the loaded (y) diameter.
    near = int(np.sum(np.abs(broken[:, 0] - a.centre[0]) < 0.25 * a.radius)) if len(broken) else 0
    result = {"test": "brazilian", "peak_load_N": float(f[k]), "bts_Pa": float(bts), "broken_bonds": len(broken),
              "broken_within_quarter_radius_of_loaded_diameter": near}
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.5))
    left.plot(1e3 * u, f, "k-")
    left.plot([1e3 * u[k]], [f[k]], "bo", label=f"P = {f[k]:.1f} N: 2P/(pi D t) = {bts / 1e6:.3f} MPa")
    left.set_xlabel(("loading jaw" if a.group else "platen") + " displacement (mm)")
    left.set_ylabel("load P (N)")
    left.grid(True, alpha=0.3)
    left.legend(fontsize=8)
    left.set_title("Brazilian disc: load")
    circle = np.linspace(0, 2 * math.pi, 200)
    right.plot(1e3 * (a.centre[0] + a.radius * np.cos(circle)), 1e3 * (a.centre[1] + a.radius * np.sin(circle)), "k-")
    if len(broken):
        right.plot(1e3 * broken[:, 0], 1e3 * broken[:, 1], "r.", ms=3, label=f"{len(broken)} broken bonds")
    right.annotate("", xy=(1e3 * a.centre[0], 1e3 * (a.centre[1] + a.radius)),
                   xytext=(1e3 * a.centre[0], 1e3 * (a.centre[1] + 1.25 * a.radius)),
                   arrowprops=dict(arrowstyle="->"))
    right.annotate("", xy=(1e3 * a.centre[0], 1e3 * (a.centre[1] - a.radius)),
                   xytext=(1e3 * a.centre[0], 1e3 * (a.centre[1] - 1.25 * a.radius)),
                   arrowprops=dict(arrowstyle="->"))
    right.set_aspect("equal")
    right.set_xlabel("x (mm)")
    right.set_ylabel("y (mm)")
    right.set_title("broken bonds (the crack along the loaded diameter)")
    right.legend(fontsize=8, loc="lower right")
    fig.suptitle(a.title or "Brazilian disc test of a bonded packing")
    fig.tight_layout()
    save(fig, a.output)
    return result


def bending(a):
    t, u, f = curve(a, "z")
    k = first_peak(f)
    strength = 3.0 * f[k] * a.span / (2.0 * a.width * a.depth ** 2)
    broken = failures(a.folder)
    result = {"test": "bending", "peak_load_N": float(f[k]), "flexural_strength_Pa": float(strength),
              "broken_bonds": len(broken)}
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1, 1.4]})
    left.plot(1e3 * u, f, "k-")
    left.plot([1e3 * u[k]], [f[k]], "bo", label=f"P = {f[k]:.2f} N: 3PL/(2bh^2) = {strength / 1e6:.3f} MPa")
    left.set_xlabel("punch displacement (mm)")
    left.set_ylabel("punch load (N)")
    left.grid(True, alpha=0.3)
    left.legend(fontsize=8)
    if len(broken):
        right.plot(1e3 * broken[:, 0], 1e3 * broken[:, 2], "r.", ms=3, label=f"{len(broken)} broken bonds")
        right.legend(fontsize=8)
    right.set_aspect("equal")
    right.set_xlabel("x (mm)")
    right.set_ylabel("z (mm)")
    right.set_title("broken bonds (side view)")
    fig.suptitle(a.title or "Three-point bending of a bonded packing")
    fig.tight_layout()
    save(fig, a.output)
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("test", choices=["ucs", "brazilian", "bending"])
    p.add_argument("folder", help="the run's output folder")
    p.add_argument("-o", "--output", default=None, help="the figure (default: FOLDER/TEST.png)")
    p.add_argument("--platen", default=None, help="the loading wall or mesh (default: top, top, punch)")
    p.add_argument("--group", default=None,
                   help="load and displacement of this [[group]] (groups.csv) instead of a wall's")
    p.add_argument("--radius", type=float, help="ucs, brazilian: the specimen's radius (m)")
    p.add_argument("--height", type=float, help="ucs: the specimen's height (m)")
    p.add_argument("--thickness", type=float, help="brazilian: the disc's thickness (m)")
    p.add_argument("--centre", type=float, nargs=2, default=None, help="the specimen's axis (x, y) (m)")
    p.add_argument("--span", type=float, help="bending: the span between the supports (m)")
    p.add_argument("--width", type=float, help="bending: the beam's width (m)")
    p.add_argument("--depth", type=float, help="bending: the beam's depth (m)")
    p.add_argument("--title", default=None)
    a = p.parse_args()
    need = {"ucs": ["radius", "height"], "brazilian": ["radius", "thickness"], "bending": ["span", "width", "depth"]}
    for key in need[a.test]:
        if getattr(a, key) is None or not getattr(a, key) > 0:
            sys.exit(f"strength_test: {a.test} needs --{key} > 0")
    if a.centre is None:
        a.centre = [0.0, 0.0]
    if a.platen is None:
        a.platen = "punch" if a.test == "bending" else "top"
    if a.output is None:
        a.output = os.path.join(a.folder, a.test + ".png")
    result = {"ucs": ucs, "brazilian": brazilian, "bending": bending}[a.test](a)
    for k, v in result.items():
        print(f"{k}: {v:.6g}" if isinstance(v, float) else f"{k}: {v}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
