"""Views of the particle store that know when they go stale, and the CSV
rows of the engine's tables as columns (docs/python.md)."""

import numpy as np


class StaleViewError(RuntimeError):
    """A particle view was read after the particles were re-ordered or their
    arrays reallocated (its simulation's layout_version changed)."""


class ParticleView(np.ndarray):
    """A read-only numpy view of one particle array of a simulation, in slot
    order, without a copy. Reading it (indexing, slicing, arithmetic, ufuncs,
    numpy functions, methods, printing) after its simulation's layout_version
    has changed raises StaleViewError. np.asarray(view) and np.array(view)
    return plain arrays without the check (a copy taken before the next step
    stays valid for ever)."""

    def __array_finalize__(self, obj):
        self._owner = getattr(obj, "_owner", None)
        self._version = getattr(obj, "_version", None)

    def _check(self):
        owner = self._owner
        if owner is not None and owner.layout_version != self._version:
            raise StaleViewError(
                "this particle view was taken at layout_version %d, and the particles have been "
                "re-ordered or reallocated since (layout_version %d): take the view again, or use "
                "gather() for arrays by particle id" % (self._version, owner.layout_version))

    def _plain(self):
        self._check()
        return self.view(np.ndarray)

    def __getitem__(self, key):
        self._check()
        return super().__getitem__(key)

    def __iter__(self):
        return iter(self._plain())

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(x._plain() if isinstance(x, ParticleView) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x._plain() if isinstance(x, ParticleView) else x for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        for x in list(args) + list(kwargs.values()):
            if isinstance(x, ParticleView):
                x._check()
        return super().__array_function__(func, types, args, kwargs)

    def copy(self, order="C"):
        return np.array(self._plain(), order=order, copy=True)

    def tolist(self):
        return self._plain().tolist()

    def __repr__(self):
        return "ParticleView(%s)" % repr(self._plain())[6:-1]

    def __str__(self):
        return str(self._plain())


def particle_view(core, name):
    """The view of particle array `name` of the extension's simulation `core`."""
    v = core.view(name).view(ParticleView)
    v._owner = core
    v._version = core.layout_version
    return v


class Particles:
    """sim.particles: the particle arrays as ParticleViews, by attribute
    (sim.particles.position) or by name (sim.particles["position"])."""

    __slots__ = ("_core",)

    def __init__(self, core):
        self._core = core

    def keys(self):
        return list(self._core.particle_fields())

    def __getitem__(self, name):
        return particle_view(self._core, name)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return particle_view(self._core, name)
        except ValueError as e:
            raise AttributeError(str(e)) from None

    def __dir__(self):
        return self.keys()

    def __len__(self):
        return self._core.n_particles


def _column(values):
    """One CSV column as a numpy array: integers, else floats, else text."""
    try:
        return np.array([int(v) for v in values], dtype=np.int64)
    except ValueError:
        pass
    try:
        return np.array([float(v) for v in values], dtype=np.float64)
    except ValueError:
        return np.array(values, dtype=str)


def rows_to_columns(header, rows):
    """The rows of one of the engine's CSV tables (a header and rows, as the
    files hold them) as {column: numpy array}; an empty table gives empty
    float arrays."""
    names = header.split(",")
    if not rows:
        return {n: np.zeros(0) for n in names}
    cells = list(zip(*(r.split(",") for r in rows)))
    return {n: _column(c) for n, c in zip(names, cells)}


def row_to_dict(header, row):
    """One row as {column: float or int}: the values exactly as written
    (17 significant digits read back give the same doubles)."""
    out = {}
    for name, text in zip(header.split(","), row.split(",")):
        try:
            out[name] = int(text)
        except ValueError:
            out[name] = float(text)
    return out
