"""Shared machinery of the audits of a :class:`~dpgames.mechanisms.custom.CustomMechanism`.

*Lines*: for one agent and fixed reports of the others, the ``m`` profiles where she reports each type.
Along a line, ``A[t, x]`` (her expected utility with true type ``t`` reporting ``x``) is one dot product
per (law, type); :class:`Lines` gathers the laws of many lines and computes every ``A`` in one
vectorised pass.  Dominant-strategy enumeration (the largest ``A[t, x] - A[t, t]`` over every line) and
the exact Bayesian audit (a weighted sum of the same over the others' profiles) are both built on it.

Also here: the size limits every audit checks before its first rule call, and :class:`Verdict`, the
rounding slack (``1e-12 x max(1, utility scale)``) and truthfulness verdict the audits share.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from dpgames.analysis.truthfulness import ROUNDING
from dpgames.display import html_table
from dpgames.mechanisms.custom import CustomMechanism, _hashable, _show
from dpgames.validation import ValidationError

#: Largest number of profiles (multisets when anonymous) ``profiles="all"`` enumerates ...
PROFILE_LIMIT = 1_000_000
#: ... and largest work (agents audited x types x profiles) it accepts.
WORK_LIMIT = 50_000_000
#: Largest number of rule calls an audit plans (ex post, Monte Carlo, sampled); more is refused up front.
CALL_LIMIT = 5_000_000
#: Lines per vectorised block (bounds the memory of the (types x lines x reports) array).
BLOCK = 4_000_000


class _Audited(Protocol):
    """What :class:`Verdict`'s methods read from the audit they are mixed into."""

    @property
    def max_gain(self) -> float: ...

    @property
    def margin(self) -> float: ...

    @property
    def worst_case(self) -> dict[str, Any]: ...

    @property
    def scale(self) -> float: ...

    @property
    def rounding_slack(self) -> float: ...

    def is_truthful(self, tol: float = 0.0) -> bool: ...

    def describe(self) -> str: ...


class Verdict:
    """Shared by the audits: the rounding slack, :meth:`is_truthful` and the HTML view, from the audit's
    ``max_gain``, ``margin``, ``worst_case``, ``scale`` and ``describe()``.

    Every audit names two figures of the best lie (the one of largest gain): ``max_gain = max(gain, 0)``,
    never negative (0 when every lie loses or ties), and ``margin = -gain``, the best lie's loss: how
    strictly truth wins (positive when every lie strictly loses, 0 on a tie, negative when a lie gains,
    ``inf`` when no lie was tried).

    A mixin: its methods take ``self`` as the protocol ``_Audited`` (mypy's pattern for mixins), because
    an audit provides ``max_gain`` and ``worst_case`` either as dataclass fields (``DominantAudit`` stores
    them) or as properties computed from its gains: a property declared here would block those fields at
    run time, and an attribute declared here would make the properties illegal overrides.
    """

    @property
    def rounding_slack(self: _Audited) -> float:
        """Gains below this are floating-point rounding: ``1e-12 x max(1, utility scale)``."""
        return ROUNDING * max(1.0, self.scale)

    def is_truthful(self: _Audited, tol: float = 0.0) -> bool:
        """No agent gains more than ``tol`` (plus rounding) from any lie."""
        return self.max_gain <= tol + self.rounding_slack

    def _repr_html_(self: _Audited) -> str:
        """The headline figures as a table (Jupyter): the worst lie, its interval if estimated, the verdict;
        titled by the first line of ``describe()``."""
        worst = self.worst_case or {}
        rows = [("largest gain", worst.get("gain", self.max_gain))]
        rows += [("agent", worst["agent"])] if "agent" in worst else []
        rows += [(key.replace("_", " "), repr(worst[key])) for key in ("true_type", "lie") if key in worst]
        if worst.get("ci") is not None:
            rows.append(("95% CI", f"[{worst['ci'][0]:.6g}, {worst['ci'][1]:.6g}]"))
        rows.append(("margin (best lie's loss)", self.margin))
        rows.append(("truthful", self.is_truthful()))
        return html_table(rows, title=self.describe().splitlines()[0])


