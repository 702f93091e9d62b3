"""Type spaces of ordinal preferences: strict rankings and weak orders, and the ordinal utility they
give.

``rankings(alternatives)``: every strict order, each a tuple of the alternatives best first (``m!``
of them).  ``weak_orders(alternatives)``: every weak order (ties allowed), each a tuple of
indifference classes best first, each class a tuple in the order the alternatives were given (the
ordered Bell, or Fubini, numbers of them: 1, 3, 13, 75, 541 for m = 1..5).  Both are lists, to be
passed as ``types=`` (or as one role's space in ``roles=``) of a
:class:`~dpgames.mechanisms.custom.CustomMechanism`.

``ordinal_utility(order, alternative)``: minus the alternative's rank (0 for the best, ``-1`` for
the next; in a weak order, its class's rank), the utility an ordinal audit
(:mod:`dpgames.analysis.ordinal_audit`) reads as an order only.

``kendall_tau(a, b)``: the Kendall tau distance of two rankings (pairs of alternatives they order
differently), which is also the least number of adjacent swaps turning one into the other (Kendall
1938; the bubble-sort distance).  ``kendall_neighbours(alternatives, k)``: the neighbouring relation
of rankings at distance 1 to ``k`` (``k = 1``: one adjacent swap), of single rankings or of profiles
of ``voters`` rankings differing in one voter's, as
:class:`~dpgames.privacy.neighbour_inputs.Neighbours` for :func:`dpgames.privacy.audit_privacy`.
Privacy under this relation is the ranking analogue of "one entry moves by at most 1" (e.g. a
Mallows-type exponential mechanism with Kendall score is eps-DP for ``k = 1``, ``k * eps``-DP for
distance ``k``: Dwork & Roth Thm 3.10 with score sensitivity ``k``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from dpgames.privacy.neighbour_inputs import Neighbours
from dpgames.validation import ValidationError, integer

#: Largest type space these functions build.
ORDER_LIMIT = 1_000_000
#: Largest number of neighbouring pairs :func:`kendall_neighbours` gives.
PAIR_LIMIT = 1_000_000

__all__ = [
    "ORDER_LIMIT",
    "PAIR_LIMIT",
    "coalitions_preferring",
    "kendall_neighbours",
    "kendall_tau",
    "ordinal_utility",
    "rankings",
    "weak_orders",
]


def _alternatives(alternatives: Iterable) -> tuple:
    if isinstance(alternatives, bytes) or not isinstance(alternatives, Iterable):
        raise ValidationError(
            "alternatives", f"must be an iterable of hashable alternatives, got {alternatives!r}"
        )
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
        If ``alternatives`` is empty, not distinct or not hashable, or ``m!`` exceeds
        :data:`ORDER_LIMIT`.

    Examples
    --------
    >>> rankings("abc")[:3]
    [('a', 'b', 'c'), ('a', 'c', 'b'), ('b', 'a', 'c')]
    >>> len(rankings(range(5)))
    120
    """
    items = _alternatives(alternatives)
    if math.factorial(len(items)) > ORDER_LIMIT:
        raise ValidationError(
            "alternatives",
            f"has {len(items)} alternatives: {math.factorial(len(items)):,} "
            f"rankings exceed the limit of {ORDER_LIMIT:,}",
        )
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
        raise ValidationError(
            "alternatives",
            f"has {len(items)} alternatives: {_fubini(len(items)):,} weak orders "
            f"exceed the limit of {ORDER_LIMIT:,}",
        )
    return _orders(items)


def _orders(items: tuple) -> list[tuple[tuple, ...]]:
    """Weak orders of ``items``: a nonempty top class (a subset, in input order), then a weak order
    of the rest."""
    if not items:
        return [()]
    out: list[tuple[tuple, ...]] = []
    for size in range(len(items), 0, -1):
        for top in itertools.combinations(items, size):
            rest = tuple(a for a in items if a not in top)
            out.extend((top, *tail) for tail in _orders(rest))
    return out


