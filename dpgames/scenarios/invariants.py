"""What every :class:`~dpgames.scenarios.result.Result` must satisfy before anyone sees it.

A figure dpgames prints is exact, an estimate with its interval, or refused; a figure that breaks a
theorem is none of these, it is a bug.  Each scenario kind declares its invariants in one place, its
``INVARIANTS`` member (see :mod:`dpgames.scenarios.kind`): rules on the metrics it declares (the
:class:`~dpgames.scenarios.result.Metric` objects of its ``METRICS``, never their names retyped),
each with the statement it checks, e.g.

    at_most(MAX_PRIVACY_LOSS, PRIVACY_LOSS_BOUND, "a privacy loss is at most the guarantee")

The loader calls :func:`check_result` on every Result a kind returns (:meth:`ParsedScenario.run
<dpgames.scenarios.loader.ParsedScenario.run>`), before it is printed, saved or summarised.  A
violation raises :class:`InvariantError`: *not* a :class:`ValueError` (the input was fine), but an
:class:`InternalError` naming the kind, the metric, its value and the invariant (the command line
exits with 1).

Rules for every kind (:data:`COMMON`): every number is finite, except a metric the kind names, one
by one, as one whose true value may be ``+inf`` (:func:`may_be_infinite`: when it may be infinite
and why, e.g. the privacy loss of a mechanism without noise); ``NAME_ci_low <= NAME_ci_high``, and
any metric named ``*probability*`` / ``prob_*`` lies in [0, 1].

Comparisons allow for rounding: ``x <= bound`` holds when ``x <= bound + rel * |bound| + abs``
(defaults ``rel = 1e-9``, ``abs = 1e-12``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, TypeGuard

from dpgames.scenarios.result import Metric

REL_TOL = 1e-9
ABS_TOL = 1e-12

#: A bound: a number, another declared metric, or a function of the metrics (None: the rule does not
#: apply).
Bound = float | Metric | Callable[[Mapping[str, Any]], Any]
#: The metrics a rule applies to: a declared metric, or an :func:`fnmatch` pattern (the rules of
#: every kind).
Target = Metric | str


class InternalError(RuntimeError):
    """A bug in dpgames or in a plugin kind, never bad input: the command line exits with 1 and says
    so."""


class InvariantError(InternalError):
    """A Result broke an invariant: a bug in dpgames (or in a plugin kind), never bad input.

    ``kind``, ``metric`` (a metric name, or ``table.column``), ``value`` and ``invariant`` (the
    statement) say what broke."""

    def __init__(self, kind: str, metric: str, value: Any, invariant: str):
        self.kind, self.metric, self.value, self.invariant = kind, metric, value, invariant
        # (str() of a huge int may itself fail)
        huge = isinstance(value, int) and abs(value) > 10**30
        shown = (
            f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
            if huge
            else repr(value)
        )
        super().__init__(
            f"internal error (a bug, please report it): scenario kind {kind!r} produced "
            f"{metric} = {shown}, which violates: {invariant}"
        )


@dataclass(frozen=True)
class Rule:
    """Metrics matching ``pattern`` must satisfy ``holds(value, metrics)``; ``None`` from ``holds``
    means the rule does not apply (e.g. its bound is missing or not a number)."""

    pattern: str
    holds: Callable[[Any, Mapping[str, Any]], bool | None]
    statement: str
    numbers_only: bool = True
    #: A value that breaks the rule given the other metrics (``None``: none can be built): for
    #: tests.
    violating: Callable[[Mapping[str, Any]], Any] | None = None

    def violations(self, metrics: Mapping[str, Any]) -> Iterable[tuple[str, Any]]:
        """The (name, value) of each matching metric that breaks the rule.

        Parameters
        ----------
        metrics : mapping

        Returns
        -------
        iterable of (str, object)
        """
        for name, value in metrics.items():
            if not fnmatchcase(name, self.pattern):
                continue
            if self.numbers_only and not _is_number(value):
                continue
            if self.holds(value, metrics) is False:
                yield name, value


@dataclass(frozen=True)
class TableRule:
    """Column ``column`` of table ``table`` holds probabilities in [0, 1]; with ``complete`` (a
    predicate of the metrics and the table) they also sum to 1 when the table lists the whole
    law."""

    table: str
    column: str
    statement: str
    complete: Callable[[Mapping[str, Any], Mapping[str, list]], bool] | None = None

    def violations(
        self, tables: Mapping[str, Mapping[str, list]], metrics: Mapping[str, Any]
    ) -> Iterator[tuple[str, Any, str]]:
        """The (name, value, statement) of the first broken rule of the column, if any.

        Parameters
        ----------
        tables : mapping
        metrics : mapping

        Returns
        -------
        iterable of (str, object, str)
        """
        columns = tables.get(self.table)
        if not columns or self.column not in columns:
            return
        values = [v for v in columns[self.column] if _is_number(v)]
        name = f"table {self.table}.{self.column}"
        for v in columns[self.column]:
            if isinstance(v, str) and v in ("nan", "inf", "-inf"):
                yield name, v, "a probability is a finite number"
                return
        for v in values:
            if not (-ABS_TOL <= v <= 1 + ABS_TOL):
                yield name, v, "a probability lies in [0, 1]"
                return
        if self.complete is not None and values and self.complete(metrics, columns):
            total = math.fsum(values)
            if abs(total - 1) > 1e-9:
                yield f"sum of {name}", total, "a law's probabilities sum to 1"


@dataclass(frozen=True)
class Infinite:
    """Metric ``metric`` (its exact name) may be ``+inf``, when ``when(metrics)`` holds (always when
    ``when`` is None): ``statement`` says why ``inf`` is then the true value.  Never ``nan`` or
    ``-inf``."""

    metric: str
    statement: str = ""
    when: Callable[[Mapping[str, Any]], bool] | None = None

    def allows(self, name: str, text: str, metrics: Mapping[str, Any]) -> bool:
        """Whether the figure ``name`` printed as ``text`` ("inf", "-inf" or "nan") is this
        documented infinity.

        Parameters
        ----------
        name, text : str
        metrics : mapping

        Returns
        -------
        bool
        """
        return (
            name == self.metric
            and text == "inf"
            and (self.when is None or bool(self.when(metrics)))
        )


@dataclass
class Invariants:
    """The rules of one kind: metric rules, table rules and the metrics allowed to be ``inf``."""

    rules: list[Rule] = field(default_factory=list)
    tables: list[TableRule] = field(default_factory=list)
    infinite_ok: list[Infinite] = field(default_factory=list)


def _is_number(x: object) -> TypeGuard[float]:
    """An int or a float, not a bool (a metric's number; ``int`` counts as ``float`` for the type
    checker)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _fits_float(x: float) -> bool:
    try:
        float(x)
    except OverflowError:
        return False
    return True


