"""The allocation scenario kind: the shipped examples run and pass their invariants, agree with the
library and with a brute-force optimum on a tiny market; bad fields name the field; every field
surface is fuzzed."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames.allocation import AscendingAuction, Market
from dpgames.scenarios import registry
from dpgames.scenarios.loader import Scenario, run_scenario
from dpgames.scenarios.spec import ScenarioError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "scenarios").glob("allocation_*.toml"))


def scenario(market: dict, auction: dict, audit: dict | None = None, seed: int = 1) -> Scenario:
    data = {"kind": "allocation", "seed": seed, "market": market, "auction": auction}
    if audit is not None:
        data["audit"] = audit
    return Scenario.from_dict(data)


def test_kind_is_registered_in_pyproject_and_the_fallback_table():
    assert 'allocation = "dpgames.scenarios.allocation"' in (ROOT / "pyproject.toml").read_text()
    assert registry.BUILTIN_KINDS["allocation"] == "dpgames.scenarios.allocation"


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_run_and_pass_their_invariants(path):
    result = run_scenario(path, seed=3)
    metrics = result.metrics
    assert (
        metrics["welfare_nonprivate"] <= metrics["opt"] + 1e-9 <= metrics["opt_upper_bound"] + 2e-9
    )
    assert metrics["max_misreport_gain"] >= 0
    assert run_scenario(path, seed=3).metrics == metrics  # same seed, same result


def test_tiny_market_agrees_with_brute_force_and_the_library():
    result = scenario(
        {"bidders": 4, "goods": 2, "supply": [1, 2], "law": "common"},
        {"alpha": 0.1, "epsilon": 3.0, "margin": 0},
        {"bidders": 4},
        seed=9,
    ).run()
    m = result.metrics
    market_seed, noise_seed = np.random.SeedSequence(9).spawn(2)
    market = Market.random(4, 2, [1, 2], np.random.default_rng(market_seed), "common")
    best = max(
        sum(market.values[i, c] for i, c in enumerate(choice) if c >= 0)
        for choice in itertools.product(range(-1, 2), repeat=4)
        if choice.count(0) <= 1 and choice.count(1) <= 2
    )
    assert m["opt"] == pytest.approx(best, abs=1e-12)
    assert m["welfare_nonprivate"] == AscendingAuction(0.1).run(market).welfare
    assert m["welfare"] == AscendingAuction(0.1, 3.0, margin=0).run(market, rng=noise_seed).welfare
    assert m["welfare"] >= best - m["certificate"] - 1e-12
    assert m["privacy_spent_epsilon"] == 3.0 and m["privacy_spent_delta"] == 0.0
    assert result.tables["goods"]["supply"] == [1, 2]


@pytest.mark.parametrize(
    "market, auction, audit, field",
    [
        ({"bidders": 5, "goods": 2, "supply": 0}, {"alpha": 0.1}, None, "market.supply"),
        ({"bidders": 5, "goods": 2, "supply": [1]}, {"alpha": 0.1}, None, "market.supply"),
        ({"bidders": 0, "goods": 2, "supply": 1}, {"alpha": 0.1}, None, "market.bidders"),
        (
            {"bidders": 5, "goods": 2, "supply": 1, "law": "normal"},
            {"alpha": 0.1},
            None,
            "market.law",
        ),
        ({"bidders": 5, "goods": 2, "supply": 1}, {"alpha": 0}, None, "auction.alpha"),
        ({"bidders": 5, "goods": 2, "supply": 1}, {"alpha": 1.5}, None, "auction.alpha"),
        (
            {"bidders": 5, "goods": 2, "supply": 1},
            {"alpha": 0.1, "epsilon": -1},
            None,
            "auction.epsilon",
        ),
        (
            {"bidders": 5, "goods": 2, "supply": 1},
            {"alpha": 0.1, "margin": "fix"},
            None,
            "auction.margin",
        ),
        ({"bidders": 5, "goods": 2, "supply": 1}, {"alpha": 0.1, "beta": 1}, None, "auction.beta"),
        ({"bidders": 5, "goods": 2, "supply": 1}, {"alpha": 0.1}, {"bidders": 6}, "audit.bidders"),
        (
            {"bidders": 5, "goods": 2, "supply": 1},
            {"alpha": 0.1, "extra": 1},
            None,
            "auction.extra",
        ),
        ({"bidders": 10**7, "goods": 10, "supply": 1}, {"alpha": 0.1}, None, "market.bidders"),
    ],
)
def test_bad_fields_are_named(market, auction, audit, field):
    with pytest.raises(ScenarioError) as e:
        scenario(market, auction, audit).run()
    assert e.value.field == field


values = st.one_of(
    st.integers(-2, 6),
    st.floats(-1, 2),
    st.just(float("nan")),
    st.text(max_size=2),
    st.none(),
    st.lists(st.integers(0, 3), max_size=3),
    st.just("auto"),
)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    st.fixed_dictionaries({"bidders": values, "goods": values, "supply": values}),
    st.fixed_dictionaries(
        {"alpha": values}, optional={"epsilon": values, "margin": values, "beta": values}
    ),
)
def test_fields_are_refused_by_name_or_give_a_result_passing_the_invariants(market, auction):
    market = {k: v for k, v in market.items() if v is not None}
    auction = {k: v for k, v in auction.items() if v is not None}
    try:
        result = scenario(market, auction).run()
    except ScenarioError as e:
        assert e.field.split(".")[0] in ("market", "auction")
        return
    m = result.metrics
    assert m["welfare_nonprivate"] <= m["opt_upper_bound"] + 1e-9
    assert all(np.isfinite(v) for v in m.values() if isinstance(v, float))


@pytest.mark.slow
def test_the_example_sweeps(tmp_path):
    from dpgames.sweep.runner import plan_sweep, run_sweep

    plan = plan_sweep(ROOT / "scenarios" / "allocation_two_goods.toml", seeds=1)
    done = run_sweep(plan, tmp_path / "alloc.jsonl", workers=1, progress=False)
    assert done.ran == 3
    assert (tmp_path / "alloc.jsonl").read_text().count('"status":"ok"') == 3
