"""Reading scenario files: a strict, typed view of a TOML table.

Every field a scenario kind reads goes through a :class:`Table`; every error names the file, the field
and what is allowed, and a key nobody read is an error (:meth:`Table.done`), never silently ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


class ScenarioError(ValueError):
    """An invalid scenario: the message names the file, the field and what is allowed."""


_REQUIRED = object()


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _describe_range(low, high, low_open, high_open) -> str:
    if low is not None and high is not None:
        return f"a number in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"a number {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"a number {'<' if high_open else '<='} {high:g}"
    return "a number"


class Table:
    """A TOML table of a scenario file, read field by field with validation."""

    def __init__(self, data: dict[str, Any], source: str, prefix: str = "", base_dir: Path | None = None):
        if not isinstance(data, dict):
            raise ScenarioError(f"{source}: field '{prefix.rstrip('.') or '<top>'}': must be a table")
        self.data = data
        self.source = source
        self.prefix = prefix
        self.base_dir = base_dir
        self._read: set[str] = set()

    def where(self, key: str) -> str:
        return f"{self.source}: field '{self.prefix}{key}'"

    def error(self, key: str, message: str) -> ScenarioError:
        return ScenarioError(f"{self.where(key)}: {message}")

    def _get(self, key: str, default: Any) -> Any:
        self._read.add(key)
        if key in self.data:
            return self.data[key]
        if default is _REQUIRED:
            raise self.error(key, "is required")
        return default

    def value(self, key: str, check: Callable[[Any], bool], allowed: str, default: Any = _REQUIRED) -> Any:
        """A field that must satisfy ``check``; ``allowed`` says in words what is allowed."""
        present = key in self.data
        x = self._get(key, default)
        if present and not check(x):
            raise self.error(key, f"must be {allowed} (got {x!r})")
        return x

    def number(self, key: str, default: Any = _REQUIRED, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False) -> float:
        def ok(x):
            if not _is_number(x) or x != x or abs(x) == float("inf"):
                return False
            if low is not None and (x <= low if low_open else x < low):
                return False
            return not (high is not None and (x >= high if high_open else x > high))
        x = self.value(key, ok, _describe_range(low, high, low_open, high_open), default)
        return x if x is None else float(x)

    def integer(self, key: str, default: Any = _REQUIRED, *, low: int | None = None, high: int | None = None) -> int:
        def ok(x):
            return isinstance(x, int) and not isinstance(x, bool) and (low is None or x >= low) \
                and (high is None or x <= high)
        allowed = "a whole number" + (f" >= {low}" if low is not None else "") + \
            (f" <= {high}" if high is not None else "")
        return self.value(key, ok, allowed, default)

    def boolean(self, key: str, default: Any = _REQUIRED) -> bool:
        return self.value(key, lambda x: isinstance(x, bool), "true or false", default)

    def string(self, key: str, default: Any = _REQUIRED) -> str:
        return self.value(key, lambda x: isinstance(x, str) and x != "", "a non-empty string", default)

    def choice(self, key: str, options: Sequence[str], default: Any = _REQUIRED) -> str:
        allowed = "one of " + ", ".join(repr(o) for o in options)
        return self.value(key, lambda x: isinstance(x, str) and x in options, allowed, default)

    def numbers(self, key: str, default: Any = _REQUIRED, *, low: float | None = None,
                high: float | None = None, non_empty: bool = True) -> list[float] | None:
        def ok(x):
            return isinstance(x, list) and (len(x) > 0 or not non_empty) and all(
                _is_number(e) and (low is None or e >= low) and (high is None or e <= high) for e in x)
        rng = f" in [{low:g}, {high:g}]" if low is not None and high is not None else ""
        x = self.value(key, ok, f"a non-empty list of numbers{rng}", default)
        return x if x is None else [float(e) for e in x]

    def path(self, key: str, default: Any = _REQUIRED) -> Path | None:
        """A file path, relative to the scenario file's folder; it must exist."""
        text = self.string(key, default)
        if text is None:
            return None
        p = Path(text)
        if not p.is_absolute() and self.base_dir is not None:
            p = self.base_dir / p
        if not p.exists():
            raise self.error(key, f"file {str(p)!r} not found")
        return p

    def table(self, key: str, required: bool = False) -> Table:
        """A sub-table (an empty one when absent and not required)."""
        present = key in self.data
        raw = self._get(key, _REQUIRED if required else {})
        if present and not isinstance(raw, dict):
            raise self.error(key, f"must be a table ([{self.prefix}{key}]), got {raw!r}")
        return Table(raw, self.source, f"{self.prefix}{key}.", self.base_dir)

    def done(self) -> None:
        """Refuse any key that no reader asked for (typos must not be silently ignored)."""
        unknown = sorted(set(self.data) - self._read)
        if unknown:
            allowed = ", ".join(sorted(self._read)) or "none"
            raise self.error(unknown[0], f"unknown key (allowed here: {allowed})")
