"""Plot a sweep: one metric (or several, side by side) against one parameter, mean with a 95% CI
band across seeds, one line per combination of the other parameters.  Needs matplotlib
(``dpgames[sweep]``).

What the figure says in words: the axes carry the metrics' labels (as ``dpgames run`` prints them),
not their keys; the title drops the clauses of the scenario's title that name a swept parameter's
base value (``"eps = 0.5"`` when eps is on the x axis); a log-spaced x (``geomspace``) gets a log
axis; the band of a metric whose every value is >= 0 is clipped at 0 (a Student-t interval does not
know that).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpgames.scenarios.titles import states_a_value, words_pattern
from dpgames.sweep.results import SweepError, SweepResults, write_atomic
from dpgames.sweep.summary import nonnegative, resolve_metric, resolve_parameter, summarize


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _line_label(others: Sequence[str], combo: tuple) -> str:
    def show(v: Any) -> str:
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    return ", ".join(f"{p.rsplit('.', 1)[-1]}={show(v)}" for p, v in zip(others, combo)) or "mean"


def plot_results(
    results: SweepResults,
    x: str,
    ys: Sequence[str],
    out: str | Path,
    *,
    log_x: bool | None = None,
    level: float = 0.95,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
) -> Path:
    """Write a PNG of ``ys`` against parameter ``x`` to ``out``.

    Parameters
    ----------
    results : SweepResults
    x : str
        The swept parameter on the x axis (short or dotted name).
    ys : sequence of str
        Metrics (exact names, or a part of a name only one metric has).
    out : str or Path
        The image file (written atomically).
    log_x : bool, optional
        Logarithmic x axis; None (default): when the x values are log-spaced (:func:`log_spaced`).
    level : float
        Confidence level of the bands.
    title, xlabel, ylabel : str, optional
        The figure's title (the scenario's title by default; a second line says what the bands are),
        the x axis's and every y axis's title (the labels in words by default).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    SweepError
        An unknown parameter or metric, a metric with no numeric value, or matplotlib is missing.
    """
    fig = sweep_figure(
        results, x, ys, log_x=log_x, level=level, title=title, xlabel=xlabel, ylabel=ylabel
    )
    return write_atomic(out, lambda tmp: fig.savefig(tmp, format="png", dpi=120))


def sweep_figure(
    results: SweepResults,
    x: str,
    ys: Sequence[str],
    *,
    log_x: bool | None = None,
    level: float = 0.95,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
):
    """The matplotlib Figure of :func:`plot_results` (and of the app's sweep viewer): one axes per
    metric, a line (means) and a band (confidence interval) per combination of the other parameters,
    each in its own colour, the y axis fitted to the data (not from 0).  With several lines each
    band is also outlined, so that no band hides another.

    Parameters
    ----------
    results, x, ys, log_x, level, title, xlabel, ylabel
        As in :func:`plot_results`.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    SweepError
        An unknown parameter or metric, a metric with no numeric value, or matplotlib is missing.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise SweepError("plot needs matplotlib: pip install 'dpgames[sweep]'") from None
    x = resolve_parameter(x, results.parameters)
    ys = [resolve_metric(y, results.metrics) for y in ys]
    table = summarize(results, ys, level)
    for y in ys:
        if y not in table["metric"]:
            shown = ", ".join(numeric_metrics(results)) or "none"
            raise SweepError(
                f"--y {y}: has no numeric value to plot (numeric metrics: {shown})", "y"
            )
    others = [p for p in results.parameters if p != x]
    x_values = list({_key(v): v for v in table[x]}.values())
    numeric_x = all(_is_number(v) for v in x_values)
    position = {_key(v): (v if numeric_x else i) for i, v in enumerate(x_values)}
    if log_x is None:
        log_x = numeric_x and log_spaced(x_values)

    fig = Figure(figsize=(6.0 * len(ys), 4.2), layout="constrained")
    for ax, y in zip(fig.subplots(1, len(ys), squeeze=False)[0], ys):
        _draw_metric(
            ax, table, x, y, others, position, floor=0.0 if nonnegative(results, y) else None
        )
        if not numeric_x:
            ax.set_xticks(range(len(x_values)), [str(v) for v in x_values])
        if log_x and numeric_x and min(x_values) > 0:
            ax.set_xscale("log")
        ax.set_xlabel(parameter_label(results, x) if xlabel is None else xlabel)
        ax.set_ylabel(metric_label(results, y) if ylabel is None else ylabel)
        ax.grid(alpha=0.3)
        if others:
            ax.legend(fontsize="small")
    seeds = sorted(set(table["seeds"]))
    counts = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]} to {seeds[-1]}"
    if title is None:
        title = figure_title(results.header.get("title", ""), results.parameters, x)
    fig.suptitle(
        f"{title}\nmean and {level:.0%} CI over {counts} "
        f"seed{'s' if seeds[-1] != 1 else ''} per point"
    )
    return fig


