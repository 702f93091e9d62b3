"""Candidate pairs of neighbouring inputs for privacy audits, with the relation they come from.

An audit is only as strong as the pairs it looks at: the worst pair of a sparse-vector mechanism is
not the obvious one.  :func:`neighbouring_inputs` gives the standard candidates for vectors of query
answers:

* the input patterns of Ding, Wang, Wang, Zhang & Kifer, "Detecting Violations of Differential
  Privacy" (CCS 2018, StatDP, Table 1): *one above*, *one below*, *one above rest below*, *one below
  rest above*, *half half*, *all above / all below* and the *X shape*, each a base vector and a
  neighbour whose entries move by at most one;
* random pairs drawn from a seed, inside ``[low, high]``;

for a chosen neighbouring relation:

``"all-entries"``
    every entry (query answer) changes by at most 1: sensitivity-1 queries, one individual's record
    moves each of them (report-noisy-max, sparse vector, prefix sums);
``"one-entry"``
    one entry changes by at most 1 (a histogram under "replace one record" moves two bins: use this
    relation per bin, or ``"add-remove"``);
``"add-remove"``
    a histogram of counts (non-negative integers) with one record added or removed: one entry
    changes by exactly 1.

Patterns that a relation does not allow are left out (for ``"one-entry"``, only *one above* and *one
below* at every position survive).  Every pair is checked against the relation before it is
returned.

:class:`Neighbours` holds pairs and the relation's description; the audits accept it wherever they
accept an iterable of pairs and report the relation they audited.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, choice, integer, real

RELATIONS = {
    "all-entries": "every entry of the input vector changes by at most 1",
    "one-entry": "one entry of the input vector changes by at most 1",
    "add-remove": "a histogram of counts with one record added or removed (one count changes by 1)",
}

#: Largest vector length :func:`neighbouring_inputs` builds patterns for.
MAX_LENGTH = 10_000
#: Largest number of pattern pairs (levels x patterns).
MAX_PATTERN_PAIRS = 100_000
#: Largest number of random pairs.
MAX_RANDOM = 100_000


@dataclass(frozen=True)
class Neighbours:
    """Pairs of neighbouring inputs ``(x, x')`` and the relation they come from (``relation``: words
    for people; the audits print it).  Iterating gives the pairs; ``len`` their number.

    Build it from pairs held in memory (:meth:`of`) or from a function that yields them (for
    enumerations too large to hold, with their ``count`` stated up front).

    Examples
    --------
    >>> pairs = Neighbours.of([(0, 1), (1, 2)], "one count changes by 1")
    >>> len(pairs), list(pairs)[1], pairs.relation
    (2, (1, 2), 'one count changes by 1')
    """

    make: Callable[[], Iterator[tuple[Any, Any]]]
    count: int
    relation: str = ""
    names: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, pairs: Iterable[tuple[Any, Any]], relation: str = "", names: Iterable[str] = ()
    ) -> Neighbours:
        """Pairs held in memory.

        Parameters
        ----------
        pairs : iterable of pairs
        relation : str, default ""
        names : iterable of str, optional
            One name per pair (e.g. the pattern it comes from), shown by the audits.

        Returns
        -------
        Neighbours

        Raises
        ------
        ValidationError
            If an item is not a pair, the names do not match the pairs, or there are no pairs.
        """
        held = tuple(_pair(p) for p in _iterate(pairs))
        names = tuple(str(n) for n in names)
        if names and len(names) != len(held):
            raise ValidationError("names", f": {len(names)} names for {len(held)} pairs")
        if not held:
            raise ValidationError("neighbours", "is empty: give at least one pair (x, x')")
        return cls(lambda: iter(held), len(held), str(relation), names)

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return self.make()

    def __len__(self) -> int:
        return self.count

    def name(self, index: int) -> str:
        """The name of the pair at ``index`` (its pattern), or ``""``."""
        return self.names[index] if index < len(self.names) else ""


def _iterate(pairs: Any) -> Iterator[Any]:
    if isinstance(pairs, (str, bytes)):
        raise ValidationError("neighbours", "must be an iterable of pairs (x, x'), not a string")
    try:
        return iter(pairs)
    except TypeError:
        raise ValidationError(
            "neighbours", f"must be an iterable of pairs (x, x'), got {type(pairs).__name__}"
        ) from None


def _pair(item: Any) -> tuple[Any, Any]:
    try:
        x, x2 = item
    except (TypeError, ValueError):
        raise ValidationError(
            "neighbours", f": each neighbour must be a pair (x, x'), got {item!r}"
        ) from None
    return x, x2


def as_neighbours(neighbours: Any) -> Neighbours:
    """``neighbours`` as :class:`Neighbours`: returned as is, or its pairs read into memory.

    Parameters
    ----------
    neighbours : Neighbours or iterable of pairs

    Returns
    -------
    Neighbours

    Raises
    ------
    ValidationError
        On something that is not an iterable of pairs, or no pairs.
    """
    return neighbours if isinstance(neighbours, Neighbours) else Neighbours.of(neighbours)


def statdp_patterns(
    length: int, positions: str = "ends"
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """StatDP's input patterns (Ding et al. 2018, Table 1) for vectors of ``length`` query answers,
    as ``(name, x, x')`` with entries in ``{0, 1, 2}`` and every entry moved by at most 1.

    The four patterns with one special entry (*one above*, *one below*, *one above rest below*, *one
    below rest above*) put it first, as StatDP does, and with ``positions="ends"`` also last, with
    ``"all"`` at every position (named ``"... @k"``); *half half* comes in both orders of its
    halves.  The position matters for mechanisms that read queries in order: sparse vector halts at
    its first "above", so an answer pattern that accumulates loss over many "below" answers needs
    the special entry at the end (the loss of Lee & Clifton's variant, Lyu et al. 2017 Alg. 4, grows
    with the number of queries answered before it).

    Parameters
    ----------
    length : int
        ``>= 1``.
    positions : {"first", "ends", "all"}, default "ends"

    Returns
    -------
    list of (str, numpy.ndarray, numpy.ndarray)

    Examples
    --------
    >>> [(name, x.tolist(), y.tolist()) for name, x, y in statdp_patterns(4, "first")][4]
    ('half half', [1, 1, 1, 1], [0, 0, 2, 2])
    >>> [name for name, _, _ in statdp_patterns(4)][:3]
    ['one above @0', 'one above @3', 'one below @0']
    """
    length = integer("length", length, 1, MAX_LENGTH)
    positions = choice("positions", positions, ("first", "ends", "all"))
    at = {"first": [0], "ends": sorted({0, length - 1}), "all": list(range(length))}[positions]
    ones = np.ones(length, dtype=np.int64)
    half = length // 2

    def moved(first: int, rest: int, k: int) -> np.ndarray:
        out = np.full(length, rest, dtype=np.int64)
        out[k] = first
        return out

    out: list[tuple[str, np.ndarray, np.ndarray]] = []
    for name, first, rest in (
        ("one above", 2, 1),
        ("one below", 0, 1),
        ("one above rest below", 2, 0),
        ("one below rest above", 0, 2),
    ):
        out += [(name if len(at) == 1 else f"{name} @{k}", ones, moved(first, rest, k)) for k in at]
    half_half = np.concatenate([np.zeros(half, np.int64), np.full(length - half, 2, np.int64)])
    out.append(("half half", ones, half_half))
    if positions != "first" and length > 1:
        out.append(("half half, reversed", ones, half_half[::-1].copy()))
    x_shape = (np.arange(length) < max(half, 1)).astype(np.int64)
    out += [
        ("all above", ones, ones * 2),
        ("all below", ones, ones * 0),
        ("X shape", x_shape, 1 - x_shape),
    ]
    return out


def neighbouring_inputs(
    length: int,
    relation: str = "all-entries",
    *,
    low: float = -10.0,
    high: float = 10.0,
    random: int = 0,
    positions: str = "ends",
    levels: str = "one",
    rng: RNGLike = None,
) -> Neighbours:
    """Candidate neighbouring pairs of query-answer vectors: StatDP's patterns allowed by
    ``relation``, plus ``random`` random pairs (see the module docstring).

    The patterns are placed inside ``[low, high]`` (their lowest entry at the whole number nearest 0
    where they fit, else at ``low``; or at every whole-number level, ``levels="all"``); the random
    pairs draw ``x`` uniformly in ``[low, high]`` (counts in ``[max(low, 0), high]`` for
    ``"add-remove"``) and move it as the relation allows, kept in range.

    Parameters
    ----------
    length : int
        Entries per input vector (``1 .. 10,000``).
    relation : {"all-entries", "one-entry", "add-remove"}, default "all-entries"
    low, high : float, default -10, 10
        The range of an entry; ``high - low >= 2`` (the patterns span 2).
    random : int, default 0
        Random pairs added after the patterns (``0 .. 100,000``).
    positions : {"first", "ends", "all"}, default "ends"
        ``"all-entries"``: where the patterns with one special entry put it (see
        :func:`statdp_patterns`).
    levels : {"one", "all"}, default "one"
        The patterns at the one level nearest 0, or at every whole-number level of ``[low, high]``
        (for mechanisms whose output depends on where the input sits, e.g. hashed categories:
        RAPPOR).
    rng : Generator, int or None
        Seed of the random pairs.

    Returns
    -------
    Neighbours
        Named pairs (the pattern, or ``"random k"``), each satisfying ``relation``.

    Raises
    ------
    ValidationError
        On a bad length, relation, range or count.

    Examples
    --------
    >>> pairs = neighbouring_inputs(5, "one-entry")
    >>> len(pairs), pairs.names[:2]
    (10, ('one above @0', 'one below @0'))
    >>> len(neighbouring_inputs(5)), neighbouring_inputs(5).relation
    (13, 'every entry of the input vector changes by at most 1')
    """
    length = integer("length", length, 1, MAX_LENGTH)
    relation = choice("relation", relation, tuple(RELATIONS))
    low, high = real("low", low), real("high", high)
    if relation == "add-remove":
        low = max(low, 0.0)
    if not high - low >= 2:
        raise ValidationError(
            "high", f"must exceed low by at least 2 (the patterns span 2), got [{low}, {high}]"
        )
    random = integer("random", random, 0, MAX_RANDOM)
    levels = choice("levels", levels, ("one", "all"))
    bases = (
        _levels(low, high)
        if levels == "all"
        else [_levels(low, high)[0] if max(low, 0.0) + 2 <= high else low]
    )
    if len(bases) * length * 8 > MAX_PATTERN_PAIRS:
        raise ValidationError(
            "levels",
            f": {len(bases):,} levels x {length:,} entries give too many pairs "
            f"(limit {MAX_PATTERN_PAIRS:,}); narrow [low, high] or use levels='one'",
        )
    named: list[tuple[str, tuple[np.ndarray, np.ndarray]]] = []
    for base in bases:
        at = "" if len(bases) == 1 else f" (level {base:g})"
        named += [(name + at, pair) for name, pair in _patterns(length, relation, positions, base)]
    named += _random_pairs(length, relation, low, high, random, rng)
    for name, (x, y) in named:
        _check_relation(relation, x, y, name)
    return Neighbours.of(
        [pair for _, pair in named], RELATIONS[relation], [name for name, _ in named]
    )


def _levels(low: float, high: float) -> list[float]:
    """The whole-number levels a pattern (spanning 2) can start at inside ``[low, high]``, the one
    nearest 0 first (where the patterns sit by default)."""
    first, last = math.ceil(low), math.floor(high) - 2
    if last < first:
        return [low]
    levels = list(range(first, last + 1))
    return [float(v) for v in sorted(levels, key=lambda v: (abs(v), v))]


def _patterns(
    length: int, relation: str, positions: str, base: float
) -> list[tuple[str, tuple[np.ndarray, np.ndarray]]]:
    """The patterns of ``relation`` with entries ``base + {0, 1, 2}``."""
    if relation == "all-entries":
        return [(name, (x + base, y + base)) for name, x, y in statdp_patterns(length, positions)]
    named = []
    for i in range(length):  # one pattern per position: at most MAX_LENGTH, built once
        x = np.full(length, base + 1.0)
        for name, step in (("one above", 1.0), ("one below", -1.0)):
            y = x.copy()
            y[i] += step
            named.append((f"{name} @{i}", (x, y)))
    return named


def _random_pairs(
    length: int, relation: str, low: float, high: float, count: int, rng: RNGLike
) -> list[tuple[str, tuple[np.ndarray, np.ndarray]]]:
    """``count`` random pairs for ``relation`` inside ``[low, high]``."""
    if count == 0:
        return []
    gen = as_generator(rng)
    if relation == "add-remove":
        x = gen.integers(
            int(np.ceil(low)), int(np.floor(high)), size=(count, length), endpoint=True
        ).astype(float)
    else:
        x = gen.uniform(low, high, size=(count, length))
    if relation == "all-entries":
        step = gen.uniform(-1.0, 1.0, size=(count, length))
    else:
        step = np.zeros((count, length))
        size = 1.0 if relation == "add-remove" else gen.uniform(-1.0, 1.0, size=count)
        signs = gen.choice([-1.0, 1.0], size=count) if relation == "add-remove" else 1.0
        step[np.arange(count), gen.integers(0, length, size=count)] = size * signs
    y = x + step
    y = np.where((y < low) | (y > high), x - step, y)  # reflect a move that leaves the range
    return [(f"random {k}", (x[k], y[k])) for k in range(count)]


def _check_relation(relation: str, x: np.ndarray, y: np.ndarray, name: str) -> None:
    """Every built pair satisfies its relation (a guard on this module's own arithmetic)."""
    moved = np.abs(x - y)
    ok = (
        moved.max() <= 1 + 1e-12
        if relation == "all-entries"
        else (np.count_nonzero(moved) <= 1 and moved.max() <= 1 + 1e-12)
    )
    if relation == "add-remove":
        ok = ok and np.count_nonzero(moved) == 1 and (x >= 0).all() and (y >= 0).all()
    if not ok:
        raise AssertionError(f"pair {name!r} breaks the relation {relation!r}: {x} vs {y}")
