"""Exact incentive audits for finite environments (the NST mix's least ``q`` is in
:mod:`dpgames.analysis.nst`).

For a profile of reported types (everyone truthful), every agent and every lie: the agent's expected
utility if she alone reports the lie, against her truthful utility.  Agents of the same type face
the same others (the profile minus one agent of their type), so one row per *class* covers all of
them: the audit is D x m (distinct types present x types), whatever the number of agents, and each
entry is exact (:mod:`dpgames.mechanisms.deviations`).  This is ex-post truthfulness at the profile:
a dominant strategy needs it at every profile, which the theorem's ``q`` guarantees.

Over every *hypothetical* true type (``true_types="all"``): for every class ``a`` (one agent of it
is replaced; the others are the profile minus that agent, all truthful), every true type ``t`` of
the type space and every report ``x``, the gain ``E[u(t, .) | x] - E[u(t, .) | t]``; a D x m x m
table, O(D m^2 K), refused above :data:`~dpgames.mechanisms.deviations.TYPE_SPACE_LIMIT`.  This is
"every agent, true type and lie": the least ``q`` over it (the commitment loss ``L`` depends on
``t`` and ``x`` only) makes the mix truthful whatever type the replaced agent has, and is at least
the realised-type one.

Gains within ``1e-12 x max(1, U_max)`` of zero are rounding, not incentives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, overload

import numpy as np
from numpy.typing import ArrayLike

from dpgames.analysis.limits import ROUNDING
from dpgames.mechanisms.deviations import TYPE_SPACE_LIMIT, check_type_space_size
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.protocol import EnvironmentMechanism
from dpgames.validation import ValidationError

if TYPE_CHECKING:
    from dpgames.analysis.custom_audit import CustomAudit
    from dpgames.mechanisms.custom import CustomMechanism

TrueTypes = Literal["own", "all"]


class TruthfulnessVerdict(Protocol):
    """What every truthfulness audit answers, whichever audit ran: the type callers can rely on.

    Satisfied by :class:`TruthfulnessAudit`, :class:`TypeSpaceAudit` and the audits of a user's own
    mechanism (:class:`~dpgames.analysis.custom_audit.ExPostAudit`,
    :class:`~dpgames.analysis.custom_audit.DominantAudit`,
    :class:`~dpgames.analysis.sampled_audit.BayesianAudit`,
    :class:`~dpgames.analysis.sampled_audit.SampledAudit`).  Code that only needs the verdict takes
    this type; code that needs an audit's tables calls the audit that returns them (see
    :func:`truthfulness_audit`'s Notes).

    Attributes
    ----------
    max_gain : float
        The largest gain from a lie (``<= 0`` up to rounding: truthful).  The audits of a user's own
        mechanism floor it at 0 and name the best lie's loss ``margin``; the environment audits give
        the best lie's gain itself (negative when every lie loses).
    worst_case : dict
        The most profitable lie: at least ``agent``, ``true_type``, ``lie`` and ``gain``.
    rounding_slack : float
        Gains below this are floating-point rounding.
    """

    @property
    def max_gain(self) -> float: ...

    @property
    def worst_case(self) -> dict[str, Any]: ...

    @property
    def rounding_slack(self) -> float: ...

    def is_truthful(self, tol: float = 0.0) -> bool:
        """No agent gains more than ``tol`` (plus rounding) from any lie."""
        ...


class _Rounding(ABC):
    """Shared by the audits: the rounding slack and the truthfulness verdict from ``max_gain``."""

    environment: Environment

    @property
    @abstractmethod
    def max_gain(self) -> float:
        """The largest gain over every audited lie."""

    @property
    def rounding_slack(self) -> float:
        """Gains below this are floating-point rounding: ``1e-12 x max(1, U_max)``."""
        return ROUNDING * max(1.0, self.environment.utility_range)

    def is_truthful(self, tol: float = 0.0) -> bool:
        """No agent gains more than ``tol`` (plus rounding) from any lie."""
        return self.max_gain <= tol + self.rounding_slack


@dataclass(frozen=True)
class TruthfulnessAudit(_Rounding):
    """Gains from lying at a profile: ``gains[d, x]`` for the class ``classes[d]`` reporting type
    ``x``.

    ``worst_case`` names the agent (the first of her class), her true type, the lie and the gain.
    Returned by :func:`truthfulness_audit` (``true_types="own"``).

    Attributes
    ----------
    environment : Environment
        The mechanism's environment (type labels, the rounding scale).
    classes : numpy.ndarray of int, shape (D,)
        The profile's classes (type indices).
    first_agent : numpy.ndarray of int, shape (D,)
        The agent named for each class.
    truthful_utility : numpy.ndarray, shape (D,)
        Each class's exact expected utility when truthful.
    gains : numpy.ndarray, shape (D, m)
        Expected utility of reporting each type minus the truthful one (0 on the truthful entry).

    Examples
    --------
    >>> from dpgames import ObjectiveExponentialMechanism, truthfulness_audit
    >>> from dpgames.mechanisms import pricing_environment
    >>> env = pricing_environment([0.25, 0.5, 0.75, 1.0])
    >>> audit = truthfulness_audit(
    ...     ObjectiveExponentialMechanism(env, 1.0), env.profile([0.875, 0.875, 0.375])
    ... )
    >>> (
    ...     audit.gains.shape,
    ...     round(audit.max_gain, 4),
    ...     audit.is_truthful(),
    ...     audit.is_truthful(tol=0.05),
    ... )
    ((2, 4), 0.0278, False, True)
    >>> audit.worst_case["true_type"], audit.worst_case["lie"]
    (0.875, 0.625)
    """

    environment: Environment
    classes: np.ndarray
    first_agent: np.ndarray
    truthful_utility: np.ndarray
    gains: np.ndarray

    @property
    def best_lie(self) -> np.ndarray:
        """Per class, the index of the most profitable lie (another type; its own when it is the
        only one)."""
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
    def worst_case(self) -> dict[str, Any]:
        """The most profitable lie of all: agent, true type, lie, gain."""
        d = int(np.argmax(self.best_gain))
        env = self.environment
        return {
            "agent": int(self.first_agent[d]),
            "true_type": env.type_label(int(self.classes[d])),
            "lie": env.type_label(int(self.best_lie[d])),
            "gain": float(self.best_gain[d]),
        }


@dataclass(frozen=True)
class TypeSpaceAudit(_Rounding):
    """Gains over every hypothetical true type: ``gains[d, t, x]`` for an agent of true type ``t``
    reporting ``x`` in place of one agent of class ``classes[d]`` (the others truthful).

    ``worst_case`` names the replaced agent (the first of her class), the type she had in the
    profile (``replaces``), the true type, the lie and the gain.  Returned by
    :func:`truthfulness_audit` with ``true_types="all"``.

    Attributes
    ----------
    environment : Environment
    classes, first_agent : numpy.ndarray of int, shape (D,)
        As in :class:`TruthfulnessAudit`.
    gains : numpy.ndarray, shape (D, m, m)
        ``[d, t, x]``: true type ``t`` reporting ``x`` in place of one agent of class ``d``, minus
        reporting ``t``.

    Examples
    --------
    >>> from dpgames import ObjectiveExponentialMechanism, truthfulness_audit
    >>> from dpgames.mechanisms import pricing_environment
    >>> env = pricing_environment([0.25, 0.5, 0.75, 1.0])
    >>> em = ObjectiveExponentialMechanism(env, 1.0)
    >>> audit = truthfulness_audit(em, env.profile([0.875, 0.875, 0.375]), true_types="all")
    >>> audit.gains.shape, round(audit.max_gain, 4)
    ((2, 4, 4), 0.0305)
    >>> audit.worst_case["replaces"], audit.worst_case["true_type"], audit.worst_case["lie"]
    (0.375, 0.875, 0.625)
    """

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
        """The largest gain over every class, true type and lie (``<= 0`` up to rounding:
        truthful)."""
        return float(self._lies.max())

    @property
    def worst_case(self) -> dict[str, Any]:
        """The most profitable lie of all: agent (replaced), the type she replaces, true type, lie,
        gain."""
        lies = self._lies
        d, t, x = np.unravel_index(np.argmax(lies), lies.shape)
        env = self.environment
        return {
            "agent": int(self.first_agent[d]),
            "replaces": env.type_label(int(self.classes[d])),
            "true_type": env.type_label(int(t)),
            "lie": env.type_label(int(x)),
            "gain": float(lies[d, t, x]),
        }


def audit_from_utilities(
    environment: Environment, profile: Profile, utilities: np.ndarray
) -> TruthfulnessAudit:
    """The audit of a D x m table of deviation utilities (rows: the profile's classes).

    Parameters
    ----------
    environment : Environment
    profile : Profile
    utilities : numpy.ndarray, shape (D, m)
        :meth:`~dpgames.mechanisms.protocol.EnvironmentMechanism.deviation_utilities`.

    Returns
    -------
    TruthfulnessAudit
    """
    rows = np.arange(profile.classes.size)
    truthful = utilities[rows, profile.classes]
    gains = utilities - truthful[:, None]
    gains[rows, profile.classes] = 0.0
    return TruthfulnessAudit(environment, profile.classes, profile.first_agent, truthful, gains)


@overload
def truthfulness_audit(
    mechanism: EnvironmentMechanism,
    profile: Profile | ArrayLike | None = None,
    true_types: Literal["own"] = "own",
) -> TruthfulnessAudit: ...


@overload
def truthfulness_audit(
    mechanism: EnvironmentMechanism, profile: Profile | ArrayLike | None, true_types: Literal["all"]
) -> TypeSpaceAudit: ...


@overload
def truthfulness_audit(
    mechanism: EnvironmentMechanism,
    profile: Profile | ArrayLike | None = None,
    *,
    true_types: Literal["all"],
) -> TypeSpaceAudit: ...


@overload
def truthfulness_audit(
    mechanism: EnvironmentMechanism,
    profile: Profile | ArrayLike | None = None,
    true_types: TrueTypes = "own",
) -> TruthfulnessAudit | TypeSpaceAudit: ...


@overload
def truthfulness_audit(
    mechanism: CustomMechanism | Callable[..., Any],
    profile: Sequence[Any] | None = None,
    true_types: TrueTypes = "own",
    **custom: Any,
) -> CustomAudit: ...


def truthfulness_audit(
    mechanism: EnvironmentMechanism | CustomMechanism | Callable[..., Any],
    profile: Any = None,
    true_types: TrueTypes = "own",
    **custom: Any,
) -> TruthfulnessAudit | TypeSpaceAudit | CustomAudit:
    """Exact gain of every (agent, lie) at the profile, by class: O(D m K) for most mechanisms here.

    ``true_types="all"``: every (class, hypothetical true type, lie) instead, a
    :class:`TypeSpaceAudit` (O(D m^2 K); ValueError when ``D m^2 K`` exceeds ``TYPE_SPACE_LIMIT``).

    A :class:`~dpgames.mechanisms.custom.CustomMechanism` or a plain callable rule (with
    ``utility=`` and ``types=``), or any keyword of
    :func:`~dpgames.analysis.custom_audit.custom_truthfulness_audit` (``n``, ``profiles``,
    ``prior``, ``samples`` ...), goes to the audits of a user's own mechanism.

    Parameters
    ----------
    mechanism : EnvironmentMechanism, CustomMechanism or callable
        The mechanism audited.
    profile : Profile or sequence, optional
        The reports (a :class:`Profile` for an environment mechanism; type labels for a custom one).
    true_types : {"own", "all"}, default "own"
        The agents' own types only, or every hypothetical true type.
    **custom
        Options of the custom audits (``utility``, ``types``, ``n``, ``profiles``, ``prior``,
        ``samples``, ``rng``, ``payments``, ``anonymous``, ``lies``, ``coalitions``,
        ``manipulation``, ``ordinal``).

    Returns
    -------
    TruthfulnessAudit or TypeSpaceAudit
        For an environment mechanism: a :class:`TruthfulnessAudit` with ``true_types="own"``, a
        :class:`TypeSpaceAudit` with ``"all"``.  The custom audits return theirs (``ExPostAudit``,
        ``DominantAudit``, ``BayesianAudit``, ``SampledAudit``: the union
        :data:`~dpgames.analysis.custom_audit.CustomAudit`, with the coalitional and ordinal
        audits), with the same ``max_gain``, ``worst_case``, ``rounding_slack`` and ``is_truthful``
        (:class:`TruthfulnessVerdict`).

    Raises
    ------
    ValidationError
        If ``true_types`` is unknown, the profile is not one of the environment, or the type-space
        audit would exceed ``TYPE_SPACE_LIMIT`` (naming the size).

    Notes
    -----
    Typing: the result's class is decided by the arguments' types, so the function is overloaded on
    them and a type checker knows it without narrowing.  An environment mechanism gives a
    :class:`TruthfulnessAudit` for ``true_types="own"`` (the default) and a :class:`TypeSpaceAudit`
    for the literal ``"all"``; only a ``true_types`` that is not a literal leaves the union of the
    two.  For a user's own mechanism (a :class:`~dpgames.mechanisms.custom.CustomMechanism` or a
    callable) the audit is chosen by the keywords and by whether the rule only samples (known at run
    time), so the result is the union ``CustomAudit``; every member has ``max_gain``,
    ``worst_case``, ``is_truthful`` and ``describe``, and the four audit functions
    (``ex_post_audit``, ``dominant_audit``, ``bayesian_audit``, ``sampled_audit``) return their one
    class.  Code that needs only the verdict of any audit takes :class:`TruthfulnessVerdict`.
    """
    if custom or not isinstance(mechanism, EnvironmentMechanism):
        from dpgames.analysis.custom_audit import custom_truthfulness_audit

        return custom_truthfulness_audit(mechanism, profile, true_types=true_types, **custom)
    if not isinstance(profile, Profile):
        if profile is None:
            raise ValidationError(
                "profile",
                "is required for a mechanism on an environment (environment.profile(types))",
            )
        profile = mechanism.environment.profile(profile)
    if true_types == "own":
        return audit_from_utilities(
            mechanism.environment, profile, mechanism.deviation_utilities(profile)
        )
    if true_types != "all":
        raise ValidationError("true_types", f"must be 'own' or 'all', got {true_types!r}")
    env = mechanism.environment
    check_type_space_size(profile.classes.size, env.n_types, env.n_outcomes)
    utilities = mechanism.type_space_deviation_utilities(profile)
    types = np.arange(env.n_types)
    gains = utilities - utilities[:, types, types][:, :, None]
    gains[:, types, types] = 0.0
    return TypeSpaceAudit(env, profile.classes, profile.first_agent, gains)


def type_space_affordable(environment: Environment, profile: Profile) -> bool:
    """Whether the audit over every true type fits under ``TYPE_SPACE_LIMIT`` at this profile."""
    return (
        profile.classes.size * environment.n_types**2 * environment.n_outcomes <= TYPE_SPACE_LIMIT
    )
