"""Facility location on a graph as an NST environment (Nissim, Smorodinsky & Tennenholtz 2012,
Section 5).

Agents sit at nodes of a networkx graph (the type is the private location, from a finite set of
*locations*, by default every node).  The designer opens ``k`` facilities: an outcome is a k-subset
of the *candidate* nodes (by default every node), so there are ``C(|candidates|, k)`` outcomes.
Once they are open, each agent reacts by choosing which open facility to use (reaction ``j`` = the
j-th facility of the subset, in candidate order) at utility minus the shortest-path distance; she
uses the nearest (the first in candidate order on ties).  Welfare is minus the total distance.
Under commitment an agent must use the facility nearest to her *reported* location.

With ``k = 1`` there is nothing to choose: every agent uses the single open facility, the commitment
mechanism cannot punish a lie (gap 0), and the NST mix is never exactly truthful.  ``k >= 2`` fixes
it: the outcome opening the true and the reported location separates them.

Distances: one Dijkstra (breadth-first search when unweighted) per candidate with
``scipy.sparse.csgraph``, so graphs of 10^4 nodes cost ``|candidates|`` searches, not all pairs.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import networkx as nx
import numpy as np
from numpy.typing import ArrayLike
from scipy.sparse.csgraph import dijkstra

from dpgames._files import read_text
from dpgames.mechanisms.environment import MAX_ENTRIES, Environment
from dpgames.validation import ValidationError, integer, memory

#: Most nodes a generated graph may have (networkx holds each node in Python dicts: ~1 KB a node).
MAX_NODES = 10**6


def line_graph(n: int) -> nx.Graph:
    """Nodes ``0 .. n-1`` on a line, unit edges (positions ``(i, 0)`` for drawing).

    Parameters
    ----------
    n : int
        Number of nodes, ``2 <= n <=`` :data:`MAX_NODES`.

    Returns
    -------
    networkx.Graph

    Raises
    ------
    ValidationError
        If ``n`` is not a whole number in that range.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValidationError("n", f": a line needs a whole number of nodes >= 2, got {n!r}")
    n = integer("n", n, 2, MAX_NODES)
    g = nx.path_graph(n)
    nx.set_node_attributes(g, {i: (float(i), 0.0) for i in g}, "pos")
    return g


def grid_graph(rows: int, cols: int) -> nx.Graph:
    """A rows x cols grid with unit edges; node ``r * cols + c`` at position ``(c, r)``.

    Parameters
    ----------
    rows, cols : int
        Grid size, ``>= 1`` each, at least 2 and at most :data:`MAX_NODES` nodes in all.

    Returns
    -------
    networkx.Graph

    Raises
    ------
    ValidationError
        If a size is not a whole number ``>= 1``, or the grid is too small or too large.
    """
    rows, cols = integer("rows", rows, low=1), integer("cols", cols, low=1)
    if rows * cols < 2:
        raise ValidationError("rows", "x cols: a grid needs at least 2 nodes")
    memory(
        "rows",
        rows * cols,
        bytes_per_entry=1024,
        what=f"a {rows:,} x {cols:,} grid ({rows * cols:,} nodes, at most {MAX_NODES:,})",
    )
    if rows * cols > MAX_NODES:
        raise ValidationError("rows", f"x cols = {rows * cols:,} nodes is more than {MAX_NODES:,}")
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(rows, cols), ordering="sorted")
    nx.set_node_attributes(
        g, {r * cols + c: (float(c), float(r)) for r in range(rows) for c in range(cols)}, "pos"
    )
    return g


