"""The public scenario builders: settings as a dict -> the same numbers as `dpgames run`; spec ->
TOML -> spec.

Oracles: the Result of `dpgames run` (the kind's own path) for parity; a brute-force OPT over the
bids drawn independently from the documented stream; tomllib reading back what the writer wrote."""

from __future__ import annotations

import json
import math
import tomllib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames.cli import main
from dpgames.scenarios import Scenario, ScenarioError, digital_goods as dg, run_scenario
from dpgames.scenarios.toml_writer import TomlWriteError, to_toml

SETTINGS = {
    "kind": "digital_goods",
    "seed": 2026,
    "title": "page settings",
    "population": {"distribution": "uniform", "n": 300, "low": 0.0, "high": 1.0},
    "mechanism": {"epsilon": 0.5, "prices": "grid"},
    "baselines": {"posted_price": 0.5, "rsop_samples": 500},
    "audit": {"enabled": False},
}


def test_build_gives_the_runs_numbers_on_the_shipped_scenario():
    result = run_scenario("scenarios/digital_goods.toml")
    parsed = Scenario.from_file("scenarios/digital_goods.toml").parse()
    built = dg.build(parsed.spec, parsed.seed)
    m = result.metrics
    assert built.expected_revenue == m["expected_revenue"]
    assert (built.opt.revenue, built.opt.price, built.f2) == (m["opt"], m["opt_price"], m["f2"])
    assert (built.rsop.mean, built.rsop.ci_low, built.rsop.ci_high) == (
        m["rsop_revenue"],
        m["rsop_ci_low"],
        m["rsop_ci_high"],
    )
    assert built.posted_revenue == m["posted_price_revenue"]
    assert built.revenue_bound(parsed.spec.beta) == m["revenue_bound"]
    assert built.sampled_price == m["sampled_price"]
    assert built.values.size == m["n"]


def test_the_population_is_the_documented_stream_and_opt_is_brute_force():
    parsed = Scenario.from_dict(SETTINGS).parse()
    built = dg.build(parsed.spec, parsed.seed)
    # Independent of the kind: the first child stream of SeedSequence(2026), uniform draws.
    values = np.random.default_rng(np.random.SeedSequence(2026).spawn(3)[0]).uniform(0.0, 1.0, 300)
    np.testing.assert_array_equal(built.values, values)
    opt = max(p * sum(v >= p for v in values) for p in values)
    assert math.isclose(built.opt.revenue, opt, rel_tol=1e-12)


@pytest.mark.parametrize(
    "population",
    [
        {"distribution": "uniform", "n": 200},
        {"distribution": "beta", "n": 150, "a": 2.0, "b": 5.0},
        {"distribution": "list", "values": [0.1, 0.5, 0.5, 0.9, 1.0]},
    ],
)
@pytest.mark.parametrize("prices", ["grid", "continuous", [0.25, 0.5, 0.75, 1.0]])
def test_settings_dict_saved_as_toml_reproduce_the_run(tmp_path, population, prices):
    data = {**SETTINGS, "population": population, "mechanism": {"epsilon": 0.7, "prices": prices}}
    scenario = Scenario.from_dict(data)
    path = tmp_path / "saved.toml"
    path.write_text(scenario.to_toml())
    saved = run_scenario(path)
    direct = scenario.run()
    assert saved.metrics == direct.metrics and saved.tables == direct.tables
    assert saved.provenance["scenario_sha256"] == direct.provenance["scenario_sha256"]
    built = dg.build(scenario.parse().spec, scenario.parse().seed)
    assert built.expected_revenue == direct.metrics["expected_revenue"]
    assert built.rsop.mean == direct.metrics["rsop_revenue"]


def test_the_cli_prints_the_builders_numbers(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(Scenario.from_dict(SETTINGS).to_toml())
    assert main(["run", str(path), "--json"]) == 0
    import json

    printed = json.loads(capsys.readouterr().out)["metrics"]
    parsed = Scenario.from_dict(SETTINGS).parse()
    built = dg.build(parsed.spec, parsed.seed)
    assert (
        printed["expected_revenue"] == built.expected_revenue
        and printed["opt"] == built.opt.revenue
    )


def test_parsed_seed_is_fresh_on_every_access():
    parsed = Scenario.from_dict(SETTINGS).parse(seed=7)
    first = parsed.seed
    first.spawn(3)
    assert parsed.seed.spawn(1)[0].entropy == 7 and parsed.seed.n_children_spawned == 0


def test_from_dict_refuses_what_toml_cannot_hold():
    with pytest.raises(ScenarioError, match=r"field 'mechanism.epsilon'.*NoneType"):
        Scenario.from_dict({**SETTINGS, "mechanism": {"epsilon": None}})
    with pytest.raises(TomlWriteError, match="must be a table"):
        to_toml([1, 2])


def test_invalid_settings_are_the_files_errors():
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict({**SETTINGS, "mechanism": {"epsilon": -1.0}}).parse()
    assert err.value.field == "mechanism.epsilon"


# ------------------------------------------------------------------ the TOML writer round trip

_keys = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=8)
_scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.text(st.characters(codec="utf-8"), max_size=12),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=12,
)
_tables = st.recursive(
    st.dictionaries(_keys, _values, max_size=4),
    lambda inner: st.dictionaries(
        _keys, inner | st.lists(inner, min_size=1, max_size=2) | _values, max_size=4
    ),
    max_leaves=6,
)


