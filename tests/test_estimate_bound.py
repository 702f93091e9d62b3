"""The work estimate is an upper bound on the work a run does, whatever the parameters.

Random small scenarios of every built-in kind, in the regimes where a loop count grows with a
parameter rather than a size (an auction's rounds like 1/alpha, a scaling list's repeats, the
digital-goods audits' log space at large eps, the mediators' rounds): each is run in a forked child
with its CPU time measured, and the run must take at most ``MARGIN`` times its estimate at the
budget's rate (1e9 operations a second), plus ``FLOOR`` for what every run pays whatever its size.
A run that goes on past that (wall clock, with room for a busy machine) fails as a hang.

Oracle: the estimate's own contract (``dpgames.scenarios.budget``: the work of every stage, at about
1e9 operations a second) against the CPU clock."""

from __future__ import annotations

import copy
import os
import time
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from dpgames.scenarios import Scenario
from dpgames.scenarios.budget import Budget
from dpgames.validation import ValidationError
from fuzz_strategies import run_isolated

ROOT = Path(__file__).resolve().parent.parent
BASES = {p.name: tomllib.loads(p.read_text()) for p in sorted((ROOT / "scenarios").glob("*.toml"))}
RATE = 1e9  # operations a second: the unit of the estimates
MARGIN = 4.0  # the estimates are calibrated to a small factor, and a busy machine's CPU clock runs slower
FLOOR = 0.5  # seconds every run pays whatever its size (first calls, the Result and its invariants)
MOST_WORK = 2e9  # larger cases are skipped: the suite's time
UNLIMITED = Budget(float("inf"), float("inf"))

ALPHAS = [1.0, 0.5, 0.25, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001]
EPSILONS = st.sampled_from([1e-3, 0.1, 0.5, 1.0, 6.5, 50.0, 1e3, 1e6])


def based(name: str, **sections) -> dict:
    """A shipped scenario with ``sections`` (table -> {key: value}) set over it, without its
    sweep."""
    tree = copy.deepcopy(BASES[name])
    tree.pop("sweep", None)
    for section, values in sections.items():
        tree.setdefault(section, {}).update(values)
    return tree


@st.composite
def allocation(draw) -> dict:
    bidders, goods = draw(st.integers(1, 30)), draw(st.integers(1, 3))
    auction = {
        "alpha": draw(st.sampled_from(ALPHAS)),
        "margin": draw(st.sampled_from(["auto", 0.0, 0.5, 20.0])),
    }
    if draw(st.booleans()):
        auction["epsilon"] = draw(EPSILONS)
    return based(
        "allocation_small.toml",
        market={
            "bidders": bidders,
            "goods": goods,
            "supply": draw(st.integers(1, 12)),
            "law": draw(st.sampled_from(["uniform", "common"])),
        },
        auction=auction,
        audit={"bidders": draw(st.integers(0, min(bidders, 2)))},
    )


@st.composite
def digital_goods(draw) -> dict:
    prices = draw(st.sampled_from(["grid", "continuous", "alpha"]))
    mechanism = {"epsilon": draw(EPSILONS), "prices": "grid" if prices == "alpha" else prices}
    if prices == "alpha":
        mechanism["alpha"] = draw(st.sampled_from([1.0, 0.1, 0.01, 1e-3]))
    population = draw(
        st.sampled_from(
            [
                {
                    "distribution": "uniform",
                    "n": draw(st.integers(1, 400)),
                    "low": 0.0,
                    "high": 1.0,
                },
                {
                    "distribution": "discrete",
                    "n": draw(st.integers(1, 400)),
                    "values": [0.2, 0.5, 0.9],
                },
            ]
        )
    )
    tree = based(
        "digital_goods.toml",
        mechanism=mechanism,
        baselines={"rsop_samples": draw(st.integers(2, 200))},
        audit={"lies": draw(st.one_of(st.just("auto"), st.integers(2, 300)))},
    )
    tree["population"] = population
    return tree


@st.composite
def nst_mix(draw) -> dict:
    sizes = draw(st.lists(st.sampled_from([1, 5, 20, 40]), min_size=1, max_size=25))
    return based(
        "nst_facility_k1.toml",
        environment={"rows": draw(st.integers(1, 4)), "cols": draw(st.integers(2, 4)), "k": 1},
        population={"n": draw(st.integers(1, 60))},
        mechanism={"epsilon": draw(st.sampled_from([0.1, 1.0, 50.0]))},
        scaling={"n": sizes},
    )


@st.composite
def huang_kannan(draw) -> dict:
    return based(
        "huang_kannan_facility.toml",
        environment={"rows": draw(st.integers(1, 4)), "cols": draw(st.integers(2, 4))},
        population={"n": draw(st.integers(1, 200))},
        mechanism={"beta": draw(st.sampled_from([0.01, 0.5, 50.0]))},
    )


