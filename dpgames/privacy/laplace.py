"""The Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth Def. 3.3, Thm 3.6).

Add independent Laplace noise of scale ``b = Delta / eps`` to each coordinate of a query whose value
vector moves by at most ``Delta`` in l1 norm between neighbouring inputs: eps-DP.  Each coordinate's
error has variance ``2 b^2`` and ``Pr[|Y| > b ln(1/beta)] = beta`` exactly; for ``k`` coordinates,
all errors are at most ``b ln(k / beta)`` with probability ``>= 1 - beta`` (Thm 3.8).
Its Renyi-DP curve (Mironov 2017, Prop. 6) is stated on the guarantee so that the accountant can use it.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from dpgames.privacy.distribution import as_generator
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.validation import ValidationError, finite_array, finite_result, positive, positive_int, probability


def laplace_rdp(epsilon: float):
    """The Renyi-DP curve of the Laplace mechanism with ``Delta / b = eps`` (Mironov 2017, Prop. 6):
    ``1/(alpha-1) ln( alpha/(2 alpha - 1) e^{(alpha-1) eps} + (alpha-1)/(2 alpha - 1) e^{-alpha eps} )``."""

    def curve(alphas: np.ndarray) -> np.ndarray:
        a = np.asarray(alphas, dtype=float)
        log_terms = np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * epsilon,
                                 np.log((a - 1) / (2 * a - 1)) - a * epsilon)
        return np.minimum(log_terms / (a - 1), epsilon)

    return curve


def laplace_log_cdf(z: ArrayLike) -> np.ndarray:
    """``ln Pr[L <= z]`` for ``L`` Laplace(0, 1), accurate in both tails."""
    z = finite_array("z", z)
    return np.where(z < 0, z - math.log(2), np.log1p(-0.5 * np.exp(-np.abs(z))))


class LaplaceMechanism:
    """eps-DP for queries of l1 sensitivity ``sensitivity``: add Laplace(``sensitivity / epsilon``)."""

    def __init__(self, epsilon: float, sensitivity: float = 1.0):
        self.epsilon = positive("epsilon", epsilon)
        self.sensitivity = positive("sensitivity", sensitivity)
        if not math.isfinite(self.sensitivity / self.epsilon):
            raise ValidationError("epsilon", f"{self.epsilon:g} with sensitivity {self.sensitivity:g} gives a noise "
                                             "scale beyond the float range")

    @property
    def scale(self) -> float:
        """The Laplace scale ``b = Delta / eps``."""
        return self.sensitivity / self.epsilon

    @property
    def variance(self) -> float:
        """Variance of each coordinate's noise: ``2 b^2`` (a ValidationError beyond the float range)."""
        return finite_result("variance", 2 * self.scale * self.scale, f"scale {self.scale:g}")

    @property
    def guarantee(self) -> PrivacyGuarantee:
        relation = f"the query's value moves by at most {self.sensitivity:g} in l1 norm"
        return PrivacyGuarantee(self.epsilon, 0.0, relation, rdp=laplace_rdp(self.epsilon))

    def release(self, values: ArrayLike, rng: np.random.Generator | int | None = None) -> np.ndarray | float:
        """``values`` plus independent Laplace noise on every coordinate (same shape; a float for a scalar).
        A noisy value beyond the float range is a ValidationError, never inf."""
        v = finite_array("values", values)
        with np.errstate(over="ignore"):
            out = v + as_generator(rng).laplace(0.0, self.scale, size=v.shape)
        finite_result("release", out, "a value plus its noise exceeds the float range")
        return float(out) if out.ndim == 0 else out

    def error_bound(self, beta: float, k: int = 1) -> float:
        """All ``k`` coordinates' errors are at most ``b ln(k / beta)`` with probability ``>= 1 - beta``
        (Dwork & Roth Thm 3.8; exact for ``k = 1``)."""
        bound = self.scale * (math.log(positive_int("k", k)) - math.log(probability("beta", beta)))
        return finite_result("error_bound", bound, f"scale {self.scale:g}")
