"""Mean and 95% confidence interval of each metric per parameter combination, across seeds.

The interval is Student's t over the ``k`` seeds with a finite value, computed by
:func:`dpgames.estimates.mean_ci` (its rule: no interval, NaN bounds shown as ``-``, for one seed).
For a metric whose every recorded value is >= 0 (:func:`nonnegative`) the interval is the t-interval
clipped at 0, ``[max(low, 0), high]``, in the printed summary, the summary CSV and the plot alike:
the metric's mean cannot be negative, so the clipped interval covers it whenever the t-interval
does. Seeds are independent streams (see :mod:`dpgames.sweep.grid`), as the interval needs.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpgames.estimates import mean_ci
from dpgames.scenarios.result import csv_cell
from dpgames.sweep.grid import unique_match
from dpgames.sweep.results import SweepError, SweepResults, write_atomic

DEFAULT_SUMMARY_METRICS = 3


def numeric(value: Any) -> float:
    """A metric as a float: numbers and booleans (as 0/1); anything else (a label, "nan", a whole
    number beyond floats) is nan.

    Examples
    --------
    >>> numeric(True), numeric(3), numeric("x"), numeric(10 ** 400)
    (1.0, 3.0, nan, nan)
    """
    if isinstance(value, (bool, int, float)):
        try:
            return float(value)
        except OverflowError:  # a whole number beyond floats
            return math.nan
    return math.nan


def resolve_metric(name: str, metrics: Sequence[str]) -> str:
    """A metric by its exact name, or by a part of its name that only one metric contains.

    Parameters
    ----------
    name : str
        A metric's name or a part of it.
    metrics : sequence of str
        The metrics of the results.

    Returns
    -------
    str
        The metric's full name.

    Raises
    ------
    SweepError
        If no metric matches, or several do (naming them).
    """
    if name in metrics:
        return name
    match = unique_match(
        name, [m for m in metrics if name in m], lambda message: SweepError(f"metric {message}")
    )
    if match is None:
        raise SweepError(
            f"no metric {name!r} in the results (metrics: {', '.join(metrics) or 'none'})"
        )
    return match


def resolve_parameter(name: str, parameters: Sequence[str]) -> str:
    """A swept parameter by its dotted name or by its last component, when only one has it.

    Returns
    -------
    str
        The parameter's dotted name.

    Raises
    ------
    SweepError
        If no swept parameter matches, or several do.
    """
    if name in parameters:
        return name
    match = unique_match(
        name,
        [p for p in parameters if p.rsplit(".", 1)[-1] == name],
        lambda message: SweepError(f"parameter {message}"),
    )
    if match is None:
        raise SweepError(
            f"{name!r} is not a swept parameter (parameters: {', '.join(parameters) or 'none'})"
        )
    return match


def summary_metrics(results: SweepResults, names: Sequence[str] | None = None) -> list[str]:
    """The metrics to summarise: ``names`` (resolved), else those the ``[sweep]`` table named, else
    the first few numeric metrics that vary across seeds (the random outcomes, not echoes of a
    parameter).

    Parameters
    ----------
    results : SweepResults
    names : sequence of str, optional
        Metric names or unique parts of them.

    Returns
    -------
    list of str

    Raises
    ------
    SweepError
        If a name matches no metric or several.
    """
    named = names or results.header.get("summary")
    if named:
        return [resolve_metric(m, results.metrics) for m in named]
    groups = [[r for r in rows if r["status"] == "ok"] for rows in cell_groups(results)]
    random = [m for m in results.metrics if any(_varies(m, rows) for rows in groups)]
    return random[:DEFAULT_SUMMARY_METRICS]


def _varies(metric: str, rows: list[dict[str, Any]]) -> bool:
    values = {numeric(r["metrics"].get(metric)) for r in rows}
    return len({v for v in values if math.isfinite(v)}) > 1


def nonnegative(results: SweepResults, metric: str) -> bool:
    """Whether every recorded value of ``metric`` is a number >= 0 (then its intervals are clipped
    at 0).

    Parameters
    ----------
    results : SweepResults
    metric : str

    Returns
    -------
    bool
    """
    values = [numeric(row["metrics"].get(metric)) for row in results.ok_rows()]
    finite = [v for v in values if math.isfinite(v)]
    return bool(finite) and min(finite) >= 0


def cell_groups(results: SweepResults) -> list[list[dict[str, Any]]]:
    """The rows of each parameter combination (its seeds), in the table's order.

    Parameters
    ----------
    results : SweepResults

    Returns
    -------
    list of list of dict
        One list of records per combination, in the order the combinations first appear.
    """
    groups: dict[Any, list[dict[str, Any]]] = {}
    for row in results.rows:
        groups.setdefault(_hashable([row["params"].get(p) for p in results.parameters]), []).append(
            row
        )
    return list(groups.values())


def summarize(
    results: SweepResults, metrics: Sequence[str] | None = None, level: float = 0.95
) -> dict[str, list[Any]]:
    """A long table: one row per (parameter combination, metric) with seeds, failures, mean and CI.

    A metric with no numeric value in a combination's successful seeds (a label) has no row there; a
    combination whose every seed failed keeps its rows (``seeds`` 0, ``failed`` > 0: the failure
    shows). The interval is NaN when it is undefined: fewer than two finite seeds
    (:mod:`dpgames.estimates`), or a value that is the same in every seed (a parameter's echo or a
    deterministic figure, not an estimate). For a metric that is >= 0 in every recorded seed
    (:func:`nonnegative`), ``ci_low`` is clipped at 0.

    Parameters
    ----------
    results : SweepResults
        The sweep's records.
    metrics : sequence of str, optional
        The metrics to summarise (exact names); default all.
    level : float, default 0.95
        Confidence level, in ``(0, 1)``.

    Returns
    -------
    dict of str to list
        Columns: each parameter, ``metric``, ``seeds`` (finite values), ``failed`` (cells recorded
        with an error), ``mean``, ``ci_low`` (clipped at 0 for a non-negative metric), ``ci_high``.

    Raises
    ------
    ValidationError
        If ``level`` is not in ``(0, 1)``.
    """
    metrics = list(results.metrics if metrics is None else metrics)
    table: dict[str, list[Any]] = {
        name: []
        for name in [*results.parameters, "metric", "seeds", "failed", "mean", "ci_low", "ci_high"]
    }
    floors = {m: 0.0 if nonnegative(results, m) else -math.inf for m in metrics}
    for rows in cell_groups(results):
        ok = [r for r in rows if r["status"] == "ok"]
        for m in metrics:
            values = [numeric(r["metrics"].get(m)) for r in ok]
            est = mean_ci(values, level)
            if est.n == 0 and ok:
                continue  # not a number in any seed that ran
            low, high = (
                (math.nan, math.nan) if _constant(values) else (max(est.low, floors[m]), est.high)
            )
            for p in results.parameters:
                table[p].append(rows[0]["params"].get(p))
            for column, value in zip(
                ("metric", "seeds", "failed", "mean", "ci_low", "ci_high"),
                (m, est.n, len(rows) - len(ok), est.mean, low, high),
            ):
                table[column].append(value)
    return table


def _constant(values: list[float]) -> bool:
    """Whether the finite values are at least two and all equal (no variation: no interval)."""
    finite = [v for v in values if math.isfinite(v)]
    return len(finite) >= 2 and len(set(finite)) == 1


def _hashable(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return tuple(_hashable(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in x.items()))
    return x


def write_summary_csv(table: dict[str, list[Any]], path: str | Path) -> Path:
    """The summary table as CSV (one row per parameter combination and metric), written atomically;
    an undefined figure (NaN) is an empty cell, a number has at most 15 significant digits
    (:func:`dpgames.scenarios.result.csv_cell`).

    Parameters
    ----------
    table : dict of str to list
        :func:`summarize`'s table.
    path : str or pathlib.Path
        The CSV file to write.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(list(table))
    writer.writerows([_csv_cell(x) for x in row] for row in zip(*table.values()))
    return write_atomic(path, lambda tmp: tmp.write_text(out.getvalue()))


def _csv_cell(x: Any) -> Any:
    return "" if isinstance(x, float) and math.isnan(x) else csv_cell(x)


def format_summary(table: dict[str, list[Any]]) -> str:
    """The summary as aligned text columns: parameters, metric, seeds, mean, 95% CI (``-`` when
    undefined).

    Parameters
    ----------
    table : dict of str to list
        :func:`summarize`'s table.

    Returns
    -------
    str
    """
    names = [c for c in table if c not in ("failed", "mean", "ci_low", "ci_high")]
    rows = [
        [_fmt(table[c][i]) for c in names] + [_fmt(table["mean"][i]), _fmt_ci(table, i)]
        for i in range(len(table["metric"]))
    ]
    head = names + ["mean", "95% CI"]
    widths = [max(len(str(x)) for x in column) for column in zip(head, *rows)]
    lines = [
        "  ".join(f"{x:<{w}}" for x, w in zip(line, widths)).rstrip() for line in [head, *rows]
    ]
    return "\n".join(lines)


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def _fmt_ci(table: dict[str, list[Any]], i: int) -> str:
    low, high = table["ci_low"][i], table["ci_high"][i]
    return "-" if math.isnan(low) else f"[{low:.6g}, {high:.6g}]"