def read_edge_list(path: str | Path) -> nx.Graph:
    """An undirected graph from a text file of ``u v [weight]`` lines (``#`` starts a comment).

    Node names are integers when every name is one, strings otherwise; weights default to 1.

    Parameters
    ----------
    path : str or pathlib.Path
        A regular text file of at most 32 MiB.

    Returns
    -------
    networkx.Graph
        Edge lengths in the ``weight`` attribute.

    Raises
    ------
    ValidationError
        A ``FileError`` naming the file and the line of the first malformed edge (or the file's
        problem).
    """
    path = Path(path)
    lines = read_text(path).splitlines()  # a regular file of at most 32 MiB, else a FileError
    edges = []
    for number, line in enumerate(lines, start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) not in (2, 3):
            raise ValidationError(
                str(path),
                f", line {number}: expected 'u v' or 'u v weight', got {len(fields)} fields",
            )
        try:
            weight = float(fields[2]) if len(fields) == 3 else 1.0
        except ValueError:
            raise ValidationError(
                str(path), f", line {number}: the weight is not a number"
            ) from None
        if not (math.isfinite(weight) and weight > 0):
            raise ValidationError(str(path), f", line {number}: weight must be a finite number > 0")
        edges.append((fields[0], fields[1], weight))
    if not edges:
        raise ValidationError(str(path), ": no edges")
    as_int = all(_is_int(u) and _is_int(v) for u, v, _ in edges)
    g = nx.Graph()
    g.add_weighted_edges_from((int(u), int(v), w) if as_int else (u, v, w) for u, v, w in edges)
    return g


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _check_labels(graph: nx.Graph) -> None:
    kinds = {
        int
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool)
        else str
        if isinstance(v, str)
        else None
        for v in graph.nodes
    }
    if None in kinds or len(kinds) > 1:
        raise ValidationError(
            "graph",
            ": node labels must be all integers or all strings "
            "(relabel with networkx.convert_node_labels_to_integers)",
        )


def _node_list(graph: nx.Graph, nodes: ArrayLike | None, name: str) -> list:
    if nodes is None:
        return list(graph.nodes)
    try:
        chosen = list(nodes)  # type: ignore[arg-type]  # a scalar raises TypeError, refused below
        missing = [v for v in chosen if v not in graph]
    except TypeError:  # not a list, or unhashable labels
        raise ValidationError(name, ": must be a list of nodes of the graph") from None
    if not chosen:
        raise ValidationError(name, ": need at least one node")
    if missing:
        raise ValidationError(name, f": node {missing[0]!r} is not in the graph")
    if len(set(chosen)) != len(chosen):
        raise ValidationError(name, ": nodes must be distinct")
    return chosen


