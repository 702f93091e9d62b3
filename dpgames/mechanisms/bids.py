"""A bid vector validated and sorted once.

One scenario run hands the same bids to the price law, OPT, F2, RSOP and the misreport and privacy
audits; each used to check and sort them again.  :class:`Bids` holds the checked bids with their
ascending order, so every consumer takes it as it is: the functions that accept raw arrays stay the
public entry points and turn them into :class:`Bids` once (``Bids.of`` returns a :class:`Bids` as
is).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike

from dpgames.validation import ValidationError


def _vector(bids: ArrayLike, name: str) -> np.ndarray:
    """``bids`` as a non-empty 1-d float array (the caller's array itself when it already is one);
    values not checked."""
    try:
        b = np.asarray(bids, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValidationError(name, "must be a list of numbers in [0, 1]") from None
    if b.ndim != 1 or b.size == 0:
        raise ValidationError(name, "must be a non-empty list of numbers")
    return b


def check_bids(bids: ArrayLike, name: str = "bids") -> np.ndarray:
    """Bids as a float array, with a clear :class:`ValidationError` for an empty list, a non-number
    or a bid outside [0, 1].

    Parameters
    ----------
    bids : array_like
        A non-empty one-dimensional list of finite numbers in ``[0, 1]``.
    name : str
        The argument's name, used in the error (``"values"``, ``"lies"`` ...).

    Returns
    -------
    numpy.ndarray
        The bids as floats (the caller's array itself when it already is one).

    Raises
    ------
    ValidationError
        Naming ``name`` and what is allowed.
    """
    b = _vector(bids, name)
    if b.min() >= 0 and b.max() <= 1:
        # two reductions; NaN propagates, so it fails both comparisons
        return b
    if not np.isfinite(b).all():
        raise ValidationError(name, "must hold finite numbers only")
    i = int(np.flatnonzero((b < 0) | (b > 1))[0])
    raise ValidationError(name, f"entry {i} is {b[i]:g}, outside the allowed range [0, 1]")


def _sorted_checked(values: np.ndarray, name: str) -> np.ndarray:
    """``np.sort(values)``, checked in O(1) after the sort: NaN sorts last, so the two ends tell
    whether every bid is a finite number in [0, 1] (else :func:`check_bids` raises, naming the first
    bad one)."""
    ascending = np.sort(values)
    if not (ascending[0] >= 0 and ascending[-1] <= 1):
        check_bids(values, name)
    return ascending


def check_values(values: ArrayLike, bids: np.ndarray) -> np.ndarray:
    """True values: like bids (:func:`check_bids`), in [0, 1], one per bid.

    Raises
    ------
    ValidationError
        For bad values, or a count different from the bids'.
    """
    v = check_bids(values, "values")
    if v.shape != bids.shape:
        raise ValidationError("values", f"has {v.size} entries but there are {bids.size} bids")
    return v


@dataclass(frozen=True, eq=False)
class Bids:
    """Bids in ``[0, 1]``, checked once, with their ascending order.

    Build it with :meth:`Bids.of`; the arrays are read-only copies, so a :class:`Bids` can be shared
    by every consumer of one run (the price law, the baselines, the audits) without being checked or
    sorted again.  :attr:`order` (a stable argsort, for the consumers that need to know who holds
    which sorted bid) is computed on first use, once.

    Parameters
    ----------
    values : numpy.ndarray
        The bids in their original order (agent ``i``'s bid is ``values[i]``).
    sorted : numpy.ndarray
        The bids in ascending order (``np.sort(values)``).

    Examples
    --------
    >>> b = Bids.of([0.5, 0.2, 0.9, 0.2])
    >>> b.sorted.tolist(), b.order.tolist(), b.n
    ([0.2, 0.2, 0.5, 0.9], [1, 3, 0, 2], 4)
    >>> b.count_at_least([0.2, 0.6]).tolist()      # bidders who buy at each price
    [4, 1]
    >>> Bids.of(b) is b                             # already checked and sorted: taken as it is
    True
    >>> Bids.of([0.5, 1.5], "values")
    Traceback (most recent call last):
    ...
    dpgames.validation.ValidationError: values entry 1 is 1.5, outside the allowed range [0, 1]
    """

    values: np.ndarray
    sorted: np.ndarray

    def __post_init__(self) -> None:
        """Checks in O(n) (no sort): both arrays bids in [0, 1] of one length, ``sorted``
        ascending."""
        values, ascending = check_bids(self.values, "values"), check_bids(self.sorted, "sorted")
        if ascending.shape != values.shape or (np.diff(ascending) < 0).any():
            raise ValidationError(
                "sorted", "must be the values in ascending order (build a Bids with Bids.of)"
            )
        for name, array in (("values", values), ("sorted", ascending)):
            if array.flags.writeable:
                array = array.copy()
                array.flags.writeable = False
            object.__setattr__(self, name, array)

    @classmethod
    def of(cls, bids: ArrayLike | Bids, name: str = "bids") -> Bids:
        """Check and sort ``bids`` once (a :class:`Bids` is returned as it is).

        Parameters
        ----------
        bids : array_like or Bids
            A non-empty list of numbers in ``[0, 1]``.
        name : str
            The argument's name in errors.

        Returns
        -------
        Bids

        Raises
        ------
        ValidationError
            See :func:`check_bids`.
        """
        if isinstance(bids, Bids):
            return bids
        values = _vector(bids, name)
        if not isinstance(bids, (list, tuple)) and (
            not isinstance(bids, np.ndarray) or np.may_share_memory(values, bids)
        ):
            values = values.copy()  # the caller's array (or one that may share its memory)
        ascending = _sorted_checked(values, name)
        values.flags.writeable = ascending.flags.writeable = False
        checked = object.__new__(cls)  # checked and sorted here: no second check
        object.__setattr__(checked, "values", values)
        object.__setattr__(checked, "sorted", ascending)
        return checked

    @cached_property
    def order(self) -> np.ndarray:
        """A stable ascending argsort of :attr:`values` (``values[order]`` equals :attr:`sorted`).

        numpy's default argsort (vectorised, several times faster than its stable one on floats),
        then, only where bids repeat, the agents of each run of equal bids put in index order by one
        integer sort of ``(run, agent)`` keys: the same permutation as ``np.argsort(values,
        kind="stable")``."""
        order = np.argsort(self.values)
        repeats = self.sorted[1:] == self.sorted[:-1]
        if repeats.any():
            # the run of equal bids at each sorted position
            run = np.concatenate([[0], np.cumsum(~repeats)])
            order = np.sort(run * self.n + order) % self.n
        order.flags.writeable = False
        return order

    @property
    def n(self) -> int:
        """The number of bids."""
        return self.values.size

    def count_at_least(self, prices: ArrayLike) -> np.ndarray:
        """``#{i : b_i >= p}`` for each price ``p`` (a binary search each, no pass over the
        bids)."""
        return self.n - np.searchsorted(self.sorted, prices, side="left")
