"""`dpgames check`'s memory estimates for the mechanism kinds (nst_mix, huang_kannan,
privacy_market) against the peak the real run allocates.

The oracle is ``tracemalloc`` on the run itself (numpy arrays and Python objects; the interpreter
and its libraries are left out by both sides): the largest stage's estimate, what ``--max-memory``
is compared with, must be at least that peak (the budget never lets through a run that needs more)
and at most 4 x peak + 4 MB (it does not refuse runs that fit by a wide margin; the 4 MB covers a
small fixed floor on tiny runs).  Shipped scenarios and variants that reach other stages: the
commitment gap with more than two reactions, the dominant-strategy least q, no type-space audit, a
large population, the survey's error law.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dpgames.markets.agents import DiscreteCosts, PopulationLaw, UniformCosts
from dpgames.markets.take_it_or_leave_it import TakeItOrLeaveIt
from dpgames.scenarios import Scenario
from dpgames.scenarios.privacy_market import survey_atoms
from memory_peak import estimate_and_peak

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
SHIPPED = sorted(
    p.name
    for pattern in ("nst_*.toml", "huang_kannan_*.toml", "privacy_market_*.toml")
    for p in SCENARIOS.glob(pattern)
)
UNIFORM = {"law": "uniform", "low": 0, "high": 1}

VARIANTS = {
    # three reactions: the commitment gap's blocks of types x types x outcomes are the peak
    "nst line of 30, 3 facilities": {
        "kind": "nst_mix",
        "seed": 1,
        "mechanism": {"epsilon": 1.0},
        "environment": {"type": "facility_location", "graph": "line", "nodes": 30, "k": 3},
        "population": {"distribution": "uniform", "n": 50},
    },
    # forced reactions (two deviation terms) and a [scaling] size above the types
    "nst 5 x 5 grid, forced, scaling": {
        "kind": "nst_mix",
        "seed": 1,
        "mechanism": {"epsilon": 0.5, "reactions": "forced"},
        "environment": {"type": "facility_location", "graph": "grid", "rows": 5, "cols": 5, "k": 2},
        "population": {"distribution": "uniform", "n": 300},
        "scaling": {"n": [30, 3000]},
    },
    # 6 bidders, 10 prices: the dominant-strategy least q enumerates the others' multisets
    "nst pricing, dominant q": {
        "kind": "nst_mix",
        "seed": 1,
        "mechanism": {"epsilon": 1.0, "alpha": 0.1},
        "environment": {"type": "pricing"},
        "population": {"distribution": "uniform", "n": 6},
    },
    "nst pricing, 50 prices, free": {
        "kind": "nst_mix",
        "seed": 1,
        "mechanism": {"epsilon": 0.5, "alpha": 0.02, "reactions": "free"},
        "environment": {"type": "pricing"},
        "population": {"distribution": "uniform", "n": 2000},
    },
    # 64 types x 2016 outcomes: over the type-space limit, the payments are the peak
    "huang_kannan 8 x 8 grid, 5000 agents": {
        "kind": "huang_kannan",
        "seed": 1,
        "mechanism": {"beta": 0.5},
        "environment": {"type": "facility_location", "graph": "grid", "rows": 8, "cols": 8, "k": 2},
        "population": {"distribution": "uniform", "n": 5000},
    },
    # 100 agents over 60 locations: the type-space audit (~49 classes) is over its limit, which the
    # estimate must see from the spec (the fewest classes uniform draws show)
    "huang_kannan line of 60, 100 agents": {
        "kind": "huang_kannan",
        "seed": 1,
        "mechanism": {"beta": 0.5},
        "environment": {"type": "facility_location", "graph": "line", "nodes": 60, "k": 2},
        "population": {"distribution": "uniform", "n": 100},
    },
    # 60 agents over 144 locations: classes ~ 50, and the type-space audit runs
    "nst 12 x 12 grid, 60 agents": {
        "kind": "nst_mix",
        "seed": 1,
        "mechanism": {"epsilon": 1.0},
        "environment": {
            "type": "facility_location",
            "graph": "grid",
            "rows": 12,
            "cols": 12,
            "k": 1,
        },
        "population": {"distribution": "uniform", "n": 60},
    },
    # 5,000 agents on 3 of 144 locations (weights): 3 classes, as the weights say
    "nst 12 x 12 grid, weights on 3 locations": {
        "kind": "nst_mix",
        "seed": 1,
        "mechanism": {"epsilon": 1.0},
        "environment": {
            "type": "facility_location",
            "graph": "grid",
            "rows": 12,
            "cols": 12,
            "k": 1,
        },
        "population": {
            "distribution": "weights",
            "n": 5000,
            "weights": [1.0 if node in (0, 50, 143) else 0.0 for node in range(144)],
        },
    },
    "huang_kannan 4 x 4 grid, 3 facilities": {
        "kind": "huang_kannan",
        "seed": 1,
        "mechanism": {"beta": 2.0},
        "environment": {"type": "facility_location", "graph": "grid", "rows": 4, "cols": 4, "k": 3},
        "population": {"distribution": "uniform", "n": 30},
    },
    "budget market, 100,000 agents": {
        "kind": "privacy_market",
        "seed": 1,
        "population": {"n": 100_000, "bit_rate": 0.3, "costs": UNIFORM},
        "mechanism": {"type": "budget", "budget": 10.0, "epsilon": 0.002},
    },
    # a first round that may stop with many refusals: 5,174 atoms in the error law
    "survey, wide error law": {
        "kind": "privacy_market",
        "seed": 1,
        "population": {"n": 10, "bit_rate": 0.5, "costs": UNIFORM},
        "mechanism": {
            "type": "take_it_or_leave_it",
            "sample_size": 300,
            "alpha": 0.3,
            "epsilon": 1.0,
            "start_price": 0.55,
            "max_rounds": 3,
        },
        "audit": {"lies": 0},
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_estimate_covers_the_runs_peak_within_4x_plus_4mb(name):
    estimate, peak = estimate_and_peak(Scenario.from_file(SCENARIOS / name))
    assert peak <= estimate <= 4 * peak + 4e6, (estimate, peak)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant_estimate_covers_the_runs_peak_within_4x_plus_4mb(name):
    estimate, peak = estimate_and_peak(Scenario.from_dict(VARIANTS[name]))
    assert peak <= estimate <= 4 * peak + 4e6, (estimate, peak)


def test_the_shipped_files_of_each_kind_are_measured():
    kinds = {Scenario.from_file(SCENARIOS / name).parse().name for name in SHIPPED}
    assert kinds == {"nst_mix", "huang_kannan", "privacy_market"}
    assert len(SHIPPED) >= 9


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    m=st.integers(1, 400),
    alpha=st.floats(0.01, 0.6),
    start=st.floats(0.01, 2.0),
    rounds=st.integers(1, 6),
    rate=st.floats(0.0, 1.0),
    discrete=st.booleans(),
)
def test_survey_atoms_bounds_the_error_law(m, alpha, start, rounds, rate, discrete):
    """The survey's estimate counts its error law's atoms without building it: at least the number
    of atoms :meth:`TakeItOrLeaveIt.law` keeps (0 when it never stops), which also drops counts of
    ones whose probability is 0 in floats; exactly that number when none is (a few people, a bit
    rate away from 0, 1)."""
    survey = TakeItOrLeaveIt(m, alpha, 0.5, start, rounds)
    costs = DiscreteCosts([0.1, 0.7], [0.6, 0.4]) if discrete else UniformCosts(0.0, 1.0)
    law = PopulationLaw(rate, costs)
    error = survey.law(law).error
    kept = 0 if error is None else error.shifts.size
    counted = survey_atoms(survey, law)
    assert kept <= counted
    if m <= 50 and 0.2 <= rate <= 0.8:
        assert counted == kept


def occupancy_law(n: int, m: int) -> list[float]:
    """Exact law of the number of distinct boxes hit by n uniform draws over m boxes (a Markov
    chain)."""
    law = [1.0] + [0.0] * m
    for _ in range(n):
        law = [law[k] * k / m + (law[k - 1] * (m - k + 1) / m if k else 0.0) for k in range(m + 1)]
    return law


@pytest.mark.parametrize(
    ("n", "m"), [(1, 1), (5, 3), (20, 20), (60, 144), (100, 60), (400, 36), (500, 64)]
)
def test_fewest_uniform_classes_fails_with_chance_below_1e4(n, m):
    """Fewer distinct types than the bound (which decides whether the type-space audit may run) has
    exact probability <= 1e-4, and the bound is at most min(n, m)."""
    from dpgames.scenarios.budget import fewest_uniform_classes

    bound = fewest_uniform_classes(n, m)
    law = occupancy_law(n, m)
    assert 1 <= bound <= min(n, m)
    assert sum(p for k, p in enumerate(law) if k < bound) <= 1e-4


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    nodes=st.integers(2, 400),
    k=st.integers(1, 8),
    n=st.integers(1, 10**9),
    forced=st.booleans(),
    hk=st.booleans(),
    distribution=st.sampled_from(["uniform", "weights", "list"]),
    scaling=st.integers(1, 10**7),
)
def test_facility_estimates_are_numbers_never_errors(
    nodes, k, n, forced, hk, distribution, scaling
):
    """Any valid facility spec: every stage's memory and work is a number >= 0 (inf beyond floats),
    never NaN, never an exception (k above the nodes: no outcome)."""
    from dpgames.validation import ValidationError

    population: dict = {"distribution": distribution, "n": n}
    if distribution == "weights":
        population["weights"] = [float(i % 3) for i in range(nodes)] if nodes > 2 else [1.0, 0.0]
    elif distribution == "list":
        population = {"distribution": "list", "values": list(range(min(nodes, 5)))}
    data: dict = {
        "kind": "huang_kannan" if hk else "nst_mix",
        "mechanism": {"beta": 1.0} if hk else {"epsilon": 1.0},
        "environment": {"type": "facility_location", "graph": "line", "nodes": nodes, "k": k},
        "population": population,
    }
    if not hk:
        data["mechanism"]["reactions"] = "forced" if forced else "free"
        data["scaling"] = {"n": [scaling]}
    try:
        parsed = Scenario.from_dict(data).parse()
    except ValidationError:
        return
    for stage in parsed.estimate():
        assert stage.memory >= 0 and stage.work >= 0, stage  # NaN fails both
