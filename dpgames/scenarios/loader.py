"""Scenario files -> validated scenario -> run -> :class:`Result`.

A scenario file is TOML, pure data: nothing in it is executed or imported.  Its top level names the
``kind`` (see :mod:`dpgames.scenarios.registry`), an optional ``title`` and ``seed``; the kind's module
reads the rest.  Overrides (``{"mechanism.epsilon": 0.5}``) replace fields before validation, so
sweeps and the app run variants of a file through exactly the same checks.
"""

from __future__ import annotations

import copy
import hashlib
import platform
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpgames._files import MAX_SCENARIO_BYTES, FileError, read_regular, resolved
from dpgames.scenarios import registry
from dpgames.scenarios.budget import Budget, check_spec
from dpgames.scenarios.kind import checked_result
from dpgames.scenarios.invariants import check_result
from dpgames.scenarios.result import Result
from dpgames.scenarios.spec import ScenarioError, Table

#: Deepest nesting of tables and arrays a scenario file may have (real ones use 3).
MAX_DEPTH = 32


@dataclass(frozen=True)
class Scenario:
    """A parsed scenario file: its data, where it came from (for messages) and its SHA-256."""

    data: dict[str, Any]
    source: str
    sha256: str
    base_dir: Path | None = None
    data_dirs: tuple[Path, ...] = ()

    @classmethod
    def from_file(cls, path: str | Path, data_dirs: Sequence[str | Path] = ()) -> Scenario:
        """Read a scenario file.  Data files it names must lie in its folder or in ``data_dirs``
        (``--data-dir``).  Anything but a regular file of at most 4 MiB is refused unopened."""
        try:
            raw = read_regular(path, MAX_SCENARIO_BYTES)
        except FileError as exc:
            message = "not found" if exc.reason == "file not found" else exc.reason
            raise ScenarioError(f"{path}: scenario file {message}") from None
        return cls.from_bytes(raw, str(path), resolved(path).parent, data_dirs)

    @classmethod
    def from_text(cls, text: str, source: str = "<scenario>", base_dir: Path | None = None,
                  data_dirs: Sequence[str | Path] = ()) -> Scenario:
        return cls.from_bytes(text.encode(), source, base_dir, data_dirs)

    @classmethod
    def from_bytes(cls, raw: bytes, source: str, base_dir: Path | None = None,
                   data_dirs: Sequence[str | Path] = ()) -> Scenario:
        """Parse a scenario's bytes; ``base_dir`` and ``data_dirs`` are the folders its data files may
        come from (none: it may name no data file)."""
        if len(raw) > MAX_SCENARIO_BYTES:
            raise ScenarioError(f"{source}: the scenario file is {len(raw):,} bytes, over the limit of "
                                f"{MAX_SCENARIO_BYTES:,}")
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise ScenarioError(f"{source}: not a UTF-8 text file") from None
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"{source}: malformed TOML: {exc}") from None
        except ValueError:  # Python's limit on integer digits, raised by int() inside the parser
            raise ScenarioError(f"{source}: malformed TOML: an integer with more than "
                                f"{sys.get_int_max_str_digits()} digits") from None
        except RecursionError:
            raise ScenarioError(f"{source}: malformed TOML: arrays or tables nested too deeply "
                                f"(at most {MAX_DEPTH} levels)") from None
        _check_depth(data, source)
        return cls(data, source, hashlib.sha256(raw).hexdigest(), base_dir, tuple(Path(d) for d in data_dirs))

    @property
    def kind(self) -> str:
        """The file's ``kind``: a kind registered by an installed package, whose module imports and has
        ``parse`` and ``run`` (else a :class:`~dpgames.scenarios.registry.KindError`)."""
        kind = self.data.get("kind")
        registry.load(kind, self.source)
        return kind

    def with_overrides(self, overrides: dict[str, Any]) -> Scenario:
        """A copy with dotted fields replaced (``"mechanism.epsilon"``); the hash records them."""
        data = copy.deepcopy(self.data)
        for dotted, value in overrides.items():
            *parents, leaf = dotted.split(".")
            node = data
            for name in parents:
                node = node.setdefault(name, {})
                if not isinstance(node, dict):
                    raise ScenarioError(f"{self.source}: override {dotted!r}: {name!r} is not a table")
            node[leaf] = value
        digest = hashlib.sha256((self.sha256 + repr(sorted(overrides.items()))).encode()).hexdigest()
        return Scenario(data, self.source, digest, self.base_dir, self.data_dirs)

    def run(self, seed: int | np.random.SeedSequence | None = None, budget: Budget | None = None) -> Result:
        """Validate and run; ``seed`` overrides the file's ``seed`` (fresh entropy, recorded, if neither).
        Before running, the kind's size estimate is checked against ``budget`` (default limits if None;
        see :mod:`dpgames.scenarios.budget`): a :class:`BudgetError` names the option that raises it.

        ``seed`` may be a :class:`numpy.random.SeedSequence` (a sweep cell's, spawned from the sweep's
        root): the run then depends only on its entropy and spawn key, which the provenance records.
        The ``[sweep]`` table is read by :mod:`dpgames.sweep`; a single run ignores it.
        """
        kind = self.data.get("kind")
        module = registry.load(kind, self.source)
        top = Table(self.data, self.source, "", self.base_dir, self.data_dirs)
        top.string("kind")
        title = top.string("title", kind.replace("_", " "))
        file_seed = top.integer("seed", None, low=0)
        top.value("sweep", lambda x: isinstance(x, dict), "a table ([sweep])", None)
        seed_seq, seed_record = _seed_sequence(self.source, seed, file_seed)
        spec = module.parse(top)
        top.done()
        check_spec(module, spec, budget, self.source)
        result = checked_result(kind, module.run(spec, seed_seq))
        check_result(result, getattr(module, "INVARIANTS", ()))   # a bug report, before anyone sees it
        result.title = title
        result.provenance = {"scenario": self.source, "scenario_sha256": self.sha256, **seed_record,
                             **versions(), **result.provenance}
        return result


