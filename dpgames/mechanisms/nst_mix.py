"""Exact truthfulness by mixing (Nissim, Smorodinsky & Tennenholtz 2012; Dwork & Roth 10.2.3).

With probability ``1 - q`` run the exponential mechanism ``M_eps`` (near-optimal, but a lie can gain
up to ``G``), with probability ``q`` the commitment mechanism ``M^P`` (a lie loses at least ``gamma
/ |P|``). An agent's gain from any lie is linear in ``q``:

    gain(q) = (1 - q) * gain under M_eps - q * loss under M^P,

so the mix is exactly dominant-strategy truthful as soon as ``(1 - q) G <= q gamma / |P|``, i.e.

    q >= G |P| / (G |P| + gamma),

with ``G = 2 eps U_max`` in Dwork & Roth's form (utilities in ``[0, U_max]``, valid for
``e^eps - 1 <= 2 eps``, i.e. eps <= 1.256) or ``G = (e^eps - 1) U_max`` exactly (the law moves by a
factor at most ``e^eps``).  :func:`theorem_q` gives both; the exact least ``q`` for a profile is in
:func:`dpgames.analysis.nst.least_q`.

The price is welfare: the per-agent loss is at most ``(2 Delta / (eps n)) (ln|O| + 1) + q rho`` (Thm
3.11 in expectation, plus ``M^P``'s loss, ``rho`` the range of one agent's objective).  The ``eps``
balancing the two terms (:func:`balanced_epsilon`) gives a loss of order
``sqrt(|O| ln|O| / (gamma n))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpgames.mechanisms.commitment import CommitmentMechanism, Gap
from dpgames.mechanisms.environment import OUTCOME_NEIGHBOURING, Draw, Profile
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, non_negative, positive, probability


class NSTMix:
    """``(1 - q) M_eps + q M^P``: the outcome is ``eps``-DP in the reports (a mixture of an eps-DP
    law and a constant one); reactions are forced only in the ``M^P`` branch.

    Exactly dominant-strategy truthful once ``q`` reaches the theorem's bound (NST 2012; Dwork &
    Roth 10.2.3; :func:`theorem_q`); the least such ``q`` for a profile is
    :func:`dpgames.analysis.nst.least_q` (and :func:`~dpgames.analysis.nst.nst_report`).

    Parameters
    ----------
    exponential : ObjectiveExponentialMechanism
        ``M_eps``, run with probability ``1 - q``.
    commitment : CommitmentMechanism
        ``M^P``, on the same environment object, run with probability ``q``.
    q : float
        The mixing weight, in ``[0, 1]``.

    Raises
    ------
    ValidationError
        If the two mechanisms do not share one environment, or ``q`` is not in ``[0, 1]``.

    Examples
    --------
    >>> from dpgames import (
    ...     CommitmentMechanism,
    ...     NSTMix,
    ...     ObjectiveExponentialMechanism,
    ...     nst_report,
    ...     truthfulness_audit,
    ... )
    >>> from dpgames.mechanisms import pricing_environment
    >>> env = pricing_environment([0.25, 0.5, 0.75, 1.0])  # value types 0.125, 0.375, 0.625, 0.875
    >>> profile = env.profile([0.875, 0.875])
    >>> em = ObjectiveExponentialMechanism(
    ...     env, epsilon=1.0
    ... )  # revenue; buyers react for their true value
    >>> cm = CommitmentMechanism(env)
    >>> round(truthfulness_audit(em, profile).max_gain, 4)      # under M_eps alone a lie pays
    0.0268
    >>> q = nst_report(em, cm, profile).least.q                 # the least q, exact
    >>> round(q, 4)
    0.4615
    >>> mix = NSTMix(em, cm, q)
    >>> truthfulness_audit(mix, profile).max_gain <= 1e-12, mix.guarantee.epsilon
    (True, 1.0)
    """

    def __init__(
        self, exponential: ObjectiveExponentialMechanism, commitment: CommitmentMechanism, q: float
    ):
        if exponential.environment is not commitment.environment:
            raise ValidationError(
                "commitment",
                ": the exponential and the commitment mechanisms must share one environment",
            )
        self.exponential = exponential
        self.commitment = commitment
        self.q = probability("q", q, allow_zero=True, allow_one=True)

    @property
    def environment(self):
        """The environment both branches share."""
        return self.exponential.environment

    @property
    def epsilon(self) -> float:
        """The exponential mechanism's ``eps`` (the mix's outcome is ``eps``-DP)."""
        return self.exponential.epsilon

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """The exponential mechanism's ``eps`` for the outcome: mixing an eps-DP law with a law that
        does not depend on the reports keeps eps-DP (``((1-q) p + q u) / ((1-q) p' + q u) <= max(p /
        p', 1)``). The reactions forced in the ``M^P`` branch are not private."""
        return PrivacyGuarantee(
            self.exponential.guarantee.epsilon,
            0.0,
            Neighbouring.REPLACE_ONE.described(OUTCOME_NEIGHBOURING),
        )

    def distribution(self, profile: Profile) -> FiniteDistribution:
        """The exact law of the outcome (both branches together)."""
        return self.exponential.distribution(profile).mixture(
            self.commitment.distribution(), self.q
        )

    def deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m``: expected utility of each class reporting each type, others truthful."""
        return (1 - self.q) * self.exponential.deviation_utilities(
            profile
        ) + self.q * self.commitment.deviation_utilities(profile)

    def type_space_deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m x m``: ``[a, t, x]`` expected utility of true type ``t`` reporting ``x`` against
        the profile minus one agent of class ``a``, others truthful."""
        return (1 - self.q) * self.exponential.type_space_deviation_utilities(
            profile
        ) + self.q * self.commitment.type_space_deviation_utilities(profile)

    def expected_objective(self, profile: Profile) -> float:
        """``E[objective]`` under truthful reports: ``(1 - q)`` times the exponential mechanism's
        plus ``q`` times the commitment mechanism's, exactly."""
        return (1 - self.q) * self.exponential.expected_objective(
            profile
        ) + self.q * self.commitment.expected_objective(profile)

    def run(self, profile: Profile, rng: RNGLike = None) -> Draw:
        """Toss the ``q``-coin, then run the chosen mechanism."""
        gen = as_generator(rng)
        branch = self.commitment if gen.random() < self.q else self.exponential
        return branch.run(profile, gen)


@dataclass(frozen=True)
class TheoremQ:
    """The ``q`` the theorem guarantees, in both forms (``None`` when ``gamma = 0``).

    Attributes
    ----------
    epsilon : float
        The exponential mechanism's ``eps``.
    gamma : float
        The commitment mechanism's gap.
    n_punishing : int
        ``|P|``.
    utility_range : float
        ``U_max`` (:attr:`Environment.utility_range`).

    Examples
    --------
    >>> from dpgames import CommitmentMechanism
    >>> from dpgames.mechanisms import pricing_environment, theorem_q
    >>> env = pricing_environment([0.25, 0.5, 0.75, 1.0])
    >>> bound = theorem_q(1.0, CommitmentMechanism(env).gap(), env.utility_range)
    >>> bound.gain_dwork_roth, round(bound.gain_exact, 4)           # 2 eps U_max, (e^eps - 1) U_max
    (1.25, 1.0739)
    >>> round(bound.q_dwork_roth, 4), round(bound.q_exact_form, 4)  # G |P| / (G |P| + gamma)
    (0.9756, 0.9717)
    """

    epsilon: float
    gamma: float
    n_punishing: int
    utility_range: float

    @property
    def gain_dwork_roth(self) -> float:
        """``G = 2 eps U_max`` (Dwork & Roth, utilities in [0, U_max])."""
        return 2 * self.epsilon * self.utility_range

    @property
    def gain_exact(self) -> float:
        """``G = (e^eps - 1) U_max`` (a ValidationError where it leaves the float range: eps >
        709)."""
        gain = self._gain_exact()
        if math.isinf(gain):
            raise ValidationError(
                "epsilon",
                f"{self.epsilon:g}: the exact gain bound (e^eps - 1) U_max exceeds the "
                "float range (eps > 709)",
            )
        return gain

    def _gain_exact(self) -> float:
        if self.utility_range == 0:
            return 0.0
        return math.expm1(self.epsilon) * self.utility_range if self.epsilon <= 709 else math.inf

    @property
    def dwork_roth_valid(self) -> bool:
        """``2 eps`` bounds the gain only while ``e^eps - 1 <= 2 eps`` (eps <= 1.256)."""
        return self.epsilon <= 709 and math.expm1(self.epsilon) <= 2 * self.epsilon

    def q_for(self, gain: float) -> float | None:
        """The least ``q`` with ``(1 - q) gain <= q gamma / |P|``."""
        if self.gamma <= 0:
            return None
        if math.isinf(gain * self.n_punishing):
            return 1.0  # G |P| / (G |P| + gamma) rounds to 1 long before G leaves the float range
        return gain * self.n_punishing / (gain * self.n_punishing + self.gamma)

    @property
    def q_dwork_roth(self) -> float | None:
        """``q`` from ``G = 2 eps U_max`` (meaningful only while :attr:`dwork_roth_valid`)."""
        return self.q_for(self.gain_dwork_roth)

    @property
    def q_exact_form(self) -> float | None:
        """``q`` from ``G = (e^eps - 1) U_max``, valid for every ``eps``."""
        return self.q_for(self._gain_exact())


def theorem_q(epsilon: float, gap: Gap, utility_range: float) -> TheoremQ:
    """The theorem's ``q`` for an exponential mechanism at ``epsilon`` and a commitment gap.

    Parameters
    ----------
    epsilon : float
        The exponential mechanism's ``eps`` (``> 0``).
    gap : Gap
        :meth:`CommitmentMechanism.gap`.
    utility_range : float
        ``U_max >= 0``, the most an agent's best-reaction utility varies across outcomes.

    Returns
    -------
    TheoremQ
        Both forms of ``q`` (``None`` when ``gamma = 0``).

    Raises
    ------
    ValidationError
        If ``gap`` is not a :class:`Gap`, ``epsilon <= 0`` or ``utility_range < 0``.
    """
    if not isinstance(gap, Gap):
        raise ValidationError(
            "gap", f"must be a Gap (CommitmentMechanism.gap()), got {type(gap).__name__}"
        )
    return TheoremQ(
        positive("epsilon", epsilon),
        gap.gamma,
        gap.n_punishing,
        non_negative("utility_range", utility_range),
    )


def balanced_epsilon(
    n: int,
    n_outcomes: int,
    gap: Gap,
    sensitivity: float,
    utility_range: float,
    objective_range: float,
) -> float:
    """The ``eps`` minimising ``a / eps + b eps`` with ``a = 2 Delta (ln|O| + 1) / n`` (the
    exponential mechanism's expected per-agent loss) and ``b = U_max |P| rho / gamma`` (``q rho``
    with the small-eps form of the theorem's ``q``): ``eps* = sqrt(a / b)``, a per-agent loss ``~
    sqrt(|O| ln|O| / (gamma n))``.

    Parameters
    ----------
    n : int
        Agents.
    n_outcomes : int
        ``|O|``.
    gap : Gap
        The commitment mechanism's gap (``gamma > 0``).
    sensitivity, utility_range, objective_range : float
        ``Delta``, ``U_max`` and ``rho`` of the environment.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        If ``gamma = 0`` (with the gap's diagnosis) or no agent's utility depends on the outcome.
    """
    if gap.gamma <= 0:
        raise ValidationError("gap", f": {gap.diagnosis}")
    a = 2 * sensitivity * (math.log(n_outcomes) + 1) / n
    b = utility_range * gap.n_punishing * objective_range / gap.gamma
    if not b > 0:
        raise ValidationError(
            "utility_range", ": no agent's utility depends on the outcome: any eps is balanced"
        )
    return math.sqrt(a / b)


def loss_bound_per_agent(
    epsilon: float,
    n: int,
    n_outcomes: int,
    q: float,
    sensitivity: float,
    objective_range: float,
    offset_range: float = 0.0,
) -> float:
    """Expected per-agent objective loss of the mix against the optimum, at most
    ``(1 - q)(2 Delta / (eps n))(ln|O| + 1) + q (rho + offset range / n)``.

    Parameters
    ----------
    epsilon : float
    n : int
    n_outcomes : int
    q : float
    sensitivity, objective_range : float
        ``Delta`` and ``rho`` of the environment.
    offset_range : float, default 0

    Returns
    -------
    float

    Examples
    --------
    >>> import math
    >>> bound = loss_bound_per_agent(
    ...     1.0, n=100, n_outcomes=4, q=0.5, sensitivity=1.0, objective_range=1.0
    ... )
    >>> bool(abs(bound - (0.5 * 2 * (math.log(4) + 1) / 100 + 0.5)) < 1e-15)
    True
    """
    em_loss = 2 * sensitivity * (math.log(n_outcomes) + 1) / (epsilon * n)
    return (1 - q) * em_loss + q * (objective_range + offset_range / n)
