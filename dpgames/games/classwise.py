"""Per-class sums, minima, maxima and spreads over actions stored class by class, fast when classes
of equal size sit together, and equal bit for bit to ``numpy.ufunc.reduceat``.

A game stores its actions grouped by class (:class:`~dpgames.games.game.CongestionGame`), so a
per-class reduction is a ``reduceat``, which pays a call of numpy's inner loop per class: on Chicago
Sketch (93,135 classes of 1 to 3 paths) a sum costs 0.9 ms and a minimum 1.5 ms, more than the
arithmetic.  When consecutive classes have the same number ``s`` of actions, their block of actions
is a ``(classes, s)`` matrix, and the reduction is ``s - 1`` column operations instead; a game whose
sizes alternate is gathered into size order first (mode ``"sorted"``), and one with too many sizes
falls back to ``reduceat``.

**Same numbers.**  Minima and maxima do not depend on the order of comparison.  For a class of ``s
<= 8`` actions numpy's ``add.reduceat`` computes ``v_0 + (((v_1 + v_2) + v_3) + ...)`` (the first
value, then the rest summed left to right: numpy's pairwise summation is sequential below 8 terms);
the column sums below use exactly that order, so the results are identical.  Larger classes go
through ``reduceat``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from dpgames.validation import ValidationError

SEQUENTIAL_TERMS = (
    8  # numpy sums up to this many terms of a reduction left to right (pairwise beyond)
)
MAX_BLOCKS = (
    64  # more blocks of equal-size classes than this: reduceat is as fast as the column loop
)
CLASSES_PER_COLUMN_OP = (
    400  # a column operation costs about as much as reduceat on this many classes
)
Mode = Literal["runs", "sorted", "reduceat"]


class ClassOps:
    """Per-class reductions and spreads for actions grouped by class.

    Parameters
    ----------
    class_start : array_like of int
        ``class_start[k] : class_start[k + 1]`` are class ``k``'s actions (non-decreasing, from 0;
        every class has at least one action), as in :attr:`CongestionGame.class_start
        <dpgames.games.game.CongestionGame.class_start>`.
    mode : {"runs", "sorted", "reduceat"} or None
        How to compute (see Notes); ``None`` chooses: ``"runs"`` if at most 64 runs of equal-size
        classes, else ``"sorted"`` if at most 64 distinct sizes, else ``"reduceat"``, and
        ``"reduceat"`` whenever there are too few classes for the column loop to pay (fewer than 400
        per column operation).  Every mode gives the same numbers.

    Raises
    ------
    ValidationError
        If ``class_start`` is not a 1-d increasing integer array starting at 0, or ``mode`` is
        unknown.

    Notes
    -----
    Every method returns what ``numpy.ufunc.reduceat`` over ``class_start[:-1]`` (or the gather
    ``per_class[action_class]``) returns, bit for bit.  :attr:`mode` tells how: ``"runs"`` (column
    operations on the runs of equal-size classes in place), ``"sorted"`` (values gathered into size
    order first, results gathered back), ``"reduceat"`` (numpy's own; also for inputs that are not
    1-d float64 arrays).

    Examples
    --------
    >>> import numpy as np
    >>> ops = ClassOps(
    ...     [0, 2, 4, 7], mode="runs"
    ... )  # classes of 2, 2 and 3 actions (too few to choose "runs")
    >>> v = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    >>> ops.sum(v).tolist(), ops.min(v).tolist(), ops.max(v).tolist()
    ([3.0, 7.0, 18.0], [1.0, 3.0, 5.0], [2.0, 4.0, 7.0])
    >>> ops.spread(np.array([10.0, 20.0, 30.0])).tolist()
    [10.0, 10.0, 20.0, 20.0, 30.0, 30.0, 30.0]
    >>> ops.mode, ClassOps([0, 2, 4, 7]).mode
    ('runs', 'reduceat')
    """

    def __init__(self, class_start: ArrayLike, mode: Mode | None = None):
        start = np.asarray(class_start)
        if start.ndim != 1 or start.size < 1 or start.dtype.kind not in "iu" or start[0] != 0:
            raise ValidationError(
                "class_start",
                "must be a 1-d integer array starting at 0 with one entry per class plus the end",
            )
        sizes = np.diff(start)
        if (sizes < 1).any():
            raise ValidationError(
                "class_start", "must increase strictly (every class has at least one action)"
            )
        if mode not in (None, "runs", "sorted", "reduceat"):
            raise ValidationError(
                "mode", f"must be None, 'runs', 'sorted' or 'reduceat', got {mode!r}"
            )
        self.class_start = start.astype(np.int64)
        self.num_actions = int(start[-1])
        self.action_class = np.repeat(np.arange(sizes.size), sizes)
        self._gather = self._scatter = None
        runs = np.count_nonzero(np.diff(sizes)) + 1
        distinct = np.unique(sizes).size
        if mode is None:
            mode = (
                "runs" if runs <= MAX_BLOCKS else "sorted" if distinct <= MAX_BLOCKS else "reduceat"
            )
            blocks = runs if mode == "runs" else distinct
            if sizes.size < CLASSES_PER_COLUMN_OP * blocks * min(
                int(sizes.max(initial=1)), SEQUENTIAL_TERMS
            ):
                mode = "reduceat"  # few classes: one reduceat call beats the loop over columns
        self.mode = mode
        if mode == "sorted":
            class_order, self._gather = _size_order(self.class_start)
            self._scatter = np.empty_like(class_order)
            self._scatter[class_order] = np.arange(class_order.size)
            sizes = sizes[class_order]
        cuts = np.flatnonzero(np.diff(sizes)) + 1
        first, last = np.r_[0, cuts], np.r_[cuts, sizes.size]
        begin = np.r_[0, np.cumsum(sizes)]
        # (first action, first class, number of classes, actions per class) of each run of equal
        # sizes
        self._blocks = (
            []
            if mode == "reduceat"
            else [
                (int(begin[a]), int(a), int(b - a), int(sizes[a]))
                for a, b in zip(first, last)
                if b > a
            ]
        )

    def _views(self, values: np.ndarray):
        for lo, c0, count, size in self._blocks:
            yield slice(c0, c0 + count), values[lo : lo + count * size].reshape(count, size), size

    def _fast(self, values) -> bool:
        """Column operations apply: not too many sizes, and a 1-d float64 array (else: reduceat)."""
        return (
            self.mode != "reduceat"
            and isinstance(values, np.ndarray)
            and values.ndim == 1
            and values.dtype == np.float64
        )

    def _grouped(self, values: np.ndarray) -> np.ndarray:
        return values if self._gather is None else values[self._gather]

    def _back(self, per_class: np.ndarray) -> np.ndarray:
        return per_class if self._scatter is None else per_class[self._scatter]

    def sum(self, values: np.ndarray) -> np.ndarray:
        """Per class, the sum of its actions' ``values`` (as ``np.add.reduceat``)."""
        if not self._fast(values):
            return np.add.reduceat(values, self.class_start[:-1], axis=-1)
        out = np.empty(self.class_start.size - 1)
        for classes, block, size in self._views(self._grouped(values)):
            if size == 1:
                out[classes] = block[:, 0]
            elif size <= SEQUENTIAL_TERMS:
                rest = block[:, 1].copy()
                for j in range(2, size):
                    rest += block[:, j]
                np.add(block[:, 0], rest, out=out[classes])
            else:
                out[classes] = np.add.reduceat(block.ravel(), np.arange(0, block.size, size))
        return self._back(out)

    def _extreme(self, ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
        if not self._fast(values):
            return ufunc.reduceat(values, self.class_start[:-1], axis=-1)
        out = np.empty(self.class_start.size - 1)
        for classes, block, size in self._views(self._grouped(values)):
            if size <= SEQUENTIAL_TERMS:
                target = out[classes]
                target[...] = block[:, 0]
                for j in range(1, size):
                    ufunc(target, block[:, j], out=target)
            else:
                out[classes] = ufunc.reduce(block, axis=1)
        return self._back(out)

    def min(self, values: np.ndarray) -> np.ndarray:
        """Per class, the least of its actions' ``values`` (as ``np.minimum.reduceat``)."""
        return self._extreme(np.minimum, values)

    def max(self, values: np.ndarray) -> np.ndarray:
        """Per class, the largest of its actions' ``values`` (as ``np.maximum.reduceat``)."""
        return self._extreme(np.maximum, values)

    def argmin(self, values: np.ndarray) -> np.ndarray:
        """Per class, the index (among all actions) of its least value: the first on ties, NaN never
        chosen unless the whole class is NaN (then its first action), as sorting would pick."""
        values = np.asarray(values, dtype=float)
        least = self._extreme(np.fmin, values)
        hit = np.flatnonzero(values == self.spread(least))
        owner = self.action_class[hit]
        first = np.ones(owner.size, dtype=bool)  # no hit at all when every value is NaN
        first[1:] = owner[1:] != owner[:-1]
        out = self.class_start[:-1].copy()
        out[owner[first]] = hit[first]
        return out

    def combine(
        self,
        ufunc: np.ufunc,
        values: np.ndarray,
        per_class: np.ndarray,
        out: np.ndarray | None = None,
        per_class_first: bool = False,
    ) -> np.ndarray:
        """``ufunc(values, spread(per_class))`` (or with the arguments swapped), into ``out`` if
        given, without building the spread array when the column path applies.

        Parameters
        ----------
        ufunc : numpy.ufunc
            A binary ufunc (``np.subtract``, ``np.divide`` ...).
        values : numpy.ndarray
            One value per action.
        per_class : numpy.ndarray
            One value per class.
        out : numpy.ndarray or None
            Where to write (may be ``values``).
        per_class_first : bool
            Compute ``ufunc(spread(per_class), values)`` instead.

        Returns
        -------
        numpy.ndarray
        """
        if not (self.mode == "runs" and self._fast(values) and self._fast(per_class)):
            spread = self.spread(per_class)
            return (
                ufunc(spread, values, out=out)
                if per_class_first
                else ufunc(values, spread, out=out)
            )
        out = np.empty_like(values) if out is None else out
        for (classes, block, size), (_, target, _) in zip(self._views(values), self._views(out)):
            here = per_class[classes]
            for j in range(size):
                if per_class_first:
                    ufunc(here, block[:, j], out=target[:, j])
                else:
                    ufunc(block[:, j], here, out=target[:, j])
        return out

    def spread(self, per_class: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """A per-class value repeated for each of the class's actions (into ``out`` if given)."""
        if not self._fast(per_class) or self.mode == "sorted":
            spread = per_class[..., self.action_class]
            if out is None:
                return spread
            out[...] = spread
            return out
        out = np.empty(self.num_actions) if out is None else out
        for classes, block, size in self._views(out):
            values = per_class[classes]
            for j in range(size):  # column by column: faster than one broadcast assignment
                block[:, j] = values
        return out


def _size_order(start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.diff(start)
    class_order = np.argsort(sizes, kind="stable")
    counts = sizes[class_order]
    action_order = np.repeat(
        start[class_order] - np.r_[0, np.cumsum(counts)[:-1]], counts
    ) + np.arange(start[-1])
    return class_order, action_order
