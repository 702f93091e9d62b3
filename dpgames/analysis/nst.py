"""The exact least ``q`` of the NST mix, and the full NST analysis at a profile.

The least ``q`` (Nissim, Smorodinsky & Tennenholtz 2012): under the mix an agent's gain from a lie
is ``(1 - q) G - q L`` with ``G`` her gain under the exponential mechanism and ``L >= 0`` her loss
under the commitment mechanism; it is ``<= 0`` iff ``q >= G / (G + L)`` (when ``G > 0``).  The least
``q`` making every agent truthful is therefore ``max over (agent, lie) with G > 0 of G / (G + L)``;
it does not exist below 1 when some lie gains (``G > 0``) and is never punished (``L = 0``).

Over every hypothetical true type the least ``q`` (the commitment loss ``L`` depends on ``t`` and
``x`` only) makes the mix truthful whatever type the replaced agent has, and is at least the
realised-type one.

Over every profile of ``n`` agents (:func:`dominant_least_q`) the least ``q`` makes the mix exactly
*dominant-strategy* truthful: per-profile ``q <= dominant q <= the theorem's q``
(:func:`~dpgames.mechanisms.nst_mix.theorem_q`), exactly, with the worst profile named.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpgames.analysis.limits import ROUNDING
from dpgames.analysis.truthfulness import (
    TrueTypes,
    TruthfulnessAudit,
    TypeSpaceAudit,
    truthfulness_audit,
    type_space_affordable,
)
from dpgames.display import html_table
from dpgames.mechanisms.commitment import CommitmentMechanism, Gap
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.nst_mix import NSTMix, TheoremQ, theorem_q
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.pricing import AuctionPricing
from dpgames.validation import ValidationError, choice, integer, positive_int


@dataclass(frozen=True)
class LeastQ:
    """The least ``q`` making the mix truthful at a profile (``None``: no ``q < 1`` does).

    ``agent``, ``true_type`` and ``lie`` attain it (``None`` when no lie gains under the exponential
    mechanism, and then ``q = 0``); ``exponential_gain`` and ``commitment_loss`` are that lie's
    ``G`` and ``L``.  Over every true type, ``replaces`` is the profile type of the agent whose
    place the hypothetical type takes (``None`` for the realised-type least ``q``)."""

    q: float | None
    agent: int | None
    true_type: object
    lie: object
    exponential_gain: float
    commitment_loss: float
    replaces: object = None

    @property
    def who(self) -> str:
        """``agent i (type t)``, or over every true type ``agent i (true type t; her type in the
        profile: t0)``."""
        if self.replaces is None:
            return f"agent {self.agent} (type {self.true_type!r})"
        return f"agent {self.agent} (true type {self.true_type!r}; her type in the profile: {self.replaces!r})"

    @property
    def diagnosis(self) -> str | None:
        """Why no ``q < 1`` makes the mix truthful at the profile, or ``None``."""
        if self.q is not None:
            return None
        return (
            f"no q < 1 makes the mix truthful: {self.who} gains "
            f"{self.exponential_gain:.3g} under the exponential mechanism by reporting "
            f"{self.lie!r}, "
            "and the commitment mechanism never punishes that lie"
        )

    def _repr_html_(self) -> str:
        """The least ``q`` and the lie attaining it, as an HTML table (Jupyter)."""
        return html_table(
            _q_rows(
                self.q,
                self.who if self.agent is not None else None,
                self.lie,
                self.exponential_gain,
                self.commitment_loss,
            ),
            title="least q of the NST mix (exact)",
        )


def _q_rows(q, who, lie, gain, loss) -> list[tuple[str, object]]:
    rows = [("least q", "none below 1" if q is None else q)]
    if who is not None:
        rows += [
            ("  attained by", f"{who} reporting {lie!r}"),
            ("  gain G under the exponential mechanism", gain),
            ("  loss L under M^P", loss),
        ]
    return rows


def least_q(
    exponential: ObjectiveExponentialMechanism,
    commitment: CommitmentMechanism,
    profile: Profile,
    audit: TruthfulnessAudit | TypeSpaceAudit | None = None,
    true_types: TrueTypes = "own",
) -> LeastQ:
    """The exact least ``q`` over every agent and lie at the profile (``audit``: the exponential
    mechanism's, if already computed, of the kind ``true_types`` asks for).

    ``true_types="all"``: over every class, hypothetical true type and lie (``L[t, x]`` does not
    depend on the others), at least the realised-type least ``q``."""
    if audit is None:
        audit = truthfulness_audit(exponential, profile, true_types)
    elif isinstance(audit, TypeSpaceAudit) != (true_types == "all"):
        raise ValidationError(
            "audit", f": a {type(audit).__name__} does not match true_types={true_types!r}"
        )
    env = exponential.environment
    gain = audit.gains
    over_all = isinstance(audit, TypeSpaceAudit)
    loss = commitment.forced_loss(np.arange(env.n_types) if over_all else profile.classes)
    loss = np.broadcast_to(loss, gain.shape)
    gaining = gain > audit.rounding_slack
    if not gaining.any():
        return LeastQ(0.0, None, None, None, 0.0, 0.0)
    unpunished = gaining & (loss <= 0)
    if unpunished.any():
        at = np.unravel_index(np.argmax(np.where(unpunished, gain, -np.inf)), gain.shape)
        q = None
    else:
        ratio = np.where(gaining, gain / np.where(gaining, gain + loss, 1.0), 0.0)
        at = np.unravel_index(np.argmax(ratio), ratio.shape)
        q = float(ratio[at])
    d, x = int(at[0]), int(at[-1])
    own = env.type_label(int(audit.classes[d]))
    true_type, replaces = (env.type_label(int(at[1])), own) if over_all else (own, None)
    return LeastQ(
        q,
        int(audit.first_agent[d]),
        true_type,
        env.type_label(x),
        float(gain[at]),
        float(loss[at]),
        replaces,
    )


#: Largest ``(multisets of the others) x types^2 x outcomes`` the dominant-strategy least ``q``
#: enumerates.
DOMINANT_LIMIT = 2e8

Method = Literal["fast", "enumerate"]

_BLOCK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class DominantLeastQ:
    """The least ``q`` making the mix dominant-strategy truthful for ``n`` agents (``None``: no ``q
    < 1``).

    ``true_type``, ``lie``, ``exponential_gain`` and ``commitment_loss`` are the attaining lie's, as
    in :class:`LeastQ`, at the worst profile ``profile`` (sorted type labels of all ``n`` agents,
    the liar's true type among them; ``None`` when no lie gains anywhere, and then ``q = 0``).
    ``n_profiles`` is the number of profiles of the others covered (multisets of the other ``n - 1``
    agents' types).

    Examples
    --------
    >>> from dpgames.mechanisms.commitment import CommitmentMechanism
    >>> from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
    >>> from dpgames.mechanisms.pricing import pricing_environment
    >>> env = pricing_environment([0.25, 0.5, 0.75, 1.0])
    >>> dom = dominant_least_q(ObjectiveExponentialMechanism(env, 0.5), CommitmentMechanism(env), 3)
    >>> round(dom.q, 4), dom.profile, dom.lie, dom.n_profiles
    (0.292, (0.875, 0.875, 0.875), 0.625, 10)
    """

    q: float | None
    true_type: object
    lie: object
    exponential_gain: float
    commitment_loss: float
    profile: tuple | None
    n_profiles: int

    @property
    def who(self) -> str:
        """``an agent of type t at the profile (...)``."""
        return f"an agent of type {self.true_type!r} at the profile {self.profile!r}"

    @property
    def diagnosis(self) -> str | None:
        """Why no ``q < 1`` makes the mix dominant-strategy truthful, or ``None``."""
        if self.q is not None:
            return None
        return (
            f"no q < 1 makes the mix dominant-strategy truthful: {self.who} gains "
            f"{self.exponential_gain:.3g} under the exponential mechanism by reporting "
            f"{self.lie!r}, "
            "and the commitment mechanism never punishes that lie"
        )

    def _repr_html_(self) -> str:
        """The dominant-strategy least ``q``, the worst profile and lie, as an HTML table
        (Jupyter)."""
        rows = _q_rows(
            self.q,
            self.who if self.profile is not None else None,
            self.lie,
            self.exponential_gain,
            self.commitment_loss,
        )
        return html_table(
            rows + [("profiles of the others covered", self.n_profiles)],
            title="least q over every profile (dominant strategies, exact)",
        )


#: The largest profile count :func:`dominant_profile_count` reports exactly (10^100): beyond it only
#: the fact that it is too large matters, and the exact binomial would cost time for nothing.
COUNT_CAP = 10**100


def dominant_profile_count(n_agents: int, n_types: int) -> int:
    """The number of multisets of ``n_agents - 1`` types out of ``n_types``: the profiles of the
    others the dominant-strategy least ``q`` enumerates, ``C(n - 1 + m - 1, m - 1)``.

    Parameters
    ----------
    n_agents : int
        The number of agents (``>= 1``).
    n_types : int
        The size of the type space (``>= 1``).

    Returns
    -------
    int
        The exact count, or :data:`COUNT_CAP` when it is larger (far beyond any enumeration).

    Raises
    ------
    ValidationError
        When ``n_agents`` or ``n_types`` is not a whole number in ``1 .. 2^63 - 1``.
    """
    n_agents = positive_int("n_agents", n_agents, high=2**63 - 1)
    n_types = positive_int("n_types", n_types, high=2**63 - 1)
    if math.lgamma(n_agents + n_types - 1) - math.lgamma(n_agents) - math.lgamma(
        n_types
    ) > math.log(COUNT_CAP):
        return COUNT_CAP
    return min(math.comb(n_agents - 1 + n_types - 1, n_types - 1), COUNT_CAP)


def dominant_affordable(environment: Environment, n_agents: int) -> bool:
    """Whether :func:`dominant_least_q` fits under :data:`DOMINANT_LIMIT` for ``n_agents`` agents.

    Parameters
    ----------
    environment : Environment
    n_agents : int

    Returns
    -------
    bool
        ``C(n - 1 + m - 1, m - 1) x m^2 x K <= DOMINANT_LIMIT``.
    """
    return _dominant_cost(environment, n_agents) <= DOMINANT_LIMIT


def _dominant_cost(environment: Environment, n_agents: int) -> int:
    return (
        dominant_profile_count(n_agents, environment.n_types)
        * environment.n_types**2
        * environment.n_outcomes
    )


def dominant_least_q(
    exponential: ObjectiveExponentialMechanism,
    commitment: CommitmentMechanism,
    n_agents: int,
    method: Method = "fast",
) -> DominantLeastQ:
    """The exact least ``q`` making the NST mix *dominant-strategy* truthful for ``n_agents``
    agents.

    Dominant-strategy truthfulness asks ``(1 - q) G - q L <= 0`` for every true type ``t``, lie
    ``x`` and reports of the others.  What is proved here (and used):

    1. The environments are anonymous (every agent has the same utility and the law depends on the
       reports' counts only), so the others' reports matter through their multiset: ``C(n - 1 + m -
       1, m - 1)`` of them.
    2. The commitment loss ``L[t, x]`` does not depend on the others (``M^P`` ignores the reports),
       and ``G / (G + L)`` increases with ``G``.  Hence the least ``q`` is ``max over (t, x) with G*
       > 0 of G*[t, x] / (G*[t, x] + L[t, x])`` with ``G*[t, x] = max over the others' multisets of
       the gain G``; none below 1 if some ``G* > 0`` meets ``L = 0``.  It is the maximum of the
       per-profile least ``q`` (:func:`least_q`) over every profile of ``n`` agents, and at most the
       theorem's ``q``.
    3. ``G*[t, x]`` is at most the same gain maximised over *every* law of the outcomes (the law
       after the lie is the truthful law tilted by ``r = exp(k (score_x - score_t))``), a supremum
       attained on a two-point law and computed in closed form (:func:`_gain_bound`).  A pair whose
       bound cannot raise the least ``q`` above what the extreme others (all ``n - 1`` of one type)
       already give is skipped.

    ``method="fast"`` uses 1-3: exact gains at the ``m`` extreme multisets, then the bound to drop
    pairs, then every multiset for the pairs left, in blocks: the laws after the reports needed at
    once by one softmax (the log-weight is ``k (sum of the others' scores + the report's score +
    offset)``), the gains by one contraction; at most O(C m^2 K) flops, no Python loop per profile.
    ``method="enumerate"`` calls :func:`least_q` at every profile of ``n`` agents (the reference;
    the tests check both against a brute force that recomputes every law).  The worst others are
    often extreme, but not always (of the gaining (type, lie) pairs on random small environments and
    on pricing grids about 3 in 4 had extreme worst others), so no multiset is skipped for a pair
    that is kept.

    Parameters
    ----------
    exponential, commitment : the mix's two mechanisms, on one environment.
    n_agents : int
        The number of agents (``>= 1``).
    method : ``"fast"`` or ``"enumerate"``.

    Returns
    -------
    DominantLeastQ

    Raises
    ------
    ValidationError
        When ``C x m^2 x K`` exceeds :data:`DOMINANT_LIMIT` (the message gives the count of
        profiles), or on a bad ``n_agents`` / ``method``.
    """
    env = exponential.environment
    n = integer("n_agents", n_agents, low=1)
    method = choice("method", method, ("fast", "enumerate"))
    if isinstance(exponential, AuctionPricing) and exponential.n_bids != n:
        raise ValidationError(
            "n_agents", f"={n}: this pricing mechanism was built for {exponential.n_bids} bidders"
        )
    count = dominant_profile_count(n, env.n_types)
    cost = _dominant_cost(env, n)
    if cost > DOMINANT_LIMIT:
        raise ValidationError(
            "n_agents",
            f"={n}: the dominant-strategy least q enumerates {count:,} profiles of the "
            f"others ({env.n_types} types), x types^2 x outcomes = {cost:,} exceeds "
            f"{DOMINANT_LIMIT:,.0f}; use the per-profile least q",
        )
    if method == "enumerate":
        return _dominant_by_enumeration(exponential, commitment, n, count)
    return _dominant_fast(exponential, commitment, n, count)


def _multisets(n_items: int, n_types: int, block: int = 4096):
    """Every count vector of ``n_items`` items over ``n_types`` types (stars and bars),
    lexicographic, in blocks of at most ``block`` rows (block x n_types arrays)."""
    bars = itertools.combinations(range(n_items + n_types - 1), n_types - 1)
    while True:
        rows = list(itertools.islice(bars, block))
        if not rows:
            return
        chunk = np.array(rows, dtype=np.int64).reshape(len(rows), n_types - 1)
        ends = np.full((chunk.shape[0], 1), n_items + n_types - 1)
        yield np.diff(np.hstack([np.full_like(ends, -1), chunk, ends]), axis=1) - 1


def _dominant_by_enumeration(em, cm, n: int, count: int) -> DominantLeastQ:
    env = em.environment
    best = None
    for counts in (row for rows in _multisets(n, env.n_types) for row in rows):
        profile = env.profile_from_counts(counts)
        least = least_q(em, cm, profile)
        if least.agent is None:
            continue
        key = (least.q is None, least.exponential_gain if least.q is None else least.q)
        if best is None or key > best[0]:
            best = (key, least, profile)
    if best is None:
        return DominantLeastQ(0.0, None, None, 0.0, 0.0, None, count)
    _, least, profile = best
    return DominantLeastQ(
        least.q,
        least.true_type,
        least.lie,
        least.exponential_gain,
        least.commitment_loss,
        _labels(env, profile.counts),
        count,
    )


def _dominant_fast(em, cm, n: int, count: int) -> DominantLeastQ:
    env = em.environment
    m = env.n_types
    values = _report_values(em)  # m (true) x m (report) x K
    slack = ROUNDING * max(1.0, env.utility_range)
    loss = cm.forced_loss(np.arange(m))
    t_all, x_all = np.nonzero(~np.eye(m, dtype=bool))
    # 1. the extreme others (all of one type): exact gains there, hence a lower bound on the least q
    best_gain = np.full((m, m), -np.inf)
    best_others = np.zeros((m, m, m), dtype=np.int64)
    extremes = (n - 1) * np.eye(m, dtype=np.int64) if n > 1 else np.zeros((1, m), dtype=np.int64)
    _scan(em, values, t_all, x_all, [extremes], best_gain, best_others)
    # 2. every multiset of the others, for the (type, lie) pairs whose bound over every law can
    # still matter
    live = _live_pairs(em, values, t_all, x_all, best_gain, loss, slack)
    if live.any():
        _scan(em, values, t_all[live], x_all[live], _multisets(n - 1, m), best_gain, best_others)
    np.fill_diagonal(best_gain, 0.0)
    gaining = best_gain > slack
    if not gaining.any():
        return DominantLeastQ(0.0, None, None, 0.0, 0.0, None, count)
    unpunished = gaining & (loss <= 0)
    if unpunished.any():
        t, x = np.unravel_index(
            np.argmax(np.where(unpunished, best_gain, -np.inf)), best_gain.shape
        )
        q = None
    else:
        ratio = np.where(gaining, best_gain / np.where(gaining, best_gain + loss, 1.0), 0.0)
        t, x = np.unravel_index(np.argmax(ratio), ratio.shape)
        q = float(ratio[t, x])
    counts = best_others[t, x].copy()
    counts[t] += 1
    return DominantLeastQ(
        q,
        env.type_label(int(t)),
        env.type_label(int(x)),
        float(best_gain[t, x]),
        float(loss[t, x]),
        _labels(env, counts),
        count,
    )


def _scan(
    em,
    values: np.ndarray,
    ts: np.ndarray,
    xs: np.ndarray,
    chunks,
    best_gain: np.ndarray,
    best_others: np.ndarray,
) -> None:
    """Raise ``best_gain[t, x]`` (and record the others attaining it) over the others' count vectors
    in ``chunks``, for the pairs ``(ts[p], xs[p])`` only; in blocks of pairs and rows of bounded
    memory."""
    k = em.environment.n_outcomes
    pair_block = max(1, _BLOCK_ELEMENTS // (2 * k))
    for chunk in chunks:
        for start in range(0, ts.size, pair_block):
            t, x = ts[start : start + pair_block], xs[start : start + pair_block]
            rows = max(1, _BLOCK_ELEMENTS // (2 * (t.size + x.size) * k))
            for first in range(0, chunk.shape[0], rows):
                part = chunk[first : first + rows]
                gains = _pair_gains(em, part, values, t, x)  # b x pairs
                top = np.argmax(gains, axis=0)
                top_gain = gains[top, np.arange(t.size)]
                better = top_gain > best_gain[t, x]
                best_gain[t[better], x[better]] = top_gain[better]
                best_others[t[better], x[better]] = part[top[better]]


def _pair_gains(
    em, others: np.ndarray, values: np.ndarray, ts: np.ndarray, xs: np.ndarray
) -> np.ndarray:
    """``G[b, p]``: the gain of true type ``ts[p]`` reporting ``xs[p]`` against the others' counts
    ``others[b]``: the laws after the reports needed (one softmax), then one contraction per
    side."""
    env = em.environment
    reports, where = np.unique(np.concatenate([ts, xs]), return_inverse=True)
    at_t, at_x = where[: ts.size], where[ts.size :]
    base = others @ env.score + env.offset  # b x K
    logits = em.scale * (base[:, None, :] + env.score[reports][None, :, :])  # b x reports x K
    logits -= logits.max(axis=2, keepdims=True)
    law = np.exp(logits)
    law /= law.sum(axis=2, keepdims=True)
    lied = np.einsum("bps,ps->bp", law[:, at_x], values[ts, xs])
    truthful = np.einsum("bps,ps->bp", law[:, at_t], values[ts, ts])
    return lied - truthful


#: Largest ``types^2 x outcomes^2`` for which the pairs are pruned by their bound over every law.
PRUNE_LIMIT = 5e7


def _live_pairs(em, values, ts, xs, best_gain, loss, slack) -> np.ndarray:
    """Which pairs may still raise the least ``q`` (or, when a gaining lie goes unpunished, the
    largest unpunished gain) above what the extreme others gave: those whose bound
    :func:`_gain_bound` exceeds it."""
    env = em.environment
    if env.n_types**2 * env.n_outcomes**2 > PRUNE_LIMIT:
        return np.ones(ts.size, dtype=bool)
    bound = np.array([_gain_bound(em, values, int(t), int(x)) for t, x in zip(ts, xs)])
    bound = bound * (1 + 1e-9) + slack  # rounding: keep, never drop
    known, pair_loss = best_gain[ts, xs], loss[ts, xs]
    improvable = bound > np.maximum(known, slack)
    unpunished = (known > slack) & (pair_loss <= 0)
    if unpunished.any():  # q is None: only the gain matters
        return improvable & (pair_loss <= 0)
    gaining = known > slack
    ratio = np.where(gaining, known / np.where(gaining, known + pair_loss, 1.0), 0.0)
    reach = np.where(
        pair_loss > 0, bound / (bound + np.where(pair_loss > 0, pair_loss, 1.0)), np.inf
    )
    return improvable & (reach > ratio.max())


def _gain_bound(em, values: np.ndarray, t: int, x: int) -> float:
    """``sup over every law P of the outcomes of E_P[r V_tx] / E_P[r] - E_P[V_tt]``, ``r = exp(k
    (score_x - score_t))``: at least the gain of ``t`` reporting ``x`` against any others (the law
    after the lie is the truthful law tilted by ``r``).  ``(E[r V], E[r], E[V_tt])`` ranges over the
    convex hull of the points ``(r_s V_s, r_s, V_tt,s)``; at a fixed ``E[r]`` the objective is
    linear, so it peaks at a vertex of that slice of the hull, a point on an edge: a two-point law.
    On the law putting tilted weight ``l`` on ``b`` and ``1 - l`` on ``a`` (``rho = r_b / r_a``;
    untilted weight ``w = l / (l + (1 - l) rho)``) the objective is ``(1 - l) V_a + l V_b - (1 - w)
    u_a - w u_b``, with one stationary point, in closed form."""
    env = em.environment
    log_r = em.scale * (env.score[x] - env.score[t])
    v, u = values[t, x], values[t, t]
    log_rho = np.clip(log_r[None, :] - log_r[:, None], -700.0, 700.0)  # [a, b]
    rho = np.exp(log_rho)
    dv, du = v[None, :] - v[:, None], u[None, :] - u[:, None]

    def objective(lam):
        w = lam / (lam + (1 - lam) * rho)
        return v[:, None] + lam * dv - u[:, None] - w * du

    with np.errstate(divide="ignore", invalid="ignore"):
        square = du * rho / dv  # (l + (1 - l) rho)^2 at the peak
        lam = np.where((square > 0) & (rho != 1), (np.sqrt(square) - rho) / (1 - rho), 0.0)
    lam = np.clip(np.nan_to_num(lam, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
    best = np.maximum(np.maximum(objective(0.0), objective(1.0)), objective(lam))
    return float(best.max())


def _report_values(em: ObjectiveExponentialMechanism) -> np.ndarray:
    """``V[t, x, s]``: the utility at ``s`` of true type ``t`` having reported ``x`` (her best
    reaction for ``t`` when reactions are free, the reaction of ``x`` when forced)."""
    env = em.environment
    m, k = env.n_types, env.n_outcomes
    if em.reactions == "free":
        return np.broadcast_to(env.best_utility[:, None, :], (m, m, k))
    return env.utility[
        np.arange(m)[:, None, None], np.arange(k)[None, None, :], env.best_reaction[None, :, :]
    ]


def _labels(env: Environment, counts: np.ndarray) -> tuple:
    return tuple(env.type_label(int(t)) for t in np.repeat(np.arange(env.n_types), counts))


@dataclass(frozen=True)
class NSTReport:
    """Everything item 4 of the NST analysis asks for, at one profile.

    ``mix_audit`` is the audit of the mix at the exact least ``q`` (``None`` when there is none).
    ``type_space_least`` and ``type_space_mix_audit`` are the same over every hypothetical true type
    (``None`` when that audit is above ``TYPE_SPACE_LIMIT``, or, for the mix, when there is no
    ``q``). ``dominant_least`` is the least ``q`` over every profile of ``n`` agents
    (:func:`dominant_least_q`; ``None`` above :data:`DOMINANT_LIMIT`): per-profile ``q <= dominant
    <= theorem``."""

    gap: Gap
    theorem: TheoremQ
    least: LeastQ
    exponential_audit: TruthfulnessAudit
    mix_audit: TruthfulnessAudit | None
    optimum: float
    optimal_outcome: int
    exponential_objective: float
    commitment_objective: float
    mix_objective: float | None
    type_space_least: LeastQ | None = None
    type_space_mix_audit: TypeSpaceAudit | None = None
    dominant_least: DominantLeastQ | None = None

    def _repr_html_(self) -> str:
        """The gap, the three ``q`` (theorem, per profile, dominant) and the objectives, as an HTML
        table."""
        none = "none (gamma = 0)"
        rows = [
            ("gap gamma", self.gap.gamma),
            (
                "q from the theorem, G = (e^eps - 1) U_max",
                none if self.theorem.q_exact_form is None else self.theorem.q_exact_form,
            ),
            (
                "q from the theorem, G = 2 eps U_max",
                none if self.theorem.q_dwork_roth is None else self.theorem.q_dwork_roth,
            ),
            (
                "exact least q at this profile",
                "none below 1" if self.least.q is None else self.least.q,
            ),
        ]
        if self.type_space_least is not None:
            every = self.type_space_least
            rows.append(
                (
                    "exact least q over every true type",
                    "none below 1" if every.q is None else every.q,
                )
            )
        dom = self.dominant_least
        rows.append(
            (
                "exact least q over every profile (dominant)",
                "not computed (too large)"
                if dom is None
                else "none below 1"
                if dom.q is None
                else dom.q,
            )
        )
        rows += [
            ("largest gain from a lie, exponential mechanism", self.exponential_audit.max_gain),
            ("optimal objective", self.optimum),
            ("E[objective], exponential mechanism", self.exponential_objective),
            ("E[objective], M^P", self.commitment_objective),
        ]
        if self.mix_objective is not None:
            rows.append(("E[objective], the mix at the exact q", self.mix_objective))
        return html_table(rows, title="NST mix (exact)")


def nst_report(
    exponential: ObjectiveExponentialMechanism, commitment: CommitmentMechanism, profile: Profile
) -> NSTReport:
    """Gap, the theorem's ``q`` (both forms), the exact least ``q``, the exponential mechanism's and
    the mix's exact audits, and the objective of the optimum, each mechanism alone and the mix; the
    least ``q`` and the mix's audit over every true type too, when affordable
    (:func:`type_space_affordable`), and the dominant-strategy least ``q`` when affordable
    (:func:`dominant_affordable`)."""
    env = exponential.environment
    gap = commitment.gap()
    theorem = theorem_q(exponential.epsilon, gap, env.utility_range)
    em_audit = truthfulness_audit(exponential, profile)
    least = least_q(exponential, commitment, profile, em_audit)
    best, optimum = env.optimum(profile)
    em_value = exponential.expected_objective(profile)
    cm_value = commitment.expected_objective(profile)
    mix_audit = mix_value = None
    if least.q is not None:
        mix = NSTMix(exponential, commitment, least.q)
        mix_audit = truthfulness_audit(mix, profile)
        mix_value = mix.expected_objective(profile)
    all_least = all_mix_audit = None
    if type_space_affordable(env, profile):
        all_least = least_q(exponential, commitment, profile, true_types="all")
        if all_least.q is not None:
            all_mix_audit = truthfulness_audit(
                NSTMix(exponential, commitment, all_least.q), profile, "all"
            )
    dominant = (
        dominant_least_q(exponential, commitment, profile.n)
        if dominant_affordable(env, profile.n)
        else None
    )
    return NSTReport(
        gap,
        theorem,
        least,
        em_audit,
        mix_audit,
        optimum,
        best,
        em_value,
        cm_value,
        mix_value,
        all_least,
        all_mix_audit,
        dominant,
    )
