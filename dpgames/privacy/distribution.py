"""Exact distributions over finitely many outcomes.

A :class:`FiniteDistribution` holds log-probabilities normalised by log-sum-exp, so weights such as
``exp(1e12)`` neither overflow nor turn into NaN.  Probabilities too small for a float (below about
1e-308) stay exact in log space and are never sampled.  Exact privacy and incentive audits are built on
this type: comparing two distributions outcome by outcome gives the privacy loss exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from dpgames.validation import ValidationError, finite_array, integer, memory, probability


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A numpy Generator from a Generator, an integer seed >= 0 (any size), a ``SeedSequence`` or
    ``BitGenerator``, or ``None`` (fresh OS entropy); anything else is a ValidationError."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is not None and not isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        rng = integer("rng", rng, low=0)
    return np.random.default_rng(rng)


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


def _log_array(name: str, values) -> np.ndarray:
    """A non-empty 1-d float array whose entries are finite or ``-inf``."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValidationError(name, "must be a non-empty 1-d array of numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValidationError(name, "must be a non-empty 1-d array")
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise ValidationError(name, "must be finite or -inf (got NaN or +inf)")
    return arr


class FiniteDistribution:
    """A probability distribution over ``m`` outcomes, stored as normalised log-probabilities.

    Build it with :meth:`from_log_weights` (unnormalised log-weights, e.g. ``eps * score / 2``) or
    :meth:`from_probabilities`.  ``outcomes`` labels the support (by default ``0 .. m-1``); sampling
    returns labels.  Sampling costs one O(m) pass (the CDF, computed once and cached) and then
    O(log m) per draw (``searchsorted``).
    """

    __slots__ = ("log_probabilities", "outcomes", "__dict__")

    def __init__(self, log_probabilities: np.ndarray, outcomes: ArrayLike | None = None):
        logp = _log_array("log_probabilities", log_probabilities)
        total = logsumexp(logp)
        if not abs(total) <= 1e-9:
            raise ValidationError("log_probabilities", f"must sum to 1 in probability (log-sum-exp = {total})")
        self._set(logp, outcomes)

    def _set(self, logp: np.ndarray, outcomes: ArrayLike | None) -> None:
        self.log_probabilities = logp
        labels = np.arange(logp.size) if outcomes is None else np.asarray(outcomes)
        if labels.shape[:1] != logp.shape:
            raise ValidationError("outcomes", f": {labels.shape[0] if labels.ndim else 0} outcome labels for "
                                              f"{logp.size} probabilities")
        self.outcomes = labels

    @classmethod
    def from_log_weights(cls, log_weights: ArrayLike, outcomes: ArrayLike | None = None) -> FiniteDistribution:
        """Normalise unnormalised log-weights (``-inf`` allowed for impossible outcomes).

        One pass for the checks and one ``exp``: the probabilities are kept, not recomputed."""
        logw = _log_array("log_weights", log_weights)
        top = logw.max()
        if top == -np.inf:
            raise ValidationError("log_weights", ": every outcome has weight zero")
        shifted = logw - top  # exact for the largest weights, however large they are
        weights = np.exp(shifted)
        total = weights.sum()  # >= 1: the top weight is exp(0)
        dist = cls.__new__(cls)
        dist._set(shifted - np.log(total), outcomes)
        dist.__dict__["probabilities"] = weights / total
        return dist

    @classmethod
    def from_probabilities(cls, probabilities: ArrayLike, outcomes: ArrayLike | None = None) -> FiniteDistribution:
        """From non-negative weights (normalised here)."""
        p = finite_array("probabilities", probabilities, ndim=1)
        if (p < 0).any():
            raise ValidationError("probabilities", "must be finite and non-negative")
        with np.errstate(divide="ignore"):
            return cls.from_log_weights(np.log(p), outcomes)

    def __len__(self) -> int:
        return self.log_probabilities.size

    def __repr__(self) -> str:
        return f"FiniteDistribution(m={len(self)}, support={int(np.isfinite(self.log_probabilities).sum())})"

    @cached_property
    def probabilities(self) -> np.ndarray:
        """Probabilities as floats (those below ~1e-308 read 0 here; the log form stays exact)."""
        return np.exp(self.log_probabilities)

    @cached_property
    def _cdf(self) -> np.ndarray:
        return np.cumsum(self.probabilities)

    def sample_indices(self, size: int | tuple[int, ...] | None = None,
                       rng: np.random.Generator | int | None = None) -> np.ndarray | int:
        """Outcome indices drawn by inverse CDF: O(log m) a draw after the cached O(m) CDF."""
        gen = as_generator(rng)
        cdf = self._cdf
        u = gen.random(_size(size)) * cdf[-1]
        idx = np.searchsorted(cdf, u, side="right")
        # u < cdf[-1] always, so idx <= m - 1; outcomes of probability 0 have empty CDF steps.
        return int(idx) if size is None else idx

    def sample(self, size: int | tuple[int, ...] | None = None,
               rng: np.random.Generator | int | None = None):
        """Outcome labels drawn from the distribution (one label if ``size`` is None)."""
        idx = self.sample_indices(size, rng)
        return self.outcomes[idx]

    def expect(self, f: Callable[[np.ndarray], np.ndarray] | ArrayLike) -> float | np.ndarray:
        """``E[f(outcome)]``: ``f`` is a vectorised function of the outcome labels or an array of values
        (one per outcome, possibly with trailing dimensions for several functions at once)."""
        try:
            values = np.asarray(f(self.outcomes) if callable(f) else f, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise ValidationError("f", "must give numbers, one per outcome") from None
        if values.shape[:1] != (len(self),):
            raise ValidationError("f", f": expected one value per outcome ({len(self)}), got shape {values.shape}")
        p = self.probabilities
        support = p > 0  # 0 * inf must not poison the expectation
        return np.tensordot(p[support], values[support], axes=(0, 0))

    def max_privacy_loss(self, other: FiniteDistribution) -> float:
        """The largest ``|log p(o) - log q(o)|`` over outcomes (``inf`` if one gives an outcome
        probability 0 and the other does not).  Two distributions are eps-indistinguishable (pure DP)
        exactly when this is at most eps."""
        return float(np.max(np.abs(self.privacy_loss(other))))

    def privacy_loss(self, other: FiniteDistribution) -> np.ndarray:
        """``log p(o) - log q(o)`` per outcome; 0 where both are impossible."""
        if not isinstance(other, FiniteDistribution) or len(other) != len(self):
            raise ValidationError("other", f"must be a FiniteDistribution over {len(self)} outcomes")
        a, b = self.log_probabilities, other.log_probabilities
        both_impossible = np.isneginf(a) & np.isneginf(b)
        with np.errstate(invalid="ignore"):
            loss = a - b
        loss[both_impossible] = 0.0
        return loss

    def mixture(self, other: FiniteDistribution, weight_other: float) -> FiniteDistribution:
        """``(1 - w) * self + w * other`` over the same outcomes, exactly in log space."""
        weight_other = probability("weight_other", weight_other, allow_zero=True, allow_one=True)
        if not isinstance(other, FiniteDistribution) or len(other) != len(self):
            raise ValidationError("other", f"must be a FiniteDistribution over {len(self)} outcomes")
        with np.errstate(divide="ignore"):
            logs = np.stack([self.log_probabilities + np.log1p(-weight_other),
                             other.log_probabilities + np.log(weight_other)])
        return FiniteDistribution.from_log_weights(logsumexp(logs, axis=0), self.outcomes)
