"""The private mediator's round under Hedge, compiled (numba): two passes over the incidence a
round.

Imported by :mod:`dpgames.games.mediator` on first use only (``import dpgames`` does not import
numba).

A round of the mediator needs, per action, its cost at the published loads (``A c~``, Hedge's
losses) and, for the nonatomic evaluation, at the true loads (``A c``, the regrets); then Hedge's
update per class; then the next round's loads ``A^T f`` from the new strategies.  :func:`charge`
reads each class's resources once for both costs and charges the learner and the regret tracker;
numpy's ``exp`` turns Hedge's shifts into factors; :func:`renew` normalises the new strategies and
adds their flows to the next loads.  Why compiled: numpy needs one pass over ``A`` per product plus
~15 passes over the per-action arrays a round (and Python-level loops per class size); here each
action is touched twice.

**Layout** (:class:`Lanes`).  A class's actions are taken :data:`LANES` at a time ("lanes"); the
resources of a group of lanes are stored position by position (the lanes' first resources, then
their second ...), each lane padded to the group's longest with *sink* resources (indices ``m .. m +
SINKS - 1``: cost 0, their loads discarded; taken in turn, so that the padding's additions to the
loads do not wait on one another), as 16-bit indices when there are fewer than 65,535 - SINKS
resources.  The loop over a group's positions then has one exit for three actions instead of three
data-dependent exits (mispredicted branches were a third of the time); each action's cost is still
summed in its own stored order (adding a sink's 0 changes nothing) and the loads lane by lane, in
action order.  A class of at most :data:`LANES` actions (one group: all of Chicago Sketch's) is
worked in registers, with no per-class scratch arrays or loops over its actions (about a quarter of
:func:`charge`'s time and a sixth of :func:`renew`'s on Chicago Sketch); larger classes take the
general loops, which do the same operations in the same order.

**Tiny exponentials.**  numpy's vectorised ``exp`` slows down on a whole array when some of its
arguments are below ``log`` of the smallest normal number (``exp`` underflows: 0 or a subnormal; 7x
below -746, 50x in the subnormal range: ``benchmarks/bench_games.py --breakdown`` prints it), and a
round's Hedge shifts or log-space scores have a few such arguments in most rounds.  :func:`charge`
and :func:`log_scores` put those aside (``tiny_index``, ``tiny_value``) and write 0 in their place;
the caller takes ``exp`` of the array, then of the few put aside, and writes them back: numpy's
``exp`` is elementwise, so the values are those of one ``exp`` over the whole array, bit for bit.

**Same numbers.**  The costs are those of ``A c`` and the loads those of ``A^T f`` (scipy's orders);
Hedge's update (``exp`` is numpy's), its log-space recomputation of every class when one class's
weights underflow, and the regret tracker's sums are those of
:meth:`dpgames.games.dynamics.Hedge.update` and :meth:`dpgames.games.atomic.RegretTracker.add`
(per-class sums in ``numpy.add.reduceat``'s order, numpy's pairwise summation beyond 8 actions): bit
for bit, as ``tests/test_games_dynamics.py`` checks against the plain numpy reference implementation
kept in tests/mediator_oracle.py.
"""

from __future__ import annotations

import math

import numba
import numpy as np

LANES = (
    3  # actions whose resources are read together (Chicago Sketch's OD pairs have up to 3 paths)
)
SINKS = 64  # padding resources (cost 0, loads discarded)
# below log(smallest normal) = -708.396...: numpy's exp is slow there (module docstring)
TINY = -708.0


