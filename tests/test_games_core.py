"""Games layer against independent oracles: closed forms (Pigou, Braess), the published Sioux Falls
equilibrium objective, brute-force enumeration of small atomic games, and TNTP error messages."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pytest

from dpgames.games.assignment import price_of_anarchy, system_optimum, user_equilibrium
from dpgames.games.atomic import UnilateralCosts, pure_regret, round_players
from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame
from dpgames.games.network import RoutingGame, RoutingNetwork
from dpgames.games.tntp import TntpError, load_tntp, read_net, read_trips

TNTP = Path(
    os.environ.get(
        "DPGAMES_TNTP_DIR", Path(__file__).resolve().parents[2] / "shared" / "data" / "tntp"
    )
)
needs_tntp = pytest.mark.skipif(
    not TNTP.is_dir(), reason=f"TNTP networks not found at {TNTP} (set DPGAMES_TNTP_DIR)"
)


def pigou(n: float = 1.0) -> CongestionGame:
    return CongestionGame.from_action_lists(
        PolynomialCosts([1.0, 0.0], [0.0, 1.0 / n], [1, 1]), [[[0], [1]]], [n]
    )


@pytest.mark.parametrize("method", ["path-based", "frank-wolfe"])
def test_pigou_closed_form(method):
    ue = user_equilibrium(pigou(), method=method, gap=1e-10)
    so = system_optimum(pigou(), method=method, gap=1e-10)
    assert ue.total_cost == pytest.approx(1.0, abs=1e-6)  # everyone on the variable road
    assert so.flow == pytest.approx([0.5, 0.5], abs=1e-4)  # min x^2 + (1 - x): x = 1/2
    assert so.total_cost == pytest.approx(0.75, abs=1e-7)
    assert price_of_anarchy(ue, so) == pytest.approx(4 / 3, abs=1e-5)


def test_polynomial_pigou_price_of_anarchy():
    """Pigou with c(x) = x^p: PoA = 1 / (1 - p (p+1)^{-(p+1)/p}) (Roughgarden 2003)."""
    p = 3
    game = CongestionGame.from_action_lists(
        PolynomialCosts([1.0, 0.0], [0.0, 1.0], [1, p]), [[[0], [1]]], [1.0]
    )
    poa = price_of_anarchy(user_equilibrium(game, gap=1e-12), system_optimum(game, gap=1e-12))
    assert poa == pytest.approx(1 / (1 - p * (p + 1) ** (-(p + 1) / p)), rel=1e-6)


@needs_tntp
@pytest.mark.parametrize(
    "method, gap, rel",
    [("path-based", 1e-9, 1e-6), pytest.param("frank-wolfe", 1e-4, 1e-3, marks=pytest.mark.slow)],
)
def test_braess_closed_form(method, gap, rel):
    """6 drivers: UE splits 2/2/2 at 92 each (total 552); SO 3/3 on the outer paths at 83 (498)."""
    game = load_tntp(TNTP / "Braess")
    ue = user_equilibrium(game, method=method, gap=gap, max_iterations=100_000)
    so = system_optimum(game, method=method, gap=gap, max_iterations=100_000)
    assert ue.total_cost == pytest.approx(552, rel=rel)
    assert so.total_cost == pytest.approx(498, rel=rel)
    # 3->4 carries 2, 1->3 and 4->2 carry 4
    assert np.sort(ue.loads)[[0, -1]] == pytest.approx([2, 4], abs=1e-2)


@needs_tntp
def test_sioux_falls_matches_published_objective():
    """Best known Beckmann objective 42.31335287 (x 1e5, flows in trips) from the TNTP README."""
    ue = user_equilibrium(load_tntp(TNTP / "SiouxFalls"), gap=1e-5)
    assert ue.relative_gap <= 1e-5
    assert ue.game.potential(ue.flow) == pytest.approx(4231335.287, rel=2e-5)


@needs_tntp
def test_frank_wolfe_gap_decreases():
    ue = user_equilibrium(load_tntp(TNTP / "SiouxFalls"), method="frank-wolfe", gap=1e-3)
    gaps = ue.gaps
    assert gaps[-1] <= 1e-3 < gaps[0]
    # FW zig-zags; its envelope falls
    blocks = [gaps[i : i + 20].min() for i in range(0, gaps.size - 20, 20)]
    assert all(b2 <= b1 for b1, b2 in itertools.pairwise(blocks))


def test_zone_nodes_are_not_passed_through(tmp_path):
    """Zone 1 -> 2 direct costs 10; through zone 3 it would cost 2, but zones (< first thru node 4)
    may not be crossed, so all traffic takes the direct link."""
    net = (
        "<NUMBER OF LINKS> 3\n<FIRST THRU NODE> 4\n<END OF METADATA>\n"
        "1 2 1 1 10 0 1 0 0 1 ;\n1 3 1 1 1 0 1 0 0 1 ;\n3 2 1 1 1 0 1 0 0 1 ;\n"
    )
    (tmp_path / "Z_net.tntp").write_text(net)
    (tmp_path / "Z_trips.tntp").write_text("<END OF METADATA>\nOrigin 1\n 2 : 5.0;\n")
    ue = user_equilibrium(load_tntp(tmp_path, "Z"))
    assert ue.total_cost == pytest.approx(50.0)


@pytest.mark.parametrize(
    "text, line, what",
    [
        ("<END OF METADATA>\n1 2 1 1 1 0.15 4 0 0 1 ;\n2 1 x 1 1 0.15 4 0 0 1 ;\n", 3, "numbers"),
        ("<END OF METADATA>\n1 2 1 1 1 0.15 4 0 0 ;\n", 2, "10 fields"),
        ("<END OF METADATA>\n~ comment\n1 2 0 1 1 0.15 4 0 0 1 ;\n", 3, "capacity"),
    ],
)
def test_bad_net_line_names_file_and_line(tmp_path, text, line, what):
    path = tmp_path / "Bad_net.tntp"
    path.write_text(text)
    with pytest.raises(TntpError, match=rf"{path}:{line}: .*{what}"):
        read_net(path)


def test_bad_trips_line_names_file_and_line(tmp_path):
    path = tmp_path / "Bad_trips.tntp"
    path.write_text("<END OF METADATA>\nOrigin 1\n  2 : 5.0;  3 : -1;\n")
    with pytest.raises(TntpError, match=rf"{path}:3: entry 2: demand must be"):
        read_trips(path)


def test_largest_remainder_rounding():
    # total 7; remainders .4 > .3 = .3 (tie: index)
    assert round_players([1.4, 2.3, 3.3]).tolist() == [
        2,
        2,
        3,
    ]
    assert round_players([0.5, 0.5]).tolist() == [1, 0]
    demand = np.random.default_rng(0).uniform(0, 10, 1000)
    players = round_players(demand)
    assert players.sum() == round(demand.sum()) and np.all(np.abs(players - demand) < 1)


def small_game() -> CongestionGame:
    costs = PolynomialCosts([1.0, 0.5, 0.2, 0.0], [0.3, 0.7, 0.4, 1.1], [2, 1, 3, 1])
    return CongestionGame.from_action_lists(
        costs, [[[0], [1, 2], [3]], [[1], [0, 2], [2, 3]]], [3, 2]
    )


def _cost(game: CongestionGame, action: int, others: list[int]) -> float:
    inc = game.incidence.toarray()
    loads = inc[others + [action]].sum(axis=0)
    return float(inc[action] @ game.costs(loads))


def test_pure_regret_matches_brute_force():
    game = small_game()
    counts = np.array([2, 1, 0, 0, 1, 1])
    got = pure_regret(game, counts)
    for a in np.flatnonzero(counts):
        others = [b for b in range(game.num_actions) for _ in range(int(counts[b] - (b == a)))]
        mine = range(
            game.class_start[game.action_class[a]], game.class_start[game.action_class[a] + 1]
        )
        best = max(_cost(game, a, others) - _cost(game, b, others) for b in mine)
        assert got.gain[a] == pytest.approx(max(best, 0.0), abs=1e-12)
        assert got.cost[a] == pytest.approx(_cost(game, a, others))


def test_unilateral_expected_costs_match_enumeration():
    game = small_game()
    strategy = np.array([0.2, 0.5, 0.3, 0.6, 0.1, 0.3])
    got = UnilateralCosts(game, game.demand)(strategy)
    classes = [list(range(game.class_start[k], game.class_start[k + 1])) for k in range(2)]
    for a in range(game.num_actions):
        k = game.action_class[a]
        owners = [0] * (3 - (k == 0)) + [1] * (2 - (k == 1))
        expected = sum(
            np.prod([strategy[b] for b in combo]) * _cost(game, a, list(combo))
            for combo in itertools.product(*[classes[c] for c in owners])
        )
        assert got[a] == pytest.approx(expected, rel=1e-12)


def test_costs_refuse_bad_input():
    with pytest.raises(ValueError, match="capacity must be > 0"):
        PolynomialCosts.bpr([1.0], [0.0])
    with pytest.raises(ValueError, match="coef"):
        PolynomialCosts([1.0, 2.0], [1.0, -1.0])


@pytest.mark.parametrize(
    "method, gap", [("path-based", 1e-9), pytest.param("frank-wolfe", 1e-4, marks=pytest.mark.slow)]
)
def test_routing_game_from_a_networkx_digraph_braess(method, gap):
    """The textbook Braess network (unit demand): c(s,v) = x, c(w,t) = x, c(v,t) = c(s,w) = 1,
    c(v,w) = 0. UE: everyone on s-v-w-t, total cost 2; SO: half on each outer path, total 3/2 (PoA
    4/3). Frank-Wolfe's gap falls as 1/k here (it zigzags towards the optimum's interior; 1e-9 is
    out of reach in 100,000 iterations): its gap of 1e-4 (about 2,500 iterations) bounds the
    optimum's relative error (about a third of it here) inside the 1e-4 asserted."""
    import networkx as nx

    graph = nx.DiGraph()
    for u, v, free, coef in [
        ("s", "v", 0, 1),
        ("v", "t", 1, 0),
        ("s", "w", 1, 0),
        ("w", "t", 0, 1),
        ("v", "w", 0, 0),
    ]:
        graph.add_edge(u, v, free=float(free), coef=float(coef), power=1.0)
    game = RoutingGame(
        RoutingNetwork.from_digraph(graph), np.array(["s"]), np.array(["t"]), np.array([1.0])
    )
    ue = user_equilibrium(game, method=method, gap=gap, max_iterations=100_000)
    so = system_optimum(game, method=method, gap=gap, max_iterations=100_000)
    assert ue.relative_gap <= gap and so.relative_gap <= gap
    assert ue.total_cost == pytest.approx(2.0, rel=1e-4)
    assert so.total_cost == pytest.approx(1.5, rel=1e-4)
    with pytest.raises(ValueError, match="needs 'free_flow_time' and 'capacity'"):
        RoutingNetwork.from_digraph(nx.DiGraph([("a", "b")]))


