"""Conversions between privacy definitions: pure DP, zCDP, Renyi DP and (eps, delta)-DP.

* eps-DP implies (eps^2 / 2)-zCDP (Bun & Steinke 2016, Prop. 1.4), and its Renyi divergence of every
  order alpha is at most ``min(eps, alpha eps^2 / 2)``.
* rho-zCDP implies (eps, delta)-DP with ``eps = rho + 2 sqrt(rho ln(1/delta))`` (Bun & Steinke,
  Prop. 1.3).  rho-zCDP is RDP with curve ``alpha -> alpha rho``.
* (alpha, tau)-RDP implies (eps, delta)-DP with ``eps = tau + ln(1/delta) / (alpha - 1)`` (Mironov
  2017, Prop. 3) and with the tighter ``eps = tau + ln((alpha-1)/alpha) - (ln delta + ln alpha) /
  (alpha - 1)`` (Canonne, Kamath & Steinke 2020, Prop. 12; Balle et al. 2020, Thm. 21).  Every order
  alpha gives a valid bound; we take the best over a fixed grid (:data:`ALPHAS`), so the result is
  valid and, on the grid's resolution, tight.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from dpgames.validation import ValidationError, finite_array, non_negative, probability, real

ALPHAS: np.ndarray = 1.0 + np.geomspace(1e-4, 1e6, 1200)
"""Grid of Renyi orders over which conversions to (eps, delta) are optimised."""

_KINDS = ("zcdp", "pure", "laplace", "table")


def _float_text(x: float) -> float | str:
    """A float for JSON: ``inf`` as the text ``"inf"`` (strict JSON has no infinity)."""
    return "inf" if x == math.inf else x


def _read_float(name: str, x: Any) -> float:
    return math.inf if x == "inf" else non_negative(name, x, allow_inf=True)


@dataclass(frozen=True, repr=False)
class RDPCurve:
    """A Renyi-DP curve as tagged data: orders ``alpha > 1`` -> bounds on the Renyi divergence of
    order ``alpha`` between the output laws on neighbouring inputs.  Curves compare (``==``), print
    (their ``repr`` rebuilds them) and serialise (:meth:`to_dict` / :meth:`from_dict`); calling one
    evaluates it.

    Kinds (build them with the class methods):

    * :meth:`zcdp` ``(rho)``: ``alpha rho`` (the definition of rho-zCDP; Bun & Steinke 2016; a
      Gaussian mechanism with ``Delta / sigma = mu`` is ``mu^2 / 2``-zCDP, Prop. 1.6);
    * :meth:`pure` ``(eps)``: ``min(eps, alpha eps^2 / 2)``, implied by eps-DP (Bun & Steinke, Prop.
      1.4);
    * :meth:`laplace` ``(eps)``: the Laplace mechanism with ``Delta / b = eps`` (Mironov 2017, Prop.
      6): ``1/(alpha-1) ln( alpha/(2 alpha - 1) e^{(alpha-1) eps} + (alpha-1)/(2 alpha - 1)
      e^{-alpha eps} )``;
    * :meth:`table` ``(pairs)``: bounds at finitely many orders; at any other order the smallest
      bound at an order above it (the Renyi divergence does not decrease with the order: van Erven &
      Harremoes 2014, Thm 3), ``inf`` beyond the largest.

    Examples
    --------
    >>> curve = RDPCurve.laplace(1.0)
    >>> curve
    RDPCurve.laplace(1.0)
    >>> RDPCurve.from_dict(curve.to_dict()) == curve
    True
    >>> [
    ...     round(float(v), 4)
    ...     for v in RDPCurve.table([(2.0, 0.1), (4.0, 0.3)])(np.array([1.5, 3.0, 5.0]))
    ... ]
    [0.1, 0.3, inf]
    """

    kind: str
    parameter: float | None = None
    pairs: tuple[tuple[float, float], ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValidationError("rdp", f"kind must be one of {_KINDS}, got {self.kind!r}")
        if self.kind == "table":
            if self.parameter is not None:
                raise ValidationError("rdp", "a table has no parameter")
            object.__setattr__(self, "pairs", _table(self.pairs))
        else:
            if self.pairs:
                raise ValidationError("rdp", f"a {self.kind} curve has no table")
            object.__setattr__(
                self, "parameter", non_negative(f"{self.kind} parameter", self.parameter)
            )

    @classmethod
    def zcdp(cls, rho: float) -> RDPCurve:
        """``alpha rho``: the curve of rho-zCDP.

        Parameters
        ----------
        rho : float
            Finite, ``>= 0``.

        Returns
        -------
        RDPCurve

        Raises
        ------
        ValidationError
            If ``rho`` is negative, infinite or not a number.
        """
        return cls("zcdp", rho)

    @classmethod
    def pure(cls, epsilon: float) -> RDPCurve:
        """``min(eps, alpha eps^2 / 2)``: the curve implied by eps-DP.

        Parameters
        ----------
        epsilon : float
            Finite, ``>= 0``.

        Returns
        -------
        RDPCurve

        Raises
        ------
        ValidationError
            If ``epsilon`` is negative, infinite or not a number.
        """
        return cls("pure", epsilon)

    @classmethod
    def laplace(cls, epsilon: float) -> RDPCurve:
        """The Laplace mechanism's exact curve at ``Delta / b = eps`` (Mironov 2017, Prop. 6).

        Parameters
        ----------
        epsilon : float
            Finite, ``>= 0``.

        Returns
        -------
        RDPCurve

        Raises
        ------
        ValidationError
            If ``epsilon`` is negative, infinite or not a number.
        """
        return cls("laplace", epsilon)

    @classmethod
    def table(cls, pairs: Any) -> RDPCurve:
        """Bounds ``[(alpha, value), ...]`` at finitely many orders.

        Parameters
        ----------
        pairs : sequence of (float, float)
            Distinct orders ``alpha > 1`` (finite), values ``>= 0`` (``inf`` allowed); sorted here.

        Returns
        -------
        RDPCurve

        Raises
        ------
        ValidationError
            On an empty table, an order ``<= 1`` or repeated, a negative value, or items that are
            not pairs.
        """
        return cls("table", None, pairs)

    def __call__(self, alphas: np.ndarray) -> np.ndarray:
        """The bounds at the orders ``alphas`` (an array of numbers > 1; a ValidationError
        otherwise)."""
        a = ALPHAS if alphas is ALPHAS else finite_array("alphas", alphas)
        if a is not ALPHAS and not (a > 1).all():
            raise ValidationError("alphas", "must be Renyi orders > 1")
        x = cast(float, self.parameter)  # None only for a "table", which does not read it
        if self.kind == "zcdp":
            return a * x
        if self.kind == "pure":
            with np.errstate(over="ignore"):
                # x^2/2 is inf beyond 1.3e154: the curve is then x
                return np.minimum(x, a * (x * x / 2))
        if self.kind == "laplace":
            log_terms = np.logaddexp(
                np.log(a / (2 * a - 1)) + (a - 1) * x, np.log((a - 1) / (2 * a - 1)) - a * x
            )
            return np.minimum(log_terms / (a - 1), x)
        orders = np.array([p[0] for p in self.pairs])
        # min over orders >= alpha
        above = np.minimum.accumulate(np.array([p[1] for p in self.pairs])[::-1])[::-1]
        i = np.searchsorted(orders, a, side="left")
        return np.where(i < orders.size, above[np.minimum(i, orders.size - 1)], math.inf)

    def __repr__(self) -> str:
        if self.kind == "table":
            return f"RDPCurve.table({[tuple(p) for p in self.pairs]!r})"
        return f"RDPCurve.{self.kind}({self.parameter!r})"

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-safe, ``inf`` as ``"inf"``); :meth:`from_dict` inverts it.

        Returns
        -------
        dict
            ``{"kind", "parameter"}`` or, for a table, ``{"kind": "table", "pairs": [[alpha, value],
            ...]}``.
        """
        if self.kind == "table":
            return {"kind": "table", "pairs": [[a, _float_text(v)] for a, v in self.pairs]}
        return {"kind": self.kind, "parameter": self.parameter}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RDPCurve:
        """The curve :meth:`to_dict` wrote.

        Parameters
        ----------
        data : dict

        Returns
        -------
        RDPCurve

        Raises
        ------
        ValidationError
            On anything else (unknown kind, bad parameter or table).
        """
        if not isinstance(data, dict) or data.get("kind") not in _KINDS:
            raise ValidationError(
                "rdp", f"must be a dict with a kind in {_KINDS}, got {data!r:.80}"
            )
        if data["kind"] == "table":
            pairs = data.get("pairs")
            pair = (list, tuple)
            if not isinstance(pairs, pair) or not all(
                isinstance(p, pair) and len(p) == 2 for p in pairs
            ):
                raise ValidationError("rdp", "a table needs pairs [[alpha, value], ...]")
            return cls.table([(p[0], _read_float("rdp value", p[1])) for p in pairs])
        return cls(data["kind"], data.get("parameter"))


