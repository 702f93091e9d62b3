"""The exponential mechanism over an environment's outcomes, scored by the designer's objective.

Score of outcome ``s`` on reported types ``t'``: ``F(t', s) = sum_i score[t'_i, s] + offset[s]``
(the objective if every agent reacts best for her report: welfare, revenue).  Its sensitivity
``Delta`` is the environment's, computed exactly (:attr:`Environment.sensitivity`); on facility
location the score is minus the total distance of the reported locations to their nearest open
facility and ``Delta`` is at most the graph's diameter.  The outcome is drawn with probability ``~
exp(eps F / (2 Delta))``: ``eps``-DP in any one agent's report (Dwork & Roth Thm 3.10), ``F >= OPT -
(2 Delta / eps)(ln |O| + t)`` with probability ``1 - e^-t`` (Thm 3.11).

Reactions, two models:

* ``"free"`` (NST): after the outcome every agent reacts best for her *true* type;
* ``"forced"``: the mechanism implements the reaction of the *reported* type, ``r(t'_i, s)``, as an
  auction allocates by the bids (the digital-goods auction sells to every bid at least the price).

Either way no lie gains more than ``(e^eps - 1) U_max`` (the law moves by a factor at most
``e^eps``, and a forced reaction is never better than a free one): the exact form of Prop 10.1.
"""

from __future__ import annotations

from typing import Literal, cast

import numpy as np

from dpgames.mechanisms.deviations import deviations, deviations_by_true_type
from dpgames.mechanisms.environment import OUTCOME_NEIGHBOURING, Draw, Environment, Profile
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.exponential import Convention, ExponentialMechanism
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, non_negative

Reactions = Literal["free", "forced"]


class ObjectiveExponentialMechanism:
    """The exponential mechanism on an environment, with the exact law and exact deviation
    utilities.

    Outcome ``s`` with probability ``~ exp(eps F(t', s) / (2 Delta))``, ``F`` the objective of the
    reported types: ``eps``-DP in one agent's report (Dwork & Roth Thm 3.10), near-optimal (Thm
    3.11).

    Parameters
    ----------
    environment : Environment
        Outcomes, types, reactions and the objective (the score).
    epsilon : float
        Privacy parameter, ``> 0``.
    convention : {"dwork-roth", "mcsherry-talwar"}, default "dwork-roth"
        Weights ``exp(eps F / (2 Delta))`` (eps-DP) or McSherry & Talwar's ``exp(eps F)`` (2 eps
        Delta-DP).
    sensitivity : float, optional
        ``Delta``; default the environment's exact one.  A larger value is also valid (less
        accurate, same privacy); a smaller one is refused.
    reactions : {"free", "forced"}, default "free"
        Agents react for their true type (NST) or as their report would (see the module docstring).

    Raises
    ------
    ValidationError
        If ``reactions`` is unknown, the objective does not depend on the reports (``Delta = 0``),
        ``sensitivity`` is below the environment's, or ``epsilon`` is not a number ``> 0``.

    Examples
    --------
    >>> from dpgames import ObjectiveExponentialMechanism
    >>> from dpgames.mechanisms import pricing_environment
    >>> env = pricing_environment([0.25, 0.5, 0.75, 1.0])  # value types 0.125, 0.375, 0.625, 0.875
    >>> profile = env.profile([0.875, 0.875])
    >>> env.objective_values(profile).tolist()                 # revenue at each price
    [0.5, 1.0, 1.5, 0.0]
    >>> em = ObjectiveExponentialMechanism(env, epsilon=1.0)
    >>> em.distribution(profile).probabilities.round(3).tolist()
    [0.198, 0.276, 0.385, 0.142]
    >>> em.guarantee.epsilon, em.run(profile, rng=0).outcome
    (1.0, 2)
    """

    def __init__(
        self,
        environment: Environment,
        epsilon: float,
        convention: Convention = "dwork-roth",
        sensitivity: float | None = None,
        reactions: Reactions = "free",
    ):
        if reactions not in ("free", "forced"):
            raise ValidationError("reactions", f"must be 'free' or 'forced', got {reactions!r}")
        delta = (
            environment.sensitivity
            if sensitivity is None
            else non_negative("sensitivity", sensitivity)
        )
        if not delta > 0:
            raise ValidationError(
                "sensitivity",
                ": the objective does not depend on the reports (sensitivity 0): "
                "there is nothing for the exponential mechanism to protect",
            )
        if delta < environment.sensitivity * (1 - 1e-12):
            raise ValidationError(
                "sensitivity",
                f"{delta:g} is below the environment's {environment.sensitivity:g}: "
                "the mechanism would not be eps-DP",
            )
        self.environment = environment
        self.mechanism = ExponentialMechanism(epsilon, delta, convention)
        self.reactions = reactions

    @property
    def epsilon(self) -> float:
        """The privacy parameter ``eps``."""
        return self.mechanism.epsilon

    @property
    def scale(self) -> float:
        """The factor on the score in the log-weight (``eps / (2 Delta)``)."""
        return self.mechanism.scale

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """``eps``-DP in the reports for the outcome (Dwork & Roth Thm 3.10; McSherry-Talwar
        weights: ``2 eps Delta``)."""
        g = self.mechanism.guarantee
        return PrivacyGuarantee(
            g.epsilon, 0.0, Neighbouring.REPLACE_ONE.described(OUTCOME_NEIGHBOURING)
        )

    def distribution(self, profile: Profile) -> FiniteDistribution:
        """The exact law of the outcome (labels: outcome indices)."""
        return self.mechanism.distribution(self.environment.objective_values(profile))

    def expected_objective(self, profile: Profile) -> float:
        """``E[objective]`` under truthful reports, exactly."""
        return float(self.distribution(profile).expect(self.environment.objective_values(profile)))

    def deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m``: the expected utility of an agent of each class (her true type) if she reports
        each type while the others report truthfully; she reacts best for her true type ("free") or
        as her report would ("forced")."""
        self.environment._check(profile)
        rows = profile.classes
        dev = deviations(
            self.distribution(profile).log_probabilities,
            self.environment.score,
            self.scale,
            rows,
            self._utility_terms(rows),
        )
        return cast(np.ndarray, sum(dev.expectations))  # a non-empty list of arrays

    def type_space_deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m x m``: ``[a, t, x]`` the expected utility of an agent of true type ``t`` (any
        type of the space) reporting ``x``, when the others are the profile minus one agent of class
        ``a``, all truthful.  Exact; O(D m^2 K)."""
        self.environment._check(profile)
        env = self.environment
        dev = deviations_by_true_type(
            self.distribution(profile).log_probabilities,
            env.score,
            self.scale,
            profile.classes,
            self._utility_terms(slice(None)),
        )
        return cast(np.ndarray, sum(dev.expectations))  # a non-empty list of arrays

    def _utility_terms(
        self, true_types: np.ndarray | slice
    ) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """The deviation terms of the deviator's utility, rows = ``true_types``: her best utility
        ("free") or, per reaction, her utility times the indicator that her report reacts so
        ("forced")."""
        env = self.environment
        if self.reactions == "free":
            return [(env.best_utility[true_types], None)]
        return [
            (env.utility[true_types][:, :, r], mask) for r, mask in enumerate(env.reaction_masks)
        ]

    def run(self, profile: Profile, rng: RNGLike = None) -> Draw:
        """Draw an outcome; every agent reacts as her (reported) type would."""
        s = int(self.distribution(profile).sample_indices(rng=as_generator(rng)))
        return Draw(
            s, self.environment.best_reaction[profile.type_indices, s], self.reactions == "forced"
        )