def distances(
    graph: nx.Graph, locations: list, candidates: list, weight: str = "weight"
) -> np.ndarray:
    """Shortest-path distances, locations x candidates, from one search per candidate (to the
    candidate, on directed graphs).

    Parameters
    ----------
    graph : networkx.Graph or networkx.DiGraph
    locations, candidates : list of nodes
    weight : str, default "weight"
        The edge attribute holding lengths (finite, ``> 0``; 1 when absent).

    Returns
    -------
    numpy.ndarray, shape (len(locations), len(candidates))

    Raises
    ------
    ValidationError
        If an edge length is not a finite number ``> 0``, or a location cannot reach a candidate
        (naming both).
    """
    nodes = list(graph.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    if not isinstance(weight, str):
        raise ValidationError(
            "weight", f"must be the name of an edge attribute (a string), got {weight!r:.60}"
        )
    adjacency = nx.to_scipy_sparse_array(graph, nodelist=nodes, weight=weight, format="csr")
    if adjacency.nnz and not (np.isfinite(adjacency.data).all() and adjacency.data.min() > 0):
        raise ValidationError("graph", f": edge '{weight}' values must be finite numbers > 0")
    directed = graph.is_directed()
    unweighted = adjacency.nnz == 0 or bool(np.all(adjacency.data == 1.0))
    source = adjacency.T.tocsr() if directed else adjacency
    d = dijkstra(
        source, directed=directed, indices=[index[c] for c in candidates], unweighted=unweighted
    )
    d = d[:, [index[v] for v in locations]].T
    if not np.isfinite(d).all():
        i, j = np.argwhere(~np.isfinite(d))[0]
        raise ValidationError(
            "graph",
            f": location {locations[i]!r} cannot reach candidate {candidates[j]!r} "
            "(the graph is not connected)",
        )
    return d


def k_subsets(c: int, k: int) -> np.ndarray:
    """All k-subsets of ``range(c)`` in lexicographic order, as a ``C(c, k) x k`` array.

    Examples
    --------
    >>> k_subsets(4, 2).tolist()
    [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    """
    if k == 1:
        return np.arange(c)[:, None]
    if k == 2:
        i, j = np.triu_indices(c, 1)
        return np.stack([i, j], axis=1)
    return np.array(list(itertools.combinations(range(c), k)), dtype=np.intp).reshape(-1, k)


def facility_location_environment(
    graph: nx.Graph,
    k: int = 1,
    candidates: ArrayLike | None = None,
    locations: ArrayLike | None = None,
    weight: str = "weight",
) -> Environment:
    """The facility-location environment: types = ``locations``, outcomes = k-subsets of
    ``candidates`` (labels: a K x k array of nodes), reactions = which open facility to use,
    welfare = minus the total shortest-path distance.

    Parameters
    ----------
    graph : networkx.Graph or networkx.DiGraph
        At least 2 nodes; edge lengths in the ``weight`` attribute (default 1), finite and ``> 0``.
    k : int, default 1
        Facilities to open.
    candidates, locations : array_like of nodes, optional
        Where facilities may open, and the agents' possible locations (the types); default every
        node.
    weight : str, default "weight"
        The edge attribute holding lengths.

    Returns
    -------
    Environment
        ``C(len(candidates), k)`` outcomes, ``k`` reactions, utility = minus the distance to the
        facility used.

    Raises
    ------
    ValidationError
        If ``k`` exceeds the candidates, a node is unknown, a location cannot reach a candidate, an
        edge length is invalid, or the tables would exceed
        :data:`~dpgames.mechanisms.environment.MAX_ENTRIES`.

    Examples
    --------
    >>> from dpgames.mechanisms import facility_location_environment, line_graph
    >>> env = facility_location_environment(line_graph(4), k=2)
    >>> env.n_outcomes, env.outcomes[0].tolist(), env.reactions
    (6, [0, 1], ('facility 1', 'facility 2'))
    >>> env.optimum(env.profile([0, 0, 3]))                    # open 0 and 3: nobody travels
    (2, 0.0)
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValidationError(
            "k", f": the number of facilities must be a whole number >= 1, got {k!r}"
        )
    if not isinstance(graph, nx.Graph):
        raise ValidationError("graph", f"must be a networkx graph, got {type(graph).__name__}")
    if graph.number_of_nodes() < 2:
        raise ValidationError("graph", ": need at least 2 nodes")
    _check_labels(graph)
    locs = _node_list(graph, locations, "locations")
    cands = _node_list(graph, candidates, "candidates")
    if k > len(cands):
        raise ValidationError("k", f": cannot open {k} facilities among {len(cands)} candidates")
    n_outcomes = math.comb(len(cands), k)
    if len(locs) * n_outcomes * k > MAX_ENTRIES:
        raise ValidationError(
            "candidates",
            f": {len(locs)} locations x C({len(cands)}, {k}) = {n_outcomes:,} outcomes "
            f"x {k} is too large (limit {MAX_ENTRIES:,}): restrict 'candidates' or "
            "'locations'",
        )
    d = distances(graph, locs, cands, weight)
    subsets = k_subsets(len(cands), k)
    utility = -d[:, subsets]  # m x K x k
    reactions = tuple(f"facility {j + 1}" for j in range(k))
    return Environment(
        np.array(locs),
        np.array(cands)[subsets],
        reactions,
        utility,
        name=f"facility location (k={k})",
    )
