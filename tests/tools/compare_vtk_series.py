#!/usr/bin/env python3
"""Reads a run's VTK series back with VTK's own readers, the ones ParaView
uses, and compares it, by particle id, with a reference series.

    compare_vtk_series.py REFERENCE_DIR DIR

REFERENCE_DIR holds the series of a run without MPI (particles_NNNNNN.vtp,
bonds_NNNNNN.vtp, particles.pvd, bonds.pvd); DIR that of the same run on
several MPI ranks, whose frames may be parallel (particles_NNNNNN.pvtp naming
one piece per rank, read with vtkXMLPPolyDataReader) or whole (.vtp): each
frame is read as its collection lists it. Checks, frame by frame:
  - the collections list the same times, and every file they name exists;
  - the parallel frame holds every particle once (its ids are the
    reference's, none twice);
  - every point array and the positions are the reference's bits, by id;
  - the bonds are the reference's (by the ids of their ends, found from the
    ends' positions) with the same cell arrays, bit for bit, none twice.
Prints one line per frame; exits 1 at the first difference, 2 on bad usage.
"""
import os
import sys
import xml.etree.ElementTree as ET

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOXML import vtkXMLPolyDataReader, vtkXMLPPolyDataReader


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def collection(folder, stem):
    """[(time text, file name)] of folder/stem.pvd."""
    path = os.path.join(folder, stem + ".pvd")
    if not os.path.exists(path):
        fail(path + " is missing")
    return [(d.get("timestep"), d.get("file")) for d in ET.parse(path).getroot().iter("DataSet")]


def read(path):
    if not os.path.exists(path):
        fail(path + " is missing")
    reader = vtkXMLPPolyDataReader() if path.endswith(".pvtp") else vtkXMLPolyDataReader()
    reader.SetFileName(path)
    reader.Update()
    data = reader.GetOutput()
    if path.endswith(".pvtp"):  # every piece the summary names must be there
        for piece in ET.parse(path).getroot().iter("Piece"):
            if not os.path.exists(os.path.join(os.path.dirname(path), piece.get("Source"))):
                fail(path + " names a missing piece " + piece.get("Source"))
    return data


def points(data):
    if data.GetNumberOfPoints() == 0:
        return np.zeros((0, 3))
    return vtk_to_numpy(data.GetPoints().GetData()).reshape(-1, 3)


def arrays(attributes):
    out = {}
    for k in range(attributes.GetNumberOfArrays()):
        a = attributes.GetArray(k)
        out[a.GetName()] = vtk_to_numpy(a)
    return out


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def ids_of_points(particle_points, particle_ids, other_points):
    """Ids of the particles at other_points (exactly the same position bits)."""
    a = np.ascontiguousarray(particle_points, dtype=np.float64).view(np.uint64).reshape(-1, 3)
    b = np.ascontiguousarray(other_points, dtype=np.float64).view(np.uint64).reshape(-1, 3)
    rows = np.vstack([a, b])
    is_other = np.concatenate([np.zeros(len(a), np.int8), np.ones(len(b), np.int8)])
    order = np.lexsort((is_other, rows[:, 2], rows[:, 1], rows[:, 0]))  # particles first among equal rows
    s = rows[order]
    new = np.ones(len(s), bool)
    new[1:] = np.any(s[1:] != s[:-1], axis=1)
    start = np.maximum.accumulate(np.where(new, np.arange(len(s)), 0))
    first = order[start]
    if len(b) and np.any(first[is_other[order] == 1] >= len(a)):
        return None  # a bond end that is no particle's position
    label = np.empty(len(s), np.int64)
    label[order] = np.concatenate([particle_ids, np.full(len(b), -1)])[first]
    return label[len(a):]


