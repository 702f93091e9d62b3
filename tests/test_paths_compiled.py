"""Column generation, compiled (dpgames.games._dijkstra and _paths, used by
RoutingNetwork.shortest_paths, RoutingGame.new_columns and CongestionGame.with_actions), against
independent oracles:

* SciPy's own :func:`scipy.sparse.csgraph.dijkstra` for the trees (distances and predecessors, bit
  for bit, on small networks full of ties: integer and zero weights);
* the plain reference implementation (tests/columns_oracle.py: SciPy's Dijkstra, a numpy walk along
  the predecessors, COO to CSR, vstack and a row permutation) for the paths, the grown games
  (incidence arrays and their dtypes, classes, positions) and the errors, on the TNTP networks and
  on random grids;
* networkx for the shortest path costs;
* the whole user equilibrium and the private mediator with the oracle's column generation swapped
  in.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import dijkstra

from columns_oracle import oracle_new_columns, oracle_shortest_paths, oracle_with_actions
from dpgames.games import _paths
from dpgames.games._dijkstra import UNREACHED, shortest_trees
from dpgames.games.assignment import user_equilibrium
from dpgames.games.atomic import round_players
from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame
from dpgames.games.mediator import PrivateMediator
from dpgames.games.network import RoutingGame, RoutingNetwork, grid_network
from dpgames.games.tntp import load_tntp
from dpgames.validation import ValidationError

TNTP = Path(
    os.environ.get(
        "DPGAMES_TNTP_DIR", Path(__file__).resolve().parents[2] / "shared" / "data" / "tntp"
    )
)
needs_tntp = pytest.mark.skipif(
    not TNTP.is_dir(), reason=f"TNTP networks not found at {TNTP} (set DPGAMES_TNTP_DIR)"
)
NETWORKS = ["SiouxFalls", "Anaheim", "ChicagoSketch"]  # Anaheim has zones (sink copies)
# SciPy 1.14 replaced its Fibonacci heap by a priority queue (scipy/scipy#20717): the order the
# compiled Dijkstra follows, ties included; an older SciPy (and the oracle on it) breaks ties
# otherwise
scipys_order = pytest.mark.skipif(
    tuple(int(x) for x in scipy.__version__.split(".")[:2]) < (1, 14),
    reason="SciPy < 1.14 breaks Dijkstra's ties in another order",
)


def assert_same_csr(ours: sp.csr_matrix, theirs: sp.csr_matrix) -> None:
    """The same CSR arrays, entry for entry, with the same dtypes and shape (and both canonical)."""
    assert ours.shape == theirs.shape
    for name in ("indptr", "indices", "data"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert a.dtype == b.dtype, name
        assert np.array_equal(a, b), name
    assert ours.has_canonical_format and theirs.has_canonical_format


def assert_same_growth(ours, theirs) -> None:
    """Two ``new_columns`` results: the same grown game, positions and costs (bitwise)."""
    (game, position, cost), (game0, position0, cost0) = ours, theirs
    assert_same_csr(game.incidence, game0.incidence)
    for a, b in (
        (game.action_class, game0.action_class),
        (game.class_start, game0.class_start),
        (position, position0),
        (cost, cost0),
    ):
        assert a.dtype == b.dtype
        assert np.array_equal(a, b)
    assert game.demand is game0.demand or np.array_equal(game.demand, game0.demand)
    assert game.class_names == game0.class_names and game.costs is game0.costs


def message(call) -> str:
    """The ValidationError message of ``call()`` (which must raise one)."""
    with pytest.raises(ValidationError) as info:
        call()
    return str(info.value)


# --- the trees: SciPy's, bit for bit
# ----------------------------------------------------------------
def random_graph(
    gen: np.random.Generator, nodes: int, density: float, weights: str
) -> sp.csr_matrix:
    """A random digraph (no parallel links) with tie-prone weights: small integers, a few values, or
    floats."""
    mask = gen.uniform(size=(nodes, nodes)) < density
    tail, head = np.nonzero(mask)
    w = {
        "integers": gen.integers(0, 4, tail.size).astype(float),
        "few": gen.choice([0.0, 0.25, 0.5, 1.0], tail.size),
        "floats": gen.uniform(0, 1, tail.size),
    }[weights]
    return sp.csr_matrix((w, (tail, head)), shape=(nodes, nodes))


def compiled_trees(graph: sp.csr_matrix, sources: np.ndarray, tree: np.ndarray, sinks: np.ndarray):
    cost = np.empty(tree.size)
    pred = np.empty((sources.size, graph.shape[0]), dtype=np.int32)
    via = np.empty_like(pred)
    shortest_trees(
        graph.indptr,
        graph.indices,
        graph.data,
        np.arange(graph.nnz, dtype=np.int64),
        sources.astype(np.int64),
        tree.astype(np.int64),
        sinks.astype(np.int64),
        cost,
        pred,
        via,
    )
    return cost, pred, via


@pytest.mark.slow
@scipys_order
@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    nodes=st.integers(1, 30),
    density=st.floats(0.02, 0.5),
    weights=st.sampled_from(["integers", "few", "floats"]),
)
def test_trees_are_scipys_bit_for_bit_ties_included(seed, nodes, density, weights):
    """Every source paired with every node (whole trees): the same distances (inf where unreached)
    and the same predecessor of every reached node as scipy.sparse.csgraph.dijkstra; via is the link
    from it."""
    gen = np.random.default_rng(seed)
    graph = random_graph(gen, nodes, density, weights)
    sources = np.unique(gen.integers(0, nodes, gen.integers(1, nodes + 1)))
    tree = np.repeat(np.arange(sources.size), nodes)
    sinks = np.tile(np.arange(nodes), sources.size)
    dist, pred = dijkstra(graph, indices=sources, return_predecessors=True)
    cost, ours, via = compiled_trees(graph, sources, tree, sinks)
    assert np.array_equal(cost, dist.ravel())
    reached = np.isfinite(dist)
    assert np.array_equal(ours[reached], pred[reached])
    assert np.all(
        pred[reached]
        == np.where(
            via[reached] == UNREACHED,
            UNREACHED,
            np.searchsorted(graph.indptr, via[reached], side="right") - 1,
        )
    )
    hit = via[reached & (via >= 0)]
    assert np.array_equal(graph.indices[hit], np.nonzero(reached & (via >= 0))[1])


@scipys_order
@settings(max_examples=50, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), nodes=st.integers(2, 30), pairs=st.integers(1, 40))
def test_a_search_stopped_at_its_last_destination_keeps_scipys_paths(seed, nodes, pairs):
    """Some pairs only (each search stops once its destinations are scanned): their costs are
    SciPy's, and the predecessors along each pair's path are SciPy's up to the origin."""
    gen = np.random.default_rng(seed)
    graph = random_graph(gen, nodes, 0.2, "few")
    origins, sinks = gen.integers(0, nodes, pairs), gen.integers(0, nodes, pairs)
    sources, tree = np.unique(origins, return_inverse=True)
    dist, pred = dijkstra(graph, indices=sources, return_predecessors=True)
    cost, ours, _ = compiled_trees(graph, sources, tree, sinks)
    assert np.array_equal(cost, dist[tree, sinks])
    for p in np.flatnonzero(np.isfinite(cost)):
        node = sinks[p]
        while node != origins[p]:
            assert ours[tree[p], node] == pred[tree[p], node]
            node = pred[tree[p], node]