def log_spaced(values: Sequence[float]) -> bool:
    """Whether positive x values are better drawn on a log axis: they span at least two decades, or
    (three or more values) their ratios are more even than their differences, as from ``geomspace``.

    Parameters
    ----------
    values : sequence of float

    Returns
    -------
    bool

    Examples
    --------
    >>> (
    ...     log_spaced([0.01, 0.1, 1.0]),
    ...     log_spaced([100, 1000, 10000, 100000]),
    ...     log_spaced([0.1, 0.2, 0.3, 0.4]),
    ... )
    (True, True, False)
    """
    v = np.unique(np.asarray(values, dtype=float))
    if v.size < 2 or v[0] <= 0 or not np.all(np.isfinite(v)):
        return False
    if v[-1] / v[0] >= 100:
        return True
    if v.size < 3:
        return False
    logs, steps = np.diff(np.log(v)), np.diff(v)
    return float(np.std(logs) / np.mean(logs)) < float(np.std(steps) / np.mean(steps))


def metric_label(results: SweepResults, metric: str) -> str:
    """A metric's label in words (as ``dpgames run`` prints it), else its key with spaces.

    Parameters
    ----------
    results : SweepResults
    metric : str

    Returns
    -------
    str
    """
    label = results.labels.get(metric, "").strip()
    return label or metric.replace("_", " ")


def parameter_label(results: SweepResults, parameter: str) -> str:
    """A swept parameter in words: the label of the metric of the same name when the kind reports
    one (``population.n`` -> "agents"), else its last component; the dotted name follows in
    brackets.

    Parameters
    ----------
    results : SweepResults
    parameter : str

    Returns
    -------
    str
    """
    short = parameter.rsplit(".", 1)[-1]
    words = results.labels.get(short, "").strip() or short.replace("_", " ")
    return words if words == parameter else f"{words} [{parameter}]"


def figure_title(title: str, parameters: Sequence[str], x: str | None = None) -> str:
    """``title`` without its comma-separated clauses that give a swept parameter a value (a clause
    naming the parameter, or one of its :data:`~dpgames.scenarios.titles.ALIASES`, next to a
    number): that value is the base scenario's, not the plotted one.  With ``x`` (the plotted
    parameter), "against <another swept parameter>" in the title says "against <x>" instead.

    Parameters
    ----------
    title : str
    parameters : sequence of str
        The swept parameters (dotted names).
    x : str or None
        The parameter on the x axis (dotted name).

    Returns
    -------
    str

    Examples
    --------
    >>> figure_title(
    ...     "Digital-goods auction, 1,000 uniform bidders, eps = 0.5", ["mechanism.epsilon"]
    ... )
    'Digital-goods auction, 1,000 uniform bidders'
    >>> figure_title(
    ...     "Auction: revenue against epsilon",
    ...     ["mechanism.epsilon", "population.n"],
    ...     x="population.n",
    ... )
    'Auction: revenue against n'
    """
    pattern = words_pattern(parameters)
    kept = ", ".join(c for c in title.split(", ") if not states_a_value(c, pattern))
    if x is None or (others := words_pattern([p for p in parameters if p != x])) is None:
        return kept
    shown = x.rsplit(".", 1)[-1]
    return re.sub(r"\bagainst " + others.pattern, lambda _: f"against {shown}", kept)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _draw_metric(
    ax,
    table: dict[str, list[Any]],
    x: str,
    y: str,
    others: Sequence[str],
    position: dict[str, Any],
    floor: float | None = None,
) -> None:
    """One line of means with its CI band per combination of the ``others`` parameters; the band is
    clipped at ``floor`` (None: not clipped)."""
    lines: dict[str, list[int]] = {}
    for i, metric in enumerate(table["metric"]):
        if metric == y:
            lines.setdefault(_key([table[p][i] for p in others]), []).append(i)
    from matplotlib.colors import to_rgba

    colors = _colors(len(lines))
    for color, rows in zip(colors, lines.values()):
        rows = sorted(rows, key=lambda i: position[_key(table[x][i])])
        xs = [position[_key(table[x][i])] for i in rows]
        mean, low, high = (
            np.array([table[c][i] for i in rows], dtype=float)
            for c in ("mean", "ci_low", "ci_high")
        )
        if floor is not None:
            low, high = np.maximum(low, floor), np.maximum(high, floor)
        label = _line_label(others, tuple(table[p][rows[0]] for p in others))
        ax.plot(xs, mean, marker="o", label=label, color=color)
        several = len(lines) > 1  # then lighter and outlined, so that overlapping bands stay apart
        ax.fill_between(
            xs,
            low,
            high,
            facecolor=to_rgba(color, 0.1 if several else 0.2),
            edgecolor=color,
            linewidth=0.8 if several else 0,
            linestyle=":",
        )


def _colors(count: int) -> list:
    """``count`` distinct colours: matplotlib's ten categorical ones, or evenly spaced on viridis
    beyond."""
    from matplotlib import colormaps

    if count <= 10:
        return [colormaps["tab10"](i) for i in range(count)]
    return [colormaps["viridis"](i / (count - 1)) for i in range(count)]


def numeric_metrics(results: SweepResults) -> list[str]:
    """The metrics with a numeric value in some successful cell: those a figure can plot.

    Parameters
    ----------
    results : SweepResults

    Returns
    -------
    list of str
        In the order of ``results.metrics``.
    """
    plotted = set(summarize(results)["metric"])
    return [m for m in results.metrics if m in plotted]
