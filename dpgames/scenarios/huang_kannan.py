"""Scenario kind ``huang_kannan``: the exponential mechanism with payments, exactly truthful and IR.

```toml
kind = "huang_kannan"
[environment]
type = "facility_location"  # or "public_project" (see dpgames.scenarios.environments)
[population]                # agents' locations, or counts of each kind of agent for a public project
[mechanism]
beta = 1.0                  # > 0: the law is ~ exp(beta * welfare); larger = closer to VCG, less private
```
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpgames.analysis.truthfulness import truthfulness_audit, type_space_affordable
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.huang_kannan import HuangKannan
from dpgames.scenarios import budget
from dpgames.scenarios.environments import (
    FacilitySpec,
    LocatedPopulationSpec,
    PublicProjectSpec,
    parse_facility,
    parse_located_population,
    parse_public_project,
)
from dpgames.scenarios.result import Column, Metrics, Result
from dpgames.scenarios.spec import Table
from dpgames.validation import ValidationError

DESCRIPTION = "The exponential mechanism with Huang-Kannan payments: exactly truthful and individually rational, audited exactly"

MAX_TABLE_ROWS = 2000


@dataclass(frozen=True)
class HuangKannanSpec:
    """A validated ``huang_kannan`` scenario (parsed values): the environment, who the agents are
    (located agents drawn by ``population``; a public project's agents are its ``counts``) and beta.

    Examples
    --------
    >>> from dpgames.scenarios import Scenario
    >>> spec = Scenario.from_dict({"kind": "huang_kannan", "mechanism": {"beta": 1.0},
    ...     "environment": {"type": "public_project", "outcomes": ["none", "park"], "cost": [0, 3],
    ...                     "valuations": {"fan": [0, 1.0]}},
    ...     "population": {"counts": {"fan": 5}}}).parse().spec
    >>> spec.agents, spec.beta
    (5, 1.0)
    """

    environment: FacilitySpec | PublicProjectSpec
    population: LocatedPopulationSpec | None
    beta: float

    @property
    def agents(self) -> int:
        """The number of agents."""
        who = self._agents_from()
        return who.n if isinstance(who, LocatedPopulationSpec) else sum(who.counts.values())

    def _agents_from(self) -> LocatedPopulationSpec | PublicProjectSpec:
        """Where the agents come from: the located population, else the public project's counts."""
        if self.population is not None:
            return self.population
        if isinstance(self.environment, PublicProjectSpec):
            return self.environment
        raise ValidationError("population", "is required for a facility-location environment "
                                            "(a LocatedPopulationSpec)")


def estimate(spec: HuangKannanSpec) -> list[budget.Estimate]:
    """Peak memory and work (see :mod:`dpgames.scenarios.budget`): the environment, its audits and the
    payments (:data:`PAYMENT_ROW_COPIES` arrays of classes x (outcomes + types)).

    Parameters
    ----------
    spec : HuangKannanSpec

    Returns
    -------
    list of Estimate
    """
    size, who = spec.environment.size(), spec._agents_from()
    if isinstance(who, PublicProjectSpec):      # one class per kind of agent counted
        fewest = most = float(len(who.counts))
    else:
        fewest, most = budget.class_range(who.distribution, who.n, size.types, who.values, who.weights)
    return budget.environment_estimates(size, [spec.agents], "huang_kannan", row_copies=PAYMENT_ROW_COPIES,
                                        fewest=fewest, most=most)


#: Arrays of classes x (outcomes + types) held at once by the audit at the realised types and the payments
#: (laws without each class, their log-MGFs; measured about 13 at the peak on an 8 x 8 grid, 2 facilities).
PAYMENT_ROW_COPIES = 16.0


def parse(top: Table) -> HuangKannanSpec:
    """Read and validate a ``huang_kannan`` scenario (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    top : Table

    Returns
    -------
    HuangKannanSpec

    Raises
    ------
    ScenarioError
        A field is missing, unknown or invalid.
    """
    env_table = top.table("environment", required=True)
    kind = env_table.choice("type", ("facility_location", "public_project"))
    population = top.table("population", required=True)
    environment: FacilitySpec | PublicProjectSpec
    located: LocatedPopulationSpec | None
    if kind == "facility_location":
        environment, located = parse_facility(env_table), parse_located_population(population)
    else:
        environment, located = parse_public_project(env_table, population), None
    env_table.done()
    mech = top.table("mechanism", required=True)
    beta = mech.number("beta", low=0, low_open=True)
    mech.done()
    return HuangKannanSpec(environment, located, beta)


def run(spec: HuangKannanSpec, seed: np.random.SeedSequence) -> Result:
    """Run the scenario (see :mod:`dpgames.scenarios.kind`): the exact audits of the mechanism with
    payments at the drawn profile.

    Parameters
    ----------
    spec : HuangKannanSpec
    seed : numpy.random.SeedSequence

    Returns
    -------
    Result
        Metrics, and the ``classes`` and ``outcome_law`` tables.
    """
    (population_seed,) = seed.spawn(1)
    env = spec.environment.build()
    who = spec._agents_from()
    if isinstance(who, LocatedPopulationSpec):
        labels = who.draw(env, np.random.default_rng(population_seed))
    else:
        labels = who.population()
    profile = env.profile(labels)
    hk = HuangKannan(env, spec.beta)
    audit = truthfulness_audit(hk, profile)
    payments = hk.payments(profile)
    utilities = audit.truthful_utility
    best, optimum = env.optimum(profile)
    welfare = hk.expected_objective(profile)
    worst = audit.worst_case
    m = Metrics()
    m.put("environment", env.name, "environment")
    m.put("n", profile.n, "agents")
    m.put("types", env.n_types, "types (every type is tried as a lie)")
    m.put("outcomes", env.n_outcomes, "outcomes |O|")
    m.put("beta", hk.beta, "beta (law ~ exp(beta * welfare))")
    m.put("epsilon", hk.guarantee.epsilon, "the outcome is eps-DP, eps = 2 beta Delta (payments are not)")
    m.put("optimum", optimum, f"optimal welfare (best outcome: {env.outcome_label(best)})")
    m.put("expected_welfare", welfare, "E[welfare], Huang-Kannan (exact)")
    m.put("loss_per_agent", (optimum - welfare) / profile.n, "welfare loss per agent")
    m.put("revenue", hk.revenue(profile), "total payments")
    m.put("max_gain", audit.max_gain, "largest gain from lying (exact; <= 0: truthful)")
    m.put("max_gain_by", f"agent {worst['agent']} (type {worst['true_type']!r}) reporting {worst['lie']!r}",
          "  attained by" if audit.max_gain > audit.rounding_slack else "  the least costly lie")
    tol = hk.rounding_tolerance(profile)
    m.put("truthful", audit.is_truthful(tol), "exactly truthful (every agent x every lie; up to float rounding)")
    if type_space_affordable(env, profile):
        every = truthfulness_audit(hk, profile, "all")
        m.put("max_gain_all_types", every.max_gain, "largest gain over every agent, true type and lie (exact)")
        m.put("truthful_all_types", every.is_truthful(tol), "exactly truthful for every true type (dominant strategy)")
    m.put("min_utility", float(utilities.min()), "smallest truthful utility (>= 0: individually rational)")
    m.put("individually_rational", bool(utilities.min() >= -(audit.rounding_slack + tol)), "individually rational")
    order = np.argsort(-profile.class_sizes, kind="stable")[:MAX_TABLE_ROWS]
    classes = profile.classes[order]
    tables: dict[str, dict[str, Column]] = {
        "classes": {"type": [env.type_label(int(t)) for t in classes], "agents": profile.class_sizes[order],
                    "payment": payments[order], "utility": utilities[order], "best_gain": audit.best_gain[order]},
        "outcome_law": _law_table(env, hk, profile),
    }
    return m.result("huang_kannan", tables, {"guarantee": str(hk.guarantee)})


def _law_table(env: Environment, hk: HuangKannan, profile: Profile) -> dict[str, Column]:
    p = hk.distribution(profile).probabilities
    keep = np.sort(np.argsort(-p, kind="stable")[:MAX_TABLE_ROWS])
    return {"outcome": [env.outcome_label(int(s)) for s in keep], "probability": p[keep],
            "welfare": env.objective_values(profile)[keep]}
