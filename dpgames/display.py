"""How dpgames objects show themselves in Jupyter: a compact HTML table, and a small inline SVG of a
law.

A bottom module like :mod:`dpgames.validation` (it imports nothing of dpgames), so every layer may
give its objects a ``_repr_html_`` built from these two functions, and every figure shown as text
(the command line's output, these tables) follows one rule, :func:`format_number`: 6 significant
digits; from 1,000 on with thousands separators and no exponent; below 1e-4 with one.  No plotting
library is needed: the law is drawn as plain SVG, so a notebook shows it without matplotlib.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

#: Largest number of bars drawn one per outcome; longer laws are drawn as a filled curve.
MAX_BARS = 60


#: Largest magnitude shown without an exponent (beyond it, thousands separators stop helping).
PLAIN_LIMIT = 1e15
SIGNIFICANT = 6


def format_number(x: Any) -> str:
    """One figure as text (see the module docstring); anything but a number is ``str(x)``.

    Parameters
    ----------
    x : int, float, bool, str or None
        ``None`` (an undefined cell of a table) is shown as ``-``.

    Returns
    -------
    str

    Examples
    --------
    >>> (
    ...     format_number(1419760.4),
    ...     format_number(104694),
    ...     format_number(2.69429e-05),
    ...     format_number(0.5),
    ... )
    ('1,419,760', '104,694', '2.69429e-05', '0.5')
    """
    if x is None:
        return "-"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}" if abs(x) >= 1000 else str(x)
    if not math.isfinite(x):
        return str(x)
    magnitude = abs(x)
    if magnitude < 1000 or magnitude >= PLAIN_LIMIT:
        return f"{x:.{SIGNIFICANT}g}"
    digits = math.floor(math.log10(magnitude)) + 1
    text = f"{x:,.{max(0, SIGNIFICANT - digits)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``"1 iteration"``, ``"2 iterations"``: the count with its noun in the right number.

    Parameters
    ----------
    count : int
    noun : str
        The singular.
    nouns : str, optional
        The plural (default: ``noun + "s"``, or ``+ "es"`` after s, x, ch, sh).

    Returns
    -------
    str

    Examples
    --------
    >>> plural(1, "class"), plural(3, "class"), plural(1_000, "split")
    ('1 class', '3 classes', '1,000 splits')
    """
    if nouns is None:
        nouns = noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")
    return f"{format_number(count)} {noun if count == 1 else nouns}"


#: The most a gain from a lie can be where values and prices lie in [0, 1] (utilities are in [0,
#: 1]): a bound on such a gain of this much or more says nothing.
GAIN_CEILING = 1.0


def bound_text(bound: float, shown: str | None = None, *, why: bool = True) -> str:
    """A bound on a gain from a lie (utilities in [0, 1]) as text, marked vacuous when it is
    :data:`GAIN_CEILING` or more: no gain exceeds 1, so such a bound says nothing.

    Parameters
    ----------
    bound : float
    shown : str, optional
        The bound as the caller formats it (default: 4 significant digits).
    why : bool
        Say why it is vacuous ("gains <= 1"); False for a narrow tile whose help says it.

    Returns
    -------
    str

    Examples
    --------
    >>> bound_text(4.0), bound_text(0.6, "0.6"), bound_text(1.0, why=False)
    ('4 (vacuous: gains <= 1)', '0.6', '1 (vacuous)')
    """
    text = f"{bound:.4g}" if shown is None else shown
    if not bound >= GAIN_CEILING:
        return text
    return f"{text} (vacuous: gains <= {GAIN_CEILING:g})" if why else f"{text} (vacuous)"


def _cell(value: Any) -> str:
    """A value as escaped table text, by :func:`format_number`'s rules."""
    if isinstance(value, np.generic):
        value = value.item()
    return html.escape(format_number(value))