# --- the paths and the grown games: the reference implementation, bit for bit
# -----------------------------
def link_costs_at(model: RoutingGame, gen: np.random.Generator, ties: bool) -> np.ndarray:
    """The network's link costs at random loads (up to twice the capacity-ish scale of the demand);
    rounded to whole numbers when ``ties`` (many equal path costs)."""
    loads = (
        gen.uniform(0, 2, model.network.num_links)
        * model.demand.sum()
        / max(model.num_classes, 1)
        * 10
    )
    costs = model.network.costs(loads)
    return np.round(costs) if ties else costs


@pytest.mark.slow
@scipys_order
@needs_tntp
@pytest.mark.parametrize("name", NETWORKS)
def test_tntp_shortest_paths_and_column_generation_are_the_implementation_befores(name):
    """Free-flow shortest paths, then column generation under random (and tie-heavy, rounded) link
    costs, with and without the mediator's caps: every step's grown game equals the oracle's."""
    model = load_tntp(TNTP / name)
    gen = np.random.default_rng(7)
    free = model.network.costs(np.zeros(model.network.num_links))
    cost, inc = model.shortest_paths(free)
    cost0, inc0 = oracle_shortest_paths(model.network, free, model._o, model._d)
    assert np.array_equal(cost, cost0)
    assert_same_csr(inc, inc0)
    game = model.initial_game()
    steps = 2 if name == "ChicagoSketch" else 4
    for step in range(steps):
        link_costs = link_costs_at(model, gen, ties=step % 2 == 1)
        caps = (
            (None, None)
            if step == 0
            else (int(np.median(np.diff(game.incidence.indptr))) + 1, 1 + step)
        )
        ours = model.new_columns(game, link_costs, *caps)
        assert_same_growth(ours, oracle_new_columns(model, game, link_costs, *caps))
        game = ours[0]


