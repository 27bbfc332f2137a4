#!/usr/bin/env python3
"""A small calibration sweep: how the specimen's Young's modulus E,
Poisson's ratio nu, uniaxial compressive strength UCS and Brazilian
tensile strength BTS follow the bond parameters (docs/calibration.md).

For every row of the sweep below, the shipped scenes
scenes/ucs_cylinder.toml and scenes/brazilian_disc.toml are copied with
the "rock" material's keys changed, run with `dem run`, and evaluated by
tools/strength_test.py; the table is printed as Markdown (and written to
--output if given). Each row takes two runs of about 10-30 s on 2 threads.

    python3 tools/calibrate_bonds.py --dem build/apps/dem --output calibration_table.md
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (label, the rock material's keys that change). The first row is the
# scenes' own material.
SWEEP = [
    ("reference", {}),
    ("E x 2", {"E": "2e8"}),
    ("beta 0.6", {"beta": "0.6"}),
    ("beta 1.0", {"beta": "1.0"}),
    ("sigma_c x 2", {"sigma_c": "2e6"}),
    ("tau_c = sigma_c", {"tau_c": "1e6"}),
]


def rock_with(text, keys):
    """The scene text with keys of the first [[material]] (the rock) replaced."""
    start = text.index("[[material]]")
    end = text.index("[[material]]", start + 1) if "[[material]]" in text[start + 1:] else len(text)
    block = text[start:end]
    for key, value in keys.items():
        block, n = re.subn(rf"(?m)^{key}\s*=\s*[^#\n]*", f"{key} = {value}", block, count=1)
        if n != 1:
            sys.exit(f"calibrate_bonds: the rock material has no key {key!r}")
    return text[:start] + block + text[end:]


def run(dem, scene_text, folder, name, threads):
    path = os.path.join(folder, name + ".toml")
    with open(path, "w") as f:
        f.write(scene_text)
    out = os.path.join(folder, name)
    cmd = [dem, "run", path, "--quiet", "--output-dir", out, "--overwrite"]
    if threads:
        cmd += ["--threads", str(threads)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"calibrate_bonds: {' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")
    return out


def evaluate(args):
    """tools/strength_test.py's JSON line."""
    r = subprocess.run([sys.executable, os.path.join(HERE, "strength_test.py")] + args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"calibrate_bonds: strength_test.py {' '.join(args)} failed:\n{r.stdout}{r.stderr}")
    import json
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dem", default=os.path.join(ROOT, "build", "apps", "dem"), help="the dem program")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--output", default=None, help="write the Markdown table here too")
    a = p.parse_args()
    if not os.access(a.dem, os.X_OK):
        sys.exit(f"calibrate_bonds: no program {a.dem} (build first, or give --dem)")
    ucs_text = open(os.path.join(ROOT, "scenes", "ucs_cylinder.toml")).read()
    disc_text = open(os.path.join(ROOT, "scenes", "brazilian_disc.toml")).read()
    rows = []
    with tempfile.TemporaryDirectory(prefix="calibrate_bonds_") as tmp:
        for k, (label, keys) in enumerate(SWEEP):
            u = run(a.dem, rock_with(ucs_text, keys), tmp, f"ucs{k}", a.threads)
            b = run(a.dem, rock_with(disc_text, keys), tmp, f"disc{k}", a.threads)
            ur = evaluate(["ucs", u, "--radius", "0.005", "--height", "0.02", "-o", os.path.join(tmp, f"ucs{k}.png")])
            br = evaluate(["brazilian", b, "--group", "top_jaw", "--radius", "0.01", "--thickness", "0.005",
                           "-o", os.path.join(tmp, f"disc{k}.png")])
            row = (label, ur["youngs_modulus_Pa"] / 1e6, ur.get("poisson_ratio", float("nan")), ur["ucs_Pa"] / 1e6,
                   br["bts_Pa"] / 1e6, ur["ucs_Pa"] / br["bts_Pa"])
            rows.append(row)
            print("%-16s E %.1f MPa, nu %.3f, UCS %.3f MPa, BTS %.3f MPa, UCS/BTS %.1f" % row, flush=True)
    lines = ["| bonds | E (MPa) | nu | UCS (MPa) | BTS (MPa) | UCS/BTS |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %.1f | %.3f | %.3f | %.3f | %.1f |" % r)
    table = "\n".join(lines) + "\n"
    print(table)
    if a.output:
        with open(a.output, "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()
