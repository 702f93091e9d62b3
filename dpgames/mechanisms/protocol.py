"""The contract every mechanism on an :class:`~dpgames.mechanisms.environment.Environment` fulfils.

A mechanism maps a profile of *reported* types to an exact law over the environment's outcomes,
states the privacy it guarantees for that law, and knows the exact expected utility of any
unilateral lie (the audits of :mod:`dpgames.analysis.truthfulness` are built on that).  The built-in
ones are the exponential mechanism
(:class:`~dpgames.mechanisms.objective_em.ObjectiveExponentialMechanism`), the commitment mechanism
``M^P``, the NST mix and Huang-Kannan; a new mechanism implements these members and is then audited,
composed and tested exactly as they are (``tests/test_mechanism_contract.py`` runs the shared
contract over every registered class).  A mechanism that does not live on an environment (a plain
function from reports to an outcome law) is wrapped by
:class:`~dpgames.mechanisms.custom.CustomMechanism`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from dpgames.mechanisms.environment import Draw, Environment, Profile
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.rng import RNGLike


@runtime_checkable
class EnvironmentMechanism(Protocol):
    """A mechanism on a finite environment, audited exactly.

    Attributes
    ----------
    environment : Environment
        The outcomes, types, reactions and utilities it runs on.
    guarantee : PrivacyGuarantee
        The differential privacy of :meth:`distribution` in the reports, under the relation it
        names.

    Examples
    --------
    The protocol is checked structurally (``runtime_checkable``): a class with these members is one.

    >>> from dpgames import CommitmentMechanism
    >>> from dpgames.mechanisms import EnvironmentMechanism, pricing_environment
    >>> isinstance(CommitmentMechanism(pricing_environment([0.5, 1.0])), EnvironmentMechanism)
    True
    """

    @property
    def environment(self) -> Environment:
        """The outcomes, types, reactions and utilities it runs on (read-only: a property or an
        attribute)."""
        ...

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """The privacy of the outcome law in one agent's report (epsilon, delta, neighbouring
        relation), with the theorem it rests on cited in the implementing class."""
        ...

    def distribution(self, profile: Profile) -> FiniteDistribution:
        """The exact law of the outcome (an index into ``environment.outcomes``) at the reported
        profile."""
        ...

    def deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m``: row ``d`` is the expected utility of one agent of the profile's class ``d``
        reporting each type while the others report truthfully (her own type is the truthful
        entry)."""
        ...

    def type_space_deviation_utilities(self, profile: Profile) -> np.ndarray:
        """``D x m x m``: ``[d, t, x]`` is the expected utility of true type ``t`` reporting ``x``
        in place of one agent of class ``d``, the others truthful."""
        ...

    def expected_objective(self, profile: Profile) -> float:
        """The designer's exact expected objective (welfare, revenue ...) at the reported
        profile."""
        ...

    def run(self, profile: Profile, rng: RNGLike = None) -> Draw:
        """One draw: the outcome and every agent's reaction (forced ones flagged)."""
        ...