@pytest.mark.slow
@scipys_order
@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    rows=st.integers(1, 6),
    cols=st.integers(2, 6),
    pairs=st.integers(1, 12),
    ties=st.booleans(),
    max_links=st.none() | st.integers(1, 8),
    max_paths=st.none() | st.integers(1, 4),
)
def test_grid_column_generation_is_the_implementation_befores(
    seed, rows, cols, pairs, ties, max_links, max_paths
):
    """Random grids and OD pairs, five generations under random link costs: each grown game (and the
    unchanged game when nothing is added) equals the oracle's."""
    gen = np.random.default_rng(seed)
    network = grid_network(rows, cols, gen)
    ends = np.array([gen.choice(rows * cols, size=2, replace=False) for _ in range(pairs)])
    model = RoutingGame(network, ends[:, 0], ends[:, 1], gen.uniform(1, 100, pairs))
    game = model.initial_game()
    for _ in range(5):
        link_costs = link_costs_at(model, gen, ties)
        ours = model.new_columns(game, link_costs, max_links, max_paths)
        assert_same_growth(ours, oracle_new_columns(model, game, link_costs, max_links, max_paths))
        game = ours[0]


@scipys_order
@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    nodes=st.integers(2, 12),
    pairs=st.integers(1, 30),
    zones=st.integers(0, 3),
)
def test_shortest_paths_of_any_pairs_are_the_implementation_befores(seed, nodes, pairs, zones):
    """Any pairs of a random network with zones and parallel links (some starting where they end: an
    empty row), any order: the same costs and incidence, or the same error when a destination is cut
    off."""
    gen = np.random.default_rng(seed)
    links = int(gen.integers(1, 4 * nodes))
    tail, head = gen.integers(0, nodes, links), gen.integers(0, nodes, links)
    costs = PolynomialCosts(gen.choice([0.0, 1.0, 2.0], links), np.zeros(links))
    net = RoutingNetwork(np.arange(nodes), tail, head, costs, np.arange(min(zones, nodes)))
    origins = gen.integers(0, nodes, pairs)
    sinks = net._sink[gen.integers(0, nodes, pairs)]
    weights = gen.choice([0.0, 0.5, 1.0], links)
    try:
        expected = oracle_shortest_paths(net, weights, origins, sinks)
    except ValidationError as error:
        assert message(lambda: net.shortest_paths(weights, origins, sinks)) == str(error)
        return
    cost, inc = net.shortest_paths(weights, origins, sinks)
    assert np.array_equal(cost, expected[0])
    assert_same_csr(inc, expected[1])


@scipys_order
@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    origins=st.lists(st.integers(-3, 12), max_size=6),
    sinks=st.lists(st.integers(-3, 12), max_size=6),
    pairs=st.lists(st.integers(-3, 8), max_size=6),
)
def test_pair_indices_are_checked_before_the_compiled_code_reads_them(seed, origins, sinks, pairs):
    """Node indices and pair indices from the caller: a clean ValidationError, or the oracle's costs
    and rows (the compiled search and reading trust what they are given, so nothing out of range may
    reach them)."""
    gen = np.random.default_rng(seed)
    net = grid_network(3, 3, gen)  # 9 nodes: 0..8
    weights = gen.uniform(0, 1, net.num_links)
    if len(origins) != len(sinks) or any(not 0 <= node <= 8 for node in origins + sinks):
        assert message(lambda: net.shortest_path_trees(weights, origins, sinks)).startswith(
            ("origins", "sinks")
        )
        return
    o, d = np.array(origins, dtype=np.int64), np.array(sinks, dtype=np.int64)
    trees = net.shortest_path_trees(weights, o, d)
    cost, inc = oracle_shortest_paths(net, weights, o, d)
    assert np.array_equal(trees.cost, cost)
    if any(not 0 <= pair < len(origins) for pair in pairs):
        assert "pairs" in message(lambda: trees.incidence(pairs))
        assert "pairs" in message(lambda: trees.lengths(pairs))
        return
    chosen = np.array(pairs, dtype=np.int64)
    assert_same_csr(trees.incidence(chosen), inc[chosen])
    assert np.array_equal(trees.lengths(chosen), np.diff(inc.indptr)[chosen])


