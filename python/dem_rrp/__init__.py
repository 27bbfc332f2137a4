"""dem_rrp: the discrete element engine from Python (docs/python.md).

    import dem_rrp
    sim = dem_rrp.Simulation.from_file("scenes/plate_drop.toml", threads=2)
    sim.open_output("plate_py")          # the files `dem run` writes
    sim.run(steps=200, callback=lambda s: print(s.time, s.n_broken), every=50)
    sim.close_output()
    print(sim.energies()["E_balance"], sim.particles.position.shape)

A Simulation runs the engine's own run loop (run/run_session.hpp): the same
scene checks, steps, energy rows, frames, tables and checkpoints as `dem
run`, bit for bit. Not for MPI builds' ranks: the module runs one process.
"""

import os
import sys

import numpy as np

# One process: under mpirun, ranks other than 0 are refused at once (the
# engine's MPI runs are `mpirun ... dem run`, docs/mpi.md).
for _rank_variable in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
    if os.environ.get(_rank_variable, "0") not in ("", "0"):
        raise ImportError("dem_rrp runs in one process and does not support MPI ranks (this is rank %s); "
                          "run `mpirun -np N dem run SCENE` for a run over MPI ranks (docs/mpi.md)"
                          % os.environ[_rank_variable])

from . import _core
from ._core import CheckpointError, OutputFolderError, RunError, SceneError
from ._scene_dict import to_toml
from ._views import ParticleView, Particles, StaleViewError, row_to_dict, rows_to_columns

__all__ = ["Simulation", "SceneError", "CheckpointError", "OutputFolderError", "RunError",
           "StaleViewError", "ParticleView", "to_toml"]


def _threads(threads):
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 0:
        raise ValueError("threads must be a whole number >= 0 (0 or None: all cores), got %r" % (threads,))
    return int(threads)