@pytest.mark.parametrize("parallel", [False, True])
def test_shortest_paths_match_networkx(parallel):
    """Costs equal networkx's Dijkstra (the oracle; parallel links: the cheapest counts) and every
    path row is a walk from the origin to the destination whose links add up to that cost, with and
    without parallel links (whose graph structure the network builds once when there are none)."""
    import networkx as nx

    gen = np.random.default_rng(3)
    n = 12
    ends = [(a, b) for a in range(n) for b in range(n) if a != b and gen.uniform() < 0.3]
    if parallel:
        ends += ends[::3]
    tail, head = np.array(ends).T
    net = RoutingNetwork(
        np.arange(n),
        tail,
        head,
        PolynomialCosts(np.ones(len(ends)), np.zeros(len(ends))),
        np.zeros(0, int),
    )
    oracle = nx.MultiDiGraph()
    for _ in range(3):  # new weights each time: the cached structure must follow them
        # some links free
        weights = gen.uniform(0, 2, len(ends)) * (gen.uniform(size=len(ends)) > 0.1)
        for i, (a, b) in enumerate(ends):
            oracle.add_edge(a, b, key=i, weight=weights[i])  # (re)sets the weight of link i
        lengths = dict(
            nx.all_pairs_dijkstra_path_length(
                oracle, weight=lambda u, v, d: min(e["weight"] for e in d.values())
            )
        )
        pairs = [(a, b) for a in range(n) for b in range(n) if a != b and b in lengths[a]]
        origins, sinks = np.array(pairs).T
        cost, inc = net.shortest_paths(weights, origins, sinks)
        assert cost == pytest.approx([lengths[a][b] for a, b in pairs], abs=1e-12)
        for i, (a, b) in enumerate(pairs):
            links = inc[i].indices
            assert inc[i].data.tolist() == [1.0] * links.size
            assert float(weights[links].sum()) == pytest.approx(cost[i], abs=1e-12)
            out_degree = np.bincount(tail[links], minlength=n) - np.bincount(
                head[links], minlength=n
            )
            expected = np.zeros(n, int)
            expected[a], expected[b] = 1, -1
            assert np.array_equal(out_degree, expected)  # a simple walk a -> b
