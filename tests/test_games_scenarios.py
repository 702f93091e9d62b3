"""The large-game scenario files run through run_scenario and the CLI; bad input names file and
field."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from dpgames import ScenarioError, run_scenario
from dpgames.cli import main
from dpgames.games import PrivateMediator, RoutingGame, grid_network
from dpgames.games.atomic import round_players
from dpgames.scenarios.loader import Scenario
from mediator_oracle import oracle_run

ROOT = Path(__file__).resolve().parents[1]
TNTP = Path(os.environ.get("DPGAMES_TNTP_DIR", ROOT.parent / "shared" / "data" / "tntp"))
needs_tntp = pytest.mark.skipif(
    not TNTP.is_dir(), reason=f"TNTP networks not found at {TNTP} (set DPGAMES_TNTP_DIR)"
)


def test_pigou_scenario_reports_the_closed_form():
    result = run_scenario(ROOT / "scenarios" / "pigou.toml", overrides={"mediator.rounds": 200})
    m = result.metrics
    assert m["ue_total_cost"] == pytest.approx(1000) and m["so_total_cost"] == pytest.approx(750)
    assert m["price_of_anarchy"] == pytest.approx(4 / 3)
    assert m["epsilon"] == pytest.approx(1.0, rel=1e-6)
    assert m["ignore_gain"] <= m["theorem_bound"]


@pytest.mark.slow
def test_grid_scenario_through_the_cli(tmp_path, capsys):
    """The grid file's game, rebuilt from what its comments state (a 10 x 10 grid and 20 OD pairs
    drawn from grid_seed = 1, 10,000 drivers split evenly), played by the plain numpy mediator of
    tests/mediator_oracle.py: without noise the dynamics are deterministic, so its alpha is the
    scenario's to rounding."""
    out = tmp_path / "grid.json"
    args = [
        "run",
        str(ROOT / "scenarios" / "grid.toml"),
        "--json",
        "--out",
        str(out),
        "--set",
        "mediator.noise=none",
        "--set",
        "mediator.rounds=200",
    ]
    assert main(args) == 0
    data = json.loads(out.read_text())
    gen = np.random.default_rng(1)
    network = grid_network(10, 10, gen)
    ends = np.array([gen.choice(100, size=2, replace=False) for _ in range(20)])
    model = RoutingGame(network, ends[:, 0], ends[:, 1], round_players(np.full(20, 10_000 / 20)))
    mediator = PrivateMediator(rounds=200, noise="none", max_paths=8, dynamics="hedge")
    oracle = oracle_run(mediator, model, round_players(model.demand), 0)
    assert data["metrics"]["players"] == 10_000
    assert data["metrics"]["alpha"] == pytest.approx(oracle.max_alpha, rel=1e-9)
    assert "misreport_gain" in data["metrics"]


@pytest.mark.slow
@needs_tntp
@pytest.mark.parametrize("name", ["braess", "sioux_falls"])
def test_tntp_scenarios_run(name, monkeypatch):
    monkeypatch.setenv("DPGAMES_TNTP_DIR", str(TNTP))
    overrides = {"mediator.rounds": 200, "incentives.enabled": False}
    result = run_scenario(ROOT / "scenarios" / f"{name}.toml", overrides=overrides)
    assert result.metrics["ue_relative_gap"] <= 1e-4
    assert result.metrics["cost_over_so"] >= 1 - 1e-9 or name == "braess"


@needs_tntp
def test_tree_counter_noise_runs_and_is_accounted(monkeypatch):
    monkeypatch.setenv("DPGAMES_TNTP_DIR", str(TNTP))
    result = run_scenario(
        ROOT / "scenarios" / "braess.toml",
        overrides={"mediator.noise": "tree", "mediator.rounds": 64, "incentives.enabled": False},
    )
    assert result.metrics["epsilon"] == pytest.approx(2.0, rel=1e-6)
    assert "reported type" in result.provenance["guarantee"]


@pytest.mark.parametrize(
    "text, field",
    [
        ('[game]\nsource = "maze"', "game.source"),
        ('[game]\nsource = "grid"\nrows = 1\ncols = 3\npairs = 2\nplayers = 10', "game.rows"),
        (
            '[game]\nsource = "resources"\nfree = [1.0]\ncoef = '
            "[0.0]\n[[game.classes]]\nplayers = 3\nactions = [[4]]",
            "game.classes[0].actions",
        ),
        ('[game]\nsource = "tntp"\nnetwork = "Nowhere"\npath = "."', "game.path"),
        (
            '[game]\nsource = "grid"\nrows = 3\ncols = 3\npairs = 2\nplayers = '
            "10\n[mediator]\nrounds = 10\nwarmup = 10",
            "mediator.warmup",
        ),
        (
            '[game]\nsource = "grid"\nrows = 3\ncols = 3\npairs = 2\nplayers = '
            "10\n[mediator]\nepsilon = -1",
            "mediator.epsilon",
        ),
    ],
)
def test_bad_input_names_file_and_field(tmp_path, text, field):
    path = tmp_path / "bad.toml"
    path.write_text('kind = "large_game"\n' + text + "\n")
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: field '{field}'")):
        Scenario.from_file(path).run(seed=0)


def test_bad_tntp_file_is_reported_by_the_cli(tmp_path, capsys):
    folder = tmp_path / "Net"
    folder.mkdir()
    (folder / "Net_net.tntp").write_text(
        "<END OF METADATA>\n1 2 1 1 1 0.15 4 0 0 1 ;\n2 1 1 1 oops 0.15 4 0 0 1 ;\n"
    )
    (folder / "Net_trips.tntp").write_text("<END OF METADATA>\nOrigin 1\n 2 : 3;\n")
    scenario = tmp_path / "net.toml"
    scenario.write_text(
        f'kind = "large_game"\n[game]\nsource = "tntp"\nnetwork = "Net"\npath = "{tmp_path}"\n'
    )
    assert main(["run", str(scenario)]) == 2
    assert f"{folder / 'Net_net.tntp'}:3:" in capsys.readouterr().err
