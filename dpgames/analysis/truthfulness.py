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

Gains within ``1e-12 x max(1, U_max)`` of zero are rounding, not incentives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dpgames.mechanisms.commitment import CommitmentMechanism, Gap
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.nst_mix import NSTMix, TheoremQ, theorem_q
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism

ROUNDING = 1e-12


class AuditableMechanism(Protocol):
    """A mechanism on an environment that knows the exact expected utility of any unilateral lie."""

    environment: Environment

    def deviation_utilities(self, profile: Profile) -> np.ndarray: ...


@dataclass(frozen=True)
class TruthfulnessAudit:
    """Gains from lying at a profile: ``gains[d, x]`` for the class ``classes[d]`` reporting type ``x``.

    ``worst_case`` names the agent (the first of her class), her true type, the lie and the gain."""

    environment: Environment
    classes: np.ndarray
    first_agent: np.ndarray
    truthful_utility: np.ndarray
    gains: np.ndarray

    @property
    def rounding_slack(self) -> float:
        """Gains below this are floating-point rounding: ``1e-12 x max(1, U_max)``."""
        return ROUNDING * max(1.0, self.environment.utility_range)

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

    def is_truthful(self, tol: float = 0.0) -> bool:
        """No agent gains more than ``tol`` (plus rounding) from any lie."""
        return self.max_gain <= tol + self.rounding_slack


def audit_from_utilities(environment: Environment, profile: Profile, utilities: np.ndarray) -> TruthfulnessAudit:
    """The audit of a D x m table of deviation utilities (rows: the profile's classes)."""
    rows = np.arange(profile.classes.size)
    truthful = utilities[rows, profile.classes]
    gains = utilities - truthful[:, None]
    gains[rows, profile.classes] = 0.0
    return TruthfulnessAudit(environment, profile.classes, profile.first_agent, truthful, gains)


def truthfulness_audit(mechanism: AuditableMechanism, profile: Profile) -> TruthfulnessAudit:
    """Exact gain of every (agent, lie) at the profile, by class: O(D m K) for most mechanisms here."""
    return audit_from_utilities(mechanism.environment, profile, mechanism.deviation_utilities(profile))


@dataclass(frozen=True)
class LeastQ:
    """The least ``q`` making the mix truthful at a profile (``None``: no ``q < 1`` does).

    ``agent``, ``true_type`` and ``lie`` attain it (``None`` when no lie gains under the exponential
    mechanism, and then ``q = 0``); ``exponential_gain`` and ``commitment_loss`` are that lie's ``G``
    and ``L``."""

    q: float | None
    agent: int | None
    true_type: object
    lie: object
    exponential_gain: float
    commitment_loss: float

    @property
    def diagnosis(self) -> str | None:
        if self.q is not None:
            return None
        return (f"no q < 1 makes the mix truthful: agent {self.agent} (type {self.true_type!r}) gains "
                f"{self.exponential_gain:.3g} under the exponential mechanism by reporting {self.lie!r}, "
                "and the commitment mechanism never punishes that lie")


def least_q(exponential: ObjectiveExponentialMechanism, commitment: CommitmentMechanism, profile: Profile,
            audit: TruthfulnessAudit | None = None) -> LeastQ:
    """The exact least ``q`` over every agent and lie at the profile (``audit``: the exponential
    mechanism's, if already computed)."""
    audit = truthfulness_audit(exponential, profile) if audit is None else audit
    gain = audit.gains
    loss = commitment.forced_loss(profile.classes)
    gaining = gain > audit.rounding_slack
    env = exponential.environment
    if not gaining.any():
        return LeastQ(0.0, None, None, None, 0.0, 0.0)
    unpunished = gaining & (loss <= 0)
    if unpunished.any():
        d, x = np.unravel_index(np.argmax(np.where(unpunished, gain, -np.inf)), gain.shape)
        q = None
    else:
        ratio = np.where(gaining, gain / np.where(gaining, gain + loss, 1.0), 0.0)
        d, x = np.unravel_index(np.argmax(ratio), ratio.shape)
        q = float(ratio[d, x])
    return LeastQ(q, int(audit.first_agent[d]), env.type_label(int(audit.classes[d])), env.type_label(int(x)),
                  float(gain[d, x]), float(loss[d, x]))


@dataclass(frozen=True)
class NSTReport:
    """Everything item 4 of the NST analysis asks for, at one profile.

    ``mix_audit`` is the audit of the mix at the exact least ``q`` (``None`` when there is none)."""

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


def nst_report(exponential: ObjectiveExponentialMechanism, commitment: CommitmentMechanism,
               profile: Profile) -> NSTReport:
    """Gap, the theorem's ``q`` (both forms), the exact least ``q``, the exponential mechanism's and the
    mix's exact audits, and the objective of the optimum, each mechanism alone and the mix."""
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
    return NSTReport(gap, theorem, least, em_audit, mix_audit, optimum, best, em_value, cm_value, mix_value)
