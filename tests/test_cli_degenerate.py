"""Valid or nearly valid input at its edges: each ends in a result (exit 0) or in one readable line
on stderr with exit code 2 (the CLI's contract, ``dpgames --help``), never an internal error.

Oracles: the exit code and the one line the contract states; where a value is valid, the result's
own figures checked against what the input implies (a population of values in [0, 0] has every value
0)."""

from __future__ import annotations

import json
import os
import shutil
import tomllib
import tracemalloc
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from dpgames._executors import ExecutorError, run_all
from dpgames.cli import main
from dpgames.scenarios import Scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
TNTP = Path(os.environ.get("DPGAMES_TNTP_DIR", "/work/shared/data/tntp"))


def one_line(capsys, argv: list[str]) -> str:
    """Run the CLI; assert exit code 2 and ONE line on stderr; return it."""
    code = main(argv)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("dpgames: error: "), err
    assert "internal error" not in lines[0]
    return lines[0]


def edited(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of a shipped scenario with ``old`` replaced by ``new`` (which must occur)."""
    text = (SCENARIOS / name).read_text()
    assert old in text, old
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize(
    "outside, shown", [("[[0.5], 0.45]", "[[0.5], 0.45]"), ('["a", 0.45]', "['a', 0.45]")]
)
def test_an_outside_list_holding_a_list_or_a_string_is_named(tmp_path, capsys, outside, shown):
    path = edited(
        tmp_path, "anonymous_market_entry.toml", "outside = [0.5, 0.45]", f"outside = {outside}"
    )
    line = one_line(capsys, ["run", str(path)])
    assert "game.outside" in line and shown in line


@pytest.mark.parametrize("law", ["{ a = 1 }", "[1]", "1"])
def test_a_cost_law_that_is_not_a_name_is_named(tmp_path, capsys, law):
    path = edited(tmp_path, "privacy_market_budget.toml", 'law = "uniform"', f"law = {law}")
    line = one_line(capsys, ["check", str(path)])
    assert "population.costs.law" in line and "uniform" in line


def test_a_population_up_to_minus_zero_is_every_value_zero(tmp_path, capsys):
    """high = -0.0 is high = 0: with low = 0 every value is 0, so no price sells and the revenue is
    0."""
    path = edited(tmp_path, "digital_goods.toml", "high = 1.0", "high = -0.0")
    assert main(["run", str(path), "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)["metrics"]
    assert metrics["max_welfare"] == 0.0
    assert metrics["expected_revenue"] == 0.0


@pytest.mark.parametrize("lies", [2**31, 2**63 - 1])
def test_a_huge_lie_count_is_refused_by_the_budget_without_building_the_grid(
    tmp_path, capsys, lies
):
    """The grid of lies is built when the run starts, after the budget: parsing allocates nothing in
    proportion to the count (a grid of 2^31 lies is 16 GiB)."""
    path = edited(tmp_path, "continuous.toml", "lies = 201", f"lies = {lies}")
    tracemalloc.start()
    try:
        line = one_line(capsys, ["run", str(path)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ("--max-work" in line or "--max-memory" in line) and "reports" in line
    assert peak < 50e6


def test_mediator_rounds_beyond_int64_are_refused_with_the_limits_lifted(tmp_path, capsys):
    path = edited(tmp_path, "pigou.toml", "rounds = 1000", f"rounds = {10**30}")
    line = one_line(capsys, ["run", str(path), "--max-work", "inf", "--max-memory", "inf"])
    assert "mediator.rounds" in line


def tiny_network(tmp_path: Path, demand: str) -> Path:
    """Braess's network with one OD demand of ``demand``, as the TNTP folder ``Tiny``."""
    folder = tmp_path / "tntp" / "Tiny"
    folder.mkdir(parents=True)
    shutil.copy(TNTP / "Braess" / "Braess_net.tntp", folder / "Tiny_net.tntp")
    trips = (TNTP / "Braess" / "Braess_trips.tntp").read_text()
    assert "2 :     6.0;" in trips
    trips = trips.replace("2 :     6.0;", f"2 :     {demand};").replace(
        "<TOTAL OD FLOW>   6.0", f"<TOTAL OD FLOW> {demand}"
    )
    (folder / "Tiny_trips.tntp").write_text(trips)
    return folder.parent


@pytest.mark.skipif(
    not (TNTP / "Braess").is_dir(), reason="needs the TNTP networks (DPGAMES_TNTP_DIR)"
)
def test_a_trips_file_with_a_tiny_demand_is_told_it_rounds_to_no_player(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("DPGAMES_TNTP_DIR", str(tiny_network(tmp_path, "1e-300")))
    path = edited(tmp_path, "braess.toml", 'network = "Braess"', 'network = "Tiny"')
    line = one_line(capsys, ["run", str(path)])
    assert "demand" in line and "0 whole players" in line


@pytest.mark.skipif(
    not (TNTP / "Braess").is_dir(), reason="needs the TNTP networks (DPGAMES_TNTP_DIR)"
)
def test_a_subnormal_demand_scale_is_told_it_rounds_to_no_player(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DPGAMES_TNTP_DIR", str(TNTP))
    path = edited(
        tmp_path, "braess.toml", 'network = "Braess"', 'network = "Braess"\ndemand_scale = 5e-324'
    )
    line = one_line(capsys, ["run", str(path)])
    assert "demand_scale" in line and "0 whole players" in line


@pytest.mark.parametrize(
    "make, named",
    [
        (lambda tmp: ["--out", str(tmp)], "is a folder"),
        (lambda tmp: ["--out", "."], "is a folder"),
        (lambda tmp: ["--out", str(tmp / ("x" * 300))], "File name too long"),
        (lambda tmp: ["--out", str(tmp / ("x" * 300) / "r.json")], "File name too long"),
        (lambda tmp: ["--tables-dir", str(tmp / ("y" * 300))], "File name too long"),
        (lambda tmp: ["--out", str(tmp / "a\0b")], "NUL byte"),
        (lambda tmp: ["--out", str(tmp / "file.txt" / "r.json")], "is a file"),
    ],
)
def test_an_output_path_that_cannot_be_written_is_refused_before_the_run(
    tmp_path, capsys, make, named
):
    """Refused before any work: nothing is printed on stdout (the run's result was printed
    first)."""
    (tmp_path / "file.txt").write_text("x")
    argv = ["run", str(SCENARIOS / "allocation_small.toml"), *make(tmp_path)]
    line = one_line(capsys, argv) if "File name too long" not in named else None
    if line is None:  # the file system's own words, or dpgames' when the name is checked first
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and len(err.splitlines()) == 1, err
        assert "File name too long" in err or "more than the file system allows" in err
        # the name is shortened: one readable line
        assert "x" * 201 not in err and "y" * 201 not in err
    else:
        assert named in line
    assert capsys.readouterr().out == ""


class _BrokenPool:
    """An executor whose pool is already broken when the second task is submitted."""

    def __init__(self):
        self.submitted = 0

    def submit(self, fn, *args):
        self.submitted += 1
        if self.submitted > 1:
            raise BrokenProcessPool("A child process terminated abruptly")
        from concurrent.futures import Future

        future: Future = Future()
        future.set_result(fn(*args))
        return future


def test_a_pool_broken_between_two_submissions_is_a_worker_that_died():
    """A worker killed while the next cell is being submitted: the same clean error as one killed
    while its cell runs (not an internal BrokenProcessPool)."""
    with pytest.raises(ExecutorError, match="a worker process died"):
        list(run_all(_BrokenPool(), lambda x: x, [(1,), (2,), (3,)], window=10))


def test_costs_of_almost_nothing_are_refused_in_one_line(tmp_path, capsys):
    """Costs uniform on [0, 5e-324]: the envy-free benchmark's eps = B / (m c) leaves the float
    range, so the run is refused up front in one line naming the costs (it was a
    ZeroDivisionError)."""
    path = edited(
        tmp_path,
        "privacy_market_budget.toml",
        'costs = { law = "uniform", low = 0, high = 1 }',
        'costs = { law = "uniform", low = -0.0, high = 5e-324 }',
    )
    assert main(["run", str(path), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "costs" in err and "float range" in err, err


@pytest.mark.slow
def test_a_million_player_game_is_parsed_without_its_payoff_table():
    """Parsing checks the game (its largeness read off the payoffs in blocks) but builds no table of
    K A n payoffs (2 x 4 x 10^6 here, 64 MB a copy, built three times over before): the budget is
    checked first."""
    tree = tomllib.loads((SCENARIOS / "anonymous_crowding.toml").read_text())
    tree.pop("sweep")
    Scenario.from_dict(tree).parse()  # imports and first calls out of the measurement
    tracemalloc.start()
    try:
        parsed = Scenario.from_dict(tree).parse()
        parsed.estimate()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(tree["game"]["players"]) == 10**6
    assert peak < 20e6