def _table(pairs: Any) -> tuple[tuple[float, float], ...]:
    """Validated (alpha, value) pairs, sorted by order: alpha finite > 1 and distinct, value >= 0 or
    inf."""
    try:
        items = [tuple(p) for p in pairs]
    except TypeError:
        raise ValidationError("rdp", "a table must be a sequence of (alpha, value) pairs") from None
    if not items or any(len(p) != 2 for p in items):
        raise ValidationError("rdp", "a table must be a non-empty sequence of (alpha, value) pairs")
    out = sorted(
        (real("rdp order alpha", a), non_negative("rdp value", v, allow_inf=True)) for a, v in items
    )
    if out[0][0] <= 1 or len({a for a, _ in out}) != len(out):
        raise ValidationError("rdp", "table orders alpha must be distinct numbers > 1")
    return tuple(out)


def zcdp_to_dp_bun_steinke(rho: float, delta: float) -> float:
    """Bun & Steinke (2016) Prop. 1.3: rho-zCDP gives (rho + 2 sqrt(rho ln(1/delta)), delta)-DP.

    Parameters
    ----------
    rho : float
        ``>= 0``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        If ``delta`` is not in ``(0, 1)``.
    """
    delta = probability("delta", delta)
    return rho + 2 * math.sqrt(rho * -math.log(delta))