def _pattern(target: Target) -> str:
    return target.name if isinstance(target, Metric) else target


def _resolve(bound: Bound, metrics: Mapping[str, Any]) -> float | None:
    if isinstance(bound, Metric):
        value = metrics.get(bound.name)
    elif callable(bound):
        value = bound(metrics)
    else:
        value = bound
    if not _is_number(value) or not _fits_float(value) or math.isnan(float(value)):
        return None
    return float(value)


def _le(x: float, bound: float, rel: float, abs_: float) -> bool:
    return x <= bound + rel * abs(bound) + abs_


def _one_sided(
    target: Target, bound: Bound, statement: str, side: int, rel: float, abs_: float
) -> Rule:
    """``metric <= bound`` (``side = +1``) or ``metric >= bound`` (``side = -1``), up to rounding;
    the planted violation (for the tests) lies beyond the bound on that side."""

    def holds(x, metrics):
        b = _resolve(bound, metrics)
        return None if b is None else _le(side * x, side * b, rel, abs_)

    def violating(metrics):
        b = _resolve(bound, metrics)
        return None if b is None else b + side * (1.0 + 2 * abs(b))

    return Rule(_pattern(target), holds, statement, violating=violating)


def at_most(
    target: Target, high: Bound, statement: str, rel: float = REL_TOL, abs_: float = ABS_TOL
) -> Rule:
    """``metric <= high``, up to a relative and absolute rounding slack.

    Parameters
    ----------
    target : Metric or str
        The declared metric it applies to (or an ``fnmatch`` pattern of names: the rules of every
        kind).
    high : float, Metric or callable
        A number, another declared metric, or a function of the metrics (None from it: the rule does
        not apply).
    statement : str
        The theorem or fact, in words (shown when it breaks).
    rel, abs_ : float
        Rounding slack.

    Returns
    -------
    Rule

    Examples
    --------
    >>> rule = at_most(
    ...     Metric("gain", "a gain"), Metric("bound", "its bound"), "a gain is within its bound"
    ... )
    >>> (
    ...     list(rule.violations({"gain": 0.3, "bound": 0.2})),
    ...     list(rule.violations({"gain": 0.1, "bound": 0.2})),
    ... )
    ([('gain', 0.3)], [])
    """
    return _one_sided(target, high, statement, +1, rel, abs_)


