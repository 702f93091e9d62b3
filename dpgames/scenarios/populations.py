"""The ``[population]`` table of a scenario: agents' true types from a distribution, a list or a CSV
file.

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

from dataclasses import dataclass
from typing import cast

import numpy as np

from dpgames.agents import Beta, Discrete, Population, TypeDistribution, Uniform
from dpgames.scenarios.spec import ScenarioError, Table
from dpgames.validation import ValidationError

DISTRIBUTIONS = ("uniform", "beta", "discrete", "list", "csv")


@dataclass(frozen=True)
class PopulationSpec:
    """A validated ``[population]`` table: a fixed population (``list``, ``csv``) or ``n`` draws
    from a type distribution.

    Examples
    --------
    >>> from dpgames.scenarios.spec import Table
    >>> spec = parse_population(Table({"distribution": "uniform", "n": 3}, "<doc>"))
    >>> spec.n, spec.draw(np.random.default_rng(0)).values.round(3).tolist()
    (3, [0.637, 0.27, 0.041])
    """

    distribution: str
    n: int
    law: TypeDistribution | None = None
    fixed: Population | None = None

    def draw(self, rng: np.random.Generator | None) -> Population:
        """The agents' true types.

        Parameters
        ----------
        rng : numpy.random.Generator or None
            Where the draws come from (unused, and may be None, for a fixed population).

        Returns
        -------
        Population
            ``n`` draws from ``law``, or the fixed population itself.
        """
        if self.fixed is not None:
            return self.fixed
        # a drawn population has a law
        return Population.draw(cast(TypeDistribution, self.law), self.n, rng)


def parse_population(table: Table, low: float = 0.0, high: float = 1.0) -> PopulationSpec:
    """Validate a ``[population]`` table (nothing is drawn yet).

    Parameters
    ----------
    table : Table
        The ``[population]`` table; :meth:`Table.done` is called on it.
    low, high : float
        Every type must lie in ``[low, high]``.

    Returns
    -------
    PopulationSpec

    Raises
    ------
    ScenarioError
        A field is missing or invalid, a CSV file cannot be read, or a type lies outside ``[low,
        high]``.
    """
    kind = table.choice("distribution", DISTRIBUTIONS)
    if kind in ("list", "csv"):
        population = _fixed_population(table, kind)
        _check_range(table, "values" if kind == "list" else "path", population, low, high)
        table.done()
        return PopulationSpec(kind, int(population.values.size), fixed=population)
    n = table.integer("n", low=1)
    distribution = _type_distribution(table, kind, low, high)
    table.done()
    return PopulationSpec(kind, n, law=distribution)


def _fixed_population(table: Table, kind: str) -> Population:
    if kind == "list":
        return Population.from_list(table.numbers("values"))
    path = table.path("path")
    column = table.string("column", None)
    try:
        return Population.from_csv(path, column)
    except (
        ValidationError
    ) as exc:  # about the file's contents (its field is the file or the column)
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
            raise table.error(
                "distribution",
                f"beta types live in [0, 1], but this model needs [{low:g}, {high:g}]",
            )
        return Beta(
            table.number("a", low=0, low_open=True), table.number("b", low=0, low_open=True)
        )
    values = table.numbers("values", low=low, high=high)
    probabilities = table.numbers("probabilities", None, low=0.0)
    with table.field_path.fields():
        return Discrete(tuple(values), None if probabilities is None else tuple(probabilities))


def _check_range(table: Table, key: str, population: Population, low: float, high: float) -> None:
    try:
        population.check_within(low, high)
    except ValidationError as exc:  # its field is "values": the population's, read from ``key``
        raise ScenarioError(f"{table.where(key)}: {exc}", f"{table.prefix}{key}") from None