class Lanes:
    """A game's incidence in lanes (see the module docstring), built once per game.

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        The game's CSR incidence (``A``: actions x resources).
    class_start : numpy.ndarray
        Class boundaries over the actions (as :attr:`CongestionGame.class_start
        <dpgames.games.game.CongestionGame.class_start>`).
    resources : int
        ``m``; indices ``m .. m + SINKS - 1`` are the sinks.
    """

    def __init__(
        self, indptr: np.ndarray, indices: np.ndarray, class_start: np.ndarray, resources: int
    ):
        start = np.asarray(class_start, dtype=np.int64)
        sizes = np.diff(start)
        groups = -(-sizes // LANES)
        self.class_start = start
        self.group_start = np.r_[0, np.cumsum(groups)].astype(np.int64)
        # a group is LANES consecutive actions of a class (fewer at the class's end)
        first_action = np.repeat(
            start[:-1] - LANES * self.group_start[:-1], groups
        ) + LANES * np.arange(groups.sum())
        self.length = (
            np.maximum.reduceat(np.diff(indptr).astype(np.int64), first_action)
            if first_action.size
            else np.zeros(0, dtype=np.int64)
        )
        self.offset = np.r_[0, np.cumsum(LANES * self.length)].astype(np.int64)
        dtype = np.uint16 if resources + SINKS <= np.iinfo(np.uint16).max else np.int32
        self.indices = np.empty(self.offset[-1], dtype=dtype)
        _fill_lanes(indptr, indices, start, self.group_start, self.offset, resources, self.indices)
        self.indptr, self.plain_indices = indptr, indices.astype(dtype)
        #: ``(class_start, group_start, offset, length, indices)``: what the kernels read, as one
        #: argument
        self.arrays = (self.class_start, self.group_start, self.offset, self.length, self.indices)


@numba.njit(cache=True, nogil=True)
def _fill_lanes(
    indptr, indices, class_start, group_start, offset, resources, lanes
):  # pragma: no cover - compiled
    """Write each action's resources into its lane, and the sinks in turn everywhere else."""
    for j in range(lanes.size):
        lanes[j] = resources + j % SINKS
    for k in range(class_start.size - 1):
        for a in range(class_start[k], class_start[k + 1]):
            local = a - class_start[k]
            at = offset[group_start[k] + local // LANES] + local % LANES
            for j in range(indptr[a], indptr[a + 1]):
                lanes[at + LANES * (j - indptr[a])] = indices[j]


@numba.njit(cache=True, nogil=True)
def spread_loads(indptr, indices, strategy, weight, loads):  # pragma: no cover - compiled
    """``loads = A^T (strategy * weight)``, summed in action order (as scipy's ``A.T @ f``)."""
    loads[:] = 0.0
    for a in range(strategy.size):
        flow = strategy[a] * weight[a]
        for j in range(indptr[a], indptr[a + 1]):
            loads[indices[j]] += flow


@numba.njit(cache=True, nogil=True)
def _block_sum(values, start, n):  # pragma: no cover - compiled
    """numpy's pairwise sum of ``values[start : start + n]`` for ``n <= 128``: left to right below 8
    terms, else eight running sums combined as a tree, then the rest left to right."""
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    r0, r1, r2, r3 = values[start], values[start + 1], values[start + 2], values[start + 3]
    r4, r5, r6, r7 = values[start + 4], values[start + 5], values[start + 6], values[start + 7]
    i = 8
    while i < n - n % 8:
        j = start + i
        r0 += values[j]
        r1 += values[j + 1]
        r2 += values[j + 2]
        r3 += values[j + 3]
        r4 += values[j + 4]
        r5 += values[j + 5]
        r6 += values[j + 6]
        r7 += values[j + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for j in range(start + i, start + n):
        total += values[j]
    return total


@numba.njit(cache=True, nogil=True)
def _pairwise(values, start, n):  # pragma: no cover - compiled
    """numpy's pairwise sum (``pairwise_sum`` in numpy's loops) of ``values[start : start + n]``:
    blocks of at most 128 (:func:`_block_sum`); a longer range is split in halves (the first a
    multiple of 8) and their sums added.  The recursion runs on an explicit stack (numba compiles no
    recursive kernels here)."""
    if n <= 128:
        return _block_sum(values, start, n)
    begin, count, left = np.empty(64, np.int64), np.empty(64, np.int64), np.empty(64)
    phase = np.zeros(64, np.int64)  # 0: split me; 1: my first half's sum is in left[]
    begin[0], count[0], depth, result = start, n, 0, 0.0
    while depth >= 0:
        here, size = begin[depth], count[depth]
        half = size // 2
        half -= half % 8
        if size <= 128:  # a leaf: its sum goes to its parent
            result = _block_sum(values, here, size)
            depth -= 1
        elif phase[depth] == 0:  # descend into the first half
            phase[depth] = 1
            depth += 1
            begin[depth], count[depth], phase[depth] = here, half, 0
            continue
        elif phase[depth] == 1:  # the first half is done: descend into the second
            left[depth], phase[depth] = result, 2
            depth += 1
            begin[depth], count[depth], phase[depth] = here + half, size - half, 0
            continue
        else:  # both halves done
            result = left[depth] + result
            depth -= 1
        while depth >= 0 and phase[depth] == 2:  # (a finished second half completes its parent)
            result = left[depth] + result
            depth -= 1
    return result


@numba.njit(cache=True, nogil=True, inline="always")
def _class_sum(values, size):  # pragma: no cover - compiled
    """``numpy.add.reduceat``'s sum of ``values[:size]`` for ``size <= 8``: the first value plus the
    rest summed left to right."""
    if size == 1:
        return values[0]
    rest = values[1]
    for i in range(2, size):
        rest += values[i]
    return values[0] + rest


@numba.njit(cache=True, nogil=True)
def _wide_sum(values, size):  # pragma: no cover - compiled
    """``numpy.add.reduceat``'s sum of ``values[:size]`` for any ``size``: the first value plus
    numpy's pairwise sum of the rest."""
    return values[0] + _pairwise(values, 1, size - 1) if size > 8 else _class_sum(values, size)


@numba.njit(cache=True, nogil=True, inline="always")
def _group_costs(base, steps, indices, published, true):  # pragma: no cover - compiled
    """A group's three actions' costs at ``published`` and (unless ``true`` is None; else 0) at
    ``true``: one read of their resources."""
    n0 = n1 = n2 = e0 = e1 = e2 = 0.0
    for step in range(steps):
        j = base + LANES * step
        r0, r1, r2 = indices[j], indices[j + 1], indices[j + 2]
        n0 += published[r0]
        n1 += published[r1]
        n2 += published[r2]
        if true is not None:
            e0 += true[r0]
            e1 += true[r1]
            e2 += true[r2]
    return n0, n1, n2, e0, e1, e2


@numba.njit(cache=True, nogil=True, inline="always")
def _lanes_of(values, lo, size):  # pragma: no cover - compiled
    """``values[lo : lo + size]`` for ``size <= 3`` as three numbers (0 past ``size``)."""
    return values[lo], values[lo + 1] if size > 1 else 0.0, values[lo + 2] if size > 2 else 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def _group_sum(v0, v1, v2, size):  # pragma: no cover - compiled
    """:func:`_class_sum` of ``(v0, v1, v2)[:size]``."""
    if size == 3:
        return v0 + (v1 + v2)
    return v0 + v1 if size == 2 else v0


@numba.njit(cache=True, nogil=True)
def charge(
    lanes, hedge, published, scale, shift, unsafe, aside, true, follow, deviate, wide
):  # pragma: no cover
    """The first half of a round of Hedge, for every class, at the costs of the published loads.

    Arguments, grouped as the caller holds them: ``lanes`` is :attr:`Lanes.arrays` (``class_start``,
    ``group_start``, ``offset``, ``length``, ``indices``); ``hedge`` is the learner's
    ``(eta, strategy, cumulative, expected_loss)`` (rates per action, the current strategy, the
    cumulative losses and the expected loss per class, the last two updated in place); ``aside`` is
    ``(tiny_index, tiny_value)``; ``shift`` and ``unsafe`` are outputs; ``true``, ``follow``,
    ``deviate`` the regret tracker's (below); ``wide`` as in :func:`renew`.

    Per class ``k`` (actions ``class_start[k] : class_start[k + 1]``), per action ``a``: the loss
    ``(A published)[a] / scale[k]`` is charged (``expected_loss[k] += p . loss``, ``cumulative +=
    loss``) and ``shift[a] = min(eta loss) - eta loss`` (the class's best action: 0), whose
    exponential :func:`renew` needs; a shift below :data:`TINY` goes to
    ``tiny_index``/``tiny_value`` and 0 to ``shift`` (module docstring).  Unless ``true`` is None,
    the regret tracker's sums at the true link costs ``true``: ``follow[k] += p . (A true)``,
    ``deviate += A true``.  ``published`` and ``true`` are 0 at the sinks.  (``true``, ``follow``
    and ``deviate``: all arrays or all None; None compiles without them.)

    Returns
    -------
    largest : float
        The largest ``(A true)[a]`` (``-inf`` without ``true``).
    count : int
        ``unsafe[:count]``: the classes whose new weights ``p * exp(shift)`` may sum to 0
        (underflow), to be checked by :func:`underflows`.  A class with a best action (``shift =
        0``) of ``p > 0`` cannot (its total is at least ``p``).
    tiny : int
        How many shifts were put aside (``tiny_index[:tiny]``, ``tiny_value[:tiny]``).
    """
    class_start, group_start, offset, length, indices = lanes
    eta, strategy, cumulative, expected_loss = hedge
    tiny_index, tiny_value = aside
    widest = 1
    for k in range(class_start.size - 1):
        widest = max(widest, group_start[k + 1] - group_start[k])
    noisy, exact, work = (
        np.zeros(LANES * widest),
        np.zeros(LANES * widest),
        np.zeros(LANES * widest),
    )
    largest, count, tiny = -math.inf, 0, 0
    for k in range(class_start.size - 1):
        lo, size = class_start[k], class_start[k + 1] - class_start[k]
        first = group_start[k]
        rate, sc = eta[lo], scale[k]
        if size <= LANES:  # (most classes: one group, in registers; the same operations as below)
            n0, n1, n2, e0, e1, e2 = _group_costs(
                offset[first], length[first], indices, published, true
            )
            p0, p1, p2 = _lanes_of(strategy, lo, size)
            l0, l1, l2 = n0 / sc, n1 / sc, n2 / sc
            expected_loss[k] += _group_sum(p0 * l0, p1 * l1, p2 * l2, size)
            s0, s1, s2 = rate * l0, rate * l1, rate * l2
            least, at_best = s0, p0  # (numpy's minimum: NaN wins)
            if size > 1 and (s1 < least or s1 != s1):
                least, at_best = s1, p1
            if size > 2 and (s2 < least or s2 != s2):
                least, at_best = s2, p2
            cumulative[lo] += l0
            shift[lo], tiny = _aside(lo, least - s0, tiny_index, tiny_value, tiny)
            if size > 1:
                cumulative[lo + 1] += l1
                shift[lo + 1], tiny = _aside(lo + 1, least - s1, tiny_index, tiny_value, tiny)
            if size > 2:
                cumulative[lo + 2] += l2
                shift[lo + 2], tiny = _aside(lo + 2, least - s2, tiny_index, tiny_value, tiny)
            if not at_best > 0:  # (as below)
                unsafe[count] = k
                count += 1
            if follow is not None:
                follow[k] += _group_sum(p0 * e0, p1 * e1, p2 * e2, size)
                deviate[lo] += e0
                largest = max(largest, e0)
                if size > 1:
                    deviate[lo + 1] += e1
                    largest = max(largest, e1)
                if size > 2:
                    deviate[lo + 2] += e2
                    largest = max(largest, e2)
            continue
        for g in range(first, group_start[k + 1]):
            # both costs of three actions: one read of their resources
            lane = LANES * (g - first)
            (
                noisy[lane],
                noisy[lane + 1],
                noisy[lane + 2],
                exact[lane],
                exact[lane + 1],
                exact[lane + 2],
            ) = _group_costs(offset[g], length[g], indices, published, true)
        least, best = math.inf, lo
        for i in range(size):
            loss = noisy[i] / sc
            work[i] = strategy[lo + i] * loss
            cumulative[lo + i] += loss
            step = noisy[i] = rate * loss
            if step < least or step != step:  # (numpy's minimum: NaN wins)
                least, best = step, lo + i
        if wide is None:  # (compiled without _wide_sum when no class has more than 8 actions)
            expected_loss[k] += _class_sum(work, size)
        else:
            expected_loss[k] += _wide_sum(work, size)
        for i in range(size):
            shift[lo + i], tiny = _aside(lo + i, least - noisy[i], tiny_index, tiny_value, tiny)
        if not strategy[best] > 0:
            # else its weights total at least p[best] * exp(0) > 0: no underflow
            unsafe[count] = k  # (checked by :func:`underflows` after the exponential)
            count += 1
        if follow is not None:
            for i in range(size):
                work[i] = strategy[lo + i] * exact[i]
                deviate[lo + i] += exact[i]
                largest = max(largest, exact[i])
            if wide is None:
                follow[k] += _class_sum(work, size)
            else:
                follow[k] += _wide_sum(work, size)
    return largest, count, tiny


@numba.njit(cache=True, nogil=True, inline="always")
def _aside(at, value, tiny_index, tiny_value, tiny):  # pragma: no cover - compiled
    """``(value, tiny)``, or ``(0, tiny + 1)`` with ``value`` put aside at ``tiny`` if it is below
    :data:`TINY` (module docstring)."""
    if value < TINY:
        tiny_index[tiny], tiny_value[tiny] = at, value
        return 0.0, tiny + 1
    return value, tiny


@numba.njit(cache=True, nogil=True)
def underflows(class_start, factor, strategy, classes, wide):  # pragma: no cover - compiled
    """Whether one of ``classes`` has weights ``factor * strategy`` whose total (in
    ``numpy.add.reduceat``'s order) is not > 0: then numpy's Hedge recomputes every class in log
    space."""
    widest = 1
    for k in range(class_start.size - 1):
        widest = max(widest, class_start[k + 1] - class_start[k])
    work = np.zeros(widest)
    for k in classes:
        lo, size = class_start[k], class_start[k + 1] - class_start[k]
        for i in range(size):
            work[i] = factor[lo + i] * strategy[lo + i]
        if not (_class_sum(work, size) if wide is None else _wide_sum(work, size)) > 0:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def log_scores(
    class_start, eta, cumulative, scores, tiny_index, tiny_value
):  # pragma: no cover - compiled
    """Per class, ``scores = -eta L - max(-eta L)`` (Hedge's log-space weights before ``exp``); a
    score below :data:`TINY` goes to ``tiny_index``/``tiny_value`` and 0 to ``scores`` (module
    docstring). Returns how many were put aside."""
    tiny = 0
    for k in range(class_start.size - 1):
        lo, hi = class_start[k], class_start[k + 1]
        rate, top = eta[lo], -math.inf  # (a class's actions share its rate)
        for i in range(lo, hi):
            score = scores[i] = -(rate * cumulative[i])
            top = max(top, score)
        for i in range(lo, hi):  # (without a branch: in log space many scores are put aside)
            score = scores[i] - top
            small = score < TINY
            tiny_index[tiny], tiny_value[tiny] = i, score
            scores[i], tiny = (0.0 if small else score), tiny + small
    return tiny


@numba.njit(cache=True, nogil=True)
def renew(
    class_start,
    group_start,
    offset,
    length,
    indices,
    factor,
    strategy,
    weight,
    next_strategy,
    next_loads,
    wide,
):  # pragma: no cover - compiled
    """The end of a round of Hedge: per class the weights ``w = factor * strategy`` (``w = factor``
    if ``strategy`` is empty), ``next_strategy = w / sum(w)``, and ``next_loads = A^T
    (next_strategy * weight)`` summed in action order, as scipy's ``A.T @ f`` (its last
    :data:`SINKS` entries: the sinks')."""
    next_loads[:] = 0.0
    widest = 1
    for k in range(class_start.size - 1):
        widest = max(widest, group_start[k + 1] - group_start[k])
    work, flows = np.zeros(LANES * widest), np.zeros(LANES * widest)
    for k in range(class_start.size - 1):
        lo, size = class_start[k], class_start[k + 1] - class_start[k]
        first = group_start[k]
        if size <= LANES:  # (most classes: one group, in registers; the same operations as below)
            w0, w1, w2 = _lanes_of(factor, lo, size)
            if strategy.size:
                p0, p1, p2 = _lanes_of(strategy, lo, size)
                w0, w1, w2 = w0 * p0, w1 * p1, w2 * p2
            total = _group_sum(w0, w1, w2, size)
            base, steps = offset[first], length[first]
            for lane, w in enumerate((w0, w1, w2)):
                if lane < size:
                    q = next_strategy[lo + lane] = w / total
                    _spread(base + lane, steps, indices, q * weight[lo + lane], next_loads)
            continue
        for i in range(size):
            work[i] = factor[lo + i] * strategy[lo + i] if strategy.size else factor[lo + i]
        total = _class_sum(work, size) if wide is None else _wide_sum(work, size)
        for i in range(size):
            next_strategy[lo + i] = work[i] / total
            flows[i] = next_strategy[lo + i] * weight[lo + i]
        for g in range(first, group_start[k + 1]):  # lane by lane: in action order
            for lane in range(min(LANES, size - LANES * (g - first))):
                # (padded positions go to the sinks)
                _spread(
                    offset[g] + lane,
                    length[g],
                    indices,
                    flows[LANES * (g - first) + lane],
                    next_loads,
                )


@numba.njit(cache=True, nogil=True, inline="always")
def _spread(start, steps, indices, flow, loads):  # pragma: no cover - compiled
    """Add ``flow`` to the loads of one lane's resources (``indices[start::LANES][:steps]``)."""
    for step in range(steps):
        loads[indices[start + LANES * step]] += flow


@numba.njit(cache=True, nogil=True)
def largest_regret(class_start, per_class, per_action, rounds, live):  # pragma: no cover - compiled
    """``max over k with live[k] of (per_class[k] - min_{a in k} per_action[a]) / rounds``: the
    largest external regret (:meth:`dpgames.games.atomic.RegretTracker.external_regret`,
    :meth:`dpgames.games.dynamics.Hedge.external_regret`), NaN as numpy's minimum and maximum give
    it; ``-inf`` if no class is live."""
    best = -math.inf
    for k in range(class_start.size - 1):
        if not live[k]:
            continue
        least = math.inf
        for a in range(class_start[k], class_start[k + 1]):
            if per_action[a] < least or per_action[a] != per_action[a]:
                least = per_action[a]
        regret = (per_class[k] - least) / rounds
        if regret > best or regret != regret:
            best = regret
    return best