def at_least(
    target: Target, low: Bound, statement: str, rel: float = REL_TOL, abs_: float = ABS_TOL
) -> Rule:
    """``metric >= low`` (see :func:`at_most`).

    Parameters
    ----------
    target : Metric or str
    low : float, Metric or callable
    statement : str
    rel, abs_ : float

    Returns
    -------
    Rule
    """
    return _one_sided(target, low, statement, -1, rel, abs_)


def within(target: Target, low: Bound, high: Bound, statement: str) -> list[Rule]:
    """``low <= metric <= high`` (see :func:`at_most`).

    Parameters
    ----------
    target : Metric or str
    low, high : float, Metric or callable
    statement : str

    Returns
    -------
    list of Rule
    """
    return [at_least(target, low, statement), at_most(target, high, statement)]


def is_true(metric: Metric, statement: str) -> Rule:
    """A boolean metric that a theorem makes true.

    Parameters
    ----------
    metric : Metric
    statement : str

    Returns
    -------
    Rule
    """
    return Rule(
        metric.name,
        lambda x, _: x is True,
        statement,
        numbers_only=False,
        violating=lambda _: False,
    )


def probability_column(
    table: str,
    column: str,
    whole_law: Callable[[Mapping[str, Any], Mapping[str, list]], bool] | None = None,
) -> TableRule:
    """A table column of probabilities (summing to 1 when ``whole_law`` says the table is complete).

    Parameters
    ----------
    table, column : str
    whole_law : callable, optional
        ``whole_law(metrics, columns) -> bool``.

    Returns
    -------
    TableRule
    """
    return TableRule(table, column, "a probability lies in [0, 1]", whole_law)


def may_be_infinite(
    *metrics: Metric, when: Callable[[Mapping[str, Any]], bool] | None = None, statement: str = ""
) -> list[Infinite]:
    """Metrics whose documented true value may be ``+inf`` (say so in the kind's docs), each one by
    one (no pattern: one metric's allowance never covers another).

    Parameters
    ----------
    *metrics : Metric
        Declared metrics.
    when : callable, optional
        ``when(metrics) -> bool``: the other figures under which ``inf`` is the true value (e.g.
        "the mechanism adds no noise"); always when None.
    statement : str
        Why ``inf`` is then the true value.

    Returns
    -------
    list of Infinite

    Examples
    --------
    >>> EPSILON, SIGMA = Metric("epsilon", "privacy"), Metric("sigma", "noise scale")
    >>> [rule] = may_be_infinite(
    ...     EPSILON, when=lambda m: value_of(m, SIGMA) == 0, statement="no noise"
    ... )
    >>> rule.allows("epsilon", "inf", {"sigma": 0.0}), rule.allows("epsilon", "inf", {"sigma": 1.0})
    (True, False)
    """
    return [Infinite(metric.name, statement, when) for metric in metrics]


