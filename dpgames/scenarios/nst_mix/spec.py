"""The ``nst_mix`` kind's spec: the fields of its scenario file, read and validated (see the package
docstring for the format)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpgames.mechanisms.objective_em import Reactions
from dpgames.scenarios import budget
from dpgames.scenarios.environments import (
    FacilitySpec,
    LocatedPopulationSpec,
    parse_facility,
    parse_located_population,
)
from dpgames.scenarios.populations import PopulationSpec, parse_population
from dpgames.scenarios.spec import FieldPath, Table


@dataclass(frozen=True)
class PricingSetting:
    """The pricing environment of an ``nst_mix`` scenario (parsed values): bidders' values, the type
    grid (None: the midpoints between prices), the price set and the reactions."""

    population: PopulationSpec
    types: np.ndarray | None
    prices: str | list[float]
    alpha: float | None
    reactions: Reactions
    where: FieldPath  # the [environment] table (its ``types`` field)

    def size(self, epsilon: float | None, n: float) -> budget.EnvironmentSize:
        """Types x outcomes x reactions at ``n`` agents (``epsilon`` None: balanced), for the
        budget."""
        count = budget.price_count(epsilon, self.prices, self.alpha, n)
        return budget.EnvironmentSize(
            count if self.types is None else float(self.types.size), count, 2.0
        )


@dataclass(frozen=True)
class FacilitySetting:
    """The facility-location environment of an ``nst_mix`` scenario (parsed values)."""

    facility: FacilitySpec
    population: LocatedPopulationSpec
    reactions: Reactions

    def size(self, epsilon: float | None, n: float) -> budget.EnvironmentSize:
        """Types x outcomes x reactions (independent of eps and n), for the budget."""
        return self.facility.size()


@dataclass(frozen=True)
class NSTSpec:
    """A validated ``nst_mix`` scenario: parsed values only (see :mod:`dpgames.scenarios.nst_mix`
    for the fields). ``epsilon`` is None for ``"balanced"``; ``punishing`` None for ``"all"``.

    Examples
    --------
    >>> from dpgames.scenarios import Scenario
    >>> spec = (
    ...     Scenario.from_dict(
    ...         {
    ...             "kind": "nst_mix",
    ...             "mechanism": {"epsilon": "balanced", "alpha": 0.25},
    ...             "environment": {"type": "pricing"},
    ...             "population": {"distribution": "uniform", "n": 50},
    ...         }
    ...     )
    ...     .parse()
    ...     .spec
    ... )
    >>> spec.balanced, spec.agents, spec.environment.prices
    (True, 50, 'grid')
    """

    environment: PricingSetting | FacilitySetting
    epsilon: float | None
    punishing: list[int] | None
    scaling: list[int]
    scaling_balanced: bool
    mechanism: FieldPath  # the [mechanism] table, for errors found when the mechanisms are built

    @property
    def balanced(self) -> bool:
        """Whether eps is ``"balanced"`` (fixed from the environment's gap)."""
        return self.epsilon is None

    @property
    def agents(self) -> int:
        """The population's size."""
        return self.environment.population.n


def parse(top: Table) -> NSTSpec:
    """Read and validate an ``nst_mix`` scenario (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    top : Table

    Returns
    -------
    NSTSpec

    Raises
    ------
    ScenarioError
        A field is missing, unknown or invalid.
    """
    env_table = top.table("environment", required=True)
    kind = env_table.choice("type", ("pricing", "facility_location"))
    mech = top.table("mechanism", required=True)
    eps = mech.value(
        "epsilon",
        lambda x: (
            x == "balanced"
            or (
                isinstance(x, (int, float))
                and not isinstance(x, bool)
                and math.isfinite(x)
                and x > 0
            )
        ),
        "a number > 0 or 'balanced'",
    )
    punishing = mech.value(
        "punishing",
        lambda x: (
            x == "all"
            or (
                isinstance(x, list)
                and len(x) > 0
                and all(isinstance(e, int) and not isinstance(e, bool) and e >= 0 for e in x)
            )
        ),
        "'all' or a non-empty list of outcome indices (whole numbers >= 0)",
        "all",
    )
    population = top.table("population", required=True)
    setting: PricingSetting | FacilitySetting
    if kind == "pricing":
        setting = _parse_pricing(env_table, population, mech, eps)
    else:
        setting = FacilitySetting(
            parse_facility(env_table),
            parse_located_population(population),
            mech.choice("reactions", ("free", "forced"), "free"),
        )
    env_table.done()
    mech.done()
    scaling_table = top.table("scaling")
    scaling = scaling_table.value(
        "n",
        lambda x: (
            isinstance(x, list)
            and len(x) > 0
            and all(isinstance(e, int) and not isinstance(e, bool) and e >= 1 for e in x)
        ),
        "a non-empty list of whole numbers >= 1",
        [],
    )
    scaling_eps = scaling_table.choice("epsilon", ("same", "balanced"), "same")
    scaling_table.done()
    if (
        scaling_eps == "balanced"
        and kind == "pricing"
        and mech.data.get("alpha") is None
        and mech.data.get("prices", "grid") == "grid"
    ):
        raise scaling_table.error(
            "epsilon",
            "'balanced' needs a price set that does not depend on eps: "
            "set mechanism.alpha or mechanism.prices",
        )
    return NSTSpec(
        setting,
        None if eps == "balanced" else float(eps),
        None if punishing == "all" else punishing,
        scaling,
        eps == "balanced" or scaling_eps == "balanced",
        mech.field_path,
    )


def _parse_pricing(env_table: Table, population: Table, mech: Table, eps) -> PricingSetting:
    types = env_table.value(
        "types",
        lambda x: (
            x == "midpoints"
            or (
                isinstance(x, list)
                and len(x) > 0
                and all(
                    isinstance(e, (int, float)) and not isinstance(e, bool) and 0 <= e <= 1
                    for e in x
                )
            )
        ),
        "'midpoints' or a non-empty list of values in [0, 1]",
        "midpoints",
    )
    prices = mech.value(
        "prices",
        lambda x: x == "grid" or isinstance(x, list),
        "'grid' or a list of prices (the mix needs a finite price set)",
        "grid",
    )
    alpha = mech.number("alpha", None, low=0, high=1, low_open=True)
    reactions: Reactions = mech.choice("reactions", ("forced", "free"), "forced")
    if eps == "balanced" and prices == "grid" and alpha is None:
        raise mech.error(
            "epsilon",
            "'balanced' needs a price set that does not depend on eps: set alpha or prices",
        )
    grid = None if types == "midpoints" else np.asarray(types, dtype=float)
    return PricingSetting(
        parse_population(population), grid, prices, alpha, reactions, env_table.field_path
    )
