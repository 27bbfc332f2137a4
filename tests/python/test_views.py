"""Views of the particle store: no copy, read-only, alive after del sim,
stale after a re-ordering (StaleViewError); gather() by id."""

import gc

import numpy as np
import pytest

import dem_rrp
from conftest import dem, scene


def test_views_share_the_store(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    p = sim.particles
    x = p.position
    assert x.shape == (sim.n_particles, 3) and x.dtype == np.float64
    assert p.id.shape == (sim.n_particles,) and p.id.dtype == np.uint32
    assert p.attitude.shape == (sim.n_particles, 4)
    for name in ("velocity", "angular_velocity", "force", "moment"):
        assert p[name].shape == (sim.n_particles, 3)
    for name in ("radius", "mass"):
        assert p[name].shape == (sim.n_particles,)
    # Two views are the same memory, and a change through the simulation
    # shows in a view taken before it: no copy.
    assert np.shares_memory(x, sim.particles.position)
    v = p.velocity
    ids = sim.particles.id
    sim.set_velocity([int(ids[0])], [0.25, 0.5, 0.75])
    assert list(v[0]) == [0.25, 0.5, 0.75]


def test_views_are_read_only(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    x = sim.particles.position
    with pytest.raises(ValueError):
        x[0, 0] = 1.0
    with pytest.raises(ValueError):
        x += 1.0


def test_a_view_outlives_the_simulation(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    sim.run(steps=10)
    x = sim.particles.position
    expected = np.array(x)
    del sim
    gc.collect()
    assert np.array_equal(x, expected)
    assert np.array_equal(x * 1.0, expected)


def test_layout_version_and_stale_views(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    ids = sim.particles.id
    x = sim.particles.position
    version = sim.layout_version
    # Swap the places of the particles in slots 0 and 1: the next step
    # rebuilds the lists and re-orders the particles along the Morton curve.
    a, b = int(ids[0]), int(ids[1])
    xa, xb = np.array(x[0]), np.array(x[1])
    sim.set_position([a, b], [xb, xa])
    sim.step()
    assert sim.layout_version > version
    with pytest.raises(dem_rrp.StaleViewError):
        x[0]
    with pytest.raises(dem_rrp.StaleViewError):
        x + 1.0
    with pytest.raises(dem_rrp.StaleViewError):
        np.sum(x)
    with pytest.raises(dem_rrp.StaleViewError):
        repr(x)
    # A fresh view is valid.
    assert sim.particles.position.shape == (sim.n_particles, 3)


def test_gather_by_id_equals_the_frames(tmp_path):
    vtk = pytest.importorskip("vtk")
    from vtk.util.numpy_support import vtk_to_numpy
    sim = dem_rrp.Simulation.from_file(scene("plate_drop.toml"), threads=2)
    sim.run(steps=120)
    sim.write_frame(tmp_path)
    reader = vtk.vtkXMLPolyDataReader()
    reader.SetFileName(str(tmp_path / "particles_000000.vtp"))
    reader.Update()
    data = reader.GetOutput()
    ids = vtk_to_numpy(data.GetPointData().GetArray("id"))
    points = vtk_to_numpy(data.GetPoints().GetData())
    velocity = vtk_to_numpy(data.GetPointData().GetArray("velocity"))
    x = sim.gather("position", order="id")
    v = sim.gather("velocity")
    assert np.array_equal(x[ids], points)
    assert np.array_equal(v[ids], velocity)
    assert np.array_equal(sim.gather("id"), np.arange(sim.n_particles))


def test_setters_change_the_particles_by_id(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    sim.set_velocity([3, 5], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    sim.set_angular_velocity(np.arange(4), [0.0, 0.0, 1.0])
    v = sim.gather("velocity")
    assert list(v[3]) == [1.0, 2.0, 3.0] and list(v[5]) == [4.0, 5.0, 6.0]
    assert np.array_equal(sim.gather("angular_velocity")[:4], np.tile([0.0, 0.0, 1.0], (4, 1)))
    sim.run(steps=5)
    assert sim.step_count == 5


def test_bonds_and_groups(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    b = sim.bonds
    assert b["ends"].shape == (sim.n_bonds, 2)
    assert not b["broken"].any()
    assert np.allclose(b["axial_strain"], 0.0, atol=1e-12)
    assert np.allclose(b["bend_angle"], 0.0, atol=1e-12)
    assert sim.groups()["t"].shape == (0,)
    f = sim.bond_failures()
    assert list(f)[:5] == ["t", "step", "bond", "i", "j"] and len(f["t"]) == 0


def test_stress_is_the_stress_table_row(tmp_path, ring_text):
    # sim.stress() of the scene's [stress] box is the last row of the
    # stress.csv that dem run writes; an explicit box gives the same row.
    text = ring_text + "\n[stress]\nlower = [-100.0, -100.0, -100.0]\nupper = [100.0, 100.0, 100.0]\n"
    path = tmp_path / "s.toml"
    path.write_text(text)
    dem("run", path, "--steps", 40, "--output-dir", tmp_path / "cli", "--quiet")
    sim = dem_rrp.Simulation.from_toml(text)
    sim.run(steps=40)
    row = sim.stress()
    assert row == sim.stress([-100.0, -100.0, -100.0], [100.0, 100.0, 100.0])
    with open(tmp_path / "cli" / "stress.csv") as f:
        header = f.readline().strip().split(",")
        last = f.readlines()[-1].strip().split(",")
    assert list(row) == header
    assert row["step"] == 40 and row["particles"] == sim.n_particles
    for name, text_value in zip(header, last):
        assert row[name] == float(text_value), name
    assert any(row[k] != 0.0 for k in ("s_xx", "s_yy", "s_zz"))
    with pytest.raises(ValueError):
        sim.stress([0.0, 0.0, 0.0], [1.0, 0.0, 1.0])
    with pytest.raises(ValueError):
        dem_rrp.Simulation.from_toml(ring_text).stress()
