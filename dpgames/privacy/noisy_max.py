"""Report-noisy-max: add independent noise to every score and report the index of the largest.

* Laplace noise (Dwork & Roth Claim 3.9): scale ``2 Delta / eps`` makes it eps-DP for scores of
  sensitivity ``Delta``; when the scores are *monotone* (one individual's change moves them all in
  the same direction, e.g. counts) scale ``Delta / eps`` suffices (``monotone=True``).
* Exponential noise of the same scale: this is the permute-and-flip mechanism of McKenna & Sheldon
  (2020) (visit candidates in a random order, accept candidate ``r`` with probability
  ``exp((s_r - s_max) / scale)``), as Ding, Kifer et al. (2021) proved; eps-DP, and never worse in
  expected score than the exponential mechanism.
* Gumbel noise of scale ``2 Delta / eps`` gives the exponential mechanism itself: see
  :meth:`dpgames.privacy.ExponentialMechanism.sample_noisy_max`.

Exact output distributions: for exponential noise, the permute-and-flip probabilities
``Pr[r] = p_r (1/m) sum_k A_{-r}(k)``, where ``p_j = exp((s_j - s_max)/scale)`` and ``A_{-r}(k)`` is
the average over the ``k``-subsets of the other candidates of ``prod (1 - p_j)`` (the chance that
every candidate visited before ``r`` was rejected), by a stable recursion in O(m^3).  For Laplace
noise, by numerical integration of ``Pr[r] = int f(x - s_r) prod_{j != r} F(x - s_j) dx`` (absolute
error about 1e-12).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate

from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.laplace import laplace_log_cdf
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, choice, finite_array, integer, memory, positive

Noise = Literal["laplace", "exponential"]


def permute_and_flip_probabilities(acceptance: ArrayLike) -> np.ndarray:
    """Exact output probabilities of permute-and-flip with acceptance probabilities ``p_j`` (the
    largest equal to 1).  Recursion for the subset averages, for every ``r`` at once: after ``n`` of
    the other candidates, ``A(k) <- ((n - k) A(k) + k (1 - p_j) A(k-1)) / n``; every quantity stays
    in [0, 1].

    Parameters
    ----------
    acceptance : array_like
        1-d, in ``[0, 1]``, the largest 1.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationError
        On a non-finite or non-1-d array.
    """
    p = finite_array("acceptance", acceptance, ndim=1)
    m = p.size
    rows, k = np.arange(m), np.arange(m)
    averages = np.zeros((m, m))
    averages[:, 0] = 1.0
    for j in range(m):
        n = (j + 1 - (rows < j)).astype(float)[:, None]  # others seen by row r once j is added
        shifted = np.zeros_like(averages)
        shifted[:, 1:] = averages[:, :-1]
        update = (np.clip(n - k, 0, None) * averages + k * (1 - p[j]) * shifted) / n
        update[j] = averages[j]  # row j never sees itself
        averages = update
    return p * averages.mean(axis=1)


class ReportNoisyMax:
    """Report-noisy-max with Laplace or exponential noise of scale ``2 Delta / eps`` (``Delta /
    eps`` for monotone scores): eps-DP in the data behind the scores (Dwork & Roth Claim 3.9;
    McKenna & Sheldon 2020 for exponential noise, which is permute-and-flip).

    Parameters
    ----------
    epsilon : float
        ``> 0``.
    sensitivity : float, default 1
    noise : {"exponential", "laplace"}
    monotone : bool, default False

    Raises
    ------
    ValidationError
        On bad arguments or a noise scale beyond the float range.

    Examples
    --------
    >>> rnm = ReportNoisyMax(1.0)
    >>> rnm.sample_indices([0.0, 1.0, 5.0], size=5, rng=0).tolist()
    [2, 2, 2, 0, 2]
    >>> rnm.output_distribution([0.0, 1.0]).probabilities.round(6).tolist()
    [0.303265, 0.696735]
    """

    def __init__(
        self,
        epsilon: float,
        sensitivity: float = 1.0,
        noise: Noise = "exponential",
        monotone: bool = False,
    ):
        self.epsilon = positive("epsilon", epsilon)
        self.sensitivity = positive("sensitivity", sensitivity)
        self.noise = choice("noise", noise, ("laplace", "exponential"))
        self.monotone = bool(monotone)
        if not math.isfinite(self.scale) or self.scale == 0:
            raise ValidationError(
                "epsilon",
                f"{self.epsilon:g} with sensitivity {self.sensitivity:g} gives a noise "
                "scale beyond the float range (infinite, or rounded to 0)",
            )

    @property
    def scale(self) -> float:
        """The noise scale: ``2 Delta / eps`` (``Delta / eps`` for monotone scores)."""
        return (1 if self.monotone else 2) * self.sensitivity / self.epsilon

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``epsilon``-DP under replace-one neighbours that move every score (monotone scores: in
        one direction) by at most ``sensitivity`` (Dwork & Roth Claim 3.9; McKenna & Sheldon 2020).
        """
        kind = "monotone scores move" if self.monotone else "every score moves"
        relation = Neighbouring.REPLACE_ONE.described(
            f"one individual's change: {kind} by at most {self.sensitivity:g}"
        )
        return PrivacyGuarantee(self.epsilon, 0.0, relation)

    def _scores(self, scores: ArrayLike) -> np.ndarray:
        s = finite_array("scores", scores, ndim=1)
        if s.size == 0:
            raise ValidationError("scores", "must be non-empty")
        return s

    def sample_indices(
        self, scores: ArrayLike, size: int | None = None, rng: RNGLike = None
    ) -> np.ndarray | int:
        """Indices of the noisy maxima (``size`` independent draws; O(m) each).

        Parameters
        ----------
        scores : array_like
            1-d, non-empty, finite.
        size : int, optional
        rng : Generator, int or None

        Returns
        -------
        int or numpy.ndarray

        Raises
        ------
        ValidationError
            On bad scores, ``size`` (or ``size x m`` noises beyond the memory limit) or ``rng``.
        """
        s = self._scores(scores)
        gen = as_generator(rng)
        if size is not None:
            size = integer("size", size, low=0)
            memory("size", size * s.size, what=f"{size:,} draws x {s.size:,} scores")
        shape = (s.size,) if size is None else (size, s.size)
        if self.noise == "laplace":
            noise = gen.laplace(0.0, self.scale, size=shape)
        else:
            noise = gen.exponential(self.scale, size=shape)
        idx = np.argmax(s + noise, axis=-1)
        return int(idx) if size is None else idx

    def output_distribution(self, scores: ArrayLike) -> FiniteDistribution:
        """The exact (exponential noise) or numerically integrated (Laplace noise, error about
        1e-12) output law.

        Parameters
        ----------
        scores : array_like
            1-d, non-empty, finite.

        Returns
        -------
        FiniteDistribution

        Raises
        ------
        ValidationError
            On bad scores.
        """
        s = self._scores(scores)
        if self.noise == "exponential":
            with np.errstate(over="ignore"):
                # a gap over a tiny scale is -inf: its weight exp(-inf) is exactly 0
                weights = np.exp((s - s.max()) / self.scale)
            return FiniteDistribution.from_probabilities(permute_and_flip_probabilities(weights))
        return FiniteDistribution.from_probabilities(
            _laplace_noisy_max_probabilities(s, self.scale)
        )


