"""Plot a sweep: one metric (or several, side by side) against one parameter, mean with a 95% CI band
across seeds, one line per combination of the other parameters.  Needs matplotlib (``dpgames[sweep]``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpgames.sweep.results import SweepError, SweepResults, write_atomic
from dpgames.sweep.summary import resolve_metric, resolve_parameter, summarize


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _line_label(others: Sequence[str], combo: tuple) -> str:
    def show(v: Any) -> str:
        return f"{v:.4g}" if isinstance(v, float) else str(v)
    return ", ".join(f"{p.rsplit('.', 1)[-1]}={show(v)}" for p, v in zip(others, combo)) or "mean"


def plot_results(results: SweepResults, x: str, ys: Sequence[str], out: str | Path, *,
                 log_x: bool = False, level: float = 0.95) -> Path:
    """Write a PNG of ``ys`` against parameter ``x`` (short or dotted name) to ``out``; return its path."""
    fig = sweep_figure(results, x, ys, log_x=log_x, level=level)
    return write_atomic(out, lambda tmp: fig.savefig(tmp, format="png", dpi=120))


def sweep_figure(results: SweepResults, x: str, ys: Sequence[str], *, log_x: bool = False,
                 level: float = 0.95):
    """The matplotlib Figure of :func:`plot_results`: one axes per metric, a line (means) and a band
    (confidence interval) per combination of the other parameters."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise SweepError("plot needs matplotlib: pip install 'dpgames[sweep]'") from None
    x = resolve_parameter(x, results.parameters)
    ys = [resolve_metric(y, results.metrics) for y in ys]
    table = summarize(results, ys, level)
    others = [p for p in results.parameters if p != x]
    x_values = list({_key(v): v for v in table[x]}.values())
    numeric_x = all(_is_number(v) for v in x_values)
    position = {_key(v): (v if numeric_x else i) for i, v in enumerate(x_values)}

    fig = Figure(figsize=(6.0 * len(ys), 4.2), layout="constrained")
    for ax, y in zip(fig.subplots(1, len(ys), squeeze=False)[0], ys):
        _draw_metric(ax, table, x, y, others, position)
        if not numeric_x:
            ax.set_xticks(range(len(x_values)), [str(v) for v in x_values])
        if log_x and numeric_x:
            ax.set_xscale("log")
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.grid(alpha=0.3)
        if others:
            ax.legend(fontsize="small")
    seeds = sorted(set(table["seeds"]))
    counts = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]} to {seeds[-1]}"
    fig.suptitle(f"{results.header.get('title', '')}\nmean and {level:.0%} CI over {counts} seeds per point")
    return fig


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _draw_metric(ax, table: dict[str, list[Any]], x: str, y: str, others: Sequence[str],
                 position: dict[str, Any]) -> None:
    """One line of means with its CI band per combination of the ``others`` parameters."""
    lines: dict[str, list[int]] = {}
    for i, metric in enumerate(table["metric"]):
        if metric == y:
            lines.setdefault(_key([table[p][i] for p in others]), []).append(i)
    for rows in lines.values():
        rows = sorted(rows, key=lambda i: position[_key(table[x][i])])
        xs = [position[_key(table[x][i])] for i in rows]
        mean, low, high = ([table[c][i] for i in rows] for c in ("mean", "ci_low", "ci_high"))
        label = _line_label(others, tuple(table[p][rows[0]] for p in others))
        (line,) = ax.plot(xs, mean, marker="o", label=label)
        ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
