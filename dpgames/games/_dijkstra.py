"""Dijkstra's shortest-path trees from several sources, compiled (numba), in SciPy's order.

Imported on first use only (by :mod:`dpgames.games.network`): ``import dpgames`` does not import
numba.

**Same trees as SciPy.**  :func:`scipy.sparse.csgraph.dijkstra` (SciPy >= 1.14, which replaced a
Fibonacci heap by C++'s priority queue; the implementation this one replaced called it) keeps a
priority queue of ``(-distance, node)`` pairs (C++ ``std::priority_queue``: the largest pair first,
i.e. the nearest node, the *highest-numbered* one among equally near nodes), pushes a node again
whenever its distance strictly decreases (stale entries are skipped when popped) and records the
predecessor with every strict decrease.  A node's live entry is the one with its current distance,
and skipping a stale one changes nothing, so SciPy scans the nodes in the order of "pop the first
live entry by (distance, -node)": the order of this indexed binary heap, which holds each reached,
unscanned node once at its current distance (decrease-key instead of a second push).  The links are
relaxed in the same order (each node's in CSR order) with the same additions and the same strict
test, so every scanned node gets SciPy's distance and predecessor, bit for bit, ties included
(``tests/test_paths_compiled.py`` checks it against SciPy on networks full of ties).  The trees are
now the same whichever SciPy is installed.

**Only what the pairs need.**  A search stops once it has scanned all of its origin's destinations
(a scanned node's distance and tree path are final: later scans cannot change them), and it keeps,
instead of the distance matrix, each pair's cost; besides each node's predecessor it records the
*link* it was reached by (``via``), so reading a path back needs no lookup of the link between two
nodes.
"""

from __future__ import annotations

import numba
import numpy as np

UNREACHED = -9999  # SciPy's predecessor (and our ``via``) of the source and of nodes not reached


@numba.njit(cache=True, nogil=True, inline="always")
def _before(dist_a, node_a, dist_b, node_b):  # pragma: no cover - compiled
    """Whether ``(dist_a, node_a)`` is scanned before ``(dist_b, node_b)``: nearer first, then the
    higher node (SciPy's largest ``(-distance, node)`` pair)."""
    return dist_a < dist_b or (dist_a == dist_b and node_a > node_b)


@numba.njit(cache=True, nogil=True)
def shortest_trees(
    indptr, indices, weights, links, sources, tree, sinks, cost, pred, via
):  # pragma: no cover - compiled
    """Shortest-path trees from each of ``sources`` over the CSR graph ``(indptr, indices,
    weights)`` (weights >= 0; entry ``j`` is link ``links[j]``), for the pairs ``(sources[tree[p]],
    sinks[p])``.

    Writes each pair's shortest distance into ``cost[p]`` (``inf`` if its sink is not reached) and,
    in row ``i`` of ``pred`` and ``via``, the predecessor of each node scanned by source ``i``'s
    search and the link from it (:data:`UNREACHED` for the source; entries of nodes not scanned are
    not meaningful)."""
    nodes = indptr.size - 1
    # the pairs grouped by source (counting sort), to know each search's destinations
    first = np.zeros(sources.size + 1, np.int64)
    for p in range(tree.size):
        first[tree[p] + 1] += 1
    for i in range(sources.size):
        first[i + 1] += first[i]
    grouped = np.empty(tree.size, np.int64)
    fill = first[:-1].copy()
    for p in range(tree.size):
        grouped[fill[tree[p]]] = p
        fill[tree[p]] += 1
    dist = np.empty(nodes)
    wanted = np.full(nodes, -1, np.int64)  # == i: a destination of source i not scanned yet
    # the heap: entry k is node heap_node[k] at distance heap_dist[k]; slot[node] is its entry (-1:
    # none)
    heap_dist = np.empty(nodes)
    heap_node = np.empty(nodes, np.int64)
    slot = np.full(nodes, -1, np.int64)
    for i in range(sources.size):
        remaining = 0
        for k in range(first[i], first[i + 1]):
            sink = sinks[grouped[k]]
            if wanted[sink] != i:
                wanted[sink] = i
                remaining += 1
        before, into = pred[i], via[i]
        dist[:] = np.inf
        before[:] = UNREACHED
        into[:] = UNREACHED
        source = sources[i]
        dist[source] = 0.0
        _place(heap_dist, heap_node, slot, 0, 0.0, source)
        size = 1
        while size and remaining:
            top, reached = heap_node[0], heap_dist[0]
            slot[top] = -1
            if wanted[top] == i:
                wanted[top] = -1
                remaining -= 1
            size -= 1
            if size:
                _sift_down(heap_dist, heap_node, slot, size)
            for j in range(indptr[top], indptr[top + 1]):
                head = indices[j]
                reach = reached + weights[j]
                if reach <= np.inf and dist[head] > reach:  # (SciPy's test; False for NaN)
                    dist[head] = reach
                    before[head] = top
                    into[head] = links[j]
                    at = slot[head]
                    if at < 0:  # pushed, else its distance decreased: sifted up from its entry
                        at = size
                        size += 1
                    _sift_up(heap_dist, heap_node, slot, at, reach, head)
        for k in range(size):  # a search stopped early leaves nodes in the heap
            slot[heap_node[k]] = -1
        for k in range(first[i], first[i + 1]):
            p = grouped[k]
            cost[p] = dist[sinks[p]]
            wanted[sinks[p]] = -1


@numba.njit(cache=True, nogil=True, inline="always")
def _place(heap_dist, heap_node, slot, at, dist, node):  # pragma: no cover - compiled
    """Put ``node`` at ``dist`` into heap entry ``at``."""
    heap_dist[at], heap_node[at], slot[node] = dist, node, at


@numba.njit(cache=True, nogil=True, inline="always")
def _sift_down(heap_dist, heap_node, slot, size):  # pragma: no cover - compiled
    """Move the entry just past the heap's ``size`` entries to the root (the popped one's place) and
    sift it down."""
    node, far = heap_node[size], heap_dist[size]
    at, child = 0, 1
    while child < size:  # the nearer child moves up while it comes before the moved entry
        if child + 1 < size and _before(
            heap_dist[child + 1], heap_node[child + 1], heap_dist[child], heap_node[child]
        ):
            child += 1
        if not _before(heap_dist[child], heap_node[child], far, node):
            break
        _place(heap_dist, heap_node, slot, at, heap_dist[child], heap_node[child])
        at, child = child, 2 * child + 1
    _place(heap_dist, heap_node, slot, at, far, node)


@numba.njit(cache=True, nogil=True, inline="always")
def _sift_up(heap_dist, heap_node, slot, at, dist, node):  # pragma: no cover - compiled
    """Put ``node`` at its new ``dist`` into heap entry ``at`` and sift it up."""
    while at > 0:
        parent = (at - 1) >> 1
        above, near = heap_node[parent], heap_dist[parent]
        if not _before(dist, node, near, above):
            break
        _place(heap_dist, heap_node, slot, at, near, above)
        at = parent
    _place(heap_dist, heap_node, slot, at, dist, node)
