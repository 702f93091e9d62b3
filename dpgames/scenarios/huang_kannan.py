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

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from dpgames.scenarios.invariants import (
    Invariants,
    at_least,
    at_most,
    number_or_nan,
    probability_column,
    rows_equal,
)
from dpgames.scenarios.result import Column, Metrics, MetricSet, Result
from dpgames.scenarios.spec import Table
from dpgames.scenarios.streams import child_streams
from dpgames.validation import ValidationError

DESCRIPTION = "The exponential mechanism with Huang-Kannan payments: exactly truthful and individually rational, audited exactly"

MAX_TABLE_ROWS = 2000


EXAMPLES: tuple[Path, ...] = ()

METRICS = MetricSet()
ENVIRONMENT = METRICS.add(
    "environment", "the environment (facility location on a graph, or a public project)"
)
N = METRICS.add("n", "agents", "agents")
TYPES = METRICS.add("types", "types (every type is tried as a lie)", "types")
OUTCOMES = METRICS.add("outcomes", "outcomes |O|", "outcomes")
BETA = METRICS.add(
    "beta",
    "beta: the law of the outcome is proportional to exp(beta * welfare)",
    "1 / utility",
    "Huang & Kannan 2012",
)
EPSILON = METRICS.add(
    "epsilon",
    "the outcome is eps-DP with eps = 2 beta Delta (the payments are not)",
    "",
    "McSherry & Talwar 2007",
)
OPTIMUM = METRICS.add("optimum", "the optimal welfare over the outcomes", "utility")
EXPECTED_WELFARE = METRICS.add(
    "expected_welfare", "the mechanism's expected welfare, exact", "utility"
)
LOSS_PER_AGENT = METRICS.add(
    "loss_per_agent", "(optimum - expected welfare) / n", "utility per agent"
)
REVENUE = METRICS.add("revenue", "total payments", "utility")
MAX_GAIN = METRICS.add(
    "max_gain",
    "largest gain from lying over every agent and lie, exact (<= 0: truthful)",
    "utility",
    "Huang & Kannan 2012 (exactly truthful)",
)
MAX_GAIN_BY = METRICS.add("max_gain_by", "the agent, type and lie attaining max_gain")
TRUTHFUL = METRICS.add("truthful", "exactly truthful at the drawn profile, up to float rounding")
MAX_GAIN_ALL_TYPES = METRICS.add(
    "max_gain_all_types",
    "largest gain over every agent, true type and lie, exact",
    "utility",
    "Huang & Kannan 2012 (dominant-strategy truthful)",
)
TRUTHFUL_ALL_TYPES = METRICS.add(
    "truthful_all_types", "exactly truthful for every true type (dominant strategy)"
)
MIN_UTILITY = METRICS.add(
    "min_utility", "smallest truthful utility (>= 0: individually rational)", "utility"
)
INDIVIDUALLY_RATIONAL = METRICS.add(
    "individually_rational", "every agent's truthful utility is >= 0"
)


def _slack(metrics: Mapping[str, Any]) -> float:
    """Rounding allowance for the welfare figures: 1e-9 of the welfare scale (|OPT| + |E[W]| +
    1)."""
    scale = (
        1.0 + abs(number_or_nan(metrics, OPTIMUM)) + abs(number_or_nan(metrics, EXPECTED_WELFARE))
    )
    return 1e-9 * scale if math.isfinite(scale) else math.nan


INVARIANTS = Invariants(
    rules=[
        at_least(EPSILON, 0.0, "epsilon = 2 beta Delta >= 0"),
        at_most(EXPECTED_WELFARE, OPTIMUM, "no law beats the optimal welfare", rel=0.0, abs_=0.0),
        # Tolerances scale with the welfare: figures of size |OPT| carry ~1e-16 |OPT| beta Delta of
        # rounding (the law is exp(beta W)); a gain of 1e-9 |OPT| is far beyond that, and far below
        # any real incentive.  (The audit's own "truthful" flag uses a fixed 1e-12 U_max slack.)
        at_least(
            LOSS_PER_AGENT, lambda m: -_slack(m), "the welfare loss is >= 0", rel=0.0, abs_=0.0
        ),
        at_least(
            REVENUE,
            lambda m: -_slack(m),
            "Huang-Kannan payments are >= 0 (VCG on the regularised welfare)",
            rel=0.0,
            abs_=0.0,
        ),
        at_least(
            MIN_UTILITY,
            lambda m: -_slack(m),
            "Huang-Kannan is individually rational",
            rel=0.0,
            abs_=0.0,
        ),
        at_most(
            MAX_GAIN, _slack, "Huang-Kannan is exactly truthful: no lie gains", rel=0.0, abs_=0.0
        ),
        at_most(
            MAX_GAIN_ALL_TYPES,
            _slack,
            "Huang-Kannan is exactly truthful for every true type",
            rel=0.0,
            abs_=0.0,
        ),
    ],
    tables=[probability_column("outcome_law", "probability", rows_equal(OUTCOMES))],
)


def data_roots() -> tuple[Path, ...]:
    """No data folder of its own: an edge list lies beside the scenario or in a ``--data-dir``."""
    return ()


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
        raise ValidationError(
            "population",
            "is required for a facility-location environment (a LocatedPopulationSpec)",
        )


