"""Facility location on graphs: distances against networkx, the welfare optimum against brute force,
graph builders and file reading, and input errors."""

import math

import networkx as nx
import numpy as np
import pytest

import truthfulness_oracles as oracle
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.facility_location import (
    distances,
    facility_location_environment,
    grid_graph,
    k_subsets,
    line_graph,
    read_edge_list,
)
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism


def random_weighted_graph(seed, n=9):
    g = nx.connected_watts_strogatz_graph(n, 4, 0.3, seed=seed)
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.integers(1, 6)) / 2
    return g


@pytest.mark.parametrize("seed", range(4))
def test_distances_match_networkx(seed):
    g = random_weighted_graph(seed)
    nodes = list(g.nodes)
    d = distances(g, nodes, nodes[:4])
    for i, a in enumerate(nodes):
        for j, c in enumerate(nodes[:4]):
            assert d[i, j] == pytest.approx(nx.dijkstra_path_length(g, a, c))


def test_directed_distances_run_from_the_location_to_the_facility():
    g = nx.DiGraph([(0, 1), (1, 2), (2, 0)])  # a one-way ring
    d = distances(g, [0, 1, 2], [0])
    assert d[:, 0].tolist() == [0, 2, 1]  # from 1 to 0: 1 -> 2 -> 0


@pytest.mark.parametrize("seed, k", [(0, 1), (1, 2), (2, 2), (3, 3)])
def test_welfare_optimum_against_brute_force(seed, k):
    g = random_weighted_graph(seed)
    candidates = [0, 2, 3, 5, 7, 8]
    env = facility_location_environment(g, k=k, candidates=candidates)
    agents = np.random.default_rng(seed).integers(0, 9, size=12)
    profile = env.profile(agents)
    s, welfare = env.optimum(profile)
    assert welfare == pytest.approx(
        oracle.facility_welfare_optimum(g, agents.tolist(), candidates, k)
    )
    open_nodes = env.outcomes[s].tolist()
    assert -sum(
        min(nx.dijkstra_path_length(g, a, c) for c in open_nodes) for a in agents
    ) == pytest.approx(welfare)
    assert env.n_outcomes == math.comb(len(candidates), k)


def test_sensitivity_is_at_most_the_diameter_and_equals_it_for_one_facility_anywhere():
    grid = grid_graph(3, 4)
    one = facility_location_environment(grid, k=1)
    assert one.sensitivity == nx.diameter(grid) == 5
    two = facility_location_environment(grid, k=2)
    assert 0 < two.sensitivity <= nx.diameter(grid)


def test_reactions_use_the_nearest_open_facility():
    env = facility_location_environment(line_graph(5), k=2)
    s = [o.tolist() for o in env.outcomes].index([0, 4])
    # node 2 is equidistant: the first facility
    assert env.best_reaction[:, s].tolist() == [
        0,
        0,
        0,
        1,
        1,
    ]
    assert env.best_utility[:, s].tolist() == [0, -1, -2, -1, 0]


def test_graph_builders():
    line = line_graph(4)
    assert list(line.edges) == [(0, 1), (1, 2), (2, 3)] and line.nodes[3]["pos"] == (3.0, 0.0)
    grid = grid_graph(2, 3)
    assert (
        grid.number_of_nodes() == 6
        and grid.has_edge(0, 1)
        and grid.has_edge(0, 3)
        and not grid.has_edge(2, 3)
    )
    assert grid.nodes[5]["pos"] == (2.0, 1.0)
    assert k_subsets(4, 2).tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    assert k_subsets(4, 3).tolist() == [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]


def test_edge_list_file(tmp_path):
    path = tmp_path / "roads.txt"
    path.write_text("# town roads\na b 2.5\nb c\nc a 10  # long way round\n")
    g = read_edge_list(path)
    assert (
        sorted(g.nodes) == ["a", "b", "c"]
        and g["a"]["c"]["weight"] == 10.0
        and g["b"]["c"]["weight"] == 1.0
    )
    env = facility_location_environment(g, k=1)
    assert env.types.tolist() == ["a", "b", "c"]
    assert env.best_utility[env.type_indices(["a"])[0]].tolist() == [0.0, -2.5, -3.5]
    ints = tmp_path / "ints.txt"
    ints.write_text("1 2\n2 3\n")
    assert sorted(read_edge_list(ints).nodes) == [1, 2, 3]


@pytest.mark.parametrize(
    "text, message",
    [
        ("a b c d\n", "line 1: expected 'u v' or 'u v weight'"),
        ("a b x\n", "line 1: the weight is not a number"),
        ("a b -1\n", "weight must be a finite number > 0"),
        ("# nothing\n", "no edges"),
    ],
)
def test_edge_list_errors(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_edge_list(path)


def test_input_errors():
    with pytest.raises(ValueError, match="not connected"):
        facility_location_environment(nx.Graph([(0, 1), (2, 3)]), k=1)
    with pytest.raises(ValueError, match="k: cannot open 3"):
        facility_location_environment(line_graph(4), k=3, candidates=[0, 1])
    with pytest.raises(ValueError, match="candidates: node 9"):
        facility_location_environment(line_graph(4), candidates=[0, 9])
    with pytest.raises(ValueError, match="node labels must be all integers or all strings"):
        facility_location_environment(nx.grid_2d_graph(2, 2), k=1)
    with pytest.raises(ValueError, match="too large"):
        facility_location_environment(grid_graph(40, 40), k=2)
    with pytest.raises(ValueError, match="a line needs"):
        line_graph(1)
    g = line_graph(3)
    g[0][1]["weight"] = -2.0
    with pytest.raises(ValueError, match="must be finite numbers > 0"):
        facility_location_environment(g)
    env = facility_location_environment(line_graph(4), k=2)
    with pytest.raises(ValueError, match="agent 1 has type 7"):
        env.profile([0, 7])


def test_restricted_locations_and_candidates_and_mix_on_a_grid():
    g = grid_graph(4, 4)
    env = facility_location_environment(
        g, k=2, candidates=[0, 3, 12, 15, 5], locations=[0, 1, 2, 5, 6, 15]
    )
    assert env.n_types == 6 and env.n_outcomes == 10
    gap = CommitmentMechanism(env).gap()
    # no candidate pair puts location 1 nearer a different facility than location 0
    assert gap.gamma == 0 and (gap.true_label, gap.lie_label) == (0, 1)
    wider = facility_location_environment(
        g, k=2, candidates=[0, 1, 3, 12, 15, 5], locations=[0, 1, 2, 5, 6, 15]
    )
    gamma = CommitmentMechanism(wider).gap().gamma
    assert gamma > 0 and gamma == pytest.approx(oracle.gap(wider.utility))
    em = ObjectiveExponentialMechanism(env, 0.5)
    p = em.distribution(env.profile([0, 1, 1, 15])).probabilities
    assert p.sum() == pytest.approx(1.0) and p.size == 10
