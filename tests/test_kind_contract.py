"""The scenario-kind contract (dpgames.scenarios.kind), checked member by member on every registered
kind: dpgames' own and every installed plugin's (the example plugin examples/voting_plugin among
them).

A new kind needs nothing here but, when it ships no ``EXAMPLES``, a line in :data:`SAMPLE` naming a
small shipped scenario of it.  Oracles: the contract's own statements (types, declared names), a
second build from the same seed (the same Result), the planted violation of each invariant (the
checker must raise), and the sizes a run reports against the estimate's stages (a stage's memory and
work are positive and finite)."""

from __future__ import annotations

import copy
import importlib.metadata
import math
from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np
import pytest

from dpgames.scenarios import Scenario, registry
from dpgames.scenarios.budget import Estimate
from dpgames.scenarios.invariants import InvariantError, Invariants, check_result
from dpgames.scenarios.kind import MEMBERS, ScenarioKind, checked_result, missing_members
from dpgames.scenarios.result import Metric, MetricSet, Result
from dpgames.scenarios.spec import ScenarioError, Table

ROOT = Path(__file__).resolve().parents[1]
#: A small shipped scenario of each built-in kind (they ship no EXAMPLES: scenarios/ is not package
#: data).
SAMPLE = {
    "allocation": "allocation_small",
    "anonymous_game": "anonymous_crowding",
    "digital_goods": "small_exact",
    "huang_kannan": "huang_kannan_public_project",
    "large_game": "pigou",
    "nst_mix": "nst_pricing",
    "privacy_market": "privacy_market_budget",
}


def registered() -> list[str]:
    return sorted(registry.installed())


def kind_of(name: str) -> ScenarioKind:
    return registry.load(name)


def sample(name: str) -> Scenario:
    kind = kind_of(name)
    path = (
        ROOT / "scenarios" / f"{SAMPLE[name]}.toml" if name in SAMPLE else sorted(kind.EXAMPLES)[0]
    )
    return Scenario.from_file(path)


_results: dict[str, Result] = {}


def result_of(name: str) -> Result:
    if name not in _results:
        _results[name] = sample(name).run()
    return copy.deepcopy(_results[name])


def test_the_example_plugin_is_among_the_kinds_checked():
    try:
        importlib.metadata.distribution("dpgames-voting")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(
            "the example plugin is not installed: python -m pip install -e examples/voting_plugin"
        )
    assert "voting" in registered() and set(SAMPLE) <= set(registered())


@pytest.mark.parametrize("name", registered())
def test_every_member_is_there_with_its_type(name):
    kind = kind_of(name)
    assert missing_members(kind) == [] and isinstance(kind, ScenarioKind)
    assert (
        isinstance(kind.DESCRIPTION, str)
        and kind.DESCRIPTION.strip()
        and "\n" not in kind.DESCRIPTION
    )
    assert all(isinstance(p, Path) and p.suffix == ".toml" and p.is_file() for p in kind.EXAMPLES)
    assert name in SAMPLE or kind.EXAMPLES, "a kind without EXAMPLES needs a SAMPLE scenario here"
    roots = kind.data_roots()
    assert isinstance(roots, tuple) and all(isinstance(p, Path) for p in roots)


@pytest.mark.parametrize("name", registered())
def test_examples_are_scenarios_of_the_kind(name):
    for path in kind_of(name).EXAMPLES:
        assert Scenario.from_file(path).parse().name == name


@pytest.mark.parametrize("name", registered())
def test_metrics_are_declared_once_with_a_meaning(name):
    metrics = kind_of(name).METRICS
    assert isinstance(metrics, MetricSet) and len(metrics) > 0
    for metric in metrics:
        assert isinstance(metric, Metric) and metric.name.isidentifier() and metric.meaning.strip()
        assert metrics[metric.name] is metric
    with pytest.raises(ValueError, match="declared twice"):
        metrics.add(next(iter(metrics)).name, "again")


@pytest.mark.parametrize("name", registered())
def test_invariants_name_declared_metrics_only(name):
    kind = kind_of(name)
    invariants, declared = kind.INVARIANTS, kind.METRICS
    assert isinstance(invariants, Invariants)
    for rule in invariants.rules:
        assert rule.pattern in declared, (
            f"{rule.statement}: {rule.pattern!r} is not a declared metric"
        )
    for allowed in invariants.infinite_ok:
        assert allowed.metric in declared