def estimate(spec: HuangKannanSpec) -> list[budget.Estimate]:
    """Peak memory and work (see :mod:`dpgames.scenarios.budget`): the environment, its audits and
    the payments (:data:`PAYMENT_ROW_COPIES` arrays of classes x (outcomes + types)).

    Parameters
    ----------
    spec : HuangKannanSpec

    Returns
    -------
    list of Estimate
    """
    size, who = spec.environment.size(), spec._agents_from()
    if isinstance(who, PublicProjectSpec):  # one class per kind of agent counted
        fewest = most = float(len(who.counts))
    else:
        fewest, most = budget.class_range(
            who.distribution, who.n, size.types, who.values, who.weights
        )
    return budget.environment_estimates(
        size, [spec.agents], "huang_kannan", row_copies=PAYMENT_ROW_COPIES, fewest=fewest, most=most
    )


#: Arrays of classes x (outcomes + types) held at once by the audit at the realised types and the
#: payments (laws without each class, their log-MGFs; measured about 13 at the peak on an 8 x 8
#: grid, 2 facilities).
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


@dataclass(frozen=True)
class HuangKannanRun:
    """A ``huang_kannan`` run: the environment, the agents' profile drawn from the seed and the
    mechanism."""

    environment: Environment
    profile: Profile
    mechanism: HuangKannan


def build(spec: HuangKannanSpec, seed: np.random.SeedSequence) -> HuangKannanRun:
    """The environment, the profile (located agents drawn from the seed's first child stream) and
    the mechanism (see :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    spec : HuangKannanSpec
    seed : numpy.random.SeedSequence

    Returns
    -------
    HuangKannanRun
    """
    (population_seed,) = child_streams(seed, 1)
    env = spec.environment.build()
    who = spec._agents_from()
    if isinstance(who, LocatedPopulationSpec):
        labels = who.draw(env, np.random.default_rng(population_seed))
    else:
        labels = who.population()
    return HuangKannanRun(env, env.profile(labels), HuangKannan(env, spec.beta))


def run(built: HuangKannanRun) -> Result:
    """The exact audits of the mechanism with payments at the drawn profile (see
    :mod:`dpgames.scenarios.kind`).

    Parameters
    ----------
    built : HuangKannanRun

    Returns
    -------
    Result
        Metrics, and the ``classes`` and ``outcome_law`` tables.
    """
    env, profile, hk = built.environment, built.profile, built.mechanism
    audit = truthfulness_audit(hk, profile)
    payments = hk.payments(profile)
    utilities = audit.truthful_utility
    best, optimum = env.optimum(profile)
    welfare = hk.expected_objective(profile)
    worst = audit.worst_case
    m = Metrics()
    m.put(ENVIRONMENT, env.name, "environment")
    m.put(N, profile.n, "agents")
    m.put(TYPES, env.n_types, "types (every type is tried as a lie)")
    m.put(OUTCOMES, env.n_outcomes, "outcomes |O|")
    m.put(BETA, hk.beta, "beta (law ~ exp(beta * welfare))")
    m.put(
        EPSILON,
        hk.guarantee.epsilon,
        "the outcome is eps-DP, eps = 2 beta Delta (payments are not)",
    )
    m.put(OPTIMUM, optimum, f"optimal welfare (best outcome: {env.outcome_label(best)})")
    m.put(EXPECTED_WELFARE, welfare, "E[welfare], Huang-Kannan (exact)")
    m.put(LOSS_PER_AGENT, (optimum - welfare) / profile.n, "welfare loss per agent")
    m.put(REVENUE, hk.revenue(profile), "total payments")
    m.put(MAX_GAIN, audit.max_gain, "largest gain from lying (exact; <= 0: truthful)")
    m.put(
        MAX_GAIN_BY,
        f"agent {worst['agent']} (type {worst['true_type']!r}) reporting {worst['lie']!r}",
        "  attained by" if audit.max_gain > audit.rounding_slack else "  the least costly lie",
    )
    tol = hk.rounding_tolerance(profile)
    m.put(
        TRUTHFUL,
        audit.is_truthful(tol),
        "exactly truthful (every agent x every lie; up to float rounding)",
    )
    if type_space_affordable(env, profile):
        every = truthfulness_audit(hk, profile, "all")
        m.put(
            MAX_GAIN_ALL_TYPES,
            every.max_gain,
            "largest gain over every agent, true type and lie (exact)",
        )
        m.put(
            TRUTHFUL_ALL_TYPES,
            every.is_truthful(tol),
            "exactly truthful for every true type (dominant strategy)",
        )
    m.put(
        MIN_UTILITY,
        float(utilities.min()),
        "smallest truthful utility (>= 0: individually rational)",
    )
    m.put(
        INDIVIDUALLY_RATIONAL,
        bool(utilities.min() >= -(audit.rounding_slack + tol)),
        "individually rational",
    )
    order = np.argsort(-profile.class_sizes, kind="stable")[:MAX_TABLE_ROWS]
    classes = profile.classes[order]
    tables: dict[str, dict[str, Column]] = {
        "classes": {
            "type": [env.type_label(int(t)) for t in classes],
            "agents": profile.class_sizes[order],
            "payment": payments[order],
            "utility": utilities[order],
            "best_gain": audit.best_gain[order],
        },
        "outcome_law": _law_table(env, hk, profile),
    }
    return m.result("huang_kannan", tables, {"guarantee": str(hk.guarantee)})


def _law_table(env: Environment, hk: HuangKannan, profile: Profile) -> dict[str, Column]:
    p = hk.distribution(profile).probabilities
    keep = np.sort(np.argsort(-p, kind="stable")[:MAX_TABLE_ROWS])
    return {
        "outcome": [env.outcome_label(int(s)) for s in keep],
        "probability": p[keep],
        "welfare": env.objective_values(profile)[keep],
    }
