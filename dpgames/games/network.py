"""Routing games on a road network: links with BPR costs, origin-destination classes, path sets.

A player's type is her origin-destination (OD) pair; her actions are paths.  Paths are never
enumerated: a :class:`RoutingGame` turns into a :class:`~dpgames.games.game.CongestionGame` over a
*path set* that grows by **column generation**: after each change of link costs, the shortest path
of every OD pair (one Dijkstra per origin, compiled, in :func:`scipy.sparse.csgraph.dijkstra`'s
order: the same trees) joins the set if it is cheaper than every path already there.  Why column
generation and not a fixed list of k shortest paths: the user equilibrium and the system optimum use
only paths that are shortest at the optimum, and column generation finds exactly those (so the
equilibrium is that of the *full* path set, to the relative gap), while a fixed k could miss one.
The private mediator, whose actions must not depend on the reports, uses
:meth:`RoutingGame.public_paths` instead: k diverse paths per OD pair from the network alone
(link-penalty method; see there).

Zones that traffic may not pass through (TNTP's "first thru node": nodes numbered below it) are
split in two: links enter a zone at a separate sink copy, so no path passes through a zone.
Shortest paths are read back along the predecessor arrays only for the pairs that need them (column
generation keeps the few that are cheaper than their class's paths), by a compiled pass that writes
the sorted CSR rows directly (:class:`ShortestPathTrees`, :mod:`dpgames.games._paths`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame, csr_index_dtype
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.validation import (
    ValidationError,
    finite_array,
    index_array,
    integer,
    memory,
    non_negative,
    positive_int,
)

NEW_PATH_TOLERANCE = (
    1e-9  # a shortest path joins the set if cheaper than the best path by this fraction
)


@dataclass(frozen=True)
class RoutingNetwork:
    """Directed links ``tail[i] -> head[i]`` between nodes labelled ``labels`` with costs ``costs``.

    Internally node ``j`` is ``labels[j]``; a zone's sink copy is node ``len(labels) + z``.

    Parameters
    ----------
    labels : numpy.ndarray
        The node labels (distinct).
    tail, head : numpy.ndarray
        Each link's end labels.
    costs : PolynomialCosts
        One cost function per link.
    zones : numpy.ndarray
        Node labels that traffic may not pass through (they can still be origins and destinations).

    Raises
    ------
    ValidationError
        If labels repeat, a link end is not a node, the number of cost functions is not the number
        of links, or there are no links.

    Examples
    --------
    >>> import numpy as np
    >>> from dpgames.games.costs import PolynomialCosts
    >>> net = RoutingNetwork(
    ...     np.array(["a", "b", "c"]),
    ...     np.array(["a", "b", "a"]),
    ...     np.array(["b", "c", "c"]),
    ...     PolynomialCosts([1.0, 1.0, 3.0], [0.0, 0.0, 0.0]),
    ...     np.array([]),
    ... )
    >>> cost, paths = net.shortest_paths(
    ...     np.array([1.0, 1.0, 3.0]), np.array([net.node("a")]), np.array([net.sink("c")])
    ... )
    >>> cost.tolist(), paths.toarray().tolist()  # a -> b -> c (2) beats a -> c (3)
    ([2.0], [[1.0, 1.0, 0.0]])
    """

    labels: np.ndarray
    tail: np.ndarray
    head: np.ndarray
    costs: PolynomialCosts
    zones: np.ndarray
    if TYPE_CHECKING:
        # set by __post_init__; declared for the type checker only (not dataclass fields)
        _index: dict[Any, int] = field(init=False)
        _tail: np.ndarray = field(init=False)
        _head: np.ndarray = field(init=False)
        _sink: np.ndarray = field(init=False)
        _nodes: int = field(init=False)
        _key: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        for name in ("labels", "tail", "head", "zones"):
            if np.ndim(getattr(self, name)) != 1:
                raise ValidationError(name, "must be a 1-d list of node labels")
        if not isinstance(self.costs, PolynomialCosts):
            raise ValidationError(
                "costs", f"must be PolynomialCosts, got {type(self.costs).__name__}"
            )
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
            raise ValidationError(
                "costs", f": {tail.size} links but {self.costs.size} cost functions"
            )
        if tail.size == 0:
            raise ValidationError("tail", ": the network has no links")
        zones = np.asarray(self.zones)
        zone_index = (
            np.array([index[z] for z in zones.tolist()], dtype=np.int64)
            if zones.size
            else np.zeros(0, int)
        )
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
        """The number of links."""
        return self.costs.size

    def node(self, label) -> int:
        """Internal index of a node label (as an origin).

        Raises
        ------
        ValidationError
            If ``label`` is not a node of the network.
        """
        try:
            return self._index[label]
        except KeyError:
            raise ValidationError("node", f"{label!r} is not in the network") from None

    def sink(self, label) -> int:
        """Internal index of a node label as a destination (a zone's sink copy).

        Raises
        ------
        ValidationError
            If ``label`` is not a node of the network.
        """
        return int(self._sink[self.node(label)])

    @classmethod
    def from_digraph(cls, graph: nx.DiGraph, zones: ArrayLike = ()) -> RoutingNetwork:
        """From a networkx DiGraph whose edges carry BPR attributes ``free_flow_time``, ``capacity``
        and optionally ``b`` (default 0.15), ``power`` (4) and ``fixed`` (0); or polynomial
        attributes ``free``, ``coef``, ``power``.

        Parameters
        ----------
        graph : networkx.DiGraph
            The network (parallel links are not representable in a DiGraph).
        zones : array_like
            Node labels traffic may not pass through.

        Returns
        -------
        RoutingNetwork

        Raises
        ------
        ValidationError
            If the graph has no edges or an edge lacks the cost attributes.
        """
        edges = list(graph.edges(data=True))
        if not edges:
            raise ValidationError("graph", ": the graph has no edges")
        tails = [u for u, _, _ in edges]
        heads = [v for _, v, _ in edges]
        attrs = [d for _, _, d in edges]
        if all("free" in d and "coef" in d for d in attrs):
            costs = PolynomialCosts(
                [d["free"] for d in attrs],
                [d["coef"] for d in attrs],
                [d.get("power", 1.0) for d in attrs],
            )
        else:
            missing = [
                (u, v) for u, v, d in edges if "free_flow_time" not in d or "capacity" not in d
            ]
            if missing:
                raise ValidationError(
                    "graph",
                    f": edge {missing[0]} needs 'free_flow_time' and 'capacity' (BPR) "
                    "or 'free' and 'coef' (polynomial) attributes",
                )
            costs = PolynomialCosts.bpr(
                [d["free_flow_time"] for d in attrs],
                [d["capacity"] for d in attrs],
                [d.get("b", 0.15) for d in attrs],
                [d.get("power", 4.0) for d in attrs],
                [d.get("fixed", 0.0) for d in attrs],
            )
        return cls(
            np.array(list(graph.nodes)), np.array(tails), np.array(heads), costs, np.asarray(zones)
        )

    # --- shortest paths --------------------------------------------------------------------------
    def _graph(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The graph Dijkstra searches, as CSR arrays ``(indptr, heads, weights, links)`` over the
        internal nodes: one entry per (tail, head) key in key order, the cheapest of parallel links
        (its id in ``links``).  Without parallel links the structure does not depend on the weights:
        it is built once."""
        weights = np.asarray(weights, dtype=float)
        if weights.shape != (self.num_links,) or not np.all(weights >= 0):  # (NaN is refused too)
            raise ValidationError(
                "weights",
                f"must be one number >= 0 per link ({self.num_links}), got shape "
                f"{weights.shape}, least {np.min(weights, initial=np.inf):g}",
            )
        simple = self.__dict__.get("_structure")
        if simple is None:
            order = np.argsort(self._key, kind="stable")
            keys = self._key[order]
            simple = (
                (
                    order,
                    np.searchsorted(keys, np.arange(self._nodes + 1) * self._nodes),
                    self._head[order],
                )
                if np.all(keys[1:] != keys[:-1])
                else ()
            )
            object.__setattr__(self, "_structure", simple)
        if simple:
            links, indptr, heads = simple
            return indptr, heads, weights[links], links
        order = np.lexsort((weights, self._key))
        keys = self._key[order]
        keep = np.r_[True, keys[1:] != keys[:-1]]
        links, keys = order[keep], keys[keep]
        return (
            np.searchsorted(keys, np.arange(self._nodes + 1) * self._nodes),
            self._head[links],
            weights[links],
            links,
        )

    def shortest_paths(
        self,
        weights: np.ndarray,
        origins: np.ndarray,
        sinks: np.ndarray,
        names: list[str] | Callable[[], list[str]] | None = None,
    ) -> tuple[np.ndarray, sp.csr_matrix]:
        """Cost and link incidence of a shortest path for each pair ``(origins[i], sinks[i])``.

        One Dijkstra per distinct origin (SciPy's :func:`~scipy.sparse.csgraph.dijkstra`, compiled:
        see :class:`ShortestPathTrees`); the paths are read back along the trees.

        Parameters
        ----------
        weights : numpy.ndarray
            Link weights (>= 0), one per link.
        origins, sinks : numpy.ndarray of int
            Internal node indices of each pair's origin and destination (see :meth:`node`,
            :meth:`sink`).
        names : list of str, callable or None
            The pairs' names for the error message (or a function returning them, called only then).

        Returns
        -------
        cost : numpy.ndarray
            Each pair's shortest path cost.
        incidence : scipy.sparse.csr_matrix
            One row per pair, one column per link (1 where the path uses the link).

        Raises
        ------
        ValidationError
            If a destination cannot be reached from its origin.
        """
        trees = self.shortest_path_trees(weights, origins, sinks, names)
        return trees.cost, trees.incidence()

    def shortest_path_trees(
        self,
        weights: np.ndarray,
        origins: np.ndarray,
        sinks: np.ndarray,
        names: list[str] | Callable[[], list[str]] | None = None,
    ) -> ShortestPathTrees:
        """Dijkstra's shortest-path trees for the pairs ``(origins[i], sinks[i])``: their costs now,
        their paths on demand (:meth:`ShortestPathTrees.incidence`, for the pairs asked for only).

        Parameters
        ----------
        weights, origins, sinks, names
            As :meth:`shortest_paths`.

        Returns
        -------
        ShortestPathTrees

        Raises
        ------
        ValidationError
            If a destination cannot be reached from its origin.
        """
        origins, sinks = self._pair_ends(origins, sinks)
        return self._trees(weights, np.unique(origins, return_inverse=True), origins, sinks, names)

    def _trees(
        self,
        weights: np.ndarray,
        by_origin: tuple[np.ndarray, np.ndarray],
        origins: np.ndarray,
        sinks: np.ndarray,
        names: list[str] | Callable[[], list[str]] | None,
    ) -> ShortestPathTrees:
        """:meth:`shortest_path_trees` of checked pairs, their distinct origins and each pair's
        given (``np.unique(origins, return_inverse=True)``)."""
        indptr, heads, graph_weights, links = self._graph(weights)
        sources, tree = by_origin
        cost = np.empty(origins.size)
        pred = np.empty((sources.size, self._nodes), dtype=np.int32)
        via = np.empty((sources.size, self._nodes), dtype=np.int32)
        # compiled: numba is imported on first use only
        from dpgames.games._dijkstra import (
            shortest_trees,
        )

        shortest_trees(indptr, heads, graph_weights, links, sources, tree, sinks, cost, pred, via)
        if not np.isfinite(cost).all():
            bad = int(np.flatnonzero(~np.isfinite(cost))[0])
            what = (names() if callable(names) else names)[bad] if names else f"pair {bad}"
            raise ValidationError(
                "destinations",
                f": OD pair {what}: the destination cannot be reached from the origin",
            )
        return ShortestPathTrees(cost, pred, via, tree, origins, sinks, self.num_links)

    def _pair_ends(self, origins: ArrayLike, sinks: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """``origins`` and ``sinks`` as int64 arrays of internal node indices, checked (the compiled
        search trusts them)."""
        what = "node indices (see RoutingNetwork.node and RoutingNetwork.sink)"
        origins, sinks = (
            index_array("origins", origins, self._nodes, what),
            index_array("sinks", sinks, self._nodes, what),
        )
        if origins.shape != sinks.shape:
            raise ValidationError(
                "origins", "and sinks must be lists of node indices of the same length"
            )
        return origins, sinks


@dataclass(frozen=True)
class ShortestPathTrees:
    """Shortest-path trees from the origins of some OD pairs
    (:meth:`RoutingNetwork.shortest_path_trees`): each pair's cost, and its path read back along its
    origin's tree when asked for.

    The trees are Dijkstra's, compiled (:mod:`dpgames.games._dijkstra`: SciPy's
    :func:`~scipy.sparse.csgraph.dijkstra` order, so the same trees bit for bit, ties included);
    reading is compiled too (:mod:`dpgames.games._paths`): each asked pair's links are counted, then
    written, each row sorted ascending, straight into a canonical CSR.  numba is imported on first
    use.

    Parameters
    ----------
    cost : numpy.ndarray
        Each pair's shortest path cost (all finite).
    pred, via : numpy.ndarray
        One row per distinct origin: each node's predecessor on its shortest path from that origin,
        and the link from it (entries of the nodes on the pairs' paths only are meaningful).
    tree : numpy.ndarray of int
        Each pair's row of ``pred`` and ``via``.
    origins, sinks : numpy.ndarray of int
        Each pair's origin and destination (internal node indices).
    num_links : int
        The incidence's columns.
    """

    cost: np.ndarray
    pred: np.ndarray
    via: np.ndarray
    tree: np.ndarray
    origins: np.ndarray
    sinks: np.ndarray
    num_links: int

    def _pairs(self, pairs: ArrayLike | None) -> np.ndarray:
        """Indices of pairs as an int64 array, checked (the compiled reading trusts them)."""
        return (
            np.arange(self.cost.size)
            if pairs is None
            else index_array("pairs", pairs, self.cost.size, "pair indices")
        )

    def lengths(self, pairs: ArrayLike | None = None) -> np.ndarray:
        """The number of links of each pair's path.

        Parameters
        ----------
        pairs : array_like of int or None
            Indices of pairs (default all).

        Returns
        -------
        numpy.ndarray of int

        Raises
        ------
        ValidationError
            If a pair index is out of range.
        """
        return self._lengths(self._pairs(pairs))

    def _lengths(self, pairs: np.ndarray) -> np.ndarray:
        return _compiled_paths().path_lengths(self.pred, self.tree, self.origins, self.sinks, pairs)

    def incidence(self, pairs: ArrayLike | None = None) -> sp.csr_matrix:
        """The paths of ``pairs`` as a 0/1 CSR matrix, one row per pair and one column per link,
        each row's links ascending (canonical).

        Parameters
        ----------
        pairs : array_like of int or None
            Indices of the pairs to read, in the rows' order (default all).

        Returns
        -------
        scipy.sparse.csr_matrix

        Raises
        ------
        ValidationError
            If a pair index is out of range.
        """
        pairs = self._pairs(pairs)
        return self._incidence(pairs, self._lengths(pairs))

    def _incidence(self, pairs: np.ndarray, lengths: np.ndarray) -> sp.csr_matrix:
        """:meth:`incidence` of checked ``pairs`` whose :meth:`lengths` are known."""
        nnz = int(lengths.sum())
        dtype = csr_index_dtype(nnz, pairs.size, self.num_links)
        indptr = np.zeros(pairs.size + 1, dtype=dtype)
        np.cumsum(lengths, out=indptr[1:])
        indices = np.empty(nnz, dtype=dtype)
        _compiled_paths().fill_paths(
            self.pred, self.via, self.tree, self.origins, self.sinks, pairs, indptr, indices
        )
        out = sp.csr_matrix((np.ones(nnz), indices, indptr), shape=(pairs.size, self.num_links))
        out.has_canonical_format = (
            True  # distinct links (a shortest path is simple), sorted in each row
        )
        return out


def _compiled_paths():
    """The compiled path reading (:mod:`dpgames.games._paths`), imported on first use: ``import
    dpgames`` does not import numba."""
    from dpgames.games import _paths

    return _paths


@dataclass(frozen=True)
class RoutingGame:
    """A routing game: a network and OD classes (origin and destination labels, demand, names).

    Parameters
    ----------
    network : RoutingNetwork
        The roads.
    origins, destinations : numpy.ndarray
        Node labels, one of each per OD pair (class).
    demand : numpy.ndarray
        Trips per OD pair (finite, >= 0).

    Raises
    ------
    ValidationError
        If the lists differ in length, a label is not a node, an OD pair starts where it ends, or a
        demand is negative or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> game = RoutingGame(
    ...     grid_network(2, 2, rng=0), np.array([0]), np.array([3]), np.array([10.0])
    ... )
    >>> game.names, game.initial_game().num_actions  # one free-flow shortest path to start from
    (['0->3'], 1)
    """

    network: RoutingNetwork
    origins: np.ndarray
    destinations: np.ndarray
    demand: np.ndarray
    if TYPE_CHECKING:
        # set by __post_init__; declared for the type checker only (not dataclass fields)
        _o: np.ndarray = field(init=False)
        _d: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        demand = finite_array("demand", self.demand)
        if np.ndim(self.origins) != 1 or np.ndim(self.destinations) != 1:
            raise ValidationError(
                "origins", "and destinations must be lists of node labels, one per OD pair"
            )
        if demand.shape != (len(self.origins),) or len(self.destinations) != len(self.origins):
            raise ValidationError(
                "origins", ", destinations and demand must have one entry per OD pair"
            )
        if not (np.isfinite(demand).all() and (demand >= 0).all()):
            raise ValidationError("demand", "must be finite and >= 0")
        object.__setattr__(self, "demand", demand)
        object.__setattr__(
            self,
            "_o",
            np.array(
                [self.network.node(o) for o in np.asarray(self.origins).tolist()], dtype=np.int64
            ),
        )
        object.__setattr__(
            self,
            "_d",
            np.array(
                [self.network.sink(d) for d in np.asarray(self.destinations).tolist()],
                dtype=np.int64,
            ),
        )
        if np.any(self._o == self._d):
            raise ValidationError(
                "destinations", ": an OD pair has the same origin and destination"
            )

    @property
    def names(self) -> list[str]:
        """``"origin->destination"`` for every OD pair."""
        return [
            f"{o}->{d}"
            for o, d in zip(
                np.asarray(self.origins).tolist(), np.asarray(self.destinations).tolist()
            )
        ]

    @property
    def num_classes(self) -> int:
        """The number of OD pairs."""
        return self.demand.size

    def with_demand(self, demand: ArrayLike) -> RoutingGame:
        """The same game with another demand per OD pair."""
        return RoutingGame(self.network, self.origins, self.destinations, demand)  # type: ignore[arg-type]  # __post_init__ checks and converts demand

    def shortest_paths(self, link_costs: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Each OD pair's shortest path under ``link_costs``: costs and incidence (K x links).

        Raises
        ------
        ValidationError
            If an OD pair's destination cannot be reached.
        """
        trees = self.shortest_path_trees(link_costs)
        return trees.cost, trees.incidence()

    def shortest_path_trees(self, link_costs: np.ndarray) -> ShortestPathTrees:
        """Each OD pair's shortest path cost under ``link_costs``, its path on demand
        (:meth:`RoutingNetwork.shortest_path_trees`).

        Raises
        ------
        ValidationError
            If an OD pair's destination cannot be reached.
        """
        by_origin = self.__dict__.get("_by_origin")
        if by_origin is None:  # the pairs' distinct origins, once
            by_origin = np.unique(self._o, return_inverse=True)
            object.__setattr__(self, "_by_origin", by_origin)
        return self.network._trees(link_costs, by_origin, self._o, self._d, lambda: self.names)

    def initial_game(self) -> CongestionGame:
        """The congestion game whose path set is each OD pair's free-flow shortest path."""
        _, inc = self.shortest_paths(self.network.costs(np.zeros(self.network.num_links)))
        return CongestionGame(
            self.network.costs, inc, np.arange(self.num_classes), self.demand, tuple(self.names)
        )

    def new_columns(
        self,
        game: CongestionGame,
        link_costs: np.ndarray,
        max_links: int | None = None,
        max_paths: int | None = None,
    ):
        """Column generation: each class's shortest path under ``link_costs``, kept when it is
        cheaper than all of the class's current paths (and has at most ``max_links`` links, and the
        class has fewer than ``max_paths`` paths).  Only the kept candidates' paths are read out of
        the trees (:class:`ShortestPathTrees`), and with ``max_paths`` only the classes with room
        are costed.

        Parameters
        ----------
        game : CongestionGame
            The current path set.
        link_costs : numpy.ndarray
            The link costs the shortest paths are computed under.
        max_links, max_paths : int or None
            Paths longer than ``max_links`` links are not added; classes with ``max_paths`` paths
            get none.

        Returns
        -------
        grown : CongestionGame
            The game with the new paths (``game`` itself when none was added).
        position : numpy.ndarray of int
            Where each old action sits in ``grown``.
        cost : numpy.ndarray
            Each OD pair's shortest path cost (for the relative gap).
        """
        trees = self.shortest_path_trees(link_costs)
        cost = trees.cost
        if max_paths is None:
            best = game.class_min(game.incidence @ link_costs)
            new = np.flatnonzero(cost < best * (1 - NEW_PATH_TOLERANCE) - 1e-12)
        else:  # the classes with room only (after a few generations, a small part of the game)
            room = np.flatnonzero(game.actions_per_class < max_paths)
            best = _compiled_paths().class_min_cost(
                game.incidence.indptr,
                game.incidence.indices,
                game.class_start,
                room,
                np.asarray(link_costs, dtype=float),
            )
            new = room[cost[room] < best * (1 - NEW_PATH_TOLERANCE) - 1e-12]
        lengths = trees._lengths(new)  # paths are read for the cheaper pairs only
        if max_links is not None:
            short = lengths <= max_links
            new, lengths = new[short], lengths[short]
        if new.size == 0:
            return game, np.arange(game.num_actions), cost
        grown, position = game.with_actions(trees._incidence(new, lengths), new)
        return grown, position, cost

    def add_shortest_paths(
        self, game: CongestionGame, flow: np.ndarray, link_costs: np.ndarray
    ) -> tuple[CongestionGame, np.ndarray, np.ndarray]:
        """:meth:`new_columns` with a flow carried over (new paths carry 0).

        Returns
        -------
        (CongestionGame, numpy.ndarray, numpy.ndarray)
            The grown game, the flow on it and each OD pair's shortest path cost.
        """
        grown, position, cost = self.new_columns(game, link_costs)
        carried = np.zeros(grown.num_actions)
        carried[position] = flow
        return grown, carried, cost

    def public_paths(self, k: int, penalty: float = 0.5) -> CongestionGame:
        """Up to ``k`` paths per OD pair from the network alone (free-flow costs), by the
        link-penalty method: after each round of shortest paths from an origin, the links they use
        cost ``(1 + penalty)`` times more for that origin's next round (duplicates dropped).  The
        set depends on no report, so the mediator may use it without spending privacy.

        Parameters
        ----------
        k : int
            Rounds of shortest paths per origin (at most ``k`` paths per OD pair).
        penalty : float
            The factor ``1 + penalty`` applied to used links after each round.

        Returns
        -------
        CongestionGame

        Raises
        ------
        ValidationError
            Unless ``k`` is an integer in ``[1, 1000]`` and ``penalty`` a finite number ``>= 0``.
        """
        k = integer("k", k, low=1, high=1000)
        penalty = non_negative("penalty", penalty)
        base = self.network.costs(np.zeros(self.network.num_links))
        # zero-cost links still get penalised
        base = np.maximum(base, 1e-9 * max(float(base.max()), 1.0))
        weights = np.tile(base, (np.unique(self._o).size, 1))
        sources, row = np.unique(self._o, return_inverse=True)
        salt = as_generator(0).integers(1, 2**62, size=self.network.num_links, dtype=np.uint64)
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
        # wraps mod 2^64: a hash of the link set
        signature = np.add.reduceat(salt[inc.indices], inc.indptr[:-1])
        _, first = np.unique(
            np.column_stack([owner.astype(np.uint64), signature]), axis=0, return_index=True
        )
        first = np.sort(first)
        return CongestionGame.build(
            self.network.costs, inc[first], owner[first], self.demand, self.names
        )


def grid_network(
    rows: int,
    cols: int,
    rng: RNGLike = None,
    *,
    free_flow=(1.0, 2.0),
    capacity=(400.0, 1200.0),
    b: float = 0.15,
    power: float = 4.0,
) -> RoutingNetwork:
    """A ``rows x cols`` grid with links both ways between neighbours, BPR costs with free-flow
    times and capacities drawn uniformly from the given ranges (nodes labelled ``0 .. rows*cols -
    1``).

    Parameters
    ----------
    rows, cols : int
        The grid's size (at least 2 nodes).
    rng : numpy.random.Generator, int or None
        Draws the free-flow times and capacities.
    free_flow, capacity : (float, float)
        Ranges ``(low, high)`` with ``0 <= low <= high``.
    b, power : float
        The BPR parameters.

    Returns
    -------
    RoutingNetwork

    Raises
    ------
    ValidationError
        If the sizes or ranges are invalid, or the grid's arrays would exceed the memory limit
        (refused up front with the estimate).

    Examples
    --------
    >>> grid_network(3, 4, rng=0).num_links  # (3 x 3 + 2 x 4) neighbours, both ways
    34
    """
    rows, cols = positive_int("rows", rows), positive_int("cols", cols)
    if rows * cols < 2:
        raise ValidationError("rows", "x cols: a grid network needs at least 2 nodes")
    memory(
        "rows",
        4 * rows * cols,
        bytes_per_entry=64,
        what=f"a {rows:,} x {cols:,} grid (about 4 links a node)",
    )
    gen = as_generator(rng)
    ids = np.arange(rows * cols).reshape(rows, cols)
    right = np.column_stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()])
    down = np.column_stack([ids[:-1, :].ravel(), ids[1:, :].ravel()])
    one_way = np.vstack([right, down])
    ends = np.vstack([one_way, one_way[:, ::-1]])
    m = ends.shape[0]
    costs = PolynomialCosts.bpr(
        gen.uniform(*_range("free_flow", free_flow), m),
        gen.uniform(*_range("capacity", capacity), m),
        b,
        power,
    )
    return RoutingNetwork(ids.ravel(), ends[:, 0], ends[:, 1], costs, np.zeros(0, int))


def _range(name: str, pair) -> tuple[float, float]:
    """A ``(low, high)`` pair of finite numbers with ``0 <= low <= high`` (a range to draw from)."""
    values = finite_array(name, pair)
    if values.shape != (2,) or not 0 <= values[0] <= values[1]:
        raise ValidationError(
            name, f"must be a pair (low, high) with 0 <= low <= high, got {pair!r}"
        )
    return float(values[0]), float(values[1])
