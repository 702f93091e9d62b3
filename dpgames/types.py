"""Type spaces of ordinal preferences: strict rankings and weak orders, and the ordinal utility they give.

``rankings(alternatives)``: every strict order, each a tuple of the alternatives best first (``m!`` of
them).  ``weak_orders(alternatives)``: every weak order (ties allowed), each a tuple of indifference
classes best first, each class a tuple in the order the alternatives were given (the ordered Bell, or
Fubini, numbers of them: 1, 3, 13, 75, 541 for m = 1..5).  Both are lists, to be passed as ``types=`` (or
as one role's space in ``roles=``) of a :class:`~dpgames.mechanisms.custom.CustomMechanism`.

``ordinal_utility(order, alternative)``: minus the alternative's rank (0 for the best, ``-1`` for the
next; in a weak order, its class's rank), the utility an ordinal audit
(:mod:`dpgames.analysis.ordinal_audit`) reads as an order only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any

from dpgames.validation import ValidationError

#: Largest type space these functions build.
ORDER_LIMIT = 1_000_000

__all__ = ["ORDER_LIMIT", "ordinal_utility", "rankings", "weak_orders"]


def _alternatives(alternatives: Iterable) -> tuple:
    if isinstance(alternatives, bytes) or not isinstance(alternatives, Iterable):
        raise ValidationError("alternatives", f"must be an iterable of hashable alternatives, got {alternatives!r}")
    items = tuple(alternatives)
    if not items:
        raise ValidationError("alternatives", "must hold at least one alternative")
    try:
        distinct = len(set(items)) == len(items)
    except TypeError:
        raise ValidationError("alternatives", f"must be hashable, got {items!r}") from None
    if not distinct:
        raise ValidationError("alternatives", f"must be distinct, got {items!r}")
    return items


def rankings(alternatives: Iterable) -> list[tuple]:
    """Every strict ranking of ``alternatives``, best first, in lexicographic order of positions.

    Parameters
    ----------
    alternatives : iterable of hashable
        Distinct (a string gives its characters).

    Returns
    -------
    list of tuple
        ``m!`` rankings.

    Raises
    ------
    ValidationError
        If ``alternatives`` is empty, not distinct or not hashable, or ``m!`` exceeds :data:`ORDER_LIMIT`.

    Examples
    --------
    >>> rankings("abc")[:3]
    [('a', 'b', 'c'), ('a', 'c', 'b'), ('b', 'a', 'c')]
    >>> len(rankings(range(5)))
    120
    """
    items = _alternatives(alternatives)
    if math.factorial(len(items)) > ORDER_LIMIT:
        raise ValidationError("alternatives", f"has {len(items)} alternatives: {math.factorial(len(items)):,} "
                                              f"rankings exceed the limit of {ORDER_LIMIT:,}")
    return list(itertools.permutations(items))


def _fubini(m: int) -> int:
    """Weak orders of ``m`` alternatives: ``a(m) = sum_k C(m, k) a(m - k)``, ``a(0) = 1``."""
    a = [1]
    for j in range(1, m + 1):
        a.append(sum(math.comb(j, k) * a[j - k] for k in range(1, j + 1)))
    return a[m]


def weak_orders(alternatives: Iterable) -> list[tuple[tuple, ...]]:
    """Every weak order of ``alternatives``: tuples of indifference classes, best first.

    Parameters
    ----------
    alternatives : iterable of hashable

    Returns
    -------
    list of tuple of tuple
        The ordered Bell (Fubini) number of them.

    Raises
    ------
    ValidationError
        As :func:`rankings`, above :data:`ORDER_LIMIT` orders.

    Examples
    --------
    >>> weak_orders("ab")
    [(('a', 'b'),), (('a',), ('b',)), (('b',), ('a',))]
    """
    items = _alternatives(alternatives)
    if _fubini(len(items)) > ORDER_LIMIT:
        raise ValidationError("alternatives", f"has {len(items)} alternatives: {_fubini(len(items)):,} weak orders "
                                              f"exceed the limit of {ORDER_LIMIT:,}")
    return _orders(items)


def _orders(items: tuple) -> list[tuple[tuple, ...]]:
    """Weak orders of ``items``: a nonempty top class (a subset, in input order), then a weak order of the rest."""
    if not items:
        return [()]
    out: list[tuple[tuple, ...]] = []
    for size in range(len(items), 0, -1):
        for top in itertools.combinations(items, size):
            rest = tuple(a for a in items if a not in top)
            out.extend((top, *tail) for tail in _orders(rest))
    return out


def ordinal_utility(order: Any, alternative: Any) -> int:
    """Minus the rank of ``alternative`` in ``order`` (a ranking, or a weak order of classes): 0 for the best.

    Parameters
    ----------
    order : tuple
        A ranking (:func:`rankings`) or a weak order (:func:`weak_orders`).
    alternative : hashable

    Returns
    -------
    int

    Raises
    ------
    ValidationError
        If ``alternative`` is not ranked by ``order``.

    Examples
    --------
    >>> ordinal_utility(("b", "a", "c"), "a"), ordinal_utility((("a", "b"), ("c",)), "b")
    (-1, 0)
    """
    for rank, item in enumerate(order):
        if item == alternative or (isinstance(item, tuple) and alternative in item):
            return -rank
    raise ValidationError("alternative", f"{alternative!r} is not ranked by {order!r}")
