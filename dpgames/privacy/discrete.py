"""Exact samplers for the discrete Laplace and discrete Gaussian distributions, and their
mechanisms.

Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential Privacy", Algorithms 1-3:
only integer arithmetic on rational parameters and exactly uniform random integers are used, so the
samples follow the stated distributions exactly (no floating-point rounding, which can break the
privacy of float Laplace noise: Mironov 2012).  Uniform integers are built from random bits of the
numpy Generator (62-bit words drawn in blocks) by rejection, exactly, for ranges of any size.

* Discrete Laplace of scale ``t``: ``Pr[X = x] = tanh(1 / (2t)) e^{-|x|/t}`` on the integers.
  Adding it with ``t = Delta / eps`` to an integer query of l1 sensitivity ``Delta`` is eps-DP.
* Discrete Gaussian with parameter ``sigma^2``: ``Pr[X = x] proportional to e^{-x^2 / (2
  sigma^2)}``. Adding it to an integer query of l2 sensitivity ``Delta`` is ``Delta^2 / (2
  sigma^2)``-zCDP (Canonne, Kamath & Steinke, Thm 4); its variance is below ``sigma^2`` (their Cor.
  9).

Rational parameters are given as :class:`fractions.Fraction`, ints, strings such as ``"3/2"``, or
floats (read by their shortest decimal form: ``0.1`` is ``1/10``); their value must lie within the
float range (about 2.2e-308 to 1.8e308), since the guarantee states it as a float.  ``"p/q"``
strings are the one place dpgames reads a number from text (:mod:`dpgames.validation`).  The
samplers run a Python loop a sample (tens of microseconds each): exactness, not speed, is their
point.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, finite_array, integer, memory, positive_int

Rational = Fraction | int | str | float
_WORD = 1 << 62
#: Most exact draws one call makes: the samplers are a Python loop of 10-50 microseconds a draw
#: (exact integer arithmetic), so the limit keeps one call to seconds; more is refused up front
#: (draw in batches).
MAX_DRAWS = 10**5
_INT64_MAX = 2**63 - 1


def as_fraction(name: str, value: Rational) -> Fraction:
    """A positive rational parameter as a Fraction, or a ValidationError naming the field.

    Parameters
    ----------
    name : str
        The field named in errors.
    value : Fraction, int, str or float
        ``"p/q"`` strings and floats (by their shortest decimal form) are read exactly; the value
        must be > 0 and within the float range.

    Returns
    -------
    fractions.Fraction

    Raises
    ------
    ValidationError
        On anything else.
    """
    allowed = "a positive rational (Fraction, int, 'p/q' or float)"
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (Fraction, int, str, float, np.integer, np.floating)
    ):
        raise ValidationError(name, f"must be {allowed}, got {value!r}")
    try:
        f = Fraction(str(value)) if isinstance(value, (float, np.floating)) else Fraction(value)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        raise ValidationError(name, f"must be {allowed}, got {value!r}") from None
    if f <= 0:
        raise ValidationError(name, f"must be > 0, got {value!r}")
    try:
        as_float = float(f)
    except OverflowError:
        as_float = math.inf
    if not (0 < as_float < math.inf):
        raise ValidationError(
            name, f"must lie within the float range (about 2.2e-308 to 1.8e308), got {value!r}"
        )
    return f


class _RandomBits:
    """Exactly uniform random integers from a numpy Generator, drawn 62 bits at a time in blocks
    (one Generator call per 4096 words) and consumed bit by bit: ``uniform(n)`` takes
    ``bit_length(n - 1)`` bits and rejects values ``>= n`` (expected fewer than 2 tries)."""

    _BLOCK = 4096

    def __init__(self, gen: np.random.Generator):
        self._gen = gen
        self._words: list[int] = []
        self._reservoir = 0
        self._available = 0

    def _bits(self, k: int) -> int:
        while self._available < k:
            if not self._words:
                self._words = self._gen.integers(
                    0, _WORD, size=self._BLOCK, dtype=np.int64
                ).tolist()
            self._reservoir = (self._reservoir << 62) | self._words.pop()
            self._available += 62
        self._available -= k
        value = self._reservoir >> self._available
        self._reservoir &= (1 << self._available) - 1
        return value

    def uniform(self, n: int) -> int:
        """Uniform on ``0 .. n-1`` for any positive Python int ``n``."""
        k = (n - 1).bit_length()
        while True:
            x = self._bits(k)
            if x < n:
                return x


def _bernoulli(bits: _RandomBits, num: int, den: int) -> bool:
    """True with probability exactly ``num / den`` (``0 <= num <= den``)."""
    return bits.uniform(den) < num


def _bernoulli_exp(bits: _RandomBits, num: int, den: int) -> bool:
    """True with probability exactly ``exp(-num/den)`` (Canonne, Kamath & Steinke, Alg. 1)."""
    while num > den:  # exp(-g) = exp(-1)^floor(g) * exp(-(g - floor(g)))
        if not _bernoulli_exp(bits, 1, 1):
            return False
        num -= den
    k = 1
    while _bernoulli(bits, num, den * k):
        # for gamma in [0, 1]: K = first k with Bernoulli(gamma/k) = 0
        k += 1
    return k % 2 == 1


def _discrete_laplace(bits: _RandomBits, s: int, t: int) -> int:
    """One draw of the discrete Laplace of scale ``t / s`` (Canonne, Kamath & Steinke, Alg. 2)."""
    while True:
        u = bits.uniform(t)
        if not _bernoulli_exp(bits, u, t):
            continue
        v = 0
        while _bernoulli_exp(bits, 1, 1):
            v += 1
        y = (u + t * v) // s
        negative = _bernoulli(bits, 1, 2)
        if negative and y == 0:
            continue
        return -y if negative else y


def _discrete_gaussian(bits: _RandomBits, sigma2: Fraction) -> int:
    """One draw of the discrete Gaussian with parameter ``sigma^2`` (Canonne, Kamath & Steinke, Alg.
    3)."""
    a, b = sigma2.numerator, sigma2.denominator
    t = math.isqrt(a // b) + 1  # floor(sigma) + 1
    while True:
        y = _discrete_laplace(bits, 1, t)
        # gamma = (|y| - sigma^2 / t)^2 / (2 sigma^2) = (|y| b t - a)^2 / (2 a b t^2), in integers
        if _bernoulli_exp(bits, (abs(y) * b * t - a) ** 2, 2 * a * b * t * t):
            return y


def _draws(draw, size: int | None, rng) -> np.ndarray | int:
    """``size`` draws (at most :data:`MAX_DRAWS`) as int64, or one Python int; a draw beyond int64
    is a ValidationError (the scale is then too large for integer arrays)."""
    if size is not None:
        # exact draws cost 10-50 us each: draw more in batches
        size = integer("size", size, 0, MAX_DRAWS)
    bits = _RandomBits(as_generator(rng))
    if size is None:
        return draw(bits)
    values = []
    for _ in range(size):
        v = draw(bits)
        if abs(v) > _INT64_MAX:  # refused at the first such draw, not after all of them
            raise ValidationError(
                "scale", "is too large: a draw does not fit a 64-bit integer (use size=None)"
            )
        values.append(v)
    return np.array(values, dtype=np.int64)


def sample_discrete_laplace(
    scale: Rational, size: int | None = None, rng: RNGLike = None
) -> np.ndarray | int:
    """Exact draws of the discrete Laplace of (rational) ``scale``: ``Pr[x] = tanh(1/(2t))
    e^{-|x|/t}`` (Canonne, Kamath & Steinke 2020, Alg. 2).

    Parameters
    ----------
    scale : Fraction, int, str or float
        t > 0, rational (see :func:`as_fraction`).
    size : int, optional
        Number of draws (at most :data:`MAX_DRAWS`); ``None`` for one Python int.
    rng : Generator, int or None
        See :func:`~dpgames.privacy.rng.as_generator`.

    Returns
    -------
    int or numpy.ndarray of int64

    Raises
    ------
    ValidationError
        On a bad parameter, ``size`` or ``rng``, or a draw beyond int64 (use ``size=None``).
    """
    f = as_fraction("scale", scale)
    return _draws(lambda g: _discrete_laplace(g, f.denominator, f.numerator), size, rng)


def sample_discrete_gaussian(
    sigma_squared: Rational, size: int | None = None, rng: RNGLike = None
) -> np.ndarray | int:
    """Exact draws of the discrete Gaussian with (rational) parameter ``sigma^2``: ``Pr[x]``
    proportional to ``e^{-x^2/(2 sigma^2)}`` (Canonne, Kamath & Steinke 2020, Alg. 3).

    Parameters
    ----------
    sigma_squared : Fraction, int, str or float
        > 0, rational (see :func:`as_fraction`).
    size : int, optional
        Number of draws (at most :data:`MAX_DRAWS`); ``None`` for one Python int.
    rng : Generator, int or None
        See :func:`~dpgames.privacy.rng.as_generator`.

    Returns
    -------
    int or numpy.ndarray of int64

    Raises
    ------
    ValidationError
        On a bad parameter, ``size`` or ``rng``, or a draw beyond int64 (use ``size=None``).
    """
    s2 = as_fraction("sigma_squared", sigma_squared)
    return _draws(lambda g: _discrete_gaussian(g, s2), size, rng)


def discrete_laplace_pmf(x: ArrayLike, scale: Rational) -> np.ndarray:
    """``tanh(1/(2t)) e^{-|x|/t}`` (floats; the sampler itself is exact).

    Parameters
    ----------
    x : array_like
        Integers (as numbers).
    scale : Fraction, int, str or float

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationError
        On a bad scale or non-finite ``x``.
    """
    t = float(as_fraction("scale", scale))
    return math.tanh(1 / (2 * t)) * np.exp(-np.abs(finite_array("x", x)) / t)


def discrete_gaussian_pmf(x: ArrayLike, sigma_squared: Rational) -> np.ndarray:
    """``e^{-x^2/(2 sigma^2)} / Z`` with ``Z`` summed over ``|y| <= 40 sigma + 1`` (the rest is
    below ``e^{-800}``).

    Parameters
    ----------
    x : array_like
    sigma_squared : Fraction, int, str or float

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationError
        On a bad parameter, non-finite ``x``, or a normaliser too large for memory.
    """
    s2 = float(as_fraction("sigma_squared", sigma_squared))
    reach = int(40 * math.sqrt(s2)) + 1
    memory("sigma_squared", 2 * reach + 1, what=f"the normaliser sums {2 * reach + 1:.3g} terms")
    y = np.arange(-reach, reach + 1, dtype=float)
    z = np.exp(-(y**2) / (2 * s2)).sum()
    return np.exp(-(finite_array("x", x) ** 2) / (2 * s2)) / z


def _integer_values(values: ArrayLike) -> np.ndarray:
    v = np.asarray(values)
    if v.size > MAX_DRAWS:
        raise ValidationError(
            "values",
            f"has {v.size:,} entries; exact noise is drawn for at most {MAX_DRAWS:,} "
            "a call: release them in batches",
        )
    if not np.issubdtype(v.dtype, np.integer):
        raise ValidationError(
            "values", f"must be integers for a discrete mechanism, got dtype {v.dtype}"
        )
    if v.size and v.max() > _INT64_MAX:
        raise ValidationError("values", "must fit a 64-bit integer")
    return v.astype(np.int64)


def _add_noise(values: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """``values + noise`` in int64, refused (not wrapped around) where a sum leaves the int64
    range."""
    if (
        values.size
        and (np.abs(values.astype(float)) + np.abs(noise.astype(float)) >= 2.0**63).any()
    ):
        raise ValidationError("values", "plus noise would leave the 64-bit integer range")
    return values + noise


class DiscreteLaplaceMechanism:
    """eps-DP for integer queries of l1 sensitivity ``sensitivity``: add exact discrete Laplace
    noise of scale ``sensitivity / epsilon`` (``epsilon`` rational).

    Parameters
    ----------
    epsilon : Fraction, int, str or float
        > 0, rational (see :func:`as_fraction`).
    sensitivity : int, default 1

    Raises
    ------
    ValidationError
        On a bad epsilon or sensitivity.

    Examples
    --------
    >>> mech = DiscreteLaplaceMechanism("1/2")
    >>> mech.release(np.array([10, 20]), rng=0).tolist()
    [8, 20]
    >>> print(mech.guarantee)
    0.5-DP (replace one individual: the integer query moves by at most 1 in l1 norm)
    """

    def __init__(self, epsilon: Rational, sensitivity: int = 1):
        self.epsilon = as_fraction("epsilon", epsilon)
        self.sensitivity = positive_int("sensitivity", sensitivity, high=_INT64_MAX)
        self.scale = as_fraction("sensitivity / epsilon", self.sensitivity / self.epsilon)

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``epsilon``-DP (pure) for integer queries of l1 sensitivity ``sensitivity``."""
        relation = Neighbouring.REPLACE_ONE.described(
            f"the integer query moves by at most {self.sensitivity} in l1 norm"
        )
        return PrivacyGuarantee(float(self.epsilon), 0.0, relation)

    def release(self, values: ArrayLike, rng: RNGLike = None) -> np.ndarray:
        """``values`` plus independent exact discrete Laplace noise on every entry.

        Parameters
        ----------
        values : array_like of int
        rng : Generator, int or None

        Returns
        -------
        numpy.ndarray of int64

        Raises
        ------
        ValidationError
            On non-integer values, more than :data:`MAX_DRAWS` of them (release in batches), or a
            sum beyond the int64 range.
        """
        v = _integer_values(values)
        # an array: size is given
        draws = cast(np.ndarray, sample_discrete_laplace(self.scale, v.size, rng))
        return _add_noise(v, draws.reshape(v.shape))