def rdp_values_to_dp(values: np.ndarray, delta: float, alphas: np.ndarray = ALPHAS) -> float:
    """The smallest eps over the grid such that RDP values ``values`` (at ``alphas``) give (eps,
    delta)-DP.

    Uses the better of Mironov's and Canonne-Kamath-Steinke's conversions at every order.

    Parameters
    ----------
    values : array_like
        One Renyi divergence bound per order (``inf`` allowed).
    delta : float
        In ``(0, 1)``.
    alphas : array_like, default :data:`ALPHAS`
        Orders ``> 1``.

    Returns
    -------
    float
        ``>= 0``; ``inf`` if no order gives a bound.

    Raises
    ------
    ValidationError
        On a bad ``delta``, orders ``<= 1``, or values that are not one number per order.
    """
    delta = probability("delta", delta)
    if alphas is not ALPHAS:
        alphas = finite_array("alphas", alphas, ndim=1)
        if alphas.size == 0 or not (alphas > 1).all():
            raise ValidationError("alphas", "must be a non-empty list of Renyi orders > 1")
    try:
        tau = np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValidationError("values", "must be numbers (RDP values, one per order)") from None
    if tau.shape != alphas.shape:
        raise ValidationError(
            "values", f"must hold one RDP value per order ({alphas.size}), got shape {tau.shape}"
        )
    log_delta = math.log(delta)
    with np.errstate(invalid="ignore", over="ignore"):
        mironov = tau - log_delta / (alphas - 1)
        cks = tau + np.log1p(-1 / alphas) - (log_delta + np.log(alphas)) / (alphas - 1)
        eps = np.fmin(mironov, cks)
    eps = eps[~np.isnan(eps)]
    return max(float(eps.min()), 0.0) if eps.size else math.inf


def rdp_to_dp(curve: RDPCurve, delta: float, alphas: np.ndarray = ALPHAS) -> float:
    """(eps, delta)-DP from an RDP curve, optimised over the orders ``alphas``.

    Parameters
    ----------
    curve : RDPCurve or callable
        Orders (array) -> Renyi divergence bounds (array).
    delta : float
        In ``(0, 1)``.
    alphas : array_like, default :data:`ALPHAS`

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        If ``curve`` is not callable, or as :func:`rdp_values_to_dp`.
    """
    if not callable(curve):
        raise ValidationError("curve", "must be a callable RDP curve (orders -> divergence bounds)")
    if alphas is not ALPHAS:
        alphas = finite_array("alphas", alphas, ndim=1)
        if alphas.size == 0 or not (alphas > 1).all():
            raise ValidationError("alphas", "must be a non-empty list of Renyi orders > 1")
    return rdp_values_to_dp(curve(alphas), delta, alphas)


def zcdp_to_dp(rho: float, delta: float) -> float:
    """The smallest eps we can certify for rho-zCDP at ``delta``: the best of Bun-Steinke's closed
    form and the RDP conversions over the grid of orders.

    Parameters
    ----------
    rho : float
        Finite, ``>= 0``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        On a bad ``rho`` or ``delta``, or a result beyond the float range (rho near 1e308).
    """
    rho = non_negative("rho", rho)
    if rho == 0:
        return 0.0
    with np.errstate(over="ignore"):
        eps = min(zcdp_to_dp_bun_steinke(rho, delta), rdp_values_to_dp(ALPHAS * rho, delta))
    if not math.isfinite(eps):
        raise ValidationError("rho", f"{rho:g}-zCDP converts to an eps beyond the float range")
    return eps
