"""Exact distributions over finitely many outcomes.

A :class:`FiniteDistribution` holds log-probabilities normalised by log-sum-exp, so weights such as
``exp(1e12)`` neither overflow nor turn into NaN.  Probabilities too small for a float (below about
1e-308) stay exact in log space and are never sampled.  Exact privacy and incentive audits are built on
this type: comparing two distributions outcome by outcome gives the privacy loss exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A numpy Generator from a Generator, an integer seed or ``None`` (fresh OS entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


class FiniteDistribution:
    """A probability distribution over ``m`` outcomes, stored as normalised log-probabilities.

    Build it with :meth:`from_log_weights` (unnormalised log-weights, e.g. ``eps * score / 2``) or
    :meth:`from_probabilities`.  ``outcomes`` labels the support (by default ``0 .. m-1``); sampling
    returns labels.  Sampling costs one O(m) pass (the CDF, computed once and cached) and then
    O(log m) per draw (``searchsorted``).
    """

    __slots__ = ("log_probabilities", "outcomes", "__dict__")

    def __init__(self, log_probabilities: np.ndarray, outcomes: ArrayLike | None = None):
        logp = np.asarray(log_probabilities, dtype=float)
        if logp.ndim != 1 or logp.size == 0:
            raise ValueError("a finite distribution needs a non-empty 1-d array of log-probabilities")
        if np.isnan(logp).any() or np.isposinf(logp).any():
            raise ValueError("log-probabilities must be finite or -inf")
        total = logsumexp(logp)
        if not abs(total) <= 1e-9:
            raise ValueError(f"log-probabilities must sum to 1 in probability (log-sum-exp = {total})")
        self._set(logp, outcomes)

    def _set(self, logp: np.ndarray, outcomes: ArrayLike | None) -> None:
        self.log_probabilities = logp
        labels = np.arange(logp.size) if outcomes is None else np.asarray(outcomes)
        if labels.shape[:1] != logp.shape:
            raise ValueError(f"{labels.shape[0]} outcome labels for {logp.size} probabilities")
        self.outcomes = labels

    @classmethod
    def from_log_weights(cls, log_weights: ArrayLike, outcomes: ArrayLike | None = None) -> FiniteDistribution:
        """Normalise unnormalised log-weights (``-inf`` allowed for impossible outcomes).

        One pass for the checks and one ``exp``: the probabilities are kept, not recomputed."""
        logw = np.asarray(log_weights, dtype=float)
        if logw.ndim != 1 or logw.size == 0:
            raise ValueError("log-weights must be a non-empty 1-d array")
        top = logw.max()  # NaN if any entry is NaN
        if not top < np.inf:
            raise ValueError("log-weights must be finite or -inf (got NaN or +inf)")
        if top == -np.inf:
            raise ValueError("every outcome has weight zero")
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
        p = np.asarray(probabilities, dtype=float)
        if (p < 0).any() or not np.isfinite(p).all():
            raise ValueError("probabilities must be finite and non-negative")
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
        u = gen.random(size) * cdf[-1]
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
        values = np.asarray(f(self.outcomes) if callable(f) else f, dtype=float)
        if values.shape[:1] != (len(self),):
            raise ValueError(f"expected one value per outcome ({len(self)}), got shape {values.shape}")
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
        if len(other) != len(self):
            raise ValueError(f"distributions over {len(self)} and {len(other)} outcomes cannot be compared")
        a, b = self.log_probabilities, other.log_probabilities
        both_impossible = np.isneginf(a) & np.isneginf(b)
        with np.errstate(invalid="ignore"):
            loss = a - b
        loss[both_impossible] = 0.0
        return loss

    def mixture(self, other: FiniteDistribution, weight_other: float) -> FiniteDistribution:
        """``(1 - w) * self + w * other`` over the same outcomes, exactly in log space."""
        if not 0.0 <= weight_other <= 1.0:
            raise ValueError(f"mixture weight must be in [0, 1], got {weight_other}")
        with np.errstate(divide="ignore"):
            logs = np.stack([self.log_probabilities + np.log1p(-weight_other),
                             other.log_probabilities + np.log(weight_other)])
        return FiniteDistribution.from_log_weights(logsumexp(logs, axis=0), self.outcomes)
