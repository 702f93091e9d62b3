"""Voting and matching rules written twice, as a user would: one profile at a time in plain Python,
and batched over an array of profiles with numpy (``CustomMechanism(..., batched=True)``).  Used by
the scale tests and by benchmarks/bench_strategic_scale.py; each batched rule is checked against its
plain twin profile by profile in tests/test_strategic_scale.py."""

from __future__ import annotations

import numpy as np


def borda(reports):
    """Borda winner of rankings (best first) of alternatives 0..m-1: m-1 points to a first place, 0
    to a last; ties to the smaller alternative."""
    m = len(reports[0])
    score = [0] * m
    for ranking in reports:
        for place, a in enumerate(ranking):
            score[a] += m - 1 - place
    return max(range(m), key=lambda a: (score[a], -a))


def borda_batch(reports):
    """:func:`borda` on ``(k, n, m)`` rankings: one score table by ``bincount``, then the first
    maximum."""
    k, n, m = reports.shape
    rows = np.repeat(np.arange(k), n * m)
    points = np.tile(np.arange(m - 1, -1, -1), k * n)
    scores = np.bincount(rows * m + reports.reshape(-1), weights=points, minlength=k * m).reshape(
        k, m
    )
    return scores.argmax(axis=1)


def rank_utility(t, outcome):
    """Minus the place of the winner in the voter's true ranking."""
    return -t.index(outcome)


def deferred_acceptance(proposers, receivers):
    """Proposer-optimal stable matching (Gale & Shapley 1962): ``match[i]`` is proposer i's partner
    (complete lists, equal sides)."""
    nxt, held, free = [0] * len(proposers), {}, list(range(len(proposers)))
    while free:
        s = free.pop(0)
        c = proposers[s][nxt[s]]
        nxt[s] += 1
        if c not in held:
            held[c] = s
        elif receivers[c].index(s) < receivers[c].index(held[c]):
            free.append(held[c])
            held[c] = s
        else:
            free.append(s)
    partner = {s: c for c, s in held.items()}
    return tuple(partner[s] for s in range(len(proposers)))


def deferred_acceptance_batch(proposers, receivers):
    """:func:`deferred_acceptance` on ``(k, s, s)`` preference arrays: every free proposer proposes
    at once each round and each receiver keeps the best proposer so far (the proposer-optimal stable
    matching does not depend on the order of proposals: Gale & Shapley 1962; Roth & Sotomayor 1990,
    ch. 2)."""
    k, s, c = proposers.shape
    # rank[., receiver, proposer]: place in the receiver's list
    rank = np.empty((k, c, s), dtype=np.intp)
    np.put_along_axis(rank, receivers, np.broadcast_to(np.arange(s), (k, c, s)), axis=2)
    nxt = np.zeros((k, s), dtype=np.intp)
    at = np.full((k, s), -1)
    who, receivers_axis = np.arange(s)[None, :], np.arange(c)[None, :, None]
    for _ in range(s * c):
        live = np.flatnonzero((at < 0).any(axis=1))  # the profiles with a free proposer
        if not live.size:
            break
        held, free = at[live], at[live] < 0
        rows = live[:, None]
        target = np.where(free, proposers[rows, who, np.minimum(nxt[live], c - 1)], held)
        nxt[live] += free
        # (., receiver, proposer)
        score = np.where(target[:, None, :] == receivers_axis, rank[live], s)
        keeps = score.argmin(axis=2)
        at[live] = np.where(keeps[np.arange(live.size)[:, None], target] == who, target, -1)
    return at


#: Fixed school priorities for the students-only market (school j ranks students in this order).
PRIORITIES = [(0, 1, 2, 3), (1, 0, 3, 2), (2, 3, 0, 1), (3, 2, 1, 0)]


def students_da(reports):
    """Students report rankings of 4 schools; schools' priorities are :data:`PRIORITIES`."""
    return deferred_acceptance(reports, PRIORITIES)


def students_da_batch(reports):
    """:func:`students_da` on ``(k, 4, 4)`` reports."""
    k = reports.shape[0]
    return deferred_acceptance_batch(reports, np.broadcast_to(np.array(PRIORITIES), (k, 4, 4)))


def two_sided_da(reports):
    """Three students (agents 0-2) and three schools (3-5) report; students propose; each agent's
    partner."""
    students = deferred_acceptance(reports[:3], reports[3:])
    return students + tuple(students.index(j) for j in range(3))


def two_sided_da_batch(reports):
    """:func:`two_sided_da` on ``(k, 6, 3)`` reports."""
    students = deferred_acceptance_batch(reports[:, :3], reports[:, 3:])
    schools = np.argsort(students, axis=1)  # the student each school holds
    return np.hstack([students, schools])


def partner_utility(t, outcome, agent):
    """Minus the place of the agent's partner in her true ranking."""
    return -t.index(outcome[agent])
