#!/usr/bin/env python3
"""Run the engine's linear contact law (docs/model.md §11.4) and LAMMPS's
pair_style gran/hooke/history (fix wall/gran hooke/history for a wall) on the
same collisions and print a comparison table (README.md says what and why).

Each case is an engine scene in cases/*.toml; the LAMMPS run is built from the
same scene and CSV table, with the parameter mapping

    Kn = stiffness,  Kt = tangential_stiffness (default 2/7 Kn, LAMMPS's NULL),
    gamma_n = c_n/m* = 2 zeta sqrt(k_n/m*),  zeta = -ln e/sqrt(ln^2 e + pi^2),
    gamma_t = tangential_damping * gamma_n (default 1/2, LAMMPS's NULL),
    xmu = mu_s, dampflag = 1,

where m* is the effective mass LAMMPS uses for the contact: m_i m_j/(m_i + m_j)
for two free spheres, the moving sphere's own mass m_i against a wall or a
sphere held by fix freeze.

usage: peers.py [--dem PATH] [--lmp PATH] [--work DIR] [CASE ...]
Standard library only (no numpy, no VTK).
"""
import argparse
import base64
import csv
import math
import os
import re
import struct
import subprocess
import sys
import tomllib
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
# NAME runs cases/NAME.toml; NAME+cn runs the same engine scene against LAMMPS with gamma_n = c_n/meff, c_n the
# engine's own dashpot (differs from the plain mapping only where the engine's m* is not LAMMPS's meff).
CASES = ["headon_e05", "headon_e09", "oblique30", "oblique30_kt", "oblique30_coarse", "oblique60", "unequal30",
         "wall45",
         "fixed_headon", "fixed_headon+cn", "fixed30", "fixed30+cn"]


# ----------------------------------------------------------------------------- inputs
def read_case(label):
    name, _, variant = label.partition("+")
    path = os.path.join(HERE, "cases", name + ".toml")
    with open(path, "rb") as f:
        scene = tomllib.load(f)
    src = scene["particles"][0]
    with open(os.path.join(HERE, "cases", src["file"])) as f:
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    mat = scene["material"][0]
    c = scene["contact"]
    assert c["law"] == "linear" and scene["run"]["integrator"] == "rrp25"
    kn = float(c["stiffness"])
    kt = float(c.get("tangential_stiffness", 2.0 / 7.0 * kn))
    dt_ratio = float(c.get("tangential_damping", 0.5))
    e, mu = float(mat["e"]), float(mat["mu_s"])
    rho = float(mat["density"])
    parts = []
    for r in rows:
        d = r["diameter"]
        parts.append({"x": [r["x"], r["y"], r["z"]], "v": [r["vx"], r["vy"], r["vz"]],
                      "w": [r["wx"], r["wy"], r["wz"]], "d": d, "m": rho * math.pi * d ** 3 / 6.0})
    walls = scene.get("wall", [])
    fixed = set()
    for g in scene.get("group", []):
        if g.get("motion") == "fixed":
            fixed.update(range(g["ids"][0], g["ids"][1] + 1))
    # effective mass of the contact as LAMMPS uses it (meff), and as the engine does (m_i m_j/(m_i + m_j)
    # with the masses of the store, also for a fixed particle; the particle's own mass at a wall)
    if walls:
        m_lammps = m_engine = parts[0]["m"]
    else:
        m0, m1 = parts[0]["m"], parts[1]["m"]
        m_engine = m0 * m1 / (m0 + m1)
        m_lammps = m0 if 1 in fixed else (m1 if 0 in fixed else m_engine)
    zeta = -math.log(e) / math.sqrt(math.log(e) ** 2 + math.pi ** 2)
    c_n_engine = 2.0 * zeta * math.sqrt(kn * m_engine)  # contact/linear_spring_dashpot.cpp, contact()
    return {"name": label, "variant": variant, "path": path, "parts": parts, "walls": walls, "fixed": fixed, "kn": kn, "kt": kt,
            "dt_ratio": dt_ratio, "e": e, "mu": mu, "zeta": zeta, "h": float(scene["run"]["time_step"]),
            "steps": int(scene["run"]["steps"]), "m_lammps": m_lammps, "m_engine": m_engine,
            "c_n_engine": c_n_engine}