def test_negative_or_misshapen_weights_are_refused():
    """Dijkstra's trees need weights >= 0, one per link (a negative one would let a finished search
    change)."""
    net = grid_network(2, 2, 0)
    # (not "unreachable": a NaN weight is the fault)
    nan = np.r_[np.nan, np.ones(net.num_links - 1)]
    for weights in (
        -np.ones(net.num_links),
        np.ones(net.num_links - 1),
        np.ones((net.num_links, 1)),
        nan,
    ):
        assert "weights" in message(
            lambda w=weights: net.shortest_paths(w, np.array([0]), np.array([3]))
        )


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    st.lists(
        st.one_of(
            st.integers(-2, 4), st.floats(allow_nan=True), st.booleans(), st.text(max_size=2)
        ),
        max_size=4,
    )
)
def test_fractional_or_strange_indices_are_refused_not_truncated(values):
    """Pair and node indices: whole numbers in range (3.0 is 3), or a clean ValidationError naming
    the argument; 0.5 is never read as 0."""
    net = grid_network(2, 2, 0)  # 4 nodes
    weights = np.ones(net.num_links)
    trees = net.shortest_path_trees(weights, np.array([0, 1, 2]), np.array([3, 3, 3]))
    whole = all(
        not isinstance(v, str)
        and not isinstance(v, bool)
        and v == v
        and float(v).is_integer()
        and 0 <= v < 3
        for v in values
    )
    if whole:
        chosen = np.array(values, dtype=np.int64)
        assert np.array_equal(trees.lengths(values), trees.lengths(chosen))
        assert np.array_equal(
            net.shortest_path_trees(weights, values, np.full(len(values), 3)).cost,
            trees.cost[chosen],
        )
    else:
        assert "pairs" in message(lambda: trees.lengths(values))
        if not all(
            not isinstance(v, str) and v == v and float(v).is_integer() and 0 <= v < 4
            for v in values
        ):
            assert "origins" in message(
                lambda: net.shortest_path_trees(weights, values, np.full(len(values), 3))
            )


def test_a_malformed_matrix_of_new_actions_is_refused():
    """A CSR whose column index is out of range, or whose row pointers go backwards: refused,
    named."""
    game = CongestionGame.from_action_lists(
        PolynomialCosts([1.0, 1.0], [0.0, 0.0]), [[[0], [1]]], [1.0]
    )
    beyond = sp.csr_matrix((np.ones(1), np.array([5]), np.array([0, 1])), shape=(1, 2))
    assert "incidence" in message(lambda: game.with_actions(beyond, [0]))
    backwards = sp.csr_matrix((np.ones(2), np.array([0, 1]), np.array([0, 2, 1])), shape=(2, 2))
    assert "incidence" in message(lambda: game.with_actions(backwards, [0, 0]))


def test_unreachable_destination_is_the_same_error():
    """A one-way road: the same ValidationError, naming the OD pair, from every entry point."""
    costs = PolynomialCosts([1.0, 1.0], [0.0, 0.0])
    net = RoutingNetwork(
        np.array(["a", "b", "c"]), np.array(["a", "b"]), np.array(["b", "c"]), costs, np.array([])
    )
    model = RoutingGame(net, np.array(["a", "c"]), np.array(["c", "a"]), np.array([1.0, 1.0]))
    with pytest.raises(ValidationError) as oracle:
        oracle_shortest_paths(net, np.ones(2), model._o, model._d, lambda: model.names)
    assert "c->a" in str(oracle.value)
    assert message(lambda: model.shortest_paths(np.ones(2))) == str(oracle.value)
    assert message(model.initial_game) == str(oracle.value)


