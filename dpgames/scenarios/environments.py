"""The ``[environment]`` and ``[population]`` tables of the truthfulness scenarios (facility location and
public projects; pricing reuses the auction's tables).

```toml
[environment]
type = "facility_location"
graph = "grid"              # "line" (nodes = 30) | "grid" (rows, cols) | "edges" (path = "roads.txt")
rows = 6
cols = 6
k = 2                       # facilities to open
candidates = "all"          # or a list of nodes where a facility may open
locations = "all"           # or the list of nodes agents may live at (the type space)

[population]                # agents' private locations
distribution = "uniform"    # "uniform" over the locations | "weights" (one per location) | "list"
n = 1000
# weights = [...]           # "weights": relative frequency of each location, in the order of `locations`
# values = [0, 0, 5, 7]     # "list": every agent's node

[environment]
type = "public_project"
outcomes = ["nothing", "park", "library"]
cost = [0, 30, 50]
[environment.valuations]    # one row per kind of agent: its value for each alternative
family = [0, 1.0, 0.2]
[population]
counts = { family = 60 }    # agents of each kind
```

Parsing validates every field; nothing heavy (shortest paths, outcome sets) runs until ``build``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import networkx as nx
import numpy as np

from dpgames.mechanisms.environment import Environment
from dpgames.mechanisms.facility_location import facility_location_environment, grid_graph, line_graph, read_edge_list
from dpgames.mechanisms.public_project import public_project_environment
from dpgames.scenarios import budget
from dpgames.scenarios.spec import ScenarioError, Table

GRAPHS = ("line", "grid", "edges")


def _node_or_all(table: Table, key: str) -> list | None:
    nodes = table.value(key, lambda x: x == "all" or (isinstance(x, list) and len(x) > 0 and all(
        isinstance(e, (int, str)) and not isinstance(e, bool) for e in x)),
        "'all' or a non-empty list of nodes (integers or strings)", "all")
    return None if nodes == "all" else nodes


@dataclass(frozen=True)
class FacilitySpec:
    """A validated facility-location environment, built on demand."""

    make_graph: Callable[[], nx.Graph]
    k: int
    candidates: list | None
    locations: list | None
    table: Table
    nodes: int | None = None     # the graph's nodes when known before building it (line, grid)

    def size(self) -> budget.EnvironmentSize:
        """Types (locations) x outcomes (k-subsets of the candidates) x reactions (k), for the budget."""
        nodes = budget.size(self.nodes or 0)
        candidates = float(len(self.candidates)) if self.candidates is not None else nodes
        types = float(len(self.locations)) if self.locations is not None else nodes
        k = budget.size(self.k)
        return budget.EnvironmentSize(types, budget.combinations(candidates, k), k, nodes)

    def build(self) -> Environment:
        try:
            return facility_location_environment(self.make_graph(), self.k, self.candidates, self.locations)
        except ValueError as exc:
            field = getattr(exc, "field", "")
            if field in ("k", "candidates", "locations", "graph"):
                raise self.table.error(field, exc.reason) from None
            raise self.table.error("candidates", str(exc)) from None


def parse_facility(table: Table) -> FacilitySpec:
    graph = table.choice("graph", GRAPHS)
    nodes = None
    if graph == "line":
        nodes = table.integer("nodes", low=2)
        make = lambda: line_graph(nodes)  # noqa: E731
    elif graph == "grid":
        rows, cols = table.integer("rows", low=1), table.integer("cols", low=1)
        if rows * cols < 2:
            raise table.error("rows", "a grid needs at least 2 nodes")
        nodes = rows * cols
        make = lambda: grid_graph(rows, cols)  # noqa: E731
    else:
        path = table.path("path")

        def make() -> nx.Graph:
            try:
                return read_edge_list(path)
            except ValueError as exc:
                raise table.error("path", str(exc)) from None
    k = table.integer("k", 1, low=1)
    return FacilitySpec(make, k, _node_or_all(table, "candidates"), _node_or_all(table, "locations"), table, nodes)


#: Draws the agents' type labels: (environment, generator, number of agents or None) -> labels.
LocatedPopulation = Callable[[Environment, np.random.Generator, int | None], np.ndarray]


def parse_located_population(table: Table) -> tuple[LocatedPopulation, int | None]:
    """Agents' private locations; returns the sampler and the default n (``None`` for a fixed list)."""
    kind = table.choice("distribution", ("uniform", "weights", "list"))
    if kind == "list":
        values = table.value("values", lambda x: isinstance(x, list) and len(x) > 0 and all(
            isinstance(e, (int, str)) and not isinstance(e, bool) for e in x), "a non-empty list of nodes")
        table.done()
        where = table.where("values")

        def fixed(env, rng, n):
            labels = np.asarray(values)
            if n is not None:   # resampled from the list's empirical distribution
                labels = rng.choice(labels, size=n)
            return _checked(env, labels, where)
        return fixed, len(values)
    n_default = table.integer("n", low=1)
    weights = table.numbers("weights", low=0.0) if kind == "weights" else None  # required for "weights"
    if weights is not None and not max(weights) > 0:
        raise table.error("weights", "must not all be zero")
    table.done()
    where = table.where("weights")

    def draw(env, rng, n):
        size = n_default if n is None else n
        if weights is None:
            return env.types[rng.integers(env.n_types, size=size)]
        if len(weights) != env.n_types:
            raise ScenarioError(f"{where}: {len(weights)} weights for {env.n_types} locations")
        p = np.asarray(weights) / max(weights)  # scaled first: a sum of huge weights must not overflow
        p /= p.sum()
        return env.types[rng.choice(env.n_types, size=size, p=p)]
    return draw, n_default


