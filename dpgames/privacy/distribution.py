"""Exact distributions over finitely many outcomes.

A :class:`FiniteDistribution` holds log-probabilities normalised by log-sum-exp, so weights such as
``exp(1e12)`` neither overflow nor turn into NaN.  Probabilities too small for a float (below about
1e-308) stay exact in log space and are never sampled.  Exact privacy and incentive audits are built
on this type: comparing two distributions outcome by outcome gives the privacy loss exactly.
"""

from __future__ import annotations

import bisect
import math
import numbers
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, finite_array, integer, memory, probability


def _size(size) -> int | tuple[int, ...] | None:
    """A sample size: None, an int >= 0 or a tuple of them, within the memory limit."""
    if size is None:
        return None
    if isinstance(size, tuple):
        dims = tuple(integer("size", s, low=0) for s in size)
        memory("size", math.prod(dims), what=f"{dims} draws")
        return dims
    n = integer("size", size, low=0)
    memory("size", n, what=f"{n:,} draws")
    return n


def _log_array(name: str, values) -> tuple[np.ndarray, float]:
    """A non-empty 1-d float array whose entries are finite or ``-inf``, and its largest entry (one
    reduction checks both: the maximum is NaN or ``+inf`` exactly when some entry is)."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValidationError(name, "must be a non-empty 1-d array of numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValidationError(name, "must be a non-empty 1-d array")
    top = float(np.maximum.reduce(arr))
    if math.isnan(top) or top == math.inf:
        raise ValidationError(name, "must be finite or -inf (got NaN or +inf)")
    return arr, top


def _label_array(outcomes: Any) -> np.ndarray:
    """Labels given as a sequence, one per outcome: numbers or strings as a numpy array of their
    kind; anything else (tuples, mixed kinds) as an object array holding each label as it is, so
    that ``("T", 1)`` stays a tuple and ``["a", 1]`` is not read as the strings ``"a"`` and
    ``"1"``."""
    try:
        items = list(outcomes)
    except TypeError:
        raise ValidationError(
            "outcomes", f"must be a sequence of labels, got {type(outcomes).__name__}"
        ) from None
    if all(isinstance(o, (numbers.Number, np.bool_)) for o in items) or all(
        isinstance(o, str) for o in items
    ):
        return np.asarray(items)
    return np.fromiter(items, dtype=object, count=len(items))


def inverse_cdf_indices(
    cdf: np.ndarray, size: int | tuple[int, ...] | None, rng: RNGLike
) -> np.ndarray | int:
    """Indices drawn by inverse CDF from a cumulative sum of non-negative weights (not necessarily
    normalised): index ``i`` with probability ``(cdf[i] - cdf[i-1]) / cdf[-1]``.

    Parameters
    ----------
    cdf : numpy.ndarray
        Non-decreasing, ``cdf[-1] > 0``.
    size : int, tuple of int or None
        ``None`` for one index (a Python int).
    rng : Generator, int or None
        See :func:`~dpgames.privacy.rng.as_generator`.

    Returns
    -------
    int or numpy.ndarray

    Raises
    ------
    ValidationError
        On a bad ``size`` (negative, not an integer, beyond the memory limit) or ``rng``.
    """
    gen = as_generator(rng)
    # u < cdf[-1] always, so the index is at most m - 1; outcomes of weight 0 have empty CDF steps.
    if size is None:
        # one draw: bisect is searchsorted(side="right") without numpy's per-call overhead
        return bisect.bisect_right(cdf, gen.random() * float(cdf[-1]))
    return np.searchsorted(cdf, gen.random(_size(size)) * cdf[-1], side="right")


class FiniteDistribution:
    """A probability distribution over ``m`` outcomes, exact in log space: normalised
    log-probabilities (given, or derived from log-weights by log-sum-exp when first asked for).

    Build it with :meth:`from_log_weights` (unnormalised log-weights, e.g. ``eps * score / 2``) or
    :meth:`from_probabilities`.  ``outcomes`` labels the support (by default ``0 .. m-1``, made only
    when asked for); :meth:`sample` returns labels, :meth:`sample_indices` indices.  Sampling costs
    one O(m) pass (the CDF, computed once and cached) and then O(log m) per draw (``searchsorted``).

    Parameters
    ----------
    log_probabilities : array_like
        1-d, finite or ``-inf``, log-sum-exp within 1e-9 of 0.
    outcomes : array_like, optional
        One label per outcome (along the first axis).

    Raises
    ------
    ValidationError
        If the log-probabilities are not such an array or the labels do not match them.

    Examples
    --------
    >>> d = FiniteDistribution.from_probabilities([1, 3], outcomes=["tails", "heads"])
    >>> d.probabilities.tolist()
    [0.25, 0.75]
    >>> d.sample(5, rng=0).tolist()
    ['heads', 'heads', 'tails', 'tails', 'heads']
    >>> round(float(d.max_privacy_loss(FiniteDistribution.from_probabilities([1, 1]))), 6)
    0.693147
    """

    # set only by from_log_weights (unnormalised, max 0); "_shifted" in __dict__ tells which form is
    # held
    _shifted: np.ndarray

    def __init__(self, log_probabilities: np.ndarray, outcomes: ArrayLike | None = None):
        logp, _ = _log_array("log_probabilities", log_probabilities)
        total = logsumexp(logp)
        if not abs(total) <= 1e-9:
            raise ValidationError(
                "log_probabilities", f"must sum to 1 in probability (log-sum-exp = {total})"
            )
        self.log_probabilities = logp
        self._labels = self._check_labels(outcomes, logp.size)

    @staticmethod
    def _check_labels(outcomes: ArrayLike | None, m: int) -> np.ndarray | None:
        if outcomes is None:
            return None
        labels = outcomes if isinstance(outcomes, np.ndarray) else _label_array(outcomes)
        if labels.shape[:1] != (m,):
            raise ValidationError(
                "outcomes",
                f": {labels.shape[0] if labels.ndim else 0} outcome labels for {m} probabilities",
            )
        return labels

    @classmethod
    def from_log_weights(
        cls, log_weights: ArrayLike, outcomes: ArrayLike | None = None, *, copy: bool = True
    ) -> FiniteDistribution:
        """Normalise unnormalised log-weights (``-inf`` allowed for impossible outcomes).

        One reduction checks them; the weights (one ``exp``), their total, the log-probabilities and
        the probabilities are computed when first asked for (sampling needs only the weights' CDF).

        Parameters
        ----------
        log_weights : array_like
            1-d, finite or ``-inf``, not all ``-inf``.
        outcomes : array_like, optional
            One label per outcome.
        copy : bool, default True
            ``False`` lets a float array whose largest entry is 0 be kept as it is (the caller must
            not change it afterwards): saves one pass.

        Returns
        -------
        FiniteDistribution

        Raises
        ------
        ValidationError
            On NaN, ``+inf``, an empty array, all weights zero, or labels that do not match.
        """
        logw, top = _log_array("log_weights", log_weights)
        if top == -math.inf:
            raise ValidationError("log_weights", ": every outcome has weight zero")
        # exact for the largest weights, however large they are
        shifted = logw if top == 0 and not copy and logw is log_weights else logw - top
        dist = cls.__new__(cls)
        dist._labels = cls._check_labels(outcomes, logw.size)
        dist._shifted = shifted
        return dist

    @classmethod
    def from_probabilities(
        cls, probabilities: ArrayLike, outcomes: ArrayLike | None = None
    ) -> FiniteDistribution:
        """From non-negative weights (normalised here).

        Parameters
        ----------
        probabilities : array_like
            1-d, finite, non-negative, not all zero.
        outcomes : array_like, optional

        Returns
        -------
        FiniteDistribution

        Raises
        ------
        ValidationError
            On negative or non-finite weights, all zero, or labels that do not match.
        """
        p = finite_array("probabilities", probabilities, ndim=1, low=0)
        with np.errstate(divide="ignore"):
            return cls.from_log_weights(np.log(p), outcomes, copy=False)

    def __len__(self) -> int:
        return (self._shifted if "_shifted" in self.__dict__ else self.log_probabilities).size

    def __repr__(self) -> str:
        return f"FiniteDistribution(m={len(self)}, support={int(np.isfinite(self.log_probabilities).sum())})"

    def _repr_html_(self) -> str:
        """Jupyter: the law's size and headline figures, and a small drawing of it."""
        # the leaf display module, loaded on first show
        from dpgames.display import (
            html_table,
            svg_law,
        )

        p = self.probabilities
        top = int(np.argmax(p))
        table = html_table(
            [
                ("outcomes", len(self)),
                ("support (probability > 0)", int((p > 0).sum())),
                ("most likely outcome", self.outcomes[top]),
                ("its probability", float(p[top])),
            ],
            title="FiniteDistribution",
        )
        labels = self.outcomes
        return table + svg_law(p, first=str(labels[0]), last=str(labels[-1]))

    @cached_property
    def _weights(self) -> np.ndarray:
        """``exp`` of the shifted log-weights (largest 1), for a distribution built from
        log-weights."""
        return np.exp(self._shifted)

    @cached_property
    def _total(self) -> float:
        return self._weights.sum()  # >= 1: the top weight is exp(0)

    @cached_property
    def log_probabilities(self) -> np.ndarray:
        """Normalised log-probabilities (exact in log space, however small)."""
        return self._shifted - np.log(self._total)

    @cached_property
    def probabilities(self) -> np.ndarray:
        """Probabilities as floats (those below ~1e-308 read 0 here; the log form stays exact)."""
        if "_shifted" in self.__dict__:
            return self._weights / self._total
        return np.exp(self.log_probabilities)

    @cached_property
    def outcomes(self) -> np.ndarray:
        """The outcome labels: as given, else ``0 .. m-1``."""
        return np.arange(len(self)) if self._labels is None else self._labels

    @cached_property
    def _cdf(self) -> np.ndarray:
        """Cumulative weights (unnormalised when built from log-weights: the draw scales by the
        last); the weights are exponentiated and summed in one fresh array unless they are kept
        already."""
        if "_shifted" not in self.__dict__:
            return np.add.accumulate(self.probabilities)
        if "_weights" in self.__dict__:
            return np.add.accumulate(self._weights)
        weights = np.exp(self._shifted)
        return np.add.accumulate(weights, out=weights)

    def sample_indices(
        self, size: int | tuple[int, ...] | None = None, rng: RNGLike = None
    ) -> np.ndarray | int:
        """Outcome indices drawn by inverse CDF: O(log m) a draw after the cached O(m) CDF.

        Parameters
        ----------
        size : int, tuple of int or None
            ``None`` for one index (a Python int).
        rng : Generator, int or None
            See :func:`~dpgames.privacy.rng.as_generator`.

        Returns
        -------
        int or numpy.ndarray

        Raises
        ------
        ValidationError
            On a bad ``size`` or ``rng``.
        """
        return inverse_cdf_indices(self._cdf, size, rng)

    def sample(self, size: int | tuple[int, ...] | None = None, rng: RNGLike = None):
        """Outcome labels drawn from the distribution (one label if ``size`` is None).

        Parameters
        ----------
        size : int, tuple of int or None
        rng : Generator, int or None

        Returns
        -------
        label or numpy.ndarray of labels
            Indices (numpy integers) when the distribution has no labels.

        Raises
        ------
        ValidationError
            On a bad ``size`` or ``rng``.
        """
        idx = self.sample_indices(size, rng)
        if self._labels is None:
            return np.int64(idx) if size is None else idx
        return self._labels[idx]

    def expect(self, f: Callable[[np.ndarray], np.ndarray] | ArrayLike) -> float | np.ndarray:
        """``E[f(outcome)]``.

        Parameters
        ----------
        f : callable or array_like
            A vectorised function of the outcome labels, or an array of values (one per outcome,
            possibly with trailing dimensions for several functions at once).

        Returns
        -------
        float or numpy.ndarray

        Raises
        ------
        ValidationError
            If ``f`` does not give numbers, one per outcome.
        """
        try:
            values = np.asarray(f(self.outcomes) if callable(f) else f, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise ValidationError("f", "must give numbers, one per outcome") from None
        if values.shape[:1] != (len(self),):
            raise ValidationError(
                "f", f": expected one value per outcome ({len(self)}), got shape {values.shape}"
            )
        p = self.probabilities
        support = p > 0  # 0 * inf must not poison the expectation
        return np.tensordot(p[support], values[support], axes=(0, 0))

    def max_privacy_loss(self, other: FiniteDistribution) -> float:
        """The largest ``|log p(o) - log q(o)|`` over outcomes (``inf`` if one gives an outcome
        probability 0 and the other does not).  Two distributions are eps-indistinguishable (pure
        DP) exactly when this is at most eps.

        Parameters
        ----------
        other : FiniteDistribution
            Over the same number of outcomes.

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            If ``other`` is not such a distribution.
        """
        return float(np.max(np.abs(self.privacy_loss(other))))

    def privacy_loss(self, other: FiniteDistribution) -> np.ndarray:
        """``log p(o) - log q(o)`` per outcome; 0 where both are impossible.

        Parameters
        ----------
        other : FiniteDistribution
            Over the same number of outcomes.

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        ValidationError
            If ``other`` is not such a distribution.
        """
        if not isinstance(other, FiniteDistribution) or len(other) != len(self):
            raise ValidationError(
                "other", f"must be a FiniteDistribution over {len(self)} outcomes"
            )
        a, b = self.log_probabilities, other.log_probabilities
        both_impossible = np.isneginf(a) & np.isneginf(b)
        with np.errstate(invalid="ignore"):
            loss = a - b
        loss[both_impossible] = 0.0
        return loss

    def mixture(self, other: FiniteDistribution, weight_other: float) -> FiniteDistribution:
        """``(1 - w) * self + w * other`` over the same outcomes, exactly in log space.

        Parameters
        ----------
        other : FiniteDistribution
        weight_other : float
            ``w`` in ``[0, 1]``.

        Returns
        -------
        FiniteDistribution

        Raises
        ------
        ValidationError
            On a bad weight or a distribution over another number of outcomes.
        """
        weight_other = probability("weight_other", weight_other, allow_zero=True, allow_one=True)
        if not isinstance(other, FiniteDistribution) or len(other) != len(self):
            raise ValidationError(
                "other", f"must be a FiniteDistribution over {len(self)} outcomes"
            )
        with np.errstate(divide="ignore"):
            logs = np.stack(
                [
                    self.log_probabilities + np.log1p(-weight_other),
                    other.log_probabilities + np.log(weight_other),
                ]
            )
        return FiniteDistribution.from_log_weights(
            logsumexp(logs, axis=0), self._labels, copy=False
        )