def test_shortest_path_costs_are_networkx_dijkstras():
    """An independent check of the costs on a grid with zones: networkx's shortest path lengths, and
    each path's links add up to its cost."""
    gen = np.random.default_rng(11)
    grid = grid_network(5, 6, gen)
    net = RoutingNetwork(grid.labels, grid.tail, grid.head, grid.costs, np.array([0, 7, 29]))
    weights = gen.uniform(0, 3, net.num_links)
    graph = nx.DiGraph()
    zones = {0, 7, 29}
    for i, (a, b) in enumerate(zip(net.tail.tolist(), net.head.tolist())):
        graph.add_edge(a, b if b not in zones else ("sink", b), weight=weights[i])
    origins = np.arange(30)
    targets = gen.integers(0, 30, 30)
    keep = origins != targets
    origins, targets = origins[keep], targets[keep]
    cost, inc = net.shortest_paths(weights, origins, net._sink[targets])
    for i, (a, b) in enumerate(zip(origins.tolist(), targets.tolist())):
        expected = nx.dijkstra_path_length(graph, a, b if b not in zones else ("sink", b))
        assert cost[i] == pytest.approx(expected, abs=1e-12)
        assert float(weights[inc[i].indices].sum()) == pytest.approx(cost[i], abs=1e-12)


# --- with_actions
# -------------------------------------------------------------------------------------
@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    classes=st.integers(1, 5),
    resources=st.integers(1, 6),
    new=st.integers(0, 6),
    flaw=st.sampled_from(["none", "none", "none", "two", "empty", "class", "length", "columns"]),
)
def test_with_actions_is_the_implementation_befores_or_a_clean_error(
    seed, classes, resources, new, flaw
):
    """New actions in any class order: the same grown game and positions as the oracle, and where
    the oracle fails, a ValidationError (the oracle's own message when it gave one); the caller's
    matrix is left as it was."""
    gen = np.random.default_rng(seed)
    actions = [
        [
            sorted(set(gen.integers(0, resources, gen.integers(1, resources + 1)).tolist()))
            for _ in range(int(gen.integers(1, 4)))
        ]
        for _ in range(classes)
    ]
    game = CongestionGame.from_action_lists(
        PolynomialCosts(np.ones(resources), np.ones(resources)),
        actions,
        gen.integers(0, 5, classes),
    )
    dense = (gen.uniform(size=(new, resources + (flaw == "columns"))) < 0.5).astype(float)
    dense[:, 0] = np.where(dense.sum(axis=1) == 0, 1.0, dense[:, 0])  # no empty row unless asked
    if new and flaw == "two":
        dense[gen.integers(new), 0] = 2.0
    if new and flaw == "empty":
        dense[gen.integers(new)] = 0.0
    new_class = gen.integers(0, classes + (flaw == "class"), new + (flaw == "length"))
    if flaw == "class" and new:
        new_class[gen.integers(new)] = gen.choice([-1, classes])
    incidence = sp.csr_matrix(dense)
    before = (incidence.indptr.copy(), incidence.indices.copy(), incidence.data.copy())
    if flaw in ("length", "columns"):  # the oracle failed in numpy/scipy, or dropped rows silently
        message(lambda: game.with_actions(incidence, new_class))
        return
    try:
        expected = oracle_with_actions(game, incidence, new_class)
    except ValidationError as error:
        assert message(lambda: game.with_actions(incidence, new_class)) == str(error)
        return
    grown, position = game.with_actions(incidence, new_class)
    assert_same_csr(grown.incidence, expected[0].incidence)
    assert np.array_equal(grown.action_class, expected[0].action_class)
    assert np.array_equal(grown.class_start, expected[0].class_start)
    assert np.array_equal(position, expected[1]) and position.dtype == expected[1].dtype
    assert all(
        np.array_equal(a, b)
        for a, b in zip(before, (incidence.indptr, incidence.indices, incidence.data))
    )


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    classes=st.integers(1, 6),
    special=st.sampled_from([None, np.nan, np.inf]),
)
def test_class_min_cost_is_class_min_of_the_product(seed, classes, special):
    """The compiled cheapest path of some classes: numpy's class_min of scipy's product, bit for bit
    (NaN and inf weights included)."""
    gen = np.random.default_rng(seed)
    resources = int(gen.integers(1, 8))
    actions = [
        [
            sorted(set(gen.integers(0, resources, gen.integers(1, resources + 1)).tolist()))
            for _ in range(int(gen.integers(1, 5)))
        ]
        for _ in range(classes)
    ]
    game = CongestionGame.from_action_lists(
        PolynomialCosts(np.ones(resources), np.ones(resources)), actions, np.ones(classes)
    )
    weights = gen.uniform(0, 1, resources)
    if special is not None:
        weights[gen.integers(resources)] = special
    chosen = np.flatnonzero(gen.uniform(size=classes) < 0.6)
    ours = _paths.class_min_cost(
        game.incidence.indptr, game.incidence.indices, game.class_start, chosen, weights
    )
    assert np.array_equal(ours, game.class_min(game.incidence @ weights)[chosen], equal_nan=True)


