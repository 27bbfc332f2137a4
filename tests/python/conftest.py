"""Shared set-up of the Python module's tests (ctest python_module runs them
with PYTHONPATH=build/python, DEM_BINARY and DEM_SOURCE_DIR set)."""

import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("DEM_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DEM_BINARY = pathlib.Path(os.environ.get("DEM_BINARY", SOURCE_DIR / "build" / "apps" / "dem"))
SCENES = SOURCE_DIR / "scenes"


def scene(name):
    return SCENES / name


def dem(*args, check=True):
    """Runs the dem program; returns the CompletedProcess (text output)."""
    return subprocess.run([str(DEM_BINARY), *map(str, args)], capture_output=True, text=True, check=check)


RING_SMALL = """
[run]
integrator = "rrp25"
time_step = 1e-3
steps = 400

[output]
vtk_every = 100
energy_every = 10
checkpoint_every = 0

[[particles]]
source = "ring_torus"
count = 24
torus_diameter = 3.0
mass = 1.0
inertia = 1.0
speed = 1.0
gap = 0.1

[bonds]
pairs = "generator"
bending = 10.0
axial = 200.0
shear = 200.0

[contact]
stiffness = 2100.0
skin_fraction = 0.5

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [1.0, 0.0, 0.0]
stiffness = 2100.0
"""


@pytest.fixture
def ring_text():
    """A small ring torus (24 spheres) as TOML text."""
    return RING_SMALL