@pytest.mark.slow
@settings(max_examples=50, deadline=None, derandomize=True)
@given(_tables)
def test_toml_round_trip(data):
    assert tomllib.loads(to_toml(data)) == data


@pytest.mark.slow
@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    eps=st.floats(1e-3, 50.0),
    n=st.integers(1, 60),
    seed=st.integers(0, 2**63),
    posted=st.floats(0.0, 1.0),
    convention=st.sampled_from(["dwork-roth", "mcsherry-talwar"]),
    title=st.text(max_size=20).filter(lambda t: t.strip() != "" and "\x00" not in t),
)
def test_spec_to_toml_to_spec(eps, n, seed, posted, convention, title):
    data = {
        **SETTINGS,
        "seed": seed,
        "title": title,
        "population": {"distribution": "uniform", "n": n},
        "mechanism": {"epsilon": eps, "convention": convention},
        "baselines": {"posted_price": posted},
    }
    try:
        scenario = Scenario.from_dict(data)
        parsed = scenario.parse()
    except ScenarioError:
        return
    again = Scenario.from_text(scenario.to_toml())
    assert again.data == data and again.sha256 == scenario.sha256
    spec = again.parse().spec
    assert (spec.auction.epsilon, spec.auction.convention, spec.posted_price, spec.n) == (
        parsed.spec.auction.epsilon,
        parsed.spec.auction.convention,
        parsed.spec.posted_price,
        parsed.spec.n,
    )


# ------------------------------------------------------------------ specs hold parsed values

SHIPPED = sorted(p.name for p in __import__("pathlib").Path("scenarios").glob("*.toml"))


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_spec_is_plain_data(name):
    """No Table and no closure inside a spec: it pickles (a closure does not) and its fields hold no
    Table at any depth."""
    import dataclasses
    import pickle
    import types

    from dpgames.scenarios import Table

    try:
        parsed = Scenario.from_file(f"scenarios/{name}").parse()
    except ScenarioError as exc:  # a TNTP network absent on this machine
        pytest.skip(str(exc))
    pickle.dumps(parsed.spec)
    stack = [parsed.spec]
    while stack:
        node = stack.pop()
        assert not isinstance(node, (Table, types.FunctionType, types.MethodType)), (name, node)
        if dataclasses.is_dataclass(node):
            stack.extend(getattr(node, f.name) for f in dataclasses.fields(node))
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["nst_pricing.toml", "nst_facility_k2.toml"])
def test_nst_build_is_the_runs_report(name):
    from dpgames.scenarios import nst_mix

    parsed = Scenario.from_file(f"scenarios/{name}").parse()
    built = nst_mix.build(parsed.spec, parsed.seed)
    result = Scenario.from_file(f"scenarios/{name}").run()
    m = result.metrics
    assert built.report.gap.gamma == m["gamma"] and built.report.least.q == m["q_exact"]
    assert built.exponential.epsilon == m["epsilon"] and built.profile.n == m["n"]
    assert built.commitment.n_punishing == m["punishing"]


_odd = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.lists(st.floats(-1, 2), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    field=st.sampled_from(
        [
            "seed",
            "title",
            "population.n",
            "population.distribution",
            "population.values",
            "mechanism.epsilon",
            "mechanism.prices",
            "mechanism.alpha",
            "baselines.posted_price",
            "audit.lies",
            "audit.beta",
            "extra",
        ]
    ),
    value=_odd,
)
def test_from_dict_gives_a_clean_error_or_a_checked_result(field, value):
    """Settings a page might send: ScenarioError/ValidationError naming a field, or a Result that
    passed its invariants (Scenario.run checks them); the same through the saved TOML."""
    from dpgames.validation import ValidationError

    data = json.loads(
        json.dumps(
            {
                **SETTINGS,
                "population": {"distribution": "uniform", "n": 30},
                "baselines": {"rsop_samples": 50},
            }
        )
    )
    *parents, leaf = field.split(".")
    node = data
    for name in parents:
        node = node.setdefault(name, {})
    node[leaf] = value
    try:
        scenario = Scenario.from_dict(data)
        result = scenario.run()
    except ValidationError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    again = Scenario.from_text(scenario.to_toml()).run()
    assert again.metrics == result.metrics
