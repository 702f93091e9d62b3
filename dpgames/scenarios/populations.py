"""The ``[population]`` table of a scenario: agents' true types from a distribution, a list or a CSV file.

```toml
[population]
distribution = "uniform"   # uniform | beta | discrete | list | csv
n = 1000                   # uniform, beta, discrete: number of agents
low = 0.0                  # uniform only
high = 1.0
# a = 2.0, b = 5.0                       (beta)
# values = [0.2, 0.5, 0.9]               (discrete: support; list: every agent's type)
# probabilities = [0.5, 0.3, 0.2]        (discrete, optional: uniform if absent)
# path = "bids.csv", column = "value"    (csv; column optional; path relative to the scenario file's
#                                        folder, and confined to it or a --data-dir: see Table.path)
```
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpgames.agents import Beta, Discrete, Population, TypeDistribution, Uniform
from dpgames.scenarios.spec import ScenarioError, Table

DISTRIBUTIONS = ("uniform", "beta", "discrete", "list", "csv")

PopulationFactory = Callable[[np.random.Generator], Population]


def parse_population(table: Table, low: float = 0.0, high: float = 1.0) -> PopulationFactory:
    """Validate a ``[population]`` table now; return a function drawing the population from a Generator.

    Types must lie in ``[low, high]``."""
    kind = table.choice("distribution", DISTRIBUTIONS)
    if kind in ("list", "csv"):
        population = _fixed_population(table, kind)
        _check_range(table, "values" if kind == "list" else "path", population, low, high)
        table.done()
        return lambda rng: population
    n = table.integer("n", low=1)
    distribution = _type_distribution(table, kind, low, high)
    table.done()
    return lambda rng: Population.draw(distribution, n, rng)


def _fixed_population(table: Table, kind: str) -> Population:
    if kind == "list":
        return Population.from_list(table.numbers("values"))
    path = table.path("path")
    column = table.string("column", None)
    try:
        return Population.from_csv(path, column)
    except ValueError as exc:
        raise table.error("path", str(exc)) from None


def _type_distribution(table: Table, kind: str, low: float, high: float) -> TypeDistribution:
    if kind == "uniform":
        a = table.number("low", low, low=low, high=high)
        b = table.number("high", high, low=low, high=high)
        if a > b:
            raise table.error("low", f"must be <= high ({b:g}), got {a:g}")
        return Uniform(a, b)
    if kind == "beta":
        if (low, high) != (0.0, 1.0):
            raise table.error("distribution", f"beta types live in [0, 1], but this model needs [{low:g}, {high:g}]")
        return Beta(table.number("a", low=0, low_open=True), table.number("b", low=0, low_open=True))
    values = table.numbers("values", low=low, high=high)
    probabilities = table.numbers("probabilities", None, low=0.0)
    try:
        return Discrete(tuple(values), None if probabilities is None else tuple(probabilities))
    except ValueError as exc:
        raise table.error("probabilities", str(exc)) from None


def _check_range(table: Table, key: str, population: Population, low: float, high: float) -> None:
    try:
        population.check_within(low, high)
    except ValueError as exc:
        raise ScenarioError(f"{table.where(key)}: {exc}") from None
