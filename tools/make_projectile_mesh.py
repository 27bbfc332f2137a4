#!/usr/bin/env python3
"""Writes the triangulated projectile of scenes/projectile_impact.toml.

An icosphere of radius 1 (the scene scales it): the icosahedron's 20 faces,
each split into 4 `levels` times with the new vertices pushed onto the unit
sphere (levels 3: 1280 triangles, 642 vertices). ASCII STL, outward normals.

    python3 tools/make_projectile_mesh.py [--levels 3] [--output scenes/meshes/projectile_sphere.stl]

For the mesh benchmark (bench/README.md) a finer one: --levels 7 gives
327,680 triangles.
"""
import argparse
import math


def icosphere(levels):
    t = (1.0 + math.sqrt(5.0)) / 2.0
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
             (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    verts = [normalise(v) for v in verts]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
             (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5),
             (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(levels):
        middle = {}

        def mid(a, b):
            key = (min(a, b), max(a, b))
            if key not in middle:
                va, vb = verts[a], verts[b]
                verts.append(normalise(((va[0] + vb[0]) / 2, (va[1] + vb[1]) / 2, (va[2] + vb[2]) / 2)))
                middle[key] = len(verts) - 1
            return middle[key]

        split = []
        for a, b, c in faces:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            split += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = split
    return verts, faces


def normalise(v):
    n = math.sqrt(v[0] ** 2 + v[1] ** 2 + v[2] ** 2)
    return (v[0] / n, v[1] / n, v[2] / n)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--levels", type=int, default=3)
    p.add_argument("--output", default="scenes/meshes/projectile_sphere.stl")
    a = p.parse_args()
    verts, faces = icosphere(a.levels)
    with open(a.output, "w") as out:
        out.write("solid projectile\n")
        for f in faces:
            (ax, ay, az), (bx, by, bz), (cx, cy, cz) = (verts[k] for k in f)
            ux, uy, uz = bx - ax, by - ay, bz - az
            vx, vy, vz = cx - ax, cy - ay, cz - az
            n = normalise((uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx))
            out.write("facet normal %.9g %.9g %.9g\n outer loop\n" % n)
            for k in f:
                out.write("  vertex %.9g %.9g %.9g\n" % verts[k])
            out.write(" endloop\nendfacet\n")
        out.write("endsolid projectile\n")
    print("%s: %d triangles, %d vertices" % (a.output, len(faces), len(verts)))


if __name__ == "__main__":
    main()