def lammps_vars(case):
    """The -var list of in.pair.lmp / in.wall.lmp. gamma_n is chosen so that LAMMPS's normal dashpot
    meff*gamma_n equals the engine's c_n = 2 zeta sqrt(k_n m*) with LAMMPS's own meff, i.e. the damping the
    engine's documentation promises ('e is the measured restitution'); where the engine's m* differs from
    LAMMPS's meff (a fixed particle) the two then differ, which is the point of case fixed30."""
    gn = 2.0 * case["zeta"] * math.sqrt(case["kn"] / case["m_lammps"])
    if case["variant"] == "cn":
        gn = case["c_n_engine"] / case["m_lammps"]
    elif case["variant"]:
        sys.exit(f"peers: unknown variant +{case['variant']}")
    v = {"kn": case["kn"], "kt": case["kt"], "gn": gn, "gt": case["dt_ratio"] * gn, "mu": case["mu"],
         "dt": case["h"], "steps": case["steps"], "freeze": 1 if case["fixed"] else 0}
    for k, p in enumerate(case["parts"], start=1):
        v[f"d{k}"], v[f"m{k}"] = p["d"], p["m"]
        for a, comp in enumerate("xyz"):
            v[f"{comp}{k}"] = p["x"][a]
            v[f"v{comp}{k}"] = p["v"][a]
            v[f"w{comp}{k}"] = p["w"][a]
    if case["walls"]:
        w = case["walls"][0]
        assert w["point"] == [0.0, 0.0, 0.0] and w["normal"] == [0.0, 0.0, 1.0], "in.wall.lmp has the plane z = 0"
    return v