@st.composite
def large_game(draw) -> dict:
    mediator = {
        "rounds": draw(st.integers(1, 400)),
        "dynamics": draw(st.sampled_from(["hedge", "blum-mansour"])),
        "noise": draw(st.sampled_from(["gaussian", "tree"])),
    }
    if draw(st.booleans()):
        tree = based(
            "pigou.toml", mediator=mediator, incentives={"enabled": draw(st.booleans()), "seeds": 1}
        )
        tree["game"]["classes"][0]["players"] = draw(st.integers(1, 2000))
        return tree
    return based(
        "grid.toml",
        game={
            "rows": draw(st.integers(2, 4)),
            "cols": draw(st.integers(2, 4)),
            "pairs": draw(st.integers(1, 4)),
            "players": draw(st.integers(1, 500)),
        },
        mediator=mediator,
        incentives={"enabled": draw(st.booleans()), "seeds": 1, "samples": 1},
    )


@st.composite
def anonymous_game(draw) -> dict:
    players = draw(
        st.lists(st.integers(0, 60), min_size=2, max_size=2).filter(lambda p: sum(p) > 0)
    )
    return based(
        "anonymous_market_entry.toml",
        game={"players": players, "capacity": draw(st.integers(0, 40)), "outside": [0.5, 0.45]},
        mechanism={
            "rounds": draw(st.integers(1, 400)),
            "evaluation": draw(st.sampled_from(["exact", "mean-field", "auto"])),
        },
        audit={"misreport": draw(st.booleans())},
    )


@st.composite
def privacy_market(draw) -> dict:
    name = draw(
        st.sampled_from(
            [
                "privacy_market_accuracy.toml",
                "privacy_market_budget.toml",
                "privacy_market_take_it_or_leave_it.toml",
            ]
        )
    )
    tree = based(name, population={"n": draw(st.integers(1, 3000))})
    if "lies" in tree.get("audit", {}) and tree["audit"]["lies"]:
        tree["audit"]["lies"] = draw(st.integers(0, 200))
    return tree


KINDS = {
    "allocation": allocation(),
    "digital_goods": digital_goods(),
    "nst_mix": nst_mix(),
    "huang_kannan": huang_kannan(),
    "large_game": large_game(),
    "anonymous_game": anonymous_game(),
    "privacy_market": privacy_market(),
}


def _cpu_seconds(tree: dict) -> float:
    start = time.process_time()
    Scenario.from_dict(tree).run(budget=UNLIMITED)
    return time.process_time() - start


@pytest.fixture(scope="module", autouse=True)
def warm():
    """Each kind run once here, under each dynamics and noise, so that no child pays a first import
    or a compiled function's load."""
    os.environ.setdefault("DPGAMES_TNTP_DIR", str(ROOT.parent / "shared" / "data" / "tntp"))
    trees = [
        based(name)
        for name in (
            "allocation_small.toml",
            "small_exact.toml",
            "continuous.toml",
            "nst_pricing.toml",
            "huang_kannan_public_project.toml",
            "privacy_market_budget.toml",
        )
    ]
    for dynamics in ("hedge", "blum-mansour"):
        for noise in ("gaussian", "tree"):
            trees.append(
                based(
                    "pigou.toml",
                    mediator={"rounds": 10, "dynamics": dynamics, "noise": noise},
                    incentives={"enabled": False},
                )
            )
            trees.append(
                based(
                    "anonymous_market_entry.toml",
                    mechanism={"rounds": 10, "dynamics": dynamics, "noise": noise},
                )
            )
    for tree in trees:
        Scenario.from_dict(tree).run(budget=UNLIMITED)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
    ],
)
@given(data=st.data())
def test_a_run_takes_at_most_its_estimate(kind, data):
    tree = data.draw(KINDS[kind])
    try:
        parsed = Scenario.from_dict(tree).parse()
    except ValidationError:
        assume(False)  # an invalid combination: the fuzz suites test refusals
    work = sum(stage.work for stage in parsed.estimate())
    assume(work <= MOST_WORK)
    limit = MARGIN * work / RATE + FLOOR
    outcome = run_isolated(lambda: _cpu_seconds(tree), timeout=5 * limit + 20)
    assert outcome.status != "timeout", (
        f"still running after {outcome.seconds:.0f} s; estimate {work:.3g}: {tree}"
    )
    if outcome.status == "raised" and "ValidationError" in outcome.value[3]:
        return  # refused while running (e.g. a demand that rounds to no player): no work to bound
    assert outcome.status == "returned", (outcome.status, outcome.value, tree)
    assert outcome.value <= limit, (
        f"{outcome.value:.3f} s of CPU for an estimate of {work:.3g} operations "
        f"(at most {limit:.3f} s allowed): {tree}"
    )
