"""Scenario titles that follow the values they state.

A title is free text (``"Digital-goods auction, 1,000 uniform bidders, eps = 0.5"``).  Its
comma-separated clauses that name a field (its last component, or one of :data:`ALIASES`) next to a
number state that field's value; when an override changes the field, :func:`retitle` writes the new
value there, so that the title of a run, of its :class:`~dpgames.scenarios.Result` and of a saved
settings file never states a value the run did not use.  :func:`dpgames.sweep.plot.figure_title`
drops the same clauses for a swept parameter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: Other words for a field in scenario titles (``"eps = 0.5"``, ``"1,000 uniform bidders"``).
ALIASES: dict[str, tuple[str, ...]] = {
    "epsilon": ("eps", "ε"),
    "n": ("bidders", "agents", "players", "drivers"),
}

#: A number as titles write it: ``1,000``, ``0.5``, ``1e-3`` (not part of a word or a dotted name).
_NUMBER = re.compile(
    r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])|(?<![\w.,])\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])"
)


def words_pattern(fields: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern matching, as a whole word, the last component of one of ``fields`` or an alias of
    it.

    Parameters
    ----------
    fields : iterable of str
        Dotted field names.

    Returns
    -------
    re.Pattern or None
        None when there is no field.
    """
    words = set()
    for field in fields:
        short = field.rsplit(".", 1)[-1]
        words |= {short, *ALIASES.get(short, ())}
    return (
        re.compile(r"(?<![\w.])(" + "|".join(re.escape(w) for w in sorted(words)) + r")(?![\w.])")
        if words
        else None
    )


def states_a_value(clause: str, pattern: re.Pattern[str] | None) -> bool:
    """Whether a title clause names a field of ``pattern`` (see :func:`words_pattern`) and holds a
    number.

    Parameters
    ----------
    clause : str
    pattern : re.Pattern or None

    Returns
    -------
    bool
    """
    return pattern is not None and bool(pattern.search(clause)) and bool(re.search(r"\d", clause))


def retitle(title: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """``title`` with the values it states of the fields of ``new`` replaced by theirs.

    In each clause that names a field (see :func:`states_a_value`) the number equal to its ``old``
    value, else the clause's only number, becomes the new value, written in the same style
    (thousands separated when the old one was).  A clause that names the field but holds several
    numbers, none of them its old value, cannot be rewritten safely: it is replaced by ``"name =
    value"``.  A title that names none of the fields is returned unchanged: it states none of their
    values.

    Parameters
    ----------
    title : str
    old : mapping
        Dotted field -> the value the title was written for (absent: the field was left at its
        default).
    new : mapping
        Dotted field -> the value of the run.

    Returns
    -------
    str

    Examples
    --------
    >>> retitle(
    ...     "Digital-goods auction, 1,000 uniform bidders, eps = 0.5",
    ...     {"population.n": 1000, "mechanism.epsilon": 0.5},
    ...     {"population.n": 5000, "mechanism.epsilon": 0.3},
    ... )
    'Digital-goods auction, 5,000 uniform bidders, eps = 0.3'
    >>> retitle("Pigou's two roads, 1,000 drivers", {}, {"mechanism.epsilon": 0.3})
    "Pigou's two roads, 1,000 drivers"
    """
    clauses = title.split(", ")
    for field, value in new.items():
        if field in old and _same(old[field], value):
            continue
        pattern = words_pattern([field])
        for i, clause in enumerate(clauses):
            if states_a_value(clause, pattern):
                clauses[i] = _rewrite(clause, field, old.get(field), value)
    return ", ".join(clauses)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _rewrite(clause: str, field: str, old: Any, value: Any) -> str:
    numbers = list(_NUMBER.finditer(clause))
    hits = [m for m in numbers if _is_number(old) and _number(m.group()) == old]
    target = hits[0] if hits else numbers[0] if len(numbers) == 1 else None
    if target is None:
        return f"{field.rsplit('.', 1)[-1]} = {_shown(value, False)}"
    return clause[: target.start()] + _shown(value, "," in target.group()) + clause[target.end() :]


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _shown(value: Any, grouped: bool) -> str:
    if _is_number(value):
        return (
            f"{value:,}"
            if grouped or (isinstance(value, int) and abs(value) >= 10_000)
            else str(value)
        )
    return str(value)
