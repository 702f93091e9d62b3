"""Scenario files -> validated scenario -> run -> :class:`Result`.

A scenario file is TOML, pure data: nothing in it is executed or imported.  Its top level names the
``kind`` (see :mod:`dpgames.scenarios.registry`), an optional ``title`` and ``seed``; the kind's
module reads the rest.  Overrides (``{"mechanism.epsilon": 0.5}``) replace fields before validation,
so sweeps and the app run variants of a file through exactly the same checks.
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
from typing import Any, Generic, cast, overload

import numpy as np

from dpgames._files import MAX_SCENARIO_BYTES, FileError, read_regular, resolved
from dpgames.scenarios import registry
from dpgames.scenarios.budget import Budget, Estimate
from dpgames.scenarios.invariants import check_result
from dpgames.scenarios.kind import Run, ScenarioKind, Spec, checked_result
from dpgames.scenarios.result import Result
from dpgames.scenarios.spec import ScenarioError, Table
from dpgames.scenarios.titles import retitle
from dpgames.scenarios.toml_writer import to_toml

#: Deepest nesting of tables and arrays a scenario file may have (real ones use 3).
MAX_DEPTH = 32


@dataclass(frozen=True)
class Scenario:
    """A scenario file, read: its data, where it came from (for messages) and its SHA-256.

    Build one with :meth:`from_file`, :meth:`from_text` or :meth:`from_dict`; :meth:`parse`
    validates it into the kind's spec, :meth:`run` runs it.

    Examples
    --------
    >>> s = Scenario.from_dict({"kind": "digital_goods", "seed": 3, "mechanism": {"epsilon": 1.0},
    ...                         "population": {"distribution": "list", "values": [0.2, 0.6, 0.9]}})
    >>> r = s.run()
    >>> r.metrics["n"], r.metrics["opt"], r.provenance["seed"]
    (3, 1.2, 3)
    """

    data: dict[str, Any]
    source: str
    sha256: str
    base_dir: Path | None = None
    data_dirs: tuple[Path, ...] = ()

    @classmethod
    def from_file(cls, path: str | Path, data_dirs: Sequence[str | Path] = ()) -> Scenario:
        """Read a scenario file.  Data files it names must lie in its folder or in ``data_dirs``
        (``--data-dir``).  Anything but a regular file of at most 4 MiB is refused unopened.

        Parameters
        ----------
        path : str or Path
        data_dirs : sequence of str or Path
            Further folders its data files may come from.

        Returns
        -------
        Scenario

        Raises
        ------
        ScenarioError
            The file is missing, not a regular file, too large, not UTF-8 or not TOML.
        """
        try:
            raw = read_regular(path, MAX_SCENARIO_BYTES)
        except FileError as exc:
            message = "not found" if exc.reason == "file not found" else exc.reason
            raise ScenarioError(f"{path}: scenario file {message}") from None
        return cls.from_bytes(raw, str(path), resolved(path).parent, data_dirs)

    @classmethod
    def from_text(
        cls,
        text: str,
        source: str = "<scenario>",
        base_dir: Path | None = None,
        data_dirs: Sequence[str | Path] = (),
    ) -> Scenario:
        """Parse a scenario given as TOML text (see :meth:`from_bytes`).

        Parameters
        ----------
        text : str
        source : str
            How messages name the scenario.
        base_dir, data_dirs : Path, optional
            The folders its data files may come from (none: it may name no data file).

        Returns
        -------
        Scenario

        Raises
        ------
        ScenarioError
            Malformed TOML, or too large or deep.
        """
        return cls.from_bytes(text.encode(), source, base_dir, data_dirs)

    @classmethod
    def from_dict(
        cls,
        data: dict[str, Any],
        source: str = "<settings>",
        base_dir: Path | None = None,
        data_dirs: Sequence[str | Path] = (),
    ) -> Scenario:
        """A scenario from plain data, as a TOML file would hold it: exactly the scenario of the
        file :meth:`to_toml` writes (same data, same SHA-256), so a file saved from settings
        reproduces them.

        Parameters
        ----------
        data : dict
            The file's tables: ``{"kind": "digital_goods", "seed": 2026, "population": {...},
            ...}``. numpy scalars and arrays are accepted (written as numbers and lists).
        source : str
            How messages name the scenario.
        base_dir, data_dirs : Path, optional
            The folders its data files may come from (none: it may name no data file).

        Returns
        -------
        Scenario

        Raises
        ------
        ScenarioError
            ``data`` holds a value TOML cannot (``None``, an object), or is too large or deep.

        Examples
        --------
        >>> s = Scenario.from_dict({"kind": "digital_goods", "seed": 1,
        ...                         "population": {"distribution": "uniform", "n": 50},
        ...                         "mechanism": {"epsilon": 0.5}})
        >>> saved = Scenario.from_text(s.to_toml())
        >>> saved.data == s.data, saved.sha256 == s.sha256
        (True, True)
        """
        return cls.from_text(to_toml(data), source, base_dir, data_dirs)

    def to_toml(self) -> str:
        """The scenario's data as TOML text (comments of the original file are not kept); reading it
        back gives the same data and, through :meth:`from_text`, the same runs.

        Returns
        -------
        str

        Raises
        ------
        ScenarioError
            The data holds a value TOML cannot represent (only possible for hand-built data).
        """
        return to_toml(self.data)

    @classmethod
    def from_bytes(
        cls,
        raw: bytes,
        source: str,
        base_dir: Path | None = None,
        data_dirs: Sequence[str | Path] = (),
    ) -> Scenario:
        """Parse a scenario's bytes (UTF-8 TOML).

        Parameters
        ----------
        raw : bytes
        source : str
            How messages name the scenario.
        base_dir, data_dirs : Path, optional
            The folders its data files may come from (none: it may name no data file).

        Returns
        -------
        Scenario
            Its ``sha256`` is the hash of ``raw``.

        Raises
        ------
        ScenarioError
            Over 4 MiB, not UTF-8, malformed TOML, or nested too deeply.
        """
        if len(raw) > MAX_SCENARIO_BYTES:
            raise ScenarioError(
                f"{source}: the scenario file is {len(raw):,} bytes, over the limit of "
                f"{MAX_SCENARIO_BYTES:,}"
            )
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise ScenarioError(f"{source}: not a UTF-8 text file") from None
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"{source}: malformed TOML: {exc}") from None
        except ValueError:  # Python's limit on integer digits, raised by int() inside the parser
            raise ScenarioError(
                f"{source}: malformed TOML: an integer with more than "
                f"{sys.get_int_max_str_digits()} digits"
            ) from None
        except RecursionError:
            raise ScenarioError(
                f"{source}: malformed TOML: arrays or tables nested too deeply "
                f"(at most {MAX_DEPTH} levels)"
            ) from None
        _check_depth(data, source)
        return cls(
            data,
            source,
            hashlib.sha256(raw).hexdigest(),
            base_dir,
            tuple(Path(d) for d in data_dirs),
        )

    @property
    def kind(self) -> str:
        """The file's ``kind``: a kind registered by an installed package, whose module imports and
        satisfies the contract (else a :class:`~dpgames.scenarios.registry.KindError`)."""
        # registry.load refuses anything but a registered kind
        kind = cast(str, self.data.get("kind"))
        registry.load(kind, self.source)
        return kind

    def with_overrides(self, overrides: dict[str, Any]) -> Scenario:
        """A copy with dotted fields replaced (``{"mechanism.epsilon": 0.5}``), before any
        validation (the run then checks them as if the file said so); the hash records them.  The
        title follows: where it states a replaced field's value (``"eps = 0.5"``), it states the new
        one (see :func:`dpgames.scenarios.titles.retitle`), unless the overrides give the title too.

        Parameters
        ----------
        overrides : dict
            Dotted field name -> value.

        Returns
        -------
        Scenario

        Raises
        ------
        ScenarioError
            A dotted name goes through a field that is not a table.
        """
        data = copy.deepcopy(self.data)
        old: dict[str, Any] = {}
        for dotted, value in overrides.items():
            *parents, leaf = dotted.split(".")
            node = data
            for name in parents:
                node = node.setdefault(name, {})
                if not isinstance(node, dict):
                    raise ScenarioError(
                        f"{self.source}: override {dotted!r}: {name!r} is not a table"
                    )
            if leaf in node:
                old[dotted] = node[leaf]
            node[leaf] = value
        if isinstance(data.get("title"), str) and "title" not in overrides:
            data["title"] = retitle(data["title"], old, overrides)
        digest = hashlib.sha256(
            (self.sha256 + repr(sorted(overrides.items()))).encode()
        ).hexdigest()
        return Scenario(data, self.source, digest, self.base_dir, self.data_dirs)

    @overload
    def parse(
        self, seed: int | np.random.SeedSequence | None = None, *, kind: None = None
    ) -> ParsedScenario[Any, Any]: ...

    @overload
    def parse(
        self, seed: int | np.random.SeedSequence | None = None, *, kind: ScenarioKind[Spec, Run]
    ) -> ParsedScenario[Spec, Run]: ...

    def parse(
        self,
        seed: int | np.random.SeedSequence | None = None,
        *,
        kind: ScenarioKind[Any, Any] | None = None,
    ) -> ParsedScenario[Any, Any]:
        """Validate every field and return the kind's spec with the run's title and seed: what
        :meth:`run` runs, ready to :meth:`~ParsedScenario.estimate`, :meth:`~ParsedScenario.build`
        or :meth:`~ParsedScenario.run`.  The app's pages call it with their ``kind`` (e.g.
        ``scenario.parse(kind=digital_goods)``), which types the spec and the built run.

        Parameters
        ----------
        seed : int or numpy.random.SeedSequence, optional
            Overrides the file's ``seed`` (fresh entropy, recorded, if neither).
        kind : ScenarioKind, optional
            The kind the caller expects (its module): a file of another kind is refused on ``kind``.

        Returns
        -------
        ParsedScenario

        Raises
        ------
        ScenarioError
            An unknown kind (:class:`~dpgames.scenarios.registry.KindError`), not the expected one,
            or an invalid field.
        """
        # registry.load refuses anything but a registered kind
        name = cast(str, self.data.get("kind"))
        found = registry.load(name, self.source)
        top = Table(self.data, self.source, "", self.base_dir, self.data_dirs)
        if kind is not None and found is not kind:
            raise top.error("kind", f"must be a scenario of the kind this page runs, got {name!r}")
        top.string("kind")
        title = top.string("title", default_title(name))
        file_seed = top.integer("seed", None, low=0)
        top.value("sweep", lambda x: isinstance(x, dict), "a table ([sweep])", None)
        _, seed_record = _seed_sequence(self.source, seed, file_seed)
        spec = found.parse(top)
        top.done()
        return ParsedScenario(name, found, title, spec, seed_record, self.source, self.sha256)

    def run(
        self, seed: int | np.random.SeedSequence | None = None, budget: Budget | None = None
    ) -> Result:
        """Validate and run (:meth:`parse`, then :meth:`ParsedScenario.run`).

        ``seed`` may be a :class:`numpy.random.SeedSequence` (a sweep cell's, spawned from the
        sweep's root): the run then depends only on its entropy and spawn key, which the provenance
        records. The ``[sweep]`` table is read by :mod:`dpgames.sweep`; a single run ignores it.

        Parameters
        ----------
        seed : int or numpy.random.SeedSequence, optional
            Overrides the file's ``seed`` (fresh entropy, recorded, if neither).
        budget : Budget, optional
            Limits on the estimated memory and work (default limits if None).

        Returns
        -------
        Result
            Checked against its invariants, with title and provenance set.

        Raises
        ------
        ScenarioError
            An invalid scenario (:class:`~dpgames.scenarios.budget.BudgetError` when over
            ``budget``).
        """
        return self.parse(seed).run(budget)


def file_seed(data: dict[str, Any], source: str) -> int | None:
    """A scenario's ``seed`` field, checked by the rule of every run (a whole number >= 0).

    Parameters
    ----------
    data : dict
        The scenario's data.
    source : str
        How messages name the scenario.

    Returns
    -------
    int or None
        None when the file has no seed.

    Raises
    ------
    ScenarioError
        The field is not a whole number >= 0.
    """
    return Table(data, source).integer("seed", None, low=0)


def default_title(kind: str) -> str:
    """The title of a scenario without one: its kind in words (``"digital goods"``).

    Parameters
    ----------
    kind : str

    Returns
    -------
    str
    """
    return kind.replace("_", " ")


@dataclass(frozen=True)
class ParsedScenario(Generic[Spec, Run]):
    """A validated scenario, ready to run: its kind, spec, title and seed; every step of a run goes
    through the kind's contract (:class:`~dpgames.scenarios.kind.ScenarioKind`) here.

    ``seed`` is a fresh :class:`numpy.random.SeedSequence` on every access (a kind may ``spawn``
    from it), always with the same entropy and spawn key: the ones ``seed_record`` records.

    Examples
    --------
    >>> parsed = Scenario.from_dict(
    ...     {
    ...         "kind": "digital_goods",
    ...         "seed": 4,
    ...         "mechanism": {"epsilon": 1.0},
    ...         "population": {"distribution": "uniform", "n": 10},
    ...     }
    ... ).parse()
    >>> parsed.name, parsed.title, parsed.spec.n, parsed.seed.entropy
    ('digital_goods', 'digital goods', 10, 4)
    >>> parsed.build().values.size, parsed.run().metrics["n"]
    (10, 10)
    """

    name: str
    kind: ScenarioKind[Spec, Run]
    title: str
    spec: Spec
    seed_record: dict[str, Any]
    source: str = "<scenario>"
    sha256: str = ""

    @property
    def seed(self) -> np.random.SeedSequence:
        """The run's root seed (a fresh copy)."""
        return np.random.SeedSequence(
            self.seed_record["seed"], spawn_key=tuple(self.seed_record.get("spawn_key", ()))
        )

    def estimate(self) -> list[Estimate]:
        """The kind's estimate of each stage's peak memory and work (see
        :mod:`dpgames.scenarios.budget`).

        Returns
        -------
        list of Estimate
        """
        return list(self.kind.estimate(self.spec))

    def build(self) -> Run:
        """The kind's run objects (population, mechanisms ...) from the seed, as :meth:`run` has
        them.

        Returns
        -------
        Run
        """
        return self.kind.build(self.spec, self.seed)

    def run(self, budget: Budget | None = None) -> Result:
        """Check the estimate against ``budget`` (a :class:`~dpgames.scenarios.budget.BudgetError`
        names the option that raises it), build, run, and check the Result against the kind's
        invariants.

        Parameters
        ----------
        budget : Budget, optional
            Default limits if None.

        Returns
        -------
        Result
            With title and provenance set.
        """
        (budget or Budget()).check_all(self.estimate(), self.source)
        result = checked_result(self.name, self.kind.run(self.build()), self.kind.METRICS)
        check_result(result, self.kind.INVARIANTS)  # a bug report, before anyone sees it
        result.title = self.title
        result.provenance = {
            "scenario": self.source,
            "scenario_sha256": self.sha256,
            **self.seed_record,
            **versions(),
            **result.provenance,
        }
        return result


def _check_depth(data: dict[str, Any], source: str) -> None:
    """Refuse tables and arrays nested deeper than ``MAX_DEPTH`` (an iterative walk: no
    recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ScenarioError(
                f"{source}: tables or arrays nested more than {MAX_DEPTH} levels deep"
            )
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))


def _seed_sequence(
    source: str, seed: int | np.random.SeedSequence | None, file_seed: int | None
) -> tuple[np.random.SeedSequence, dict[str, Any]]:
    """The run's SeedSequence and its provenance record ({"seed": entropy[, "spawn_key":
    [...]]})."""
    if isinstance(seed, np.random.SeedSequence):
        # A fresh copy: kinds call seed.spawn(), which would otherwise advance the caller's object.
        fresh = np.random.SeedSequence(
            seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size
        )
        return fresh, {"seed": seed.entropy, "spawn_key": list(seed.spawn_key)}
    if seed is not None and (not isinstance(seed, int) or seed < 0):
        raise ScenarioError(f"{source}: seed must be a whole number >= 0 (got {seed!r})")
    root = seed if seed is not None else file_seed
    if root is None:
        root = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]  # drawn from the OS: an int
    return np.random.SeedSequence(root), {"seed": root}


def versions() -> dict[str, str]:
    """The versions a Result's provenance records.

    Returns
    -------
    dict
        ``{"dpgames": ..., "numpy": ..., "python": ...}``.
    """
    from dpgames import __version__

    return {"dpgames": __version__, "numpy": np.__version__, "python": platform.python_version()}


def run_scenario(
    path: str | Path,
    seed: int | np.random.SeedSequence | None = None,
    overrides: dict[str, Any] | None = None,
    data_dirs: Sequence[str | Path] = (),
    budget: Budget | None = None,
) -> Result:
    """Run a scenario file and return its :class:`Result`.

    Parameters
    ----------
    path : str or Path
    seed : int or numpy.random.SeedSequence, optional
        Overrides the file's ``seed``.
    overrides : dict, optional
        Dotted fields replaced before validation (see :meth:`Scenario.with_overrides`).
    data_dirs : sequence of str or Path
        Further folders its data files may come from, as ``--data-dir``.
    budget : Budget, optional
        Limits on the estimated memory and work (default limits if None).

    Returns
    -------
    Result

    Raises
    ------
    ScenarioError
        An invalid file or field, an unknown kind, or a run over the budget
        (:class:`~dpgames.scenarios.budget.BudgetError`).
    """
    scenario = Scenario.from_file(path, data_dirs)
    if overrides:
        scenario = scenario.with_overrides(overrides)
    return scenario.run(seed, budget)
