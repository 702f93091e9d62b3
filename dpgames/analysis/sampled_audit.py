"""Audits of a :class:`~dpgames.mechanisms.custom.CustomMechanism` under uncertainty: a prior, or a simulator.

* :func:`bayesian_audit`: Bayesian (interim) incentive compatibility.  Each agent's type is drawn
  independently from a prior over ``types`` (one for all agents, or one per agent).  The interim gain of
  agent ``i`` with true type ``t`` reporting ``x`` is ``E_{r_-i ~ prior}[U_i(t; x, r_-i) - U_i(t; t, r_-i)]``.
  It is exact (a weighted sum over the others' profiles: product weights, or multinomial weights over
  multisets when the mechanism is anonymous and the prior common) when there are at most
  :data:`~dpgames.analysis.custom_audit.PROFILE_LIMIT` laws to compute; above, it is a Monte Carlo mean
  over ``samples`` draws of the others' reports (the same draws for every true type and lie), each gain
  with a 95% Student-t confidence interval (:func:`~dpgames.estimates.t_critical`, as
  :func:`~dpgames.estimates.mean_ci`); the result says which (``exact``).
* :func:`sampled_audit`: a sampling-only rule ``rule(reports, rng)`` (a simulator with no exact law).
  ``samples`` draws per (agent, lie) with common random numbers: draw ``s`` of the truthful profile and of
  every deviation uses the same seed, so the gain's variance is that of a difference of coupled draws.
  Each gain gets a 95% Student-t confidence interval (:func:`~dpgames.estimates.t_interval`: mean +-
  t_{0.975, samples - 1} sd / sqrt(samples), 1.96 sd / sqrt(samples) for many samples); the verdict is "no
  lie gains more than ``tol`` at 95% confidence" unless some lie's lower bound exceeds ``tol``.

Random draws come from ``seed`` (default 0): the same seed gives the same audit.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gammaln

from dpgames.analysis.custom_lines import (
    BLOCK,
    PROFILE_LIMIT,
    WORK_LIMIT,
    Lies,
    Lines,
    Verdict,
    best_and_margin,
    check_calls,
)
from dpgames.estimates import t_critical, t_interval
from dpgames.mechanisms.custom import SUM_TOLERANCE, CustomMechanism, _hashable, _show
from dpgames.privacy.rng import as_generator
from dpgames.validation import ValidationError, integer

#: Monte Carlo draws by default.
SAMPLES = 2_000


def _interval(mean: float, half: float | None) -> tuple[float, float] | None:
    return None if half is None else (mean - half, mean + half)


@dataclass(frozen=True)
class BayesianAudit(Verdict):
    """Interim gains ``gains[k, t, x]`` of ``agents[k]`` with true type index ``t`` reporting ``x``
    (``half_width``: the 95% CI half-widths when not ``exact``).  ``worst_case``: agent, true type, lie,
    gain, ``ci`` (``None`` when exact) and ``profile = None`` (the others' reports are averaged over the
    prior, described in ``prior``).

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
    >>> mean = CustomMechanism(lambda r: round(sum(r) / len(r)), lambda t, o: -abs(t - o), types=range(5),
    ...                        anonymous=True)
    >>> audit = truthfulness_audit(mean, n=3, prior={0: 0.2, 2: 0.5, 4: 0.3})
    >>> audit.exact, round(audit.max_gain, 6), audit.worst_case["true_type"], audit.worst_case["lie"]
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

    @property
    def max_gain(self) -> float:
        """The best lie's interim gain if positive, else 0 (the estimate, when Monte Carlo)."""
        return best_and_margin(float(self._masked(self.gains).max()))[0]

    @property
    def margin(self) -> float:
        """The best lie's interim loss (``inf`` when no lie was tried)."""
        return best_and_margin(float(self._masked(self.gains).max()))[1]

    @property
    def worst_case(self) -> dict[str, Any]:
        """The best lie: agent, true type, lie, gain, its 95% interval (``None`` when exact); empty when no
        lie was tried."""
        g = self._masked(self.gains)
        k, t, x = np.unravel_index(int(np.argmax(g)), g.shape)
        if g[k, t, x] == -np.inf:
            return {}
        half = None if self.exact or self.half_width is None else float(self.half_width[k, t, x])
        return {"agent": int(self.agents[k]), "true_type": self.types[t], "lie": self.types[x],
                "gain": float(g[k, t, x]), "ci": _interval(float(g[k, t, x]), half), "profile": None,
                "prior": self.prior}

    def is_truthful(self, tol: float = 0.0) -> bool:
        """Exact: no interim gain above ``tol`` (plus rounding).  Monte Carlo: no lie whose 95% lower
        confidence bound is above ``tol``."""
        if self.exact or self.half_width is None:
            return super().is_truthful(tol)
        lower = self._masked(self.gains - self.half_width)
        return float(lower.max()) <= tol + self.rounding_slack

    def describe(self) -> str:
        """A readable report: exact or Monte Carlo, the largest interim gain, the verdict."""
        w = self.worst_case
        how = (f"exact over {self.lines} profiles of the others per agent" if self.exact else
               f"Monte Carlo over {self.lines} draws of the others' reports, 95% confidence intervals")
        if w:
            ci = "" if w["ci"] is None else f" (95% CI [{w['ci'][0]:.6g}, {w['ci'][1]:.6g}])"
            kind = "largest interim gain" if w["gain"] > 0 else "best lie loses"
            best = (f"  {kind} {w['gain']:.6g}{ci} (margin {self.margin:.6g}): agent {w['agent']} (true type "
                    f"{w['true_type']!r}) reporting {w['lie']!r}")
        else:
            best = "  no lie to try: max_gain 0, margin inf"
        return "\n".join([
            f"Bayesian (interim) truthfulness of {self.name} with {self.n} agents, prior {self.prior}",
            (f"  {how}; {self.agents.size} agents audited x every true type x {self.lies} "
             f"({self.laws} new rule calls)"),
            best,
            f"  verdict: {'truthful' if self.is_truthful() else 'NOT truthful'}"])


