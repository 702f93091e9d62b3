"""Coalitional (group) manipulation of a :class:`~dpgames.mechanisms.custom.CustomMechanism`, exact.

A coalition ``C`` manipulates at a profile when its members, reporting jointly a profile of lies
(the others truthful), change their expected utilities by gains ``g_i`` (``i`` in ``C``) that are,
in the literature's named senses:

* ``"strong"`` -- every member strictly gains (``min g_i > 0``): the manipulation that *strong*
  group strategy-proofness rules out, e.g. for the proposing side of deferred acceptance (Dubins &
  Freedman 1981);
* ``"weak"`` -- no member loses and one strictly gains (``min g_i >= 0 < max g_i``, a Pareto
  improvement for the coalition): ruled out by *group strategy-proofness*, e.g. for top trading
  cycles (Roth 1982; Bird 1984);
* ``"transfers"`` -- the coalition's total gain is positive (``sum g_i > 0``): with transfers inside
  the coalition (side payments) every member can be made better off.

Each joint lie is scored (``strong``: ``min g``; ``weak``: ``max g`` when no member loses, else
``min g``, the loss of the worst-off member; ``transfers``: ``sum g``) so that a coalition
manipulates exactly when its best score is positive (beyond the rounding slack); ``max_gain =
max(best score, 0)`` and ``margin = -best score``.  Members may report the truth inside a joint lie
(the all-truth profile is not a lie). Coalitions of one agent are unilateral lies: ``coalitions=1``
is the ex-post audit.

Exact by enumeration: every coalition x every joint report of its members (each within her type
space or her ``lies``), at one profile or at every profile of ``n`` agents; refused before the first
rule call above :data:`~dpgames.analysis.limits.CALL_LIMIT` joint lies or
:data:`~dpgames.analysis.limits.PROFILE_LIMIT` profiles, naming the count.  When the mechanism is
anonymous, coalitions of the same (role, type) members are audited once at a profile, and
``coalitions=k`` at every profile enumerates multisets.  When it is anonymous without payments and
every member may report anything of her space, a coalition's joint reports are enumerated as
multisets within each role (``C(m + k - 1, k)`` instead of ``m^k`` for ``k`` members of ``m``
types): the law depends only on the multiset, each gain only on the law and the member's true type,
so every score is the same for each assignment of a multiset to the members (the verdict,
``max_gain`` and ``margin`` are those of the full product; ``worst_case`` names one assignment).  A
batched rule evaluates the joint lies in blocks of :data:`JOINT_BLOCK`, one call each.

SVVAMP's coalitional manipulation (Durand's *CM*: the voters who prefer some ``c`` to the sincere
winner ``w`` can elect ``c``, the others sincere) is ``manipulation="strong"`` with the coalitions
:func:`dpgames.types.coalitions_preferring` ``(profile, w)``: a coalition all of whose members
prefer the new winner ``o`` to ``w`` is a subset of the voters preferring ``o``, who can cast the
same ballots.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgames.analysis.lies import Lies
from dpgames.analysis.limits import CALL_LIMIT, PROFILE_LIMIT, ROUNDING, count_profiles
from dpgames.analysis.verdicts import FromBestLie, Verdict
from dpgames.display import tuple_text
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, choice, integer

#: The notions of coalitional manipulation, named as in the module docstring.
MANIPULATIONS = ("weak", "strong", "transfers")


@dataclass(frozen=True)
class CoalitionAudit(FromBestLie, Verdict):
    """The best joint lie of any audited coalition, scored by ``manipulation`` (module docstring).

    ``worst_case``: ``coalition`` (agents), ``true_types``, ``lie`` (their joint report), ``gains``
    (each member's), ``gain`` (the score), ``profile`` (the truthful reports), and ``agent`` (the
    coalition's first member) for the views shared with the other audits; empty when no joint lie
    was tried.

    Attributes
    ----------
    name : str
    manipulation : {"weak", "strong", "transfers"}
    n : int
        Agents.
    mode : {"profile", "all", "random"}
        One profile, every profile (a proof), or random profiles (a sample).
    profiles : int
        Profiles audited.
    coalitions : int
        Coalitions audited per profile (before merging equal ones of an anonymous mechanism).
    joint_lies : int
        Joint lies evaluated.
    best : float
        The best score (``-inf``: no joint lie tried).
    worst_case : dict
    scale : float
        The largest utility or payment met (sets the rounding slack).
    laws : int
        New rule calls made by the audit.
    detail : str
        The lies tried and how profiles were counted.

    Examples
    --------
    Borda over a, b, c (ties to the earlier letter): at this profile b wins, no voter alone changes
    the winner to her advantage, but the two voters a > b > c, both ranking b above c, put b last
    and a wins:

    >>> from dpgames import CustomMechanism, truthfulness_audit
    >>> from dpgames.types import rankings, ordinal_utility
    >>> def borda(reports):
    ...     score = {a: sum(2 - r.index(a) for r in reports) for a in "abc"}
    ...     return max("abc", key=lambda a: (score[a], -ord(a)))
    >>> mech = CustomMechanism(borda, ordinal_utility, types=rankings("abc"), anonymous=True)
    >>> profile = [("a", "b", "c"), ("a", "b", "c"), ("b", "c", "a"), ("b", "c", "a")]
    >>> truthfulness_audit(mech, profile, coalitions=1).max_gain
    0.0
    >>> audit = truthfulness_audit(mech, profile, coalitions=2, manipulation="strong")
    >>> audit.worst_case["coalition"], audit.worst_case["lie"], audit.worst_case["gains"]
    ((0, 1), (('a', 'c', 'b'), ('a', 'c', 'b')), (1.0, 1.0))
    """

    name: str
    manipulation: str
    n: int
    mode: str
    profiles: int
    coalitions: int
    joint_lies: int
    best: float
    worst_case: dict
    scale: float
    laws: int
    detail: str = ""

    def describe(self) -> str:
        """A readable report: coalitions and profiles covered, the best joint lie, the verdict."""
        where = {
            "profile": f"at reports {tuple_text(self.worst_case.get('profile', ()))}"
            if self.worst_case
            else "at one profile",
            "all": f"at every one of the {self.profiles} profiles (exact)",
            "random": f"at {self.profiles} random profiles (a sample, not a proof)",
        }[self.mode]
        lines = [
            f"coalitional ({self.manipulation}) manipulation of {self.name} with {self.n} agents",
            f"  {self.coalitions} coalitions x every joint lie, {where}: "
            f"{self.joint_lies} joint lies, "
            f"{self.laws} new rule calls",
            f"  {self.detail}",
        ]
        w = self.worst_case
        if not w:
            lines.append("  no joint lie to try: max_gain 0, margin inf")
        else:
            lines.append(
                f"  best joint lie: coalition {w['coalition']} (true types "
                f"{tuple_text(w['true_types'])}) "
                f"reporting {tuple_text(w['lie'])}: gains "
                f"{tuple_text([round(g, 6) for g in w['gains']])}, "
                f"score {w['gain']:.6g} (margin {self.margin:.6g})"
            )
        verdict = "no coalition manipulates" if self.is_truthful() else "a coalition manipulates"
        lines.append(f"  verdict: {verdict} ({self.manipulation})")
        return "\n".join(lines)


def parse_coalitions(coalitions: Any, n: int) -> list[tuple[int, ...]]:
    """Every coalition of at most ``k`` agents (``coalitions=k``), or an explicit collection of
    agent groups, as sorted tuples (duplicates merged).

    Raises
    ------
    ValidationError
        On ``k`` outside ``[1, n]``, more than :data:`CALL_LIMIT` coalitions, or a group that is
        empty, repeats an agent or names one outside ``[0, n)``.
    """
    if isinstance(coalitions, (int, np.integer)) and not isinstance(coalitions, bool):
        k = integer("coalitions", coalitions, low=1)
        if k > n:
            raise ValidationError("coalitions", f"is {k}: larger than the {n} agents")
        count = sum(math.comb(n, s) for s in range(1, k + 1))
        if count > CALL_LIMIT:
            raise ValidationError(
                "coalitions",
                f"is refused: {count:,} coalitions of at most {k} of {n} agents "
                f"exceed the limit of {CALL_LIMIT:,}",
            )
        return [c for size in range(1, k + 1) for c in itertools.combinations(range(n), size)]
    if isinstance(coalitions, (str, bytes)) or not isinstance(coalitions, Iterable):
        raise ValidationError(
            "coalitions",
            f"must be a size k (every coalition of at most k agents) or a list of "
            f"agent groups, got {coalitions!r}",
        )
    out: dict[tuple[int, ...], None] = {}
    for group in itertools.islice(coalitions, CALL_LIMIT + 1):
        members = _group(group, n)
        out[members] = None
    if not out:
        raise ValidationError("coalitions", "must hold at least one coalition")
    if len(out) > CALL_LIMIT:
        raise ValidationError("coalitions", f"is refused: more than {CALL_LIMIT:,} coalitions")
    return list(out)


def _group(group: Any, n: int) -> tuple[int, ...]:
    if isinstance(group, (str, bytes)) or not isinstance(group, Iterable):
        raise ValidationError(
            "coalitions", f"each coalition must be a collection of agents, got {group!r}"
        )
    members = list(group)
    if not members:
        raise ValidationError("coalitions", "holds an empty coalition")
    for i in members:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < n:
            raise ValidationError(
                "coalitions", f"names agent {i!r}: agents are 0-based positions below {n}"
            )
    if len(set(members)) != len(members):
        raise ValidationError("coalitions", f"repeats an agent in {tuple(members)!r}")
    return tuple(sorted(int(i) for i in members))


def scores(gains: np.ndarray, manipulation: str, slack: float) -> np.ndarray:
    """The score of each joint lie from its members' gains ``gains[lie, member]`` (module
    docstring)."""
    low = gains.min(axis=1)
    if manipulation == "strong":
        return low
    if manipulation == "transfers":
        return gains.sum(axis=1)
    return np.where(low >= -slack, gains.max(axis=1), low)


def coalition_audit(
    mech: CustomMechanism,
    profile: Sequence | None = None,
    *,
    coalitions: Any,
    manipulation: str = "weak",
    n: int | None = None,
    profiles: int | str | None = None,
    rng: RNGLike = 0,
    lies: Any = None,
) -> CoalitionAudit:
    """The best joint lie of every coalition at ``profile``, or at every (or ``K`` random) profile
    of ``n``.

    Parameters
    ----------
    mech : CustomMechanism
    profile : sequence, optional
        The reports (one profile).
    coalitions : int or collection of agent groups
        ``k``: every coalition of at most ``k`` agents; or the coalitions themselves.
    manipulation : {"weak", "strong", "transfers"}, default "weak"
        The notion (module docstring).
    n : int, optional
        Agents, with ``profiles``.
    profiles : "all" or int, optional
        Every profile of ``n`` agents (exact) or that many random ones (from ``rng``).
    rng : RNGLike, default 0
        A seed, a numpy Generator or None (fresh entropy); the default gives the same audit every
        call.
    lies : collection or callable, optional
        Each member's reports (as :func:`~dpgames.analysis.custom_audit.ex_post_audit`).

    Returns
    -------
    CoalitionAudit

    Raises
    ------
    ValidationError
        On bad ``coalitions`` (larger than ``n``, unknown agents), ``manipulation``, ``profiles`` or
        ``lies``, above the limits (naming the count), or a failure of the user's functions.
    """
    manipulation = choice("manipulation", manipulation, MANIPULATIONS)
    tried = Lies(mech, lies)
    if profiles is None:
        if profile is None:
            raise ValidationError(
                "profile", "is required for a coalitional audit, unless n= and profiles= are given"
            )
        first = mech._indices(profile, "profile")
        n = first.size
        starts: Iterator[tuple] = iter([tuple(first.tolist())])
        count, mode = 1, "profile"
    else:
        if n is None:
            raise ValidationError("n", "is required (the number of agents) with profiles=")
        n = integer("n", n, low=1)
        mech.check_n(n)
        if profiles == "all":
            count, mode = count_profiles(mech, n), "all"
        elif isinstance(profiles, str):
            raise ValidationError(
                "profiles", f"must be 'all' or a number of random profiles, got {profiles!r}"
            )
        else:
            count, mode = integer("profiles", profiles, low=1), "random"
    groups = parse_coalitions(coalitions, n)
    every = isinstance(coalitions, (int, np.integer))
    if profiles is not None:
        # multisets cover every profile only when every coalition is audited
        canonical = mech.anonymous and every
        if mode == "all":
            if not canonical:
                count = math.prod(mech.space(i).size for i in range(n))
            starts = (
                mech.profiles(n)
                if canonical
                else itertools.product(*(mech.space(i).tolist() for i in range(n)))
            )
        else:
            generator = as_generator(rng)
            starts = (tuple(mech.random_profile(generator, n).tolist()) for _ in range(count))
    multisets = by_multisets(mech, tried)
    planned = count * sum(joint_count(mech, c, multisets) - 1 for c in groups)
    if count > PROFILE_LIMIT or planned > CALL_LIMIT:
        raise ValidationError(
            "coalitions" if count <= PROFILE_LIMIT else "profiles",
            f"is refused: {len(groups):,} coalitions at {count:,} profiles make about "
            f"{planned:,} joint lies (limits: {CALL_LIMIT:,} joint lies, {PROFILE_LIMIT:,} "
            "profiles); give fewer or smaller coalitions, fewer profiles or lies=",
        )
    mech.check_anonymity(n)
    before = mech.rule_calls
    best, evaluated = -np.inf, 0
    case: dict = {}
    for start in starts:
        found, joint = _at_profile(
            mech, np.asarray(start, dtype=np.intp), groups, tried, manipulation
        )
        evaluated += joint
        if found[0] > best:
            best, case = found
    detail = f"lies: {tried.describe()}" + (
        "; anonymous: multisets" if mode == "all" and mech.anonymous and every else ""
    )
    return CoalitionAudit(
        mech.name,
        manipulation,
        n,
        mode,
        count,
        len(groups),
        evaluated,
        best,
        case,
        mech.scale,
        mech.rule_calls - before,
        detail,
    )


#: Joint lies evaluated per block (one call of a batched rule).
JOINT_BLOCK = 65_536


def by_multisets(mech: CustomMechanism, tried: Lies) -> bool:
    """Whether a coalition's joint reports count as multisets (per role): an anonymous mechanism
    without payments, every member free to report anything of her space.  Then a joint report's law
    depends only on its multiset, each member's gain only on the law and her true type, and every
    score (min, max, sum of the gains) is the same for every assignment of one multiset to the
    members."""
    return mech.anonymous and mech.payments is None and not tried.restricted


def joint_count(mech: CustomMechanism, group: Sequence[int], multisets: bool) -> int:
    """The joint reports of ``group`` (truth included): ``prod m_i``, or with multisets
    ``prod_r C(m_r + c_r - 1, c_r)`` over its roles (``c_r`` members with ``m_r`` types)."""
    if not multisets:
        return math.prod(mech.space(i).size for i in group)
    roles = [mech.role(i) for i in group]
    return math.prod(
        math.comb(mech._spaces[r].size + roles.count(r) - 1, roles.count(r)) for r in set(roles)
    )


def _joint_reports(
    mech: CustomMechanism, idx: np.ndarray, group: tuple[int, ...], options: list, multisets: bool
) -> Iterator[tuple[int, ...]]:
    """Every joint report of ``group`` but the truth (type indices, in the order of ``group``): the
    product of the members' ``options``, or with multisets one assignment per multiset within each
    role (members of a role in order get its sorted types; the truthful multiset, when its members'
    types differ, as the rotation of their reports: a real joint lie of gains 0)."""
    truth = tuple(int(idx[i]) for i in group)
    if not multisets:
        yield from itertools.islice(itertools.product(*options), 1, None)  # the first is the truth
        return
    roles = [mech.role(i) for i in group]
    places = {r: [k for k, q in enumerate(roles) if q == r] for r in dict.fromkeys(roles)}
    out = list(truth)
    for combos in itertools.product(
        *(
            itertools.combinations_with_replacement(mech._spaces[r].tolist(), len(at))
            for r, at in places.items()
        )
    ):
        for at, combo in zip(places.values(), combos):
            for k, t in zip(at, combo):
                out[k] = t
        joint = tuple(out)
        if joint != truth:
            yield joint
            continue
        for at in places.values():  # the truth itself: rotated within a role of mixed types
            mixed = len({truth[k] for k in at}) > 1
            if mixed:
                rotated = list(truth)
                for k, j in zip(at, at[1:] + at[:1]):
                    rotated[k] = truth[j]
                yield tuple(rotated)
                break


def _at_profile(
    mech: CustomMechanism,
    idx: np.ndarray,
    groups: list[tuple[int, ...]],
    tried: Lies,
    manipulation: str,
) -> tuple[tuple[float, dict], int]:
    """The best score and its case at one profile, and the number of joint lies evaluated."""
    labels = mech._labels_of(idx)
    truth = mech._entry(idx, labels)
    honest = {i: mech._value(i, int(idx[i]), int(idx[i]), truth) for i in range(idx.size)}
    classes = mech.classes(idx).tolist()
    multisets = by_multisets(mech, tried)
    seen: set = set()
    best: tuple[float, dict] = (-np.inf, {})
    evaluated = 0
    for group in groups:
        if mech.anonymous and not tried.function:
            key = tuple(sorted(classes[i] for i in group))
            if key in seen:
                continue
            seen.add(key)
        options = [
            [int(idx[i]), *np.flatnonzero(tried.allowed(i, int(idx[i]))).tolist()] for i in group
        ]
        members = list(group)
        joint_lies = _joint_reports(mech, idx, group, options, multisets)
        while True:
            block = np.array(list(itertools.islice(joint_lies, JOINT_BLOCK)), dtype=np.intp)
            if not block.size:
                break
            evaluated += block.shape[0]
            gains = _joint_gains(mech, idx, members, block, honest)
            score = scores(gains, manipulation, ROUNDING * max(1.0, mech.scale))
            j = int(np.argmax(score))
            if score[j] > best[0]:
                best = (
                    float(score[j]),
                    {
                        "coalition": group,
                        "agent": group[0],
                        "true_types": tuple(labels[i] for i in group),
                        "lie": mech._labels_of(block[j]),
                        "gains": tuple(gains[j].tolist()),
                        "gain": float(score[j]),
                        "profile": labels,
                    },
                )
    return best, evaluated


def _joint_gains(
    mech: CustomMechanism, idx: np.ndarray, members: list[int], block: np.ndarray, honest: dict
) -> np.ndarray:
    """``gains[lie, member]`` of the joint reports ``block`` (type indices of ``members``): a
    batched rule called once on the block, else each profile's cached law."""
    profiles = np.repeat(idx[None], block.shape[0], axis=0)
    profiles[:, members] = block
    gains = np.empty(block.shape)
    if mech.batched:
        mech.rule_calls += block.shape[0]
        outs, pays = mech._batch(profiles)
        for k, i in enumerate(members):
            t = int(idx[i])
            gains[:, k] = mech._fill(i, t, np.unique(outs))[t, outs] - honest[i]
            if pays is not None:
                gains[:, k] -= pays[:, i]
        return gains
    found = [mech._entry(p) for p in profiles]
    for k, i in enumerate(members):
        gains[:, k] = mech._values_at(i, int(idx[i]), block[:, k].tolist(), found) - honest[i]
    return gains
