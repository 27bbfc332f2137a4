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


def small_ring():
    """scenes/ring_torus.toml with 24 spheres, 400 steps and no checkpoints."""
    text = (SCENES / "ring_torus.toml").read_text()
    for old, new in (("count = 80", "count = 24"), ("end_time = 35.0", "steps = 400"),
                     ("checkpoint_every = 10000", "checkpoint_every = 0")):
        assert old in text
        text = text.replace(old, new)
    return text


@pytest.fixture
def ring_text():
    """A small ring torus (24 spheres) as TOML text."""
    return small_ring()