def ordinal_utility(order: Any, alternative: Any) -> int:
    """Minus the rank of ``alternative`` in ``order`` (a ranking, or a weak order of classes): 0 for
    the best.

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


def coalitions_preferring(profile: Sequence, winner: Any) -> list[tuple[int, ...]]:
    """For each alternative ``c`` some voter ranks above ``winner``, the voters who do: the
    coalitions of coalitional manipulation in voting (Durand's *CM*, as SVVAMP decides it).

    A profile is coalitionally manipulable when for some ``c`` the voters preferring ``c`` to the
    sincere winner ``w`` can cast ballots electing ``c``, the others sincere.  With a deterministic
    rule this is ``truthfulness_audit(mech, profile, coalitions=coalitions_preferring(profile, w),
    manipulation="strong")``: every member of a coalition that strictly gains prefers the new winner
    ``o`` to ``w``, so the coalition is within the voters preferring ``o``, who can cast the same
    ballots.

    Parameters
    ----------
    profile : sequence of rankings or weak orders
        One per voter (:func:`rankings`, :func:`weak_orders`).
    winner : hashable
        The sincere winner, ranked by every voter.

    Returns
    -------
    list of tuple of int
        One coalition per alternative preferred to ``winner`` by some voter (ties in a weak order do
        not prefer), in order of the alternatives' first appearance; equal coalitions once.

    Raises
    ------
    ValidationError
        If ``profile`` is not a non-empty sequence of orders ranking ``winner``.

    Examples
    --------
    >>> coalitions_preferring([("a", "b", "c"), ("c", "a", "b"), ("b", "c", "a")], "b")
    [(0, 1), (1,)]
    """
    if isinstance(profile, (str, bytes)) or not isinstance(profile, Sequence) or not profile:
        raise ValidationError(
            "profile", f"must be a non-empty sequence of rankings, got {profile!r}"
        )
    found: dict[Any, list[int]] = {}
    for i, order in enumerate(profile):
        if isinstance(order, (str, bytes)) or not isinstance(order, Sequence):
            raise ValidationError("profile", f"holds {order!r} for voter {i}: not a ranking")
        try:
            w = -ordinal_utility(order, winner)
        except ValidationError:
            raise ValidationError(
                "winner", f"{winner!r} is not ranked by voter {i} ({order!r})"
            ) from None
        for item in order[:w]:
            for c in item if isinstance(item, tuple) else (item,):
                found.setdefault(c, []).append(i)
    return list(dict.fromkeys(tuple(group) for group in found.values()))


def kendall_tau(a: Any, b: Any) -> int:
    """The Kendall tau distance of two rankings of the same alternatives: the number of pairs they
    order differently, equal to the least number of adjacent swaps turning ``a`` into ``b`` (Kendall
    1938).

    Parameters
    ----------
    a, b : sequence of hashable
        Rankings, best first, of the same distinct alternatives.

    Returns
    -------
    int
        In ``[0, m (m - 1) / 2]``.

    Raises
    ------
    ValidationError
        If either is not a ranking, or they rank different alternatives.

    Examples
    --------
    >>> kendall_tau("abc", "bac"), kendall_tau("abcd", "dcba")
    (1, 6)
    """
    first = _ranking(a, "a")
    second = _ranking(b, "b")
    if set(first) != set(second):
        raise ValidationError("b", f"must rank the same alternatives as a: {first!r} vs {second!r}")
    where = {x: i for i, x in enumerate(second)}
    pos = [where[x] for x in first]
    return sum(pos[i] > pos[j] for i, j in itertools.combinations(range(len(pos)), 2))


def _ranking(order: Any, field: str) -> tuple:
    """``order`` as a ranking (distinct alternatives), the error naming ``field``."""
    try:
        return _alternatives(order)
    except ValidationError as exc:
        raise ValidationError(field, f"must be a ranking: {exc.reason}") from None


def _mahonian(m: int) -> list[int]:
    """``M[d]``: rankings of ``m`` alternatives at Kendall distance ``d`` from a given one
    (inversions)."""
    counts = [1]
    for j in range(1, m + 1):  # insert the j-th alternative: it adds 0 .. j - 1 inversions
        counts = [
            sum(counts[d - s] for s in range(j) if 0 <= d - s < len(counts))
            for d in range(len(counts) + j - 1)
        ]
    return counts


def _within(ranking: tuple, k: int) -> Iterator[tuple]:
    """Every ranking at Kendall distance 1 .. ``k`` from ``ranking``: breadth-first over adjacent
    swaps (the distance is the swap graph's shortest path)."""
    seen = {ranking}
    frontier = [ranking]
    for _ in range(k):
        nxt = []
        for r in frontier:
            for i in range(len(r) - 1):
                s = r[:i] + (r[i + 1], r[i]) + r[i + 2 :]
                if s not in seen:
                    seen.add(s)
                    nxt.append(s)
                    yield s
        frontier = nxt


def kendall_neighbours(
    alternatives: Iterable, k: int = 1, *, voters: int | None = None
) -> Neighbours:
    """Pairs of rankings (or of profiles of rankings) at Kendall tau distance 1 to ``k``, each
    unordered pair once (the privacy audits check both orders).

    Without ``voters``: every pair of rankings of ``alternatives`` at distance ``1 .. k``
    (``m! * (M_1 + ... + M_k) / 2`` pairs, ``M_d`` the Mahonian numbers: rankings at distance ``d``
    from a given one).  With ``voters = n``: every pair of profiles of ``n`` rankings that differ in
    one voter's ranking, moved by ``1 .. k`` adjacent swaps (a voter's change of mind by ``k``
    swaps: the ranking analogue of "one record moves by at most ``k``").

    Parameters
    ----------
    alternatives : iterable of hashable
        At least two, distinct.
    k : int, default 1
        Largest distance, ``1 .. m (m - 1) / 2`` (the largest: every pair of distinct rankings).
    voters : int, optional
        Rankings per profile, ``>= 1``.

    Returns
    -------
    Neighbours
        Pairs of rankings (tuples), or of profiles (tuples of rankings), with the relation in words.

    Raises
    ------
    ValidationError
        On bad alternatives, ``k`` or ``voters``, or above :data:`PAIR_LIMIT` pairs (with the
        count).

    Examples
    --------
    >>> pairs = kendall_neighbours("abc")
    >>> len(pairs), list(pairs)[0], pairs.relation
    (6, (('a', 'b', 'c'), ('b', 'a', 'c')), 'rankings one adjacent swap apart (Kendall tau distance <= 1)')
    >>> len(kendall_neighbours("abc", voters=2)), len(kendall_neighbours("abc", k=3))
    (72, 15)
    """
    items = _alternatives(alternatives)
    m = len(items)
    if m < 2:
        raise ValidationError(
            "alternatives", f"must hold at least two alternatives to swap, got {items!r}"
        )
    k = integer("k", k, 1, m * (m - 1) // 2)
    n = None if voters is None else integer("voters", voters, 1, 10**6)
    order = rankings(items)
    per_ranking = sum(_mahonian(m)[1 : k + 1])
    count = len(order) * per_ranking // 2
    if n is not None:
        # n m!^(n - 1) times the pairs of one voter; above 2^60 the count is not formed
        count = n * len(order) ** (n - 1) * count if n * math.log2(len(order)) < 60 else 2**60
    if count > PAIR_LIMIT:
        shown = "more than 1e18" if count >= 2**60 else f"{count:,}"
        raise ValidationError(
            "voters" if n is not None else "alternatives",
            f": {shown} neighbouring pairs exceed the limit of {PAIR_LIMIT:,}; give fewer "
            "alternatives or voters",
        )
    rank = {r: i for i, r in enumerate(order)}
    moved = "by one adjacent swap" if k == 1 else f"by 1 to {k} adjacent swaps"

    def singles() -> Iterator[tuple[tuple, tuple]]:
        for r in order:
            yield from ((r, s) for s in _within(r, k) if rank[s] > rank[r])

    def profiles(size: int) -> Iterator[tuple[tuple, tuple]]:
        for profile in itertools.product(order, repeat=size):
            for i, r in enumerate(profile):
                yield from (
                    (profile, profile[:i] + (s,) + profile[i + 1 :])
                    for s in _within(r, k)
                    if rank[s] > rank[r]
                )

    if n is None:
        apart = "one adjacent swap" if k == 1 else f"1 to {k} adjacent swaps"
        return Neighbours(singles, count, f"rankings {apart} apart (Kendall tau distance <= {k})")
    return Neighbours(
        lambda: profiles(n), count, f"profiles of {n} rankings, one voter's ranking moved {moved}"
    )
