"""The binary-tree counter: private running sums of a stream of vectors (continual counting).

Dwork, Naor, Pitassi & Rothblum (2010); Chan, Shi & Song (2011, "binary mechanism").  Over a horizon
of ``T`` rounds, every dyadic interval ``((k-1) 2^j, k 2^j]`` inside ``[1, T]`` is a node of a tree
with ``L = floor(log2 T) + 1`` levels; each node's sum of the stream gets its own noise, drawn once.
The running sum after round ``t`` is the sum of the ``popcount(t) <= L`` noisy nodes of the binary
expansion of ``t``, so its error is a sum of at most ``L`` independent noises.

Neighbouring streams (say which with ``relation``; the vector norm is l1 for Laplace noise, l2 for
Gaussian noise, and ``sensitivity`` bounds it):

* ``"event"``: one round's vector ``x_t`` changes by at most ``sensitivity`` (event-level privacy);
  one round lies in at most ``L`` nodes, so the node values change by ``L * sensitivity`` in l1 and
  ``sqrt(L) * sensitivity`` in l2.
* ``"user"``: every round's vector may change, each by at most ``sensitivity`` (one participant who
  contributes in every round, e.g. a player's action in each round of a game); a node of ``s``
  rounds then changes by ``s * sensitivity``, and the node values change by ``sum_nodes s *
  sensitivity`` in l1 and ``sqrt(sum_nodes s^2) * sensitivity`` in l2.

Which relation to use: the tree pays off at event level, where it turns the ``O(T)`` error of
per-round noise into ``O(log^1.5 T)``.  At user level one participant may shift every node, so the
tree brings no gain: independent noise on each round's vector (Gaussian noise of total ``rho``
spread over the rounds, accounted with :class:`~dpgames.privacy.Accountant`) has a running-sum error
about ``sqrt(2 popcount(t))`` times smaller than the tree's.

Noise and guarantee:

* Laplace noise of scale ``b = node_sensitivity_l1 / eps`` on every coordinate of every node: the
  whole output sequence is ``eps``-DP (Laplace mechanism on the node values; post-processing). Error
  at round ``t`` per coordinate: variance ``2 b^2 popcount(t)``, standard deviation at most ``sqrt(2
  L) L sensitivity / eps = O(log^1.5 T / eps)`` (event level).
* Gaussian noise of standard deviation ``sigma = node_sensitivity_l2 / sqrt(2 rho)``: ``rho``-zCDP
  (Bun & Steinke 2016, Prop. 1.6).  Error per coordinate: exactly normal with variance
  ``sigma^2 popcount(t)``.

The noise of each node is drawn with the numpy Generator in the order the nodes complete (by end
round, then level), so :meth:`BinaryTreeCounter.release` (whole stream at once) and the online
:meth:`BinaryTreeCounter.start` counter give identical outputs for the same seed.
"""

from __future__ import annotations

import math
from typing import Literal, cast

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special, stats

from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    choice,
    finite_array,
    finite_result,
    memory,
    positive,
    positive_int,
    probability,
)

Relation = Literal["event", "user"]


def _popcount(t: np.ndarray) -> np.ndarray:
    """Number of set bits of each (non-negative, < 2^63) integer."""
    t = np.asarray(t, dtype=np.int64)
    return np.bitwise_count(t).astype(np.int64)


def laplace_sum_tail(k: int, a: float) -> float:
    """``Pr[|Y| > a]`` exactly, for ``Y`` the sum of ``k`` independent Laplace(1) noises.

    The density of ``Y`` is ``e^{-|y|} sum_{j<k} c_j |y|^j`` with
    ``c_j = 2^j (2k-2-j)! / (2^{2k-1} (k-1)! j! (k-1-j)!)`` (the ``k``-fold convolution of the
    Laplace density), so ``Pr[|Y| > a] = 2 sum_j c_j j! Q(j + 1, a)`` with ``Q`` the regularised
    upper incomplete gamma function.

    Parameters
    ----------
    k : int
        ``>= 1``.
    a : float
        ``>= 0``.

    Returns
    -------
    float
    """
    j = np.arange(k)
    # c_j * j!
    log_c = (
        j * math.log(2)
        + special.gammaln(2 * k - 1 - j)
        - (2 * k - 1) * math.log(2)
        - special.gammaln(k)
        - special.gammaln(k - j)
    )
    return float(2 * np.sum(np.exp(log_c) * special.gammaincc(j + 1, a)))


