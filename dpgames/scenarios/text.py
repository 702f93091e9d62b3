"""A :class:`~dpgames.scenarios.result.Result` as readable text: numbers with thousands separators,
every table shown compactly (head and tail rows), counted nouns in the right number.

The rules, for every figure the command line prints:

- a float is shown to 6 significant digits; from 1,000 on with thousands separators and without an
  exponent (``1,419,760``, not ``1.41976e+06``), below 1e-4 with one (``2.69429e-05``);
- an integer from 1,000 on with thousands separators (``104,694``);
- a table of more than ``head + tail`` rows shows its first ``head`` and last ``tail`` rows and a
  line saying how many were left out and how to get them all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpgames.display import PLAIN_LIMIT, SIGNIFICANT, format_number, plural

__all__ = [
    "PLAIN_LIMIT",
    "SIGNIFICANT",
    "format_number",
    "format_result",
    "format_table",
    "metric_rows",
    "plural",
]


def format_table(name: str, columns: dict[str, list], head: int = 5, tail: int = 5) -> list[str]:
    """The lines of one table: a title line, the column names and the rows, right-aligned; more than
    ``head + tail`` rows are cut to the first ``head`` and the last ``tail`` with a line in between.

    Parameters
    ----------
    name : str
    columns : dict
        Column name -> list of cells, all of one length.
    head, tail : int
        Rows shown from each end of a long table (``>= 0``).

    Returns
    -------
    list of str
    """
    names = list(columns)
    count = max((len(c) for c in columns.values()), default=0)
    shown = (
        list(range(count)) if count <= head + tail else [*range(head), *range(count - tail, count)]
    )
    cells = [[format_number(columns[c][i]) for c in names] for i in shown]
    widths = [max([len(c)] + [len(row[j]) for row in cells]) for j, c in enumerate(names)]
    lines = [f"table {name}: {plural(count, 'row')}"]
    lines.append("  " + "  ".join(c.rjust(w) for c, w in zip(names, widths)))
    for k, row in enumerate([*cells, None]):
        if count > head + tail and k == head:
            lines.append(f"  ... {plural(count - head - tail, 'row')} not shown ...")
        if row is not None:
            lines.append("  " + "  ".join(v.rjust(w) for v, w in zip(row, widths)))
    return lines


def metric_rows(result: Any, number: Callable[[Any], str] = format_number) -> list[tuple[str, str]]:
    """The metrics of a Result as the command line and the app's table show them: (label, value
    text), in display order.  The value is ``number(value)``; a metric its kind declares a
    ``gain_bound`` (:class:`~dpgames.scenarios.result.Metric`) is marked "(vacuous: gains <= 1)"
    from 1 up (:func:`dpgames.display.bound_text`).  The JSON output keeps the plain value and
    label.

    Parameters
    ----------
    result : Result
    number : callable
        A metric's value -> its text (default :func:`format_number`).

    Returns
    -------
    list of (str, str)
    """
    from dpgames.display import bound_text
    from dpgames.scenarios.registry import KindError, load

    try:  # a Result read back from JSON may be of a kind not installed here: shown without remarks
        gain_bounds = {metric.name for metric in load(result.kind).METRICS if metric.gain_bound}
    except KindError:
        gain_bounds = set()
    rows = []
    for key, value in result.metrics.items():
        text = number(value)
        if key in gain_bounds and isinstance(value, (int, float)) and not isinstance(value, bool):
            text = bound_text(float(value), text)
        rows.append((result.labels.get(key, key), text))
    return rows


def format_result(result: Any, head: int = 5, tail: int = 5, more: str = "") -> str:
    """A Result as the command line prints it: a header, the metrics (label and value) and every
    table.

    Parameters
    ----------
    result : Result
    head, tail : int
        Rows shown from each end of a long table.
    more : str
        How to get every row (e.g. ``"--json or --tables-dir DIR"``), said once below the tables
        when a table was cut.

    Returns
    -------
    str
    """
    rows = metric_rows(result)
    width = max(len(label) for label, _ in rows) if rows else 0
    seed = result.provenance.get("seed")
    title = f"{result.title}  [{result.kind}, seed {seed}]"
    lines = [title, "-" * len(title)] + [f"{label:<{width}}  {value}" for label, value in rows]
    cut = False
    for name, columns in result.tables.items():
        lines += ["", *format_table(name, columns, head, tail)]
        cut |= max((len(c) for c in columns.values()), default=0) > head + tail
    if cut and more:
        shown = (
            f"cut to their first {head} and last {tail} rows"
            if head + tail
            else "shown without their rows"
        )
        lines += ["", f"(tables {shown}; every row: {more})"]
    return "\n".join(lines)
