"""Scenes as Python dicts: the TOML structure of docs/scene-format.md as
nested dicts and lists, turned into TOML text for the engine's parser (so a
dict scene is checked, and its errors reported, exactly as a file)."""

import json
import math


def _value(v, where):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, where) for x in v) + "]"
    if hasattr(v, "tolist"):  # numpy scalars and arrays
        return _value(v.tolist(), where)
    raise TypeError("scene dict: %s: a value of type %s has no TOML form" % (where, type(v).__name__))


def _is_table_array(v):
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(x, dict) for x in v)


def _table(d, path, lines):
    """Writes the keys of table `d` (its plain values first), then its
    sub-tables and arrays of tables."""
    for k, v in d.items():
        if not isinstance(v, dict) and not _is_table_array(v):
            lines.append("%s = %s" % (k, _value(v, ".".join(path + [k]))))
    for k, v in d.items():
        name = path + [k]
        if isinstance(v, dict):
            lines.append("")
            lines.append("[%s]" % ".".join(name))
            _table(v, name, lines)
        elif _is_table_array(v):
            for item in v:
                lines.append("")
                lines.append("[[%s]]" % ".".join(name))
                _table(item, name, lines)


def to_toml(scene):
    """The TOML text of a scene dict, e.g.
    {"run": {"time_step": 1e-3, "steps": 100}, "particles": [{"generator": "ring_torus", ...}]}."""
    if not isinstance(scene, dict):
        raise TypeError("scene dict: expected a dict with the TOML structure, got %s" % type(scene).__name__)
    lines = []
    _table(scene, [], lines)
    return "\n".join(lines) + "\n"
