"""Monte Carlo estimates: the mean of independent draws with its Student-t confidence interval.

Over ``k`` draws with mean ``m`` and sample standard deviation ``s`` the interval at confidence
``level`` is ``m +- t_{(1 + level) / 2, k - 1} * s / sqrt(k)``: exact coverage for normal draws,
asymptotically for any finite variance (central limit theorem).  The draws must be independent
(seeds from ``SeedSequence.spawn``, as :mod:`dpgames.sweep.grid` and the audits use).

**One rule for one draw.**  With ``k < 2`` the sample variance, hence the interval, is undefined:
the bounds are NaN and :attr:`MeanEstimate.defined` is False.  Never a zero-width interval, which
would claim a certainty that one draw cannot give.  A caller that publishes finite figures (a
scenario's ``Result``) leaves an undefined interval out instead of printing NaN, and says the
estimate has none.

Like :mod:`dpgames.validation`, this is a bottom-layer module (it imports nothing else of dpgames
but the checks), so every layer uses this one implementation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from dpgames.validation import ValidationError, integer, probability


@dataclass(frozen=True)
class MeanEstimate:
    """The mean of ``n`` draws with a two-sided confidence interval ``[low, high]``.

    Parameters
    ----------
    n : int
        Number of (finite) draws the estimate rests on.
    mean : float
        Their mean (NaN when ``n == 0``).
    low, high : float
        The interval's bounds; NaN when ``n < 2`` (the interval is undefined, see the module
        docstring).

    Examples
    --------
    >>> from dpgames.estimates import mean_ci
    >>> est = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    >>> est.n, est.mean, est.defined
    (5, 3.0, True)
    >>> round(est.low, 4), round(est.high, 4)
    (1.0368, 4.9632)
    >>> mean_ci([2.0]).defined  # one draw: an estimate without an interval
    False
    """

    n: int
    mean: float
    low: float
    high: float

    @property
    def defined(self) -> bool:
        """Whether the interval exists (at least two draws)."""
        return self.n >= 2


def t_interval(
    samples: ArrayLike, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means over axis 0 and their Student-t intervals, column by column.

    Parameters
    ----------
    samples : array_like, shape (k, ...)
        ``k`` independent draws of each quantity (draws along axis 0).
    level : float, default 0.95
        Confidence level, in ``(0, 1)``.

    Returns
    -------
    mean, low, high : numpy.ndarray, shape samples.shape[1:]
        The means and the interval bounds; the bounds are NaN when ``k < 2`` and everything is NaN
        when ``k == 0`` (see the module docstring's rule).

    Raises
    ------
    ValidationError
        If ``level`` is not a number in ``(0, 1)``, or ``samples`` is not an array of numbers with a
        first axis.

    Examples
    --------
    >>> import numpy as np
    >>> mean, low, high = t_interval(np.array([[1.0, 10.0], [3.0, 10.0]]))
    >>> mean.tolist(), high.tolist()[1]
    ([2.0, 10.0], 10.0)
    >>> t_interval([[1.0, 2.0]])[1].tolist()  # one draw: no interval
    [nan, nan]
    """
    level = probability("level", level)
    x = _floats("samples", samples)
    if x.ndim == 0:
        raise ValidationError("samples", "must have the draws along a first axis, got a scalar")
    k = x.shape[0]
    nan = np.full(x.shape[1:], math.nan)
    if k == 0:
        return nan, nan.copy(), nan.copy()
    # Work on x / 2^e, 2^e within a factor 2 of the column's largest |draw|: the same roundings (a
    # power of two commutes with them, so results are bit-identical to the plain formula), and no
    # overflow of the sums for draws near the float limit.
    scale = np.ldexp(1.0, np.frexp(np.abs(x).max(axis=0))[1] - 1)
    z = x / scale
    mean = z.mean(axis=0) * scale
    if k < 2:
        return mean, nan, nan.copy()
    with np.errstate(over="ignore"):
        # a half-width beyond the float range is infinite: that is its value
        half = t_critical(k, level) * z.std(axis=0, ddof=1) / math.sqrt(k) * scale
    return mean, mean - half, mean + half


