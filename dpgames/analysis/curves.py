"""The exact incentive to lie as a function of a parameter: one audit per value, as a small table.

``gain_curve(build, values, **audit)`` builds the mechanism ``build(v)`` at each value ``v`` (an
eps, a mixing weight, a grid step), runs the same audit of a user's own mechanism
(:func:`~dpgames.analysis.custom_audit.custom_truthfulness_audit`: ex post, dominant strategy,
Bayesian, coalitional, ordinal, with any of its keywords) and returns a :class:`GainCurve`: the
values, each audit's ``max_gain`` and ``margin``, the verdicts and worst cases, as arrays a plot
reads directly. :meth:`GainCurve.csv` is the table (one row per value, the worst case's fields as
columns) and :func:`gain_curve_figure` draws the best lie's gain against the parameter (as ``dpgames
gain-curve`` and the app do).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgames.analysis.custom_audit import as_custom, custom_truthfulness_audit
from dpgames.validation import ValidationError, non_negative

#: Largest number of parameter values (each is one audit).
VALUE_LIMIT = 10_000


@dataclass(frozen=True)
class GainCurve:
    """One audit per parameter value.

    Attributes
    ----------
    parameter : str
        The parameter's name (for tables and plots).
    values : numpy.ndarray
        The parameter values, as given.
    max_gain : numpy.ndarray
        The best lie's gain at each value, floored at 0.
    margin : numpy.ndarray
        The best lie's loss at each value (``inf`` where no lie was tried).
    truthful : numpy.ndarray of bool
        ``is_truthful(tol)`` at each value.
    worst_cases : tuple of dict
        Each audit's ``worst_case``.
    audit : str
        The audit run (its class name).
    tol : float
        The tolerance of ``truthful``.

    Examples
    --------
    A mix of the rounded mean (not truthful) and the median (truthful) with weight ``q`` on the
    median:

    >>> from dpgames import CustomMechanism
    >>> from dpgames.analysis.curves import gain_curve
    >>> def build(q):
    ...     def rule(r):
    ...         mean, median = round(sum(r) / len(r)), sorted(r)[len(r) // 2]
    ...         return {mean: 1 - q, median: q} if mean != median else {mean: 1.0}
    ...     return CustomMechanism(rule, lambda t, o: -abs(t - o), types=range(5), anonymous=True)
    >>> curve = gain_curve(build, [0.0, 0.5, 1.0], parameter="q", n=3, profiles="all")
    >>> curve.max_gain.tolist(), curve.truthful.tolist()
    ([1.0, 0.5, 0.0], [False, False, True])
    """

    parameter: str
    values: np.ndarray
    max_gain: np.ndarray
    margin: np.ndarray
    truthful: np.ndarray
    worst_cases: tuple
    audit: str
    tol: float

    def __post_init__(self) -> None:
        # the per-value columns as arrays whatever sequence was given (a curve built by hand from
        # lists)
        for name in ("values", "max_gain", "margin", "truthful"):
            object.__setattr__(self, name, np.asarray(getattr(self, name)))
        object.__setattr__(self, "worst_cases", tuple(self.worst_cases))

    def rows(self) -> list[dict[str, Any]]:
        """One dict per value: the parameter, ``max_gain``, ``margin``, ``truthful`` (for a table or
        JSON)."""
        return [
            {self.parameter: v, "max_gain": float(g), "margin": float(d), "truthful": bool(ok)}
            for v, g, d, ok in zip(self.values.tolist(), self.max_gain, self.margin, self.truthful)
        ]

    @property
    def best_gain(self) -> np.ndarray:
        """The best lie's gain at each value, not floored: ``max_gain`` where positive, ``-margin``
        below (``-inf`` where no lie was tried)."""
        return -self.margin

    def worst_rows(self) -> list[dict[str, Any]]:
        """:meth:`rows` with each worst case's fields (``worst_agent``, ``worst_lie`` ...; labels
        and tuples as their ``repr``, empty where no lie was tried), one column per field any value
        has."""
        keys = list(
            dict.fromkeys(k for w in self.worst_cases for k in w if k not in ("gain", "ci"))
        )
        return [
            {**row, **{f"worst_{k}": _cell(w.get(k, "")) for k in keys}}
            for row, w in zip(self.rows(), self.worst_cases)
        ]

    def csv(self) -> str:
        """:meth:`worst_rows` as CSV text (a header line, then one line per value)."""
        rows = self.worst_rows()
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()

    def describe(self) -> str:
        """The table, one line per value."""
        lines = [
            f"{self.audit} against {self.parameter} ({self.values.size} values, tol {self.tol:g})",
            f"  {self.parameter:>12}  {'max_gain':>12}  {'margin':>12}  truthful",
        ]
        for row in self.rows():
            lines.append(
                f"  {row[self.parameter]!s:>12}  {row['max_gain']:>12.6g}  {row['margin']:>12.6g}  "
                f"{row['truthful']}"
            )
        return "\n".join(lines)


def gain_curve(
    build: Callable[[Any], Any],
    values: Iterable,
    *,
    parameter: str = "value",
    tol: float = 0.0,
    **audit: Any,
) -> GainCurve:
    """The exact audit of ``build(v)`` at each of ``values``.

    Parameters
    ----------
    build : callable
        ``build(v)`` -> a :class:`~dpgames.mechanisms.custom.CustomMechanism` (or a plain rule, with
        ``utility=`` and ``types=`` in ``audit``).
    values : iterable
        The parameter values (at least one, at most :data:`VALUE_LIMIT`), e.g. numbers.
    parameter : str, default "value"
        The parameter's name.
    tol : float, default 0
        The tolerance of the verdicts.
    **audit
        Keywords of :func:`~dpgames.analysis.custom_audit.custom_truthfulness_audit` (``profile``,
        ``n``, ``profiles``, ``prior``, ``coalitions``, ``ordinal``, ``lies`` ...), the same at
        every value.

    Returns
    -------
    GainCurve

    Raises
    ------
    ValidationError
        If ``build`` is not callable, raises or returns something that is not a mechanism,
        ``values`` is empty or too long, or as the audit.
    """
    if not callable(build):
        raise ValidationError("build", f"must be a callable value -> mechanism, got {build!r}")
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ValidationError("values", f"must be an iterable of parameter values, got {values!r}")
    items = list(values.tolist() if isinstance(values, np.ndarray) else values)
    if not items or len(items) > VALUE_LIMIT:
        raise ValidationError(
            "values", f"must hold 1 to {VALUE_LIMIT:,} values, got {len(items):,}"
        )
    if not isinstance(parameter, str):
        raise ValidationError("parameter", f"must be a name (a string), got {parameter!r}")
    non_negative("tol", tol)
    plain = {k: audit.pop(k) for k in ("utility", "types", "payments", "anonymous") if k in audit}
    audits = []
    for v in items:
        try:
            mech = build(v)
        except ValidationError:
            raise
        except Exception as exc:
            raise ValidationError(
                "build", f"raised {type(exc).__name__}: {exc} at {parameter}={v!r}"
            ) from exc
        if not callable(mech) and not hasattr(mech, "rule"):
            raise ValidationError(
                "build",
                f"must return a CustomMechanism or a rule, got {mech!r} at {parameter}={v!r}",
            )
        try:
            audits.append(custom_truthfulness_audit(as_custom(mech, **plain), tol=tol, **audit))
        except ValidationError as exc:  # the same error, saying at which value
            raise ValidationError(exc.field, f"{exc.reason} (at {parameter}={v!r})") from exc
    return GainCurve(
        parameter,
        np.asarray(items),
        np.array([a.max_gain for a in audits]),
        np.array([a.margin for a in audits]),
        np.array([a.is_truthful(tol) for a in audits]),
        tuple(a.worst_case for a in audits),
        type(audits[0]).__name__,
        float(tol),
    )


def _cell(value: Any) -> Any:
    """A worst-case field as a CSV cell: numbers and strings as they are, labels and tuples as
    ``repr``."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return value.item() if isinstance(value, np.generic) else value
    return value if isinstance(value, str) else repr(value)


