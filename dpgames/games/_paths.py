"""Column generation's sparse work, compiled (numba): reading shortest paths out of Dijkstra's
predecessor arrays into CSR rows, placing rows into a grown incidence, costing some classes' paths.

Imported on first use only (by :mod:`dpgames.games.network` and :meth:`CongestionGame.with_actions
<dpgames.games.game.CongestionGame.with_actions>`): ``import dpgames`` does not import numba.

**Paths.**  A pair's path is read by walking back from its destination to its origin along the
predecessors in the origin's shortest-path tree, taking the link into each node (``pred`` and
``via``, :mod:`dpgames.games._dijkstra`).  Only the pairs asked for are read, first to count their
links (:func:`path_lengths`: the CSR row pointers), then to write them (:func:`fill_paths`), each
row's links sorted ascending: the canonical CSR that scipy's COO to CSR conversion gives, entry for
entry.

**Rows.**  :func:`insert_rows` merges new CSR rows into an old CSR at given places:
:meth:`CongestionGame.with_actions <dpgames.games.game.CongestionGame.with_actions>` inserts each
new action after its class's actions without stacking and permuting the whole matrix.

**The classes' cheapest paths.**  :func:`class_min_cost` costs only the classes asked for (those
with room for a new path): ``game.class_min(A @ w)`` restricted to them, the same numbers.
"""

from __future__ import annotations

import numba
import numpy as np

INSERTION_SORT_MAX = 32  # rows up to this long are sorted by insertion (typical paths: 5-60 links)


@numba.njit(cache=True, nogil=True)
def path_lengths(pred, tree, origins, sinks, pairs):  # pragma: no cover - compiled
    """The number of links of pair ``p``'s path, for each ``p`` in ``pairs`` (0 when it starts where
    it ends).

    ``pred[tree[p]]`` holds each node's predecessor in the pair's origin's tree; every pair's
    destination must be in its tree."""
    out = np.empty(pairs.size, np.int64)
    for i in range(pairs.size):
        p = pairs[i]
        t, origin, node = tree[p], origins[p], sinks[p]
        hops = 0
        while node != origin:
            node = pred[t, node]
            hops += 1
        out[i] = hops
    return out


@numba.njit(cache=True, nogil=True)
def fill_paths(
    pred, via, tree, origins, sinks, pairs, indptr, indices
):  # pragma: no cover - compiled
    """Write pair ``pairs[i]``'s links into ``indices[indptr[i] : indptr[i + 1]]``, sorted ascending
    (``indptr`` from :func:`path_lengths`; ``via[tree[p]]``: the link into each node of the
    tree)."""
    for i in range(pairs.size):
        p = pairs[i]
        t, origin, node = tree[p], origins[p], sinks[p]
        at = indptr[i + 1]
        while node != origin:
            at -= 1
            indices[at] = via[t, node]
            node = pred[t, node]
        _sort(indices, indptr[i], indptr[i + 1])


@numba.njit(cache=True, nogil=True)
def _sort(values, lo, hi):  # pragma: no cover - compiled
    """Sort ``values[lo:hi]`` in place, ascending (by insertion when short)."""
    if hi - lo > INSERTION_SORT_MAX:
        values[lo:hi] = np.sort(values[lo:hi])
        return
    for i in range(lo + 1, hi):
        v = values[i]
        j = i - 1
        while j >= lo and values[j] > v:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = v


@numba.njit(cache=True, nogil=True)
def insert_rows(
    indptr, indices, cuts, new_indptr, new_indices, order, out_indptr, out_indices, position
):  # pragma: no cover - compiled
    """Merge two CSRs row-wise: the old rows ``(indptr, indices)`` in order, new row ``order[j]`` of
    ``(new_indptr, new_indices)`` inserted before old row ``cuts[j]`` (``cuts`` ascending; ties in
    ``order``'s order).  Writes the merged CSR into ``out_indptr`` and ``out_indices`` and each old
    row's output row into ``position`` (new row ``order[j]`` lands at ``cuts[j] + j``).  Runs of old
    rows between two insertions are copied as one block."""
    row = 0
    out = 0
    at = 0
    out_indptr[0] = 0
    for j in range(cuts.size + 1):
        cut = cuts[j] if j < cuts.size else indptr.size - 1
        first, last = indptr[row], indptr[cut]
        out_indices[at : at + last - first] = indices[first:last]
        for r in range(row, cut):
            position[r] = out
            out += 1
            out_indptr[out] = at + indptr[r + 1] - first
        at += last - first
        row = cut
        if j < cuts.size:
            i = order[j]
            first, last = new_indptr[i], new_indptr[i + 1]
            out_indices[at : at + last - first] = new_indices[first:last]
            at += last - first
            out += 1
            out_indptr[out] = at


@numba.njit(cache=True, nogil=True)
def class_min_cost(indptr, indices, class_start, classes, weights):  # pragma: no cover - compiled
    """For each of ``classes``, its cheapest action under resource ``weights``: ``min`` over the
    class's rows of ``A w``, each row summed in stored order from 0 (scipy's product with a 0/1
    ``A``, bit for bit); a NaN row makes the class's minimum NaN (as ``numpy.minimum``)."""
    out = np.empty(classes.size)
    for i in range(classes.size):
        k = classes[i]
        least = np.nan
        for a in range(class_start[k], class_start[k + 1]):
            total = 0.0
            for j in range(indptr[a], indptr[a + 1]):
                total += weights[indices[j]]
            if a == class_start[k] or total < least or (total != total and least == least):
                least = total
        out[i] = least
    return out