def parse_prior(mech: CustomMechanism, prior: Any, n: int) -> list[np.ndarray]:
    """One probability vector (over ``types``, zero outside the agent's type space) per agent, from a mapping
    ``{type: probability}``, an array (aligned with ``types``, or with the agent's type space), a list of n
    of those (one per agent), or with roles a mapping ``{role: prior}``.

    Raises
    ------
    ValidationError
        If the prior is of another form, has the wrong length, names an unknown type, puts mass outside an
        agent's type space, or a vector is not a probability distribution.
    """
    roles = mech.roles_of(n)
    if isinstance(prior, Mapping) and mech.n_agents is not None and prior and all(
            _hashable(r) and r in mech.role_names for r in prior) and set(prior) == set(mech.role_names):
        return [_prior_vector(mech, prior[mech.role_names[roles[i]]], f"prior[{mech.role_names[roles[i]]!r}]", i)
                for i in range(n)]
    if isinstance(prior, Mapping):
        return [_prior_vector(mech, prior, "prior", i) for i in range(n)]
    items = prior.tolist() if isinstance(prior, np.ndarray) else prior
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)) or not items:
        raise ValidationError("prior", f"must be a mapping {{type: probability}}, an array of {mech.n_types} "
                                       f"probabilities (one per type), or a list of {n} of those (one per agent)")
    if all(isinstance(p, Mapping) or _is_vector(p) for p in items):
        if len(items) != n:
            raise ValidationError("prior", f"a list of priors must hold one per agent: a list of {n}, "
                                           f"got {len(items)}")
        return [_prior_vector(mech, p, f"prior[{i}]", i) for i, p in enumerate(items)]
    return [_prior_vector(mech, items, "prior", i) for i in range(n)]


def _is_vector(p: Any) -> bool:
    return isinstance(p, np.ndarray) or (isinstance(p, Sequence) and not isinstance(p, (str, bytes)))


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
            p[space] = [_probability(q, field, mech.types[t]) for t, q in zip(space.tolist(), values)]
        elif len(values) == m:
            p[:] = [_probability(q, field, t) for t, q in zip(mech.types, values)]
            outside = np.flatnonzero((p > 0) & ~mech._member[mech.role(agent)])
            if outside.size:
                raise ValidationError(field, f"gives {mech.types[outside[0]]!r} a positive probability, but it is not "
                                             f"in the type space of agent {agent}")
        else:
            raise ValidationError(field, f"must give one probability per type ({space.size}), got {len(values)}")
    if not abs(p.sum() - 1.0) <= SUM_TOLERANCE:
        raise ValidationError(field, f"probabilities sum to {float(p.sum()):.12g}, not 1 (within {SUM_TOLERANCE:g})")
    return p / p.sum()


