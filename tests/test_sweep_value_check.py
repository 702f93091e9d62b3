"""A swept value that makes the scenario invalid is refused before any cell runs (exit 2, one line
naming the field and the value, no results file); a value invalid only in some combinations still
runs."""

from pathlib import Path

import pytest

from dpgames.cli import main
from dpgames.scenarios import Scenario
from dpgames.sweep import SweepError, plan_sweep

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "sweep_epsilon.toml"
MARKET = ROOT / "scenarios" / "privacy_market_budget.toml"


def test_cli_refuses_a_bad_value_before_running(tmp_path, capsys, monkeypatch):
    ran = []
    monkeypatch.setattr(Scenario, "run", lambda *a, **k: ran.append(1))
    out = tmp_path / "r.jsonl"
    assert (
        main(
            [
                "sweep",
                str(SCENARIO),
                "--set",
                "epsilon=0.5,abc",
                "--set",
                "n=20",
                "--seeds",
                "1",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "mechanism.epsilon" in err and "'abc'" in err, err
    assert not ran and not out.exists() and not out.with_suffix(".summary.csv").exists()


@pytest.mark.parametrize("value", ["-1", "0", "abc", "true"])
def test_plan_refuses_each_value_the_scenario_itself_refuses(value):
    """Oracle: the scenario parsed with that value (the --set text's own parse) refuses it."""
    base = Scenario.from_file(SCENARIO)
    with pytest.raises(ValueError):
        base.with_overrides(
            {"mechanism.epsilon": {"-1": -1, "0": 0, "abc": "abc", "true": True}[value]}
        ).parse(0)
    with pytest.raises(SweepError, match="mechanism.epsilon"):
        plan_sweep(base, [f"epsilon=0.5,{value}", "n=20"], seeds=1)


def test_a_value_valid_in_some_combination_still_plans():
    """Base costs uniform on [2, 3]: high = 1 is invalid with the file's low = 2 but valid with the
    swept low = 0, so the sweep plans (its (low 2, high 1) cells fail when run); with low = 2, 2.5
    only, high = 1 is invalid in every combination and refused."""
    base = Scenario.from_file(MARKET).with_overrides({"population.costs.low": 2})
    with pytest.raises(ValueError):
        base.with_overrides({"population.costs.high": 1}).parse(0)
    base.with_overrides({"population.costs.high": 1, "population.costs.low": 0}).parse(0)
    plan = plan_sweep(base, ["population.costs.high=1,3", "population.costs.low=0,2"], seeds=1)
    assert plan.grid.parameters == {"population.costs.high": [1, 3], "population.costs.low": [0, 2]}
    with pytest.raises(SweepError, match=r"population\.costs\.high = 1 "):
        plan_sweep(base, ["population.costs.high=1,3", "population.costs.low=2,2.5"], seeds=1)


def test_valid_values_plan_as_before():
    plan = plan_sweep(SCENARIO, ["epsilon=0.1,0.5,1", "n=20"], seeds=2)
    assert plan.grid.parameters["mechanism.epsilon"] == [0.1, 0.5, 1]
