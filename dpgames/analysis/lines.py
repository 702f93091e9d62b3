"""*Lines* of a :class:`~dpgames.mechanisms.custom.CustomMechanism`: for one agent and fixed reports
of the others, the ``m`` profiles where she reports each type.

Along a line, ``A[t, x]`` (her expected utility with true type ``t`` reporting ``x``) is one dot
product per (law, type); :class:`Lines` gathers the laws of many lines and computes every ``A`` in
one vectorised pass.  Dominant-strategy enumeration (the largest ``A[t, x] - A[t, t]`` over every
line) and the exact Bayesian audit (a weighted sum of the same over the others' profiles) are both
built on it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from dpgames.mechanisms.custom import CustomMechanism


class Lines:
    """Laws of many profiles, gathered so that expected utilities are computed in one vectorised
    pass.

    The laws are kept flat (outcome indices, probabilities, one segment per profile), and the
    expected utility of every type at every law is computed once per utility table, for the laws
    added since."""

    def __init__(self, mech: CustomMechanism):
        self.mech = mech
        self.ids: dict = {}
        self.cols: list[int] = []
        self.probs: list[float] = []
        self.starts: list[int] = []
        self.pays: list[np.ndarray | None] = []
        self._eu: dict = {}
        self._paid: tuple[int, np.ndarray] = (0, np.empty((0, 0)))
        # the profiles met, as sorted integers (:meth:`profile_ids`)
        self._keys = np.empty(0, dtype=np.int64)
        self._key_ids = np.empty(0, dtype=np.intp)
        self._rows: dict = {}  # the same for profiles too long for an integer key

    def __len__(self) -> int:
        """The laws held."""
        return len(self.starts)

    def id(self, profile: tuple) -> int:
        """The local id of a profile (a tuple of type indices), computing its law on first sight."""
        mech = self.mech
        key = mech._key(np.asarray(profile, dtype=np.intp)) if mech.anonymous else profile
        j = self.ids.get(key)
        if j is None:
            idx = np.asarray(profile, dtype=np.intp)
            j = self.ids[key] = self._append(mech._entry(idx, mech._labels_of(idx), key))
        return j

    def profile_ids(self, profiles: np.ndarray) -> np.ndarray:
        """The local ids of ``profiles`` (an array of type indices, last axis the agents; ids of the
        same shape without it), computing each new profile's law with one rule call (not through the
        mechanism's cache: these ids are the enumeration's own, kept by profile, sorted within each
        role when anonymous).  Each profile is one integer (its type indices in base ``n_types``)
        looked up in a sorted array: no Python work per profile met again, only per rule call."""
        mech = self.mech
        n = profiles.shape[-1]
        rows = profiles.reshape(-1, n)
        if mech.anonymous:
            rows = rows.copy()
            for role in np.unique(mech.roles_of(n)).tolist():
                where = np.flatnonzero(mech.roles_of(n) == role)
                rows[:, where] = np.sort(rows[:, where], axis=1)
        if n * math.log2(max(mech.n_types, 2)) >= 62:
            # too many digits for an int64: one tuple each
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
            where = np.searchsorted(self._keys, distinct[new])  # both sorted: merged in one pass
            self._keys, self._key_ids = (
                np.insert(self._keys, where, distinct[new]),
                np.insert(self._key_ids, where, ids[new]),
            )
        return ids[inverse.reshape(-1)].reshape(profiles.shape[:-1])

    def _laws(self, fresh: np.ndarray) -> list[tuple] | np.ndarray:
        """The entries ``(outcome, probabilities or None, payments or None)`` of the profiles
        ``fresh`` (type indices, one row each): one call of a batched rule, else one call per
        profile.  A batched rule without payments gives its outcome indices only (an array: point
        masses, no payments)."""
        mech = self.mech
        if mech.batched:
            outs, pays = mech._batch(fresh)
            mech.rule_calls += outs.size
            if pays is None:
                return outs
            rows = (
                [mech._by_class(idx, pay, mech._labels_of(idx)) for idx, pay in zip(fresh, pays)]
                if mech.anonymous
                else list(pays)
            )
            return list(zip(outs.tolist(), itertools.repeat(None), rows))
        reports = map(tuple, mech._labels[fresh].tolist())
        if mech.payments is None:
            return mech._entries(reports)
        return [mech._compute(idx, r) for idx, r in zip(fresh, reports)]

    def _by_tuple(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`profile_ids` keyed by tuples (profiles too long for one int64)."""
        keys = [tuple(row) for row in rows.tolist()]
        new = {key: k for k, key in enumerate(keys) if key not in self._rows}
        if new:
            fresh = self._extend(self._laws(rows[list(new.values())]))
            self._rows.update(zip(new, fresh.tolist()))
        return np.array([self._rows[key] for key in keys], dtype=np.intp)

    def _extend(self, entries: list[tuple] | np.ndarray) -> np.ndarray:
        """Keep several laws (cached entries of the mechanism, or an array of outcome indices: point
        masses without payments); their local ids."""
        first, at = len(self.starts), len(self.cols)
        if isinstance(entries, np.ndarray):
            self.cols.extend(entries.tolist())
            self.pays.extend(itertools.repeat(None, entries.size))
        elif any(p is not None for _, p, _ in entries):
            return np.array([self._append(entry) for entry in entries], dtype=np.intp)
        else:
            self.cols.extend([out for out, _, _ in entries])
            self.pays.extend([pay for _, _, pay in entries])
        self.starts.extend(range(at, at + len(entries)))
        self.probs.extend(itertools.repeat(1.0, len(entries)))
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
        """``J[line, k]``: the id of the profile where ``agent`` reports the ``k``-th type of her
        space and the others ``others[line]``."""
        space = self.mech.space(agent).tolist()
        return np.array(
            [[self.id(o[:agent] + (x,) + o[agent:]) for x in space] for o in others], dtype=np.intp
        ).reshape(len(others), len(space))

    def _expected(self, agent: int) -> np.ndarray:
        """``eu[j, k]``: the expected utility of the ``k``-th type of ``agent``'s space at law ``j``
        (before payments), computed for the laws added since the last call (kept in a buffer that
        doubles)."""
        mech = self.mech
        rows = mech.space(agent)
        role = mech.role(agent)
        key = (role, agent if mech.agent_dependent else None)
        done, eu = self._eu.get(key, (0, np.empty((0, rows.size))))
        if done < len(self.starts):
            lo = self.starts[done]
            cols = np.array(self.cols[lo:], dtype=np.intp)
            table = mech._fill(agent, rows, np.unique(cols))[rows]
            if cols.size == len(self.starts) - done:  # every new law a point mass
                fresh = table[:, cols]
            else:
                fresh = np.add.reduceat(
                    table[:, cols] * np.array(self.probs[lo:]),
                    np.array(self.starts[done:]) - lo,
                    axis=1,
                )
            eu = _grown(eu, done, fresh.T)
            done = len(self.starts)
            self._eu[key] = (done, eu)
        return eu[:done]

    def forget_utilities(self) -> None:
        """Drop the expected utilities kept per agent (the laws stay): an enumeration done with an
        agent."""
        self._eu.clear()

    def _payments(self) -> np.ndarray:
        """Payments per law: ``(laws, n)``, or ``(laws, roles x types)`` by (role, reported type)
        when anonymous."""
        done, paid = self._paid
        if done < len(self.pays):
            fresh = np.array(self.pays[done:])
            paid = fresh if done == 0 else _grown(paid, done, fresh)
            done = len(self.pays)
            self._paid = (done, paid)
        return paid[:done]

    def utilities(self, agent: int, J: np.ndarray) -> np.ndarray:
        """``A[t, line, x]``: ``agent``'s expected utility (minus payment) with true type ``t``
        reporting ``x`` on each line of ``J`` (``t`` and ``x`` index her type space)."""
        A = np.moveaxis(self._expected(agent)[J], -1, 0)
        if self.pays[0] is not None:
            paid = self._payments()
            mech = self.mech
            if mech.anonymous:
                A = (
                    A
                    - paid[J, (mech.role(agent) * mech.n_types + mech.space(agent))[None, :]][None]
                )
            else:
                A = A - paid[J, agent][None]
        return A


def _grown(buffer: np.ndarray, used: int, fresh: np.ndarray) -> np.ndarray:
    """``buffer`` with the rows ``fresh`` written after its first ``used`` rows, its capacity
    doubled when full (amortised: appending stays linear in the rows kept)."""
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