def count_profiles(mech: CustomMechanism, n: int) -> int:
    """Profiles of ``n`` agents: ``prod_i m_i`` over the agents' type spaces, or when anonymous the product
    over roles of ``C(c_r + m_r - 1, c_r)`` multisets (``c_r`` agents of role ``r``, ``m_r`` types)."""
    roles = mech.roles_of(n)
    if not mech.anonymous:
        return math.prod(mech.space(i).size for i in range(n))
    return math.prod(math.comb(int((roles == r).sum()) + mech._spaces[r].size - 1, int((roles == r).sum()))
                     for r in np.unique(roles).tolist())


def best_and_margin(best: float) -> tuple[float, float]:
    """``(max_gain, margin)`` from the best lie's gain: ``max_gain = max(best, 0)`` and ``margin = -best`` (the
    best lie's loss; ``inf`` when no lie was tried)."""
    if best == -np.inf:
        return 0.0, np.inf
    return max(float(best), 0.0), 0.0 - float(best)


class FromBestLie:
    """``max_gain`` and ``margin`` of an audit that stores ``best``, the best lie's gain (its score: for an
    ordinal audit, how far the lie's lottery escapes truth's dominance)."""

    best: float

    @property
    def max_gain(self) -> float:
        """The best lie's gain if positive, else 0."""
        return best_and_margin(self.best)[0]

    @property
    def margin(self) -> float:
        """The best lie's loss, minus its gain (0 for a lie that ties; ``inf`` when no lie was tried)."""
        return best_and_margin(self.best)[1]


class Lies:
    """The reports each agent may make instead of the truth: every report of her type space (``None``), a
    collection of reports (each agent uses those of her space), or a function ``(agent, true_type) ->
    reports``, called once per (agent, true type) and checked against the agent's type space.

    Raises
    ------
    ValidationError
        On a collection holding a report of no type space, or a function that raises, returns something
        other than a collection of reports, or a report outside the agent's type space.
    """

    def __init__(self, mech: CustomMechanism, lies: Any):
        self.mech = mech
        self.function = callable(lies) and not isinstance(lies, (str, bytes))
        self.given = lies
        self._cache: dict[tuple[int, int], np.ndarray] = {}
        self.fixed: np.ndarray | None = None
        if lies is None or self.function:
            return
        if isinstance(lies, (str, bytes)) or not isinstance(lies, Iterable):
            raise ValidationError("lies", f"must be a collection of reports or a function (agent, true_type) -> "
                                          f"reports, got {lies!r}")
        self.fixed = np.zeros(mech.n_types, dtype=bool)
        for r in lies:
            k = mech._index.get(r) if _hashable(r) else None
            if k is None:
                raise ValidationError("lies", f"holds {r!r}, which is in no type space ({_show(mech.types)})")
            self.fixed[k] = True

    @property
    def restricted(self) -> bool:
        """Whether fewer than every report is tried."""
        return self.given is not None

    def describe(self) -> str:
        """The lies tried, in words."""
        if self.given is None:
            return "every report of her type space"
        if self.fixed is not None:
            return f"the reports {_show(self.mech.labels(np.flatnonzero(self.fixed)))}"
        return f"the reports of {getattr(self.given, '__name__', 'lies')}(agent, true type)"

    def allowed(self, agent: int, t: int) -> np.ndarray:
        """Over every type index: whether ``agent`` with true type index ``t`` may report it (truth excluded)."""
        hit = self._cache.get((agent, t))
        if hit is not None:
            return hit
        mech = self.mech
        mask = mech._member[mech.role(agent)].copy()
        if self.fixed is not None:
            mask &= self.fixed
        elif self.function:
            mask &= self._called(agent, t)
        mask[t] = False
        self._cache[(agent, t)] = mask
        return mask

    def _called(self, agent: int, t: int) -> np.ndarray:
        mech = self.mech
        label = mech.types[t]
        try:
            raw = self.given(agent, label)
        except Exception as exc:
            raise ValidationError("lies", f"raised {type(exc).__name__}: {exc} for agent {agent}, true type "
                                          f"{label!r}") from exc
        if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
            raise ValidationError("lies", f"must return a collection of reports, got {raw!r} for agent {agent}, "
                                          f"true type {label!r}")
        out = np.zeros(mech.n_types, dtype=bool)
        for r in raw:
            k = mech._index.get(r) if _hashable(r) else None
            if k is None or not mech._member[mech.role(agent)][k]:
                raise ValidationError("lies", f"returned {r!r} for agent {agent} (true type {label!r}), which is "
                                              f"not in her type space ({_show(mech.type_space(agent))})")
            out[k] = True
        return out

    def local(self, agent: int) -> np.ndarray:
        """``mask[k, j]``: whether ``agent`` with the ``k``-th type of her space may report the ``j``-th."""
        space = self.mech.space(agent)
        return np.array([self.allowed(agent, int(t))[space] for t in space.tolist()]).reshape(space.size, space.size)

    def representatives(self, agents: Sequence[int], keys: Sequence[Any], whole: bool) -> list[int]:
        """The first of ``agents`` per distinct (key, lies): agents of one key (e.g. one class of an anonymous
        mechanism) with the same lies are audited once.  ``whole``: compare every true type's lies (else only
        the truth given as each key's type index, ``key[1]``)."""
        seen: dict = {}
        for i, key in zip(agents, keys):
            if self.function:
                mask = self.local(i) if whole else self.allowed(i, int(key[1]))
                key = (key, mask.tobytes())
            seen.setdefault(key, i)
        return sorted(seen.values())


