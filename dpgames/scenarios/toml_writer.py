"""Writing scenario data back to TOML text (the standard library's ``tomllib`` only reads).

Scenario files are small tables of numbers, strings, booleans and lists, so a small writer is enough
and keeps dpgames free of a further dependency.  The guarantee: for every ``data`` it accepts,
``tomllib.loads(to_toml(data)) == data`` (NaN aside, which is written as ``nan`` and read back as
NaN).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

import numpy as np

from dpgames.scenarios.spec import ScenarioError

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


class TomlWriteError(ScenarioError):
    """A value TOML cannot hold (``None``, an object); ``field`` is the dotted name of the field.

    Examples
    --------
    >>> to_toml({"mechanism": {"epsilon": None}})
    Traceback (most recent call last):
    ...
    dpgames.scenarios.toml_writer.TomlWriteError: field 'mechanism.epsilon': TOML cannot hold NoneType values (got None)
    """

    def __init__(self, field: str, message: str):
        super().__init__(f"field '{field or '<top>'}': {message}", field)


def to_toml(data: dict[str, Any]) -> str:
    """The TOML text of a table of scenario data.

    Parameters
    ----------
    data : dict
        Keys are strings; values are strings, booleans, integers, floats (``inf`` and ``nan``
        included), dates and times, lists of those (nested freely) and tables (dicts); numpy scalars
        and arrays are written as the Python values of their ``tolist()``.  A non-empty list whose
        items are all tables is written as an array of tables (``[[game.classes]]``).

    Returns
    -------
    str
        TOML text that :func:`tomllib.loads` reads back into ``data``.

    Raises
    ------
    TomlWriteError
        A value TOML cannot represent (``None``, a set, an arbitrary object, a non-string key),
        naming the dotted field.

    Examples
    --------
    >>> print(to_toml({"kind": "digital_goods", "seed": 1, "mechanism": {"epsilon": 0.5}}), end="")
    kind = "digital_goods"
    seed = 1
    <BLANKLINE>
    [mechanism]
    epsilon = 0.5
    """
    if not isinstance(data, dict):
        raise TomlWriteError("", f"a scenario must be a table (a dict), got {type(data).__name__}")
    lines: list[str] = []
    _table(data, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def toml_value(value: Any) -> str:
    """One value as inline TOML text, as it would follow ``key = `` (a table as ``{a = 1}``).

    Parameters
    ----------
    value : object
        As a field of :func:`to_toml`.

    Returns
    -------
    str
        Text that ``tomllib.loads("v = " + text)["v"]`` reads back into ``value``.

    Raises
    ------
    TomlWriteError
        A value TOML cannot represent.

    Examples
    --------
    >>> toml_value(0.3), toml_value("grid"), toml_value([0.2, 0.5])
    ('0.3', '"grid"', '[0.2, 0.5]')
    """
    return _inline(value, [])


def _key(key: Any, path: list[str]) -> str:
    if not isinstance(key, str):
        raise TomlWriteError(".".join(path), f"table keys must be strings, got {key!r}")
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    out = []
    for c in text:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 0 and all(isinstance(v, dict) for v in value)


def _table(data: dict[str, Any], path: list[str], lines: list[str]) -> None:
    """Append the key/value lines of ``data``, then its sub-tables and arrays of tables."""
    later = []
    for key, value in data.items():
        shown = _key(key, path)
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if isinstance(value, dict) or _is_table_array(value):
            later.append((shown, value))
        else:
            lines.append(f"{shown} = {_inline(value, path + [key])}")
    for shown, value in later:
        header = ".".join([*path, shown])
        for table in [value] if isinstance(value, dict) else value:
            lines += ["", f"[[{header}]]" if isinstance(value, list) else f"[{header}]"]
            _table(table, [*path, shown], lines)


def _inline(value: Any, path: list[str]) -> str:
    if isinstance(value, (np.generic, np.ndarray)):
        value = value.tolist()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_inline(v, path + [str(i)]) for i, v in enumerate(value)) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{_key(k, path)} = {_inline(v, path + [k])}" for k, v in value.items())
            + "}"
        )
    raise TomlWriteError(
        ".".join(path), f"TOML cannot hold {type(value).__name__} values (got {value!r:.60})"
    )
