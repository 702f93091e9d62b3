"""The Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth Def. 3.3, Thm 3.6).

Add independent Laplace noise of scale ``b = Delta / eps`` to each coordinate of a query whose value
vector moves by at most ``Delta`` in l1 norm between neighbouring inputs: eps-DP.  Each coordinate's
error has variance ``2 b^2`` and ``Pr[|Y| > b ln(1/beta)] = beta`` exactly; for ``k`` coordinates,
all errors are at most ``b ln(k / beta)`` with probability ``>= 1 - beta`` (Thm 3.8).
Its Renyi-DP curve (Mironov 2017, Prop. 6) is stated on the guarantee so that the accountant can use
it.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from dpgames.privacy.conversions import RDPCurve
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    finite_array,
    finite_result,
    number_array,
    positive,
    positive_int,
    probability,
)


def laplace_rdp(epsilon: float) -> RDPCurve:
    """The Renyi-DP curve of the Laplace mechanism with ``Delta / b = eps`` (Mironov 2017, Prop. 6):
    ``1/(alpha-1) ln( alpha/(2 alpha - 1) e^{(alpha-1) eps} + (alpha-1)/(2 alpha - 1) e^{-alpha eps}
    )`` (:meth:`RDPCurve.laplace <dpgames.privacy.conversions.RDPCurve.laplace>`).

    Parameters
    ----------
    epsilon : float
        ``Delta / b`` (finite, ``>= 0``).

    Returns
    -------
    RDPCurve

    Raises
    ------
    ValidationError
        If ``epsilon`` is not a finite number ``>= 0``.
    """
    return RDPCurve.laplace(epsilon)


def laplace_log_cdf(z: ArrayLike) -> np.ndarray:
    """``ln Pr[L <= z]`` for ``L`` Laplace(0, 1), accurate in both tails.

    Parameters
    ----------
    z : array_like
        Finite.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationError
        On non-finite ``z``.
    """
    z = finite_array("z", z)
    return np.where(z < 0, z - math.log(2), np.log1p(-0.5 * np.exp(-np.abs(z))))


class LaplaceMechanism:
    """eps-DP for queries of l1 sensitivity ``sensitivity``: add Laplace(``sensitivity / epsilon``)
    (Dwork & Roth Thm 3.6); its exact RDP curve (Mironov 2017, Prop. 6) rides on the guarantee.

    Parameters
    ----------
    epsilon : float
        ``> 0``.
    sensitivity : float, default 1
        ``> 0``.

    Raises
    ------
    ValidationError
        On bad arguments or a noise scale beyond the float range.

    Examples
    --------
    >>> mech = LaplaceMechanism(0.5)
    >>> mech.scale, round(mech.error_bound(0.05), 4)
    (2.0, 5.9915)
    >>> mech.guarantee.rdp
    RDPCurve.laplace(0.5)
    """

    def __init__(self, epsilon: float, sensitivity: float = 1.0):
        self.epsilon = positive("epsilon", epsilon)
        self.sensitivity = positive("sensitivity", sensitivity)
        if not math.isfinite(self.sensitivity / self.epsilon):
            raise ValidationError(
                "epsilon",
                f"{self.epsilon:g} with sensitivity {self.sensitivity:g} gives a noise "
                "scale beyond the float range",
            )

    @property
    def scale(self) -> float:
        """The Laplace scale ``b = Delta / eps``."""
        return self.sensitivity / self.epsilon

    @property
    def variance(self) -> float:
        """Variance of each coordinate's noise: ``2 b^2`` (a ValidationError beyond the float
        range)."""
        return finite_result("variance", 2 * self.scale * self.scale, f"scale {self.scale:g}")

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``epsilon``-DP under replace-one neighbours whose query values move by at most
        ``sensitivity`` in l1 norm (Dwork & Roth Thm 3.6), with the Laplace RDP curve (Mironov 2017,
        Prop. 6) for the accountant.
        """
        relation = Neighbouring.REPLACE_ONE.described(
            f"the query's value moves by at most {self.sensitivity:g} in l1 norm"
        )
        return PrivacyGuarantee(self.epsilon, 0.0, relation, rdp=laplace_rdp(self.epsilon))

    def release(self, values: ArrayLike, rng: RNGLike = None) -> np.ndarray | float:
        """``values`` plus independent Laplace noise on every coordinate.

        Parameters
        ----------
        values : array_like
            Finite.
        rng : Generator, int or None

        Returns
        -------
        float or numpy.ndarray
            Same shape (a float for a scalar).

        Raises
        ------
        ValidationError
            On non-finite values, or a noisy value beyond the float range (never inf).
        """
        v = number_array("values", values, copy=False)
        out = as_generator(rng).laplace(0.0, self.scale, size=v.shape)
        with np.errstate(over="ignore", invalid="ignore"):
            # into the noise's own array: one array of n written, like v + noise
            np.add(v, out, out=out)
            # The noise is finite, so one check of the output covers the values too.  A total is
            # finite only if every term is; only when it is not (or it overflows) are the entries
            # read one by one.
            if not math.isfinite(out.sum()) and not np.isfinite(out).all():
                finite_array("values", v)  # raises on a value that is NaN or infinite
                finite_result("release", out, "a value plus its noise exceeds the float range")
        return float(out) if out.ndim == 0 else out

    def error_bound(self, beta: float, k: int = 1) -> float:
        """All ``k`` coordinates' errors are at most ``b ln(k / beta)`` with probability ``>= 1 -
        beta`` (Dwork & Roth Thm 3.8; exact for ``k = 1``).

        Parameters
        ----------
        beta : float
            In ``(0, 1)``.
        k : int, default 1

        Returns
        -------
        float

        Raises
        ------
        ValidationError
            On bad arguments or a bound beyond the float range.
        """
        bound = self.scale * (math.log(positive_int("k", k)) - math.log(probability("beta", beta)))
        return finite_result("error_bound", bound, f"scale {self.scale:g}")
