"""The scenario-kind protocol: what a module registered in the entry-point group ``dpgames.kinds``
implements, for dpgames' own kinds (:mod:`dpgames.scenarios.digital_goods` is the model) and for
other packages' alike (see :mod:`dpgames.scenarios.registry` for how a kind is registered and found).

A kind is a module (or any object) with two functions and, optionally, a one-line description:

``DESCRIPTION: str`` (optional)
    One line for ``dpgames kinds``; without it, the module docstring's first paragraph is shown.

``EXAMPLES: list[pathlib.Path]`` (optional)
    Example scenario files the package ships (package data); the app's scenarios page offers them
    beside ``scenarios/*.toml``.

``parse(top: Table) -> spec``
    Read and validate every field the kind uses through ``top`` (a :class:`~dpgames.scenarios.spec.Table`
    of the whole file; ``kind``, ``title``, ``seed`` and ``[sweep]`` are read by the loader), calling
    ``done()`` on each sub-table it opens, so that a typo is an error.  Bad values raise the
    :class:`~dpgames.scenarios.spec.ScenarioError` of ``table.error(field, "must be ...")``.  Nothing
    heavy runs here: the spec holds parsed, validated values (not closures over tables), and a sweep
    parses every cell before it runs it.

``run(spec, seed: numpy.random.SeedSequence) -> Result``
    Run the scenario.  Every random draw comes from ``seed`` (``numpy.random.default_rng(seed)``, or
    ``seed.spawn(k)`` for independent streams), so that the same seed gives the same Result in this
    process, in a sweep's worker process or on a Dask worker.

``estimate(spec) -> list[dpgames.scenarios.budget.Estimate]`` (optional)
    The peak memory and work of each stage of ``run``, from the spec's sizes alone, in microseconds:
    the loader refuses a run over ``--max-memory`` / ``--max-work`` before it starts (see
    :mod:`dpgames.scenarios.budget`).  Without it the kind runs unchecked.

``show_metric(key: str, value, text: str) -> str`` (optional)
    A metric as the command line's text and the app's table show it: ``text`` (the value formatted),
    perhaps with a remark, e.g. a bound marked vacuous.  The JSON output keeps the plain value and label.

What a kind puts in the :class:`~dpgames.scenarios.result.Result` it returns:

- ``kind``: its registered name (checked); ``title``: ``""`` (the loader sets it from the file);
- ``metrics``: a flat dict, in display order, of metric name -> number, bool or short string.  Names
  are stable identifiers (a sweep summarises each metric by name across cells, with a 95% CI), and the
  same names come out of every run of the kind for the same fields.  A figure is exact (say so in its
  label, e.g. "expected welfare (exact)"), or a Monte Carlo estimate with its interval in
  ``NAME_ci_low`` / ``NAME_ci_high`` metrics beside it: never an estimate presented as exact;
- ``labels`` (optional): a human-readable label per metric name;
- ``tables`` (optional): table name -> {column name -> list}, columns of equal length;
- ``provenance`` (optional): what else reproduces the run (e.g. ``{"guarantee": "0.5-DP"}``); the
  loader adds the scenario file, its SHA-256, the seed and the versions.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpgames.scenarios.registry import KindError
from dpgames.scenarios.result import Result
from dpgames.scenarios.spec import Table


@runtime_checkable
class ScenarioKind(Protocol):
    """A scenario kind: ``parse`` a scenario file's tables into a spec, ``run`` a spec from a seed.

    Modules satisfy it structurally (``def parse`` and ``def run`` at module level); the module
    docstring above says what each must do and what the Result must hold."""

    def parse(self, top: Table) -> Any:
        """Read and validate the file's fields (calling ``done()`` on each sub-table) into a spec.

        Parameters
        ----------
        top : Table
            The whole file.

        Returns
        -------
        object
            The kind's spec: parsed values only.

        Raises
        ------
        ScenarioError
            A missing, unknown or invalid field (``table.error(field, "must be ...")``).
        """

    def run(self, spec: Any, seed: np.random.SeedSequence) -> Result:
        """Run the spec, drawing every random number from ``seed``.

        Parameters
        ----------
        spec : object
            What :meth:`parse` returned.
        seed : numpy.random.SeedSequence
            The run's root seed.

        Returns
        -------
        Result
        """


def checked_result(kind: str, result: Any) -> Result:
    """``result`` if it is a :class:`Result` of ``kind``.

    Parameters
    ----------
    kind : str
        The registered name the kind ran under.
    result : object
        What its ``run`` returned.

    Returns
    -------
    Result

    Raises
    ------
    KindError
        ``result`` is not a Result, or is a Result of another kind.
    """
    if not isinstance(result, Result):
        raise KindError(f"scenario kind {kind!r}: run() returned {type(result).__name__}, not a "
                        "dpgames.scenarios.Result (see dpgames.scenarios.kind)")
    if result.kind != kind:
        raise KindError(f"scenario kind {kind!r}: run() returned a Result of kind {result.kind!r}; "
                        f"it must be {kind!r}, the name the kind is registered under")
    return result