@pytest.mark.parametrize("name", registered())
def test_parse_refuses_an_unknown_field_naming_it(name):
    scenario = sample(name)
    with pytest.raises(ScenarioError) as err:
        scenario.with_overrides({"no_such_field": 1}).parse()
    assert err.value.field == "no_such_field"


@pytest.mark.parametrize("name", registered())
def test_estimate_gives_positive_finite_stages(name):
    stages = sample(name).parse().estimate()
    assert stages and all(isinstance(s, Estimate) for s in stages)
    for s in stages:
        assert (
            s.what
            and math.isfinite(s.memory)
            and s.memory > 0
            and math.isfinite(s.work)
            and s.work >= 0
        )


@pytest.mark.slow
@pytest.mark.parametrize("name", registered())
def test_build_then_run_is_the_run_and_the_same_seed_gives_the_same_result(name):
    parsed = sample(name).parse()
    kind = parsed.kind
    again = checked_result(name, kind.run(kind.build(parsed.spec, parsed.seed)), kind.METRICS)
    whole = parsed.run()
    assert (
        again.metrics == whole.metrics
        and again.tables == whole.tables
        and again.labels == whole.labels
    )
    assert whole.kind == name and set(whole.metrics) <= {m.name for m in kind.METRICS}
    assert set(whole.labels) == set(whole.metrics)


@pytest.mark.parametrize("name", registered())
def test_each_invariant_catches_its_planted_violation(name):
    """Every rule of the kind that applies to the sample's Result is broken by its planted value and
    the checker then raises an InvariantError (an internal error, not bad input)."""
    result = result_of(name)
    invariants = kind_of(name).INVARIANTS
    check_result(result, invariants)
    for rule in invariants.rules:
        for metric in [k for k in result.metrics if fnmatchcase(k, rule.pattern)]:
            bad = rule.violating(result.metrics)
            if bad is None:
                continue
            planted = copy.deepcopy(result)
            planted.metrics[metric] = bad
            with pytest.raises(InvariantError) as err:
                check_result(planted, invariants)
            assert not isinstance(err.value, ValueError)


@pytest.mark.parametrize("name", registered())
def test_an_undeclared_metric_is_a_bug_of_the_kind(name):
    result = result_of(name)
    result.metrics["never_declared"] = 1.0
    with pytest.raises(RuntimeError, match="does not declare: never_declared"):
        checked_result(name, result, kind_of(name).METRICS)


def test_a_module_lacking_members_is_refused_naming_them():
    class Half:
        DESCRIPTION = "half a kind"

        @staticmethod
        def parse(top: Table) -> None:
            return None

    missing = missing_members(Half)
    assert missing and all(m.split(" ")[0] in MEMBERS for m in missing)
    assert {m.split(" ")[0] for m in missing} == set(MEMBERS) - {"DESCRIPTION", "parse"}


@pytest.mark.parametrize("name", registered())
def test_build_does_not_advance_the_callers_seed(name):
    """The app builds from a seed it keeps: a build must derive its streams without spawning from
    it."""
    parsed = sample(name).parse()
    seed = parsed.seed
    state = (seed.entropy, seed.spawn_key, seed.n_children_spawned)
    parsed.kind.build(parsed.spec, seed)
    assert (seed.entropy, seed.spawn_key, seed.n_children_spawned) == state


def test_two_builds_from_one_seed_draw_the_same_population():
    parsed = sample("digital_goods").parse()
    assert np.array_equal(parsed.build().values, parsed.build().values)


def test_parse_with_an_expected_kind_refuses_a_file_of_another_kind():
    """The app's typed entry point: ``parse(kind=...)`` gives that kind's spec, or names the
    field."""
    digital_goods, nst_mix = kind_of("digital_goods"), kind_of("nst_mix")
    scenario = sample("digital_goods")
    assert scenario.parse(kind=digital_goods).kind is digital_goods
    with pytest.raises(ScenarioError) as err:
        scenario.parse(kind=nst_mix)
    assert err.value.field == "kind" and "'digital_goods'" in str(err.value)