class Simulation:
    """One simulation of a scene. Make it with from_file, from_toml,
    from_dict or restart; step it with step and run."""

    __slots__ = ("_sim", "__weakref__")

    def __init__(self, core):
        self._sim = core

    # ------------------------------------------------------------ making one

    @classmethod
    def from_file(cls, path, threads=None, simd=None):
        """The scene file at `path` built as `dem run` builds it; threads:
        worker threads of this simulation's steps (None: all cores); simd:
        the force kernels' SIMD target (None: the best; as `dem run --simd`).
        A bad scene raises SceneError with the message `dem run` prints."""
        return cls(_core.Simulation.from_file(os.fspath(path), _threads(threads), simd or ""))

    @classmethod
    def from_toml(cls, text, base_dir=".", threads=None, simd=None, name="<string>"):
        """A scene from TOML text; relative paths in it (CSV tables) are
        taken from `base_dir`; `name` names it in error messages."""
        return cls(_core.Simulation.from_toml(text, os.fspath(base_dir), name, _threads(threads), simd or ""))

    @classmethod
    def from_dict(cls, scene, base_dir=".", threads=None, simd=None):
        """A scene from a dict with the TOML structure (tables as dicts,
        arrays of tables as lists of dicts), checked as a file would be."""
        return cls.from_toml(to_toml(scene), base_dir, threads, simd, name="<dict>")

    @classmethod
    def restart(cls, path, threads=None):
        """The run of checkpoint `path`, continued as `dem restart`
        continues it; open_output() into its folder continues its files."""
        return cls(_core.Simulation.restart(os.fspath(path), _threads(threads)))

    # -------------------------------------------------------------- stepping

    def step(self, n=1):
        """Takes n steps (the GIL released while stepping)."""
        self.run(steps=n)

    def run(self, t_end=None, steps=None, callback=None, every=1):
        """Steps `steps` steps from now, or to simulated time `t_end`, or (neither)
        to the scene's end. The GIL is released while stepping; callback(sim)
        is called on this thread after every `every` steps. An exception in
        the callback, or Ctrl-C (KeyboardInterrupt), stops the run between
        steps and propagates; the simulation then holds the last completed
        step and can go on. A failed run (the energy check, a non-finite
        state, a failed write) raises RunError with `dem run`'s message."""
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, (int, np.integer))):
            raise ValueError("run: steps must be a whole number, got %r" % (steps,))
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError("run: every must be a whole number >= 1, got %r" % (every,))
        if callback is not None and not callable(callback):
            raise TypeError("run: callback must be callable")
        try:
            self._sim.run(None if t_end is None else float(t_end), None if steps is None else int(steps),
                          callback, int(every), self)
        finally:
            self._flush_log()

    def _flush_log(self):
        log = self._sim.take_log()
        if log and sys.stderr is not None:
            sys.stderr.write(log)

    # ---------------------------------------------------------------- state

    time = property(lambda self: self._sim.time, doc="simulated time t")
    step_count = property(lambda self: self._sim.step_count, doc="steps taken (t = step_count h)")
    time_step = property(lambda self: self._sim.time_step, doc="h")
    n_particles = property(lambda self: self._sim.n_particles, doc="number of particles N")
    n_bonds = property(lambda self: self._sim.n_bonds, doc="number of bonds M, failed ones included")
    n_broken = property(lambda self: self._sim.n_broken, doc="failed bonds so far")
    end_step = property(lambda self: self._sim.end_step, doc="the scene's end step (run() with no end)")
    layout_version = property(lambda self: self._sim.layout_version,
                              doc="increases at every re-ordering or reallocation of the particle arrays")

    def energies(self):
        """The energy.csv row of the state now, {column: value}, exactly the
        columns and values `dem run` writes (floats; n_broken, n_fragments int)."""
        return row_to_dict(*self._sim.energy_row())

    @property
    def particles(self):
        """The particle arrays as read-only views without a copy, in slot
        order (sim.particles.position, ...; docs/python.md)."""
        return Particles(self._sim)

    def gather(self, name, order="id"):
        """A copy of particle array `name`, row k being particle id k
        (order="id"), or in slot order (order="slot")."""
        values = self._sim.view(name)
        if order == "slot":
            return np.array(values)
        if order != "id":
            raise ValueError("gather: order must be 'id' or 'slot', got %r" % (order,))
        out = np.empty_like(values)
        out[self._sim.view("id")] = values
        return out

    def set_velocity(self, ids, v):
        """v (shape (k, 3), or (3,) for all) for particles `ids` (k ids)."""
        self._sim.set_vectors("velocity", ids, v)

    def set_angular_velocity(self, ids, w):
        """Spatial angular velocity w (shape (k, 3) or (3,)) for particles `ids`."""
        self._sim.set_vectors("angular_velocity", ids, w)

    def set_position(self, ids, x):
        """Centres x (shape (k, 3) or (3,)) for particles `ids`; every
        neighbour list is rebuilt at the next step."""
        self._sim.set_vectors("position", ids, x)

    @property
    def bonds(self):
        """The bonds (copies): {"ends": (M, 2) ids, "broken": (M,) bool,
        "rest_length", "axial_strain", "bend_angle": (M,)}."""
        return self._sim.bond_arrays()

    def bond_failures(self):
        """The rows of bond_failures.csv so far as {column: array}."""
        return rows_to_columns(*self._sim.failure_rows())

    def groups(self):
        """The groups.csv rows of the state now as {column: array}."""
        return rows_to_columns(*self._sim.group_rows())

    def stress(self, lower=None, upper=None):
        """The Love-Weber stress of the box [lower, upper) (m) at the state
        now, as the stress.csv row {column: value} (Pa, tension positive;
        docs/model.md section 19). Without a box: the scene's [stress] box."""
        if lower is None and upper is None:
            box = self._sim.stress_box
            if box is None:
                raise ValueError("stress(): give lower and upper, or a [stress] table in the scene")
            lower, upper = box
        elif lower is None or upper is None:
            raise ValueError("stress(): give both lower and upper")
        return row_to_dict(*self._sim.stress_row(list(lower), list(upper)))

    def walls(self):
        """The walls.csv row of the state now as {column: value} (t, step,
        force, moment and displacement of every wall by name); empty for a
        scene without walls."""
        header, row = self._sim.wall_row()
        return row_to_dict(header, row) if header else {}

    # ---------------------------------------------------------------- output

    def open_output(self, dir, overwrite=False):
        """Writes the run into folder `dir` as `dem run --output-dir dir` does
        (energy.csv, event tables, frames and checkpoints on the scene's
        [output] schedule) while run() steps; overwrite=True replaces
        another run's files there."""
        try:
            self._sim.open_output(os.fspath(dir), bool(overwrite))
        finally:
            self._flush_log()

    def close_output(self):
        """The closing rows, frame and checkpoint, as at the end of `dem
        run`; also done when the simulation is deleted."""
        try:
            self._sim.close_output()
        finally:
            self._flush_log()

    def write_frame(self, dir):
        """One VTK frame of the state now into `dir` (a series per folder)."""
        self._sim.write_frame(os.fspath(dir))

    def write_checkpoint(self, path):
        """A checkpoint of the state now, for Simulation.restart or `dem restart`."""
        self._sim.write_checkpoint(os.fspath(path))

    def __del__(self):
        sim = getattr(self, "_sim", None)
        if sim is not None and sim.output_open:
            self.close_output()

    def __repr__(self):
        return "<dem_rrp.Simulation: %d particles, %d bonds, step %d, t = %g>" % (
            self.n_particles, self.n_bonds, self.step_count, self.time)
