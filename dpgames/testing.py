"""Assertions for users' own test suites: exact checks of the properties mechanisms promise.

``assert_truthful(mechanism, profile, tol=0)``: no agent gains more than ``tol`` by any lie, by
exact enumeration (every agent x every lie), failing with the worst (agent, true type, lie, gain);
for a user's own mechanism (:class:`~dpgames.mechanisms.custom.CustomMechanism` or a plain rule)
also dominant strategy (``n=``, ``profiles=``; every profile streamed in chunks, over processes or a
Dask cluster, resumable), Bayesian (``prior=``) and sampled audits.  ``profiles(types, n)`` is a
hypothesis strategy of report tuples.

``assert_private(mechanism, neighbours, epsilon=..., delta=0)``: the mechanism is (epsilon,
delta)-DP on the neighbouring pairs, exactly where its output law can be had, else no violation is
certified by the black-box audit; failing with the worst pair and outcome or event.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from numpy.typing import ArrayLike

from dpgames.analysis.coalition_audit import CoalitionAudit
from dpgames.analysis.custom_audit import CustomAudit, custom_truthfulness_audit, streamed
from dpgames.analysis.custom_enumeration import TIME_LIMIT
from dpgames.analysis.limits import ROUNDING
from dpgames.analysis.misreport import MisreportAudit, misreport_audit
from dpgames.analysis.sampled_audit import SampledAudit
from dpgames.analysis.truthfulness import (
    TrueTypes,
    TruthfulnessAudit,
    TypeSpaceAudit,
    truthfulness_audit,
)
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.environment import Profile
from dpgames.privacy.audit import audit_privacy
from dpgames.privacy.audit_result import PrivacyAudit
from dpgames.privacy.neighbour_inputs import Neighbours
from dpgames.privacy.rng import RNGLike
from dpgames.validation import ValidationError


def assert_truthful(
    mechanism: Any,
    profile: ArrayLike | Profile | None = None,
    *,
    n: int | None = None,
    profiles: int | str | None = None,
    prior: Any = None,
    true_types: TrueTypes = "own",
    tol: float = 0.0,
    lies: ArrayLike | None = None,
    rng: RNGLike = 0,
    samples: int | None = None,
    utility: Callable | None = None,
    types: Any = None,
    payments: Callable | None = None,
    anonymous: bool = False,
    coalitions: Any = None,
    manipulation: str = "weak",
    ordinal: bool | str = False,
    chunk_size: int | None = None,
    processes: int = 1,
    dask: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool | None = None,
    max_seconds: float = TIME_LIMIT,
) -> TruthfulnessAudit | TypeSpaceAudit | MisreportAudit | CustomAudit:
    """Assert that truthful reporting is a ``tol``-best response: no agent gains more than ``tol``
    by lying.

    ``profile`` is the profile of reports (type labels, one per agent).

    * A mechanism on an environment (the exponential mechanism, the commitment mechanism, the NST
      mix, Huang-Kannan; ``profile`` may be a :class:`Profile`): exact, every agent x every type as
      a lie; ``true_types="all"`` also gives each agent every hypothetical true type (the others
      fixed).
    * A :class:`DigitalGoodsAuction` (``profile``: the values; ``lies``: the reports to try, by
      default exhaustive on a price grid: see :func:`misreport_audit`).
    * A :class:`~dpgames.mechanisms.custom.CustomMechanism`, or a plain callable rule with
      ``utility=`` and ``types=`` (the type space; ``payments=``, ``anonymous=`` optional): ex post
      at ``profile`` (``true_types`` "own" or "all"); dominant strategy with ``n=`` and
      ``profiles="all"`` (every profile), ``profiles=K`` (random, from ``rng``) or
      ``profiles="search"``; Bayesian with ``prior=`` and ``n=`` (Monte Carlo with ``samples=``); a
      sampling-only ``rule(reports, rng)`` at ``profile`` with ``samples=`` and ``rng=`` (fails only
      when a lie gains more than ``tol`` at 95% confidence); restricted deviations with ``lies=`` (a
      collection of reports or a function ``(agent, true_type) -> reports``); coalitions with
      ``coalitions=`` and ``manipulation=`` ("weak", "strong", "transfers":
      :mod:`dpgames.analysis.coalition_audit`); SD-strategy-proofness with ``ordinal=True`` (or
      ``"weak"``: :mod:`dpgames.analysis.ordinal_audit`).  The exhaustive dominant-strategy check
      (``profiles="all"``) streams its profiles in chunks: ``chunk_size=``, ``processes=`` (local
      processes), ``dask=`` (a Dask cluster), ``checkpoint=`` (resumable), ``progress=``,
      ``max_seconds=``, with the same verdict and worst case whatever they are
      (:mod:`dpgames.analysis.custom_enumeration`).  See :mod:`dpgames.analysis.custom_audit`.

    Gains up to ``1e-12 x max(1, utility scale)`` count as rounding.

    Parameters
    ----------
    mechanism : EnvironmentMechanism, DigitalGoodsAuction, CustomMechanism or callable
        The mechanism (a plain callable is the rule of a :class:`CustomMechanism`).
    profile : array_like or Profile, optional
        The reports (type labels, one per agent); not needed for dominant-strategy or Bayesian
        checks.
    n, profiles, prior, samples : optional
        Dominant-strategy, Bayesian and sampled audits of a custom mechanism (see above).
    rng : RNGLike, default 0
        Their random draws: a seed, a numpy Generator or None (fresh entropy).
    true_types : {"own", "all"}, default "own"
        Each agent's own true type only, or every hypothetical true type.
    tol : float, default 0
        The largest gain tolerated, ``>= 0``.
    lies : array_like or callable, optional
        The reports tried against an auction; for a custom mechanism a collection of reports or a
        function ``(agent, true_type) -> reports``.
    utility, types, payments, anonymous : optional
        The rest of a plain callable rule (see :class:`CustomMechanism`).
    coalitions, manipulation, ordinal : optional
        Coalitional and ordinal audits of a custom mechanism (see above).
    chunk_size : int, optional
        ``profiles="all"``: profiles per chunk (a batched rule's block size).
    processes : int, default 1
        ``profiles="all"``: local processes running the chunks (the mechanism must pickle: functions
        defined at module level).
    dask : str, optional
        ``profiles="all"``: ``"local"`` (a Dask LocalCluster of ``processes`` workers) or a
        scheduler's ``tcp://HOST:PORT``.
    checkpoint : str or path, optional
        ``profiles="all"``: a file to which each chunk's answer is appended; the same call with the
        same file resumes an interrupted check.
    progress : bool, optional
        ``profiles="all"``: a progress bar on stderr (default: beyond a million profile
        evaluations).
    max_seconds : float, default 3600
        ``profiles="all"``: the longest estimated enumeration accepted (refused with the estimate
        above).

    Returns
    -------
    TruthfulnessAudit, TypeSpaceAudit, MisreportAudit or CustomAudit
        The audit that passed (each has ``max_gain`` and ``worst_case``; the custom audits also
        ``describe()``).

    Raises
    ------
    AssertionError
        If some agent gains more than ``tol`` by a lie, naming the worst agent, her true type, the
        lie, the gain and the profile.
    ValidationError
        On invalid arguments (``tol < 0``, an option the mechanism does not take, a bad profile, a
        streaming option with another audit than ``profiles="all"`` or of a bad value).

    Examples
    --------
    >>> from dpgames import assert_truthful
    >>> def median_rule(reports):
    ...     return sorted(reports)[len(reports) // 2]
    >>> audit = assert_truthful(
    ...     median_rule, [3, 7, 5, 1, 9], utility=lambda t, o: -abs(t - o), types=range(11)
    ... )
    >>> audit.max_gain
    0.0
    >>> assert_truthful(lambda r: round(sum(r) / len(r)), [3, 7, 5, 1, 9],
    ...                 utility=lambda t, o: -abs(t - o), types=range(11))
    Traceback (most recent call last):
    AssertionError: not truthful within tol=0: agent 0 (true type 3) gains 1 by reporting 0 at profile (3, 7, 5, 1, 9)
    ...
    """
    if not tol >= 0:
        raise ValidationError("tol", f"must be a number >= 0, got {tol!r}")
    custom = {
        "n": n,
        "profiles": profiles,
        "prior": prior,
        "samples": samples,
        "utility": utility,
        "payments": payments,
        "coalitions": coalitions,
    }
    stream = {
        "chunk_size": chunk_size,
        "processes": processes,
        "dask": dask,
        "checkpoint": checkpoint,
        "progress": progress,
        "max_seconds": max_seconds,
    }
    if isinstance(mechanism, CustomMechanism) or (
        not hasattr(mechanism, "environment") and not isinstance(mechanism, DigitalGoodsAuction)
    ):
        return _assert_custom(
            mechanism,
            profile,
            tol,
            true_types,
            types=types,
            anonymous=anonymous,
            lies=lies,
            manipulation=manipulation,
            ordinal=ordinal,
            rng=rng,
            **custom,
            **stream,
        )
    given = (
        [k for k, v in {**custom, "types": types}.items() if v is not None]
        + streamed(stream)
        + (["anonymous"] if anonymous else [])
        + (["ordinal"] if ordinal is not False else [])
        + (["manipulation"] if manipulation != "weak" else [])
        + ([] if isinstance(rng, int) and rng == 0 else ["rng"])
    )
    if given:
        raise ValidationError(
            "arguments",
            f": {', '.join(given)}: for a CustomMechanism or a plain callable rule, not "
            f"{type(mechanism).__name__}",
        )
    if profile is None:
        raise ValidationError("profile", ": the reports to audit are required")
    audit: TruthfulnessAudit | TypeSpaceAudit | MisreportAudit
    if isinstance(mechanism, DigitalGoodsAuction):
        if true_types != "own":
            raise ValidationError(
                "true_types",
                ": true_types='all' applies to mechanisms on an environment; the auction audits "
                "each bidder's own value",
            )
        if isinstance(profile, Profile):
            raise ValidationError(
                "profile",
                "must be the bidders' values (numbers in [0, 1]) for an auction, not a Profile",
            )
        audit = misreport_audit(mechanism, profile, lies=lies)
        worst = audit.worst_case
        worst = {
            "agent": worst["agent"],
            "true_type": worst["true_value"],
            "lie": worst["lie"],
            "gain": worst["gain"],
        }
        passed = audit.max_gain <= tol + ROUNDING
        tried = f"{audit.values.size} agents x {audit.lies.size} reports"
    else:
        if lies is not None:
            raise ValidationError(
                "lies", ": on an environment every type is tried as a lie; do not pass lies"
            )
        profile = (
            profile if isinstance(profile, Profile) else mechanism.environment.profile(profile)
        )
        audit = truthfulness_audit(mechanism, profile, true_types=true_types)
        worst = audit.worst_case
        passed = audit.is_truthful(tol)
        m = mechanism.environment.n_types
        tried = f"{profile.n} agents x {m} types" + (
            f" x {m} true types" if true_types == "all" else ""
        )
    if not passed:
        raise AssertionError(
            f"not truthful within tol={tol:g}: agent {worst['agent']} (true type "
            f"{worst['true_type']!r}) gains "
            f"{worst['gain']:.6g} by reporting {worst['lie']!r} (the largest gain over {tried})"
        )
    return audit


def _assert_custom(
    mechanism: Any, profile: Any, tol: float, true_types: TrueTypes, **options: Any
) -> CustomAudit:
    """assert_truthful for a user's own mechanism: the audit of
    :func:`custom_truthfulness_audit`."""
    audit = custom_truthfulness_audit(mechanism, profile, true_types=true_types, tol=tol, **options)
    if audit.is_truthful(tol):
        return audit
    if isinstance(audit, CoalitionAudit):
        w = audit.worst_case
        raise AssertionError(
            f"coalitionally manipulable ({audit.manipulation}) within tol={tol:g}: "
            f"coalition {w['coalition']} (true "
            f"types {w['true_types']!r}) reporting {w['lie']!r} gains {w['gains']!r} "
            f"(score {w['gain']:.6g}) at "
            f"profile {w['profile']!r}\n{audit.describe()}"
        )
    violation = audit.violation(tol) if isinstance(audit, SampledAudit) else None
    worst = audit.worst_case if violation is None else violation
    ci = (
        "" if worst.get("ci") is None else f" (95% CI [{worst['ci'][0]:.6g}, {worst['ci'][1]:.6g}])"
    )
    at = "" if worst.get("profile") is None else f" at profile {worst['profile']!r}"
    raise AssertionError(
        f"not truthful within tol={tol:g}: agent {worst['agent']} (true type "
        f"{worst['true_type']!r}) gains "
        f"{worst['gain']:.6g}{ci} by reporting {worst['lie']!r}{at}\n{audit.describe()}"
    )


def profiles(types: Iterable, n: int):
    """A hypothesis strategy of report tuples: ``n`` labels drawn from ``types`` (hypothesis is
    imported here: it is a test dependency only).

    Parameters
    ----------
    types : iterable
        The type labels (at least one).
    n : int
        Agents per profile, ``>= 1``.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of tuples of ``n`` labels.

    Raises
    ------
    ValidationError
        If ``types`` is empty or ``n`` is not an integer ``>= 1``.
    """
    from hypothesis import strategies as st

    labels = list(types)
    if not labels:
        raise ValidationError("types", ": at least one type is needed")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValidationError("n", f"must be an integer >= 1, got {n!r}")
    return st.tuples(*[st.sampled_from(labels)] * n)


def assert_private(
    mechanism: Any,
    neighbours: Iterable[tuple[Any, Any]] | Neighbours | None = None,
    epsilon: float | None = None,
    delta: float = 0.0,
    *,
    tolerance: float = 1e-9,
    samples: int = 1_000_000,
    confidence: float = 0.95,
    rng: RNGLike = None,
    n: int | None = None,
    profiles: Iterable | None = None,
    **black_box: Any,
) -> PrivacyAudit:
    """Assert that ``mechanism`` is (epsilon, delta)-DP on ``neighbours``, through
    :func:`audit_privacy`.

    * **Exact** (a callable ``x -> law``, an object with ``output_distribution(x)``, a
      :class:`~dpgames.mechanisms.custom.CustomMechanism`): fails when the exact eps at ``delta``
      over the pairs exceeds ``epsilon + tolerance``.
    * **Black box** (a sampler ``sampler(x, size, rng) -> outputs``): fails when the certified lower
      bound on eps exceeds ``epsilon``; a correct mechanism fails with probability at most ``1 -
      confidence``. Passing is not a proof: it says this search found no violation at this budget.

    Parameters
    ----------
    mechanism : callable or object
        See :func:`~dpgames.privacy.audit.audit_privacy`.
    neighbours : Neighbours or iterable of pairs, optional
        The pairs to compare (e.g. ``neighbouring_inputs(10)``); omitted for a mechanism that
        declares its relation, with ``n`` or ``profiles``.
    epsilon : float
        The eps claimed (required).
    delta : float, default 0
        The delta claimed.
    tolerance : float, default 1e-9
        Exact path: rounding allowed on eps.
    samples, confidence, rng : optional
        Black box: certification samples per input, confidence, seed.
    n, profiles : optional
        For a mechanism that declares its relation (every profile of ``n`` agents, or these).
    **black_box
        ``search_samples``, ``screen_samples``, ``processes``, ``dask``, ``progress``.

    Returns
    -------
    PrivacyAudit
        The audit that passed.

    Raises
    ------
    AssertionError
        If the audit refutes the claim, with the audit's findings (worst pair, outcome or event).

    Examples
    --------
    The exponential mechanism's law, when the score of one output moves by 1 (sensitivity 1):

    >>> import numpy as np
    >>> from dpgames import ExponentialMechanism, assert_private
    >>> em = ExponentialMechanism(1.0)
    >>> audit = assert_private(
    ...     lambda x: em.distribution(np.array([x, 1.0, 0.0])), [(0.0, 1.0)], epsilon=1.0
    ... )
    >>> audit.epsilon <= 1.0
    True
    """
    if epsilon is None:
        raise ValidationError("epsilon", "is required: the eps the mechanism claims")
    audit = audit_privacy(
        mechanism,
        neighbours,
        epsilon=epsilon,
        delta=delta,
        samples=samples,
        confidence=confidence,
        rng=rng,
        n=n,
        profiles=profiles,
        **black_box,
    )
    excess = audit.epsilon - epsilon
    if excess <= (tolerance if audit.exact else 0.0):
        return audit
    wanted = f"{epsilon:g}-DP" if delta == 0 else f"({epsilon:g}, {delta:g})-DP"
    how = "exactly" if audit.exact else f"at {audit.confidence:.0%} confidence"
    raise AssertionError(
        f"mechanism is not {wanted} ({how}): {audit.summary()}\n{audit.describe()}"
    )