def permute_and_flip(
    scores: ArrayLike, epsilon: float, sensitivity: float = 1.0, rng: RNGLike = None
) -> int:
    """One run of McKenna & Sheldon's permute-and-flip procedure (eps-DP; same law as
    ``ReportNoisyMax(epsilon, sensitivity, "exponential")``).

    Parameters
    ----------
    scores : array_like
        1-d, non-empty, finite.
    epsilon : float
    sensitivity : float, default 1
    rng : Generator, int or None

    Returns
    -------
    int

    Raises
    ------
    ValidationError
        On bad arguments or a noise scale beyond the float range.
    """
    s = finite_array("scores", scores, ndim=1)
    if s.size == 0:
        raise ValidationError("scores", "must be non-empty")
    scale = 2 * positive("sensitivity", sensitivity) / positive("epsilon", epsilon)
    if not math.isfinite(scale) or scale == 0:
        raise ValidationError(
            "epsilon",
            "with this sensitivity gives a noise scale beyond the float range "
            "(infinite, or rounded to 0)",
        )
    gen = as_generator(rng)
    order = gen.permutation(s.size)
    accept = np.exp((s[order] - s.max()) / scale) > gen.random(s.size)
    return int(order[np.argmax(accept)])  # the best candidate always accepts, so some entry is True


def _laplace_noisy_max_probabilities(scores: np.ndarray, scale: float) -> np.ndarray:
    def integrand(x: float) -> np.ndarray:
        z = (x - scores) / scale
        log_f = -np.abs(z) - np.log(2 * scale)
        lc = laplace_log_cdf(z)
        return np.exp(log_f + lc.sum() - lc)

    lo, hi = scores.min() - 60 * scale, scores.max() + 60 * scale
    points = np.unique(scores)
    probabilities = np.zeros(scores.size)
    edges = np.concatenate([[lo], points, [hi]])
    for a, b in zip(edges[:-1], edges[1:]):
        if b > a:
            probabilities += integrate.quad_vec(integrand, a, b, epsabs=1e-14, epsrel=1e-12)[0]
    return np.clip(probabilities, 0.0, None)
