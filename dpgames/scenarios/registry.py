"""Scenario kinds: the value of a scenario file's ``kind`` -> the installed module that runs it.

There is one way in, for dpgames' own kinds and for other packages' alike: the entry-point group
``dpgames.kinds``.  An entry point's name is a kind (the value of ``kind`` in a scenario file), its
value the module that implements :class:`dpgames.scenarios.kind.ScenarioKind`.  A package registers
a kind in its ``pyproject.toml``, as dpgames registers its own::

    [project.entry-points."dpgames.kinds"]
    voting = "dpgames_voting.kind"

The rules:

- **Scenario files stay pure data.**  A file names a registered kind, never a module or a path: the
  code that runs comes only from installed packages (a ``kind`` that is not registered is refused
  with the list of installed kinds).
- **Lazy.**  Reading the group imports nothing; a kind's module is imported when a scenario of that
  kind runs (``dpgames kinds`` imports each to show its description).
- **Clear errors**, never a traceback: a name registered by two distributions is refused naming
  both; a module that fails to import, or lacks a member of the contract
  (:class:`~dpgames.scenarios.kind.ScenarioKind`), is refused naming the kind, its package and the
  cause.  Each is a :class:`KindError`, raised only when that kind is used, so one broken plugin
  does not stop the others.
- **No installed metadata.**  When the group holds no entry point of the distribution ``dpgames``
  (dpgames imported from a source tree that was never pip-installed, or an install older than the
  group), the built-in kinds come from :data:`BUILTIN_KINDS`, which the tests keep equal to the
  table in ``pyproject.toml``; other packages' entry points are read as usual.  ``pip install -e .``
  makes the metadata and ends the fallback.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from dpgames.scenarios.kind import ScenarioKind, missing_members
from dpgames.scenarios.spec import ScenarioError

if TYPE_CHECKING:
    # the type checker holds every built-in kind to the contract (imported lazily at run time)
    from dpgames.scenarios import (
        allocation,
        anonymous_game,
        digital_goods,
        huang_kannan,
        large_game,
        nst_mix,
        privacy_market,
    )

    _BUILTIN_CONTRACTS: tuple[ScenarioKind[Any, Any], ...] = (
        allocation,
        anonymous_game,
        digital_goods,
        huang_kannan,
        large_game,
        nst_mix,
        privacy_market,
    )

GROUP = "dpgames.kinds"
OWN_PACKAGE = "dpgames"
SOURCE_TREE = "dpgames (source tree: no installed entry points)"

#: The built-in kinds, as registered in pyproject.toml; used only without installed metadata.
BUILTIN_KINDS: dict[str, str] = {
    "allocation": "dpgames.scenarios.allocation",
    "anonymous_game": "dpgames.scenarios.anonymous_game",
    "digital_goods": "dpgames.scenarios.digital_goods",
    "huang_kannan": "dpgames.scenarios.huang_kannan",
    "large_game": "dpgames.scenarios.large_game",
    "nst_mix": "dpgames.scenarios.nst_mix",
    "privacy_market": "dpgames.scenarios.privacy_market",
}


class KindError(ScenarioError):
    """A scenario kind that cannot be used: unknown, registered twice, or its module is broken."""


@dataclass(frozen=True)
class KindEntry:
    """One registration: the kind's name, the object reference it names (``module`` or
    ``module:attribute``) and the distribution that registered it (with its version)."""

    name: str
    target: str
    package: str

    def load(self) -> ScenarioKind[Any, Any]:
        """Import the kind's module (or object) and check that it has every member of the
        contract."""
        try:
            kind = importlib.metadata.EntryPoint(self.name, self.target, GROUP).load()
        except Exception as exc:  # noqa: BLE001 - any failure of a plugin's import is reported, not raised
            raise KindError(
                f"scenario kind {self.name!r} (package {self.package}): its module {self.target!r} "
                f"cannot be imported: {type(exc).__name__}: {exc}"
            ) from None
        missing = missing_members(kind)
        if missing:
            raise KindError(
                f"scenario kind {self.name!r} (package {self.package}): {self.target!r} lacks "
                f"{', '.join(missing)} (see dpgames.scenarios.kind for the contract)"
            )
        return cast("ScenarioKind[Any, Any]", kind)

    def description(self) -> str:
        """The kind's one-line ``DESCRIPTION``."""
        return describe(self.load())

    def examples(self) -> tuple[Path, ...]:
        """The example scenario files the kind ships (its ``EXAMPLES`` that are files)."""
        return tuple(p for p in sorted(Path(p) for p in self.load().EXAMPLES) if p.is_file())


