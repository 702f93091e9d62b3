"""The Result invariants: every rule catches a planted violation; every shipped scenario passes."""

import copy
import math
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dpgames.scenarios.invariants import (
    COMMON,
    RULES,
    InvariantError,
    at_most,
    check_result,
    invariants_for,
    is_true,
    probability_column,
    register,
)
from dpgames.scenarios.loader import Scenario
from dpgames.scenarios.result import Result

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
FAST = {"digital_goods": ["small_exact", "continuous", "from_csv", "sweep_epsilon", "digital_goods"],
        "huang_kannan": ["huang_kannan_public_project", "huang_kannan_facility"],
        "nst_mix": ["nst_pricing", "nst_facility_k2", "nst_facility_k1"],
        "large_game": ["pigou", "braess", "grid"]}
_cache: dict[str, Result] = {}


def run(name: str) -> Result:
    if name not in _cache:
        _cache[name] = Scenario.from_file(SCENARIOS / f"{name}.toml").run()   # Scenario.run checks it
    return copy.deepcopy(_cache[name])


@pytest.mark.parametrize("name", [n for names in FAST.values() for n in names])
def test_every_fast_shipped_scenario_passes(name):
    result = run(name)
    check_result(result)   # again, explicitly: the loader ran it already


@pytest.mark.parametrize("kind", sorted(RULES))
def test_each_rule_of_each_kind_catches_a_planted_violation(kind):
    results = [run(n) for n in FAST[kind]]
    caught = set()
    for index, rule in enumerate(invariants_for(kind).rules):
        for result in results:
            for name in [k for k in result.metrics if fnmatchcase(k, rule.pattern)]:
                bad = rule.violating(result.metrics)
                if bad is None:
                    continue
                planted = copy.deepcopy(result)
                planted.metrics[name] = bad
                assert (name, bad) in list(rule.violations(planted.metrics)), (rule.statement, name)
                with pytest.raises(InvariantError) as err:
                    check_result(planted)
                assert not isinstance(err.value, ValueError)   # a bug report, not bad input
                caught.add(index)
    # every rule of the kind applies to at least one shipped scenario's Result
    missing = [r.statement for i, r in enumerate(invariants_for(kind).rules) if i not in caught
               and i >= len(COMMON.rules)]
    assert not missing, missing


def test_the_error_names_the_kind_metric_value_and_invariant():
    result = run("small_exact")
    result.metrics["max_privacy_loss"] = -1.0   # what the old log-space audit printed at eps = 1000
    with pytest.raises(InvariantError) as err:
        check_result(result)
    e = err.value
    assert (e.kind, e.metric, e.value) == ("digital_goods", "max_privacy_loss", -1.0)
    assert "privacy loss" in e.invariant and "max_privacy_loss = -1.0" in str(e)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "nan", "-inf"])
def test_non_finite_figures_are_caught(bad):
    result = run("nst_pricing")
    result.metrics["loss_per_agent_mix"] = bad
    with pytest.raises(InvariantError, match="finite"):
        check_result(result)


def test_a_confidence_interval_upside_down_is_caught():
    result = run("digital_goods")
    result.metrics["rsop_ci_low"] = result.metrics["rsop_ci_high"] + 1.0
    with pytest.raises(InvariantError):
        check_result(result)


@pytest.mark.parametrize("name, table, column", [("small_exact", "price_law", "probability"),
                                                  ("huang_kannan_public_project", "outcome_law", "probability"),
                                                  ("nst_pricing", "outcome_law", "mix")])
def test_table_probabilities_in_range_and_summing_to_one(name, table, column):
    result = run(name)
    out_of_range = copy.deepcopy(result)
    out_of_range.tables[table][column][0] = 1.5
    with pytest.raises(InvariantError, match=r"\[0, 1\]"):
        check_result(out_of_range)
    not_a_law = copy.deepcopy(result)
    probs = not_a_law.tables[table][column]
    probs[:] = [p / 2 for p in probs]
    with pytest.raises(InvariantError, match="sum to 1"):
        check_result(not_a_law)
    assert math.isclose(math.fsum(result.tables[table][column]), 1.0, abs_tol=1e-9)


def test_a_plugin_kind_declares_its_own_rules():
    result = Result("voting_demo", "", {"turnout": 1.2, "winner_share": 0.4, "fair": False})
    check_result(result)   # no rule of its own yet: only the common ones, which hold
    with pytest.raises(InvariantError, match="turnout"):
        check_result(result, [at_most("turnout", 1.0, "turnout is a fraction")])
    register("voting_demo", [is_true("fair", "the rule is fair by construction"),
                             probability_column("shares", "share")])
    with pytest.raises(InvariantError, match="fair"):
        check_result(result)
    result.metrics["fair"] = True
    result.tables["shares"] = {"share": [0.5, -0.1]}
    with pytest.raises(InvariantError, match="shares"):
        check_result(result)


_names = st.sampled_from(sorted({r.pattern.replace("*", "x") for inv in RULES.values() for r in inv.rules}
                                | {"opt", "n", "optimum", "rsop_ci_low", "rsop_ci_high", "price_set", "outcomes"}))
_values = (st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**400, 10**400) | st.booleans()
           | st.none() | st.text(max_size=4) | st.sampled_from(["nan", "inf", "250 prices"]))


@settings(max_examples=50, deadline=None, derandomize=True)
@given(kind=st.sampled_from(sorted(RULES) + ["some_plugin"]), metrics=st.dictionaries(_names, _values, max_size=8),
       column=st.lists(_values, max_size=4))
def test_property_any_result_passes_or_raises_an_invariant_error(kind, metrics, column):
    result = Result(kind, "", metrics, tables={"price_law": {"probability": column}, "outcome_law": {"probability": column}})
    try:
        check_result(result)
    except InvariantError as exc:
        assert exc.kind == kind and str(exc).startswith("internal error")


def test_result_check_is_the_same_check():
    good = run("small_exact")
    assert good.check() is good
    bad = run("small_exact")
    bad.metrics["expected_revenue"] = bad.metrics["opt"] * 1.5   # revenue above OPT: impossible
    with pytest.raises(InvariantError, match="expected_revenue"):
        bad.check()
