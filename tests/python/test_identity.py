"""A run driven from Python writes the bytes `dem run` writes: energy.csv,
bond_failures.csv and the VTK frames, for the plate drop and the ring torus
at 1 and 2 threads; energies() at each energy row is that row."""

import filecmp
import os

import numpy as np
import pytest

import dem_rrp
from conftest import dem, scene

# (scene, steps, energy_every of the scene)
CASES = [("plate_drop.toml", 240, 80), ("ring_torus.toml", 300, 10), ("beam_stretch.toml", 60, 1000)]
COMPARED = ("energy.csv", "bond_failures.csv", "groups.csv", "particles.pvd", "bonds.pvd")


def output_files(folder):
    names = sorted(os.listdir(folder))
    frames = [n for n in names if n.endswith(".vtp")]
    return [n for n in COMPARED if n in names] + frames


def same_bytes(a, b, names):
    return [n for n in names if not filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False)]


def assert_same_files(a, b):
    """Folders a and b hold the same output files, byte for byte."""
    names = output_files(a)
    assert output_files(b) == names
    assert same_bytes(a, b, names) == []


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name,steps,every", CASES)
def test_python_run_writes_what_dem_run_writes(tmp_path, name, steps, every, threads):
    cli = tmp_path / "cli"
    py = tmp_path / "py"
    dem("run", scene(name), "--steps", steps, "--threads", threads, "--output-dir", cli, "--quiet")

    sim = dem_rrp.Simulation.from_file(scene(name), threads=threads)
    sim.open_output(py)
    rows = [sim.energies()]
    sim.run(steps=steps, callback=lambda s: rows.append(s.energies()), every=every)
    if steps % every != 0:
        rows.append(sim.energies())  # the last step's row, off the schedule
    groups = sim.groups()
    sim.close_output()

    names = output_files(cli)
    assert "energy.csv" in names and any(n.endswith(".vtp") for n in names)
    if name.startswith("plate"):
        assert "bond_failures.csv" in names
    if name.startswith("beam"):
        # groups() is the last rows of groups.csv.
        table = np.genfromtxt(cli / "groups.csv", delimiter=",", names=True, dtype=None, encoding=None)
        last = table[-len(groups["group"]):]
        assert list(last["group"]) == list(groups["group"])
        for key in ("t", "step", "F_x", "M_z", "c_y", "u_x"):
            assert np.array_equal(last[key], groups[key]), key
    assert output_files(py) == names
    assert same_bytes(cli, py, names) == []

    # energies() at each row of energy.csv: the same names and values.
    with open(cli / "energy.csv") as f:
        header = f.readline().strip().split(",")
        table = [line.strip().split(",") for line in f]
    assert len(table) == len(rows)
    for row, got in zip(table, rows):
        assert list(got) == header
        for key, text in zip(header, row):
            value = int(text) if key in ("n_broken", "n_fragments") else float(text)
            assert got[key] == value and type(got[key]) is type(value), key


def test_threads_write_the_same_bytes(tmp_path):
    outs = []
    for threads in (1, 2):
        out = tmp_path / ("t%d" % threads)
        sim = dem_rrp.Simulation.from_file(scene("plate_drop.toml"), threads=threads)
        sim.open_output(out)
        sim.run(steps=200)
        sim.close_output()
        outs.append(out)
    names = output_files(outs[0])
    assert same_bytes(outs[0], outs[1], names) == []


def test_bond_failures_match_the_table(tmp_path):
    sim = dem_rrp.Simulation.from_file(scene("plate_drop.toml"), threads=2)
    sim.open_output(tmp_path)
    sim.run(steps=240)
    sim.close_output()
    f = sim.bond_failures()
    assert len(f["t"]) == sim.n_broken > 0
    table = np.genfromtxt(tmp_path / "bond_failures.csv", delimiter=",", names=True, dtype=None, encoding=None)
    assert np.array_equal(f["bond"], table["bond"])
    assert np.array_equal(f["sigma"], table["sigma"])
    assert list(f["mode"]) == list(table["mode"])
    broken = sim.bonds["broken"]
    assert broken.sum() == sim.n_broken
    # (`bond` numbers the bonds as set up; the list is re-sorted at
    # re-orderings, so compare the ends.)
    ends = np.sort(sim.bonds["ends"][broken], axis=1)
    assert set(map(tuple, ends)) == set(zip(f["i"], f["j"]))


def test_open_output_in_pieces_and_restart(tmp_path):
    """run() called several times writes what one run writes; a checkpoint
    continues bit for bit."""
    a, b = tmp_path / "a", tmp_path / "b"
    one = dem_rrp.Simulation.from_file(scene("ring_torus.toml"))
    one.open_output(a)
    one.run(steps=250)
    one.close_output()
    two = dem_rrp.Simulation.from_file(scene("ring_torus.toml"))
    two.open_output(b)
    for _ in range(5):
        two.run(steps=50)
    two.close_output()
    assert same_bytes(a, b, output_files(a)) == []

    ckpt = tmp_path / "ring.ckpt"
    mid = dem_rrp.Simulation.from_file(scene("ring_torus.toml"))
    mid.run(steps=120)
    mid.write_checkpoint(ckpt)
    again = dem_rrp.Simulation.restart(ckpt)
    assert again.step_count == 120
    mid.run(steps=130)
    again.run(steps=130)
    assert again.energies() == mid.energies()
    assert np.array_equal(again.gather("position"), mid.gather("position"))


def test_restart_continues_the_run_files_as_dem_restart(tmp_path):
    """dem run to step 200, then Simulation.restart + open_output into the
    same folder + run to step 300: the files of dem run --steps 300."""
    whole, part = tmp_path / "whole", tmp_path / "part"
    dem("run", scene("ring_torus.toml"), "--steps", 300, "--output-dir", whole, "--quiet")
    dem("run", scene("ring_torus.toml"), "--steps", 200, "--output-dir", part, "--quiet")
    sim = dem_rrp.Simulation.restart(part / "checkpoint.bin")
    assert sim.step_count == 200
    sim.open_output(part)
    sim.run(steps=100)
    sim.close_output()
    assert_same_files(whole, part)


def test_write_checkpoint_of_an_open_run_continues_it(tmp_path):
    """A checkpoint written by write_checkpoint while the output is open
    keeps the run's bookkeeping: restarted into the folder after the run
    stopped there, it ends with the files of the run that did not stop."""
    whole, part = tmp_path / "whole", tmp_path / "part"
    dem("run", scene("ring_torus.toml"), "--steps", 300, "--output-dir", whole, "--quiet")
    first = dem_rrp.Simulation.from_file(scene("ring_torus.toml"))
    first.open_output(part)
    first.run(steps=155)
    first.write_checkpoint(part / "at155.bin")
    first.close_output()  # a last row and frame at 155, which the restart drops
    sim = dem_rrp.Simulation.restart(part / "at155.bin")
    sim.open_output(part)
    sim.run(steps=145)
    sim.close_output()
    assert_same_files(whole, part)