def _probability(q: Any, field: str, t: Any) -> float:
    try:
        x = float(q)
    except (TypeError, ValueError):
        x = math.nan
    if isinstance(q, (bool, str)) or not (math.isfinite(x) and x >= 0):
        raise ValidationError(field, f"gives type {t!r} the probability {q!r}: must be a finite number >= 0")
    return x


def bayesian_audit(mech: CustomMechanism, prior: Any, n: int, *, samples: int | None = None,
                   seed: int | None = None, lies: Any = None) -> BayesianAudit:
    """Interim gain of every (agent, true type, lie) under independent types drawn from ``prior``.

    Parameters
    ----------
    mech : CustomMechanism
    prior : mapping, array_like or list
        ``{type: probability}``, an array aligned with ``types`` (or with the agent's type space), a list of
        ``n`` of those, or with roles ``{role: prior}``.
    n : int
        Agents, ``>= 1``.
    samples : int, optional
        Monte Carlo draws of the others' reports (default: exact when at most a million laws).
    seed : int, optional
    lies : collection or callable, optional
        The reports tried (as :func:`~dpgames.analysis.custom_audit.ex_post_audit`).

    Returns
    -------
    BayesianAudit
        Exact, or Monte Carlo with 95% intervals (said in ``exact``).

    Raises
    ------
    ValidationError
        On a bad prior, ``n``, ``samples``, ``seed`` or ``lies``, a false anonymity declaration, or a
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
    exact = samples is None and count * width <= PROFILE_LIMIT and len(computed) * count * width ** 2 <= WORK_LIMIT
    lines = Lines(mech)
    rng = as_generator(0 if seed is None else seed, "seed")
    S = SAMPLES if samples is None else integer("samples", samples, low=2)
    if not exact:
        check_calls("samples", "the Monte Carlo Bayesian audit", len(computed) * S * width,
                    ": use fewer samples=, or anonymous=True with a common prior (one agent audited)")
    local: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for i in computed:
        if exact:
            others, weights = _exact_others(priors, supports, i, symmetric)
        else:
            draws = [rng.choice(m, size=S, p=priors[j]) for j in range(n) if j != i]
            others = list(zip(*(d.tolist() for d in draws))) if draws else [()] * S
            weights = np.full(S, 1.0 / S)
        total, square = _weighted_sums(lines, i, others, weights)
        half = np.zeros_like(total)
        if not exact:  # the Student-t interval of mean_ci, from the draws' sums (their table is not kept)
            var = np.maximum(square - total ** 2, 0.0) * S / (S - 1)
            half = t_critical(S) * np.sqrt(var / S)
        local[i] = (total, half)
    # the agents reported: those computed, or (symmetric) agent 0 and every agent whose lies differ from hers
    agents = tried.representatives(range(n), [0] * n, whole=True) if symmetric else computed
    gains, halves = np.full((len(agents), m, m), -np.inf), np.zeros((len(agents), m, m))
    for k, i in enumerate(agents):
        total, half = local[0 if symmetric else i]
        space = mech.space(i)
        allowed = tried.local(i) | np.eye(space.size, dtype=bool)
        gains[k][np.ix_(space, space)] = np.where(allowed, total, -np.inf)
        halves[k][np.ix_(space, space)] = half
    text = _describe_prior(mech, priors, common)
    return BayesianAudit(mech.name, mech.types, n, exact, np.asarray(agents), gains, None if exact else halves,
                         count if exact else S, text, mech.scale, mech.rule_calls - before, tried.describe())


def _others_profiles(supports: list[list[int]], symmetric: bool) -> int:
    """The most profiles of the others any audited agent faces: multisets when symmetric, else the product
    of the others' support sizes, largest when the smallest support is the agent's own.  Above
    ``PROFILE_LIMIT`` it is capped (the exact audit is then out of reach anyway), so a product over
    thousands of agents is never formed."""
    n = len(supports)
    if symmetric:
        return math.comb(len(supports[0]) + n - 2, n - 1)
    sizes = sorted(len(s) for s in supports)
    if sum(math.log(k) for k in sizes[1:]) > math.log(PROFILE_LIMIT + 1):
        return PROFILE_LIMIT + 1
    return math.prod(sizes[1:])


def _exact_others(priors: list[np.ndarray], supports: list[list[int]], agent: int,
                  symmetric: bool) -> tuple[list[tuple], np.ndarray]:
    """Every profile of the others with its probability: multisets with multinomial weights when symmetric."""
    n = len(priors)
    if symmetric:
        p = priors[0]
        others = list(itertools.combinations_with_replacement(supports[0], n - 1))
        if not others:
            return [()], np.ones(1)
        c = np.array([np.bincount(o, minlength=p.size) for o in others])
        with np.errstate(divide="ignore"):
            logw = gammaln(n) - gammaln(c + 1).sum(axis=1) + (c * np.where(p > 0, np.log(p), 0.0)).sum(axis=1)
        return others, np.exp(logw)
    rest = [j for j in range(n) if j != agent]
    others = list(itertools.product(*(supports[j] for j in rest)))
    weights = np.array([math.prod(priors[j][t] for j, t in zip(rest, o)) for o in others]) if rest else np.ones(1)
    return others, weights


def _weighted_sums(lines: Lines, agent: int, others: list[tuple], weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sum_L w_L G[t, L, x]`` and ``sum_L w_L G[t, L, x]^2`` with ``G = A - A[t, L, t]`` (block by block)."""
    m = lines.mech.space(agent).size
    total, square = np.zeros((m, m)), np.zeros((m, m))
    block = max(1, BLOCK // (m * m))
    for start in range(0, len(others), block):
        part = others[start:start + block]
        w = weights[start:start + block]
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


# --- sampling-only mechanisms ------------------------------------------------------------------------------
@dataclass(frozen=True)
class SampledAudit(Verdict):
    """Monte Carlo gains ``gains[k, x]`` of ``agents[k]`` reporting type index ``x`` at ``profile``, with 95%
    CI half-widths ``half_width[k, x]``, from ``samples`` coupled draws each.

    The audit of a sampling-only rule ``rule(reports, rng)``: truthful unless some lie gains more than
    ``tol`` at 95% confidence (:meth:`violation`).

    Attributes
    ----------
    name : str
    types : tuple
    profile : tuple
        The reports audited.
    agents : numpy.ndarray of int
    gains, half_width : numpy.ndarray, shape (k, m)
        Estimated gains and their 95% half-widths (gain ``-inf``: a report not tried).
    samples : int
        Coupled draws per (agent, report).
    seed : int
    scale : float
    draws : int
        Rule calls made.

    Examples
    --------
    >>> import numpy as np
    >>> from dpgames import truthfulness_audit
    >>> def noisy_mean(reports, rng):
    ...     return int(np.clip(round(sum(reports) / len(reports) + rng.normal()), 0, 4))
    >>> audit = truthfulness_audit(noisy_mean, [1, 3, 4], utility=lambda t, o: -abs(t - o), types=range(5),
    ...                            samples=60, seed=0)
    >>> audit.worst_case["lie"], round(audit.max_gain, 2), audit.is_truthful()   # a lie pays, at 95%
    (0, 0.33, False)
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

    @property
    def max_gain(self) -> float:
        """The best lie's estimated gain if positive, else 0."""
        return best_and_margin(float(self._masked(self.gains).max()))[0]

    @property
    def margin(self) -> float:
        """The best lie's estimated loss (``inf`` when no lie was tried)."""
        return best_and_margin(float(self._masked(self.gains).max()))[1]

    def _case(self, k: int, x: int) -> dict[str, Any]:
        agent = int(self.agents[k])
        g, h = float(self.gains[k, x]), float(self.half_width[k, x])
        return {"agent": agent, "true_type": self.profile[agent], "lie": self.types[x], "gain": g,
                "ci": (g - h, g + h), "profile": self.profile}

    @property
    def worst_case(self) -> dict[str, Any]:
        """The lie with the largest estimated gain, with its 95% confidence interval (empty: no lie tried)."""
        g = self._masked(self.gains)
        k, x = np.unravel_index(int(np.argmax(g)), g.shape)
        return {} if g[k, x] == -np.inf else self._case(int(k), int(x))

    def violation(self, tol: float = 0.0) -> dict[str, Any] | None:
        """The lie whose 95% lower confidence bound exceeds ``tol`` the most (``None``: no lie does)."""
        lower = self._masked(self.gains - self.half_width)
        k, x = np.unravel_index(int(np.argmax(lower)), lower.shape)
        return self._case(int(k), int(x)) if lower[k, x] > tol + self.rounding_slack else None

    def is_truthful(self, tol: float = 0.0) -> bool:
        """No lie gains more than ``tol`` at 95% confidence."""
        return self.violation(tol) is None

    def describe(self, tol: float = 0.0) -> str:
        """A readable report: the draws, the largest estimated gain with its interval, the verdict at ``tol``."""
        w = self.worst_case or {"gain": 0.0, "ci": (0.0, 0.0), "agent": None, "lie": None}
        bad = self.violation(tol)
        verdict = (f"no lie gains more than {tol:g} at 95% confidence" if bad is None else
                   f"agent {bad['agent']} (true type {bad['true_type']!r}) gains by reporting {bad['lie']!r}: "
                   f"{bad['gain']:.6g}, 95% CI [{bad['ci'][0]:.6g}, {bad['ci'][1]:.6g}] above {tol:g}")
        return "\n".join([
            f"sampled truthfulness audit of {self.name} (sampling-only) at reports {_show(self.profile)}",
            (f"  Monte Carlo: {self.agents.size} agents audited x {len(self.types)} reports, {self.samples} draws "
             f"each with common random numbers (seed {self.seed}), {self.draws} rule calls"),
            (f"  best lie's estimated gain {w['gain']:.6g} (95% CI [{w['ci'][0]:.6g}, {w['ci'][1]:.6g}]; margin "
             f"{self.margin:.6g}): agent {w['agent']} reporting {w['lie']!r}"),
            f"  verdict: {verdict}"])


def sampled_audit(mech: CustomMechanism, profile: Sequence, *, samples: int | None = None,
                  seed: int | None = None, lies: Any = None) -> SampledAudit:
    """Gain of every audited (agent, lie) at ``profile`` of a sampling-only rule, with common random numbers.

    Parameters
    ----------
    mech : CustomMechanism
        With a sampling-only rule ``rule(reports, rng)``.
    profile : sequence
        The reports.
    samples : int, optional
        Coupled draws per (agent, report), ``>= 2``.
    seed : int, optional
        Root seed (default 0), ``>= 0``.
    lies : collection or callable, optional
        The reports tried (as :func:`~dpgames.analysis.custom_audit.ex_post_audit`).

    Returns
    -------
    SampledAudit

    Raises
    ------
    ValidationError
        If the rule has an exact law (use the exact audits), or on a bad profile, ``samples``, ``seed`` or
        ``lies``.
    """
    if not mech.sampling:
        raise ValidationError("rule", f"{mech.name} has an exact law: use the exact audits, not the sampled one")
    S = SAMPLES if samples is None else integer("samples", samples, low=2)
    seed = 0 if seed is None else integer("seed", seed, low=0)
    idx = mech.indices(profile, "profile")
    n, m = idx.size, mech.n_types
    tried = Lies(mech, lies)
    base = mech.labels(idx)
    before = mech.rule_calls
    classes = mech.classes(idx)
    agents = np.asarray(tried.representatives(range(n), [(int(c), int(t)) for c, t in zip(classes, idx)], False)
                        if mech.anonymous else np.arange(n), dtype=np.intp)
    reports = {i: np.flatnonzero(tried.allowed(i, int(idx[i]))).tolist() for i in agents.tolist()}
    check_calls("samples", "the sampled audit", S * (1 + sum(len(r) for r in reports.values())),
                ": use fewer samples=")
    seeds = np.random.SeedSequence(seed).generate_state(S).tolist()
    truth = np.array([mech.draw(base, np.random.default_rng(s)) for s in seeds])
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
            lie = base[:i] + (mech.types[x],) + base[i + 1:]
            outs = np.array([mech.draw(lie, np.random.default_rng(s)) for s in seeds])
            dev_pay = mech.expected_payments(moved, lie)
            diffs[:, j] = _utilities(mech, i, a, outs) - (0.0 if dev_pay is None else dev_pay[i]) - honest
        mean, _, high = t_interval(diffs)
        gains[k, xs] = mean
        half[k, xs] = high - mean
    return SampledAudit(mech.name, mech.types, base, agents, gains, half, S, seed, mech.scale,
                        mech.rule_calls - before)


def _utilities(mech: CustomMechanism, agent: int, t: int, outs: np.ndarray) -> np.ndarray:
    return mech.fill(agent, t, np.unique(outs))[t, outs]
