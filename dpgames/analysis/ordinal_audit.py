"""Ordinal (stochastic-dominance) strategy-proofness of a
:class:`~dpgames.mechanisms.custom.CustomMechanism`.

With ordinal preferences (a ranking, :func:`dpgames.types.rankings`) an agent's utility is known
only up to a monotone transformation, and the ``utility`` of the mechanism is read as *ordinal*:
only the order of its values for a type matters (e.g. ``-position`` of the outcome in her ranking;
ties allowed).  A lottery ``P`` first-order stochastically dominates ``Q`` for type ``t`` when
``P(u_t >= c) >= Q(u_t >= c)`` at every threshold ``c``: ``P`` is at least as good as ``Q`` for
*every* utility consistent with ``t``'s order.

* ``weak=False`` -- **SD-strategy-proofness** (Bogomolnaia & Moulin 2001; "strategy-proofness" for
  random assignment): truth's lottery dominates every lie's.  A lie violates it when its lottery is
  not dominated, i.e. gains for *some* utility consistent with the true order.  Its gain is ``max_c
  [P_lie(u >= c) - P_truth(u >= c)]``, in ``[0, 1]``: positive exactly when the lie is not
  dominated.  Random serial dictatorship satisfies it; probabilistic serial does not.
* ``weak=True`` -- **weak SD-strategy-proofness** (Bogomolnaia & Moulin 2001, who prove it of
  probabilistic serial): no lie's lottery dominates truth's and differs from it, i.e. no lie gains
  for *every* consistent utility.  Its score: the same largest excess when the lie's lottery
  dominates truth's (every excess ``>= 0``), else the most negative excess.

``max_gain = max(best score, 0)`` and ``margin = -best score``: under SD-strategy-proofness the gain
of a lie is never negative (at the lowest threshold both probabilities are 1), so the margin of a
truthful mechanism is 0: stochastic dominance has no degree of strictness.  Exact, at one profile or
at every (or ``K`` random) profile of ``n`` agents; quasi-linear payments are refused (not ordinal).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgames.analysis.lies import Lies
from dpgames.analysis.limits import PROFILE_LIMIT, ROUNDING, WORK_LIMIT, count_profiles
from dpgames.analysis.verdicts import FromBestLie, Verdict
from dpgames.display import tuple_text
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, integer


@dataclass(frozen=True)
class OrdinalAudit(FromBestLie, Verdict):
    """The lie whose lottery is least dominated by truth's (module docstring).

    ``worst_case``: agent, true type, lie, gain (the score), profile (the truthful reports); empty
    when no lie was tried.

    Attributes
    ----------
    name : str
    notion : {"sd", "weak"}
        SD-strategy-proofness, or its weak form.
    n : int
    mode : {"profile", "all", "random"}
    profiles : int
        Profiles audited.
    best : float
        The best score (``-inf``: no lie tried).
    worst_case : dict
    scale : float
        1: scores are probabilities.
    laws : int
        New rule calls made by the audit.
    detail : str

    Examples
    --------
    A random dictator over three alternatives is SD-strategy-proof:

    >>> from fractions import Fraction
    >>> from dpgames import CustomMechanism, truthfulness_audit
    >>> from dpgames.types import rankings, ordinal_utility
    >>> def random_dictator(reports):
    ...     law = {}
    ...     for r in reports:
    ...         law[r[0]] = law.get(r[0], 0) + 1 / len(reports)
    ...     return law
    >>> mech = CustomMechanism(random_dictator, ordinal_utility, types=rankings("abc"))
    >>> truthfulness_audit(mech, n=2, profiles="all", ordinal=True).is_truthful()
    True
    """

    name: str
    notion: str
    n: int
    mode: str
    profiles: int
    best: float
    worst_case: dict
    scale: float
    laws: int
    detail: str = ""

    def describe(self) -> str:
        """A readable report: the notion, the profiles, the least dominated lie, the verdict."""
        name = {"sd": "SD-strategy-proofness", "weak": "weak SD-strategy-proofness"}[self.notion]
        where = {
            "profile": "at one profile",
            "all": f"at every one of the {self.profiles} profiles (exact)",
            "random": f"at {self.profiles} random profiles (a sample, not a proof)",
        }[self.mode]
        w = self.worst_case
        lines = [
            f"{name} of {self.name} with {self.n} agents",
            f"  every agent x every lie {where}; {self.detail}",
        ]
        if not w:
            lines.append("  no lie to try")
        else:
            lines.append(
                f"  largest excess probability {w['gain']:.6g} (margin "
                f"{self.margin:.6g}): agent {w['agent']} "
                f"(true type {w['true_type']!r}) reporting {w['lie']!r} at "
                f"{tuple_text(w['profile'])}"
            )
        lines.append(f"  verdict: {'truthful' if self.is_truthful() else 'NOT truthful'} ({name})")
        return "\n".join(lines)


def sd_score(
    u_truth: np.ndarray, p_truth: np.ndarray, u_lie: np.ndarray, p_lie: np.ndarray, weak: bool
) -> float:
    """The score of a lie from the ordinal utilities and probabilities of the outcomes of the two
    lotteries (module docstring): the excess ``P_lie(u >= c) - P_truth(u >= c)`` over every
    threshold ``c``."""
    c = np.unique(np.concatenate([u_truth, u_lie]))
    excess = ((u_lie[None, :] >= c[:, None]) * p_lie).sum(axis=1) - (
        (u_truth[None, :] >= c[:, None]) * p_truth
    ).sum(axis=1)
    top, low = float(excess.max()), float(excess.min())
    if not weak:
        return top
    return top if low >= -ROUNDING else low


def ordinal_audit(
    mech: CustomMechanism,
    profile: Sequence | None = None,
    *,
    weak: bool = False,
    n: int | None = None,
    profiles: int | str | None = None,
    rng: RNGLike = 0,
    lies: Any = None,
) -> OrdinalAudit:
    """SD-strategy-proofness (or its weak form) at ``profile``, or at every (or ``K`` random)
    profile of ``n``.

    Parameters
    ----------
    mech : CustomMechanism
        Its utility read as ordinal (module docstring); without payments.
    profile : sequence, optional
        The reports (one profile).
    weak : bool, default False
        Weak SD-strategy-proofness instead.
    n : int, optional
        Agents, with ``profiles``.
    profiles : "all" or int, optional
        Every profile of ``n`` agents, or that many random ones (from ``rng``).
    rng : RNGLike, default 0
        A seed, a numpy Generator or None (fresh entropy); the default gives the same audit every
        call.
    lies : collection or callable, optional
        The reports tried (as :func:`~dpgames.analysis.custom_audit.ex_post_audit`).

    Returns
    -------
    OrdinalAudit

    Raises
    ------
    ValidationError
        With payments, on bad ``profiles``, ``n`` or ``lies``, above the limits, or a failure of the
        user's functions.
    """
    if mech.payments is not None:
        raise ValidationError(
            "ordinal",
            "compares lotteries by stochastic dominance: a mechanism with payments "
            "(quasi-linear utility) is cardinal; audit it without ordinal=",
        )
    tried = Lies(mech, lies)
    starts: Iterator[tuple]
    if profiles is None:
        if profile is None:
            raise ValidationError(
                "profile", "is required for an ordinal audit, unless n= and profiles= are given"
            )
        first = mech._indices(profile, "profile")
        n, count, mode = first.size, 1, "profile"
        starts = iter([tuple(first.tolist())])
    else:
        if n is None:
            raise ValidationError("n", "is required (the number of agents) with profiles=")
        n = integer("n", n, low=1)
        mech.check_n(n)
        if profiles == "all":
            count, mode = count_profiles(mech, n), "all"
            starts = mech.profiles(n)
        elif isinstance(profiles, str):
            raise ValidationError(
                "profiles", f"must be 'all' or a number of random profiles, got {profiles!r}"
            )
        else:
            count, mode = integer("profiles", profiles, low=1), "random"
            generator = as_generator(rng)
            starts = (tuple(mech.random_profile(generator, n).tolist()) for _ in range(count))
    work = count * n * max(s.size for s in mech._spaces)
    if count > PROFILE_LIMIT or work > WORK_LIMIT:
        raise ValidationError(
            "profiles",
            f"is refused: {count:,} profiles (work {work:,}) above the limits "
            f"({PROFILE_LIMIT:,} profiles, work {WORK_LIMIT:,})",
        )
    mech.check_anonymity(n)
    before = mech.rule_calls
    best: tuple[float, dict] = (-np.inf, {})
    for start in starts:
        found = _at_profile(mech, np.asarray(start, dtype=np.intp), tried, weak)
        if found[0] > best[0]:
            best = found
    return OrdinalAudit(
        mech.name,
        "weak" if weak else "sd",
        n,
        mode,
        count,
        best[0],
        best[1],
        1.0,
        mech.rule_calls - before,
        f"lies: {tried.describe()}",
    )


def _at_profile(
    mech: CustomMechanism, idx: np.ndarray, tried: Lies, weak: bool
) -> tuple[float, dict]:
    labels = mech._labels_of(idx)
    truth = mech._entry(idx, labels)
    n = idx.size
    if mech.anonymous:
        classes = mech.classes(idx)
        agents = tried.representatives(
            range(n), [(int(c), int(t)) for c, t in zip(classes, idx)], False
        )
    else:
        agents = list(range(n))
    best: tuple[float, dict] = (-np.inf, {})
    for i in agents:
        t = int(idx[i])
        u0, p0 = _lottery(mech, i, t, truth)
        for x in np.flatnonzero(tried.allowed(i, t)).tolist():
            moved = idx.copy()
            moved[i] = x
            u1, p1 = _lottery(mech, i, t, mech._entry(moved))
            score = sd_score(u0, p0, u1, p1, weak)
            if score > best[0]:
                best = (
                    score,
                    {
                        "agent": i,
                        "true_type": labels[i],
                        "lie": mech.types[x],
                        "gain": score,
                        "profile": labels,
                    },
                )
    return best


def _lottery(
    mech: CustomMechanism, agent: int, t: int, found: tuple
) -> tuple[np.ndarray, np.ndarray]:
    """The ordinal utilities of type ``t`` for the outcomes of a cached law, with their
    probabilities."""
    out, p, _ = found
    outs = np.atleast_1d(out)
    u = mech._fill(agent, t, outs)[t, outs]
    return u, (np.ones(1) if p is None else p)
