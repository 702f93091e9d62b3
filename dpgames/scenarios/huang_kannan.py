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

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpgames.analysis.truthfulness import truthfulness_audit, type_space_affordable
from dpgames.mechanisms.environment import Environment
from dpgames.mechanisms.huang_kannan import HuangKannan
from dpgames.scenarios import budget
from dpgames.scenarios.environments import parse_facility, parse_located_population, parse_public_project
from dpgames.scenarios.result import Result
from dpgames.scenarios.spec import Table

DESCRIPTION = "The exponential mechanism with Huang-Kannan payments: exactly truthful and individually rational, audited exactly"

MAX_TABLE_ROWS = 2000


@dataclass(frozen=True)
class HuangKannanSpec:
    build: Callable[[], Environment]
    population: Callable[[Environment, np.random.Generator], np.ndarray]
    beta: float
    agents: int = 0                                # the population's size (for the budget)
    size: budget.EnvironmentSize | None = None     # the environment's sizes (for the budget)


def estimate(spec: HuangKannanSpec) -> list[budget.Estimate]:
    """Peak memory and work (see :mod:`dpgames.scenarios.budget`): the environment and its audits."""
    return [] if spec.size is None else budget.environment_estimates(spec.size, [spec.agents], "huang_kannan")


def parse(top: Table) -> HuangKannanSpec:
    env_table = top.table("environment", required=True)
    kind = env_table.choice("type", ("facility_location", "public_project"))
    population = top.table("population", required=True)
    if kind == "facility_location":
        facility = parse_facility(env_table)
        draw, agents = parse_located_population(population)
        build, sample, size = facility.build, (lambda env, rng: draw(env, rng, None)), facility.size()
    else:
        project = parse_public_project(env_table, population)
        build, sample, size = project.build, (lambda env, rng: project.population()), project.size()
        agents = sum(project.counts.values())
    env_table.done()
    mech = top.table("mechanism", required=True)
    beta = mech.number("beta", low=0, low_open=True)
    mech.done()
    return HuangKannanSpec(build, sample, beta, agents, size)


def run(spec: HuangKannanSpec, seed: np.random.SeedSequence) -> Result:
    (population_seed,) = seed.spawn(1)
    env = spec.build()
    profile = env.profile(spec.population(env, np.random.default_rng(population_seed)))
    hk = HuangKannan(env, spec.beta)
    audit = truthfulness_audit(hk, profile)
    payments = hk.payments(profile)
    utilities = audit.truthful_utility
    best, optimum = env.optimum(profile)
    welfare = hk.expected_objective(profile)
    worst = audit.worst_case
    m, labels = {}, {}

    def put(key, value, label):
        m[key], labels[key] = value, label

    put("environment", env.name, "environment")
    put("n", profile.n, "agents")
    put("types", env.n_types, "types (every type is tried as a lie)")
    put("outcomes", env.n_outcomes, "outcomes |O|")
    put("beta", hk.beta, "beta (law ~ exp(beta * welfare))")
    put("epsilon", hk.guarantee.epsilon, "the outcome is eps-DP, eps = 2 beta Delta (payments are not)")
    put("optimum", optimum, f"optimal welfare (best outcome: {env.outcome_label(best)})")
    put("expected_welfare", welfare, "E[welfare], Huang-Kannan (exact)")
    put("loss_per_agent", (optimum - welfare) / profile.n, "welfare loss per agent")
    put("revenue", hk.revenue(profile), "total payments")
    put("max_gain", audit.max_gain, "largest gain from lying (exact; <= 0: truthful)")
    put("max_gain_by", f"agent {worst['agent']} (type {worst['true_type']!r}) reporting {worst['lie']!r}",
        "  attained by" if worst["gain"] > 0 else "  the least costly lie")
    tol = hk.rounding_tolerance(profile)
    put("truthful", audit.is_truthful(tol), "exactly truthful (every agent x every lie; up to float rounding)")
    if type_space_affordable(env, profile):
        every = truthfulness_audit(hk, profile, "all")
        put("max_gain_all_types", every.max_gain, "largest gain over every agent, true type and lie (exact)")
        put("truthful_all_types", every.is_truthful(tol), "exactly truthful for every true type (dominant strategy)")
    put("min_utility", float(utilities.min()), "smallest truthful utility (>= 0: individually rational)")
    put("individually_rational", bool(utilities.min() >= -(audit.rounding_slack + tol)), "individually rational")
    order = np.argsort(-profile.class_sizes, kind="stable")[:MAX_TABLE_ROWS]
    classes = profile.classes[order]
    tables = {
        "classes": {"type": [env.type_label(int(t)) for t in classes], "agents": profile.class_sizes[order],
                    "payment": payments[order], "utility": utilities[order], "best_gain": audit.best_gain[order]},
        "outcome_law": _law_table(env, hk, profile),
    }
    return Result("huang_kannan", "", m, labels, tables, {"guarantee": str(hk.guarantee)})


def _law_table(env, hk, profile) -> dict[str, list]:
    p = hk.distribution(profile).probabilities
    keep = np.sort(np.argsort(-p, kind="stable")[:MAX_TABLE_ROWS])
    return {"outcome": [env.outcome_label(int(s)) for s in keep], "probability": p[keep],
            "welfare": env.objective_values(profile)[keep]}
