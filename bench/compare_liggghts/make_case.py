#!/usr/bin/env python3
"""Inputs of the frictional settling benchmark for the engine, LIGGGHTS and
LAMMPS (bench/compare_liggghts.sh): the same spheres, materials, walls and
steps for all three.

  make_case.py --positions positions.csv --box 0.13 --steps 25000 OUT
      the 3,000 spheres of ../shared/peers/settling/ (x,y,z,diameter,mass)
  make_case.py --tile final.dump --tiles 6 --box 0.13 --steps 2000 OUT
      a settled bed (a LIGGGHTS dump: id x y z radius ...) repeated tiles x
      tiles times side by side, in a box tiles times as wide, at rest

Writes OUT/{positions.csv, data.peers, engine.toml, lig.in, lmp.in}.
Material: rho 2500, E 1e7, nu 0.3, e 0.5 (Tsuji damping with the force
clamped at zero: LIGGGHTS limitForce on, the engine's "tsuji-clamped",
LAMMPS damping tsuji limit_damping), mu 0.5, mu_r 0.1 (LIGGGHTS and the
engine epsd without rolling damping; LAMMPS's rolling sds beside it, its
nearest model), h 2e-5 s, gravity 9.81 m/s^2.
"""
import argparse
import math
import os

RHO, E, NU, E_REST, MU, MU_R, H = 2500.0, 1e7, 0.3, 0.5, 0.5, 0.1, 2e-5


def read_positions(path):
    spheres = []
    with open(path) as f:
        header = f.readline().strip().split(",")
        assert header[:4] == ["x", "y", "z", "diameter"], header
        for line in f:
            x, y, z, d = (float(v) for v in line.split(",")[:4])
            spheres.append((x, y, z, d))
    return spheres


def read_dump(path):
    """The last snapshot of a LIGGGHTS/LAMMPS custom dump with id x y z radius."""
    with open(path) as f:
        lines = f.read().splitlines()
    start = max(i for i, l in enumerate(lines) if l.startswith("ITEM: ATOMS"))
    cols = lines[start].split()[2:]
    ix, iy, iz, ir = (cols.index(c) for c in ("x", "y", "z", "radius"))
    rows = sorted((int(l.split()[0]), l.split()) for l in lines[start + 1:] if l.strip())
    return [(float(r[ix]), float(r[iy]), float(r[iz]), 2 * float(r[ir])) for _, r in rows]


def tile(spheres, tiles, box):
    out = []
    for a in range(tiles):
        for b in range(tiles):
            dx, dy = (a - (tiles - 1) / 2) * box, (b - (tiles - 1) / 2) * box
            out += [(x + dx, y + dy, z, d) for x, y, z, d in spheres]
    return out


