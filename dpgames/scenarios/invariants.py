"""What every :class:`~dpgames.scenarios.result.Result` must satisfy before anyone sees it.

A figure dpgames prints is exact, an estimate with its interval, or refused; a figure that breaks a
theorem is none of these, it is a bug.  Each scenario kind declares its invariants here as data: rules
keyed by metric name (an :func:`fnmatch` pattern), each with the statement it checks, e.g.

    at_most("max_privacy_loss", "privacy_loss_bound", "a privacy loss is at most the guarantee")

The loader calls :func:`check_result` on every Result a kind returns (:meth:`Scenario.run
<dpgames.scenarios.loader.Scenario.run>`), before it is printed, saved or summarised.  A violation
raises :class:`InvariantError`: *not* a :class:`ValueError` (the input was fine), but an internal error
naming the kind, the metric, its value and the invariant (the command line exits with 1).

Rules for every kind (:data:`COMMON`): every number is finite, except a metric the kind names, one by
one, as one whose true value may be ``+inf`` (:func:`may_be_infinite`: the metric's exact name, when it
may be infinite and why, e.g. the privacy loss of a mechanism without noise); ``NAME_ci_low <= NAME_ci_high``, and
any metric named ``*probability*`` / ``prob_*`` lies in [0, 1].  The built-in kinds add their theorems
(:data:`RULES`).  A plugin kind declares its own by a module attribute ``INVARIANTS`` (a list of rules
built with the functions below) or by :func:`register`; both add to :data:`COMMON`.

Comparisons allow for rounding: ``x <= bound`` holds when ``x <= bound + rel * |bound| + abs``
(defaults ``rel = 1e-9``, ``abs = 1e-12``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, TypeGuard

REL_TOL = 1e-9
ABS_TOL = 1e-12

Bound = float | str | Callable[[Mapping[str, Any]], Any]


class InvariantError(RuntimeError):
    """A Result broke an invariant: a bug in dpgames (or in a plugin kind), never bad input.

    ``kind``, ``metric`` (a metric name, or ``table.column``), ``value`` and ``invariant`` (the
    statement) say what broke."""

    def __init__(self, kind: str, metric: str, value: Any, invariant: str):
        self.kind, self.metric, self.value, self.invariant = kind, metric, value, invariant
        huge = isinstance(value, int) and abs(value) > 10**30   # (str() of a huge int may itself fail)
        shown = f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits" if huge else repr(value)
        super().__init__(f"internal error (a bug, please report it): scenario kind {kind!r} produced "
                         f"{metric} = {shown}, which violates: {invariant}")


@dataclass(frozen=True)
class Rule:
    """Metrics matching ``pattern`` must satisfy ``holds(value, metrics)``; ``None`` from ``holds``
    means the rule does not apply (e.g. its bound is missing or not a number)."""

    pattern: str
    holds: Callable[[Any, Mapping[str, Any]], bool | None]
    statement: str
    numbers_only: bool = True
    #: A value that breaks the rule given the other metrics (``None``: none can be built): for tests.
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
    predicate of the metrics and the table) they also sum to 1 when the table lists the whole law."""

    table: str
    column: str
    statement: str
    complete: Callable[[Mapping[str, Any], Mapping[str, list]], bool] | None = None

    def violations(self, tables: Mapping[str, Mapping[str, list]],
                   metrics: Mapping[str, Any]) -> Iterator[tuple[str, Any, str]]:
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
    ``when`` is None): ``statement`` says why ``inf`` is then the true value.  Never ``nan`` or ``-inf``."""

    metric: str
    statement: str = ""
    when: Callable[[Mapping[str, Any]], bool] | None = None

    def allows(self, name: str, text: str, metrics: Mapping[str, Any]) -> bool:
        """Whether the figure ``name`` printed as ``text`` ("inf", "-inf" or "nan") is this documented infinity.

        Parameters
        ----------
        name, text : str
        metrics : mapping

        Returns
        -------
        bool
        """
        return name == self.metric and text == "inf" and (self.when is None or bool(self.when(metrics)))


@dataclass
class Invariants:
    """The rules of one kind: metric rules, table rules and the metrics allowed to be ``inf``."""

    rules: list[Rule] = field(default_factory=list)
    tables: list[TableRule] = field(default_factory=list)
    infinite_ok: list[Infinite] = field(default_factory=list)


def _is_number(x: object) -> TypeGuard[float]:
    """An int or a float, not a bool (a metric's number; ``int`` counts as ``float`` for the type checker)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _fits_float(x: float) -> bool:
    try:
        float(x)
    except OverflowError:
        return False
    return True


def _resolve(bound: Bound, metrics: Mapping[str, Any]) -> float | None:
    if isinstance(bound, str):
        value = metrics.get(bound)
    elif callable(bound):
        value = bound(metrics)
    else:
        value = bound
    if not _is_number(value) or not _fits_float(value) or math.isnan(float(value)):
        return None
    return float(value)


def _le(x: float, bound: float, rel: float, abs_: float) -> bool:
    return x <= bound + rel * abs(bound) + abs_


def _one_sided(pattern: str, bound: Bound, statement: str, side: int, rel: float, abs_: float) -> Rule:
    """``metric <= bound`` (``side = +1``) or ``metric >= bound`` (``side = -1``), up to rounding; the
    planted violation (for the tests) lies beyond the bound on that side."""
    def holds(x, metrics):
        b = _resolve(bound, metrics)
        return None if b is None else _le(side * x, side * b, rel, abs_)

    def violating(metrics):
        b = _resolve(bound, metrics)
        return None if b is None else b + side * (1.0 + 2 * abs(b))
    return Rule(pattern, holds, statement, violating=violating)


def at_most(pattern: str, high: Bound, statement: str, rel: float = REL_TOL, abs_: float = ABS_TOL) -> Rule:
    """``metric <= high``, up to a relative and absolute rounding slack.

    Parameters
    ----------
    pattern : str
        Metric names it applies to (``fnmatch`` pattern: ``"*_gain"``).
    high : float, str or callable
        A number, another metric's name, or a function of the metrics (None from it: the rule does
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
    >>> rule = at_most("gain", "bound", "a gain is within its bound")
    >>> list(rule.violations({"gain": 0.3, "bound": 0.2})), list(rule.violations({"gain": 0.1, "bound": 0.2}))
    ([('gain', 0.3)], [])
    """
    return _one_sided(pattern, high, statement, +1, rel, abs_)


def at_least(pattern: str, low: Bound, statement: str, rel: float = REL_TOL, abs_: float = ABS_TOL) -> Rule:
    """``metric >= low`` (see :func:`at_most`).

    Parameters
    ----------
    pattern : str
    low : float, str or callable
    statement : str
    rel, abs_ : float

    Returns
    -------
    Rule
    """
    return _one_sided(pattern, low, statement, -1, rel, abs_)


def within(pattern: str, low: Bound, high: Bound, statement: str) -> list[Rule]:
    """``low <= metric <= high`` (see :func:`at_most`).

    Parameters
    ----------
    pattern : str
    low, high : float, str or callable
    statement : str

    Returns
    -------
    list of Rule
    """
    return [at_least(pattern, low, statement), at_most(pattern, high, statement)]


def is_true(pattern: str, statement: str) -> Rule:
    """A boolean metric that a theorem makes true.

    Parameters
    ----------
    pattern : str
    statement : str

    Returns
    -------
    Rule
    """
    return Rule(pattern, lambda x, _: x is True, statement, numbers_only=False, violating=lambda _: False)


def probability_column(table: str, column: str, whole_law: Callable[[Mapping[str, Any], Mapping[str, list]], bool] | None = None) -> TableRule:
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


def may_be_infinite(*metrics: str, when: Callable[[Mapping[str, Any]], bool] | None = None,
                    statement: str = "") -> list[Infinite]:
    """Metrics whose documented true value may be ``+inf`` (say so in the kind's docs), each by its
    exact name (no pattern: one metric's allowance never covers another).

    Parameters
    ----------
    *metrics : str
        Metric names.
    when : callable, optional
        ``when(metrics) -> bool``: the other figures under which ``inf`` is the true value (e.g. "the
        mechanism adds no noise"); always when None.
    statement : str
        Why ``inf`` is then the true value.

    Returns
    -------
    list of Infinite

    Raises
    ------
    ValueError
        If a name holds an :func:`fnmatch` wildcard.

    Examples
    --------
    >>> [rule] = may_be_infinite("epsilon", when=lambda m: m.get("sigma") == 0, statement="no noise")
    >>> rule.allows("epsilon", "inf", {"sigma": 0.0}), rule.allows("epsilon", "inf", {"sigma": 1.0})
    (True, False)
    """
    for name in metrics:
        if any(c in name for c in "*?["):
            raise ValueError(f"may_be_infinite takes metric names, not patterns: {name!r}")
    return [Infinite(name, statement, when) for name in metrics]


def _rows_equal(metric: str) -> Callable[[Mapping[str, Any], Mapping[str, list]], bool]:
    """The table is the whole law when it has as many rows as ``metric`` counts outcomes."""
    def complete(metrics, columns):
        count = metrics.get(metric)
        if isinstance(count, str):          # "250 prices", "5,000 prices"
            head = count.split(" ", 1)[0].replace(",", "")
            count = int(head) if head.isdigit() else None
        rows = len(next(iter(columns.values())))
        return _is_number(count) and rows == count
    return complete


COMMON = Invariants(rules=[
    *within("*probability*", 0.0, 1.0, "a probability lies in [0, 1]"),
    *within("prob_*", 0.0, 1.0, "a probability lies in [0, 1]"),
])

def _dwork_roth_q_if_valid(metrics: Mapping[str, Any]) -> Any:
    """Dwork & Roth's q, where its gain bound 2 eps U_max holds (e^eps - 1 <= 2 eps, eps <= ~1.256)."""
    eps = metrics.get("epsilon")
    if not _is_number(eps) or eps > 1.25 or math.expm1(eps) > 2 * eps:
        return None
    return metrics.get("q_theorem_dwork_roth")


def _value(metrics: Mapping[str, Any], name: str) -> Any:
    value = metrics.get(name)
    return value if _is_number(value) else math.nan


def _equilibrium_slack(metrics: Mapping[str, Any]) -> float:
    """Both equilibria are computed to a relative gap: allow 1e-3, or 100 times the reported gap."""
    gap = metrics.get("ue_relative_gap")
    return max(1e-3, 100.0 * gap) if _is_number(gap) else 1e-3


def _hk_slack(metrics: Mapping[str, Any]) -> float:
    """Rounding allowance for Huang-Kannan's figures: 1e-9 of the welfare scale (|OPT| + |E[W]| + 1)."""
    scale = 1.0 + abs(_value(metrics, "optimum")) + abs(_value(metrics, "expected_welfare"))
    return 1e-9 * scale if math.isfinite(scale) else math.nan


_LOSS = "a privacy loss lies in [0, the guarantee]"
_REVENUE = "a single posted price earns at most OPT"

RULES: dict[str, Invariants] = {
    "digital_goods": Invariants(
        rules=[
            at_least("n", 1, "there is at least one agent"),
            at_least("epsilon", 0.0, "epsilon > 0"),
            *within("max_privacy_loss", 0.0, "privacy_loss_bound", _LOSS),
            at_most("max_misreport_gain", "bound_2eps", "a misreport gains at most 2 eps (Dwork & Roth Prop 10.1)"),
            at_most("max_misreport_gain", "bound_exact_dp", "a misreport gains at most (e^eps - 1) E[(v - p)+]"),
            at_most("max_misreport_gain", "bound_monotone", "a misreport gains at most (e^(eps/2) - 1) E[(v - p)+]"),
            at_most("max_misreport_gain", 1.0, "a misreport gains at most 1 (utilities lie in [0, 1])"),
            is_true("gains_within_bounds", "every agent's gain is within the proven bounds"),
            *within("expected_revenue", 0.0, "opt", "the expected revenue lies in [0, OPT]"),
            at_most("posted_price_revenue", "opt", _REVENUE),
            at_most("sampled_revenue", "opt", _REVENUE),
            at_most("f2", "opt", "F2 = max_{k>=2} k v_(k) is at most OPT"),
            *within("opt", 0.0, "n", "OPT lies in [0, n] (values in [0, 1])"),
            *within("revenue_over_opt", 0.0, 1.0, "revenue / OPT lies in [0, 1]"),
            at_most("expected_revenue", "expected_welfare", "truthful buyers pay at most their values"),
            *within("expected_welfare", 0.0, "max_welfare", "the expected welfare lies in [0, everyone buys]"),
            *within("rsop_revenue", "rsop_ci_low", "rsop_ci_high", "an estimate lies inside its interval"),
            at_least("rsop_revenue", 0.0, "a revenue is >= 0"),
            *[r for name in ("opt_price", "sampled_price", "worst_true_value", "worst_lie", "alpha")
              for r in within(name, 0.0, 1.0, "a price or a value lies in [0, 1]")],
        ],
        tables=[probability_column("price_law", "probability", _rows_equal("price_set"))],
    ),
    "huang_kannan": Invariants(
        rules=[
            at_least("epsilon", 0.0, "epsilon = 2 beta Delta >= 0"),
            at_most("expected_welfare", "optimum", "no law beats the optimal welfare", rel=0.0, abs_=0.0),
            # Tolerances scale with the welfare: figures of size |OPT| carry ~1e-16 |OPT| beta Delta of
            # rounding (the law is exp(beta W)); a gain of 1e-9 |OPT| is far beyond that, and far below
            # any real incentive.  (The audit's own "truthful" flag uses a fixed 1e-12 U_max slack.)
            at_least("loss_per_agent", lambda m: -_hk_slack(m), "the welfare loss is >= 0", rel=0.0, abs_=0.0),
            at_least("revenue", lambda m: -_hk_slack(m),
                     "Huang-Kannan payments are >= 0 (VCG on the regularised welfare)", rel=0.0, abs_=0.0),
            at_least("min_utility", lambda m: -_hk_slack(m), "Huang-Kannan is individually rational", rel=0.0, abs_=0.0),
            at_most("max_gain", _hk_slack, "Huang-Kannan is exactly truthful: no lie gains", rel=0.0, abs_=0.0),
            at_most("max_gain_all_types", _hk_slack, "Huang-Kannan is exactly truthful for every true type",
                    rel=0.0, abs_=0.0),
        ],
        tables=[probability_column("outcome_law", "probability", _rows_equal("outcomes"))],
    ),
    "nst_mix": Invariants(
        rules=[
            at_least("epsilon", 0.0, "epsilon > 0"),
            at_least("gamma", 0.0, "the commitment gap gamma is >= 0"),
            at_most("gamma", "utility_range", "gamma is at most the utility range"),
            *[r for name in ("q_theorem_dwork_roth", "q_theorem_exact", "q_exact", "q_exact_all_types")
              for r in within(name, 0.0, 1.0, "a mixing probability q lies in [0, 1]")],
            at_most("q_theorem_exact", _dwork_roth_q_if_valid,
                    "the exact-gain q is at most Dwork & Roth's (where 2 eps bounds e^eps - 1)"),
            at_most("q_exact", "q_theorem_exact", "the least q is at most the theorem's q"),
            at_most("q_exact", "q_exact_all_types", "lies of every true type need at least the q of own types"),
            at_most("max_gain_exponential", "gain_bound_exact", "the exponential mechanism's gain is within (e^eps - 1) U_max"),
            at_most("max_gain_mix", lambda m: 1e-9 * (1 + abs(_value(m, "utility_range"))),
                    "the mix at the exact q is truthful", rel=0.0, abs_=0.0),
            *[r for name in ("exponential_objective", "commitment_objective", "mix_objective")
              for r in [at_most(name, "optimum", "no law beats the optimum")]],
            at_least("loss_per_agent_*", 0.0, "a loss against the optimum is >= 0", abs_=1e-9),
            is_true("mix_truthful", "the mix at the exact q is truthful"),
            is_true("mix_truthful_all_types", "the mix at the exact q is truthful for every true type"),
        ],
        tables=[probability_column("outcome_law", name, _rows_equal("outcomes"))
                for name in ("exponential", "commitment", "mix")],
    ),
    "large_game": Invariants(
        rules=[
            at_least("*total_cost", 0.0, "a cost is >= 0"),
            at_least("*cost_over_*", 0.0, "a cost ratio is >= 0"),
            at_least("price_of_anarchy", lambda m: 1.0 - _equilibrium_slack(m),
                     "the user equilibrium costs at least the system optimum", rel=0.0, abs_=0.0),
            at_most("so_total_cost", lambda m: _value(m, "ue_total_cost") * (1.0 + _equilibrium_slack(m)),
                    "the system optimum costs at most the user equilibrium", rel=0.0, abs_=1e-9),
            at_least("ue_relative_gap", 0.0, "a relative gap is >= 0"),
            at_least("alpha", 0.0, "a largest deviation gain over actions (>= the gain of staying) is >= 0"),
            at_most("alpha_mean", "alpha", "a mean is at most the maximum"),
            at_most("ex_post_mean_gain", "ex_post_max_gain", "a mean is at most the maximum"),
            at_least("rho", 0.0, "zCDP rho >= 0"),
            at_least("sigma", 0.0, "a noise scale is >= 0"),
            at_most("misreport_gain", "misreport_ci_high", "an estimate lies inside its interval"),
        ],
        infinite_ok=may_be_infinite("epsilon", "rho", "theorem_bound", when=lambda m: m.get("sigma") == 0,
                                    statement="a mediator without noise (sigma = 0) is not private: eps = rho = "
                                              "inf, and the incentive theorem bounds nothing"),
    ),
}

_REGISTERED: dict[str, Invariants] = {}


def register(kind: str, rules: Iterable[Rule | TableRule] = (), infinite_ok: Iterable[str | Infinite] = ()) -> None:
    """Declare (more) invariants for ``kind``: for a plugin kind that prefers a call to an ``INVARIANTS``
    module attribute.  Rules add to :data:`COMMON` and to the kind's built-in rules.

    Parameters
    ----------
    kind : str
    rules : iterable of Rule or TableRule
    infinite_ok : iterable of str or Infinite
        Metrics that may be ``+inf``: exact names (always allowed), or :func:`may_be_infinite` records.
    """
    target = _REGISTERED.setdefault(kind, Invariants())
    _add(target, rules)
    for entry in infinite_ok:
        target.infinite_ok.extend(may_be_infinite(entry) if isinstance(entry, str) else [entry])


def _add(target: Invariants, rules: Iterable[Rule | TableRule | Infinite]) -> None:
    """Append each rule to ``target.tables`` (a :class:`TableRule`), ``target.infinite_ok`` (an
    :class:`Infinite`) or ``target.rules``."""
    for rule in rules:
        if isinstance(rule, TableRule):
            target.tables.append(rule)
        elif isinstance(rule, Infinite):
            target.infinite_ok.append(rule)
        else:
            target.rules.append(rule)


def invariants_for(kind: str, extra: Iterable[Rule | TableRule | Infinite] = ()) -> Invariants:
    """Every invariant a Result of ``kind`` must satisfy: :data:`COMMON`, :data:`RULES`, registered
    ones and ``extra`` (a plugin module's ``INVARIANTS``).

    Parameters
    ----------
    kind : str
    extra : iterable of Rule, TableRule or Infinite

    Returns
    -------
    Invariants
    """
    out = Invariants(list(COMMON.rules), list(COMMON.tables), list(COMMON.infinite_ok))
    for part in (RULES.get(kind), _REGISTERED.get(kind)):
        if part is not None:
            out.rules += part.rules
            out.tables += part.tables
            out.infinite_ok += part.infinite_ok
    _add(out, extra)
    return out


def check_result(result: Any, extra: Iterable[Rule | TableRule | Infinite] = ()) -> None:
    """Raise :class:`InvariantError` at the first invariant ``result`` breaks (see the module docstring).

    Parameters
    ----------
    result : Result
    extra : iterable of Rule, TableRule or Infinite
        More rules than the kind's.

    Raises
    ------
    InvariantError
        A figure that is not finite (unless allowed), an interval upside down, or a broken rule.
    """
    inv = invariants_for(result.kind, extra)
    metrics = result.metrics
    for name, value in metrics.items():
        # Result stores non-finite floats as the strings "nan", "inf", "-inf" (JSON has no such numbers)
        text = str(value) if isinstance(value, (float, str)) else ""
        if _is_number(value) and not _fits_float(value):
            raise InvariantError(result.kind, name, value, "a figure is a number that fits a float")
        if text in ("nan", "inf", "-inf"):
            if not any(rule.allows(name, text, metrics) for rule in inv.infinite_ok):
                raise InvariantError(result.kind, name, value, "a figure is a finite number (or a documented +inf)")
    for name, value in metrics.items():
        if name.endswith("_ci_low") and _is_number(value):
            high = metrics.get(name[:-len("_ci_low")] + "_ci_high")
            if _is_number(high) and not _le(value, high, REL_TOL, ABS_TOL):
                raise InvariantError(result.kind, name, value, f"a confidence interval's low end is at most its high end ({high!r})")
    for rule in inv.rules:
        for name, value in rule.violations(metrics):
            raise InvariantError(result.kind, name, value, rule.statement)
    for table_rule in inv.tables:
        for name, value, statement in table_rule.violations(result.tables, metrics):
            raise InvariantError(result.kind, name, value, statement)
