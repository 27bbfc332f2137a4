"""Reference counting: creating and dropping 200 simulations (with views,
callbacks and an output folder) keeps the process's memory flat."""

import gc
import os

import dem_rrp


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def make_and_drop(text, folder):
    sim = dem_rrp.Simulation.from_toml(text)
    views = [sim.particles.position, sim.particles.velocity]
    sim.run(steps=20, callback=lambda s: s.energies(), every=5)
    sim.gather("position")
    sim.bonds
    if folder is not None:
        sim.open_output(folder, overwrite=True)
        sim.run(steps=5)
    del sim
    return views


def test_200_simulations_keep_memory_flat(tmp_path, ring_text):
    for _ in range(20):  # warm up: allocators, caches
        make_and_drop(ring_text, tmp_path / "out")
    gc.collect()
    before = resident_bytes()
    for k in range(200):
        make_and_drop(ring_text, tmp_path / "out" if k % 10 == 0 else None)
    gc.collect()
    after = resident_bytes()
    print("resident memory: %.1f MiB before, %.1f MiB after 200 simulations" % (before / 2**20, after / 2**20))
    assert after <= 1.10 * before
