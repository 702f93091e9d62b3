"""Column generation in plain numpy and SciPy, kept as the oracle of the compiled
one: :meth:`RoutingNetwork.shortest_paths` (SciPy's Dijkstra, every pair's path read back along the
predecessor arrays one hop at a time for all pairs at once, a COO to CSR conversion),
:meth:`CongestionGame.with_actions` (stack, stable sort of the rows by class, the constructor's
checks) and :meth:`RoutingGame.new_columns` on top of them.  Copied from dpgames at commit 217c199,
unchanged but for taking the objects as arguments."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from dpgames.games.game import CongestionGame
from dpgames.games.network import NEW_PATH_TOLERANCE, RoutingGame, RoutingNetwork
from dpgames.validation import ValidationError


def oracle_graph(net: RoutingNetwork, weights):
    """The graph keeping the cheapest of parallel links; also its sorted keys and link ids."""
    order = np.argsort(net._key, kind="stable")
    keys = net._key[order]
    if np.all(keys[1:] != keys[:-1]):
        links, keys, indptr, indices = (
            order,
            keys,
            np.searchsorted(keys, np.arange(net._nodes + 1) * net._nodes),
            net._head[order],
        )
        graph = sp.csr_matrix((weights[links], indices, indptr), shape=(net._nodes, net._nodes))
        return graph, keys, links
    order = np.lexsort((weights, net._key))
    keys = net._key[order]
    keep = np.r_[True, keys[1:] != keys[:-1]]
    links, keys = order[keep], keys[keep]
    graph = sp.csr_matrix(
        (weights[links], (net._tail[links], net._head[links])), shape=(net._nodes, net._nodes)
    )
    return graph, keys, links


def oracle_shortest_paths(net: RoutingNetwork, weights, origins, sinks, names=None):
    """The cost and the incidence of each pair's shortest path."""
    graph, keys, links = oracle_graph(net, np.asarray(weights, dtype=float))
    sources, row = np.unique(origins, return_inverse=True)
    dist, pred = dijkstra(graph, indices=sources, return_predecessors=True)
    cost = dist[row, sinks]
    if not np.isfinite(cost).all():
        bad = int(np.flatnonzero(~np.isfinite(cost))[0])
        what = (names() if callable(names) else names)[bad] if names else f"pair {bad}"
        raise ValidationError(
            "destinations", f": OD pair {what}: the destination cannot be reached from the origin"
        )
    into = np.full(pred.shape, -1, dtype=pred.dtype)
    reached = pred >= 0
    node = np.broadcast_to(np.arange(net._nodes), pred.shape)[reached]
    into[reached] = links[np.searchsorted(keys, pred[reached] * net._nodes + node)]
    pairs, hops = [], []
    current = np.asarray(sinks, dtype=np.int64).copy()
    active = np.flatnonzero(current != origins)
    while active.size:
        tree, here = row[active], current[active]
        hops.append(into[tree, here])
        pairs.append(active)
        before = pred[tree, here]
        current[active] = before
        active = active[before != origins[active]]
    p = np.concatenate(pairs) if pairs else np.zeros(0, np.int64)
    h = np.concatenate(hops) if hops else np.zeros(0, np.int64)
    inc = sp.csr_matrix((np.ones(p.size), (p, h)), shape=(len(origins), net.num_links))
    return cost, inc


def oracle_with_actions(game: CongestionGame, incidence, action_class):
    """The game with more actions, and where each old action sits."""
    new_class = np.asarray(action_class, dtype=np.int64)
    all_class = np.concatenate([game.action_class, new_class])
    order = np.argsort(all_class, kind="stable")
    inc = sp.vstack([game.incidence, sp.csr_matrix(incidence)], format="csr")[order]
    grown = CongestionGame(game.costs, inc, all_class[order], game.demand, game.class_names)
    position = np.empty(order.size, dtype=np.int64)
    position[order] = np.arange(order.size)
    return grown, position[: game.num_actions]


def oracle_new_columns(
    model: RoutingGame, game: CongestionGame, link_costs, max_links=None, max_paths=None
):
    """Column generation (the reference): the grown game, the old actions' positions, each pair's
    cost."""
    cost, inc = oracle_shortest_paths(
        model.network, link_costs, model._o, model._d, lambda: model.names
    )
    best = game.class_min(game.incidence @ link_costs)
    keep = cost < best * (1 - NEW_PATH_TOLERANCE) - 1e-12
    if max_links is not None:
        keep &= np.diff(inc.indptr) <= max_links
    if max_paths is not None:
        keep &= game.actions_per_class < max_paths
    new = np.flatnonzero(keep)
    if new.size == 0:
        return game, np.arange(game.num_actions), cost
    grown, position = oracle_with_actions(game, inc[new], new)
    return grown, position, cost