def laplace_sum_quantile(k: int, beta: float) -> float:
    """The ``a`` with ``Pr[|Y| > a] = beta`` for ``Y`` the sum of ``k`` independent Laplace(1)
    (:func:`laplace_sum_tail`, solved by root finding).  Scale by ``b`` for Laplace(b).

    Parameters
    ----------
    k : int
        ``>= 1``.
    beta : float
        In ``(0, 1)``.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        On a bad ``k`` or ``beta``.
    """
    positive_int("k", k)
    beta = probability("beta", beta)
    high = 1.0
    while laplace_sum_tail(k, high) > beta:
        high *= 2
    return optimize.brentq(
        lambda a: laplace_sum_tail(k, a) - beta, 0.0, high, xtol=1e-12, rtol=1e-12
    )


class BinaryTreeCounter:
    """Continual counting over ``horizon`` rounds of ``d``-vectors with the binary tree.

    Give exactly one of ``epsilon`` (Laplace noise; ``epsilon``-DP) or ``rho`` (Gaussian noise;
    ``rho``-zCDP).  ``sensitivity`` bounds one round's change in l1 (Laplace) or l2 (Gaussian) norm;
    ``relation`` says whether one round (``"event"``) or every round (``"user"``) may change: see
    the module docstring.  Sampling: :meth:`release` (a ``T x d`` stream at once) or :meth:`start`
    (online).

    Parameters
    ----------
    horizon : int
        ``T >= 1`` rounds.
    epsilon : float, optional
    rho : float, optional
    sensitivity : float, default 1
    relation : {"event", "user"}

    Raises
    ------
    ValidationError
        On bad arguments, both or neither of ``epsilon`` and ``rho``, or a noise scale beyond the
        float range.

    Examples
    --------
    >>> counter = BinaryTreeCounter(8, epsilon=1.0)
    >>> counter.levels, counter.noise_scale
    (4, 4.0)
    >>> counter.release(np.ones(8), rng=0).round(2).tolist()[:3]
    [2.28, -8.01, -20.65]
    >>> counter.start(rng=0).update([1.0]).round(2).tolist()  # the same noise, one round at a time
    [2.28]
    """

    def __init__(
        self,
        horizon: int,
        *,
        epsilon: float | None = None,
        rho: float | None = None,
        sensitivity: float = 1.0,
        relation: Relation = "event",
    ):
        self.horizon = positive_int("horizon", horizon)
        memory(
            "horizon",
            2 * self.horizon,
            what=f"{self.horizon:,} rounds need 2 x horizon node indices",
        )
        if (epsilon is None) == (rho is None):
            raise ValidationError(
                "epsilon",
                "or rho: give exactly one of epsilon (Laplace noise, pure DP) or rho "
                "(Gaussian noise, zCDP)",
            )
        self.epsilon = None if epsilon is None else positive("epsilon", epsilon)
        self.rho = None if rho is None else positive("rho", rho)
        self.sensitivity = positive("sensitivity", sensitivity)
        self.relation = choice("relation", relation, ("event", "user"))
        self.levels = self.horizon.bit_length()  # floor(log2 T) + 1
        self._node_ends = [
            np.arange(1, (self.horizon >> j) + 1, dtype=np.int64) << j for j in range(self.levels)
        ]
        if not math.isfinite(self.noise_scale * self.noise_scale):
            raise ValidationError(
                "sensitivity",
                f"{self.sensitivity:g} over the privacy parameter gives a noise scale "
                "(or its square) beyond the float range",
            )

    @property
    def noise(self) -> str:
        """``"laplace"`` (given ``epsilon``) or ``"gaussian"`` (given ``rho``)."""
        return "laplace" if self.epsilon is not None else "gaussian"

    @property
    def node_sensitivity(self) -> float:
        """How much the vector of all node values can change between neighbouring streams, in l1
        (Laplace) or l2 (Gaussian) norm."""
        p = 1 if self.noise == "laplace" else 2
        if self.relation == "event":
            return self.levels ** (1 / p) * self.sensitivity
        sizes = np.concatenate([np.full(e.size, 2.0**j) for j, e in enumerate(self._node_ends)])
        return float(np.linalg.norm(sizes, ord=p)) * self.sensitivity

    @property
    def noise_scale(self) -> float:
        """Laplace scale ``b`` or Gaussian standard deviation ``sigma`` of every node's noise."""
        if self.epsilon is not None:  # Laplace noise
            return self.node_sensitivity / self.epsilon
        return self.node_sensitivity / math.sqrt(2 * cast(float, self.rho))

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``epsilon``-DP (Laplace noise: the Laplace mechanism on the node values) or ``rho``-zCDP
        only (Gaussian noise; Bun & Steinke 2016, Prop. 1.6) under replace-one neighbouring streams:
        one round's vector (``"event"``) or every round's vector (``"user"``) changes by at most
        ``sensitivity``.
        """
        norm = "l1" if self.noise == "laplace" else "l2"
        who = "one round's vector" if self.relation == "event" else "every round's vector"
        relation = Neighbouring.REPLACE_ONE.described(
            f"{who} changes by at most {self.sensitivity:g} in {norm} norm (horizon {self.horizon})"
        )
        if self.epsilon is not None:  # Laplace noise
            return PrivacyGuarantee(self.epsilon, 0.0, relation)
        return PrivacyGuarantee.from_zcdp(cast(float, self.rho), relation)

    # --- error ------------------------------------------------------------------------------------
    def _rounds(self, rounds: ArrayLike | None) -> np.ndarray:
        if rounds is None:
            return np.arange(1, self.horizon + 1)
        t = finite_array("rounds", rounds)
        if t.size and (t.min() < 1 or t.max() > self.horizon or (t != np.round(t)).any()):
            raise ValidationError("rounds", f"must be whole numbers in 1..{self.horizon}")
        return t.astype(np.int64)

    def error_variance(self, rounds: ArrayLike | None = None) -> np.ndarray:
        """Exact variance of one coordinate's error after each round.

        Parameters
        ----------
        rounds : array_like, optional
            Whole numbers in ``1 .. T`` (default: all).

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        ValidationError
            On rounds out of range, or a variance beyond the float range.
        """
        node_var = (2 if self.noise == "laplace" else 1) * self.noise_scale * self.noise_scale
        return finite_result(
            "error_variance", node_var * _popcount(self._rounds(rounds)), "noise scale"
        )

    def error_bound(self, beta: float, rounds: ArrayLike | None = None) -> np.ndarray:
        """A bound on one coordinate's error after each round, each holding with probability ``>=
        1 - beta``: the exact quantile of the error (normal for Gaussian noise, the sum of
        ``popcount(t)`` Laplace noises for Laplace noise, :func:`laplace_sum_quantile`).  Use
        :meth:`max_error_bound` for a bound on all rounds and coordinates at once.

        Parameters
        ----------
        beta : float
            In ``(0, 1)``.
        rounds : array_like, optional
            Whole numbers in ``1 .. T`` (default: all).

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        ValidationError
            On a bad ``beta`` or rounds out of range.
        """
        beta = probability("beta", beta)
        counts = _popcount(self._rounds(rounds))
        if self.noise == "gaussian":
            return self.noise_scale * np.sqrt(counts) * stats.norm.isf(beta / 2)
        distinct = np.unique(counts)
        per_count = {int(k): laplace_sum_quantile(int(k), beta) for k in distinct if k > 0}
        return self.noise_scale * np.array([per_count.get(int(k), 0.0) for k in counts])

    def max_error_bound(self, beta: float, dim: int = 1) -> float:
        """A bound on the error of every coordinate of every running sum (rounds 1..T, ``dim``
        coordinates) holding simultaneously with probability ``>= 1 - beta`` (union bound).

        Parameters
        ----------
        beta : float
            In ``(0, 1)``.
        dim : int, default 1

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            On a bad ``beta`` or ``dim``.
        """
        per = probability("beta", beta) / (self.horizon * positive_int("dim", dim, high=2**40))
        return float(self.error_bound(per).max())

    # --- sampling ---------------------------------------------------------------------------------
    def _node_noise(self, gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if self.noise == "laplace":
            return gen.laplace(0.0, self.noise_scale, size=shape)
        return gen.normal(0.0, self.noise_scale, size=shape)

    def release(self, stream: ArrayLike, rng: RNGLike = None) -> np.ndarray:
        """Noisy running sums of ``stream``, all at once: row ``s`` estimates
        ``stream[:s+1].sum(axis=0)``. Costs O(t d) time and memory: every node's sum is one
        difference of prefix sums, and the running sum after round ``t`` is the one after ``t``
        without its lowest set bit plus the node ending at ``t``.

        Parameters
        ----------
        stream : array_like
            Shape ``(t,)`` or ``(t, d)`` with ``1 <= t <= horizon``, finite.
        rng : Generator, int or None

        Returns
        -------
        numpy.ndarray
            Same shape as ``stream``.

        Raises
        ------
        ValidationError
            On a stream of the wrong shape, longer than the horizon, or not finite.
        """
        x = finite_array("stream", stream)
        if x.ndim not in (1, 2) or x.shape[0] == 0:
            raise ValidationError(
                "stream", f"must have shape (rounds,) or (rounds, d), got {x.shape}"
            )
        if x.shape[0] > self.horizon:
            raise ValidationError(
                "stream", f"has {x.shape[0]} rounds, more than the horizon {self.horizon}"
            )
        x2 = x.reshape(x.shape[0], -1)
        rounds, dim = x2.shape
        t = np.arange(1, rounds + 1, dtype=np.int64)
        # round t completes the nodes of levels 0..v2(t)
        completing = np.log2(t & -t).astype(np.int64) + 1
        last = np.cumsum(completing) - 1  # row of the node (v2(t), ending at t)
        ends = np.repeat(t, completing)  # all nodes, in order of completion
        levels = np.arange(ends.size) - np.repeat(last + 1 - completing, completing)
        # prefix[t] = sum of rounds 1..t
        prefix = np.vstack([np.zeros((1, dim)), np.cumsum(x2, axis=0)])
        noisy = prefix[ends] - prefix[ends - (1 << levels)]
        noisy += self._node_noise(as_generator(rng), noisy.shape)
        out = np.zeros((rounds + 1, dim))
        parent, bits = t & (t - 1), _popcount(t)
        for count in range(1, int(bits.max()) + 1):  # parents have one bit fewer: done already
            rows = t[bits == count]
            out[rows] = out[parent[rows - 1]] + noisy[last[rows - 1]]
        return out[1:].reshape(x.shape)

    def start(self, dim: int = 1, rng: RNGLike = None) -> OnlineTreeCounter:
        """An online counter for ``dim``-vectors: call :meth:`OnlineTreeCounter.update` once a
        round.

        Parameters
        ----------
        dim : int, default 1
        rng : Generator, int or None

        Returns
        -------
        OnlineTreeCounter

        Raises
        ------
        ValidationError
            On a bad ``dim`` or ``rng``.
        """
        return OnlineTreeCounter(self, positive_int("dim", dim), as_generator(rng))


class OnlineTreeCounter:
    """The binary-tree counter fed one round at a time (O(d log T) work and memory a round); made by
    :meth:`BinaryTreeCounter.start`, it gives the same outputs as :meth:`BinaryTreeCounter.release`
    for the same seed.

    Examples
    --------
    >>> online = BinaryTreeCounter(4, rho=0.5).start(dim=2, rng=0)
    >>> [online.update([1.0, 0.0]).shape for _ in range(2)], online.round
    ([(2,), (2,)], 2)
    """

    def __init__(self, counter: BinaryTreeCounter, dim: int, gen: np.random.Generator):
        self.counter, self.dim, self._gen = counter, dim, gen
        self.round = 0
        self._partial = np.zeros((counter.levels, dim))  # sums of the open node at each level
        self._noisy = np.zeros((counter.levels, dim))  # latest completed noisy node at each level

    def update(self, x: ArrayLike) -> np.ndarray:
        """Add round ``t``'s vector and return the noisy running sum after round ``t``.

        Parameters
        ----------
        x : array_like
            ``d`` finite entries.

        Returns
        -------
        numpy.ndarray
            Shape ``(d,)``.

        Raises
        ------
        ValidationError
            Past the horizon, or on a vector of the wrong size or not finite.
        """
        if self.round >= self.counter.horizon:
            raise ValidationError(
                "x", f": the counter's horizon of {self.counter.horizon} rounds is used up"
            )
        v = finite_array("x", x).reshape(-1)
        if v.size != self.dim:
            raise ValidationError("x", f"must have {self.dim} entries, got {v.size}")
        self.round += 1
        t = self.round
        self._partial += v
        done = (t & -t).bit_length()  # levels 0 .. trailing_zeros(t) complete now
        self._noisy[:done] = self._partial[:done] + self.counter._node_noise(
            self._gen, (done, self.dim)
        )
        self._partial[:done] = 0.0
        bits = np.array([(t >> j) & 1 for j in range(self.counter.levels)], dtype=bool)
        return self._noisy[bits].sum(axis=0)
