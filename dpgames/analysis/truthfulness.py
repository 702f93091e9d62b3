"""Exact incentive audits for finite environments, and the exact least ``q`` of the NST mix.

For a profile of reported types (everyone truthful), every agent and every lie: the agent's expected
utility if she alone reports the lie, against her truthful utility.  Agents of the same type face the
same others (the profile minus one agent of their type), so one row per *class* covers all of them:
the audit is D x m (distinct types present x types), whatever the number of agents, and each entry
is exact (:mod:`dpgames.mechanisms.deviations`).  This is ex-post truthfulness at the profile: a
dominant strategy needs it at every profile, which the theorem's ``q`` guarantees.

The least ``q`` (Nissim, Smorodinsky & Tennenholtz 2012): under the mix an agent's gain from a lie is
``(1 - q) G - q L`` with ``G`` her gain under the exponential mechanism and ``L >= 0`` her loss under
the commitment mechanism; it is ``<= 0`` iff ``q >= G / (G + L)`` (when ``G > 0``).  The least ``q``
making every agent truthful is therefore ``max over (agent, lie) with G > 0 of G / (G + L)``; it does
not exist below 1 when some lie gains (``G > 0``) and is never punished (``L = 0``).

Over every *hypothetical* true type (``true_types="all"``): for every class ``a`` (one agent of it is
replaced; the others are the profile minus that agent, all truthful), every true type ``t`` of the
type space and every report ``x``, the gain ``E[u(t, .) | x] - E[u(t, .) | t]``; a D x m x m table,
O(D m^2 K), refused above :data:`~dpgames.mechanisms.deviations.TYPE_SPACE_LIMIT`.  This is "every
agent, true type and lie": the least ``q`` over it (the commitment loss ``L`` depends on ``t`` and ``x``
only) makes the mix truthful whatever type the replaced agent has, and is at least the realised-type one.

Gains within ``1e-12 x max(1, U_max)`` of zero are rounding, not incentives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from dpgames.mechanisms.commitment import CommitmentMechanism, Gap
from dpgames.mechanisms.deviations import TYPE_SPACE_LIMIT, check_type_space_size
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.nst_mix import NSTMix, TheoremQ, theorem_q
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism

ROUNDING = 1e-12

TrueTypes = Literal["own", "all"]


class AuditableMechanism(Protocol):
    """A mechanism on an environment that knows the exact expected utility of any unilateral lie."""

    environment: Environment

    def deviation_utilities(self, profile: Profile) -> np.ndarray: ...


class _Rounding:
    """Shared by the audits: the rounding slack and the truthfulness verdict from ``max_gain``."""

    environment: Environment

    @property
    def rounding_slack(self) -> float:
        """Gains below this are floating-point rounding: ``1e-12 x max(1, U_max)``."""
        return ROUNDING * max(1.0, self.environment.utility_range)

    def is_truthful(self, tol: float = 0.0) -> bool:
        """No agent gains more than ``tol`` (plus rounding) from any lie."""
        return self.max_gain <= tol + self.rounding_slack


@dataclass(frozen=True)
class TruthfulnessAudit(_Rounding):
    """Gains from lying at a profile: ``gains[d, x]`` for the class ``classes[d]`` reporting type ``x``.

    ``worst_case`` names the agent (the first of her class), her true type, the lie and the gain."""

    environment: Environment
    classes: np.ndarray
    first_agent: np.ndarray
    truthful_utility: np.ndarray
    gains: np.ndarray

    @property
    def best_lie(self) -> np.ndarray:
        """Per class, the index of the most profitable lie (another type; its own when it is the only one)."""
        if self.gains.shape[1] == 1:
            return self.classes.copy()
        lies = self.gains.copy()
        lies[np.arange(self.classes.size), self.classes] = -np.inf
        return np.argmax(lies, axis=1)

    @property
    def best_gain(self) -> np.ndarray:
        """Per class, the gain of its most profitable lie (negative: every lie strictly loses)."""
        return self.gains[np.arange(self.classes.size), self.best_lie]

    @property
    def max_gain(self) -> float:
        """The largest gain over every agent and every lie (``<= 0`` up to rounding: truthful)."""
        return float(self.best_gain.max())

    @property
    def worst_case(self) -> dict[str, object]:
        """The most profitable lie of all: agent, true type, lie, gain."""
        d = int(np.argmax(self.best_gain))
        env = self.environment
        return {"agent": int(self.first_agent[d]), "true_type": env.type_label(int(self.classes[d])),
                "lie": env.type_label(int(self.best_lie[d])), "gain": float(self.best_gain[d])}


@dataclass(frozen=True)
class TypeSpaceAudit(_Rounding):
    """Gains over every hypothetical true type: ``gains[d, t, x]`` for an agent of true type ``t``
    reporting ``x`` in place of one agent of class ``classes[d]`` (the others truthful).

    ``worst_case`` names the replaced agent (the first of her class), the type she had in the profile
    (``replaces``), the true type, the lie and the gain."""

    environment: Environment
    classes: np.ndarray
    first_agent: np.ndarray
    gains: np.ndarray

    @property
    def _lies(self) -> np.ndarray:
        """The gains with truth-telling masked out (kept when it is the only report)."""
        m = self.gains.shape[1]
        if m == 1:
            return self.gains
        return np.where(np.eye(m, dtype=bool)[None], -np.inf, self.gains)

    @property
    def max_gain(self) -> float:
        """The largest gain over every class, true type and lie (``<= 0`` up to rounding: truthful)."""
        return float(self._lies.max())

    @property
    def worst_case(self) -> dict[str, object]:
        """The most profitable lie of all: agent (replaced), the type she replaces, true type, lie, gain."""
        lies = self._lies
        d, t, x = np.unravel_index(np.argmax(lies), lies.shape)
        env = self.environment
        return {"agent": int(self.first_agent[d]), "replaces": env.type_label(int(self.classes[d])),
                "true_type": env.type_label(int(t)), "lie": env.type_label(int(x)), "gain": float(lies[d, t, x])}


def audit_from_utilities(environment: Environment, profile: Profile, utilities: np.ndarray) -> TruthfulnessAudit:
    """The audit of a D x m table of deviation utilities (rows: the profile's classes)."""
    rows = np.arange(profile.classes.size)
    truthful = utilities[rows, profile.classes]
    gains = utilities - truthful[:, None]
    gains[rows, profile.classes] = 0.0
    return TruthfulnessAudit(environment, profile.classes, profile.first_agent, truthful, gains)


def truthfulness_audit(mechanism: AuditableMechanism, profile: Profile,
                       true_types: TrueTypes = "own") -> TruthfulnessAudit | TypeSpaceAudit:
    """Exact gain of every (agent, lie) at the profile, by class: O(D m K) for most mechanisms here.

    ``true_types="all"``: every (class, hypothetical true type, lie) instead, a :class:`TypeSpaceAudit`
    (O(D m^2 K); ValueError when ``D m^2 K`` exceeds ``TYPE_SPACE_LIMIT``)."""
    if true_types == "own":
        return audit_from_utilities(mechanism.environment, profile, mechanism.deviation_utilities(profile))
    if true_types != "all":
        raise ValueError(f"true_types must be 'own' or 'all', got {true_types!r}")
    env = mechanism.environment
    if not hasattr(mechanism, "type_space_deviation_utilities"):
        raise ValueError(f"true_types='all': {type(mechanism).__name__} has no audit over every true type")
    check_type_space_size(profile.classes.size, env.n_types, env.n_outcomes)
    utilities = mechanism.type_space_deviation_utilities(profile)
    types = np.arange(env.n_types)
    gains = utilities - utilities[:, types, types][:, :, None]
    gains[:, types, types] = 0.0
    return TypeSpaceAudit(env, profile.classes, profile.first_agent, gains)


def type_space_affordable(environment: Environment, profile: Profile) -> bool:
    """Whether the audit over every true type fits under ``TYPE_SPACE_LIMIT`` at this profile."""
    return profile.classes.size * environment.n_types ** 2 * environment.n_outcomes <= TYPE_SPACE_LIMIT


@dataclass(frozen=True)
class LeastQ:
    """The least ``q`` making the mix truthful at a profile (``None``: no ``q < 1`` does).

    ``agent``, ``true_type`` and ``lie`` attain it (``None`` when no lie gains under the exponential
    mechanism, and then ``q = 0``); ``exponential_gain`` and ``commitment_loss`` are that lie's ``G``
    and ``L``.  Over every true type, ``replaces`` is the profile type of the agent whose place the
    hypothetical type takes (``None`` for the realised-type least ``q``)."""

    q: float | None
    agent: int | None
    true_type: object
    lie: object
    exponential_gain: float
    commitment_loss: float
    replaces: object = None

    @property
    def who(self) -> str:
        """``agent i (type t)``, or over every true type ``agent i (true type t; her type in the profile: t0)``."""
        if self.replaces is None:
            return f"agent {self.agent} (type {self.true_type!r})"
        return f"agent {self.agent} (true type {self.true_type!r}; her type in the profile: {self.replaces!r})"

    @property
    def diagnosis(self) -> str | None:
        if self.q is not None:
            return None
        return (f"no q < 1 makes the mix truthful: {self.who} gains "
                f"{self.exponential_gain:.3g} under the exponential mechanism by reporting {self.lie!r}, "
                "and the commitment mechanism never punishes that lie")


def least_q(exponential: ObjectiveExponentialMechanism, commitment: CommitmentMechanism, profile: Profile,
            audit: TruthfulnessAudit | TypeSpaceAudit | None = None, true_types: TrueTypes = "own") -> LeastQ:
    """The exact least ``q`` over every agent and lie at the profile (``audit``: the exponential
    mechanism's, if already computed, of the kind ``true_types`` asks for).

    ``true_types="all"``: over every class, hypothetical true type and lie (``L[t, x]`` does not depend
    on the others), at least the realised-type least ``q``."""
    if audit is None:
        audit = truthfulness_audit(exponential, profile, true_types)
    elif isinstance(audit, TypeSpaceAudit) != (true_types == "all"):
        raise ValueError(f"audit: a {type(audit).__name__} does not match true_types={true_types!r}")
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
    return LeastQ(q, int(audit.first_agent[d]), true_type, env.type_label(x), float(gain[at]), float(loss[at]),
                  replaces)


@dataclass(frozen=True)
class NSTReport:
    """Everything item 4 of the NST analysis asks for, at one profile.

    ``mix_audit`` is the audit of the mix at the exact least ``q`` (``None`` when there is none).
    ``type_space_least`` and ``type_space_mix_audit`` are the same over every hypothetical true type
    (``None`` when that audit is above ``TYPE_SPACE_LIMIT``, or, for the mix, when there is no ``q``)."""

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


def nst_report(exponential: ObjectiveExponentialMechanism, commitment: CommitmentMechanism,
               profile: Profile) -> NSTReport:
    """Gap, the theorem's ``q`` (both forms), the exact least ``q``, the exponential mechanism's and the
    mix's exact audits, and the objective of the optimum, each mechanism alone and the mix; the least
    ``q`` and the mix's audit over every true type too, when affordable (:func:`type_space_affordable`)."""
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
        mix_value = (1 - least.q) * em_value + least.q * cm_value
    all_least = all_mix_audit = None
    if type_space_affordable(env, profile):
        all_least = least_q(exponential, commitment, profile, true_types="all")
        if all_least.q is not None:
            all_mix_audit = truthfulness_audit(NSTMix(exponential, commitment, all_least.q), profile, "all")
    return NSTReport(gap, theorem, least, em_audit, mix_audit, optimum, best, em_value, cm_value, mix_value,
                     all_least, all_mix_audit)
