"""Privacy-aware agents: a private data bit and a private cost for privacy.

Each agent ``i`` holds a bit ``b_i`` (the sensitive datum the analyst wants to count) and a cost
``c_i >= 0`` for privacy.  Two cost models:

* **Linear** (Ghosh & Roth, "Selling Privacy at Auction", EC 2011, arXiv:1011.1375): an agent whose
  bit is used in an eps-differentially private way bears cost ``c_i * eps``
  (:meth:`PrivacyPopulation.linear_cost`).
* **Outcome-dependent** (Chen, Chong, Kash, Moran & Vadhan, EC 2013; Nissim, Orlandi & Smorodinsky,
  EC 2012): after outcome ``o`` the agent's cost is at most ``v_i`` times the privacy loss of ``o``,
  ``|ln(Pr[o | b_i] / Pr[o | b_i'])|`` (:func:`outcome_privacy_cost`).  For the Laplace release of a
  count at privacy ``eps`` the expected loss has the closed form
  :func:`expected_laplace_privacy_loss` (``<= eps``).

Populations come from a :class:`PopulationLaw` and a seed, vectorised: bits i.i.d.
Bernoulli(``bit_rate``); costs either independent of the bit (one :class:`CostLaw`) or *correlated*
with it (one law for each bit value: the setting of Ghosh & Roth's impossibility, see
:mod:`dpgames.markets.impossibility`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    finite_array,
    finite_result,
    integer,
    memory,
    non_negative,
    positive,
    positive_int,
    probability,
)

__all__ = [
    "CostLaw",
    "DiscreteCosts",
    "ExponentialCosts",
    "MixtureCosts",
    "PopulationLaw",
    "PowerCosts",
    "PrivacyPopulation",
    "UniformCosts",
    "cost_law",
    "expected_laplace_privacy_loss",
    "outcome_privacy_cost",
    "privacy_population",
]


class CostLaw:
    """A distribution of privacy costs on ``[0, inf)``: ``sample(n, rng)`` and the CDF ``cdf(x)``.

    ``sample`` has the signature of the type distributions'
    (:meth:`dpgames.agents.TypeDistribution.sample`). A subclass implements ``_draw(n, generator)``;
    :meth:`sample` checks the arguments first."""

    def sample(self, n: int, rng: RNGLike = None) -> np.ndarray:
        """``n`` i.i.d. costs from the law.

        Parameters
        ----------
        n : int
            Number of draws, ``>= 0`` (refused above the memory limit, with the estimate).
        rng : int, numpy.random.Generator or None
            The random source, or a seed for one.

        Returns
        -------
        numpy.ndarray of float, shape (n,)

        Raises
        ------
        ValidationError
            ``n`` not an integer ``>= 0`` or too large; ``rng`` not a seed or a generator.
        """
        n = integer("n", n, low=0)
        memory("n", 2 * n, what=f"{n} costs")
        return self._draw(n, as_generator(rng))

    def _draw(
        self, size: int, rng: np.random.Generator
    ) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def cdf(self, x: ArrayLike) -> np.ndarray:  # pragma: no cover - interface
        """``Pr[c <= x]`` (vectorised over ``x``)."""
        raise NotImplementedError


@dataclass(frozen=True)
class UniformCosts(CostLaw):
    """Costs uniform on ``[low, high]``, ``0 <= low <= high``.

    Examples
    --------
    >>> UniformCosts(0.0, 2.0).cdf([1.0, 3.0])
    array([0.5, 1. ])
    """

    low: float = 0.0
    high: float = 1.0

    def __post_init__(self):
        low = non_negative("low", self.low)
        high = non_negative("high", self.high)
        if high < low:
            raise ValidationError("high", f"must be >= low = {low:g}, got {high:g}")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def _draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(self.low, self.high, size)

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """``Pr[c <= x]`` (vectorised over ``x``)."""
        x = finite_array("x", x, allow_inf=True)
        if self.high == self.low:
            return (x >= self.low).astype(float)
        # clip x first: then 0 <= x - low <= high - low, so the ratio cannot overflow (a huge x over
        # a tiny width) and is exactly 0 below low and exactly 1 from high on
        return (np.clip(x, self.low, self.high) - self.low) / (self.high - self.low)


@dataclass(frozen=True)
class ExponentialCosts(CostLaw):
    """Costs exponential with mean ``mean > 0``.

    Examples
    --------
    >>> float(ExponentialCosts(1.0).cdf(0.0))
    0.0
    """

    mean: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "mean", positive("mean", self.mean))

    def _draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.exponential(self.mean, size)

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """``Pr[c <= x]`` (vectorised over ``x``)."""
        x = finite_array("x", x, allow_inf=True)
        return np.where(x < 0, 0.0, -np.expm1(-np.maximum(x, 0.0) / self.mean))


class DiscreteCosts(CostLaw):
    """Costs on finitely many ``values >= 0`` with ``probabilities`` (non-negative, summing to 1
    within 1e-9).

    Examples
    --------
    >>> law = DiscreteCosts([1.0, 3.0], [0.25, 0.75])
    >>> law.cdf([0.5, 1.0, 2.0, 3.0])
    array([0.  , 0.25, 0.25, 1.  ])
    """

    def __init__(self, values: ArrayLike, probabilities: ArrayLike):
        v = finite_array("values", values, ndim=1)
        p = finite_array("probabilities", probabilities, ndim=1)
        if v.size == 0:
            raise ValidationError("values", "must hold at least one cost")
        if p.shape != v.shape:
            raise ValidationError(
                "probabilities", f"must have one entry per value ({v.size}), got {p.size}"
            )
        if (v < 0).any():
            raise ValidationError("values", f"must be costs >= 0, got {v[v < 0][0]:g}")
        if (p < 0).any():
            raise ValidationError("probabilities", f"must be >= 0, got {p[p < 0][0]:g}")
        if abs(p.sum() - 1.0) > 1e-9:
            raise ValidationError(
                "probabilities", f"must sum to 1 (a distribution), they sum to {p.sum():.12g}"
            )
        order = np.argsort(v, kind="stable")
        self.values, self.probabilities = v[order], p[order] / p.sum()
        self._cum = np.cumsum(self.probabilities)

    def __repr__(self) -> str:
        return f"DiscreteCosts({self.values.tolist()}, {self.probabilities.tolist()})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DiscreteCosts)
            and np.array_equal(self.values, other.values)
            and np.array_equal(self.probabilities, other.probabilities)
        )

    __hash__ = None  # type: ignore[assignment]

    def _draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        idx = np.searchsorted(self._cum, rng.random(size), side="right")
        return self.values[np.minimum(idx, self.values.size - 1)]

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """``Pr[c <= x]`` (vectorised over ``x``)."""
        x = finite_array("x", x, allow_inf=True)
        idx = np.searchsorted(self.values, x, side="right")
        return np.where(idx == 0, 0.0, self._cum[np.maximum(idx - 1, 0)])


@dataclass(frozen=True)
class PowerCosts(CostLaw):
    """Costs on ``[0, high]`` with CDF ``(x / high)^power``, ``power > 0`` (1: uniform; larger:
    dearer).

    Examples
    --------
    >>> float(PowerCosts(2.0).cdf(0.5))
    0.25
    """

    power: float = 1.0
    high: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "power", positive("power", self.power))
        object.__setattr__(self, "high", positive("high", self.high))

    def _draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return self.high * rng.random(size) ** (1.0 / self.power)

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """``Pr[c <= x]`` (vectorised over ``x``)."""
        return np.clip(finite_array("x", x, allow_inf=True) / self.high, 0.0, 1.0) ** self.power


class MixtureCosts(CostLaw):
    """With probability ``weights[j]`` a cost from ``laws[j]`` (weights non-negative, summing to 1
    within 1e-9).

    Examples
    --------
    >>> law = MixtureCosts([UniformCosts(0, 1), UniformCosts(1, 2)], [0.75, 0.25])
    >>> float(law.cdf(1.0))
    0.75
    """

    def __init__(self, laws: list, weights: ArrayLike):
        w = finite_array("weights", weights, ndim=1, low=0)
        if len(laws) == 0 or w.size != len(laws):
            raise ValidationError(
                "weights", f"must have one entry per law ({len(laws)}), got {w.size}"
            )
        if abs(w.sum() - 1.0) > 1e-9:
            raise ValidationError(
                "weights", f"must be >= 0 and sum to 1, they sum to {w.sum():.12g}"
            )
        self.laws = [cost_law(law, f"laws[{j}]") for j, law in enumerate(laws)]
        self.weights = w / w.sum()

    def __repr__(self) -> str:
        return f"MixtureCosts({self.laws!r}, {self.weights.tolist()})"

    def _draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        which = np.searchsorted(np.cumsum(self.weights), rng.random(size), side="right")
        which = np.minimum(which, len(self.laws) - 1)
        out = np.empty(size)
        for j, law in enumerate(self.laws):
            pick = which == j
            out[pick] = law._draw(int(pick.sum()), rng)
        return out

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """``Pr[c <= x]`` (vectorised over ``x``)."""
        return sum(w * law.cdf(x) for w, law in zip(self.weights, self.laws))


def cost_law(spec: Any, field: str = "costs") -> CostLaw:
    """A :class:`CostLaw` from itself or from a mapping (the form of a scenario file).

    Parameters
    ----------
    spec : CostLaw or mapping
        ``{"law": "uniform", "low": 0, "high": 1}``, ``{"law": "exponential", "mean": 1}`` or
        ``{"law": "discrete", "values": [...], "probabilities": [...]}``.
    field : str
        The name used in error messages.

    Returns
    -------
    CostLaw

    Raises
    ------
    ValidationError
        An unknown law, a missing or unknown key, or parameters that do not form a distribution,
        with ``field`` naming the key (e.g. ``"costs.probabilities"``).
    """
    if isinstance(spec, CostLaw):
        return spec
    if not isinstance(spec, dict):
        raise ValidationError(
            field, f"must be a cost law or a table with a 'law' key, got {spec!r}"
        )
    laws = {
        "uniform": (UniformCosts, ("low", "high")),
        "exponential": (ExponentialCosts, ("mean",)),
        "discrete": (DiscreteCosts, ("values", "probabilities")),
    }
    name = spec.get("law")
    if name not in laws:
        raise ValidationError(
            f"{field}.law", f"must be one of {', '.join(map(repr, laws))}, got {name!r}"
        )
    cls, keys = laws[name]
    unknown = sorted(set(spec) - set(keys) - {"law"})
    if unknown:
        raise ValidationError(
            f"{field}.{unknown[0]}",
            f"is not a parameter of the {name} law (allowed: {', '.join(keys)})",
        )
    missing = [k for k in keys if k not in spec and name == "discrete"]
    if missing:
        raise ValidationError(f"{field}.{missing[0]}", "is required for the discrete law")
    try:
        return cls(**{k: spec[k] for k in keys if k in spec})
    except ValidationError as e:
        raise ValidationError(
            f"{field}.{e.field}",
            e.reason if e.reason.startswith(("must", "is")) else ": " + e.reason,
        ) from None


@dataclass(frozen=True)
class PopulationLaw:
    """The law of one agent's (bit, cost): ``Pr[b = 1] = bit_rate``; the cost from ``costs``
    (independent of the bit) or, when ``costs_if_one`` is given, from ``costs`` if ``b = 0`` and
    ``costs_if_one`` if ``b = 1`` (costs correlated with the data).

    Examples
    --------
    >>> law = PopulationLaw(
    ...     0.3, DiscreteCosts([1, 2], [0.5, 0.5]), DiscreteCosts([2, 3], [0.5, 0.5])
    ... )
    >>> law.posterior_one([1.0, 2.0, 3.0]).round(6).tolist()
    [0.0, 0.3, 1.0]
    """

    bit_rate: float
    costs: CostLaw
    costs_if_one: CostLaw | None = None

    def __post_init__(self):
        object.__setattr__(
            self,
            "bit_rate",
            probability("bit_rate", self.bit_rate, allow_zero=True, allow_one=True),
        )
        object.__setattr__(self, "costs", cost_law(self.costs, "costs"))
        if self.costs_if_one is not None:
            object.__setattr__(self, "costs_if_one", cost_law(self.costs_if_one, "costs_if_one"))

    @property
    def correlated(self) -> bool:
        """Whether the costs depend on the bit (a law per bit value)."""
        return self.costs_if_one is not None

    def law_given(self, bit: int) -> CostLaw:
        """The cost law of an agent whose bit is ``bit`` (0 or 1)."""
        bit = integer("bit", bit, low=0, high=1)
        return self.costs_if_one if (bit == 1 and self.costs_if_one is not None) else self.costs

    def posterior_one(self, costs: ArrayLike) -> np.ndarray:
        """``Pr[b = 1 | c]`` for discrete cost laws (exact Bayes on point masses); for independent
        costs it is ``bit_rate``.  Continuous correlated laws: Bayes on densities is not implemented
        (ValidationError)."""
        c = np.asarray(costs, dtype=float)
        if not self.correlated:
            return np.full(c.shape, self.bit_rate)
        laws = (self.costs, self.costs_if_one)
        if not all(isinstance(law, DiscreteCosts) for law in laws):
            raise ValidationError(
                "costs", "posterior_one needs discrete cost laws for correlated costs"
            )
        discrete = cast(tuple[DiscreteCosts, DiscreteCosts], laws)  # checked just above
        mass = [
            np.where(
                np.isin(c, law.values),
                law.probabilities[np.searchsorted(law.values, c).clip(0, law.values.size - 1)],
                0.0,
            )
            for law in discrete
        ]
        one, zero = self.bit_rate * mass[1], (1 - self.bit_rate) * mass[0]
        total = one + zero
        if (total == 0).any():
            raise ValidationError("costs", "holds a cost that has probability 0 under this law")
        return one / total


@dataclass(frozen=True)
class PrivacyPopulation:
    """``n`` agents' private bits (0/1, int8) and privacy costs (``>= 0``), aligned by agent.

    Examples
    --------
    >>> pop = privacy_population(5, PopulationLaw(0.5, UniformCosts(0, 1)), rng=1)
    >>> pop.n, pop.bits.dtype.name, bool((pop.costs >= 0).all())
    (5, 'int8', True)
    >>> pop.linear_cost(0.5).shape
    (5,)
    """

    bits: np.ndarray
    costs: np.ndarray

    def __post_init__(self):
        b = finite_array("bits", self.bits, ndim=1, allow_bool=True)
        if not np.isin(b, (0.0, 1.0)).all():
            raise ValidationError("bits", "must be 0 or 1")
        c = check_costs(self.costs)
        if c.size != b.size:
            raise ValidationError(
                "costs", f"must have one entry per agent ({b.size}), got {c.size}"
            )
        object.__setattr__(self, "bits", b.astype(np.int8))
        object.__setattr__(self, "costs", c)

    @property
    def n(self) -> int:
        """The number of agents."""
        return int(self.bits.size)

    @property
    def count(self) -> int:
        """The statistic the analyst wants: ``s = sum_i b_i``."""
        return int(self.bits.sum(dtype=np.int64))

    def linear_cost(self, epsilon: ArrayLike) -> np.ndarray:
        """Ghosh-Roth's linear model: each agent's cost ``c_i * eps_i`` (``epsilon`` a scalar or per
        agent)."""
        eps = finite_array("epsilon", epsilon, low=0)
        return self.costs * eps


def check_costs(costs: ArrayLike, field: str = "costs") -> np.ndarray:
    """``costs`` as a 1-d float array of finite numbers ``>= 0`` (NaN, inf and negatives
    refused)."""
    c = finite_array(field, costs, ndim=1)
    if c.size == 0:
        raise ValidationError(field, "must hold at least one agent")
    if (c < 0).any():
        i = int(np.argmax(c < 0))
        raise ValidationError(field, f"must be >= 0: agent {i} has cost {c[i]:g}")
    return c


def privacy_population(n: int, law: PopulationLaw, *, rng: RNGLike = None) -> PrivacyPopulation:
    """Draw ``n`` agents' bits and costs from ``law`` (vectorised; same seed, same population).

    Parameters
    ----------
    n : int
        Number of agents, ``>= 1`` (refused above 2 GB of memory, with the estimate).
    law : PopulationLaw
        Bits i.i.d. Bernoulli(``bit_rate``); costs independent of the bit or correlated with it.
    rng : int, Generator or None
        The random source, or a seed for one.

    Returns
    -------
    PrivacyPopulation

    Raises
    ------
    ValidationError
        ``n`` not a positive integer or too large; ``law`` not a PopulationLaw.
    """
    n = positive_int("n", n)
    memory("n", 3 * n, what=f"{n} agents")
    if not isinstance(law, PopulationLaw):
        raise ValidationError("law", f"must be a PopulationLaw, got {law!r}")
    rng = as_generator(rng)
    bits = (rng.random(n) < law.bit_rate).astype(np.int8)
    costs = law.costs._draw(n, rng)
    if law.correlated:
        ones = bits == 1
        # set when correlated
        costs[ones] = cast(CostLaw, law.costs_if_one)._draw(int(ones.sum()), rng)
    return PrivacyPopulation(bits, costs)


def outcome_privacy_cost(
    value: ArrayLike, log_prob: ArrayLike, log_prob_other: ArrayLike
) -> np.ndarray:
    """The outcome-dependent model's bound: ``v * |ln Pr[o | own datum] - ln Pr[o | other datum]|``.

    Chen et al. (EC 2013) assume an agent's privacy cost for outcome ``o`` is at most ``v_i`` times
    this privacy loss (maximised over her alternative data); arguments broadcast.

    Parameters
    ----------
    value : array_like
        Privacy valuations ``v_i >= 0``.
    log_prob, log_prob_other : array_like
        Log-probabilities (or log-densities) of the outcome under the agent's datum and the
        alternative.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationError
        Negative or non-finite valuations or log-probabilities, shapes that do not broadcast, or a
        cost beyond the float range.
    """
    v = finite_array("value", value, low=0)
    a, b = finite_array("log_prob", log_prob), finite_array("log_prob_other", log_prob_other)
    try:
        np.broadcast_shapes(v.shape, a.shape, b.shape)
    except ValueError:
        raise ValidationError(
            "log_prob",
            f"value, log_prob and log_prob_other must have matching shapes, got "
            f"{v.shape}, {a.shape} and {b.shape}",
        ) from None
    with np.errstate(over="ignore", invalid="ignore"):
        cost = v * np.abs(a - b)
    return finite_result("outcome_privacy_cost", cost, "a cost beyond the float range")


def expected_laplace_privacy_loss(epsilon: float) -> float:
    """``E|L(Y)|`` for the Laplace release ``Y = s + Lap(1/eps)`` of a count and one agent's bit
    flip.

    The loss at ``y`` is ``eps (|y - s - 1| - |y - s|)`` (or its mirror), ``eps`` in absolute value
    outside ``(s, s + 1)`` and ``eps |1 - 2t|`` at ``y = s + t`` inside, so ``E|L| = eps Pr[Y
    outside] + eps^2/2 * int_0^1 |1 - 2t| e^{-eps t} dt`` in closed form; ``<= eps``.

    Parameters
    ----------
    epsilon : float
        ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        ``epsilon`` not a finite number ``> 0``.

    Examples
    --------
    >>> 0 < expected_laplace_privacy_loss(1.0) < 1.0
    True
    """
    e = positive("epsilon", epsilon)
    outside = 0.5 + 0.5 * math.exp(-e)
    return e * outside + e / 2 * _scaled_inner_integral(e)  # (e/2) (e int): no e^2 to overflow


def _scaled_inner_integral(e: float) -> float:
    """``e int_0^1 |1 - 2t| e^{-e t} dt``: its Taylor series in ``e`` below 1 (no cancellation), the
    closed form from antiderivatives (each multiplied by ``e``, so finite for every float ``e``)
    above."""
    if e < 1.0:
        total, term = 0.0, 1.0
        for i in range(40):
            m_i = (2 / (i + 2) - 1 / (i + 1)) + 2 * (
                0.5 ** (i + 1) / (i + 1) - 2 * 0.5 ** (i + 2) / (i + 2)
            )
            total += term * m_i
            term *= -e / (i + 1)
        return e * total

    def k(a: float, b: float) -> float:  # e int_a^b e^{-e t} dt
        return math.exp(-e * a) - math.exp(-e * b)

    def j(a: float, b: float) -> float:  # e int_a^b t e^{-e t} dt
        def f(t: float) -> float:
            return -(t + 1 / e) * math.exp(-e * t)

        return f(b) - f(a)

    return (k(0, 0.5) - 2 * j(0, 0.5)) + (2 * j(0.5, 1) - k(0.5, 1))
