"""Privacy-aware truthfulness of the existing mechanisms: does valuing privacy break or restore it?

Outcome-dependent model (Chen, Chong, Kash, Moran & Vadhan, EC 2013; Nissim, Orlandi & Smorodinsky,
EC 2012): after the published outcome ``s`` an agent's privacy cost is at most ``v`` times the
privacy loss of ``s`` about her report,

    ``L_i(s) = max_{x, x'} ln( Pr[s | i reports x] / Pr[s | i reports x'] )``  (the others' reports
    fixed),

the largest log-ratio over her possible reports.  We charge exactly that bound.  Reporting ``x``
then gives the privacy-aware utility ``U(x) - v E_{s ~ law(x)}[L_i(s)]``, and the audit adds to each
lie's gain the change ``-v (E_x[L_i] - E_truth[L_i])`` in the expected privacy cost.  ``L_i`` does
not depend on her report, only the law she induces does, so a lie that moves the outcome toward
outcomes that reveal less about her *lowers* her privacy cost (privacy awareness can break
truthfulness) and one that moves it toward revealing outcomes raises it (it can restore
truthfulness).

:func:`privacy_aware_audit` works on any :class:`~dpgames.mechanisms.protocol.EnvironmentMechanism`
(the exponential mechanism, ``M^P``, the NST mix, Huang-Kannan, the auction's pricing environment):
exact, from ``mechanism.distribution`` at each deviated profile (one law per (class, report), ``D
m`` laws) and the mechanism's exact ``deviation_utilities``.  The privacy loss is that of the
published outcome ``s`` only: forced reactions and Huang-Kannan's payments are not private and are
not charged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from dpgames.mechanisms.custom import CustomMechanism
from dpgames.mechanisms.environment import Profile
from dpgames.mechanisms.protocol import EnvironmentMechanism
from dpgames.validation import ValidationError, finite_array, memory, non_negative

__all__ = ["PrivacyAwareAudit", "privacy_aware_audit", "privacy_aware_custom_audit"]


@dataclass(frozen=True)
class PrivacyAwareAudit:
    """Gains of each class (one agent of each distinct type: ``agents``, ``types``) reporting each
    type.

    ``standard[d, x]``: the mechanism's own gain; ``privacy_cost[d, x]``: ``v E_x[L]`` (her expected
    privacy cost when reporting ``x``); ``gains = standard - (privacy_cost - privacy_cost[truth])``.
    ``breaks``: (agent, type, lie, gain) where the lie did not pay without privacy but pays with it;
    ``restores``: where it paid without and does not with (both beyond ``tol``).

    Examples
    --------
    >>> from dpgames import CommitmentMechanism
    >>> from dpgames.mechanisms import facility_location_environment, line_graph
    >>> env = facility_location_environment(line_graph(4), k=2)
    >>> audit = privacy_aware_audit(CommitmentMechanism(env), env.profile(env.types[[0, 3]]), 1.0)
    >>> float(audit.privacy_cost.max())          # M^P ignores the reports: it reveals nothing
    0.0
    """

    mechanism: str
    agents: np.ndarray
    types: np.ndarray
    valuations: np.ndarray
    standard: np.ndarray
    privacy_cost: np.ndarray
    gains: np.ndarray
    breaks: list
    restores: list
    tol: float

    @property
    def max_standard_gain(self) -> float:
        """The largest gain from a lie without privacy costs (0 with one type)."""
        return float(self._off(self.standard).max())

    @property
    def max_gain(self) -> float:
        """The largest gain from a lie with the privacy costs counted (0 with one type)."""
        return float(self._off(self.gains).max())

    def _off(self, table: np.ndarray) -> np.ndarray:
        out = table.astype(float).copy()
        out[np.arange(self.types.size), self.types] = -np.inf
        return out if out.shape[1] > 1 else np.zeros_like(out)

    def describe(self) -> str:
        """One line: the largest gains and how many (agent, lie) pairs awareness changes."""
        return (
            f"{self.mechanism}: largest gain from lying {self.max_standard_gain:.6g} "
            "without privacy costs, "
            f"{self.max_gain:.6g} with them; awareness breaks truthfulness for {len(self.breaks)} "
            f"(agent, lie) pairs and restores it for {len(self.restores)}"
        )


def privacy_aware_audit(
    mechanism: EnvironmentMechanism, profile: Profile, valuation: ArrayLike, tol: float = 1e-12
) -> PrivacyAwareAudit:
    """Every class x every report: the gain with the agent's outcome-dependent privacy cost added,
    exact.

    Parameters
    ----------
    mechanism : EnvironmentMechanism
        Any mechanism with ``distribution(profile)`` and ``deviation_utilities(profile)``.
    profile : Profile
        The reported (= true) types.
    valuation : float or array_like
        ``v >= 0``: one privacy valuation for all, or one per type (an agent's valuation goes with
        her type).
    tol : float
        Gains within ``tol`` of 0 count as 0 when listing ``breaks`` and ``restores``.

    Returns
    -------
    PrivacyAwareAudit

    Raises
    ------
    ValidationError
        A mechanism without the protocol, a profile of another environment, negative or non-finite
        valuations (``valuation``), or more than 2 GB of laws.
    """
    if not isinstance(mechanism, EnvironmentMechanism):
        raise ValidationError("mechanism", f"must be an environment mechanism, got {mechanism!r}")
    if not isinstance(profile, Profile):
        raise ValidationError("profile", f"must be a Profile, got {profile!r}")
    m = profile.n_types
    v = _valuations(valuation, m)
    classes, agents = profile.classes, profile.first_agent
    n_outcomes = len(mechanism.distribution(profile).probabilities)
    memory(
        "profile", float(classes.size) * m * n_outcomes, what="one outcome law per (class, report)"
    )
    standard_utility = mechanism.deviation_utilities(profile)
    standard = standard_utility - standard_utility[np.arange(classes.size), classes][:, None]
    cost = np.empty((classes.size, m))
    for d, (a, agent) in enumerate(zip(classes, agents)):
        logp = np.empty((m, n_outcomes))
        for x in range(m):
            idx = profile.type_indices.copy()
            idx[agent] = x
            logp[x] = mechanism.distribution(Profile(idx, m)).log_probabilities
        cost[d] = v[a] * _expected_loss(np.exp(logp), type(mechanism).__name__)
    return _audit(
        type(mechanism).__name__, agents, classes, v, standard, cost, non_negative("tol", tol)
    )


def privacy_aware_custom_audit(
    mechanism: CustomMechanism, profile: ArrayLike, valuation: ArrayLike, tol: float = 1e-12
) -> PrivacyAwareAudit:
    """:func:`privacy_aware_audit` for a user's :class:`~dpgames.mechanisms.custom.CustomMechanism`:
    every agent (one per type when ``anonymous``) x every type of ``mechanism.types`` as her report,
    exact, from ``mechanism.law`` and ``mechanism.expected_utility``.

    Parameters
    ----------
    mechanism : CustomMechanism
        A rule returning an outcome or an exact law (not a sampling-only rule).
    profile : sequence
        One type label per agent (reported = true).
    valuation : float or array_like
        ``v >= 0``, one for all or one per type (in the order of ``mechanism.types``).
    tol : float

    Returns
    -------
    PrivacyAwareAudit
        ``types`` are indices into ``mechanism.types``.

    Raises
    ------
    ValidationError
        Not a CustomMechanism or sampling-only; a profile outside the types; bad valuations; a
        mechanism whose outcome some report makes impossible and another possible (a deterministic
        rule that reacts to the report): its privacy loss is unbounded (field ``mechanism``).
    """
    if not isinstance(mechanism, CustomMechanism) or mechanism.sampling:
        raise ValidationError(
            "mechanism", f"must be a CustomMechanism with an exact rule, got {mechanism!r}"
        )
    if isinstance(profile, (str, bytes)) or not hasattr(profile, "__iter__"):
        raise ValidationError(
            "profile", f"must be a sequence of reports, one per agent, got {profile!r}"
        )
    reports = list(cast(Iterable[Any], profile))
    idx = mechanism._indices(reports, "profile")
    types = mechanism.types
    v = _valuations(valuation, len(types))
    agents = np.unique(idx, return_index=True)[1] if mechanism.anonymous else np.arange(idx.size)
    standard = np.empty((agents.size, len(types)))
    cost = np.empty_like(standard)
    for d, agent in enumerate(agents):
        columns: dict = {}
        rows = []
        for x, label in enumerate(types):
            deviated = list(reports)
            deviated[agent] = label
            outcomes, probs = mechanism.law(deviated)
            rows.append((outcomes, probs))
            for o in outcomes:
                columns.setdefault(o, len(columns))
            standard[d, x] = mechanism.expected_utility(int(agent), reports[agent], deviated)
        table = np.zeros((len(types), len(columns)))
        for x, (outcomes, probs) in enumerate(rows):
            table[x, [columns[o] for o in outcomes]] = probs
        cost[d] = v[idx[agent]] * _expected_loss(table, mechanism.name)
    truth = idx[agents]
    standard = standard - standard[np.arange(agents.size), truth][:, None]
    return _audit(mechanism.name, agents, truth, v, standard, cost, non_negative("tol", tol))


def _valuations(valuation: ArrayLike, m: int) -> np.ndarray:
    v = finite_array("valuation", valuation, low=0)
    if v.ndim == 0:
        v = np.full(m, float(v))
    if v.shape != (m,):
        raise ValidationError(
            "valuation", f"must be a number >= 0 or {m} numbers >= 0 (one per type)"
        )
    return v


def _expected_loss(p: np.ndarray, name: str) -> np.ndarray:
    """``E_x[L]`` for each report ``x`` (row of ``p``, outcomes as columns), ``L(s) = max_x ln p -
    min_x ln p``; an outcome impossible under every report has no loss; one impossible under some
    but not all is refused."""
    possible = p > 0
    partly = possible.any(axis=0) & ~possible.all(axis=0)
    if partly.any():
        raise ValidationError(
            "mechanism",
            f"{name}: some outcome has probability 0 under one report and > 0 "
            "under another, so it reveals the report with certainty and the "
            "outcome-dependent privacy cost is unbounded",
        )
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    loss = np.where(possible.all(axis=0), logp.max(axis=0) - logp.min(axis=0), 0.0)
    return (np.where(possible, p, 0.0) * loss).sum(axis=1)


def _audit(
    name: str,
    agents: np.ndarray,
    truth: np.ndarray,
    v: np.ndarray,
    standard: np.ndarray,
    cost: np.ndarray,
    tol: float,
) -> PrivacyAwareAudit:
    rows = np.arange(agents.size)
    gains = standard - (cost - cost[rows, truth][:, None])
    off = np.ones_like(gains, dtype=bool)
    off[rows, truth] = False
    breaks = [
        (int(agents[d]), int(truth[d]), int(x), float(gains[d, x]))
        for d, x in zip(*np.nonzero(off & (standard <= tol) & (gains > tol)))
    ]
    restores = [
        (int(agents[d]), int(truth[d]), int(x), float(gains[d, x]))
        for d, x in zip(*np.nonzero(off & (standard > tol) & (gains <= tol)))
    ]
    return PrivacyAwareAudit(
        name, agents, truth, v[truth], standard, cost, gains, breaks, restores, tol
    )