@dataclass(frozen=True)
class Conflict:
    """A kind name registered by more than one distribution: unusable until one is uninstalled."""

    name: str
    entries: tuple[KindEntry, ...]

    def error(self) -> KindError:
        who = " and ".join(f"{e.package} ({e.target})" for e in self.entries)
        return KindError(
            f"scenario kind {self.name!r} is registered by more than one package: {who}; "
            "uninstall one of them"
        )


def _packages(eps: list[importlib.metadata.EntryPoint]) -> list[tuple[str | None, str]]:
    """(distribution name, "name version") of each entry point's distribution, each read once
    (reading a distribution's metadata parses its METADATA file)."""
    seen: dict[int, tuple[str | None, str]] = {}
    for ep in eps:
        dist = getattr(ep, "dist", None)
        if id(dist) not in seen:
            seen[id(dist)] = (
                (None, "unknown package")
                if dist is None
                else (dist.name, f"{dist.name} {dist.version}")
            )
    return [seen[id(getattr(ep, "dist", None))] for ep in eps]


def _path_state() -> tuple:
    """``sys.path`` with each folder's modification time: installing or removing a distribution
    changes the time of the folder that holds its metadata."""
    state: list[tuple[str, int | None]] = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, None))
    return tuple(state)


_read: tuple[tuple, dict] | None = None


def installed() -> dict[str, KindEntry | Conflict]:
    """Every registered kind, by name, sorted: a :class:`KindEntry`, or a :class:`Conflict` when
    several distributions register the name.  Reads package metadata only (again only once
    :func:`_path_state` changes: a sweep's cells do not re-read it); imports nothing.

    Returns
    -------
    dict
        Name -> KindEntry or Conflict.
    """
    global _read
    state = _path_state()
    if _read is None or _read[0] != state:
        _read = (state, _scan())
    return dict(_read[1])


def _scan() -> dict[str, KindEntry | Conflict]:
    eps = list(importlib.metadata.entry_points(group=GROUP))
    packages = _packages(eps)
    entries: dict[str, list[KindEntry]] = {}
    if not any(dist == OWN_PACKAGE for dist, _ in packages):
        for name, target in BUILTIN_KINDS.items():
            entries.setdefault(name, []).append(KindEntry(name, target, SOURCE_TREE))
    for ep, (_, label) in zip(eps, packages):
        entry = KindEntry(ep.name, ep.value, label)
        if entry not in entries.setdefault(ep.name, []):
            entries[ep.name].append(entry)
    return {
        name: found[0]
        if len(found) == 1
        else Conflict(name, tuple(sorted(found, key=lambda e: e.package)))
        for name, found in sorted(entries.items())
    }


def lookup(kind: Any, source: str = "<scenario>") -> KindEntry:
    """The registration of ``kind`` (a scenario file's ``kind`` field).

    Parameters
    ----------
    kind : object
        The field's value (anything a file may hold).
    source : str
        The scenario, named in errors.

    Returns
    -------
    KindEntry

    Raises
    ------
    KindError
        An unknown kind (naming the installed ones) or one registered by two packages (naming both).
    """
    kinds = installed()
    found = kinds.get(kind) if isinstance(kind, str) else None
    if found is None:
        allowed = ", ".join(repr(k) for k in kinds) or "none (is dpgames installed?)"
        problem = "is required: one of" if kind is None else "must be one of"
        got = "" if kind is None else f" (got {kind!r})"
        raise KindError(
            f"{source}: field 'kind': {problem} {allowed} (the installed scenario kinds; "
            f"`dpgames kinds` lists them){got}"
        )
    if isinstance(found, Conflict):
        raise KindError(f"{source}: field 'kind': {found.error()}")
    return found


def load(kind: Any, source: str = "<scenario>") -> ScenarioKind[Any, Any]:
    """The registered ``kind``, imported now (see :func:`lookup` and :meth:`KindEntry.load`).

    Parameters
    ----------
    kind : object
    source : str

    Returns
    -------
    ScenarioKind

    Raises
    ------
    KindError
        Unknown, doubly registered, or its module cannot be imported or lacks a member of the
        contract.
    """
    entry = lookup(kind, source)
    try:
        return entry.load()
    except KindError as exc:
        raise KindError(f"{source}: field 'kind': {exc}") from None


