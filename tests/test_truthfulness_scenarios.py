"""The nst_mix and huang_kannan scenario kinds: shipped files through run_scenario and the CLI, and
bad input named by file and field."""

import json

import pytest

from dpgames import ScenarioError, run_scenario
from dpgames.cli import main
from instances import HK_FILES, NST_FILES, ROOT, quick


@pytest.mark.parametrize("name", NST_FILES)
def test_nst_scenarios_respect_the_theory(name):
    r = quick(name).run()
    m = r.metrics
    assert (
        m["optimum"] >= m["exponential_objective"] - 1e-9
        and m["optimum"] >= m["commitment_objective"] - 1e-9
    )
    assert m["max_gain_exponential"] <= m["gain_bound_exact"] + 1e-12
    if m["gamma"] > 0:
        assert 0 <= m["q_exact"] <= m["q_theorem_exact"] <= 1
        assert m["max_gain_mix"] <= 1e-12 and m["mix_truthful"] is True
    else:
        assert (
            "never told apart" in m["gamma_diagnosis"]
            and m["q_theorem_exact"] == "none (gamma = 0)"
        )
    assert r.tables["scaling"]["n"] == [60]
    assert abs(sum(r.tables["outcome_law"]["exponential"]) - 1) < 1e-9 or m["outcomes"] > 2000


def test_facility_k1_scenario_diagnoses_gamma_zero_and_k2_finds_q():
    k1 = quick("nst_facility_k1").run().metrics
    assert (
        k1["gamma"] == 0 and k1["q_exact"] == "none" and "never punishes" in k1["q_exact_diagnosis"]
    )
    k2 = quick("nst_facility_k2").run().metrics
    assert k2["gamma"] == 1.0 and 0 < k2["q_exact"] < k2["q_theorem_exact"]
    assert (
        k2["loss_per_agent_exponential"]
        <= k2["loss_per_agent_mix"]
        <= k2["loss_per_agent_commitment"]
    )


@pytest.mark.parametrize("name", HK_FILES)
def test_huang_kannan_scenarios_are_truthful_and_ir(name):
    m = run_scenario(ROOT / "scenarios" / f"{name}.toml").metrics
    assert m["truthful"] is True and m["max_gain"] <= 1e-12
    assert m["individually_rational"] is True and m["min_utility"] >= 0
    assert m["optimum"] >= m["expected_welfare"]


def test_public_project_welfare_by_hand():
    r = run_scenario(ROOT / "scenarios" / "huang_kannan_public_project.toml")
    # park: 40 * 1.0 + 35 * 0.2 + 25 * 0.6 - 30 = 32; library 12 + 35 + 15 - 50 = 12; both 48 + 38.5
    # + 22.5 - 80 = 29
    assert r.metrics["optimum"] == pytest.approx(32.0)
    assert dict(
        zip(r.tables["outcome_law"]["outcome"], r.tables["outcome_law"]["welfare"])
    ) == pytest.approx({"nothing": 0.0, "park": 32.0, "library": 12.0, "both": 29.0})


def test_cli_runs_a_truthfulness_scenario(tmp_path, capsys):
    out = tmp_path / "hk.json"
    assert (
        main(
            ["run", str(ROOT / "scenarios" / "huang_kannan_public_project.toml"), "--out", str(out)]
        )
        == 0
    )
    assert "exactly truthful" in capsys.readouterr().out
    assert json.loads(out.read_text())["kind"] == "huang_kannan"


def write(tmp_path, text):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    return path


NST_BASE = """
kind = "nst_mix"
[environment]
type = "facility_location"
graph = "line"
nodes = 6
k = 2
[population]
distribution = "uniform"
n = 20
[mechanism]
epsilon = 1.0
"""