def gain_curve_figure(curve: GainCurve, *, title: str | None = None):
    """A matplotlib Figure of ``curve``: the best lie's gain (:attr:`GainCurve.best_gain`:
    ``max_gain`` above 0, minus the margin below) against the parameter, truthful values (within
    ``tol``) as filled markers, the zero line, and the worst lie at the largest gain named beside
    it.

    Parameters
    ----------
    curve : GainCurve
    title : str, optional
        The figure's title (default: the audit and the parameter).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValidationError
        If matplotlib is missing, or the values are not numbers (a plot needs a numeric axis).
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ValidationError("plot", "needs matplotlib: pip install 'dpgames[sweep]'") from None
    x = _numeric(curve)
    y = curve.best_gain
    shown = np.isfinite(y)
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.subplots()
    ax.axhline(0.0, color="0.6", linewidth=0.8)
    ax.plot(x[shown], y[shown], color="C0", linewidth=1.5, zorder=1)
    ok = shown & curve.truthful
    ax.scatter(x[ok], y[ok], color="C2", zorder=2, label=f"truthful (gain <= {curve.tol:g})")
    ax.scatter(x[shown & ~ok], y[shown & ~ok], color="C3", zorder=2, label="a lie gains")
    if shown.any() and curve.max_gain.max() > 0:
        k = int(np.argmax(np.where(shown, y, -np.inf)))
        w = curve.worst_cases[k]
        who = f"agent {w['agent']}" if "agent" in w else f"coalition {w.get('coalition')!r}"
        ax.annotate(
            f"{who}: {w.get('true_type', w.get('true_types'))!r} -> {w.get('lie')!r}",
            (x[k], y[k]),
            textcoords="offset points",
            xytext=(6, 6),
            fontsize=8,
        )
    ax.set_xlabel(curve.parameter)
    ax.set_ylabel("best lie's gain (max_gain above 0, -margin below)")
    ax.set_title(title or f"{curve.audit}: the best lie's exact gain against {curve.parameter}")
    ax.legend(loc="best", fontsize=8)
    return fig


def _numeric(curve: GainCurve) -> np.ndarray:
    try:
        x = np.asarray(curve.values, dtype=float)
    except (TypeError, ValueError):
        x = np.full(curve.values.shape, np.nan)
    if x.ndim != 1 or not np.isfinite(x).all():
        raise ValidationError(
            "values", f"must be finite numbers to be plotted, got {curve.values.tolist()!r}"
        )
    return x