def t_critical(k: int, level: float = 0.95) -> float:
    """The factor of the interval of :func:`t_interval`: ``t_{(1 + level) / 2, k - 1}``, so the
    half-width is ``t_critical(k, level) * s / sqrt(k)`` (for a caller that keeps only the draws'
    sums, not the draws).

    Parameters
    ----------
    k : int
        Number of draws, ``>= 2``.
    level : float, default 0.95
        Confidence level, in ``(0, 1)``.

    Returns
    -------
    float
        ``>= 0``; infinite when ``level`` is within rounding of 1 (the quantile overflows, as in
        :func:`t_interval`).

    Raises
    ------
    ValidationError
        If ``k`` is not an integer ``>= 2`` or ``level`` not a number in ``(0, 1)``.

    Examples
    --------
    >>> (
    ...     round(t_critical(5), 4),
    ...     round(t_critical(10**6), 4),
    ... )  # 2.7764 for 5 draws; the normal 1.96 at large k
    (2.7764, 1.96)
    """
    return float(stats.t.ppf(0.5 + probability("level", level) / 2, integer("k", k, low=2) - 1))


def simultaneous_t_critical(k: int, family: int, level: float = 0.95) -> float:
    """The Bonferroni factor for ``family`` intervals that hold *all at once* with probability
    ``level``: :func:`t_critical` at level ``1 - (1 - level) / family``.

    By the union bound (Bonferroni), if each of ``family`` intervals misses its mean with
    probability at most ``(1 - level) / family``, all of them cover together with probability at
    least ``level``, whatever the dependence between them (draws shared across the family, as common
    random numbers share them).

    Parameters
    ----------
    k : int
        Draws behind each interval, ``>= 2``.
    family : int
        Number of intervals that must cover together, ``>= 1``.
    level : float, default 0.95
        Simultaneous confidence level, in ``(0, 1)``.

    Returns
    -------
    float
        ``>= t_critical(k, level)`` (equal when ``family == 1``).

    Raises
    ------
    ValidationError
        If ``k`` is not an integer ``>= 2``, ``family`` not an integer ``>= 1`` or ``level`` not in
        ``(0, 1)``.

    Examples
    --------
    >>> round(simultaneous_t_critical(10**6, 1), 3), round(simultaneous_t_critical(10**6, 18), 3)
    (1.96, 2.991)
    """
    family = integer("family", family, low=1)
    return t_critical(k, 1.0 - (1.0 - probability("level", level)) / family)


def mean_ci(values: ArrayLike, level: float = 0.95) -> MeanEstimate:
    """The mean of the finite ``values`` with its Student-t interval (non-finite values are left
    out).

    Parameters
    ----------
    values : array_like, 1-d
        Independent draws; NaN and infinite entries (failed or undefined draws) are dropped.
    level : float, default 0.95
        Confidence level, in ``(0, 1)``.

    Returns
    -------
    MeanEstimate
        ``n`` counts the finite draws; ``low``/``high`` are NaN when ``n < 2``.

    Raises
    ------
    ValidationError
        If ``level`` is not a number in ``(0, 1)``, or ``values`` is not an array of numbers.

    Examples
    --------
    >>> est = mean_ci([4.0, float("nan"), 6.0])
    >>> est.n, est.mean
    (2, 5.0)
    """
    x = _floats("values", values).ravel()
    mean, low, high = t_interval(x[np.isfinite(x)], level)
    return MeanEstimate(int(np.isfinite(x).sum()), float(mean), float(low), float(high))


def _floats(name: str, values: ArrayLike) -> np.ndarray:
    """``values`` as a float array (NaN and inf kept), or a ValidationError naming ``name``:
    strings, ``None``, complex numbers, integers beyond the float range and ragged nestings are
    refused."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError, OverflowError):
        raw = np.asarray([None], dtype=object)
    if raw.dtype.kind not in "biuf":
        raise ValidationError(
            name,
            "must be an array of numbers within the float range (draws along the first "
            "axis; no strings, None or complex values)",
        )
    return raw.astype(float)
