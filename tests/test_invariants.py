"""The Result invariants: the common rules, the error's wording, tables of probabilities, a kind's
own rules (each built-in kind's planted violations are checked in test_kind_contract.py, over every
kind)."""

import copy
import math
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dpgames.scenarios import registry
from dpgames.scenarios.invariants import (
    InternalError,
    InvariantError,
    Invariants,
    at_most,
    check_result,
    is_true,
    probability_column,
)
from dpgames.scenarios.loader import Scenario
from dpgames.scenarios.result import Metric, Result

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
FAST = {
    "digital_goods": ["small_exact", "continuous", "from_csv", "sweep_epsilon", "digital_goods"],
    "huang_kannan": ["huang_kannan_public_project", "huang_kannan_facility"],
    "nst_mix": ["nst_pricing", "nst_facility_k2", "nst_facility_k1"],
    "large_game": ["pigou", "braess", "grid"],
}
_cache: dict[str, Result] = {}


def run(name: str) -> Result:
    if name not in _cache:
        # Scenario.run checks it
        _cache[name] = Scenario.from_file(SCENARIOS / f"{name}.toml").run()
    return copy.deepcopy(_cache[name])


def invariants(kind: str) -> Invariants:
    return registry.load(kind).INVARIANTS


def check(result: Result) -> None:
    check_result(result, invariants(result.kind))


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for names in FAST.values() for n in names])
def test_every_fast_shipped_scenario_passes(name):
    check(run(name))  # again, explicitly: the loader ran it already


def test_the_error_names_the_kind_metric_value_and_invariant():
    result = run("small_exact")
    result.metrics["max_privacy_loss"] = -1.0  # what the old log-space audit printed at eps = 1000
    with pytest.raises(InvariantError) as err:
        check(result)
    e = err.value
    assert (e.kind, e.metric, e.value) == ("digital_goods", "max_privacy_loss", -1.0)
    assert "privacy loss" in e.invariant and "max_privacy_loss = -1.0" in str(e)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "nan", "-inf"])
def test_non_finite_figures_are_caught(bad):
    result = run("nst_pricing")
    result.metrics["loss_per_agent_mix"] = bad
    with pytest.raises(InvariantError, match="finite"):
        check(result)


def test_a_confidence_interval_upside_down_is_caught():
    result = run("digital_goods")
    result.metrics["rsop_ci_low"] = result.metrics["rsop_ci_high"] + 1.0
    with pytest.raises(InvariantError):
        check(result)


@pytest.mark.parametrize(
    "name, table, column",
    [
        ("small_exact", "price_law", "probability"),
        ("huang_kannan_public_project", "outcome_law", "probability"),
        ("nst_pricing", "outcome_law", "mix"),
    ],
)
def test_table_probabilities_in_range_and_summing_to_one(name, table, column):
    result = run(name)
    out_of_range = copy.deepcopy(result)
    out_of_range.tables[table][column][0] = 1.5
    with pytest.raises(InvariantError, match=r"\[0, 1\]"):
        check(out_of_range)
    not_a_law = copy.deepcopy(result)
    probs = not_a_law.tables[table][column]
    probs[:] = [p / 2 for p in probs]
    with pytest.raises(InvariantError, match="sum to 1"):
        check(not_a_law)
    assert math.isclose(math.fsum(result.tables[table][column]), 1.0, abs_tol=1e-9)


def test_a_kinds_own_rules_add_to_the_common_ones():
    turnout, fair = (
        Metric("turnout", "share of voters who voted"),
        Metric("fair", "the rule is fair"),
    )
    result = Result("voting_demo", "", {"turnout": 1.2, "winner_share": 0.4, "fair": False})
    check_result(result, Invariants())  # no rule of its own: only the common ones, which hold
    with pytest.raises(InvariantError, match="turnout"):
        check_result(result, Invariants([at_most(turnout, 1.0, "turnout is a fraction")]))
    own = Invariants(
        [is_true(fair, "the rule is fair by construction")], [probability_column("shares", "share")]
    )
    with pytest.raises(InvariantError, match="fair"):
        check_result(result, own)
    result.metrics["fair"] = True
    result.tables["shares"] = {"share": [0.5, -0.1]}
    with pytest.raises(InvariantError, match="shares") as err:
        check_result(result, own)
    assert isinstance(err.value, InternalError) and not isinstance(err.value, ValueError)


KINDS = sorted(FAST)
_names = st.sampled_from(
    sorted(
        {r.pattern for kind in KINDS for r in invariants(kind).rules}
        | {
            "opt",
            "n",
            "optimum",
            "rsop_ci_low",
            "rsop_ci_high",
            "price_set",
            "outcomes",
            "some_probability",
            "prob_x",
        }
    )
)
_values = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(-(10**400), 10**400)
    | st.booleans()
    | st.none()
    | st.text(max_size=4)
    | st.sampled_from(["nan", "inf", "250 prices"])
)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(KINDS + ["some_plugin"]),
    metrics=st.dictionaries(_names, _values, max_size=8),
    column=st.lists(_values, max_size=4),
)
def test_property_any_result_passes_or_raises_an_invariant_error(kind, metrics, column):
    result = Result(
        kind,
        "",
        metrics,
        tables={"price_law": {"probability": column}, "outcome_law": {"probability": column}},
    )
    try:
        check_result(result, Invariants() if kind == "some_plugin" else invariants(kind))
    except InvariantError as exc:
        assert exc.kind == kind and str(exc).startswith("internal error")