@pytest.mark.parametrize(
    "edit, field, message",
    [
        (("epsilon = 1.0", "epsilon = -1"), "mechanism.epsilon", "a number > 0 or 'balanced'"),
        (("k = 2", "k = 0"), "environment.k", "whole number >= 1"),
        (("k = 2", "k = 7"), "environment.k", "cannot open 7"),
        (
            ('graph = "line"', 'graph = "ring"'),
            "environment.graph",
            "one of 'line', 'grid', 'edges'",
        ),
        (("nodes = 6", "nodes = 6\ncandidates = [0, 99]"), "environment.candidates", "node 99"),
        (
            ("epsilon = 1.0", "epsilon = 1.0\npunishing = [0, 400]"),
            "mechanism.punishing",
            r"\[0, 14\]",
        ),
        (("epsilon = 1.0", "epsilon = 1.0\ncolour = 3"), "mechanism.colour", "unknown key"),
        (("n = 20", "n = 20\nweights = [1, 2]"), "population.weights", "unknown key"),
        (
            ('distribution = "uniform"\nn = 20', 'distribution = "list"\nvalues = [0, 9]'),
            "population.values",
            "agent 1 has type 9",
        ),
        (("k = 2", "k = 1"), None, None),
    ],
)
def test_nst_bad_input_names_file_and_field(tmp_path, edit, field, message):
    path = write(tmp_path, NST_BASE.replace(*edit))
    if field is None:  # the control: k = 1 with 'balanced' is refused with the gap diagnosis
        path = write(
            tmp_path, NST_BASE.replace(*edit).replace("epsilon = 1.0", 'epsilon = "balanced"')
        )
        field, message = (
            "mechanism.epsilon",
            "needs gamma > 0; gamma = 0: types 0 and 1 are never told apart",
        )
    with pytest.raises(ScenarioError, match=rf"bad\.toml: field '{field}': .*{message}"):
        run_scenario(path)


def test_pricing_bad_input(tmp_path):
    base = """
kind = "nst_mix"
[environment]
type = "pricing"
[population]
distribution = "uniform"
n = 30
[mechanism]
epsilon = "balanced"
"""
    with pytest.raises(
        ScenarioError, match=r"field 'mechanism.epsilon': 'balanced' needs a price set"
    ):
        run_scenario(write(tmp_path, base))
    with pytest.raises(ScenarioError, match=r"field 'mechanism.prices': .*finite price set"):
        run_scenario(write(tmp_path, base.replace('"balanced"', '0.5\nprices = "continuous"')))
    with pytest.raises(ScenarioError, match=r"field 'environment.types'"):
        run_scenario(
            write(tmp_path, base.replace('type = "pricing"', 'type = "pricing"\ntypes = [2]'))
        )
    with pytest.raises(ScenarioError, match=r"field 'environment.types': values must be distinct"):
        run_scenario(
            write(
                tmp_path,
                base.replace('type = "pricing"', 'type = "pricing"\ntypes = [0.2, 0.2]').replace(
                    '"balanced"', "0.5\nalpha = 0.25"
                ),
            )
        )
    r = run_scenario(write(tmp_path, base.replace('"balanced"', "0.5\nalpha = 0.25")), seed=1)
    assert (
        r.metrics["outcomes"] == 4
        and r.metrics["types"] == 4
        and r.metrics["largest_move_to_type_grid"] <= 0.125
    )


def test_huang_kannan_bad_input(tmp_path):
    base = """
kind = "huang_kannan"
[environment]
type = "public_project"
outcomes = ["none", "park"]
cost = [0, 3]
[environment.valuations]
family = [0, 1]
[population]
counts = { family = 5 }
[mechanism]
beta = 1.0
"""
    run_scenario(write(tmp_path, base))
    for edit, field, message in [
        (("beta = 1.0", "beta = 0"), "mechanism.beta", "a number > 0"),
        (("cost = [0, 3]", "cost = [0]"), "environment.cost", "need 2 numbers"),
        (
            ("family = [0, 1]", "family = [0, 1, 2]"),
            "environment.valuations.family",
            "need 2 values",
        ),
        (("{ family = 5 }", "{ farmer = 5 }"), "population.counts.farmer", "no such kind of agent"),
        (("{ family = 5 }", "{ family = 0 }"), "population.counts", "at least one agent"),
    ]:
        with pytest.raises(ScenarioError, match=rf"bad\.toml: field '{field}': .*{message}"):
            run_scenario(write(tmp_path, base.replace(*edit)))


def test_scaling_table_tells_no_q_from_not_computed():
    """k = 1 facility: gamma = 0 (the metrics say so), so no q exists at any n: the q columns say
    "none", while the figures that need a q or gamma > 0 were not computed (None, printed "-"); with
    k = 2 (gamma = 1) every cell is a number."""
    from dpgames.scenarios.text import format_number

    k1 = quick("nst_facility_k1").run()
    assert k1.metrics["gamma"] == 0
    table = k1.tables["scaling"]
    assert set(table["q_exact"]) == {"none"} and set(table["q_theorem_exact"]) == {"none"}
    for column in ("loss_per_agent_mix", "loss_bound_per_agent", "sqrt_O_lnO_over_gamma_n"):
        assert set(table[column]) == {None} and format_number(table[column][0]) == "-"
    k2 = quick("nst_facility_k2").run().tables["scaling"]
    assert all(
        isinstance(x, float)
        for c in ("q_exact", "q_theorem_exact", "loss_per_agent_mix")
        for x in k2[c]
    )
