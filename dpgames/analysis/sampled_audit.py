"""Audits of a :class:`~dpgames.mechanisms.custom.CustomMechanism` under uncertainty: a prior, or a
simulator.

* :func:`bayesian_audit`: Bayesian (interim) incentive compatibility.  Each agent's type is drawn
  independently from a prior over ``types`` (one for all agents, or one per agent).  The interim
  gain of agent ``i`` with true type ``t`` reporting ``x`` is ``E_{r_-i ~ prior}[U_i(t; x, r_-i) -
  U_i(t; t, r_-i)]``. It is exact (a weighted sum over the others' profiles: product weights, or
  multinomial weights over multisets when the mechanism is anonymous and the prior common) when
  there are at most :data:`~dpgames.analysis.custom_audit.PROFILE_LIMIT` laws to compute; above, it
  is a Monte Carlo mean over ``samples`` draws of the others' reports (the same draws for every true
  type and lie), each gain with a 95% Student-t confidence interval
  (:func:`~dpgames.estimates.t_critical`, as :func:`~dpgames.estimates.mean_ci`); the result says
  which (``exact``).
* :func:`sampled_audit`: a sampling-only rule ``rule(reports, rng)`` (a simulator with no exact
  law). ``samples`` draws per (agent, lie) with common random numbers: draw ``s`` of the truthful
  profile and of every deviation uses the same seed, so the gain's variance is that of a difference
  of coupled draws. Each gain gets a 95% Student-t confidence interval
  (:func:`~dpgames.estimates.t_interval`: mean +- t_{0.975, samples - 1} sd / sqrt(samples), 1.96 sd
  / sqrt(samples) for many samples).

**Simultaneous intervals.**  A Monte Carlo audit estimates K gains at once (every audited agent x
lie, or agent x true type x lie), and a verdict or a "largest gain" reads all of them: K intervals
at 95% each cover all together far less often (with K = 18 independent ones, 0.95^18 = 40%), and the
largest estimate is biased upward (the winner's curse).  So ``joint_half_width`` widens each
interval by Bonferroni's union bound to level ``1 - 0.05 / K``
(:func:`~dpgames.estimates.simultaneous_t_critical`): all K cover together with probability >= 95%
(asymptotically, as the t interval), whatever the dependence between the lies' draws (common random
numbers make them dependent).  On that event every true gain is at least its lower bound, so
``max_gain`` (the largest lower bound, 0 if none is positive) is a 95% *lower confidence bound* on
the true largest gain and ``max_gain_interval`` a 95% interval for it; the verdict "no lie gains
more than ``tol`` at 95% confidence" fails only when some simultaneous lower bound exceeds ``tol``
(the first step of Holm's procedure, so its false-alarm rate is at most 5% over the whole family).
:func:`samples_for_power` plans the draws that detect a given gain with a given power.

Random draws come from ``rng`` (default 0): the same seed gives the same audit.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from scipy import stats
from scipy.special import gammaln

from dpgames.analysis.lies import Lies
from dpgames.analysis.limits import BLOCK, PROFILE_LIMIT, WORK_LIMIT, check_calls
from dpgames.analysis.lines import Lines
from dpgames.analysis.verdicts import Verdict, best_and_margin
from dpgames.display import tuple_text
from dpgames.estimates import simultaneous_t_critical, t_critical, t_interval
from dpgames.mechanisms.custom import SUM_TOLERANCE, CustomMechanism
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    integer,
    is_hashable,
    non_negative,
    probability,
    real,
)

#: Monte Carlo draws by default.
SAMPLES = 2_000


#: Confidence level of the Monte Carlo audits' intervals (each one, and the simultaneous family).
LEVEL = 0.95
#: Largest number of draws :func:`samples_for_power` plans.
MAX_PLANNED = 2**50


def _interval(mean: float, half: float | None) -> tuple[float, float] | None:
    return None if half is None else (mean - half, mean + half)


def samples_for_power(
    gain: float,
    sd: float,
    *,
    pairs: int = 1,
    power: float = 0.8,
    tol: float = 0.0,
    level: float = LEVEL,
) -> int:
    """Draws per (agent, lie) for the Monte Carlo audit to flag a lie that gains ``gain`` with
    probability ``power``: the least ``N >= 2`` with ``sqrt(N) (gain - tol) / sd >= c_N + z_power``.

    The audit flags a lie when its simultaneous lower bound ``mean - c_N sd / sqrt(N)`` exceeds
    ``tol``, with ``c_N`` = :func:`~dpgames.estimates.simultaneous_t_critical` ``(N, pairs, level)``
    (Bonferroni over the ``pairs`` gains estimated together).  The mean of ``N`` draws is about
    normal with sd ``sd / sqrt(N)`` (central limit theorem), so the flag's probability is about
    ``Phi(sqrt(N) (gain - tol) / sd - c_N)``; this is at least ``power`` from the returned ``N`` on
    (the usual one-sided power calculation, e.g. Chow, Shao & Wang, *Sample Size Calculations in
    Clinical Research*, 2008, section 3.1, with a Bonferroni level).  About ``((1.96 + 0.84) sd /
    gain)^2`` for one pair at 95% and power 0.8.

    Parameters
    ----------
    gain : float
        The gain to detect, ``> tol``.
    sd : float
        Standard deviation of one coupled draw of that lie's gain, ``>= 0`` (a pilot audit gives it:
        :meth:`SampledAudit.samples_for`).
    pairs : int, default 1
        Gains estimated together (the audit's agents x lies), ``>= 1``.
    power : float, default 0.8
        Probability of flagging the lie, in ``(0, 1)``.
    tol : float, default 0.0
        The verdict's tolerance, ``>= 0``.
    level : float, default 0.95
        Simultaneous confidence level, in ``(0, 1)``.

    Returns
    -------
    int
        The draws per (agent, lie), ``>= 2``.

    Raises
    ------
    ValidationError
        On a non-finite or out-of-range argument, or ``gain <= tol``.

    Examples
    --------
    >>> samples_for_power(0.1, 0.3), samples_for_power(0.1, 0.3, pairs=18)
    (73, 137)
    """
    gain, sd, tol = real("gain", gain), non_negative("sd", sd), non_negative("tol", tol)
    pairs = integer("pairs", pairs, low=1)
    power, level = probability("power", power), probability("level", level)
    if not gain > tol:
        raise ValidationError("gain", f"must exceed tol ({tol:g}) to be detected, got {gain:g}")
    z = float(stats.norm.ppf(power))

    def enough(k: int) -> bool:
        return math.sqrt(k) * (gain - tol) >= (simultaneous_t_critical(k, pairs, level) + z) * sd

    high = 2
    while not enough(high):  # the condition is monotone in N: double, then bisect
        high *= 2
        if high > MAX_PLANNED:
            raise ValidationError(
                "gain",
                f"of {gain:g} against sd {sd:g} needs more than {MAX_PLANNED:.3g} draws: "
                "out of reach of a Monte Carlo audit",
            )
    low = max(2, high // 2)
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid + 1, high)
    return low


class MonteCarloGains:
    """``max_gain``, ``margin`` and the simultaneous intervals of an audit whose gains may be Monte
    Carlo means (see the module docstring): ``joint_half_width`` is ``None`` when the gains are
    exact."""

    gains: np.ndarray

    def _masked(self, values: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # each audit masks its truthful entries

    def _pointwise(self) -> tuple[np.ndarray, int] | None:
        raise NotImplementedError  # each audit's 95% half-widths and draws per gain (None: exact)

    @property
    def joint_half_width(self) -> np.ndarray | None:
        """Half-widths of the intervals that cover every tried lie's gain at once with probability
        >= 95% (Bonferroni over the tried lies); ``None`` when the gains are exact."""
        pointwise = self._pointwise()
        if pointwise is None:
            return None
        half, draws = pointwise
        family = max(1, int(np.isfinite(self._masked(self.gains)).sum()))
        return half * (simultaneous_t_critical(draws, family, LEVEL) / t_critical(draws, LEVEL))

    @property
    def intervals(self) -> str:
        """How the intervals were made, in words: exact (none), or Bonferroni over the tried lies'
        gains."""
        if self._pointwise() is None:
            return "exact: no interval"
        family = max(1, int(np.isfinite(self._masked(self.gains)).sum()))
        return (
            f"simultaneous 95% Student-t intervals over {family} gains, Bonferroni (each at level "
            f"1 - 0.05/{family})"
        )

    def _best(self, side: int) -> float:
        """The largest gain (exact), or the largest simultaneous lower (``side = -1``) or upper
        bound."""
        joint = self.joint_half_width
        return float(self._masked(self.gains if joint is None else self.gains + side * joint).max())

    @property
    def max_gain(self) -> float:
        """Exact: the best lie's gain if positive, else 0.  Monte Carlo: the largest simultaneous
        95% lower bound if positive, else 0, a 95% lower confidence bound on the true largest gain
        (not the largest estimate, which is biased upward)."""
        return best_and_margin(self._best(-1))[0]

    @property
    def margin(self) -> float:
        """Exact: the best lie's loss.  Monte Carlo: minus the largest simultaneous 95% upper bound,
        a 95% lower confidence bound on the true margin (``inf`` when no lie was tried)."""
        return best_and_margin(self._best(+1))[1]

    @property
    def max_gain_interval(self) -> tuple[float, float]:
        """A 95% confidence interval for the true ``max_gain`` (both ends equal when exact)."""
        return self.max_gain, best_and_margin(self._best(+1))[0]


@dataclass(frozen=True)
class BayesianAudit(MonteCarloGains, Verdict):
    """Interim gains ``gains[k, t, x]`` of ``agents[k]`` with true type index ``t`` reporting ``x``
    (``half_width``: the 95% CI half-widths when not ``exact``, each interval alone;
    ``joint_half_width``: all at once, Bonferroni).  ``worst_case``: agent, true type, lie, gain,
    ``ci`` (the simultaneous interval; ``None`` when exact) and ``profile = None`` (the others'
    reports are averaged over the prior, described in ``prior``).  When Monte Carlo, ``max_gain`` is
    a 95% lower confidence bound on the largest interim gain (module docstring).

    Attributes
    ----------
    name : str
    types : tuple
        The type labels (``t`` and ``x`` index them).
    n : int
        Agents.
    exact : bool
        Exact enumeration of the others' profiles, or Monte Carlo with 95% intervals.
    agents : numpy.ndarray of int
    gains : numpy.ndarray, shape (k, m, m)
        ``-inf`` where a report is not tried (outside the agent's type space or not among ``lies``).
    half_width : numpy.ndarray or None
        The intervals' half-widths (``None`` when exact).
    lines : int
        Profiles of the others enumerated (or drawn) per agent.
    prior : str
        The prior, described.
    scale : float
    laws : int
        New rule calls made by the audit.
    lies : str
        The lies tried, in words.

    Examples
    --------
    >>> from dpgames import CustomMechanism, truthfulness_audit
    >>> mean = CustomMechanism(
    ...     lambda r: round(sum(r) / len(r)),
    ...     lambda t, o: -abs(t - o),
    ...     types=range(5),
    ...     anonymous=True,
    ... )
    >>> audit = truthfulness_audit(mean, n=3, prior={0: 0.2, 2: 0.5, 4: 0.3})
    >>> (
    ...     audit.exact,
    ...     round(audit.max_gain, 6),
    ...     audit.worst_case["true_type"],
    ...     audit.worst_case["lie"],
    ... )
    (True, 0.37, 1, 0)
    """

    name: str
    types: tuple
    n: int
    exact: bool
    agents: np.ndarray
    gains: np.ndarray
    half_width: np.ndarray | None
    lines: int
    prior: str
    scale: float
    laws: int
    lies: str = "every report of her type space"

    def _masked(self, values: np.ndarray) -> np.ndarray:
        return np.where(np.eye(len(self.types), dtype=bool)[None], -np.inf, values)

    def _pointwise(self) -> tuple[np.ndarray, int] | None:
        return None if self.exact or self.half_width is None else (self.half_width, self.lines)

    @property
    def worst_case(self) -> dict[str, Any]:
        """The best lie (largest interim gain, or estimate): agent, true type, lie, gain, its
        simultaneous 95% interval (``None`` when exact); empty when no lie was tried."""
        g = self._masked(self.gains)
        k, t, x = np.unravel_index(int(np.argmax(g)), g.shape)
        if g[k, t, x] == -np.inf:
            return {}
        joint = self.joint_half_width
        half = None if joint is None else float(joint[k, t, x])
        return {
            "agent": int(self.agents[k]),
            "true_type": self.types[t],
            "lie": self.types[x],
            "gain": float(g[k, t, x]),
            "ci": _interval(float(g[k, t, x]), half),
            "profile": None,
            "prior": self.prior,
        }

    def describe(self) -> str:
        """A readable report: exact or Monte Carlo, the largest interim gain, the verdict."""
        w = self.worst_case
        family = int(np.isfinite(self._masked(self.gains)).sum())
        how = (
            f"exact over {self.lines} profiles of the others per agent"
            if self.exact
            else f"Monte Carlo over {self.lines} draws of the others' reports, simultaneous "
            "95% intervals over "
            f"the {family} (agent, true type, lie) gains (Bonferroni)"
        )
        if w:
            ci = (
                ""
                if w["ci"] is None
                else f" (simultaneous 95% CI [{w['ci'][0]:.6g}, {w['ci'][1]:.6g}])"
            )
            kind = "largest interim gain" if w["gain"] > 0 else "best lie loses"
            bound = "" if self.exact else f", max_gain {self.max_gain:.6g} (95% lower bound)"
            best = (
                f"  {kind} {w['gain']:.6g}{ci} (margin {self.margin:.6g}{bound}): agent "
                f"{w['agent']} (true "
                f"type {w['true_type']!r}) reporting {w['lie']!r}"
            )
        else:
            best = "  no lie to try: max_gain 0, margin inf"
        return "\n".join(
            [
                f"Bayesian (interim) truthfulness of {self.name} with {self.n} agents, "
                f"prior {self.prior}",
                (
                    f"  {how}; {self.agents.size} agents audited x every true type x {self.lies} "
                    f"({self.laws} new rule calls)"
                ),
                best,
                f"  verdict: {'truthful' if self.is_truthful() else 'NOT truthful'}",
            ]
        )


def parse_prior(mech: CustomMechanism, prior: Any, n: int) -> list[np.ndarray]:
    """One probability vector (over ``types``, zero outside the agent's type space) per agent, from
    a mapping ``{type: probability}``, an array (aligned with ``types``, or with the agent's type
    space), a list of n of those (one per agent), or with roles a mapping ``{role: prior}``.

    Raises
    ------
    ValidationError
        If the prior is of another form, has the wrong length, names an unknown type, puts mass
        outside an agent's type space, or a vector is not a probability distribution.
    """
    roles = mech.roles_of(n)
    if (
        isinstance(prior, Mapping)
        and mech.n_agents is not None
        and prior
        and all(is_hashable(r) and r in mech.role_names for r in prior)
        and set(prior) == set(mech.role_names)
    ):
        return [
            _prior_vector(
                mech, prior[mech.role_names[roles[i]]], f"prior[{mech.role_names[roles[i]]!r}]", i
            )
            for i in range(n)
        ]
    if isinstance(prior, Mapping):
        return [_prior_vector(mech, prior, "prior", i) for i in range(n)]
    items = prior.tolist() if isinstance(prior, np.ndarray) else prior
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)) or not items:
        raise ValidationError(
            "prior",
            f"must be a mapping {{type: probability}}, an array of {mech.n_types} "
            f"probabilities (one per type), or a list of {n} of those (one per agent)",
        )
    if all(isinstance(p, Mapping) or _is_vector(p) for p in items):
        if len(items) != n:
            raise ValidationError(
                "prior",
                f"a list of priors must hold one per agent: a list of {n}, got {len(items)}",
            )
        return [_prior_vector(mech, p, f"prior[{i}]", i) for i, p in enumerate(items)]
    return [_prior_vector(mech, items, "prior", i) for i in range(n)]


def _is_vector(p: Any) -> bool:
    return isinstance(p, np.ndarray) or (
        isinstance(p, Sequence) and not isinstance(p, (str, bytes))
    )


def _prior_vector(mech: CustomMechanism, prior: Any, field: str, agent: int) -> np.ndarray:
    m = mech.n_types
    space = mech.space(agent)
    p = np.zeros(m)
    if isinstance(prior, Mapping):
        for t, q in prior.items():
            p[mech.type_index(agent, t, field)] = _probability(q, field, t)
    else:
        values = list(prior) if not isinstance(prior, np.ndarray) else prior.tolist()
        if len(values) == space.size:
            p[space] = [
                _probability(q, field, mech.types[t]) for t, q in zip(space.tolist(), values)
            ]
        elif len(values) == m:
            p[:] = [_probability(q, field, t) for t, q in zip(mech.types, values)]
            outside = np.flatnonzero((p > 0) & ~mech._member[mech.role(agent)])
            if outside.size:
                raise ValidationError(
                    field,
                    f"gives {mech.types[outside[0]]!r} a positive probability, but it is not "
                    f"in the type space of agent {agent}",
                )
        else:
            raise ValidationError(
                field, f"must give one probability per type ({space.size}), got {len(values)}"
            )
    if not abs(p.sum() - 1.0) <= SUM_TOLERANCE:
        raise ValidationError(
            field, f"probabilities sum to {float(p.sum()):.12g}, not 1 (within {SUM_TOLERANCE:g})"
        )
    return p / p.sum()


def _probability(q: Any, field: str, t: Any) -> float:
    try:
        x = float(q)
    except (TypeError, ValueError):
        x = math.nan
    if isinstance(q, (bool, str)) or not (math.isfinite(x) and x >= 0):
        raise ValidationError(
            field, f"gives type {t!r} the probability {q!r}: must be a finite number >= 0"
        )
    return x


def bayesian_audit(
    mech: CustomMechanism,
    prior: Any,
    n: int,
    *,
    samples: int | None = None,
    rng: RNGLike = 0,
    lies: Any = None,
) -> BayesianAudit:
    """Interim gain of every (agent, true type, lie) under independent types drawn from ``prior``.

    Parameters
    ----------
    mech : CustomMechanism
    prior : mapping, array_like or list
        ``{type: probability}``, an array aligned with ``types`` (or with the agent's type space), a
        list of ``n`` of those, or with roles ``{role: prior}``.
    n : int
        Agents, ``>= 1``.
    samples : int, optional
        Monte Carlo draws of the others' reports (default: exact when at most a million laws).
    rng : RNGLike, default 0
        A seed, a numpy Generator or None (fresh entropy); the default gives the same audit every
        call.
    lies : collection or callable, optional
        The reports tried (as :func:`~dpgames.analysis.custom_audit.ex_post_audit`).

    Returns
    -------
    BayesianAudit
        Exact, or Monte Carlo with 95% intervals (said in ``exact``).

    Raises
    ------
    ValidationError
        On a bad prior, ``n``, ``samples``, ``rng`` or ``lies``, a false anonymity declaration, or a
        failure of the user's functions.
    """
    n = integer("n", n, low=1)
    mech.check_n(n)
    m = mech.n_types
    priors = parse_prior(mech, prior, n)
    tried = Lies(mech, lies)
    common = all(np.array_equal(p, priors[0]) for p in priors)
    mech.check_anonymity(n)
    before = mech.rule_calls
    symmetric = mech.anonymous and common and len(set(mech.roles_of(n).tolist())) == 1
    computed = [0] if symmetric else list(range(n))
    supports = [np.flatnonzero(p > 0).tolist() for p in priors]
    count = _others_profiles(supports, symmetric)
    width = max(mech.space(i).size for i in range(n))
    exact = (
        samples is None
        and count * width <= PROFILE_LIMIT
        and len(computed) * count * width**2 <= WORK_LIMIT
    )
    lines = Lines(mech)
    generator = as_generator(rng)
    S = SAMPLES if samples is None else integer("samples", samples, low=2)
    if not exact:
        check_calls(
            "samples",
            "the Monte Carlo Bayesian audit",
            len(computed) * S * width,
            ": use fewer samples=, or anonymous=True with a common prior (one agent audited)",
        )
    local: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for i in computed:
        if exact:
            others, weights = _exact_others(priors, supports, i, symmetric)
        else:
            draws = [generator.choice(m, size=S, p=priors[j]) for j in range(n) if j != i]
            others = list(zip(*(d.tolist() for d in draws))) if draws else [()] * S
            weights = np.full(S, 1.0 / S)
        total, square = _weighted_sums(lines, i, others, weights)
        half = np.zeros_like(total)
        if not exact:
            # the Student-t interval of mean_ci, from the draws' sums (their table is not kept)
            var = np.maximum(square - total**2, 0.0) * S / (S - 1)
            half = t_critical(S) * np.sqrt(var / S)
        local[i] = (total, half)
    # the agents reported: those computed, or (symmetric) agent 0 and every agent whose lies differ
    # from hers
    agents = tried.representatives(range(n), [0] * n, whole=True) if symmetric else computed
    gains, halves = np.full((len(agents), m, m), -np.inf), np.zeros((len(agents), m, m))
    for k, i in enumerate(agents):
        total, half = local[0 if symmetric else i]
        space = mech.space(i)
        allowed = tried.local(i) | np.eye(space.size, dtype=bool)
        gains[k][np.ix_(space, space)] = np.where(allowed, total, -np.inf)
        halves[k][np.ix_(space, space)] = half
    text = _describe_prior(mech, priors, common)
    return BayesianAudit(
        mech.name,
        mech.types,
        n,
        exact,
        np.asarray(agents),
        gains,
        None if exact else halves,
        count if exact else S,
        text,
        mech.scale,
        mech.rule_calls - before,
        tried.describe(),
    )


def _others_profiles(supports: list[list[int]], symmetric: bool) -> int:
    """The most profiles of the others any audited agent faces: multisets when symmetric, else the
    product of the others' support sizes, largest when the smallest support is the agent's own.
    Above ``PROFILE_LIMIT`` it is capped (the exact audit is then out of reach anyway), so a product
    over thousands of agents is never formed."""
    n = len(supports)
    if symmetric:
        return math.comb(len(supports[0]) + n - 2, n - 1)
    sizes = sorted(len(s) for s in supports)
    if sum(math.log(k) for k in sizes[1:]) > math.log(PROFILE_LIMIT + 1):
        return PROFILE_LIMIT + 1
    return math.prod(sizes[1:])


def _exact_others(
    priors: list[np.ndarray], supports: list[list[int]], agent: int, symmetric: bool
) -> tuple[list[tuple], np.ndarray]:
    """Every profile of the others with its probability: multisets with multinomial weights when
    symmetric."""
    n = len(priors)
    if symmetric:
        p = priors[0]
        others = list(itertools.combinations_with_replacement(supports[0], n - 1))
        if not others:
            return [()], np.ones(1)
        c = np.array([np.bincount(o, minlength=p.size) for o in others])
        with np.errstate(divide="ignore"):
            logw = (
                gammaln(n)
                - gammaln(c + 1).sum(axis=1)
                + (c * np.where(p > 0, np.log(p), 0.0)).sum(axis=1)
            )
        return others, np.exp(logw)
    rest = [j for j in range(n) if j != agent]
    others = list(itertools.product(*(supports[j] for j in rest)))
    weights = (
        np.array([math.prod(priors[j][t] for j, t in zip(rest, o)) for o in others])
        if rest
        else np.ones(1)
    )
    return others, weights


def _weighted_sums(
    lines: Lines, agent: int, others: list[tuple], weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``sum_L w_L G[t, L, x]`` and ``sum_L w_L G[t, L, x]^2`` with ``G = A - A[t, L, t]`` (block by
    block)."""
    m = lines.mech.space(agent).size
    total, square = np.zeros((m, m)), np.zeros((m, m))
    block = max(1, BLOCK // (m * m))
    for start in range(0, len(others), block):
        part = others[start : start + block]
        w = weights[start : start + block]
        A = lines.utilities(agent, lines.grid(agent, part))
        G = A - A[np.arange(m), :, np.arange(m)][:, :, None]
        total += np.einsum("l,tlx->tx", w, G)
        square += np.einsum("l,tlx->tx", w, G * G)
    return total, square


def _describe_prior(mech: CustomMechanism, priors: list[np.ndarray], common: bool) -> str:
    if not common:
        return f"one per agent ({len(priors)} agents)"
    p = priors[0]
    if np.allclose(p, 1.0 / p.size, rtol=0, atol=1e-12):
        return f"common, uniform over the {p.size} types"
    items = [f"{mech.types[k]!r}: {q:.4g}" for k, q in enumerate(p.tolist()) if q > 0]
    return "common {" + ", ".join(items[:6]) + (", ...}" if len(items) > 6 else "}")


# --- sampling-only mechanisms
# ------------------------------------------------------------------------------
@dataclass(frozen=True)
class SampledAudit(MonteCarloGains, Verdict):
    """Monte Carlo gains ``gains[k, x]`` of ``agents[k]`` reporting type index ``x`` at ``profile``,
    with 95% CI half-widths ``half_width[k, x]`` (each interval alone) and ``joint_half_width[k,
    x]`` (all at once, Bonferroni), from ``samples`` coupled draws each.

    The audit of a sampling-only rule ``rule(reports, rng)``: truthful unless some lie gains more
    than ``tol`` at 95% simultaneous confidence (:meth:`violation`).  ``max_gain`` is a 95% lower
    confidence bound on the largest true gain, ``max_gain_interval`` a 95% interval for it (module
    docstring).

    Attributes
    ----------
    name : str
    types : tuple
    profile : tuple
        The reports audited.
    agents : numpy.ndarray of int
    gains, half_width : numpy.ndarray, shape (k, m)
        Estimated gains and their 95% half-widths, each interval alone (gain ``-inf``: a report not
        tried).
    samples : int
        Coupled draws per (agent, report).
    seed : int
        The root seed of the coupled draws: ``sampled_audit(..., rng=seed)`` reproduces the audit.
    scale : float
    draws : int
        Rule calls made.

    Examples
    --------
    >>> import numpy as np
    >>> from dpgames import truthfulness_audit
    >>> def noisy_mean(reports, rng):
    ...     return int(np.clip(round(sum(reports) / len(reports) + rng.normal()), 0, 4))
    >>> audit = truthfulness_audit(
    ...     noisy_mean,
    ...     [1, 3, 4],
    ...     utility=lambda t, o: -abs(t - o),
    ...     types=range(5),
    ...     samples=200,
    ...     rng=0,
    ... )
    >>> (
    ...     audit.worst_case["lie"],
    ...     round(audit.worst_case["gain"], 2),
    ...     audit.is_truthful(),
    ... )  # a lie pays, at 95%
    (0, 0.29, False)
    >>> [round(b, 2) for b in audit.max_gain_interval]   # the largest true gain, simultaneous 95%
    [0.19, 0.39]
    """

    name: str
    types: tuple
    profile: tuple
    agents: np.ndarray
    gains: np.ndarray
    half_width: np.ndarray
    samples: int
    seed: int
    scale: float
    draws: int

    def _masked(self, values: np.ndarray) -> np.ndarray:
        own = [self.types.index(self.profile[i]) for i in self.agents]
        out = values.copy()
        out[np.arange(self.agents.size), own] = -np.inf
        return out

    def _pointwise(self) -> tuple[np.ndarray, int]:
        return self.half_width, self.samples

    def _case(self, k: int, x: int) -> dict[str, Any]:
        agent = int(self.agents[k])
        g, h = float(self.gains[k, x]), float(self._joint()[k, x])
        return {
            "agent": agent,
            "true_type": self.profile[agent],
            "lie": self.types[x],
            "gain": g,
            "ci": (g - h, g + h),
            "profile": self.profile,
        }

    def _joint(self) -> np.ndarray:
        # never None: a sampled audit's gains are estimates
        return cast(np.ndarray, self.joint_half_width)

    @property
    def family(self) -> int:
        """The (agent, lie) gains estimated together: the simultaneous intervals' family size."""
        return int(np.isfinite(self._masked(self.gains)).sum())

    @property
    def worst_case(self) -> dict[str, Any]:
        """The lie with the largest estimated gain, with its simultaneous 95% interval (empty: no
        lie tried)."""
        g = self._masked(self.gains)
        k, x = np.unravel_index(int(np.argmax(g)), g.shape)
        return {} if g[k, x] == -np.inf else self._case(int(k), int(x))

    def violation(self, tol: float = 0.0) -> dict[str, Any] | None:
        """The lie whose simultaneous 95% lower bound exceeds ``tol`` the most (``None``: no lie
        does)."""
        lower = self._masked(self.gains - self._joint())
        k, x = np.unravel_index(int(np.argmax(lower)), lower.shape)
        return self._case(int(k), int(x)) if lower[k, x] > tol + self.rounding_slack else None

    def is_truthful(self, tol: float = 0.0) -> bool:
        """No lie gains more than ``tol`` at 95% simultaneous confidence."""
        return self.violation(tol) is None

    def samples_for(self, gain: float, power: float = 0.8, tol: float = 0.0) -> int:
        """Draws per (agent, lie) that flag a lie gaining ``gain`` with probability ``power``, by
        :func:`samples_for_power` with this audit as the pilot: the largest estimated sd of a lie's
        coupled gain draws, and this audit's family of (agent, lie) gains."""
        tried = np.isfinite(self._masked(self.gains))
        sd = float(
            (
                self.half_width[tried] * math.sqrt(self.samples) / t_critical(self.samples, LEVEL)
            ).max(initial=0.0)
        )
        return samples_for_power(gain, sd, pairs=max(1, self.family), power=power, tol=tol)

    def describe(self, tol: float = 0.0) -> str:
        """A readable report: the draws, the largest estimated gain with its simultaneous interval,
        the 95% lower bound on the largest gain, the verdict at ``tol``."""
        w = self.worst_case or {"gain": 0.0, "ci": (0.0, 0.0), "agent": None, "lie": None}
        bad = self.violation(tol)
        low, high = self.max_gain_interval
        verdict = (
            f"no lie gains more than {tol:g} at 95% simultaneous confidence"
            if bad is None
            else f"agent {bad['agent']} (true type {bad['true_type']!r}) gains by reporting "
            f"{bad['lie']!r}: "
            f"{bad['gain']:.6g}, simultaneous 95% CI [{bad['ci'][0]:.6g}, "
            f"{bad['ci'][1]:.6g}] above {tol:g}"
        )
        return "\n".join(
            [
                f"sampled truthfulness audit of {self.name} (sampling-only) at reports "
                f"{tuple_text(self.profile)}",
                (
                    f"  Monte Carlo: {self.agents.size} agents audited x "
                    f"{len(self.types)} reports, {self.samples} draws "
                    f"each with common random numbers (seed {self.seed}), {self.draws} rule calls"
                ),
                (
                    f"  simultaneous 95% intervals over the {self.family} (agent, lie) "
                    "gains (Bonferroni: each at level "
                    f"1 - 0.05/{max(1, self.family)})"
                ),
                (
                    f"  best lie's estimated gain {w['gain']:.6g} (CI [{w['ci'][0]:.6g}, "
                    f"{w['ci'][1]:.6g}]): agent "
                    f"{w['agent']} reporting {w['lie']!r}"
                ),
                (
                    f"  largest true gain in [{low:.6g}, {high:.6g}] at 95%: max_gain "
                    f"{self.max_gain:.6g} (the lower "
                    f"bound), margin {self.margin:.6g}"
                ),
                f"  verdict: {verdict}",
            ]
        )


def sampled_audit(
    mech: CustomMechanism,
    profile: Sequence,
    *,
    samples: int | None = None,
    rng: RNGLike = 0,
    lies: Any = None,
) -> SampledAudit:
    """Gain of every audited (agent, lie) at ``profile`` of a sampling-only rule, with common random
    numbers.

    Parameters
    ----------
    mech : CustomMechanism
        With a sampling-only rule ``rule(reports, rng)``.
    profile : sequence
        The reports.
    samples : int, optional
        Coupled draws per (agent, report), ``>= 2``.
    rng : RNGLike, default 0
        A seed, a numpy Generator or None (fresh entropy); the default gives the same audit every
        call.  An integer is the root seed of the coupled draws; anything else gives one
        (``SampledAudit.seed``).
    lies : collection or callable, optional
        The reports tried (as :func:`~dpgames.analysis.custom_audit.ex_post_audit`).

    Returns
    -------
    SampledAudit

    Raises
    ------
    ValidationError
        If the rule has an exact law (use the exact audits), or on a bad profile, ``samples``,
        ``rng`` or ``lies``.
    """
    if not mech.sampling:
        raise ValidationError(
            "rule", f"{mech.name} has an exact law: use the exact audits, not the sampled one"
        )
    S = SAMPLES if samples is None else integer("samples", samples, low=2)
    seed = _root_seed(rng)
    idx = mech._indices(profile, "profile")
    n, m = idx.size, mech.n_types
    tried = Lies(mech, lies)
    base = mech._labels_of(idx)
    before = mech.rule_calls
    classes = mech.classes(idx)
    agents = np.asarray(
        tried.representatives(range(n), [(int(c), int(t)) for c, t in zip(classes, idx)], False)
        if mech.anonymous
        else np.arange(n),
        dtype=np.intp,
    )
    reports = {i: np.flatnonzero(tried.allowed(i, int(idx[i]))).tolist() for i in agents.tolist()}
    check_calls(
        "samples",
        "the sampled audit",
        S * (1 + sum(len(r) for r in reports.values())),
        ": use fewer samples=",
    )
    # draw s of every profile starts from the state of PCG64(seeds[s]): computed once, then restored
    # into one reused generator (cheaper than seeding a new one per call)
    seeds = np.random.SeedSequence(seed).generate_state(S).tolist()
    states = [np.random.PCG64(s).state for s in seeds]
    rng = np.random.Generator(np.random.PCG64())
    truth = _coupled_draws(mech, base, states, rng)
    pay = mech.expected_payments(idx, base)
    gains, half = np.full((agents.size, m), -np.inf), np.zeros((agents.size, m))
    for k, i in enumerate(agents.tolist()):
        a = int(idx[i])
        gains[k, a] = 0.0
        xs = reports[i]
        if not xs:
            continue
        honest = _utilities(mech, i, a, truth) - (0.0 if pay is None else pay[i])
        diffs = np.zeros((S, len(xs)))  # draw s of each lie's gain
        for j, x in enumerate(xs):
            moved = idx.copy()
            moved[i] = x
            lie = base[:i] + (mech.types[x],) + base[i + 1 :]
            outs = _coupled_draws(mech, lie, states, rng)
            dev_pay = mech.expected_payments(moved, lie)
            diffs[:, j] = (
                _utilities(mech, i, a, outs) - (0.0 if dev_pay is None else dev_pay[i]) - honest
            )
        mean, _, high = t_interval(diffs)
        gains[k, xs] = mean
        half[k, xs] = high - mean
    return SampledAudit(
        mech.name,
        mech.types,
        base,
        agents,
        gains,
        half,
        S,
        seed,
        mech.scale,
        mech.rule_calls - before,
    )


def _root_seed(rng: RNGLike) -> int:
    """The root seed of the coupled draws: ``rng`` itself when an integer, else one draw of its
    generator."""
    generator = as_generator(rng)  # refuses a bad rng with a ValidationError naming it
    return int(rng) if isinstance(rng, (int, np.integer)) else int(generator.integers(2**63))


def _coupled_draws(
    mech: CustomMechanism,
    reports: tuple,
    states: Sequence[Mapping[str, Any]],
    rng: np.random.Generator,
) -> np.ndarray:
    """Outcome indices of draws ``s = 0, 1, ...`` at ``reports``, draw ``s`` from the generator
    state ``states[s]`` (common random numbers: every profile's draw ``s`` starts from the same
    state)."""
    bits = rng.bit_generator
    out = np.empty(len(states), dtype=np.intp)
    for s, state in enumerate(states):
        bits.state = state
        out[s] = mech._draw(reports, rng)
    return out


def _utilities(mech: CustomMechanism, agent: int, t: int, outs: np.ndarray) -> np.ndarray:
    return mech._fill(agent, t, np.unique(outs))[t, outs]