def bond_table(bonds, particle_points, particle_ids, where):
    """Bonds sorted by the ids of their ends: (keys, cell arrays)."""
    m = bonds.GetNumberOfLines()
    if m == 0:
        return np.zeros(0, np.int64), {}
    lines = bonds.GetLines()
    ends = vtk_to_numpy(lines.GetConnectivityArray()).astype(np.int64)
    offsets = vtk_to_numpy(lines.GetOffsetsArray()).astype(np.int64)
    if not np.array_equal(np.diff(offsets), np.full(m, 2)):
        fail(where + ": a bond cell that is not a line of two points")
    ids = ids_of_points(particle_points, particle_ids, points(bonds))
    if ids is None:
        fail(where + ": a bond end is not at any particle's position")
    pair = ids[ends].reshape(-1, 2)
    keys = pair[:, 0] * (1 << 32) + pair[:, 1]
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    if len(keys) > 1 and np.any(keys[1:] == keys[:-1]):
        fail(where + ": a bond is written twice")
    return keys, {name: v[order] for name, v in arrays(bonds.GetCellData()).items()}


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    ref_dir, dir_ = sys.argv[1], sys.argv[2]
    for stem in ("particles", "bonds"):
        ref, got = collection(ref_dir, stem), collection(dir_, stem)
        if [t for t, _ in ref] != [t for t, _ in got]:
            fail(stem + ".pvd lists other times than the reference's")
    ref_frames, ref_bonds = collection(ref_dir, "particles"), collection(ref_dir, "bonds")
    got_frames, got_bonds = collection(dir_, "particles"), collection(dir_, "bonds")
    for k, ((time, ref_name), (_, name), (_, bonds_name)) in enumerate(zip(ref_frames, got_frames, got_bonds)):
        where = os.path.join(dir_, name)
        ref = read(os.path.join(ref_dir, ref_name))
        got = read(os.path.join(dir_, name))
        ref_arrays, got_arrays = arrays(ref.GetPointData()), arrays(got.GetPointData())
        if sorted(ref_arrays) != sorted(got_arrays):
            fail(where + ": point arrays " + str(sorted(got_arrays)) + ", the reference has " + str(sorted(ref_arrays)))
        ref_ids, got_ids = ref_arrays["id"], got_arrays["id"]
        if len(np.unique(got_ids)) != len(got_ids):
            fail(where + ": a particle is written twice")
        ref_order, got_order = np.argsort(ref_ids, kind="stable"), np.argsort(got_ids, kind="stable")
        if not same_bits(ref_ids[ref_order], got_ids[got_order]):
            fail(where + ": holds %d particles, the reference %d (or other ids)" % (len(got_ids), len(ref_ids)))
        if not same_bits(points(ref)[ref_order], points(got)[got_order]):
            fail(where + ": positions differ")
        for name_ in ref_arrays:
            if not same_bits(ref_arrays[name_][ref_order], got_arrays[name_][got_order]):
                fail(where + ": point array " + name_ + " differs")
        ref_keys, ref_cells = bond_table(read(os.path.join(ref_dir, ref_bonds[k][1])),
                                         points(ref), ref_ids, ref_dir)
        got_keys, got_cells = bond_table(read(os.path.join(dir_, bonds_name)), points(got), got_ids,
                                         os.path.join(dir_, bonds_name))
        if not same_bits(ref_keys, got_keys):
            fail(os.path.join(dir_, bonds_name) + ": holds %d bonds, the reference %d (or other ones)" %
                 (len(got_keys), len(ref_keys)))
        if sorted(ref_cells) != sorted(got_cells):
            fail(os.path.join(dir_, bonds_name) + ": other cell arrays than the reference's")
        for name_ in ref_cells:
            if not same_bits(ref_cells[name_], got_cells[name_]):
                fail(os.path.join(dir_, bonds_name) + ": cell array " + name_ + " differs")
        print("  frame %d (t = %s): %s, %d particles once each, %d bonds: the reference's bits" %
              (k, time, name, len(got_ids), len(got_keys)))
    print("%d frames read back equal" % len(ref_frames))


if __name__ == "__main__":
    main()
