"""The ``[environment]`` and ``[population]`` tables of the truthfulness scenarios (facility
location and public projects; pricing reuses the auction's tables).

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

from dataclasses import dataclass
from pathlib import Path
from typing import cast

import networkx as nx
import numpy as np

from dpgames.mechanisms.environment import Environment
from dpgames.mechanisms.facility_location import (
    facility_location_environment,
    grid_graph,
    line_graph,
    read_edge_list,
)
from dpgames.mechanisms.public_project import public_project_environment
from dpgames.scenarios import budget
from dpgames.scenarios.spec import FieldPath, ScenarioError, Table
from dpgames.validation import ValidationError

GRAPHS = ("line", "grid", "edges")


def _node_or_all(table: Table, key: str) -> list | None:
    nodes = table.value(
        key,
        lambda x: (
            x == "all"
            or (
                isinstance(x, list)
                and len(x) > 0
                and all(isinstance(e, (int, str)) and not isinstance(e, bool) for e in x)
            )
        ),
        "'all' or a non-empty list of nodes (integers or strings)",
        "all",
    )
    return None if nodes == "all" else nodes


@dataclass(frozen=True)
class FacilitySpec:
    """A validated facility-location environment (parsed values), built on demand by :meth:`build`.

    Examples
    --------
    >>> spec = parse_facility(Table({"graph": "line", "nodes": 5, "k": 1}, "<doc>"))
    >>> env = spec.build()
    >>> env.n_types, env.n_outcomes
    (5, 5)
    """

    graph: str  # "line" | "grid" | "edges"
    k: int
    candidates: list | None
    locations: list | None
    where: FieldPath
    nodes: int | None = None  # the graph's nodes when known before building it (line, grid)
    rows: int | None = None  # grid
    cols: int | None = None  # grid
    path: Path | None = None  # edges: the validated edge-list file

    def size(self) -> budget.EnvironmentSize:
        """Types (locations) x outcomes (k-subsets of the candidates) x reactions (k), for the
        budget."""
        nodes = budget.size(self.nodes or 0)
        candidates = float(len(self.candidates)) if self.candidates is not None else nodes
        types = float(len(self.locations)) if self.locations is not None else nodes
        k = budget.size(self.k)
        return budget.EnvironmentSize(types, budget.combinations(candidates, k), k, nodes)

    def make_graph(self) -> nx.Graph:
        """The graph (an edge-list file is read now).

        Returns
        -------
        networkx.Graph

        Raises
        ------
        ScenarioError
            The edge-list file is malformed (naming the field ``path``).
        """
        # the parser sets nodes for a line, rows and cols for a grid, path for an edge list
        if self.graph == "line":
            return line_graph(cast(int, self.nodes))
        if self.graph == "grid":
            return grid_graph(cast(int, self.rows), cast(int, self.cols))
        try:
            return read_edge_list(cast(Path, self.path))
        except ValidationError as exc:  # its field is the file itself, read from 'path'
            raise self.where.error("path", str(exc)) from None

    def build(self) -> Environment:
        """The facility-location environment (shortest paths, outcome sets: the heavy part).

        Returns
        -------
        Environment

        Raises
        ------
        ScenarioError
            ``k``, ``candidates`` or ``locations`` do not fit the graph.
        """
        with self.where.fields():
            return facility_location_environment(
                self.make_graph(), self.k, self.candidates, self.locations
            )


def parse_facility(table: Table) -> FacilitySpec:
    """Validate a facility-location ``[environment]`` table (``type`` already read; ``done`` is left
    to the caller).

    Parameters
    ----------
    table : Table

    Returns
    -------
    FacilitySpec

    Raises
    ------
    ScenarioError
        A missing or invalid field.
    """
    graph = table.choice("graph", GRAPHS)
    shape: dict = {}
    if graph == "line":
        shape["nodes"] = table.integer("nodes", low=2)
    elif graph == "grid":
        rows, cols = table.integer("rows", low=1), table.integer("cols", low=1)
        if rows * cols < 2:
            raise table.error("rows", "a grid needs at least 2 nodes")
        shape = {"nodes": rows * cols, "rows": rows, "cols": cols}
    else:
        shape["path"] = table.path("path")
    k = table.integer("k", 1, low=1)
    return FacilitySpec(
        graph,
        k,
        _node_or_all(table, "candidates"),
        _node_or_all(table, "locations"),
        table.field_path,
        **shape,
    )


@dataclass(frozen=True)
class LocatedPopulationSpec:
    """Agents' private locations (parsed values): uniform over the locations, by ``weights``, or a
    fixed ``values`` list; ``n`` agents by default."""

    distribution: str  # "uniform" | "weights" | "list"
    n: int
    where: FieldPath
    values: list | None = None
    weights: list[float] | None = None

    def draw(self, env: Environment, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        """The agents' type labels in ``env``.

        Parameters
        ----------
        env : Environment
        rng : numpy.random.Generator
        n : int, optional
            Agents to draw instead of the default (a fixed list is then resampled from its empirical
            distribution).

        Returns
        -------
        numpy.ndarray
            One type label (a node) per agent.

        Raises
        ------
        ScenarioError
            A listed node is not a location of ``env``, or the weights do not match its locations.
        """
        if self.distribution == "list":
            labels = np.asarray(self.values)
            if n is not None:  # resampled from the list's empirical distribution
                labels = rng.choice(labels, size=n)
            try:
                env.type_indices(labels)
            except ValidationError as exc:  # its field is the labels: this table's 'values'
                raise ScenarioError(
                    f"{self.where.where('values')}: {exc}", f"{self.where.prefix}values"
                ) from None
            return labels
        size = self.n if n is None else n
        if self.weights is None:
            return env.types[rng.integers(env.n_types, size=size)]
        if len(self.weights) != env.n_types:
            raise ScenarioError(
                f"{self.where.where('weights')}: {len(self.weights)} weights for "
                f"{env.n_types} locations"
            )
        # scaled first: a sum of huge weights must not overflow
        p = np.asarray(self.weights) / max(self.weights)
        p /= p.sum()
        return env.types[rng.choice(env.n_types, size=size, p=p)]


def parse_located_population(table: Table) -> LocatedPopulationSpec:
    """Validate a ``[population]`` table of agents' private locations (``done`` is called).

    Parameters
    ----------
    table : Table

    Returns
    -------
    LocatedPopulationSpec
        Its ``n`` is the default number of agents (the list's length for a fixed list).

    Raises
    ------
    ScenarioError
        A missing or invalid field.
    """
    kind = table.choice("distribution", ("uniform", "weights", "list"))
    if kind == "list":
        values = table.value(
            "values",
            lambda x: (
                isinstance(x, list)
                and len(x) > 0
                and all(isinstance(e, (int, str)) and not isinstance(e, bool) for e in x)
            ),
            "a non-empty list of nodes",
        )
        table.done()
        return LocatedPopulationSpec(kind, len(values), table.field_path, values=values)
    n_default = table.integer("n", low=1)
    # required for "weights"
    weights = table.numbers("weights", low=0.0) if kind == "weights" else None
    if weights is not None and not max(weights) > 0:
        raise table.error("weights", "must not all be zero")
    table.done()
    return LocatedPopulationSpec(kind, n_default, table.field_path, weights=weights)


@dataclass(frozen=True)
class PublicProjectSpec:
    """A validated public project: its (small) environment, built when parsed, and how many agents
    of each kind there are."""

    environment: Environment
    counts: dict[str, int]

    def build(self) -> Environment:
        """The environment."""
        return self.environment

    def size(self) -> budget.EnvironmentSize:
        """Types x outcomes x reactions, for the budget."""
        env = self.environment
        return budget.EnvironmentSize(
            float(env.n_types), float(env.n_outcomes), float(env.n_reactions)
        )

    def population(self) -> np.ndarray:
        """Every agent's kind (type label), kind by kind."""
        return np.repeat(np.array(list(self.counts)), list(self.counts.values()))


def parse_public_project(env_table: Table, population: Table) -> PublicProjectSpec:
    """Validate a public project: ``[environment]`` (``outcomes``, ``cost``,
    ``[environment.valuations]``) and ``[population]`` (``counts`` of each kind of agent); ``done``
    is called on the population.

    Parameters
    ----------
    env_table, population : Table

    Returns
    -------
    PublicProjectSpec

    Raises
    ------
    ScenarioError
        A missing or invalid field, an unknown kind of agent, or no agent at all.
    """
    outcomes = env_table.value(
        "outcomes",
        lambda x: isinstance(x, list) and len(x) >= 2 and all(isinstance(e, str) and e for e in x),
        "a list of at least 2 alternative names",
    )
    cost = env_table.numbers("cost", [0.0] * len(outcomes))
    if len(cost) != len(outcomes):
        raise env_table.error(
            "cost", f"need {len(outcomes)} numbers, one per alternative (got {len(cost)})"
        )
    vals = env_table.table("valuations", required=True)
    rows = {}
    for name in list(vals.data):
        row = vals.numbers(name)
        if len(row) != len(outcomes):
            raise vals.error(
                name, f"need {len(outcomes)} values, one per alternative (got {len(row)})"
            )
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
