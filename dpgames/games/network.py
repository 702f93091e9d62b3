"""Routing games on a road network: links with BPR costs, origin-destination classes, path sets.

A player's type is her origin-destination (OD) pair; her actions are paths.  Paths are never
enumerated: a :class:`RoutingGame` turns into a :class:`~dpgames.games.game.CongestionGame` over a
*path set* that grows by **column generation**: after each change of link costs, the shortest path of
every OD pair (one Dijkstra per origin, :func:`scipy.sparse.csgraph.dijkstra`) joins the set if it is
cheaper than every path already there.  Why column generation and not a fixed list of k shortest
paths: the user equilibrium and the system optimum use only paths that are shortest at the optimum,
and column generation finds exactly those (so the equilibrium is that of the *full* path set, to the
relative gap), while a fixed k could miss one.  The private mediator, whose actions must not depend
on the reports, uses :meth:`RoutingGame.public_paths` instead: k diverse paths per OD pair from the
network alone (link-penalty method; see there).

Zones that traffic may not pass through (TNTP's "first thru node": nodes numbered below it) are split
in two: links enter a zone at a separate sink copy, so no path passes through a zone.  Shortest paths
are extracted for all OD pairs at once by walking back along the predecessor arrays, one step per hop
for every pair simultaneously (no loop over paths).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.sparse.csgraph import dijkstra

from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame
from dpgames.privacy import as_generator
from dpgames.validation import ValidationError, finite_array, memory, positive_int

NEW_PATH_TOLERANCE = 1e-9  # a shortest path joins the set if cheaper than the best path by this fraction


@dataclass(frozen=True)
class RoutingNetwork:
    """Directed links ``tail[i] -> head[i]`` between nodes labelled ``labels`` with costs ``costs``.

    ``zones`` are the node labels that traffic may not pass through (they can still be origins and
    destinations).  Internally node ``j`` is ``labels[j]``; a zone's sink copy is node ``len(labels) + z``.
    """

    labels: np.ndarray
    tail: np.ndarray
    head: np.ndarray
    costs: PolynomialCosts
    zones: np.ndarray

    def __post_init__(self) -> None:
        for name in ("labels", "tail", "head", "zones"):
            if np.ndim(getattr(self, name)) != 1:
                raise ValidationError(name, "must be a 1-d list of node labels")
        if not isinstance(self.costs, PolynomialCosts):
            raise ValidationError("costs", f"must be PolynomialCosts, got {type(self.costs).__name__}")
        labels = np.asarray(self.labels)
        if np.unique(labels).size != labels.size:
            raise ValidationError("labels", ": node labels must be distinct")
        index = {lab: j for j, lab in enumerate(labels.tolist())}
        try:
            tail = np.array([index[x] for x in np.asarray(self.tail).tolist()], dtype=np.int64)
            head = np.array([index[x] for x in np.asarray(self.head).tolist()], dtype=np.int64)
        except KeyError as exc:
            raise ValidationError("tail", f": link end {exc.args[0]!r} is not a node") from None
        if tail.size != self.costs.size:
            raise ValidationError("costs", f": {tail.size} links but {self.costs.size} cost functions")
        if tail.size == 0:
            raise ValidationError("tail", ": the network has no links")
        zones = np.asarray(self.zones)
        zone_index = np.array([index[z] for z in zones.tolist()], dtype=np.int64) if zones.size else np.zeros(0, int)
        sink = np.arange(labels.size)
        sink[zone_index] = labels.size + np.arange(zone_index.size)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_tail", tail)
        object.__setattr__(self, "_head", sink[head])  # links into a zone end at its sink copy
        object.__setattr__(self, "_sink", sink)
        object.__setattr__(self, "_nodes", labels.size + zone_index.size)
        key = tail * self._nodes + self._head
        object.__setattr__(self, "_key", key)

    @property
    def num_links(self) -> int:
        return self.costs.size

    def node(self, label) -> int:
        """Internal index of a node label (as an origin)."""
        try:
            return self._index[label]
        except KeyError:
            raise ValidationError("node", f"{label!r} is not in the network") from None

    def sink(self, label) -> int:
        """Internal index of a node label as a destination (a zone's sink copy)."""
        return int(self._sink[self.node(label)])

    @classmethod
    def from_digraph(cls, graph: nx.DiGraph, zones: ArrayLike = ()) -> RoutingNetwork:
        """From a networkx DiGraph whose edges carry BPR attributes ``free_flow_time``, ``capacity`` and
        optionally ``b`` (default 0.15), ``power`` (4) and ``fixed`` (0); or polynomial attributes
        ``free``, ``coef``, ``power``."""
        edges = list(graph.edges(data=True))
        if not edges:
            raise ValidationError("graph", ": the graph has no edges")
        tails = [u for u, _, _ in edges]
        heads = [v for _, v, _ in edges]
        attrs = [d for _, _, d in edges]
        if all("free" in d and "coef" in d for d in attrs):
            costs = PolynomialCosts([d["free"] for d in attrs], [d["coef"] for d in attrs],
                                    [d.get("power", 1.0) for d in attrs])
        else:
            missing = [(u, v) for u, v, d in edges if "free_flow_time" not in d or "capacity" not in d]
            if missing:
                raise ValidationError("graph", f": edge {missing[0]} needs 'free_flow_time' and 'capacity' (BPR) "
                                               "or 'free' and 'coef' (polynomial) attributes")
            costs = PolynomialCosts.bpr([d["free_flow_time"] for d in attrs], [d["capacity"] for d in attrs],
                                        [d.get("b", 0.15) for d in attrs], [d.get("power", 4.0) for d in attrs],
                                        [d.get("fixed", 0.0) for d in attrs])
        return cls(np.array(list(graph.nodes)), np.array(tails), np.array(heads), costs, np.asarray(zones))

    # --- shortest paths --------------------------------------------------------------------------
    def _graph(self, weights: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        """The graph keeping the cheapest of parallel links; also its sorted keys and link ids."""
        order = np.lexsort((weights, self._key))
        keys = self._key[order]
        keep = np.r_[True, keys[1:] != keys[:-1]]
        links, keys = order[keep], keys[keep]
        graph = sp.csr_matrix((weights[links], (self._tail[links], self._head[links])),
                              shape=(self._nodes, self._nodes))
        return graph, keys, links

    def shortest_paths(self, weights: np.ndarray, origins: np.ndarray, sinks: np.ndarray,
                       names: list[str] | None = None) -> tuple[np.ndarray, sp.csr_matrix]:
        """Cost and link incidence (one row per pair, CSR) of a shortest path for each pair
        ``(origins[i], sinks[i])`` of internal node indices, under link ``weights`` (>= 0)."""
        graph, keys, links = self._graph(np.asarray(weights, dtype=float))
        sources, row = np.unique(origins, return_inverse=True)
        dist, pred = dijkstra(graph, indices=sources, return_predecessors=True)
        cost = dist[row, sinks]
        if not np.isfinite(cost).all():
            bad = int(np.flatnonzero(~np.isfinite(cost))[0])
            what = names[bad] if names else f"pair {bad}"
            raise ValidationError("destinations", f": OD pair {what}: the destination cannot be reached from the origin")
        pairs, hops = [], []
        current = np.asarray(sinks, dtype=np.int64).copy()
        active = np.flatnonzero(current != origins)
        while active.size:  # one step back along every unfinished path at once
            before = pred[row[active], current[active]]
            hops.append(links[np.searchsorted(keys, before * self._nodes + current[active])])
            pairs.append(active)
            current[active] = before
            active = active[before != origins[active]]
        p = np.concatenate(pairs) if pairs else np.zeros(0, np.int64)
        h = np.concatenate(hops) if hops else np.zeros(0, np.int64)
        inc = sp.csr_matrix((np.ones(p.size), (p, h)), shape=(len(origins), self.num_links))
        return cost, inc


@dataclass(frozen=True)
class RoutingGame:
    """A routing game: a network and OD classes (origin and destination labels, demand, names)."""

    network: RoutingNetwork
    origins: np.ndarray
    destinations: np.ndarray
    demand: np.ndarray

    def __post_init__(self) -> None:
        demand = finite_array("demand", self.demand)
        if np.ndim(self.origins) != 1 or np.ndim(self.destinations) != 1:
            raise ValidationError("origins", "and destinations must be lists of node labels, one per OD pair")
        if demand.shape != (len(self.origins),) or len(self.destinations) != len(self.origins):
            raise ValidationError("origins", ", destinations and demand must have one entry per OD pair")
        if not (np.isfinite(demand).all() and (demand >= 0).all()):
            raise ValidationError("demand", "must be finite and >= 0")
        object.__setattr__(self, "demand", demand)
        object.__setattr__(self, "_o", np.array([self.network.node(o) for o in np.asarray(self.origins).tolist()],
                                                dtype=np.int64))
        object.__setattr__(self, "_d", np.array([self.network.sink(d) for d in np.asarray(self.destinations).tolist()],
                                                dtype=np.int64))
        if np.any(self._o == self._d):
            raise ValidationError("destinations", ": an OD pair has the same origin and destination")

    @property
    def names(self) -> list[str]:
        return [f"{o}->{d}" for o, d in zip(np.asarray(self.origins).tolist(), np.asarray(self.destinations).tolist())]

    @property
    def num_classes(self) -> int:
        return self.demand.size

    def with_demand(self, demand: ArrayLike) -> RoutingGame:
        return RoutingGame(self.network, self.origins, self.destinations, demand)

    def shortest_paths(self, link_costs: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Each OD pair's shortest path under ``link_costs``: costs and incidence (K x links)."""
        return self.network.shortest_paths(link_costs, self._o, self._d, self.names)

    def initial_game(self) -> CongestionGame:
        """The congestion game whose path set is each OD pair's free-flow shortest path."""
        _, inc = self.shortest_paths(self.network.costs(np.zeros(self.network.num_links)))
        return CongestionGame(self.network.costs, inc, np.arange(self.num_classes), self.demand, tuple(self.names))

    def new_columns(self, game: CongestionGame, link_costs: np.ndarray, max_links: int | None = None,
                    max_paths: int | None = None):
        """Column generation: each class's shortest path under ``link_costs``, kept when it is cheaper
        than all of the class's current paths (and has at most ``max_links`` links, and the class has
        fewer than ``max_paths`` paths).  Returns the grown game, where the old actions now sit, and
        the shortest path costs (for the relative gap)."""
        cost, inc = self.shortest_paths(link_costs)
        best = game.class_min(game.incidence @ link_costs)
        keep = cost < best * (1 - NEW_PATH_TOLERANCE) - 1e-12
        if max_links is not None:
            keep &= np.diff(inc.indptr) <= max_links
        if max_paths is not None:
            keep &= game.actions_per_class < max_paths
        new = np.flatnonzero(keep)
        if new.size == 0:
            return game, np.arange(game.num_actions), cost
        grown, position = game.with_actions(inc[new], new)
        return grown, position, cost

    def add_shortest_paths(self, game: CongestionGame, flow: np.ndarray,
                           link_costs: np.ndarray) -> tuple[CongestionGame, np.ndarray, np.ndarray]:
        """:meth:`new_columns` with a flow carried over (new paths carry 0)."""
        grown, position, cost = self.new_columns(game, link_costs)
        carried = np.zeros(grown.num_actions)
        carried[position] = flow
        return grown, carried, cost

    def public_paths(self, k: int, penalty: float = 0.5) -> CongestionGame:
        """Up to ``k`` paths per OD pair from the network alone (free-flow costs), by the link-penalty
        method: after each round of shortest paths from an origin, the links they use cost
        ``(1 + penalty)`` times more for that origin's next round (duplicates dropped).  The set depends
        on no report, so the mediator may use it without spending privacy."""
        base = self.network.costs(np.zeros(self.network.num_links))
        base = np.maximum(base, 1e-9 * max(float(base.max()), 1.0))  # zero-cost links still get penalised
        weights = np.tile(base, (np.unique(self._o).size, 1))
        sources, row = np.unique(self._o, return_inverse=True)
        salt = as_generator(0).integers(1, 2 ** 62, size=self.network.num_links, dtype=np.uint64)
        blocks, owners = [], []
        for _ in range(k):
            for s in range(sources.size):  # one Dijkstra per origin and round (own penalties)
                pairs = np.flatnonzero(row == s)
                _, inc = self.network.shortest_paths(weights[s], self._o[pairs], self._d[pairs])
                weights[s] *= np.where(np.asarray(inc.sum(axis=0)).ravel() > 0, 1 + penalty, 1.0)
                blocks.append(inc)
                owners.append(pairs)
        inc = sp.vstack(blocks, format="csr")
        owner = np.concatenate(owners)
        signature = np.add.reduceat(salt[inc.indices], inc.indptr[:-1])  # wraps mod 2^64: a hash of the link set
        _, first = np.unique(np.column_stack([owner.astype(np.uint64), signature]), axis=0, return_index=True)
        first = np.sort(first)
        return CongestionGame.build(self.network.costs, inc[first], owner[first], self.demand, self.names)


def grid_network(rows: int, cols: int, rng=None, *, free_flow=(1.0, 2.0), capacity=(400.0, 1200.0),
                 b: float = 0.15, power: float = 4.0) -> RoutingNetwork:
    """A ``rows x cols`` grid with links both ways between neighbours, BPR costs with free-flow times
    and capacities drawn uniformly from the given ranges (nodes labelled ``0 .. rows*cols - 1``).  Grids
    whose arrays would exceed the memory limit are refused up front with the estimate."""
    rows, cols = positive_int("rows", rows), positive_int("cols", cols)
    if rows * cols < 2:
        raise ValidationError("rows", "x cols: a grid network needs at least 2 nodes")
    memory("rows", 4 * rows * cols, bytes_per_entry=64, what=f"a {rows:,} x {cols:,} grid (about 4 links a node)")
    gen = as_generator(rng)
    ids = np.arange(rows * cols).reshape(rows, cols)
    right = np.column_stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()])
    down = np.column_stack([ids[:-1, :].ravel(), ids[1:, :].ravel()])
    one_way = np.vstack([right, down])
    ends = np.vstack([one_way, one_way[:, ::-1]])
    m = ends.shape[0]
    costs = PolynomialCosts.bpr(gen.uniform(*_range("free_flow", free_flow), m),
                                gen.uniform(*_range("capacity", capacity), m), b, power)
    return RoutingNetwork(ids.ravel(), ends[:, 0], ends[:, 1], costs, np.zeros(0, int))


def _range(name: str, pair) -> tuple[float, float]:
    """A ``(low, high)`` pair of finite numbers with ``0 <= low <= high`` (a range to draw from)."""
    values = finite_array(name, pair)
    if values.shape != (2,) or not 0 <= values[0] <= values[1]:
        raise ValidationError(name, f"must be a pair (low, high) with 0 <= low <= high, got {pair!r}")
    return float(values[0]), float(values[1])