def write_inputs(out, spheres, half, steps, title):
    os.makedirs(out, exist_ok=True)
    mass = [RHO * math.pi / 6 * d**3 for *_, d in spheres]
    with open(os.path.join(out, "positions.csv"), "w") as f:
        f.write("x,y,z,diameter,mass\n")
        for (x, y, z, d), m in zip(spheres, mass):
            f.write(f"{x!r},{y!r},{z!r},{d!r},{m!r}\n")
    top = max(z for _, _, z, _ in spheres) + 0.1
    with open(os.path.join(out, "data.peers"), "w") as f:
        f.write(f"{title}\n\n{len(spheres)} atoms\n1 atom types\n\n")
        f.write(f"{-half - 0.01!r} {half + 0.01!r} xlo xhi\n{-half - 0.01!r} {half + 0.01!r} ylo yhi\n")
        f.write(f"-0.01 {top!r} zlo zhi\n\nAtoms\n\n")
        for k, (x, y, z, d) in enumerate(spheres):
            f.write(f"{k + 1} 1 {d!r} {RHO!r} {x!r} {y!r} {z!r}\n")
    walls = [((0, 0, 0), (0, 0, 1)), ((-half, 0, 0), (1, 0, 0)), ((half, 0, 0), (-1, 0, 0)),
             ((0, -half, 0), (0, 1, 0)), ((0, half, 0), (0, -1, 0))]
    with open(os.path.join(out, "engine.toml"), "w") as f:
        f.write(f"# {title}\n[run]\nintegrator = \"rrp25\"\ntime_step = {H!r}\nsteps = {steps}\n\n")
        f.write(f"[output]\nenergy_every = 500\nvtk_every = 0\n\n")
        f.write(f"[[material]]\nname = \"grain\"\ndensity = {RHO!r}\nE = {E!r}\nnu = {NU!r}\ne = {E_REST!r}\n")
        f.write(f"mu_s = {MU!r}\nmu_r = {MU_R!r}\n\n")
        f.write("[[particles]]\nsource = \"csv\"\nfile = \"positions.csv\"\nmaterial = \"grain\"\n\n")
        f.write("[contact]\nlaw = \"hertz-mindlin\"\ndamping = \"tsuji-clamped\"\nrolling = \"epsd\"\n")
        f.write("skin_fraction = 0.2\n\n[gravity]\nacceleration = [0.0, 0.0, -9.81]\n")
        for p, n in walls:
            f.write(f"\n[[wall]]\npoint = [{p[0]!r}, {p[1]!r}, {p[2]!r}]\nnormal = [{n[0]}, {n[1]}, {n[2]}]\n")
    model = "model hertz tangential history rolling_friction epsd"
    with open(os.path.join(out, "lig.in"), "w") as f:
        f.write(f"# {title}\natom_style granular\natom_modify map array\nboundary f f f\nnewton off\n")
        f.write("communicate single vel yes\nunits si\nread_data data.peers\nneighbor 0.002 bin\n")
        f.write("neigh_modify delay 0\n")
        f.write(f"fix m1 all property/global youngsModulus peratomtype {E!r}\n")
        f.write(f"fix m2 all property/global poissonsRatio peratomtype {NU!r}\n")
        f.write(f"fix m3 all property/global coefficientRestitution peratomtypepair 1 {E_REST!r}\n")
        f.write(f"fix m4 all property/global coefficientFriction peratomtypepair 1 {MU!r}\n")
        f.write(f"fix m5 all property/global coefficientRollingFriction peratomtypepair 1 {MU_R!r}\n")
        f.write("fix m6 all property/global coefficientRollingViscousDamping peratomtypepair 1 0.0\n")
        f.write(f"pair_style gran {model} limitForce on\npair_coeff * *\ntimestep {H!r}\n")
        f.write(f"fix wz all wall/gran {model} primitive type 1 zplane 0.0 limitForce on\n")
        for name, plane, at in (("wx1", "xplane", -half), ("wx2", "xplane", half), ("wy1", "yplane", -half),
                                ("wy2", "yplane", half)):
            f.write(f"fix {name} all wall/gran {model} primitive type 1 {plane} {at!r} limitForce on\n")
        f.write("fix grav all gravity 9.81 vector 0.0 0.0 -1.0\nfix integr all nve/sphere\n")
        f.write(f"thermo 1000\ndump fin all custom {steps} final.dump id x y z radius vx vy vz\nrun {steps}\n")
    # LAMMPS pair granular: hertz/material E, damping coefficient of Tsuji's
    # form for e, nu; mindlin with G from E and nu (NULL), damping 0.9075
    # (LAMMPS's scaling of the normal damping for the tangential one), mu;
    # rolling sds k_roll 30 N/m, no rolling damping, mu_r.
    coeff = (f"hertz/material {E!r} 0.3666513615687179 {NU!r} tangential mindlin NULL 0.9074852129730301 {MU!r} "
             f"rolling sds 30.0 0.0 {MU_R!r} damping tsuji limit_damping")
    with open(os.path.join(out, "lmp.in"), "w") as f:
        f.write(f"# {title}\nunits si\natom_style sphere\natom_modify map array\nboundary f f f\nnewton off\n")
        f.write("comm_modify vel yes\nread_data data.peers\nneighbor 0.002 bin\nneigh_modify delay 0\n")
        f.write(f"pair_style granular\npair_coeff * * {coeff}\ntimestep {H!r}\n")
        f.write(f"fix w all wall/gran granular {coeff} zplane 0.0 NULL\n")
        f.write(f"fix wx all wall/gran granular {coeff} xplane {-half!r} {half!r}\n")
        f.write(f"fix wy all wall/gran granular {coeff} yplane {-half!r} {half!r}\n")
        f.write("fix grav all gravity 9.81 vector 0.0 0.0 -1.0\nfix integr all nve/sphere\n")
        f.write(f"thermo_modify lost ignore\nthermo 1000\nrun {steps}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--positions", help="x,y,z,diameter[,mass] CSV of the spheres")
    ap.add_argument("--tile", help="a dump of a settled bed to repeat")
    ap.add_argument("--tiles", type=int, default=6)
    ap.add_argument("--box", type=float, default=0.13, help="side of the bed's square box (m)")
    ap.add_argument("--steps", type=int, default=25000)
    a = ap.parse_args()
    if (a.positions is None) == (a.tile is None):
        ap.error("give one of --positions and --tile")
    if a.positions:
        spheres, side = read_positions(a.positions), a.box
        title = f"{len(spheres)} frictional spheres settling in a {side * 1e3:g} mm box"
    else:
        spheres, side = tile(read_dump(a.tile), a.tiles, a.box), a.tiles * a.box
        title = f"{len(spheres)} frictional spheres: a settled bed tiled {a.tiles}x{a.tiles} in a {side * 1e3:g} mm box"
    write_inputs(a.out, spheres, side / 2, a.steps, title + f", h = {H:g} s, {a.steps} steps")
    print(f"{a.out}: {len(spheres)} spheres, {a.steps} steps")


if __name__ == "__main__":
    main()
