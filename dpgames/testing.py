"""Assertions for users' own test suites: exact checks of the properties mechanisms promise.

``assert_truthful(mechanism, types, tol=0)``: no agent gains more than ``tol`` by any lie, by exact
enumeration (every agent x every lie), failing with the worst (agent, true type, lie, gain).

``assert_private(mechanism, neighbours, epsilon, delta=0)``: the mechanism's exact output distributions
on every neighbouring pair are (epsilon, delta)-close, failing with the worst pair and outcome.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from numpy.typing import ArrayLike

from dpgames.analysis.misreport import MisreportAudit, misreport_audit
from dpgames.analysis.truthfulness import AuditableMechanism, TruthfulnessAudit, TypeSpaceAudit, truthfulness_audit
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.environment import Profile
from dpgames.privacy.audit import FiniteAudit, audit_finite

#: Gains up to this (times the utility scale) are floating-point rounding, not incentives.
TRUTHFUL_ROUNDING = 1e-12


def assert_truthful(mechanism: AuditableMechanism | DigitalGoodsAuction, types: ArrayLike | Profile, *,
                    lies: ArrayLike | None = None, tol: float = 0.0,
                    true_types: str = "own") -> TruthfulnessAudit | TypeSpaceAudit | MisreportAudit:
    """Assert that truthful reporting is a ``tol``-best response for every agent at this profile.

    ``mechanism``: any mechanism on an environment (the exponential mechanism, the commitment mechanism,
    the NST mix, Huang-Kannan; ``types`` are type labels or a :class:`Profile`, and every type of the
    environment is tried as a lie), or a :class:`DigitalGoodsAuction` (``types`` are the values, ``lies``
    the reports to try, by default exhaustive on a price grid: see :func:`misreport_audit`).  On an
    environment, ``true_types="all"`` also gives each agent every hypothetical true type (the others'
    reports fixed), not only her own.  Gains up to ``1e-12 x max(1, utility range)`` count as rounding.  Returns the audit; raises AssertionError
    naming the worst agent, her true type, the lie and the gain."""
    if not tol >= 0:
        raise ValueError(f"tol must be a number >= 0, got {tol!r}")
    if isinstance(mechanism, DigitalGoodsAuction):
        if true_types != "own":
            raise ValueError("true_types='all' applies to mechanisms on an environment; the auction audits "
                             "each bidder's own value")
        audit = misreport_audit(mechanism, types, lies=lies)
        worst = audit.worst_case
        worst = {"agent": worst["agent"], "true_type": worst["true_value"], "lie": worst["lie"], "gain": worst["gain"]}
        passed = audit.max_gain <= tol + TRUTHFUL_ROUNDING
        tried = f"{audit.values.size} agents x {audit.lies.size} reports"
    else:
        if lies is not None:
            raise ValueError("lies: on an environment every type is tried as a lie; do not pass lies")
        profile = types if isinstance(types, Profile) else mechanism.environment.profile(types)
        audit = truthfulness_audit(mechanism, profile, true_types=true_types)
        worst = audit.worst_case
        passed = audit.is_truthful(tol)
        m = mechanism.environment.n_types
        tried = f"{profile.n} agents x {m} types" + (f" x {m} true types" if true_types == "all" else "")
    if not passed:
        raise AssertionError(
            f"not truthful within tol={tol:g}: agent {worst['agent']} (true type {worst['true_type']!r}) gains "
            f"{worst['gain']:.6g} by reporting {worst['lie']!r} (the largest gain over {tried})")
    return audit


def assert_private(mechanism: Any, neighbours: Iterable[tuple[Any, Any]], epsilon: float,
                   delta: float = 0.0, tolerance: float = 1e-9) -> FiniteAudit:
    """Assert that ``mechanism`` is exactly (epsilon, delta)-DP on every pair in ``neighbours``.

    ``mechanism`` is a callable ``input -> FiniteDistribution`` or an object with an
    ``output_distribution(input)`` method (every finite mechanism of :mod:`dpgames.privacy`);
    ``neighbours`` is an iterable of input pairs ``(x, x')``, each checked in both orders.  With
    ``delta = 0`` the largest privacy loss must be at most ``epsilon``; with ``delta > 0`` the
    hockey-stick divergence at ``epsilon`` must be at most ``delta``.  Returns the audit; raises
    AssertionError naming the worst pair and outcome."""
    audit = audit_finite(mechanism, neighbours, epsilon if delta > 0 else None)
    if audit.max_privacy_loss <= epsilon + tolerance or (delta > 0 and audit.delta <= delta + tolerance):
        return audit
    wanted = f"{epsilon:g}-DP" if delta == 0 else f"({epsilon:g}, {delta:g})-DP"
    raise AssertionError(f"mechanism is not {wanted}: {audit.describe()}")
