"""The examples of examples/ run, at small sizes, and write their figures."""

import os
import subprocess
import sys

from conftest import SOURCE_DIR

EXAMPLES = SOURCE_DIR / "examples"


def run_example(name, *args):
    r = subprocess.run([sys.executable, str(EXAMPLES / name), *map(str, args)], capture_output=True, text=True,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_plate_parameter_study(tmp_path):
    out = run_example("plate_parameter_study.py", "--steps", 120, "--every", 40, "--threads", 2, "--out", tmp_path)
    assert "v = 10 m/s" in out
    assert (tmp_path / "broken_bonds.png").stat().st_size > 0
    assert (tmp_path / "broken_v2.csv").exists()


def test_restitution_calibration():
    out = run_example("restitution_calibration.py", "--target", 0.7, "--tolerance", 2e-3)
    e = float(out.split("material e = ")[-1].split()[0])
    assert abs(e - 0.7 ** 2 / 0.9) < 0.01


def test_fragment_sizes(tmp_path):
    out = run_example("fragment_sizes.py", "--make-steps", 240, "--out", tmp_path)
    assert "fragments" in out
    assert (tmp_path / "fragment_sizes.png").stat().st_size > 0
