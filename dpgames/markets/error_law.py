"""The exact law of a surveyor's error: a finite deterministic part plus Laplace noise.

The release of a sensitive surveyor (Dwork & Roth 10.3; Ghosh & Roth 2011) is
``s_hat = sum_{i bought} b_i + u/2 + Lap(1/eps)`` with ``u`` agents not bought, whose bits are
replaced by the guess 1/2 each.  Its error ``E = s_hat - s = D + L`` is the sum of

* ``D = sum_{i not bought} (1/2 - b_i)``, a number once the bits are fixed (``|D| <= u/2``), or a
  finite law when the unbought bits are random (a Poisson-binomial: :meth:`ErrorLaw.from_unbought`);
* ``L ~ Laplace(0, 1/eps)``, in closed form.

So ``E`` is a finite mixture of shifted Laplace laws, and every figure below is exact (closed forms,
no sampling): ``Pr[|E| <= t] = sum_j w_j (F(t - d_j) - F(-t - d_j))`` with ``F`` the Laplace CDF,
and ``E|E| = sum_j w_j (|d_j| + b e^{-|d_j|/b})``.

The **worst case over the unbought bits** (what a mechanism that never sees them can guarantee) has
``|D| = u/2``; its ``1 - beta`` error radius is, for ``beta <= 1/2``,
``t*(u, eps) = u/2 + (ln((1 + e^{-eps u}) / 2) + ln(1/beta)) / eps`` (:func:`worst_case_radius`),
from ``Pr[|u/2 + L| > t] = e^{-eps t} cosh(eps u/2) = beta``; :func:`least_epsilon` inverts it in
``eps``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from dpgames.validation import (
    ValidationError,
    finite_array,
    finite_result,
    integer,
    non_negative,
    positive,
    positive_int,
    probability,
    real,
)

__all__ = ["ErrorLaw", "least_epsilon", "worst_case_radius"]


def _laplace_cdf(x: np.ndarray, scale: float) -> np.ndarray:
    with np.errstate(over="ignore"):
        # |x| / scale beyond the float range is +-inf: the CDF is then 0 or 1
        z = x / scale
    return np.where(
        z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0))
    )


@dataclass(frozen=True)
class ErrorLaw:
    """``E = D + L``: ``D`` takes ``shifts[j]`` with probability ``weights[j]``; ``L ~ Laplace(0,
    scale)`` (``scale = None``: no noise, nobody's data is used).

    Examples
    --------
    >>> law = ErrorLaw.point(0.0, scale=1.0)
    >>> round(law.probability_within(math.log(2)), 12)   # Pr[|L| <= ln 2] = 1 - e^{-ln 2}
    0.5
    """

    shifts: np.ndarray
    weights: np.ndarray
    scale: float | None

    def __post_init__(self):
        d = finite_array("shifts", self.shifts, ndim=1)
        w = finite_array("weights", self.weights, ndim=1, low=0)
        if d.size == 0 or d.shape != w.shape:
            raise ValidationError(
                "weights", f"must have one entry per shift ({d.size}), got {w.size}"
            )
        if abs(w.sum() - 1.0) > 1e-9:
            raise ValidationError(
                "weights", f"must be >= 0 and sum to 1, they sum to {w.sum():.12g}"
            )
        if self.scale is not None:
            object.__setattr__(self, "scale", positive("scale", self.scale))
        object.__setattr__(self, "shifts", d)
        object.__setattr__(self, "weights", w / w.sum())

    @classmethod
    def point(cls, shift: float, scale: float | None) -> ErrorLaw:
        """The law given the realised bits: one deterministic shift ``D``."""
        return cls(np.array([real("shift", shift)]), np.array([1.0]), scale)

    @classmethod
    def from_unbought(cls, probabilities_one: ArrayLike, scale: float | None) -> ErrorLaw:
        """The law when the unbought agents' bits are independent
        Bernoulli(``probabilities_one[i]``).

        ``D = u/2 - K`` with ``K`` Poisson-binomial: agents sharing a probability form one binomial
        (``scipy.stats.binom``), and the distinct groups are convolved exactly.  Cost ``O(u *
        groups)``."""
        q = finite_array("probabilities_one", probabilities_one, ndim=1, low=0, high=1)
        values, counts = np.unique(q, return_counts=True)
        pmf = np.array([1.0])
        for p, m in zip(values, counts):
            pmf = np.convolve(pmf, stats.binom.pmf(np.arange(m + 1), m, p))
        keep = pmf > 0
        u = q.size
        shifts = u / 2 - np.arange(pmf.size, dtype=float)
        return cls(shifts[keep], pmf[keep], scale)

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """``Pr[E <= x]`` (vectorised over ``x``)."""
        x = finite_array("x", x)
        diff = x[..., None] - self.shifts
        if self.scale is None:
            return (diff >= 0) @ self.weights
        return _laplace_cdf(diff, self.scale) @ self.weights

    def probability_within(self, t: float) -> float:
        """``Pr[|E| <= t]`` exactly."""
        t = non_negative("t", t)
        if self.scale is None:
            return float(self.weights[np.abs(self.shifts) <= t].sum())
        up = _laplace_cdf(t - self.shifts, self.scale)
        down = _laplace_cdf(-t - self.shifts, self.scale)
        return float(np.clip((up - down) @ self.weights, 0.0, 1.0))

    def mean_absolute_error(self) -> float:
        """``E|E| = sum_j w_j (|d_j| + b e^{-|d_j| / b})``."""
        a = np.abs(self.shifts)
        if self.scale is None:
            return float(a @ self.weights)
        with np.errstate(over="ignore"):
            # |d| / b beyond the float range: e^{-inf} = 0, exactly the limit
            return float((a + self.scale * np.exp(-a / self.scale)) @ self.weights)

    def mean(self) -> float:
        """``E[E] = E[D]`` (the noise is centred)."""
        return float(self.shifts @ self.weights)


def worst_case_radius(unbought: ArrayLike, epsilon: ArrayLike, beta: float) -> np.ndarray:
    """The least ``t`` with ``Pr[|E| > t] <= beta`` for every assignment of the ``unbought`` agents'
    bits.

    Parameters
    ----------
    unbought : array_like
        Numbers of agents not bought, ``u >= 0``.
    epsilon : array_like
        Privacy level of the bought agents, ``> 0`` (``inf`` where nobody is bought: no noise,
        radius ``u/2``).
    beta : float
        Failure probability in ``(0, 1/2]``.

    Returns
    -------
    numpy.ndarray
        ``u/2 + (ln((1 + e^{-eps u})/2) + ln(1/beta)) / eps`` (broadcast).

    Raises
    ------
    ValidationError
        ``beta`` outside ``(0, 1/2]``, negative ``u``, non-positive ``eps``, shapes that do not
        match, or a radius beyond the float range (an ``eps`` so small that ``ln(1/beta) / eps``
        overflows).
    """
    beta = probability("beta", beta)
    if beta > 0.5:
        raise ValidationError("beta", f"must be in (0, 1/2], got {beta:g}")
    u = finite_array("unbought", unbought, low=0)
    eps = finite_array("epsilon", epsilon, allow_inf=True, low=0, open_low=True)
    try:
        np.broadcast_shapes(u.shape, eps.shape)
    except ValueError:
        raise ValidationError(
            "epsilon",
            f"must be one number, or one per entry of unbought: shapes {eps.shape} and {u.shape}",
        ) from None
    return finite_result(
        "worst_case_radius", radius_unchecked(u, eps, beta), "an eps too small for a float radius"
    )


def radius_unchecked(u: np.ndarray, eps: np.ndarray, beta: float) -> np.ndarray:
    """:func:`worst_case_radius` on checked arrays, ``inf`` where ``eps`` is 0 or too small (for
    searches over candidates, where such a candidate is simply never the best)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        extra = (np.log1p(np.exp(-eps * u)) - math.log(2) - math.log(beta)) / eps
    return u / 2 + np.where(np.isinf(eps), 0.0, extra)


def least_epsilon(
    n: int, unbought: ArrayLike, radius: float, beta: float, iterations: int = 60
) -> np.ndarray:
    """The least ``eps`` with ``worst_case_radius(u, eps, beta) <= radius`` (vectorised over ``u``).

    Solves ``g(eps) = eps (radius - u/2) - ln((1 + e^{-eps u}) / 2) + ln(beta) = 0``; ``g`` is
    convex and increasing, so Newton's method from ``eps_0 = ln(1/beta) / (radius - u/2)`` (where
    ``g >= 0``) decreases monotonically to the root and never crosses it: every iterate keeps the
    guarantee.  A final check nudges ``eps`` up by relative steps of ``1e-12`` until the radius is
    met in floating point.

    Raises
    ------
    ValidationError
        ``radius <= u/2`` for some ``u`` (no ``eps`` can make the unbought agents' error fit), bad
        ``beta``, ``n``, ``iterations`` or a negative count ``unbought``.
    """
    n = positive_int("n", n)
    iterations = integer("iterations", iterations, low=1, high=10_000)
    beta = probability("beta", beta)
    if beta > 0.5:
        raise ValidationError("beta", f"must be in (0, 1/2], got {beta:g}")
    u = finite_array("unbought", unbought, low=0)
    radius = positive("radius", radius)
    a = radius - u / 2
    if (a <= 0).any():
        bad = float(u[a <= 0].min()) if u.ndim else float(u)
        raise ValidationError(
            "alpha",
            f"too small: leaving {bad:g} of {n} agents unbought already errs by "
            f"{bad / 2:g} >= alpha n = {radius:g} in the worst case",
        )
    eps = -math.log(beta) / a
    for _ in range(iterations):
        x = np.exp(-eps * u)
        g = eps * a - np.log1p(x) + math.log(2) + math.log(beta)
        dg = a + u * x / (1 + x)
        step = g / dg
        eps = eps - step
        if np.all(np.abs(step) <= 1e-15 * eps):
            break
    for _ in range(8):
        over = worst_case_radius(u, eps, beta) > radius
        if not over.any():
            break
        eps = np.where(over, eps * (1 + 1e-12), eps)
    return eps
