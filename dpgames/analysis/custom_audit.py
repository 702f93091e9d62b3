"""Exact truthfulness audits of a :class:`~dpgames.mechanisms.custom.CustomMechanism`.

* :func:`ex_post_audit`: at one profile, every agent x every lie (``true_types="own"``), or every agent x
  every hypothetical true type x every report, the others' reports fixed (``true_types="all"``).  With
  ``anonymous=True`` agents of equal type are audited once.  Each (agent, lie) costs one cached law:
  the rule is called ``distinct (class, lie) pairs + 1`` times.
* :func:`dominant_audit`: dominant-strategy incentive compatibility is ex-post truthfulness at every
  profile (the agent's true type being her entry in it).  ``profiles="all"`` enumerates every profile of
  ``n`` agents (multisets when anonymous) and is a proof; ``profiles=K`` audits ``K`` random profiles and
  ``profiles="search"`` hill-climbs on the largest gain from random starts: both find violations but
  prove nothing.

Enumeration works on *lines* (:mod:`dpgames.analysis.custom_lines`).  Gains within
``1e-12 x max(1, utility scale)`` of zero are rounding, not incentives.  :func:`custom_truthfulness_audit`
is the one entry point (``dpgames.truthfulness_audit`` and ``assert_truthful`` call it); the Bayesian and
sampled audits are in :mod:`dpgames.analysis.sampled_audit`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from dpgames.analysis.custom_lines import (
    BLOCK,
    PROFILE_LIMIT,
    WORK_LIMIT,
    Lines,
    Verdict,
    check_calls,
    count_profiles,
    line_gains,
)
from dpgames.analysis.sampled_audit import BayesianAudit, SampledAudit, bayesian_audit, sampled_audit
from dpgames.mechanisms.custom import CustomMechanism, _show
from dpgames.privacy.rng import as_generator
from dpgames.validation import ValidationError, integer, non_negative


@dataclass(frozen=True)
class ExPostAudit(Verdict):
    """Gains at one profile.  ``gains[k, x]`` (``true_types="own"``) is the gain of ``agents[k]`` reporting
    type index ``x``; ``gains[k, t, x]`` (``"all"``) that of ``agents[k]`` with true type ``t`` reporting ``x``
    (truth-telling entries are 0).  ``worst_case``: agent, true type, lie, gain, profile (the reports,
    with the agent's true type in her place).  Exact: every audited agent x every report.

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
        The agents audited (one per class when the mechanism is anonymous).
    gains : numpy.ndarray, shape (k, m) or (k, m, m)
    scale : float
        The largest utility or payment met (sets the rounding slack).
    laws : int
        New rule calls made by the audit.

    Examples
    --------
    >>> from dpgames import CustomMechanism, truthfulness_audit
    >>> median = CustomMechanism(lambda r: sorted(r)[len(r) // 2], lambda t, o: -abs(t - o), types=range(5),
    ...                          anonymous=True)
    >>> audit = truthfulness_audit(median, [1, 3, 4])
    >>> audit.gains.shape, audit.max_gain, audit.is_truthful()
    ((3, 5), 0.0, True)
    """

    name: str
    types: tuple
    profile: tuple
    true_types: str
    agents: np.ndarray
    gains: np.ndarray
    scale: float
    laws: int

    @property
    def _masked(self) -> np.ndarray:
        m = len(self.types)
        if m == 1:
            return self.gains
        if self.true_types == "all":
            return np.where(np.eye(m, dtype=bool)[None], -np.inf, self.gains)
        truth = np.zeros_like(self.gains, dtype=bool)
        own = [self.types.index(self.profile[i]) for i in self.agents]
        truth[np.arange(self.agents.size), own] = True
        return np.where(truth, -np.inf, self.gains)

    @property
    def max_gain(self) -> float:
        """The largest gain over every audited agent and lie (``<= 0`` up to rounding: truthful)."""
        return float(self._masked.max())

    @property
    def worst_case(self) -> dict[str, Any]:
        """The most profitable lie: agent, true type, lie, gain and the profile (her true type in her place)."""
        g = self._masked
        at = np.unravel_index(int(np.argmax(g)), g.shape)
        agent = int(self.agents[at[0]])
        true = self.types[at[1]] if self.true_types == "all" else self.profile[agent]
        profile = self.profile[:agent] + (true,) + self.profile[agent + 1:]
        return {"agent": agent, "true_type": true, "lie": self.types[at[-1]], "gain": float(g[at]),
                "profile": profile}

    def describe(self) -> str:
        """A readable report: what was enumerated, the largest gain and the verdict."""
        w = self.worst_case
        what = "every report" if self.true_types == "own" else "every hypothetical true type x every report"
        return "\n".join([
            f"ex-post truthfulness of {self.name} at reports {_show(self.profile)}",
            (f"  exact: {self.agents.size} agents audited (of {len(self.profile)}) x {what} "
             f"({len(self.types)} types), {self.laws} new rule calls"),
            f"  largest gain {w['gain']:.6g}: agent {w['agent']} (true type {w['true_type']!r}) reporting {w['lie']!r}",
            (f"  verdict: {'truthful' if self.is_truthful() else 'NOT truthful'} (rounding slack "
             f"{self.rounding_slack:.1e})")])


@dataclass(frozen=True)
class DominantAudit(Verdict):
    """The largest ex-post gain over a set of profiles.  ``mode``: ``"all"`` (every profile, a proof),
    ``"random"`` (``profiles`` random ones) or ``"search"`` (the worst found by hill climbing: not a proof).
    ``worst_case``: agent, true type, lie, gain and the profile (reports, the agent's true type in her place).

    Attributes
    ----------
    name : str
    n : int
        Agents per profile.
    mode : {"all", "random", "search"}
    profiles : int
        Profiles enumerated, drawn or visited.
    max_gain : float
        The largest ex-post gain found.
    worst_case : dict
    scale : float
        The largest utility or payment met (sets the rounding slack).
    laws : int
        New rule calls made by the audit.
    detail : str
        How the profiles were counted (e.g. multisets when anonymous).

    Examples
    --------
    >>> from dpgames import CustomMechanism, truthfulness_audit
    >>> mean = CustomMechanism(lambda r: round(sum(r) / len(r)), lambda t, o: -abs(t - o), types=range(5),
    ...                        anonymous=True)
    >>> audit = truthfulness_audit(mean, n=3, profiles="all")     # all 35 multisets of 3 reports
    >>> audit.profiles, audit.max_gain, audit.worst_case["profile"]
    (35, 1.0, (1, 0, 0))
    """

    name: str
    n: int
    mode: str
    profiles: int
    max_gain: float
    worst_case: dict
    scale: float
    laws: int
    detail: str = ""

    def describe(self) -> str:
        """A readable report: the profiles covered (a proof or a sample), the largest gain, the verdict."""
        w = self.worst_case
        kind = {"all": f"exact: every one of the {self.profiles} profiles" + (" (multisets)" if "multiset" in
                                                                               self.detail else ""),
                "random": f"{self.profiles} random profiles (a sample, not a proof)",
                "search": f"adversarial local search over {self.profiles} profiles visited "
                          "(the worst found, not a proof)"}[self.mode]
        lines = [f"dominant-strategy truthfulness of {self.name} with {self.n} agents",
                 f"  {kind}; every agent x every lie at each ({self.laws} new rule calls)"]
        if self.detail:
            lines.append(f"  {self.detail}")
        if w:
            lines.append(f"  largest gain {w['gain']:.6g}: agent {w['agent']} (true type {w['true_type']!r}) "
                         f"reporting {w['lie']!r} at {_show(w['profile'])}")
        lines.append(f"  verdict: {'truthful' if self.is_truthful() else 'NOT truthful'}")
        return "\n".join(lines)


#: What :func:`custom_truthfulness_audit` (and ``truthfulness_audit`` of a user's own mechanism) returns.
#: Which of the four is decided by the keywords and, between ``ExPostAudit`` and ``SampledAudit``, by
#: whether the rule only samples (known at run time), so the result's type is this union: every member has
#: ``max_gain``, ``worst_case``, ``rounding_slack``, ``is_truthful(tol)`` and ``describe()``, usable without
#: narrowing; narrow with ``isinstance`` (or call the audit's own function) for its tables.
CustomAudit: TypeAlias = ExPostAudit | DominantAudit | BayesianAudit | SampledAudit


# --- ex post ---------------------------------------------------------------------------------------------
def ex_post_audit(mech: CustomMechanism, profile: Sequence, true_types: str = "own") -> ExPostAudit:
    """Exact gain of every audited agent and lie at ``profile`` (see the module docstring).

    Parameters
    ----------
    mech : CustomMechanism
    profile : sequence
        The reports, one type label per agent.
    true_types : {"own", "all"}, default "own"

    Returns
    -------
    ExPostAudit

    Raises
    ------
    ValidationError
        On an unknown ``true_types``, a report outside the types, a false anonymity declaration, too many
        rule calls, or a failure of the user's functions.
    """
    if true_types not in ("own", "all"):
        raise ValidationError("true_types", f"must be 'own' or 'all', got {true_types!r}")
    idx = mech.indices(profile, "profile")
    n, m = idx.size, mech.n_types
    mech.check_anonymity(n, idx)
    base = mech.labels(idx)
    before = mech.rule_calls
    agents = np.unique(idx, return_index=True)[1] if mech.anonymous else np.arange(n)
    check_calls("profile", "the ex-post audit", agents.size * (m - 1) + 1, "")
    truth = mech.entry(idx, base)
    deviation = _deviations(mech, idx, base, truth)
    if true_types == "own":
        gains = np.empty((agents.size, m))
        lies = range(m)
        for k, i in enumerate(agents.tolist()):
            a = int(idx[i])
            row = mech.values_at(i, a, lies, [deviation(i, x) for x in lies])
            gains[k] = row - row[a]
    else:
        gains = np.empty((agents.size, m, m))
        for k, i in enumerate(agents.tolist()):
            table = np.empty((m, m))  # [t, x]
            for x in range(m):
                found = deviation(i, x)
                table[:, x] = mech.values(i, found) - _paid(mech, found, i, x)
            gains[k] = table - np.diag(table)[:, None]
    return ExPostAudit(mech.name, mech.types, base, true_types, agents, gains, mech.scale,
                       mech.rule_calls - before)


def _deviations(mech: CustomMechanism, idx: np.ndarray, base: tuple, truth: tuple) -> Callable:
    """``deviation(i, x)``: the cached law when agent ``i`` alone reports type index ``x``."""
    labels = mech.types
    own = idx.tolist()
    if mech.anonymous:
        counts = mech.key(idx)  # the multiset's counts as int64 bytes: move one count, as CustomMechanism.key

        def key(i: int, x: int) -> Hashable:
            c = bytearray(counts)
            view = memoryview(c).cast("q")
            view[own[i]] -= 1
            view[x] += 1
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
        return mech.entry(None, moved, key(i, x))
    return deviation


def _paid(mech: CustomMechanism, found: tuple, agent: int, report: int) -> float:
    pay = found[2]
    if pay is None:
        return 0.0
    return float(pay[report] if mech.anonymous else pay[agent])


# --- dominant strategy -----------------------------------------------------------------------------------
def dominant_audit(mech: CustomMechanism, n: int, profiles: int | str = "all", *, seed: int | None = None,
                   restarts: int = 8, steps: int = 100) -> DominantAudit:
    """Dominant-strategy audit of ``n`` agents: every profile, ``K`` random ones, or an adversarial search.

    ``"search"``: from each of ``restarts`` random profiles (drawn from ``seed``, default 0), move to the
    neighbour (one agent's type changed; one per multiset when anonymous) of largest gain while it
    increases the gain, at most ``steps`` moves; the worst profile met is returned.

    Parameters
    ----------
    mech : CustomMechanism
    n : int
        Agents, ``>= 1``.
    profiles : "all", "search" or int, default "all"
        Every profile (refused above a million, naming the count), the adversarial search, or that many
        random profiles.
    seed : int, optional
        For the random profiles and the search's starts (default 0).
    restarts, steps : int
        The search's random starts and moves per start.

    Returns
    -------
    DominantAudit

    Raises
    ------
    ValidationError
        On a bad ``n``, ``profiles``, ``seed``, ``restarts`` or ``steps``, too many profiles, a false
        anonymity declaration, or a failure of the user's functions.
    """
    n = integer("n", n, low=1)
    m = mech.n_types
    mech.check_anonymity(n)
    before = mech.rule_calls
    if profiles == "all":
        return _enumerate(mech, n, before)
    rng = as_generator(0 if seed is None else seed, "seed")
    if profiles == "search":
        return _search(mech, n, rng, integer("restarts", restarts, low=1), integer("steps", steps, low=1), before)
    if isinstance(profiles, str):
        raise ValidationError("profiles", f"must be 'all', 'search' or a number of random profiles, got {profiles!r}")
    k = integer("profiles", profiles, low=1)
    audits = (ex_post_audit(mech, mech.labels(rng.integers(m, size=n))) for _ in range(k))
    best = max(audits, key=lambda audit: audit.max_gain)  # the first of the largest gain
    return DominantAudit(mech.name, n, "random", k, best.max_gain, best.worst_case, mech.scale,
                         mech.rule_calls - before, f"seed {0 if seed is None else seed}")


def _enumerate(mech: CustomMechanism, n: int, before: int) -> DominantAudit:
    m = mech.n_types
    count = count_profiles(m, n, mech.anonymous)
    audited = 1 if mech.anonymous else n
    work = audited * m * count
    if count > PROFILE_LIMIT or work > WORK_LIMIT:
        raise ValidationError("profiles", f"is refused: 'all' with n={n} and {m} types enumerates {count:,} "
                                          f"{'multisets' if mech.anonymous else 'profiles'} (work {work:,}), above "
                                          f"the limits ({PROFILE_LIMIT:,} profiles, work {WORK_LIMIT:,}); use "
                                          "profiles=K (K random profiles) or profiles='search' (adversarial search)")
    lines = Lines(mech)
    if mech.anonymous:
        others_all = list(itertools.combinations_with_replacement(range(m), n - 1))
    else:
        others_all = list(itertools.product(range(m), repeat=n - 1))
    block = max(1, BLOCK // (m * m))
    found: list[tuple[float, tuple[int, int, int, tuple[int, ...]]]] = []  # each block's worst lie
    for agent in range(audited):
        for start in range(0, len(others_all), block):
            others = others_all[start:start + block]
            G = line_gains(lines.utilities(agent, lines.grid(agent, others)))
            t, line, x = (int(i) for i in np.unravel_index(int(np.argmax(G)), G.shape))
            o = others[line]
            found.append((float(G[t, line, x]), (agent, t, x, o[:agent] + (t,) + o[agent:])))
    gain, (agent, t, x, profile) = max(found, key=lambda f: f[0])  # the first of the largest gain
    worst = {"agent": agent, "true_type": mech.types[t], "lie": mech.types[x], "gain": gain,
             "profile": mech.labels(np.asarray(profile))}
    detail = "anonymous: multisets, agents of equal type once" if mech.anonymous else ""
    return DominantAudit(mech.name, n, "all", count, gain, worst, mech.scale, mech.rule_calls - before, detail)


def _search(mech: CustomMechanism, n: int, rng: np.random.Generator, restarts: int, steps: int,
            before: int) -> DominantAudit:
    """Hill climbing on the largest ex-post gain, moving one agent's type at a time, from random starts."""
    m = mech.n_types
    seen: dict[tuple, ExPostAudit] = {}

    def audit(p: tuple) -> ExPostAudit:
        if p not in seen:
            seen[p] = ex_post_audit(mech, mech.labels(np.asarray(p)))
        return seen[p]

    ends = []  # each restart's local maximum
    for _ in range(restarts):
        current = tuple(rng.integers(m, size=n).tolist())
        for _ in range(steps):
            moves = [current[:i] + (x,) + current[i + 1:] for i in range(n) for x in range(m) if x != current[i]]
            if mech.anonymous:
                moves = list({tuple(sorted(p)): p for p in moves}.values())
            step = max(moves, key=lambda p: audit(p).max_gain, default=current)
            if audit(step).max_gain <= audit(current).max_gain:
                break
            current = step
        ends.append(audit(current))
    best = max(ends, key=lambda end: end.max_gain)  # the first of the largest gain
    detail = f"{restarts} restarts, at most {steps} steps each; a local maximum of the gain"
    return DominantAudit(mech.name, n, "search", len(seen), best.max_gain, best.worst_case, mech.scale,
                         mech.rule_calls - before, detail)


# --- one entry point -------------------------------------------------------------------------------------
def as_custom(mechanism: Any, utility: Callable | None = None, types: Any = None, payments: Callable | None = None,
              anonymous: bool = False) -> CustomMechanism:
    """``mechanism`` itself if a CustomMechanism, else a CustomMechanism of a plain rule and the keywords.

    Raises
    ------
    ValidationError
        If keywords are given with a CustomMechanism, ``mechanism`` is not callable, or a plain rule comes
        without ``utility`` or ``types``.
    """
    if isinstance(mechanism, CustomMechanism):
        if utility is not None or types is not None or payments is not None or anonymous:
            raise ValidationError("utility", "utility=, types=, payments= and anonymous= are for a plain callable; "
                                             "a CustomMechanism already has them")
        return mechanism
    if not callable(mechanism):
        raise ValidationError("mechanism", f"must be a CustomMechanism or a callable rule, got {mechanism!r}")
    if utility is None or types is None:
        raise ValidationError("utility" if utility is None else "types",
                              "is required to audit a plain callable rule (with types=, the type space)")
    return CustomMechanism(mechanism, utility, types, payments=payments, anonymous=anonymous)


def custom_truthfulness_audit(mechanism: Any, profile: Sequence | None = None, *, true_types: str = "own",
                              n: int | None = None, profiles: int | str | None = None, prior: Any = None,
                              seed: int | None = None, samples: int | None = None, utility: Callable | None = None,
                              types: Any = None, payments: Callable | None = None, anonymous: bool = False,
                              tol: float = 0.0, restarts: int = 8, steps: int = 100) -> CustomAudit:
    """The audit a call asks for: Bayesian (``prior=``), dominant strategy (``profiles=``), sampled
    (a sampling-only rule at ``profile``) or ex post at ``profile``.  ``tol`` is only checked here (the
    audits' ``is_truthful(tol)`` applies it).

    Parameters
    ----------
    mechanism : CustomMechanism or callable
    profile : sequence, optional
        The reports (ex post and sampled audits; gives ``n`` to the others).
    true_types, n, profiles, prior, seed, samples, utility, types, payments, anonymous, restarts, steps
        As in :func:`ex_post_audit`, :func:`dominant_audit`,
        :func:`~dpgames.analysis.sampled_audit.bayesian_audit`, :func:`~dpgames.analysis.sampled_audit.sampled_audit`
        and :class:`~dpgames.mechanisms.custom.CustomMechanism`.
    tol : float, default 0
        Checked to be ``>= 0``.

    Returns
    -------
    CustomAudit
        An ``ExPostAudit``, ``DominantAudit``, ``BayesianAudit`` or ``SampledAudit``.

    Raises
    ------
    ValidationError
        When the options do not name one audit that applies (e.g. a prior for a sampling-only rule), or
        as the audit chosen.
    """
    non_negative("tol", tol)
    mech = as_custom(mechanism, utility, types, payments, anonymous)
    if n is None and profile is not None and (profiles is not None or prior is not None):
        n = len(mech.indices(profile, "profile"))
    if mech.sampling:
        if prior is not None or profiles is not None or profile is None:
            raise ValidationError("rule", f"{mech.name} is sampling-only (rule(reports, rng)): only the sampled "
                                          "audit at a profile applies: truthfulness_audit(mech, profile, samples=...)")
        if true_types != "own":
            raise ValidationError("true_types", "the sampled audit tries each agent's own type only ('own')")
        return sampled_audit(mech, profile, samples=samples, seed=seed)
    if prior is not None:
        return bayesian_audit(mech, prior, _required_n(n), samples=samples, seed=seed)
    if profiles is not None:
        return dominant_audit(mech, _required_n(n), profiles, seed=seed, restarts=restarts, steps=steps)
    if profile is None:
        raise ValidationError("profile", "is required, unless profiles= (dominant strategy) or prior= (Bayesian) "
                                         "is given with n=")
    return ex_post_audit(mech, profile, true_types)


def _required_n(n: int | None) -> int:
    """``n``, required by the Bayesian and dominant-strategy audits."""
    if n is None:
        raise ValidationError("n", "is required (the number of agents) with prior= or profiles=")
    return n
