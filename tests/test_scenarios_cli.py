import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpgames
import dpgames.scenarios
from dpgames import ScenarioError, run_scenario
from dpgames.cli import main

ROOT = Path(__file__).resolve().parents[1]
AUCTION_SCENARIOS = ["digital_goods", "small_exact", "continuous", "from_csv"]


@pytest.mark.slow
@pytest.mark.parametrize("name", AUCTION_SCENARIOS)
def test_shipped_scenarios_run_and_respect_the_theory(name):
    r = run_scenario(ROOT / "scenarios" / f"{name}.toml")
    m = r.metrics
    assert 0 < m["expected_revenue"] <= m["opt"] + 1e-9
    assert m["f2"] <= m["opt"] + 1e-12
    assert m["max_misreport_gain"] <= m["bound_2eps"]
    assert m["gains_within_bounds"] is True
    assert 0 < m["max_privacy_loss"] <= m["epsilon"] / 2 + 1e-12  # monotone score: eps/2
    assert r.provenance["seed"] is not None and len(r.provenance["scenario_sha256"]) == 64
    assert r.provenance["dpgames"] == dpgames.__version__


def test_small_exact_scenario_against_hand_computation():
    r = run_scenario(ROOT / "scenarios" / "small_exact.toml")
    values = [0.95, 0.9, 0.8, 0.8, 0.75, 0.6, 0.55, 0.5, 0.4, 0.3, 0.2, 0.1]
    assert r.metrics["opt"] == pytest.approx(4.0)  # price 0.5: eight buyers
    assert r.metrics["max_welfare"] == pytest.approx(sum(values))
    assert "rsop_ci_low" not in r.metrics  # exact for n <= 20
    probs = r.tables["price_law"]["probability"]
    assert len(probs) == 20 and sum(probs) == pytest.approx(1.0)


def test_same_seed_same_result_and_seed_override():
    path = ROOT / "scenarios" / "digital_goods.toml"
    a, b = run_scenario(path), run_scenario(path)
    assert a.to_json() == b.to_json()
    c = run_scenario(path, seed=99)
    assert (
        c.provenance["seed"] == 99
        and c.metrics["expected_revenue"] != a.metrics["expected_revenue"]
    )


def test_overrides_go_through_validation():
    path = ROOT / "scenarios" / "small_exact.toml"
    r = run_scenario(path, overrides={"mechanism.epsilon": 0.25})
    assert r.metrics["epsilon"] == 0.25
    with pytest.raises(ScenarioError, match="mechanism.epsilon"):
        run_scenario(path, overrides={"mechanism.epsilon": -1})


def test_result_json_round_trip():
    r = run_scenario(ROOT / "scenarios" / "small_exact.toml")
    again = dpgames.scenarios.Result.from_json(r.to_json())
    assert again.metrics == r.metrics and again.tables == r.tables
    assert r.metrics_csv().splitlines()[0] == "metric,value"


def test_cli_prints_the_table(capsys):
    assert main(["run", str(ROOT / "scenarios" / "small_exact.toml")]) == 0
    out = capsys.readouterr().out
    for label in (
        "expected revenue",
        "OPT",
        "F2",
        "RSOP",
        "revenue / OPT",
        "welfare",
        "largest gain from misreporting",
        "Prop 10.1",
    ):
        assert label in out


def test_cli_json_and_out(tmp_path, capsys):
    out_file = tmp_path / "sub" / "result.json"
    assert (
        main(
            [
                "run",
                str(ROOT / "scenarios" / "small_exact.toml"),
                "--json",
                "--seed",
                "5",
                "--out",
                str(out_file),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads(out_file.read_text())
    assert printed == saved and saved["provenance"]["seed"] == 5


def write(tmp_path, text, name="s.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = """kind = "digital_goods"
[population]
distribution = "uniform"
n = 10
[mechanism]
epsilon = 1.0
"""


@pytest.mark.parametrize(
    "text, field, allowed",
    [
        ("kind = 'digital_goods'\n[population\n", None, "malformed TOML"),
        (GOOD + "colour = 'red'\n", "mechanism.colour", "unknown key"),
        (GOOD.replace("kind", "seed = 1\nflavour = 2\nkind"), "flavour", "unknown key"),
        (GOOD.replace("epsilon = 1.0", "epsilon = 0"), "mechanism.epsilon", "> 0"),
        (GOOD.replace("epsilon = 1.0", "epsilon = -2"), "mechanism.epsilon", "> 0"),
        (GOOD.replace("epsilon = 1.0", "epsilon = 1.0\nalpha = 1.5"), "mechanism.alpha", "(0, 1]"),
        (GOOD.replace("epsilon = 1.0", "epsilon = 1.0\nalpha = 0"), "mechanism.alpha", "(0, 1]"),
        (GOOD.replace("n = 10", "n = 0"), "population.n", ">= 1"),
        (
            GOOD.replace('distribution = "uniform"\nn = 10', 'distribution = "list"\nvalues = []'),
            "population.values",
            "non-empty",
        ),
        (
            GOOD.replace(
                'distribution = "uniform"\nn = 10', 'distribution = "list"\nvalues = [0.5, 1.5]'
            ),
            "population.values",
            "outside [0, 1]",
        ),
        (
            GOOD.replace(
                'distribution = "uniform"\nn = 10', 'distribution = "csv"\npath = "missing.csv"'
            ),
            "population.path",
            "not found",
        ),
        (GOOD.replace('"uniform"', '"gaussian"'), "population.distribution", "one of"),
        (GOOD.replace("digital_goods", "poker"), "kind", "one of"),
        (GOOD.replace("[mechanism]\nepsilon = 1.0\n", ""), "mechanism", "required"),
    ],
)
def test_bad_scenarios_name_file_field_and_what_is_allowed(tmp_path, capsys, text, field, allowed):
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        run_scenario(path)
    message = str(info.value)
    assert str(path) in message and allowed in message
    if field:
        assert f"field '{field}'" in message
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dpgames: error: ") and "Traceback" not in err


def test_csv_with_a_bad_row(tmp_path):
    (tmp_path / "bids.csv").write_text("value\n0.5\nabc\n")
    path = write(
        tmp_path,
        GOOD.replace('distribution = "uniform"\nn = 10', 'distribution = "csv"\npath = "bids.csv"'),
    )
    with pytest.raises(
        ScenarioError,
        match=r"field 'population.path'.*line 3, column 1: the value is not a finite number",
    ):
        run_scenario(path)


@pytest.mark.slow
def test_missing_file_exits_2_without_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "dpgames.cli", "run", "no/such/file.toml"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "dpgames: error: no/such/file.toml: scenario file not found"


@pytest.mark.slow
def test_population_types_follow_the_distribution():
    r = run_scenario(ROOT / "scenarios" / "continuous.toml")
    assert r.metrics["n"] == 2000
    assert np.isclose(
        r.metrics["max_welfare"] / 2000, 0.4 * 0.2 + 0.3 * 0.45 + 0.2 * 0.7 + 0.1 * 0.9, atol=0.02
    )
