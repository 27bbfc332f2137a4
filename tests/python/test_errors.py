"""Every error raises a Python exception with the CLI's message, never a
crash: bad scenes, bad ids, non-finite values, wrong shapes, folders and
checkpoints; a failed run raises RunError."""

import numpy as np
import pytest

import dem_rrp
from conftest import dem, scene


def cli_error(*args):
    r = dem(*args, check=False)
    assert r.returncode == 1
    assert r.stderr.startswith("error: ")
    return r.stderr[len("error: "):].strip()


def test_a_bad_scene_raises_scene_error_with_the_cli_message(tmp_path, ring_text):
    bad = tmp_path / "bad.toml"
    bad.write_text(ring_text.replace("time_step = 1e-3", "time_step = -1e-3"))
    with pytest.raises(dem_rrp.SceneError) as e:
        dem_rrp.Simulation.from_file(bad)
    assert str(e.value) == cli_error("run", bad)
    assert "time_step" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_scene_errors_of_text_and_dict(ring_text):
    with pytest.raises(dem_rrp.SceneError, match="unknown"):
        dem_rrp.Simulation.from_toml(ring_text + "\n[nonsense]\nx = 1\n")
    with pytest.raises(dem_rrp.SceneError):
        dem_rrp.Simulation.from_toml("this is not toml")
    with pytest.raises(dem_rrp.SceneError):
        dem_rrp.Simulation.from_file("/no/such/scene.toml")
    with pytest.raises(TypeError):
        dem_rrp.Simulation.from_dict({"run": {"time_step": object()}})


def test_from_dict_builds_the_same_scene(ring_text):
    scene_dict = {
        "run": {"integrator": "rrp25", "time_step": 1e-3, "steps": 400},
        "output": {"vtk_every": 100, "energy_every": 10, "checkpoint_every": 0},
        "particles": [{"source": "ring_torus", "count": 24, "torus_diameter": 3.0, "mass": 1.0,
                       "inertia": 1.0, "speed": 1.0, "gap": 0.1}],
        "bonds": {"pairs": "generator", "bending": 10.0, "axial": 200.0, "shear": 200.0},
        "contact": {"stiffness": 2100.0, "skin_fraction": 0.5},
        "wall": [{"point": [0.0, 0.0, 0.0], "normal": [1.0, 0.0, 0.0], "stiffness": 2100.0}],
    }
    a = dem_rrp.Simulation.from_dict(scene_dict)
    b = dem_rrp.Simulation.from_toml(ring_text)
    a.run(steps=150)
    b.run(steps=150)
    assert a.energies() == b.energies()


def test_bad_ids_values_and_shapes(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    with pytest.raises(ValueError, match="particle id 1000 is not a particle"):
        sim.set_velocity([1000], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="particle id -1"):
        sim.set_velocity([-1], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="given twice"):
        sim.set_velocity([2, 2], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="not finite"):
        sim.set_velocity([1], [np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match="not finite"):
        sim.set_position([1, 2], [[0.0, 0.0, 0.0], [np.inf, 0.0, 0.0]])
    with pytest.raises(ValueError, match="shape"):
        sim.set_angular_velocity([1, 2], [[0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="shape"):
        sim.set_velocity([1], [0.0, 0.0])
    with pytest.raises(ValueError, match="one-dimensional"):
        sim.set_velocity([[1]], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="no particle field"):
        sim.gather("colour")
    with pytest.raises(ValueError, match="order"):
        sim.gather("position", order="morton")
    with pytest.raises(ValueError):
        sim.run(steps=-1)
    with pytest.raises(ValueError):
        sim.run(steps=1, t_end=1.0)
    with pytest.raises(ValueError):
        sim.run(steps=2, every=0)
    with pytest.raises(ValueError):
        dem_rrp.Simulation.from_toml(ring_text, threads=-2)
    with pytest.raises(ValueError):
        dem_rrp.Simulation.from_toml(ring_text, simd="mmx")
    # Nothing was changed by the refused calls; the simulation still runs.
    assert not np.isnan(sim.gather("velocity")).any()
    sim.run(steps=3)
    assert sim.step_count == 3


def test_folders_and_checkpoints(tmp_path, ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    sim.open_output(tmp_path / "out")
    sim.run(steps=20)
    sim.close_output()
    other = dem_rrp.Simulation.from_toml(ring_text)
    with pytest.raises(dem_rrp.OutputFolderError, match="overwrite"):
        other.open_output(tmp_path / "out")
    other.open_output(tmp_path / "out", overwrite=True)
    other.close_output()
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(dem_rrp.CheckpointError) as e:
        dem_rrp.Simulation.restart(bad)
    assert str(e.value) == cli_error("restart", bad)
    with pytest.raises(dem_rrp.CheckpointError):
        dem_rrp.Simulation.restart(tmp_path / "missing.ckpt")


def test_a_failed_run_raises_run_error_with_the_cli_message(tmp_path, ring_text):
    text = ring_text.replace("steps = 400", "steps = 400\nmax_energy_drift = 1e-15")
    path = tmp_path / "drift.toml"
    path.write_text(text)
    r = dem("run", path, "--output-dir", tmp_path / "cli", "--quiet", check=False)
    assert r.returncode == 2
    first_line = [line for line in r.stdout.split("\n") if line.startswith("error: ")][0]
    sim = dem_rrp.Simulation.from_file(path)
    sim.open_output(tmp_path / "py")
    with pytest.raises(dem_rrp.RunError) as e:
        sim.run()
    assert first_line.startswith("error: the run failed at step")
    assert "error: " + str(e.value).split("\n")[0] == first_line
    assert not sim._sim.output_open


def test_refused_on_mpi_ranks_other_than_0():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", "import dem_rrp"], capture_output=True, text=True,
                       env={**__import__("os").environ, "OMPI_COMM_WORLD_RANK": "1"})
    assert r.returncode != 0 and "does not support MPI ranks" in r.stderr
