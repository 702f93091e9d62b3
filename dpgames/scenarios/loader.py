"""Scenario files -> validated scenario -> run -> :class:`Result`.

A scenario file is TOML, pure data: nothing in it is executed or imported.  Its top level names the
``kind`` (see :mod:`dpgames.scenarios.registry`), an optional ``title`` and ``seed``; the kind's module
reads the rest.  Overrides (``{"mechanism.epsilon": 0.5}``) replace fields before validation, so
sweeps and the app run variants of a file through exactly the same checks.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import platform
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpgames.scenarios.registry import KINDS
from dpgames.scenarios.result import Result
from dpgames.scenarios.spec import ScenarioError, Table


@dataclass(frozen=True)
class Scenario:
    """A parsed scenario file: its data, where it came from (for messages) and its SHA-256."""

    data: dict[str, Any]
    source: str
    sha256: str
    base_dir: Path | None = None

    @classmethod
    def from_file(cls, path: str | Path) -> Scenario:
        path = Path(path)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise ScenarioError(f"{path}: scenario file not found") from None
        except OSError as exc:
            raise ScenarioError(f"{path}: cannot read the scenario file ({exc.strerror})") from None
        return cls.from_bytes(raw, str(path), path.resolve().parent)

    @classmethod
    def from_text(cls, text: str, source: str = "<scenario>", base_dir: Path | None = None) -> Scenario:
        return cls.from_bytes(text.encode(), source, base_dir)

    @classmethod
    def from_bytes(cls, raw: bytes, source: str, base_dir: Path | None = None) -> Scenario:
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise ScenarioError(f"{source}: not a UTF-8 text file") from None
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"{source}: malformed TOML: {exc}") from None
        return cls(data, source, hashlib.sha256(raw).hexdigest(), base_dir)

    @property
    def kind(self) -> str:
        kind = self.data.get("kind")
        if kind not in KINDS:
            allowed = ", ".join(repr(k) for k in sorted(KINDS))
            raise ScenarioError(f"{self.source}: field 'kind': must be one of {allowed} (got {kind!r})")
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
        return Scenario(data, self.source, digest, self.base_dir)

    def run(self, seed: int | np.random.SeedSequence | None = None) -> Result:
        """Validate and run; ``seed`` overrides the file's ``seed`` (fresh entropy, recorded, if neither).

        ``seed`` may be a :class:`numpy.random.SeedSequence` (a sweep cell's, spawned from the sweep's
        root): the run then depends only on its entropy and spawn key, which the provenance records.
        The ``[sweep]`` table is read by :mod:`dpgames.sweep`; a single run ignores it.
        """
        kind = self.kind
        top = Table(self.data, self.source, "", self.base_dir)
        top.string("kind")
        title = top.string("title", kind.replace("_", " "))
        file_seed = top.integer("seed", None, low=0)
        top.value("sweep", lambda x: isinstance(x, dict), "a table ([sweep])", None)
        seed_seq, seed_record = _seed_sequence(self.source, seed, file_seed)
        module = importlib.import_module(KINDS[kind])
        spec = module.parse(top)
        top.done()
        result = module.run(spec, seed_seq)
        result.title = title
        result.provenance = {"scenario": self.source, "scenario_sha256": self.sha256, **seed_record,
                             **versions(), **result.provenance}
        return result


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
                 overrides: dict[str, Any] | None = None) -> Result:
    """Run a scenario file and return its :class:`Result` (``seed`` overrides the file's seed)."""
    scenario = Scenario.from_file(path)
    if overrides:
        scenario = scenario.with_overrides(overrides)
    return scenario.run(seed)
