"""The scenario-kind contract: what every kind implements, dpgames' own and other packages' alike.

A kind is registered in the entry-point group ``dpgames.kinds`` (see
:mod:`dpgames.scenarios.registry`) under the name scenario files give as ``kind``; the entry point
names a module (or any object) with every member of :class:`ScenarioKind` below.  None is optional
and nothing else is looked up: the registry checks the members once, when the kind is first used,
and refuses a kind that lacks one. The one contract test (``tests/test_kind_contract.py``) checks
every registered kind against it.

Data flows one way::

    Table --parse--> spec --build(spec, seed)--> run --run--> Result --INVARIANTS--> the user
                      \\--estimate--> memory and work, checked against the budget before build

``DESCRIPTION: str``
    One line for ``dpgames kinds`` and the app.
``EXAMPLES: tuple[pathlib.Path, ...]``
    Example scenario files the package ships (package data; ``()`` when none); the app's scenarios
    page offers them beside ``scenarios/*.toml``.
``METRICS: MetricSet``
    Every metric a run may record, each declared once (:meth:`MetricSet.add
    <dpgames.scenarios.result.MetricSet.add>`: its name, meaning, unit, the theorem a bound comes
    from, and ``gain_bound=True`` for a bound on a gain from a lie, which the text and the app's
    table mark vacuous from 1 up).  ``run`` records them through
    :class:`~dpgames.scenarios.result.Metrics` and the invariants name them by these objects.
``INVARIANTS: Invariants``
    What a Result of the kind must satisfy beyond the common rules
    (:mod:`dpgames.scenarios.invariants`).
``data_roots() -> tuple[pathlib.Path, ...]``
    Folders, besides the scenario's own and those the user names (``--data-dir``), that its data
    paths may name (e.g. a default folder of road networks); ``()`` for most kinds.
``parse(top: Table) -> Spec``
    Read and validate every field the kind uses through ``top`` (the whole file; ``kind``,
    ``title``, ``seed`` and ``[sweep]`` are read by the loader), calling ``done()`` on each
    sub-table it opens so a typo is an error.  Nothing heavy runs here: a sweep parses every cell
    before it runs it.
``estimate(spec) -> list[Estimate]``
    The peak memory and work of each stage, from the spec's sizes alone (see
    :mod:`dpgames.scenarios.budget`): a run over ``--max-memory`` / ``--max-work`` is refused before
    it starts.
``build(spec, seed: numpy.random.SeedSequence) -> Run``
    The run's population, mechanisms and other objects, every random draw from ``seed`` (split with
    :func:`~dpgames.scenarios.streams.child_streams`), so one seed gives one Result in this process,
    in a sweep's worker or on a Dask worker.  The app starts from the same object, so it shows the
    numbers ``dpgames run`` prints.
``run(run) -> Result``
    The measurements, as a :class:`~dpgames.scenarios.result.Result` of this kind (``title`` empty:
    the loader sets it and the provenance).

Bad input is reported in ``parse`` and ``build`` only, each error naming its field: a
:class:`~dpgames.validation.ValidationError` raised by the library inside them is attributed to a
field of the table being read from its own ``field`` (:meth:`FieldPath.fields
<dpgames.scenarios.spec.FieldPath.fields>`); any other exception is a bug, reported as one.

What a Result holds:

- ``metrics``: a flat dict, in display order, of declared metric -> number, bool or short string.  A
  figure is exact (say so in its label), or a Monte Carlo estimate with its interval in
  ``NAME_ci_low`` / ``NAME_ci_high`` metrics beside it: never an estimate presented as exact;
- ``labels``: a human-readable label per metric (this run's wording);
- ``tables`` (optional): table name -> {column name -> list}, columns of equal length;
- ``provenance`` (optional): what else reproduces the run (e.g. ``{"guarantee": "0.5-DP"}``); the
  loader adds the scenario file, its SHA-256, the seed and the versions.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from dpgames.scenarios.invariants import InternalError, Invariants
from dpgames.scenarios.result import MetricSet, Result
from dpgames.scenarios.spec import Table

if TYPE_CHECKING:
    import numpy as np

    from dpgames.scenarios.budget import Estimate

Spec = TypeVar("Spec")
Run = TypeVar("Run")


@runtime_checkable
class ScenarioKind(Protocol[Spec, Run]):
    """A scenario kind (see the module docstring for what each member must do).

    Modules satisfy it structurally: every member defined at module level."""

    DESCRIPTION: str
    EXAMPLES: tuple[Path, ...]
    METRICS: MetricSet
    INVARIANTS: Invariants

    def data_roots(self) -> tuple[Path, ...]:
        """Further folders its data paths may name (``()``: only the scenario's and
        ``--data-dir``)."""
        ...

    def parse(self, top: Table) -> Spec:
        """Read and validate the file's fields into a spec.

        Parameters
        ----------
        top : Table
            The whole file.

        Returns
        -------
        Spec
            Parsed values only.

        Raises
        ------
        ScenarioError
            A missing, unknown or invalid field, named.
        """
        ...

    def estimate(self, spec: Spec) -> list[Estimate]:
        """Peak memory and work of each stage of a run, from the spec's sizes alone.

        Parameters
        ----------
        spec : Spec

        Returns
        -------
        list of Estimate
        """
        ...

    def build(self, spec: Spec, seed: np.random.SeedSequence) -> Run:
        """The run's objects, every random draw from ``seed``.

        Parameters
        ----------
        spec : Spec
        seed : numpy.random.SeedSequence
            The run's root seed (not advanced: derive streams with ``child_streams``).

        Returns
        -------
        Run

        Raises
        ------
        ScenarioError
            The spec's values cannot be built together (naming the field).
        """
        ...

    def run(self, run: Run) -> Result:
        """The run's measurements.

        Parameters
        ----------
        run : Run
            What :meth:`build` returned.

        Returns
        -------
        Result
        """
        ...


#: The members of the contract, in the order the module docstring gives them.
MEMBERS = (
    "DESCRIPTION",
    "EXAMPLES",
    "METRICS",
    "INVARIANTS",
    "data_roots",
    "parse",
    "estimate",
    "build",
    "run",
)


def missing_members(kind: object) -> list[str]:
    """The members of :class:`ScenarioKind` that ``kind`` lacks or holds with the wrong type.

    Parameters
    ----------
    kind : module or object

    Returns
    -------
    list of str
        Each as ``"NAME (what it must be)"``; empty when ``kind`` satisfies the contract.
    """
    wanted: dict[str, tuple[Any, str]] = {
        "DESCRIPTION": (str, "a str"),
        "EXAMPLES": (tuple, "a tuple of paths"),
        "METRICS": (MetricSet, "a MetricSet"),
        "INVARIANTS": (Invariants, "an Invariants"),
    }
    out = []
    for name in MEMBERS:
        value = getattr(kind, name, None)
        if name in wanted:
            kind_of, what = wanted[name]
            if not isinstance(value, kind_of):
                out.append(f"{name} ({what})")
        elif not callable(value):
            out.append(f"{name} (a function)")
    return out


def checked_result(kind: str, result: object, metrics: MetricSet) -> Result:
    """``result`` if it is a :class:`Result` of ``kind`` whose metrics are all declared in
    ``metrics``.

    Parameters
    ----------
    kind : str
        The registered name the kind ran under.
    result : object
        What its ``run`` returned.
    metrics : MetricSet
        The kind's ``METRICS``.

    Returns
    -------
    Result

    Raises
    ------
    InternalError
        ``result`` is not a Result, is a Result of another kind, or records an undeclared metric: a
        bug in the kind, not bad input.
    """
    bug = "internal error (a bug in the scenario kind, please report it):"
    if not isinstance(result, Result):
        raise InternalError(
            f"{bug} scenario kind {kind!r}: run() returned {type(result).__name__}, not a "
            "dpgames.scenarios.Result (see dpgames.scenarios.kind)"
        )
    if result.kind != kind:
        raise InternalError(
            f"{bug} scenario kind {kind!r}: run() returned a Result of kind {result.kind!r}; "
            f"it must be {kind!r}, the name the kind is registered under"
        )
    undeclared = [name for name in result.metrics if name not in metrics]
    if undeclared:
        raise InternalError(
            f"{bug} scenario kind {kind!r}: run() recorded metrics its METRICS does not declare: "
            f"{', '.join(undeclared[:5])}"
        )
    return result