def _check_depth(data: dict[str, Any], source: str) -> None:
    """Refuse tables and arrays nested deeper than ``MAX_DEPTH`` (an iterative walk: no recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ScenarioError(f"{source}: tables or arrays nested more than {MAX_DEPTH} levels deep")
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))


def _seed_sequence(source: str, seed: int | np.random.SeedSequence | None,
                   file_seed: int | None) -> tuple[np.random.SeedSequence, dict[str, Any]]:
    """The run's SeedSequence and its provenance record ({"seed": entropy[, "spawn_key": [...]]})."""
    if isinstance(seed, np.random.SeedSequence):
        # A fresh copy: kinds call seed.spawn(), which would otherwise advance the caller's object.
        fresh = np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size)
        return fresh, {"seed": seed.entropy, "spawn_key": list(seed.spawn_key)}
    if seed is not None and (not isinstance(seed, int) or seed < 0):
        raise ScenarioError(f"{source}: seed must be a whole number >= 0 (got {seed!r})")
    root = seed if seed is not None else file_seed
    if root is None:
        root = int(np.random.SeedSequence().entropy)
    return np.random.SeedSequence(root), {"seed": root}


def versions() -> dict[str, str]:
    from dpgames import __version__
    return {"dpgames": __version__, "numpy": np.__version__, "python": platform.python_version()}


def run_scenario(path: str | Path, seed: int | np.random.SeedSequence | None = None,
                 overrides: dict[str, Any] | None = None, data_dirs: Sequence[str | Path] = (),
                 budget: Budget | None = None) -> Result:
    """Run a scenario file and return its :class:`Result` (``seed`` overrides the file's seed;
    ``data_dirs``: further folders its data files may come from, as ``--data-dir``)."""
    scenario = Scenario.from_file(path, data_dirs)
    if overrides:
        scenario = scenario.with_overrides(overrides)
    return scenario.run(seed, budget)