# ----------------------------------------------------------------------------- running
def run(cmd, log):
    with open(log, "w") as f:
        r = subprocess.run(["nice", "-n", "10"] + cmd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit(f"peers: {' '.join(cmd)} failed (exit {r.returncode}); see {log}")


def run_engine(case, dem, work):
    out = os.path.join(work, case["name"], "engine")
    os.makedirs(out, exist_ok=True)
    run([dem, "run", case["path"], "--output-dir", out, "--overwrite"], os.path.join(work, case["name"], "engine.log"))
    return out


def run_lammps(case, lmp, work):
    out = os.path.join(work, case["name"], "lammps")
    os.makedirs(out, exist_ok=True)
    args = [lmp, "-in", os.path.join(HERE, "in.wall.lmp" if case["walls"] else "in.pair.lmp"), "-log",
            os.path.join(out, "log.lammps"), "-screen", "none", "-nocite", "-var", "out", out]
    for k, val in lammps_vars(case).items():
        args += ["-var", k, repr(val) if isinstance(val, float) else str(val)]
    run(args, os.path.join(work, case["name"], "lammps.log"))
    return out


# ----------------------------------------------------------------------------- reading results
def read_vtp(path):
    """Point arrays of the engine's binary appended, zlib-compressed .vtp (UInt64 headers)."""
    raw = open(path, "rb").read()
    head, _, tail = raw.partition(b'<AppendedData encoding="raw">')
    data = tail[tail.index(b"_") + 1:]
    arrays = {}
    for m in re.finditer(rb"<DataArray ([^>]*)/?>", head):
        attrs = dict(re.findall(rb'(\w+)="([^"]*)"', m.group(1)))
        if attrs.get(b"format") != b"appended":
            continue
        off = int(attrs[b"offset"])
        nb, _bs, _last = struct.unpack_from("<QQQ", data, off)
        sizes = struct.unpack_from(f"<{nb}Q", data, off + 24)
        pos, buf = off + 24 + 8 * nb, b""
        for s in sizes:
            buf += zlib.decompress(data[pos:pos + s])
            pos += s
        typ = attrs[b"type"].decode()
        fmt = {"Float64": "d", "Int32": "i", "Int64": "q"}[typ]
        vals = struct.unpack(f"<{len(buf) // struct.calcsize(fmt)}{fmt}", buf)
        ncomp = int(attrs.get(b"NumberOfComponents", b"1"))
        arrays[attrs[b"Name"].decode()] = [vals[i:i + ncomp] for i in range(0, len(vals), ncomp)]
    return arrays


def engine_result(case, out):
    frames = re.findall(r'file="(particles_\d+\.vtp)"', open(os.path.join(out, "particles.pvd")).read())
    a = read_vtp(os.path.join(out, frames[-1]))
    order = sorted(range(len(a["id"])), key=lambda k: a["id"][k][0])
    state = [{"x": list(a["Points"][k]), "v": list(a["velocity"][k]), "w": list(a["angular_velocity"][k])}
             for k in order]
    col = "U_wall" if case["walls"] else "U_contact"
    series = []
    with open(os.path.join(out, "energy.csv")) as f:
        for r in csv.DictReader(f):
            u = float(r[col])
            series.append((float(r["t"]), math.sqrt(2.0 * u / case["kn"]) if u > 0 else 0.0))
    return state, series


def lammps_result(case, out):
    lines = open(os.path.join(out, "final.dump")).read().splitlines()
    i = lines.index(next(l for l in lines if l.startswith("ITEM: ATOMS")))
    rows = sorted((list(map(float, l.split())) for l in lines[i + 1:] if l.strip()), key=lambda r: r[0])
    state = [{"x": r[1:4], "v": r[4:7], "w": r[7:10]} for r in rows]
    series = []
    for l in open(os.path.join(out, "delta.txt")):
        if l.startswith("#") or not l.strip():
            continue
        t, d = map(float, l.split())
        series.append((t, d))
    return state, series


# ----------------------------------------------------------------------------- measures
def sub(a, b): return [x - y for x, y in zip(a, b)]
def add(a, b): return [x + y for x, y in zip(a, b)]
def scale(s, a): return [s * x for x in a]
def dot(a, b): return sum(x * y for x, y in zip(a, b))
def cross(a, b): return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
def norm(a): return math.sqrt(dot(a, a))


def touch_normal(case):
    """Unit normal (from particle 1 to 0, or the wall normal) at the first touch of free flight."""
    p = case["parts"]
    if case["walls"]:
        return [0.0, 0.0, 1.0]
    dx, dv = sub(p[0]["x"], p[1]["x"]), sub(p[0]["v"], p[1]["v"])
    reach = 0.5 * (p[0]["d"] + p[1]["d"])
    a, b, c = dot(dv, dv), 2 * dot(dx, dv), dot(dx, dx) - reach ** 2
    t = (-b - math.sqrt(b * b - 4 * a * c)) / (2 * a)
    n = add(dx, scale(t, dv))
    return scale(1.0 / norm(n), n)


def slip(case, st, n):
    """Relative velocity of the contact points, v_0 - v_1 - (r_0 w_0 + r_1 w_1) x n."""
    r0 = 0.5 * case["parts"][0]["d"]
    if case["walls"]:
        return sub(st[0]["v"], cross(scale(r0, st[0]["w"]), n))
    r1 = 0.5 * case["parts"][1]["d"]
    return sub(sub(st[0]["v"], st[1]["v"]), cross(add(scale(r0, st[0]["w"]), scale(r1, st[1]["w"])), n))


def duration(series):
    """Contact time from the overlap series (positive samples only, both ends extrapolated linearly to 0)."""
    pos = [(t, d) for t, d in series if d > 0]
    if len(pos) < 4:
        return float("nan")
    (t1, d1), (t2, d2) = pos[0], pos[1]
    (t3, d3), (t4, d4) = pos[-2], pos[-1]
    start = t1 - d1 * (t2 - t1) / (d2 - d1)
    end = t4 + d4 * (t4 - t3) / (d3 - d4)
    return end - start


def separation_normal(case, state):
    """Unit normal when the spheres part: the final free flight traced back to |x_0 - x_1| = r_0 + r_1."""
    if case["walls"]:
        return [0.0, 0.0, 1.0]
    dx, dv = sub(state[0]["x"], state[1]["x"]), sub(state[0]["v"], state[1]["v"])
    reach = 0.5 * (case["parts"][0]["d"] + case["parts"][1]["d"])
    a, b, c = dot(dv, dv), 2 * dot(dx, dv), dot(dx, dx) - reach ** 2
    t = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)  # the later root, < 0: back in time
    n = add(dx, scale(t, dv))
    return scale(1.0 / norm(n), n)


