"""The checks that make the scenario kinds' types true (mypy on dpgames/scenarios).

The spec readers' typed returns (a ``None`` default is the only way to get ``None``; ``choice``
returns one of its options, which is what lets a type checker type it as the caller's ``Literal``),
and the explicit checks that replaced implicit assumptions: a price table of a law that is neither
on a grid nor on the continuum, a Huang-Kannan spec whose located agents are missing, the facility
environment built when not given, tables converted to plain lists.

Oracles: the options and values written in the tests; hand-written expected tables; the same
function given the environment it would otherwise build."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames.mechanisms.price_laws import PriceLaw
from dpgames.scenarios import Scenario, ScenarioError, digital_goods as dg, huang_kannan as hk
from dpgames.scenarios.nst_mix.build import mechanisms
from dpgames.scenarios.result import Metrics
from dpgames.scenarios.spec import Table
from dpgames.validation import ValidationError

OPTIONS = ("gaussian", "tree", "none")
TOML_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(OPTIONS),
    st.lists(st.sampled_from(OPTIONS), max_size=2),
)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(value=TOML_VALUES)
def test_choice_returns_one_of_its_options_or_names_the_field(value):
    table = Table({"noise": value}, "s.toml", "mechanism.")
    try:
        got = table.choice("noise", OPTIONS, "gaussian")
    except ScenarioError as error:
        assert error.field == "mechanism.noise"
        assert not (isinstance(value, str) and value in OPTIONS)
        assert "'gaussian', 'tree', 'none'" in str(error)
    else:
        assert isinstance(value, str) and value in OPTIONS and got == value


@pytest.mark.parametrize(
    ("reader", "args"),
    [
        ("number", ()),
        ("integer", ()),
        ("boolean", ()),
        ("string", ()),
        ("choice", (OPTIONS,)),
    ],
)
def test_a_none_default_is_the_only_way_to_get_none(reader, args):
    table = Table({}, "s.toml", "mechanism.")
    assert getattr(table, reader)("absent", *args, None) is None
    with pytest.raises(ScenarioError, match="'mechanism.absent': is required"):
        getattr(table, reader)("absent", *args)


@pytest.mark.parametrize(
    ("reader", "value", "args"),
    [
        ("number", 2, ()),
        ("integer", 3, ()),
        ("boolean", False, ()),
        ("string", "x", ()),
        ("choice", "tree", (OPTIONS,)),
    ],
)
def test_a_present_field_is_read_whatever_the_default(reader, value, args):
    table = Table({"key": value}, "s.toml")
    got = getattr(table, reader)("key", *args, None)
    assert got == value and type(got) is type(value if reader != "number" else float(value))


def test_metrics_result_makes_every_column_a_plain_list():
    tables = {"t": {"a": np.array([1.0, np.inf]), "b": ("x", "y"), "c": np.arange(2)}}
    result = Metrics().result("k", tables)
    assert result.tables == {"t": {"a": [1.0, "inf"], "b": ["x", "y"], "c": [0, 1]}}
    assert all(type(v) is int for v in result.tables["t"]["c"])


DIGITAL_GOODS = {
    "kind": "digital_goods",
    "seed": 3,
    "mechanism": {"epsilon": 1.0},
    "population": {"distribution": "list", "values": [0.9, 0.2, 0.6, 0.2]},
}


def test_price_table_refuses_a_law_neither_on_a_grid_nor_on_the_continuum():
    class OtherLaw(PriceLaw):
        pass

    with pytest.raises(
        ValidationError, match="law must be a GridPriceLaw or a ContinuousPriceLaw, got OtherLaw"
    ):
        dg.price_table(OtherLaw())


def test_a_digital_goods_run_keeps_the_bids_its_law_and_audits_use():
    parsed = Scenario.from_dict(DIGITAL_GOODS).parse()
    built = dg.build(parsed.spec, parsed.seed)
    assert built.bids is built.law.bids
    assert built.bids.values.tolist() == [0.9, 0.2, 0.6, 0.2]
    assert built.bids.sorted.tolist() == [0.2, 0.2, 0.6, 0.9]


HK_FACILITY = {
    "kind": "huang_kannan",
    "seed": 5,
    "mechanism": {"beta": 1.0},
    "environment": {"type": "facility_location", "graph": "line", "nodes": 4, "k": 1},
    "population": {"distribution": "uniform", "n": 6},
}
HK_PROJECT = {
    "kind": "huang_kannan",
    "mechanism": {"beta": 1.0},
    "environment": {
        "type": "public_project",
        "outcomes": ["none", "park"],
        "cost": [0, 3],
        "valuations": {"fan": [0, 1.0], "foe": [0, -0.5]},
    },
    "population": {"counts": {"fan": 5, "foe": 2}},
}


def test_huang_kannan_agents_are_the_population_or_the_projects_counts():
    assert Scenario.from_dict(HK_FACILITY).parse().spec.agents == 6
    assert Scenario.from_dict(HK_PROJECT).parse().spec.agents == 5 + 2
    assert Scenario.from_dict(HK_PROJECT).run().metrics["n"] == 7


def test_a_facility_huang_kannan_spec_without_its_population_is_refused_naming_it():
    parsed = Scenario.from_dict(HK_FACILITY).parse()
    spec = dataclasses.replace(parsed.spec, population=None)
    with pytest.raises(
        ValidationError, match="population is required for a facility-location environment"
    ):
        _ = spec.agents
    with pytest.raises(ValidationError) as error:
        hk.build(spec, parsed.seed)
    assert error.value.field == "population"


NST_FACILITY = {
    "kind": "nst_mix",
    "seed": 1,
    "mechanism": {"epsilon": 1.0},
    "environment": {"type": "facility_location", "graph": "line", "nodes": 4, "k": 2},
    "population": {"distribution": "uniform", "n": 6},
}


def test_nst_facility_environment_is_built_when_not_given():
    spec = Scenario.from_dict(NST_FACILITY).parse().spec
    seed = np.random.SeedSequence(4)
    given_env = mechanisms(spec, spec.environment.facility.build(), None, seed, 1.0)
    built_here = mechanisms(spec, None, None, seed, 1.0)
    assert np.array_equal(given_env[1].classes, built_here[1].classes)
    assert np.array_equal(given_env[1].class_sizes, built_here[1].class_sizes)
    np.testing.assert_array_equal(
        given_env[0].distribution(given_env[1]).probabilities,
        built_here[0].distribution(built_here[1]).probabilities,
    )