def _checked(env: Environment, labels: np.ndarray, where: str) -> np.ndarray:
    try:
        env.type_indices(labels)
    except ValueError as exc:
        raise ScenarioError(f"{where}: {exc}") from None
    return labels


@dataclass(frozen=True)
class PublicProjectSpec:
    environment: Environment
    counts: dict[str, int]

    def build(self) -> Environment:
        return self.environment

    def size(self) -> budget.EnvironmentSize:
        env = self.environment
        return budget.EnvironmentSize(float(env.n_types), float(env.n_outcomes), float(env.n_reactions))

    def population(self) -> np.ndarray:
        return np.repeat(np.array(list(self.counts)), list(self.counts.values()))


def parse_public_project(env_table: Table, population: Table) -> PublicProjectSpec:
    outcomes = env_table.value("outcomes", lambda x: isinstance(x, list) and len(x) >= 2 and all(
        isinstance(e, str) and e for e in x), "a list of at least 2 alternative names")
    cost = env_table.numbers("cost", [0.0] * len(outcomes))
    if len(cost) != len(outcomes):
        raise env_table.error("cost", f"need {len(outcomes)} numbers, one per alternative (got {len(cost)})")
    vals = env_table.table("valuations", required=True)
    rows = {}
    for name in list(vals.data):
        row = vals.numbers(name)
        if len(row) != len(outcomes):
            raise vals.error(name, f"need {len(outcomes)} values, one per alternative (got {len(row)})")
        rows[name] = row
    vals.done()
    if not rows:
        raise env_table.error("valuations", "need at least one kind of agent")
    counts_table = population.table("counts", required=True)
    counts = {name: counts_table.integer(name, low=0) for name in list(counts_table.data)}
    counts_table.done()
    population.done()
    unknown = [c for c in counts if c not in rows]
    if unknown:
        raise counts_table.error(unknown[0], f"no such kind of agent (kinds: {', '.join(rows)})")
    if sum(counts.values()) == 0:
        raise population.error("counts", "need at least one agent")
    env = public_project_environment(list(rows.values()), outcomes, list(rows), cost)
    return PublicProjectSpec(env, {k: v for k, v in counts.items() if v > 0})