@dataclass(frozen=True)
class KindInfo:
    """A line of ``dpgames kinds``: a kind, its package(s) and description, or why it cannot be
    used."""

    name: str
    package: str
    description: str
    error: str | None = None
    examples: tuple[Path, ...] = ()


def catalogue() -> list[KindInfo]:
    """Every installed kind with its package and one-line description (each module is imported to
    read it); a broken or doubly registered kind is listed with its :class:`KindError` message
    instead.

    Importing every kind takes seconds (their numerical dependencies), so the list is kept in a
    cache file (:func:`catalogue_cache`) under a fingerprint of everything it depends on:
    ``sys.path`` and the modification time of each of its folders (installing or removing a package
    changes one), the registrations, and the newest modification time and the count of the source
    files of each registering package.  Any change imports every kind again.

    Returns
    -------
    list of KindInfo
    """
    entries = installed()
    key = _fingerprint(entries)
    cached = _read_cache(key)
    if cached is not None:
        return cached
    rows = _catalogue(entries)
    _write_cache(key, rows)
    return rows


def catalogue_cache() -> Path:
    """The cache file of :func:`catalogue`: ``$DPGAMES_CACHE_DIR/kinds.json``, by default under
    ``$XDG_CACHE_HOME`` (``~/.cache``) ``/dpgames``.  Deleting it is always safe.

    Returns
    -------
    Path
    """
    folder = (
        os.environ.get("DPGAMES_CACHE_DIR")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dpgames"
    )
    return Path(folder) / "kinds.json"


def _fingerprint(entries: dict[str, KindEntry | Conflict]) -> str:
    parts = [sys.version, repr(_path_state())]
    for found in entries.values():
        for entry in found.entries if isinstance(found, Conflict) else (found,):
            parts.append(
                f"{entry.name}={entry.target}@{entry.package}:{_source_state(entry.target)}"
            )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _source_state(target: str) -> str:
    """Where the top-level package of ``target`` lives, its source files' count and newest
    modification time (finding a top-level package imports nothing)."""
    top = target.partition(":")[0].split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return "not found"
    if spec is None:
        return "not found"
    places = list(spec.submodule_search_locations or []) or ([spec.origin] if spec.origin else [])
    if not places:
        return "not found"
    roots = [Path(p) for p in places]
    files = [f for root in roots for f in ([root] if root.is_file() else root.rglob("*.py"))]
    newest = max((f.stat().st_mtime_ns for f in files), default=0)
    return f"{';'.join(map(str, roots))}:{len(files)}:{newest}"


def _read_cache(key: str) -> list[KindInfo] | None:
    try:
        saved = json.loads(catalogue_cache().read_text())
        if saved.get("fingerprint") != key:
            return None
        return [
            KindInfo(
                r["name"],
                r["package"],
                r["description"],
                r["error"],
                tuple(Path(p) for p in r["examples"]),
            )
            for r in saved["rows"]
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_cache(key: str, rows: list[KindInfo]) -> None:
    """Save the catalogue (atomically); a cache that cannot be written is only a slower next run."""
    path = catalogue_cache()
    data = {
        "fingerprint": key,
        "rows": [
            {
                "name": r.name,
                "package": r.package,
                "description": r.description,
                "error": r.error,
                "examples": [str(p) for p in r.examples],
            }
            for r in rows
        ],
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(path)
    except OSError:
        pass


def _catalogue(entries: dict[str, KindEntry | Conflict]) -> list[KindInfo]:
    rows = []
    for name, found in entries.items():
        if isinstance(found, Conflict):
            packages = " and ".join(e.package for e in found.entries)
            rows.append(KindInfo(name, packages, "", str(found.error())))
            continue
        try:
            rows.append(
                KindInfo(name, found.package, found.description(), examples=found.examples())
            )
        except KindError as exc:
            rows.append(KindInfo(name, found.package, "", str(exc)))
    return rows


def describe(kind: ScenarioKind[Any, Any]) -> str:
    """A kind's ``DESCRIPTION`` on one line.

    Parameters
    ----------
    kind : ScenarioKind

    Returns
    -------
    str
    """
    return " ".join(kind.DESCRIPTION.split()) or "(no description)"