def value_of(metrics: Mapping[str, Any], metric: Metric) -> Any:
    """The figure of ``metric`` among ``metrics`` (None when the run did not record it): for the
    functions of the metrics a bound may be.

    Parameters
    ----------
    metrics : mapping
    metric : Metric

    Returns
    -------
    object
    """
    return metrics.get(metric.name)


def number_or_nan(metrics: Mapping[str, Any], metric: Metric) -> float:
    """The figure of ``metric`` if it is a number, else ``nan`` (a bound built from it then does not
    apply).

    Parameters
    ----------
    metrics : mapping
    metric : Metric

    Returns
    -------
    float
    """
    value = metrics.get(metric.name)
    return float(value) if _is_number(value) and _fits_float(value) else math.nan


def rows_equal(count: Metric) -> Callable[[Mapping[str, Any], Mapping[str, list]], bool]:
    """A ``whole_law`` predicate for :func:`probability_column`: the table is the whole law when it
    has as many rows as the metric ``count`` counts outcomes (a number, or a text such as ``"5,000
    prices"``).

    Parameters
    ----------
    count : Metric

    Returns
    -------
    callable
    """

    def complete(metrics, columns):
        value = metrics.get(count.name)
        if isinstance(value, str):  # "250 prices", "5,000 prices"
            head = value.split(" ", 1)[0].replace(",", "")
            value = int(head) if head.isdigit() else None
        rows = len(next(iter(columns.values())))
        return _is_number(value) and rows == value

    return complete


COMMON = Invariants(
    rules=[
        *within("*probability*", 0.0, 1.0, "a probability lies in [0, 1]"),
        *within("prob_*", 0.0, 1.0, "a probability lies in [0, 1]"),
    ]
)


def check_result(result: Any, invariants: Invariants) -> None:
    """Raise :class:`InvariantError` at the first invariant ``result`` breaks: :data:`COMMON` or the
    kind's own ``invariants`` (see the module docstring).

    Parameters
    ----------
    result : Result
    invariants : Invariants
        The kind's ``INVARIANTS``.

    Raises
    ------
    InvariantError
        A figure that is not finite (unless allowed), an interval upside down, or a broken rule.
    """
    metrics = result.metrics
    infinite_ok = [*COMMON.infinite_ok, *invariants.infinite_ok]
    for name, value in metrics.items():
        # Result stores non-finite floats as the strings "nan", "inf", "-inf" (JSON has no such
        # numbers)
        text = str(value) if isinstance(value, (float, str)) else ""
        if _is_number(value) and not _fits_float(value):
            raise InvariantError(result.kind, name, value, "a figure is a number that fits a float")
        if text in ("nan", "inf", "-inf"):
            if not any(rule.allows(name, text, metrics) for rule in infinite_ok):
                raise InvariantError(
                    result.kind, name, value, "a figure is a finite number (or a documented +inf)"
                )
    for name, value in metrics.items():
        if name.endswith("_ci_low") and _is_number(value):
            high = metrics.get(name[: -len("_ci_low")] + "_ci_high")
            if _is_number(high) and not _le(value, high, REL_TOL, ABS_TOL):
                raise InvariantError(
                    result.kind,
                    name,
                    value,
                    f"a confidence interval's low end is at most its high end ({high!r})",
                )
    for rule in [*COMMON.rules, *invariants.rules]:
        for name, value in rule.violations(metrics):
            raise InvariantError(result.kind, name, value, rule.statement)
    for table_rule in [*COMMON.tables, *invariants.tables]:
        for name, value, statement in table_rule.violations(result.tables, metrics):
            raise InvariantError(result.kind, name, value, statement)