def tuple_text(items: Iterable[Any], limit: int = 12) -> str:
    """``items`` as the ``repr`` of a tuple for a message, cut after ``limit`` items with the total
    count.

    Parameters
    ----------
    items : iterable
    limit : int, default 12
        Items shown before the rest is elided.

    Returns
    -------
    str

    Examples
    --------
    >>> tuple_text(["a", "b"])
    "('a', 'b')"
    >>> tuple_text(range(20), limit=3)
    '(0, 1, 2, ... 20 in all)'
    """
    items = list(items)
    if len(items) <= limit:
        return repr(tuple(items))
    return f"({', '.join(map(repr, items[:limit]))}, ... {len(items)} in all)"


def text_rows(rows: Iterable[tuple[str, Any]]) -> str:
    """``(label, value)`` rows as aligned text, one per line, each value by :func:`format_number`.

    Parameters
    ----------
    rows : iterable of (str, object)

    Returns
    -------
    str

    Examples
    --------
    >>> print(text_rows([("agents", 1000), ("largest gain", 0.000314291)]))
    agents        1,000
    largest gain  0.000314291
    """
    rows = list(rows)
    width = max((len(label) for label, _ in rows), default=0)
    return "\n".join(f"{label:<{width}}  {format_number(value)}" for label, value in rows)


def html_table(rows: Iterable[tuple[str, Any]], *, title: str | None = None) -> str:
    """A two-column HTML table (name, value), with an optional bold title above it.

    Parameters
    ----------
    rows : iterable of (str, object)
        The names and values, in order; values are formatted by type (see the module docstring).
    title : str, optional
        Shown above the table, escaped.

    Returns
    -------
    str
        An HTML fragment (a ``<div>`` holding the title and the ``<table>``).

    Examples
    --------
    >>> print(
    ...     html_table([("agents", 1000), ("epsilon", 0.5)], title="auction")
    ... )  # doctest: +ELLIPSIS
    <div><b>auction</b><table>...<td style="text-align:left">agents</td><td style="text-align:right">1,000</td>...</table></div>
    """
    head = f"<b>{html.escape(title)}</b>" if title else ""
    body = "".join(
        f'<tr><td style="text-align:left">{html.escape(str(name))}</td>'
        f'<td style="text-align:right">{_cell(value)}</td></tr>'
        for name, value in rows
    )
    return f"<div>{head}<table>{body}</table></div>"


def svg_law(
    probabilities: Sequence[float] | np.ndarray,
    *,
    width: int = 320,
    height: int = 70,
    first: str = "",
    last: str = "",
) -> str:
    """A small inline SVG of a law over ordered outcomes: bars up to :data:`MAX_BARS` outcomes, else
    a filled curve; the outcomes' first and last labels under it.

    Parameters
    ----------
    probabilities : sequence of float
        Non-negative weights, one per outcome in order (normalised here for drawing only).
    width, height : int
        The drawing's size in pixels.
    first, last : str
        Labels of the first and last outcome.

    Returns
    -------
    str
        An ``<svg>`` element.

    Examples
    --------
    >>> svg_law([0.25, 0.5, 0.25], first="0", last="1").startswith("<svg")
    True
    """
    p = np.asarray(probabilities, dtype=float)
    top = float(p.max()) if p.size and p.max() > 0 else 1.0
    plot_height = height - 14
    heights = p / top * plot_height
    if p.size <= MAX_BARS:
        step = width / max(p.size, 1)
        shapes = "".join(
            f'<rect x="{i * step:.1f}" y="{plot_height - h:.1f}" '
            f'width="{max(step - 1, 0.5):.1f}" height="{h:.1f}"/>'
            for i, h in enumerate(heights)
        )
    else:
        xs = np.linspace(0, width, p.size)
        points = " ".join(f"{x:.1f},{plot_height - h:.1f}" for x, h in zip(xs, heights))
        shapes = f'<polygon points="0,{plot_height} {points} {width},{plot_height}"/>'
    labels = (
        f'<text x="0" y="{height - 2}" font-size="10">{html.escape(first)}</text>'
        f'<text x="{width}" y="{height - 2}" font-size="10" '
        f'text-anchor="end">{html.escape(last)}</text>'
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}"><g fill="#4c72b0">{shapes}</g>{labels}</svg>'
    )
