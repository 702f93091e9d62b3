"""The exact least ``q`` of the NST mix, and the full NST analysis at a profile.

The least ``q`` (Nissim, Smorodinsky & Tennenholtz 2012): under the mix an agent's gain from a lie is
``(1 - q) G - q L`` with ``G`` her gain under the exponential mechanism and ``L >= 0`` her loss under
the commitment mechanism; it is ``<= 0`` iff ``q >= G / (G + L)`` (when ``G > 0``).  The least ``q``
making every agent truthful is therefore ``max over (agent, lie) with G > 0 of G / (G + L)``; it does
not exist below 1 when some lie gains (``G > 0``) and is never punished (``L = 0``).

Over every hypothetical true type the least ``q`` (the commitment loss ``L`` depends on ``t`` and ``x``
only) makes the mix truthful whatever type the replaced agent has, and is at least the realised-type one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpgames.analysis.truthfulness import (TrueTypes, TruthfulnessAudit, TypeSpaceAudit, truthfulness_audit,
                                           type_space_affordable)
from dpgames.mechanisms.commitment import CommitmentMechanism, Gap
from dpgames.mechanisms.environment import Profile
from dpgames.mechanisms.nst_mix import NSTMix, TheoremQ, theorem_q
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.validation import ValidationError


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
        raise ValidationError("audit", f": a {type(audit).__name__} does not match true_types={true_types!r}")
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
        mix_value = mix.expected_objective(profile)
    all_least = all_mix_audit = None
    if type_space_affordable(env, profile):
        all_least = least_q(exponential, commitment, profile, true_types="all")
        if all_least.q is not None:
            all_mix_audit = truthfulness_audit(NSTMix(exponential, commitment, all_least.q), profile, "all")
    return NSTReport(gap, theorem, least, em_audit, mix_audit, optimum, best, em_value, cm_value, mix_value,
                     all_least, all_mix_audit)
