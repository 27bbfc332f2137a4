"""Stepping from Python: the GIL is released, callbacks run on the calling
thread, an exception in a callback or Ctrl-C stops the run between steps
and leaves the simulation usable."""

import _thread
import threading
import time

import pytest

import dem_rrp
from conftest import scene


def test_the_gil_is_released_while_stepping():
    sim = dem_rrp.Simulation.from_file(scene("plate_drop.toml"), threads=1)
    count = 0
    stop = threading.Event()

    def counter():
        nonlocal count
        while not stop.is_set():
            count += 1

    t = threading.Thread(target=counter)
    t.start()
    try:
        sim.run(steps=30)
    finally:
        stop.set()
        t.join()
    assert sim.step_count == 30
    assert count > 0


def test_callback_on_the_calling_thread(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    seen = []
    sim.run(steps=20, callback=lambda s: seen.append((threading.get_ident(), s.step_count, s)), every=5)
    assert [k for _, k, _ in seen] == [5, 10, 15, 20]
    assert all(t == threading.get_ident() for t, _, _ in seen)
    assert all(s is sim for _, _, s in seen)


def test_an_exception_in_a_callback_propagates(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)

    def stop_at_7(s):
        if s.step_count == 7:
            raise ZeroDivisionError("stop here")

    with pytest.raises(ZeroDivisionError, match="stop here"):
        sim.run(steps=100, callback=stop_at_7)
    assert sim.step_count == 7
    sim.step()
    assert sim.step_count == 8
    sim.run(t_end=0.02)
    assert sim.step_count == 20 and sim.time == pytest.approx(0.02)


def test_keyboard_interrupt_stops_a_long_run(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sim.run(steps=10**9)
    timer.join()
    assert time.monotonic() - started < 30
    k = sim.step_count
    assert 0 < k < 10**9
    sim.step()
    assert sim.step_count == k + 1


def test_run_to_the_scene_end_and_by_time(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    assert sim.end_step == 400
    sim.run(steps=0)
    assert sim.step_count == 0
    sim.run(t_end=0.1)
    assert sim.step_count == 100
    sim.run()
    assert sim.step_count == 400 and sim.time == pytest.approx(0.4)


def test_another_thread_may_not_run_the_same_simulation(ring_text):
    sim = dem_rrp.Simulation.from_toml(ring_text)
    seen = {}

    def other():
        try:
            sim.run(steps=1)
        except RuntimeError as e:
            seen["run"] = str(e)
        seen["energies"] = sim.energies()["t"]  # between steps: allowed

    def start_other(s):
        t = threading.Thread(target=other)
        t.start()
        t.join()

    sim.run(steps=4, callback=start_other, every=2)
    assert "running already" in seen["run"]
    assert seen["energies"] == pytest.approx(0.004)
    assert sim.step_count == 4
