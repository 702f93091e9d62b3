"""Exact truthfulness audits of a :class:`~dpgames.mechanisms.custom.CustomMechanism`.

* :func:`ex_post_audit`: at one profile, every agent x every lie (``true_types="own"``), or every
  agent x every hypothetical true type x every report, the others' reports fixed
  (``true_types="all"``).  With ``anonymous=True`` agents of equal role and type (and equal lies)
  are audited once.  Each (agent, lie) costs one cached law: the rule is called ``distinct (class,
  lie) pairs + 1`` times.
* :func:`dominant_audit`: dominant-strategy incentive compatibility is ex-post truthfulness at every
  profile (the agent's true type being her entry in it).  ``profiles="all"`` enumerates every
  profile of ``n`` agents (each within her type space; multisets within each role when anonymous)
  and is a proof; ``profiles=K`` audits ``K`` random profiles and ``profiles="search"`` hill-climbs
  on the largest gain from random starts: both find violations but prove nothing.

Every audit tries, for each agent, every report of her type space, or the restricted deviations
``lies=`` (a collection of reports, or a function ``(agent, true_type) -> reports``: "no profitable
truncation", "no adjacent swap").  Each names ``max_gain`` (the best lie's gain, floored at 0) and
``margin`` (the best lie's loss: how strictly truth wins).  Coalitions are audited by
:mod:`dpgames.analysis.coalition_audit`, lotteries over rankings in the stochastic-dominance sense
by :mod:`dpgames.analysis.ordinal_audit`.

Enumeration works on *lines* (:mod:`dpgames.analysis.lines`).  Gains within
``1e-12 x max(1, utility scale)`` of zero are rounding, not incentives.
:func:`custom_truthfulness_audit` is the one entry point (``dpgames.truthfulness_audit`` and
``assert_truthful`` call it); the Bayesian and sampled audits are in
:mod:`dpgames.analysis.sampled_audit"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from dpgames.analysis.coalition_audit import CoalitionAudit, coalition_audit
from dpgames.analysis.custom_enumeration import TIME_LIMIT, enumerate_all
from dpgames.analysis.lies import Lies
from dpgames.analysis.limits import check_calls
from dpgames.analysis.ordinal_audit import OrdinalAudit, ordinal_audit
from dpgames.analysis.sampled_audit import (
    BayesianAudit,
    SampledAudit,
    bayesian_audit,
    sampled_audit,
)
from dpgames.analysis.verdicts import FromBestLie, Verdict, best_and_margin
from dpgames.display import tuple_text
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import ValidationError, integer, non_negative


@dataclass(frozen=True)
class ExPostAudit(Verdict):
    """Gains at one profile.  ``gains[k, x]`` (``true_types="own"``) is the gain of ``agents[k]``
    reporting type index ``x``; ``gains[k, t, x]`` (``"all"``) that of ``agents[k]`` with true type
    ``t`` reporting ``x`` (truth-telling entries are 0; ``-inf`` marks a report not tried: outside
    the agent's type space or not among ``lies``).  ``max_gain = max(best lie's gain, 0)``;
    ``margin``: the best lie's loss (module :mod:`~dpgames.analysis.lines`, :class:`Verdict`).
    ``worst_case``: agent, true type, the best lie, its gain (negative when every lie loses:
    ``-margin``), profile (the reports, with the agent's true type in her place); empty when no lie
    was tried.  Exact: every audited agent x every lie.

    Attributes
    ----------
    name : str
        The mechanism's name.
    types : tuple
        The type labels (``x`` and ``t`` index them).
    profile : tuple
        The reports audited.
    true_types : {"own", "all"}
    agents : numpy.ndarray of int
        The agents audited (one per class and lies when the mechanism is anonymous).
    gains : numpy.ndarray, shape (k, m) or (k, m, m)
    scale : float
        The largest utility or payment met (sets the rounding slack).
    laws : int
        New rule calls made by the audit.
    lies : str
        The lies tried, in words.

    Examples
    --------
    >>> from dpgames import CustomMechanism, truthfulness_audit
    >>> median = CustomMechanism(
    ...     lambda r: sorted(r)[len(r) // 2],
    ...     lambda t, o: -abs(t - o),
    ...     types=range(5),
    ...     anonymous=True,
    ... )
    >>> audit = truthfulness_audit(median, [1, 3, 4])
    >>> audit.gains.shape, audit.max_gain, audit.margin, audit.is_truthful()
    ((3, 5), 0.0, 0.0, True)
    """

    name: str
    types: tuple
    profile: tuple
    true_types: str
    agents: np.ndarray
    gains: np.ndarray
    scale: float
    laws: int
    lies: str = "every report of her type space"

    @property
    def _masked(self) -> np.ndarray:
        m = len(self.types)
        if self.true_types == "all":
            return np.where(np.eye(m, dtype=bool)[None], -np.inf, self.gains)
        truth = np.zeros_like(self.gains, dtype=bool)
        own = [self.types.index(self.profile[i]) for i in self.agents]
        truth[np.arange(self.agents.size), own] = True
        return np.where(truth, -np.inf, self.gains)

    @property
    def max_gain(self) -> float:
        """The best lie's gain if positive, else 0: never negative (``<= rounding_slack``:
        truthful)."""
        return best_and_margin(float(self._masked.max()))[0]

    @property
    def margin(self) -> float:
        """The best lie's loss: positive when every lie strictly loses, ``inf`` when no lie was
        tried."""
        return best_and_margin(float(self._masked.max()))[1]

    @property
    def worst_case(self) -> dict[str, Any]:
        """The best lie: agent, true type, lie, gain and the profile (her true type in her
        place)."""
        g = self._masked
        at = np.unravel_index(int(np.argmax(g)), g.shape)
        if g[at] == -np.inf:
            return {}
        agent = int(self.agents[at[0]])
        true = self.types[at[1]] if self.true_types == "all" else self.profile[agent]
        profile = self.profile[:agent] + (true,) + self.profile[agent + 1 :]
        return {
            "agent": agent,
            "true_type": true,
            "lie": self.types[at[-1]],
            "gain": float(g[at]),
            "profile": profile,
        }

    def describe(self) -> str:
        """A readable report: what was enumerated, the largest gain, the margin and the verdict."""
        what = (
            "every lie" if self.true_types == "own" else "every hypothetical true type x every lie"
        )
        return "\n".join(
            [
                f"ex-post truthfulness of {self.name} at reports {tuple_text(self.profile)}",
                (
                    f"  exact: {self.agents.size} agents audited (of {len(self.profile)}) "
                    f"x {what} ({self.lies}), "
                    f"{self.laws} new rule calls"
                ),
                _best_line(self.worst_case, self.margin),
                (
                    f"  verdict: {'truthful' if self.is_truthful() else 'NOT truthful'} "
                    "(rounding slack "
                    f"{self.rounding_slack:.1e})"
                ),
            ]
        )


def _best_line(w: dict, margin: float) -> str:
    """The describe() line of the best lie and the margin."""
    if not w:
        return "  no lie to try: max_gain 0, margin inf"
    kind = "largest gain" if w["gain"] > 0 else "best lie loses"
    return (
        f"  {kind} {w['gain']:.6g} (margin {margin:.6g}): agent {w['agent']} (true type "
        f"{w['true_type']!r}) "
        f"reporting {w['lie']!r}"
        + (f" at {tuple_text(w['profile'])}" if w.get("profile") is not None else "")
    )


@dataclass(frozen=True)
class DominantAudit(FromBestLie, Verdict):
    """The best lie over a set of profiles.  ``mode``: ``"all"`` (every profile, a proof),
    ``"random"`` (``profiles`` random ones) or ``"search"`` (the worst found by hill climbing: not a
    proof). ``worst_case``: agent, true type, lie, gain and the profile (reports, the agent's true
    type in her place).

    Attributes
    ----------
    name : str
    n : int
        Agents per profile.
    mode : {"all", "random", "search"}
    profiles : int
        Profiles enumerated, drawn or visited.
    best : float
        The best lie's gain over them (negative when every lie loses everywhere; ``-inf``: no lie
        tried).
    worst_case : dict
    scale : float
        The largest utility or payment met (sets the rounding slack).
    laws : int
        New rule calls made by the audit.
    detail : str
        How the profiles were counted (e.g. multisets when anonymous) and the lies tried.

    Examples
    --------
    >>> from dpgames import CustomMechanism, truthfulness_audit
    >>> mean = CustomMechanism(
    ...     lambda r: round(sum(r) / len(r)),
    ...     lambda t, o: -abs(t - o),
    ...     types=range(5),
    ...     anonymous=True,
    ... )
    >>> audit = truthfulness_audit(mean, n=3, profiles="all")     # all 35 multisets of 3 reports
    >>> audit.profiles, audit.max_gain, audit.worst_case["profile"]
    (35, 1.0, (1, 0, 0))
    """

    name: str
    n: int
    mode: str
    profiles: int
    best: float
    worst_case: dict
    scale: float
    laws: int
    detail: str = ""

    def describe(self) -> str:
        """A readable report: the profiles covered (a proof or a sample), the best lie, the
        verdict."""
        kind = {
            "all": f"exact: every one of the {self.profiles} profiles"
            + (" (multisets)" if "multiset" in self.detail else ""),
            "random": f"{self.profiles} random profiles (a sample, not a proof)",
            "search": f"adversarial local search over {self.profiles} profiles visited "
            "(the worst found, not a proof)",
        }[self.mode]
        lines = [
            f"dominant-strategy truthfulness of {self.name} with {self.n} agents",
            f"  {kind}; every agent x every lie at each ({self.laws} new rule calls)",
        ]
        if self.detail:
            lines.append(f"  {self.detail}")
        lines.append(_best_line(self.worst_case, self.margin))
        lines.append(f"  verdict: {'truthful' if self.is_truthful() else 'NOT truthful'}")
        return "\n".join(lines)


#: What :func:`custom_truthfulness_audit` (and ``truthfulness_audit`` of a user's own mechanism)
#: returns. Which one is decided by the keywords and, between ``ExPostAudit`` and ``SampledAudit``,
#: by whether the rule only samples (known at run time), so the result's type is this union: every
#: member has ``max_gain``, ``margin``, ``worst_case``, ``rounding_slack``, ``is_truthful(tol)`` and
#: ``describe()``, usable without narrowing; narrow with ``isinstance`` (or call the audit's own
#: function) for its tables.
CustomAudit: TypeAlias = (
    ExPostAudit | DominantAudit | BayesianAudit | SampledAudit | CoalitionAudit | OrdinalAudit
)


# --- ex post
# ---------------------------------------------------------------------------------------------
def ex_post_audit(
    mech: CustomMechanism, profile: Sequence, true_types: str = "own", lies: Any = None
) -> ExPostAudit:
    """Exact gain of every audited agent and lie at ``profile`` (see the module docstring).

    Parameters
    ----------
    mech : CustomMechanism
    profile : sequence
        The reports, one type label per agent (each in her type space).
    true_types : {"own", "all"}, default "own"
    lies : collection or callable, optional
        The reports tried (default: every report of the agent's type space): a collection, or a
        function ``(agent, true_type) -> reports``.

    Returns
    -------
    ExPostAudit

    Raises
    ------
    ValidationError
        On an unknown ``true_types``, a report outside the agent's type space, bad ``lies``, a false
        anonymity declaration, too many rule calls, or a failure of the user's functions.
    """
    if true_types not in ("own", "all"):
        raise ValidationError("true_types", f"must be 'own' or 'all', got {true_types!r}")
    idx = mech._indices(profile, "profile")
    n, m = idx.size, mech.n_types
    mech.check_anonymity(n, idx)
    tried = Lies(mech, lies)
    base = mech._labels_of(idx)
    before = mech.rule_calls
    classes = mech.classes(idx)
    if mech.anonymous:
        agents = np.asarray(
            tried.representatives(
                range(n),
                [(int(c), int(t)) for c, t in zip(classes, idx)],
                whole=true_types == "all",
            ),
            dtype=np.intp,
        )
    else:
        agents = np.arange(n)
    sizes = [
        int(tried.allowed(i, int(idx[i])).sum()) if true_types == "own" else mech.space(i).size - 1
        for i in agents.tolist()
    ]
    check_calls("profile", "the ex-post audit", sum(sizes) + 1, "")
    if true_types == "own":
        gains = _own_gains(mech, idx, base, agents, tried)
    else:
        deviation = _deviations(mech, idx, base, mech._entry(idx, base))
        gains = np.full((agents.size, m, m), -np.inf)
        for k, i in enumerate(agents.tolist()):
            space = mech.space(i)
            table = np.empty((space.size, space.size))  # [t, x] over her space
            for j, x in enumerate(space.tolist()):
                found = deviation(i, x)
                table[:, j] = mech._values(i, found) - mech.paid(found[2], i, x)
            local = np.where(
                tried.local(i) | np.eye(space.size, dtype=bool),
                table - np.diag(table)[:, None],
                -np.inf,
            )
            gains[k][np.ix_(space, space)] = local
    return ExPostAudit(
        mech.name,
        mech.types,
        base,
        true_types,
        agents,
        gains,
        mech.scale,
        mech.rule_calls - before,
        tried.describe(),
    )


def _own_gains(
    mech: CustomMechanism, idx: np.ndarray, base: tuple, agents: np.ndarray, tried: Lies
) -> np.ndarray:
    """``gains[k, x]`` of :func:`ex_post_audit` (``true_types="own"``): the laws at the truthful
    profile and at every audited agent's every lie, an unbatched rule's cached (those not cached
    computed in one pass), a batched rule's all in one call, uncached; the expected utilities
    gathered at once."""
    n, m = idx.size, mech.n_types
    lies = [np.flatnonzero(tried.allowed(i, int(idx[i]))) for i in agents.tolist()]
    counts = np.fromiter((x.size for x in lies), dtype=np.intp, count=len(lies))
    who = np.repeat(agents, counts)  # the agent lying in each deviation
    lie = np.concatenate(lies) if lies else np.zeros(0, dtype=np.intp)
    profiles = np.repeat(idx[None], lie.size + 1, axis=0)  # the truth, then each deviation
    profiles[np.arange(1, lie.size + 1), who] = lie
    if mech.batched:
        mech.rule_calls += lie.size + 1
        outs, pays = mech._batch(profiles)
        entries = None
        if pays is not None and mech.anonymous:
            mech._by_class(idx, pays[0], base)  # agents of one class pay the same
    else:
        labels = mech.types
        moved = [
            base[:i] + (labels[x],) + base[i + 1 :] for i, x in zip(who.tolist(), lie.tolist())
        ]
        entries = mech._cached_entries(profiles, [base, *moved])
        pays = None
    rows = np.concatenate([agents, who])  # each audited agent at the truth, then each lie
    entry = np.concatenate([np.zeros(agents.size, dtype=np.intp), np.arange(1, lie.size + 1)])
    if entries is None or all(p is None for _, p, _ in entries):
        if entries is not None:
            outs = np.fromiter((o for o, _, _ in entries), dtype=np.intp, count=len(entries))
        at, outcome, weight = np.arange(rows.size), outs[entry], None
    else:  # lotteries: one term per (row, outcome of its law)
        laws = [(np.atleast_1d(o), np.ones(1) if p is None else p) for o, p, _ in entries]
        sizes = np.fromiter((o.size for o, _ in laws), dtype=np.intp, count=len(laws))[entry]
        first = np.concatenate([[0], np.cumsum([o.size for o, _ in laws])[:-1]])[entry]
        at = np.repeat(np.arange(rows.size), sizes)
        place = np.repeat(first - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
        outcome = np.concatenate([o for o, _ in laws])[place]
        weight = np.concatenate([p for _, p in laws])[place]
    true, agent = idx[rows][at], rows[at]
    values = np.empty(at.size)
    # one utility table per role (per agent when the utility depends on the agent)
    keys = agent if mech.agent_dependent else mech.roles_of(n)[agent]
    for key in np.unique(keys).tolist():
        where = np.flatnonzero(keys == key)
        table = mech._fill(int(agent[where[0]]), np.unique(true[where]), np.unique(outcome[where]))
        values[where] = table[true[where], outcome[where]]
    if weight is None:
        u = values
    else:  # each law's expectation as one dot product, as a single lie's audit computes it
        ends = np.cumsum(sizes)
        u = np.array([values[e - k : e] @ weight[e - k : e] for e, k in zip(ends, sizes)])
    if pays is not None:
        u = u - pays[entry, rows]
    elif mech.payments is not None and entries is not None:
        reported = np.concatenate([idx[agents], lie])
        u = u - np.array(
            [
                mech.paid(entries[e][2], i, x)
                for e, i, x in zip(entry.tolist(), rows.tolist(), reported.tolist())
            ]
        )
    gains = np.full((agents.size, m), -np.inf)
    gains[np.arange(agents.size), idx[agents]] = 0.0
    gains[np.repeat(np.arange(agents.size), counts), lie] = u[agents.size :] - np.repeat(
        u[: agents.size], counts
    )
    return gains


def _deviations(mech: CustomMechanism, idx: np.ndarray, base: tuple, truth: tuple) -> Callable:
    """``deviation(i, x)``: the cached law when agent ``i`` alone reports type index ``x``."""
    labels = mech.types
    own = idx.tolist()
    if mech.anonymous:
        # the counts per (role, type) class as int64 bytes: move one, as CustomMechanism.key
        counts = mech._key(idx)
        classes = mech.classes(idx).tolist()

        def key(i: int, x: int) -> Hashable:
            c = bytearray(counts)
            view = memoryview(c).cast("q")
            view[classes[i]] -= 1
            view[classes[i] - own[i] + x] += 1
            view.release()
            return bytes(c)
    else:

        def key(i: int, x: int) -> Hashable:
            moved = own.copy()
            moved[i] = x
            return tuple(moved)

    reports = list(base)

    def deviation(i: int, x: int) -> tuple:
        if x == own[i]:
            return truth
        reports[i] = labels[x]
        moved = tuple(reports)
        reports[i] = base[i]
        return mech._entry(None, moved, key(i, x))

    return deviation


# --- dominant strategy
# -----------------------------------------------------------------------------------
def dominant_audit(
    mech: CustomMechanism,
    n: int,
    profiles: int | str = "all",
    *,
    rng: RNGLike = 0,
    restarts: int = 8,
    steps: int = 100,
    lies: Any = None,
    chunk_size: int | None = None,
    processes: int = 1,
    dask: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool | None = None,
    max_seconds: float = TIME_LIMIT,
) -> DominantAudit:
    """Dominant-strategy audit of ``n`` agents: every profile, ``K`` random ones, or an adversarial
    search.

    ``"search"``: from each of ``restarts`` random profiles (drawn from ``rng``, default 0), move to
    the neighbour (one agent's type changed within her space; one per multiset when anonymous) of
    largest best-lie gain while it increases, at most ``steps`` moves; the worst profile met is
    returned.

    Parameters
    ----------
    mech : CustomMechanism
    n : int
        Agents, ``>= 1`` (the mechanism's number when it has per-agent type spaces or roles).
    profiles : "all", "search" or int, default "all"
        Every profile, streamed in chunks (:mod:`~dpgames.analysis.custom_enumeration`; refused,
        naming the count and the time estimate, when it would take longer than ``max_seconds``), the
        adversarial search, or that many random profiles.
    rng : RNGLike, default 0
        For the random profiles and the search's starts: a seed, a numpy Generator or None (fresh
        entropy).
    restarts, steps : int
        The search's random starts and moves per start.
    lies : collection or callable, optional
        The reports tried (as :func:`ex_post_audit`).
    chunk_size : int, optional
        ``profiles="all"``: profiles per chunk (default
        :data:`~dpgames.analysis.custom_enumeration.CHUNK`; a batched rule's block size).
    processes : int, default 1
        ``profiles="all"``: local processes running the chunks (the mechanism must pickle).
    dask : str, optional
        ``profiles="all"``: ``"local"`` (a Dask LocalCluster of ``processes`` workers) or a
        scheduler's ``tcp://HOST:PORT``, as the sweeps take it.
    checkpoint : str or path, optional
        ``profiles="all"``: a file to which each chunk's answer is appended; run the same audit with
        the same file to resume an interrupted one (same verdict and worst case as an uninterrupted
        run).
    progress : bool, optional
        ``profiles="all"``: a progress bar on stderr (default: only beyond a million profile
        evaluations).
    max_seconds : float, default :data:`~dpgames.analysis.custom_enumeration.TIME_LIMIT`
        ``profiles="all"``: beyond a million profile evaluations, the first chunk is timed and the
        enumeration refused if the estimate exceeds this.

    Returns
    -------
    DominantAudit
        ``laws``: the rule calls (profiles evaluated) made by this run, in every process.

    Raises
    ------
    ValidationError
        On a bad ``n``, ``profiles``, ``rng``, ``restarts``, ``steps``, ``lies`` or streaming
        option, too many profiles, a checkpoint of another audit, a false anonymity declaration, or
        a failure of the user's functions.
    """
    n = integer("n", n, low=1)
    mech.check_n(n)
    mech.check_anonymity(n)
    before = mech.rule_calls
    tried = Lies(mech, lies)
    stream = {
        "chunk_size": chunk_size,
        "processes": processes,
        "dask": dask,
        "checkpoint": checkpoint,
        "progress": progress,
        "max_seconds": max_seconds,
    }
    if profiles == "all":
        return _enumerate(mech, n, tried, **stream)
    if streamed(stream):
        raise ValidationError(
            "profiles",
            "chunk_size=, processes=, dask=, checkpoint=, progress= and max_seconds= "
            "apply to the exhaustive audit: profiles='all'",
        )
    generator = as_generator(rng)
    if profiles == "search":
        return _search(
            mech,
            n,
            generator,
            integer("restarts", restarts, low=1),
            integer("steps", steps, low=1),
            lies,
            before,
        )
    if isinstance(profiles, str):
        raise ValidationError(
            "profiles", f"must be 'all', 'search' or a number of random profiles, got {profiles!r}"
        )
    k = integer("profiles", profiles, low=1)
    audits = (
        ex_post_audit(mech, mech._labels_of(mech.random_profile(generator, n)), lies=lies)
        for _ in range(k)
    )
    worst = max(audits, key=lambda audit: -audit.margin)  # the first of the largest gain
    return DominantAudit(
        mech.name,
        n,
        "random",
        k,
        -worst.margin,
        worst.worst_case,
        mech.scale,
        mech.rule_calls - before,
        f"rng={rng!r}; lies: {tried.describe()}",
    )


#: The exhaustive dominant-strategy audit's streaming options and their defaults.
STREAMING = {
    "chunk_size": None,
    "processes": 1,
    "dask": None,
    "checkpoint": None,
    "progress": None,
    "max_seconds": TIME_LIMIT,
}


def streamed(options: dict[str, Any]) -> list[str]:
    """The streaming options (:data:`STREAMING`) given other values than their defaults."""
    return [name for name, value in options.items() if not _default(value, STREAMING[name])]


def _default(value: Any, default: Any) -> bool:
    """Whether ``value`` is ``default`` (``None``) or equal to it (any other value, an array, is
    not)."""
    if default is None or value is None:
        return value is default
    try:
        return type(value) is not bool and bool(value == default)
    except (TypeError, ValueError):
        return False


def _enumerate(mech: CustomMechanism, n: int, tried: Lies, **stream: Any) -> DominantAudit:
    best, count, calls = enumerate_all(mech, n, tried, **stream)
    worst = (
        {}
        if best is None or best.gain == -np.inf
        else {
            "agent": best.agent,
            "true_type": mech.types[best.true_type],
            "lie": mech.types[best.lie],
            "gain": best.gain,
            "profile": mech._labels_of(np.asarray(best.profile, dtype=np.intp)),
        }
    )
    detail = "anonymous: multisets, agents of equal role and type once; " if mech.anonymous else ""
    if mech.neutral and n > 1 and not tried.restricted:
        detail += "neutral: the others' profiles one per orbit under relabelling the alternatives; "
    return DominantAudit(
        mech.name,
        n,
        "all",
        count,
        -np.inf if best is None else best.gain,
        worst,
        mech.scale,
        calls,
        detail + f"lies: {tried.describe()}",
    )


def _search(
    mech: CustomMechanism,
    n: int,
    rng: np.random.Generator,
    restarts: int,
    steps: int,
    lies: Any,
    before: int,
) -> DominantAudit:
    """Hill climbing on the best lie's gain, moving one agent's type at a time, from random
    starts."""
    seen: dict[tuple, ExPostAudit] = {}

    def audit(p: tuple) -> ExPostAudit:
        if p not in seen:
            seen[p] = ex_post_audit(mech, mech._labels_of(np.asarray(p)), lies=lies)
        return seen[p]

    def best(p: tuple) -> float:
        return -audit(p).margin

    ends = []  # each restart's local maximum
    for _ in range(restarts):
        current = tuple(mech.random_profile(rng, n).tolist())
        for _ in range(steps):
            moves = [
                current[:i] + (x,) + current[i + 1 :]
                for i in range(n)
                for x in mech.space(i).tolist()
                if x != current[i]
            ]
            if mech.anonymous:
                moves = list({mech.canonical(p): p for p in moves}.values())
            step = max(moves, key=best, default=current)
            if best(step) <= best(current):
                break
            current = step
        ends.append(audit(current))
    worst = max(ends, key=lambda end: -end.margin)  # the first of the largest gain
    detail = f"{restarts} restarts, at most {steps} steps each; a local maximum of the gain"
    return DominantAudit(
        mech.name,
        n,
        "search",
        len(seen),
        -worst.margin,
        worst.worst_case,
        mech.scale,
        mech.rule_calls - before,
        detail,
    )


# --- one entry point
# -------------------------------------------------------------------------------------
def as_custom(
    mechanism: Any,
    utility: Callable | None = None,
    types: Any = None,
    payments: Callable | None = None,
    anonymous: bool = False,
) -> CustomMechanism:
    """``mechanism`` itself if a CustomMechanism, else a CustomMechanism of a plain rule and the
    keywords.

    Raises
    ------
    ValidationError
        If keywords are given with a CustomMechanism, ``mechanism`` is not callable, or a plain rule
        comes without ``utility`` or ``types``.
    """
    if isinstance(mechanism, CustomMechanism):
        if utility is not None or types is not None or payments is not None or anonymous:
            raise ValidationError(
                "utility",
                "utility=, types=, payments= and anonymous= are for a plain callable; "
                "a CustomMechanism already has them",
            )
        return mechanism
    if not callable(mechanism):
        raise ValidationError(
            "mechanism", f"must be a CustomMechanism or a callable rule, got {mechanism!r}"
        )
    if utility is None or types is None:
        raise ValidationError(
            "utility" if utility is None else "types",
            "is required to audit a plain callable rule (with types=, the type space)",
        )
    return CustomMechanism(mechanism, utility, types, payments=payments, anonymous=anonymous)


def custom_truthfulness_audit(
    mechanism: Any,
    profile: Sequence | None = None,
    *,
    true_types: str = "own",
    n: int | None = None,
    profiles: int | str | None = None,
    prior: Any = None,
    rng: RNGLike = 0,
    samples: int | None = None,
    utility: Callable | None = None,
    types: Any = None,
    payments: Callable | None = None,
    anonymous: bool = False,
    tol: float = 0.0,
    restarts: int = 8,
    steps: int = 100,
    lies: Any = None,
    coalitions: int | Sequence | None = None,
    manipulation: str = "weak",
    ordinal: bool | str = False,
    chunk_size: int | None = None,
    processes: int = 1,
    dask: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool | None = None,
    max_seconds: float = TIME_LIMIT,
) -> CustomAudit:
    """The audit a call asks for: coalitional (``coalitions=``), ordinal (``ordinal=``), Bayesian
    (``prior=``), dominant strategy (``profiles=``), sampled (a sampling-only rule at ``profile``)
    or ex post at ``profile``.  ``tol`` is only checked here (the audits' ``is_truthful(tol)``
    applies it).

    Parameters
    ----------
    mechanism : CustomMechanism or callable
    profile : sequence, optional
        The reports (ex post, sampled, coalitional and ordinal audits at a profile; gives ``n`` to
        the others).
    true_types, n, profiles, prior, rng, samples, utility, types, payments, anonymous, restarts,
    steps, lies
        As in :func:`ex_post_audit`, :func:`dominant_audit`,
        :func:`~dpgames.analysis.sampled_audit.bayesian_audit`,
        :func:`~dpgames.analysis.sampled_audit.sampled_audit` and
        :class:`~dpgames.mechanisms.custom.CustomMechanism`.
    tol : float, default 0
        Checked to be ``>= 0``.
    coalitions, manipulation
        As in :func:`~dpgames.analysis.coalition_audit.coalition_audit`.
    ordinal : bool or "weak", default False
        As in :func:`~dpgames.analysis.ordinal_audit.ordinal_audit` (``True``:
        SD-strategy-proofness).
    chunk_size, processes, dask, checkpoint, progress, max_seconds
        The exhaustive dominant-strategy audit's streaming (:func:`dominant_audit`).

    Returns
    -------
    CustomAudit
        An ``ExPostAudit``, ``DominantAudit``, ``BayesianAudit``, ``SampledAudit``,
        ``CoalitionAudit`` or ``OrdinalAudit``.

    Raises
    ------
    ValidationError
        When the options do not name one audit that applies (e.g. a prior for a sampling-only rule,
        or coalitions with a prior), or as the audit chosen.
    """
    non_negative("tol", tol)
    mech = as_custom(mechanism, utility, types, payments, anonymous)
    stream: dict[str, Any] = {
        "chunk_size": chunk_size,
        "processes": processes,
        "dask": dask,
        "checkpoint": checkpoint,
        "progress": progress,
        "max_seconds": max_seconds,
    }
    given = streamed(stream)
    if given and (
        profiles is None
        or prior is not None
        or coalitions is not None
        or ordinal is not False
        or mech.sampling
    ):
        raise ValidationError(
            given[0],
            "applies to the exhaustive dominant-strategy audit only (n= with profiles='all'), "
            "not to the audit these arguments ask for",
        )
    if n is None and profile is not None and (profiles is not None or prior is not None):
        n = len(mech._indices(profile, "profile"))
    if n is None and mech.n_agents is not None and profile is None:
        n = mech.n_agents
    if coalitions is not None or ordinal is not False:
        which = "coalitions" if coalitions is not None else "ordinal"
        if coalitions is not None and ordinal is not False:
            raise ValidationError("ordinal", "and coalitions= are not audited together: give one")
        if prior is not None or mech.sampling or true_types != "own":
            raise ValidationError(
                which,
                "applies to exact ex-post and dominant-strategy audits (a profile, or n= "
                "with profiles=): not with prior=, true_types='all' or a sampling-only rule",
            )
        if profiles is not None and profiles == "search":
            raise ValidationError(
                "profiles", f"must be 'all' or a number of random profiles with {which}="
            )
        where = {"profile": profile, "n": n, "profiles": profiles, "rng": rng, "lies": lies}
        if coalitions is not None:
            return coalition_audit(mech, coalitions=coalitions, manipulation=manipulation, **where)
        return ordinal_audit(mech, weak=_ordinal_kind(ordinal), **where)
    if mech.sampling:
        if prior is not None or profiles is not None or profile is None:
            raise ValidationError(
                "rule",
                f"{mech.name} is sampling-only (rule(reports, rng)): only the sampled "
                "audit at a profile applies: truthfulness_audit(mech, profile, samples=...)",
            )
        if true_types != "own":
            raise ValidationError(
                "true_types", "the sampled audit tries each agent's own type only ('own')"
            )
        return sampled_audit(mech, profile, samples=samples, rng=rng, lies=lies)
    if prior is not None:
        return bayesian_audit(mech, prior, _required_n(n), samples=samples, rng=rng, lies=lies)
    if profiles is not None:
        return dominant_audit(
            mech,
            _required_n(n),
            profiles,
            rng=rng,
            restarts=restarts,
            steps=steps,
            lies=lies,
            **stream,
        )
    if profile is None:
        raise ValidationError(
            "profile",
            "is required, unless profiles= (dominant strategy) or prior= (Bayesian) "
            "is given with n=",
        )
    return ex_post_audit(mech, profile, true_types, lies)


def _ordinal_kind(ordinal: Any) -> bool:
    """``weak`` from ``ordinal=``: ``True`` (SD-strategy-proofness) or ``"weak"`` (weak SD)."""
    if ordinal is True or ordinal == "sd":
        return False
    if ordinal == "weak":
        return True
    raise ValidationError(
        "ordinal",
        f"must be True (SD-strategy-proofness), 'sd' or 'weak' (weak SD), got {ordinal!r}",
    )


def _required_n(n: int | None) -> int:
    """``n``, required by the Bayesian and dominant-strategy audits."""
    if n is None:
        raise ValidationError("n", "is required (the number of agents) with prior= or profiles=")
    return n
