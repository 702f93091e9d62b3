"""Resource cost functions of the load, vectorised over resources: ``c_r(x) = a_r + b_r x^p_r``.

One form covers the three families of the issue:

* linear ``a + b x`` (``power = 1``);
* polynomial ``a + b x^p`` (any ``p >= 0``);
* BPR (Bureau of Public Roads) ``t0 (1 + B (x / c)^p)``, i.e. ``a = t0`` and ``b = t0 B / c^p``
  (:meth:`PolynomialCosts.bpr`); a generalized cost (toll, distance) adds a constant to ``a``.

Everything the equilibrium algorithms need has a closed form: the Beckmann integral
``int_0^x c = a x + b x^(p+1) / (p+1)``, the derivative, and the marginal cost of the system optimum
``d(x c(x))/dx = a + (p+1) b x^p`` (Beckmann, McGuire & Winsten 1956; Sheffi 1985, ch. 5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from dpgames.validation import ValidationError, finite_array


def _array(name: str, values: ArrayLike, size: int | None = None) -> np.ndarray:
    arr = np.atleast_1d(finite_array(name, values))
    if arr.ndim != 1:
        raise ValidationError(name, f"must be a 1-d array, got shape {arr.shape}")
    if size is not None and arr.size == 1:
        arr = np.full(size, arr[0])
    if size is not None and arr.size != size:
        raise ValidationError(name, f"must have {size} entries, got {arr.size}")
    if not (np.isfinite(arr).all() and (arr >= 0).all()):
        raise ValidationError(name, "must be finite and >= 0")
    return arr


@dataclass(frozen=True)
class PolynomialCosts:
    """Costs ``c_r(x) = free_r + coef_r * x^power_r`` of ``m`` resources (all entries finite, >= 0).

    Parameters
    ----------
    free : array_like, shape (m,)
        The constant terms.
    coef : array_like, shape (m,)
        The load coefficients.
    power : array_like or float, default 1
        The exponents (one, or one per resource).

    Raises
    ------
    ValidationError
        If an entry is negative or not finite, or the lengths differ.

    Examples
    --------
    >>> from dpgames.games import PolynomialCosts
    >>> costs = PolynomialCosts([1.0, 0.0], [0.0, 2.0], [1, 2])
    >>> costs([3.0, 3.0]).tolist(), costs.integral([3.0, 3.0]).tolist()
    ([1.0, 18.0], [3.0, 18.0])
    >>> PolynomialCosts.bpr([10.0], [100.0])([100.0]).tolist()  # t0 (1 + 0.15 (x / c)^4) at x = c
    [11.5]
    """

    free: np.ndarray
    coef: np.ndarray
    power: np.ndarray
    if TYPE_CHECKING:
        # set by __post_init__; declared for the type checker only (not a dataclass field)
        _uniform_power: float | None = field(init=False)

    def __init__(self, free: ArrayLike, coef: ArrayLike, power: ArrayLike = 1.0):
        free_arr = _array("free (constant cost)", free)
        object.__setattr__(self, "free", free_arr)
        object.__setattr__(self, "coef", _array("coef (load coefficient)", coef, free_arr.size))
        object.__setattr__(self, "power", _array("power", power, free_arr.size))
        uniform = np.unique(self.power)
        object.__setattr__(self, "_uniform_power", float(uniform[0]) if uniform.size == 1 else None)

    @classmethod
    def bpr(
        cls,
        free_flow_time: ArrayLike,
        capacity: ArrayLike,
        b: ArrayLike = 0.15,
        power: ArrayLike = 4.0,
        fixed: ArrayLike = 0.0,
    ) -> PolynomialCosts:
        """BPR link costs ``t0 (1 + B (x / capacity)^power) + fixed`` (capacity > 0)."""
        t0 = _array("free_flow_time", free_flow_time)
        cap = _array("capacity", capacity, t0.size)
        if (cap <= 0).any():
            raise ValidationError("capacity", "must be > 0")
        p = _array("power", power, t0.size)
        with np.errstate(over="ignore", divide="ignore", under="ignore", invalid="ignore"):
            # checked below
            coef = t0 * _array("b", b, t0.size) / cap**p
        if not np.isfinite(coef).all():
            raise ValidationError(
                "capacity",
                "is too small for its power: t0 B / capacity^power exceeds the float range",
            )
        return cls(t0 + _array("fixed cost", fixed, t0.size), coef, p)

    def _loads(self, loads: ArrayLike) -> np.ndarray:
        """Loads as floats whose last axis has one entry per resource (cheap: called on hot
        paths)."""
        try:
            x = np.asarray(loads, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise ValidationError("loads", "must be an array of numbers") from None
        if x.shape[-1:] != (self.size,):
            raise ValidationError(
                "loads",
                f"must have {self.size} entries (one per resource) on the last axis, "
                f"got shape {x.shape}",
            )
        return x

    @property
    def size(self) -> int:
        """``m``, the number of resources."""
        return self.free.size

    def _pow(self, x: np.ndarray, extra: float = 0.0) -> np.ndarray:
        """``x^(power + extra)``, with fast paths for a common small integer power."""
        p = self._uniform_power
        if p is not None and extra == 0.0:
            if p == 1.0:
                return x
            if p == 4.0:
                x2 = x * x
                return x2 * x2
            if p == 0.0:
                return np.ones_like(x)
        return np.power(x, self.power + extra)

    def __call__(self, loads: ArrayLike) -> np.ndarray:
        """``c_r(x_r)`` for every resource (``loads`` may carry leading batch axes)."""
        x = self._loads(loads)
        return self.free + self.coef * self._pow(x)

    def integral(self, loads: ArrayLike) -> np.ndarray:
        """``int_0^x c_r`` (the Beckmann potential's terms)."""
        x = self._loads(loads)
        return self.free * x + self.coef * x * self._pow(x) / (self.power + 1.0)

    def derivative(self, loads: ArrayLike) -> np.ndarray:
        """``c_r'(x_r)`` (``0`` at ``x = 0`` for powers below 1, where it would be infinite)."""
        x = self._loads(loads)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = self.coef * self.power * np.power(x, self.power - 1.0)
        return np.where(self.power == 0, 0.0, np.nan_to_num(d, nan=0.0, posinf=0.0))

    def marginal_costs(self) -> PolynomialCosts:
        """The marginal social costs as cost functions: the user equilibrium under them is the
        system optimum (Beckmann et al. 1956)."""
        return PolynomialCosts(self.free, (self.power + 1.0) * self.coef, self.power)

    def subset(self, index: ArrayLike) -> PolynomialCosts:
        """The cost functions of the resources ``index`` (integer indices or a boolean mask)."""
        try:
            self.free[index]  # type: ignore[index]  # any index is tried here; a bad one is refused below
        except (IndexError, TypeError, ValueError):
            raise ValidationError("index", f"must select resources among {self.size}") from None
        return PolynomialCosts(  # the index was checked above
            self.free[index],  # type: ignore[index]
            self.coef[index],  # type: ignore[index]
            self.power[index],  # type: ignore[index]
        )
