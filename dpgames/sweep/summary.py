"""Mean and 95% confidence interval of each metric per parameter combination, across seeds.

The interval is Student's t: ``mean +- t_{0.975, k-1} * s / sqrt(k)`` over the ``k`` seeds with a
finite value (exact coverage for normal data, asymptotically for any finite variance, by the central
limit theorem).  Seeds are independent streams (see :mod:`dpgames.sweep.grid`), as the interval needs.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from dpgames.sweep.grid import unique_match
from dpgames.sweep.results import SweepError, SweepResults, write_atomic

DEFAULT_SUMMARY_METRICS = 3


@dataclass(frozen=True)
class Estimate:
    """Mean of ``n`` values with a two-sided confidence interval (nan bounds when ``n < 2``)."""

    n: int
    mean: float
    low: float
    high: float


def mean_ci(values: Sequence[float], level: float = 0.95) -> Estimate:
    """Student-t interval for the mean of ``values`` (non-finite values are left out)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return Estimate(0, math.nan, math.nan, math.nan)
    mean = float(x.mean())
    if x.size == 1:
        return Estimate(1, mean, math.nan, math.nan)
    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return Estimate(int(x.size), mean, mean - half, mean + half)


def numeric(value: Any) -> float:
    """A metric as a float: numbers and booleans (as 0/1); anything else (a label, "nan", a whole number
    beyond floats) is nan."""
    if isinstance(value, (bool, int, float)):
        try:
            return float(value)
        except OverflowError:   # a whole number beyond floats
            return math.nan
    return math.nan


def resolve_metric(name: str, metrics: Sequence[str]) -> str:
    """A metric by its exact name, or by a part of its name that only one metric contains."""
    if name in metrics:
        return name
    match = unique_match(name, [m for m in metrics if name in m], lambda message: SweepError(f"metric {message}"))
    if match is None:
        raise SweepError(f"no metric {name!r} in the results (metrics: {', '.join(metrics) or 'none'})")
    return match


def resolve_parameter(name: str, parameters: Sequence[str]) -> str:
    """A swept parameter by its dotted name or by its last component, when only one has it."""
    if name in parameters:
        return name
    match = unique_match(name, [p for p in parameters if p.rsplit(".", 1)[-1] == name],
                         lambda message: SweepError(f"parameter {message}"))
    if match is None:
        raise SweepError(f"{name!r} is not a swept parameter (parameters: {', '.join(parameters) or 'none'})")
    return match


def summary_metrics(results: SweepResults, names: Sequence[str] | None = None) -> list[str]:
    """The metrics to summarise: ``names`` (resolved), else those the ``[sweep]`` table named, else the
    first few numeric metrics that vary across seeds (the random outcomes, not echoes of a parameter)."""
    named = names or results.header.get("summary")
    if named:
        return [resolve_metric(m, results.metrics) for m in named]
    groups = [[r for r in rows if r["status"] == "ok"] for rows in cell_groups(results)]
    random = [m for m in results.metrics if any(_varies(m, rows) for rows in groups)]
    return random[:DEFAULT_SUMMARY_METRICS]


def _varies(metric: str, rows: list[dict[str, Any]]) -> bool:
    values = {numeric(r["metrics"].get(metric)) for r in rows}
    return len({v for v in values if math.isfinite(v)}) > 1


def cell_groups(results: SweepResults) -> list[list[dict[str, Any]]]:
    """The rows of each parameter combination (its seeds), in the table's order."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for row in results.rows:
        groups.setdefault(_hashable([row["params"].get(p) for p in results.parameters]), []).append(row)
    return list(groups.values())


def summarize(results: SweepResults, metrics: Sequence[str] | None = None,
              level: float = 0.95) -> dict[str, list[Any]]:
    """A long table: one row per (parameter combination, metric) with seeds, failures, mean and CI.

    Columns: each parameter, ``metric``, ``seeds`` (finite values), ``failed`` (cells recorded with an
    error), ``mean``, ``ci_low``, ``ci_high``."""
    metrics = list(results.metrics if metrics is None else metrics)
    table: dict[str, list[Any]] = {name: [] for name in
                                   [*results.parameters, "metric", "seeds", "failed", "mean", "ci_low", "ci_high"]}
    for rows in cell_groups(results):
        ok = [r for r in rows if r["status"] == "ok"]
        for m in metrics:
            est = mean_ci([numeric(r["metrics"].get(m)) for r in ok], level)
            for p in results.parameters:
                table[p].append(rows[0]["params"].get(p))
            for column, value in zip(("metric", "seeds", "failed", "mean", "ci_low", "ci_high"),
                                     (m, est.n, len(rows) - len(ok), est.mean, est.low, est.high)):
                table[column].append(value)
    return table


def _hashable(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return tuple(_hashable(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in x.items()))
    return x


def write_summary_csv(table: dict[str, list[Any]], path: str | Path) -> Path:
    """The summary table as CSV (one row per parameter combination and metric), written atomically."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(list(table))
    writer.writerows(zip(*table.values()))
    return write_atomic(path, lambda tmp: tmp.write_text(out.getvalue()))


def format_summary(table: dict[str, list[Any]]) -> str:
    """The summary as aligned text columns: parameters, metric, seeds, mean, 95% CI."""
    names = [c for c in table if c not in ("failed", "mean", "ci_low", "ci_high")]
    rows = [[_fmt(table[c][i]) for c in names] + [_fmt(table["mean"][i]), _fmt_ci(table, i)]
            for i in range(len(table["metric"]))]
    head = names + ["mean", "95% CI"]
    widths = [max(len(str(x)) for x in column) for column in zip(head, *rows)]
    lines = ["  ".join(f"{x:<{w}}" for x, w in zip(line, widths)).rstrip() for line in [head, *rows]]
    return "\n".join(lines)


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def _fmt_ci(table: dict[str, list[Any]], i: int) -> str:
    low, high = table["ci_low"][i], table["ci_high"][i]
    return "-" if math.isnan(low) else f"[{low:.6g}, {high:.6g}]"