def test_with_actions_leaves_a_non_canonical_matrix_of_the_caller_alone():
    """Unsorted, duplicated entries are summed in a copy (and then refused as not 0/1), not in
    place."""
    game = CongestionGame.from_action_lists(
        PolynomialCosts([1.0, 1.0], [0.0, 0.0]), [[[0], [1]]], [1.0]
    )
    unsorted = sp.csr_matrix((np.ones(2), np.array([1, 0]), np.array([0, 2])), shape=(1, 2))
    grown, _ = game.with_actions(unsorted, [0])
    assert unsorted.indices.tolist() == [1, 0]
    assert grown.incidence.toarray().tolist() == [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    twice = sp.csr_matrix((np.ones(2), np.array([1, 1]), np.array([0, 2])), shape=(1, 2))
    assert "0/1" in message(lambda: game.with_actions(twice, [0]))
    assert twice.indices.tolist() == [1, 1] and twice.data.tolist() == [1.0, 1.0]


# --- whole solvers with the oracle's column generation swapped in
# -------------------------------------
@pytest.mark.slow
@scipys_order
@needs_tntp
def test_user_equilibrium_is_the_same_with_the_columns_before(monkeypatch):
    """The path-based user equilibrium on Sioux Falls (add_shortest_paths every iteration): the same
    flows and gaps, bit for bit, as with the oracle's column generation."""
    model = load_tntp(TNTP / "SiouxFalls")
    ours = user_equilibrium(model, gap=1e-4)
    monkeypatch.setattr(RoutingGame, "new_columns", oracle_new_columns)
    theirs = user_equilibrium(model, gap=1e-4)
    assert_same_csr(ours.game.incidence, theirs.game.incidence)
    assert np.array_equal(ours.flow, theirs.flow) and np.array_equal(ours.gaps, theirs.gaps)


@pytest.mark.slow
@scipys_order
def test_mediator_is_the_same_with_the_columns_before(monkeypatch):
    """The private mediator's warm-up grows its path sets by column generation: the same outcome."""
    gen = np.random.default_rng(4)
    network = grid_network(5, 5, gen)
    ends = np.array([gen.choice(25, size=2, replace=False) for _ in range(8)])
    model = RoutingGame(network, ends[:, 0], ends[:, 1], round_players(np.full(8, 40.0)))
    mediator = PrivateMediator(rounds=200, epsilon=1.0, max_paths=3)
    ours = mediator.run(model, rng=3)
    monkeypatch.setattr(RoutingGame, "new_columns", oracle_new_columns)
    theirs = mediator.run(model, rng=3)
    assert_same_csr(ours.game.incidence, theirs.game.incidence)
    assert np.array_equal(ours.suggestions, theirs.suggestions)
    assert np.array_equal(ours.alpha, theirs.alpha) and np.array_equal(
        ours.expected_cost, theirs.expected_cost
    )


@pytest.mark.slow
def test_importing_the_routing_code_does_not_import_numba():
    """numba is imported on the first shortest path only (dpgames.games._dijkstra, _paths)."""
    code = "import sys, dpgames, dpgames.games.network, dpgames.games.assignment; print('numba' in sys.modules)"
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "False"
    )