class DiscreteGaussianMechanism:
    """``Delta^2 / (2 sigma^2)``-zCDP for integer queries of l2 sensitivity ``sensitivity``: add
    exact discrete Gaussian noise with parameter ``sigma_squared`` (rational; Canonne, Kamath &
    Steinke 2020, Thm 4).

    Parameters
    ----------
    sigma_squared : Fraction, int, str or float
        > 0, rational.
    sensitivity : int, default 1

    Raises
    ------
    ValidationError
        On a bad parameter, or rho beyond the float range.

    Examples
    --------
    >>> mech = DiscreteGaussianMechanism(4)
    >>> mech.rho
    0.125
    >>> mech.release(np.array([10, 20]), rng=0).tolist()
    [10, 21]
    """

    def __init__(self, sigma_squared: Rational, sensitivity: int = 1):
        self.sigma_squared = as_fraction("sigma_squared", sigma_squared)
        self.sensitivity = positive_int("sensitivity", sensitivity, high=_INT64_MAX)
        if not math.isfinite(self.rho):
            raise ValidationError(
                "sigma_squared", "is too small for this sensitivity: rho beyond the float range"
            )

    @property
    def rho(self) -> float:
        """``Delta^2 / (2 sigma^2)``."""
        try:
            return float(Fraction(self.sensitivity**2) / (2 * self.sigma_squared))
        except OverflowError:
            return math.inf

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``rho``-zCDP only (stated as ``epsilon = inf``: the discrete Gaussian is never pure DP;
        :meth:`PrivacyGuarantee.at_delta` converts it to (eps, delta))."""
        relation = Neighbouring.REPLACE_ONE.described(
            f"the integer query moves by at most {self.sensitivity} in l2 norm"
        )
        return PrivacyGuarantee.from_zcdp(self.rho, relation)

    def release(self, values: ArrayLike, rng: RNGLike = None) -> np.ndarray:
        """``values`` plus independent exact discrete Gaussian noise on every entry.

        Parameters
        ----------
        values : array_like of int
        rng : Generator, int or None

        Returns
        -------
        numpy.ndarray of int64

        Raises
        ------
        ValidationError
            On non-integer values, more than :data:`MAX_DRAWS` of them (release in batches), or a
            sum beyond the int64 range.
        """
        v = _integer_values(values)
        # an array: size is given
        draws = cast(np.ndarray, sample_discrete_gaussian(self.sigma_squared, v.size, rng))
        return _add_noise(v, draws.reshape(v.shape))