def check_calls(field: str, what: str, calls: int, alternatives: str) -> None:
    """Refuse, before any work, an audit that would call the rule more than :data:`CALL_LIMIT` times."""
    if calls > CALL_LIMIT:
        raise ValidationError(field, f"is refused: {what} would call the rule about {calls:,} times (limit "
                                     f"{CALL_LIMIT:,}){alternatives}")


# --- lines: one agent, the others fixed, every report -----------------------------------------------------
class Lines:
    """Laws of many profiles, gathered so that expected utilities are computed in one vectorised pass.

    The laws are kept flat (outcome indices, probabilities, one segment per profile), and the expected
    utility of every type at every law is computed once per utility table, for the laws added since."""

    def __init__(self, mech: CustomMechanism):
        self.mech = mech
        self.ids: dict = {}
        self.cols: list[int] = []
        self.probs: list[float] = []
        self.starts: list[int] = []
        self.pays: list[np.ndarray | None] = []
        self._eu: dict = {}
        self._paid: tuple[int, np.ndarray] = (0, np.empty((0, 0)))
        self._keys = np.empty(0, dtype=np.int64)   # the profiles met, as sorted integers (:meth:`profile_ids`)
        self._key_ids = np.empty(0, dtype=np.intp)
        self._rows: dict = {}   # the same for profiles too long for an integer key

    def __len__(self) -> int:
        """The laws held."""
        return len(self.starts)

    def id(self, profile: tuple) -> int:
        """The local id of a profile (a tuple of type indices), computing its law on first sight."""
        mech = self.mech
        key = mech.key(np.asarray(profile, dtype=np.intp)) if mech.anonymous else profile
        j = self.ids.get(key)
        if j is None:
            idx = np.asarray(profile, dtype=np.intp)
            j = self.ids[key] = self._append(mech.entry(idx, mech.labels(idx), key))
        return j

    def profile_ids(self, profiles: np.ndarray) -> np.ndarray:
        """The local ids of ``profiles`` (an array of type indices, last axis the agents; ids of the same
        shape without it), computing each new profile's law with one rule call (not through the
        mechanism's cache: these ids are the enumeration's own, kept by profile, sorted within each role
        when anonymous).  Each profile is one integer (its type indices in base ``n_types``) looked up in a
        sorted array: no Python work per profile met again, only per rule call."""
        mech = self.mech
        n = profiles.shape[-1]
        rows = profiles.reshape(-1, n)
        if mech.anonymous:
            rows = rows.copy()
            for role in np.unique(mech.roles_of(n)).tolist():
                where = np.flatnonzero(mech.roles_of(n) == role)
                rows[:, where] = np.sort(rows[:, where], axis=1)
        if n * math.log2(max(mech.n_types, 2)) >= 62:   # too many digits for an int64: one tuple each
            return self._by_tuple(rows).reshape(profiles.shape[:-1])
        keys = rows @ (mech.n_types ** np.arange(n - 1, -1, -1, dtype=np.int64))
        distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        at = np.searchsorted(self._keys, distinct)
        known = at < self._keys.size
        known[known] = self._keys[at[known]] == distinct[known]
        ids = np.full(distinct.size, -1, dtype=np.intp)
        ids[known] = self._key_ids[at[known]]
        new = np.flatnonzero(~known)
        if new.size:
            ids[new] = self._extend(self._laws(rows[first[new]]))
            where = np.searchsorted(self._keys, distinct[new])   # both sorted: merged in one pass
            self._keys, self._key_ids = np.insert(self._keys, where, distinct[new]), np.insert(self._key_ids, where,
                                                                                                ids[new])
        return ids[inverse.reshape(-1)].reshape(profiles.shape[:-1])

    def _laws(self, fresh: np.ndarray) -> list[tuple]:
        """The entries ``(outcome, probabilities or None, payments or None)`` of the profiles ``fresh`` (type
        indices, one row each): one call of a batched rule, else one call per profile."""
        mech = self.mech
        if mech.batched:
            outs, pays = mech.batch(fresh)
            mech.rule_calls += outs.size
            if pays is None:
                return list(zip(outs.tolist(), itertools.repeat(None), itertools.repeat(None)))
            rows = [mech._by_class(idx, pay, mech.labels(idx)) for idx, pay in zip(fresh, pays)] if mech.anonymous \
                else list(pays)
            return list(zip(outs.tolist(), itertools.repeat(None), rows))
        reports = map(tuple, mech._labels[fresh].tolist())
        if mech.payments is None:
            return mech.entries(reports)
        return [mech._compute(idx, r) for idx, r in zip(fresh, reports)]

    def _by_tuple(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`profile_ids` keyed by tuples (profiles too long for one int64)."""
        keys = [tuple(row) for row in rows.tolist()]
        new = {key: k for k, key in enumerate(keys) if key not in self._rows}
        if new:
            fresh = self._extend(self._laws(rows[list(new.values())]))
            self._rows.update(zip(new, fresh.tolist()))
        return np.array([self._rows[key] for key in keys], dtype=np.intp)

    def _extend(self, entries: list[tuple]) -> np.ndarray:
        """Keep several laws (cached entries of the mechanism); their local ids."""
        if any(p is not None for _, p, _ in entries):
            return np.array([self._append(entry) for entry in entries], dtype=np.intp)
        first, at = len(self.starts), len(self.cols)
        self.starts.extend(range(at, at + len(entries)))
        self.cols.extend([out for out, _, _ in entries])
        self.probs.extend([1.0] * len(entries))
        self.pays.extend([pay for _, _, pay in entries])
        return np.arange(first, first + len(entries), dtype=np.intp)

    def _append(self, entry: tuple) -> int:
        """Keep one law (a cached entry of the mechanism); its local id."""
        out, p, pay = entry
        self.starts.append(len(self.cols))
        if p is None:
            self.cols.append(out)
            self.probs.append(1.0)
        else:
            self.cols.extend(out.tolist())
            self.probs.extend(p.tolist())
        self.pays.append(pay)
        return len(self.starts) - 1

    def grid(self, agent: int, others: Sequence[tuple]) -> np.ndarray:
        """``J[line, k]``: the id of the profile where ``agent`` reports the ``k``-th type of her space and the
        others ``others[line]``."""
        space = self.mech.space(agent).tolist()
        return np.array([[self.id(o[:agent] + (x,) + o[agent:]) for x in space] for o in others],
                        dtype=np.intp).reshape(len(others), len(space))

    def _expected(self, agent: int) -> np.ndarray:
        """``eu[j, k]``: the expected utility of the ``k``-th type of ``agent``'s space at law ``j`` (before
        payments), computed for the laws added since the last call (kept in a buffer that doubles)."""
        mech = self.mech
        rows = mech.space(agent)
        role = mech.role(agent)
        key = (role, agent if mech.agent_dependent else None)
        done, eu = self._eu.get(key, (0, np.empty((0, rows.size))))
        if done < len(self.starts):
            lo = self.starts[done]
            cols = np.array(self.cols[lo:], dtype=np.intp)
            table = mech.fill(agent, rows, np.unique(cols))[rows]
            if cols.size == len(self.starts) - done:   # every new law a point mass
                fresh = table[:, cols]
            else:
                fresh = np.add.reduceat(table[:, cols] * np.array(self.probs[lo:]), np.array(self.starts[done:]) - lo,
                                        axis=1)
            eu = _grown(eu, done, fresh.T)
            done = len(self.starts)
            self._eu[key] = (done, eu)
        return eu[:done]

    def forget_utilities(self) -> None:
        """Drop the expected utilities kept per agent (the laws stay): an enumeration done with an agent."""
        self._eu.clear()

    def _payments(self) -> np.ndarray:
        """Payments per law: ``(laws, n)``, or ``(laws, roles x types)`` by (role, reported type) when anonymous."""
        done, paid = self._paid
        if done < len(self.pays):
            fresh = np.array(self.pays[done:])
            paid = fresh if done == 0 else _grown(paid, done, fresh)
            done = len(self.pays)
            self._paid = (done, paid)
        return paid[:done]

    def utilities(self, agent: int, J: np.ndarray) -> np.ndarray:
        """``A[t, line, x]``: ``agent``'s expected utility (minus payment) with true type ``t`` reporting
        ``x`` on each line of ``J`` (``t`` and ``x`` index her type space)."""
        A = np.moveaxis(self._expected(agent)[J], -1, 0)
        if self.pays[0] is not None:
            paid = self._payments()
            mech = self.mech
            if mech.anonymous:
                A = A - paid[J, (mech.role(agent) * mech.n_types + mech.space(agent))[None, :]][None]
            else:
                A = A - paid[J, agent][None]
        return A


def _grown(buffer: np.ndarray, used: int, fresh: np.ndarray) -> np.ndarray:
    """``buffer`` with the rows ``fresh`` written after its first ``used`` rows, its capacity doubled when
    full (amortised: appending stays linear in the rows kept)."""
    need = used + fresh.shape[0]
    if need > buffer.shape[0]:
        bigger = np.empty((max(need, 2 * buffer.shape[0]), *buffer.shape[1:]), dtype=buffer.dtype)
        bigger[:used] = buffer[:used]
        buffer = bigger
    buffer[used:need] = fresh
    return buffer


def line_gains(A: np.ndarray) -> np.ndarray:
    """``G[t, line, x] = A[t, line, x] - A[t, line, t]``, truth-telling masked to ``-inf``."""
    m = A.shape[0]
    truth = A[np.arange(m), :, np.arange(m)]  # (m, lines)
    G = A - truth[:, :, None]
    G[np.arange(m), :, np.arange(m)] = -np.inf
    return G