def measures(case, state, series):
    """e_n: normal contact-point speed after (on the normal at separation) over before (normal at touch);
    u_t'/u_t: tangential slip after over before (same normals, same sense); the final spin about n x t."""
    n0, n1 = touch_normal(case), separation_normal(case, state)
    u0 = slip(case, [{"v": p["v"], "w": p["w"]} for p in case["parts"]], n0)
    u1 = slip(case, state, n1)
    res = {"e_n = -u_n'/u_n": -dot(u1, n1) / dot(u0, n0)}
    ut0 = sub(u0, scale(dot(u0, n0), n0))
    if norm(ut0) > 0:
        t0 = scale(1.0 / norm(ut0), ut0)
        axis = cross(n0, t0)  # normal to the plane of motion
        t1 = cross(axis, n1)  # the tangent at separation, in the sense of t0
        res["u_t'/u_t (contact-point slip)"] = dot(u1, t1) / norm(ut0)
        res["v_t' of sphere 0 (m/s)"] = dot(state[0]["v"], t1)
        res["spin' of sphere 0 (rad/s)"] = dot(state[0]["w"], axis)
        if not case["walls"] and not case["fixed"]:
            res["spin' of sphere 1 (rad/s)"] = dot(state[1]["w"], axis)
    res["contact time (s)"] = duration(series)
    return res


def theory(case):
    """Closed forms of the linear law (free normal oscillator): e_n and the contact time pi/omega_d with the
    damping c_n = 2 zeta sqrt(k_n m*_engine) acting on the true reduced mass of the motion."""
    m_true = case["m_lammps"]  # the true reduced mass: m for a wall or a held sphere
    w0 = math.sqrt(case["kn"] / m_true)
    z = case["c_n_engine"] / (2 * math.sqrt(case["kn"] * m_true))
    wd = w0 * math.sqrt(1 - z * z)
    return {"e_n = -u_n'/u_n": math.exp(-math.pi * z / math.sqrt(1 - z * z)), "contact time (s)": math.pi / wd}


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dem", default=os.path.join(HERE, "..", "..", "build", "apps", "dem"))
    ap.add_argument("--lmp", default="lmp")
    ap.add_argument("--work", default="/tmp/peers_linear")
    ap.add_argument("cases", nargs="*", default=CASES)
    args = ap.parse_args()
    print(f"{'case':18s} {'quantity':32s} {'engine':>22s} {'LAMMPS':>22s} {'rel.diff':>9s} {'closed form':>12s}")
    worst = {}
    for name in args.cases:
        case = read_case(name)
        eng = engine_result(case, run_engine(case, args.dem, args.work))
        lmp = lammps_result(case, run_lammps(case, args.lmp, args.work))
        me, ml, th = measures(case, *eng), measures(case, *lmp), theory(case)
        for q in me:
            a, b = me[q], ml[q]
            rel = abs(a - b) / max(abs(b), 1e-300)
            ref = f"{th[q]:12.6g}" if q in th else ""
            print(f"{name:18s} {q:32s} {a:22.15g} {b:22.15g} {rel:9.1e} {ref}")
        # every final velocity and spin component, relative to the approach speed
        scale_v = norm(sub(case["parts"][0]["v"], case["parts"][1]["v"] if len(case["parts"]) > 1 else [0, 0, 0]))
        dev = max(max(abs(x - y) for x, y in zip(se["v"] + scale(0.5 * p["d"], se["w"]),
                                                 sl["v"] + scale(0.5 * p["d"], sl["w"])))
                  for se, sl, p in zip(eng[0], lmp[0], case["parts"])) / scale_v
        worst[name] = dev
        print(f"{name:18s} {'max |dv|, r|dw| / approach speed':32s} {'':22s} {'':22s} {dev:9.1e}")
    print("largest final-state difference over all cases: %.1e of the approach speed" % max(worst.values()))


if __name__ == "__main__":
    main()
