"""Review findings on the app's pages (session 22), each under AppTest against the library called
directly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_session import ROOT, AppTest, downloaded, start
from dpgames.scenarios import run_scenario

SCENARIOS = ROOT / "scenarios"


def errors(at: AppTest) -> str:
    return " | ".join(e.value for e in at.error)


def run_with(overrides: str) -> AppTest:
    at = start("scenarios")
    at.selectbox(key="sc.file").set_value("digital_goods.toml")
    at.text_area(key="sc.overrides").set_value(overrides).run()
    at.button(key="button.sc_run").click().run()
    return at


def test_an_override_by_short_name_sets_the_one_field_it_ends():
    """`epsilon = 0.1` works as in `dpgames sweep --set epsilon=0.1` and a [sweep] table (it was
    refused: "field 'epsilon': unknown key"); the saved file holds the dotted field."""
    at = run_with("epsilon = 0.1\nn = 300\n")
    assert not at.exception and not at.error, errors(at)
    expected = run_scenario(
        SCENARIOS / "digital_goods.toml", overrides={"mechanism.epsilon": 0.1, "population.n": 300}
    )
    assert (
        json.loads(downloaded(at, "Result (JSON)"))["metrics"]
        == json.loads(expected.to_json())["metrics"]
    )
    saved = downloaded(at, "Save these settings as a scenario file (TOML)")
    assert "epsilon = 0.1" in saved.split("[mechanism]")[1].split("[")[0]


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ("epsilonn = 0.1", ["'epsilonn'", "no field of that name", "mechanism.epsilon"]),
        (
            "title = 'mine'\nmechanism.epsilom = 0.1",
            ["'mechanism.epsilom'", "did you mean 'epsilon'"],
        ),
    ],
)
def test_an_override_naming_no_field_is_one_clean_error(overrides, expected):
    at = run_with(overrides)
    assert not at.exception
    for text in expected:
        assert text in errors(at), errors(at)


def network_files() -> list[tuple[str, str]]:
    """(network label, shipped scenario file) for Pigou, the grid and every TNTP network a file
    reads."""
    import tomllib

    from dpgames.scenarios.large_game import data_roots

    pairs = [("Pigou (two roads)", "pigou.toml"), ("Grid (synthetic)", "grid.toml")]
    for path in sorted(SCENARIOS.glob("*.toml")):
        game = tomllib.loads(path.read_text()).get("game", {})
        if game.get("source") == "tntp" and (data_roots()[0] / game["network"]).is_dir():
            pairs.append((f"TNTP: {game['network']}", path.name))
    return pairs


@pytest.mark.parametrize("network, file", network_files(), ids=[f for _, f in network_files()])
def test_each_network_opens_on_its_shipped_scenario(network, file):
    """Choosing a network shows what `dpgames run scenarios/FILE` prints (the page kept seed 3, gap
    1e-4 and 1,000 Hedge rounds for every network: Sioux Falls read 7,470,839 where the CLI prints
    7,475,314)."""
    import tomllib

    from dpgames import Scenario

    data = tomllib.loads((SCENARIOS / file).read_text())
    # the page leaves the incentive audit to the command line
    data["incentives"] = {"enabled": False}
    expected = Scenario(data, file, "", SCENARIOS).run().metrics
    at = start("large_games")
    at.selectbox(key="lg.network").set_value(network).run()
    assert not at.exception and not at.error, errors(at)
    shown = {
        m.label: float(m.value.replace(",", "")) for m in at.metric if m.label != "epsilon spent"
    }
    for label, key in [
        ("Mediator cost", "expected_total_cost"),
        ("User equilibrium", "ue_total_cost"),
        ("System optimum", "so_total_cost"),
    ]:
        assert shown[label] == pytest.approx(expected[key], rel=5e-6, abs=0.006), label
    assert shown["alpha (regret)"] == pytest.approx(expected["alpha"], rel=1e-3)
    assert f"scenarios/{file}" in " ".join(m.value for m in at.markdown)


def test_a_large_game_estimated_slow_waits_for_the_button():
    """A 30 x 30 grid, 200 OD pairs, 10^6 drivers, 20,000 rounds: about 200 s by the kind's estimate
    (the CLI refuses it without --max-work), yet only games of more than 20,000 classes waited for
    "Solve it": the page ran for minutes behind a spinner.  Now it says the estimate and waits."""
    at = start()
    for key, value in [
        ("lg.network", "Grid (synthetic)"),
        ("lg.rows", 30),
        ("lg.cols", 30),
        ("lg.pairs", 200),
        ("lg.grid_n", 1_000_000),
        ("lg.rounds.Grid (synthetic)", 20_000),
    ]:
        at.session_state[key] = (
            value  # the page's inputs before it first runs (they keep a set value)
        )
    at.switch_page("dpgames_app/large_games.py").run()
    assert not at.exception and not at.error, errors(at)
    assert at.button(key="button.lg_solve")
    message = " ".join(i.value for i in at.info)
    assert (
        "20,000 rounds" in message
        and "on this machine" in message
        and "library's estimate" in message
    )
    assert "perhaps minutes" not in message  # one estimate, in seconds of this machine
    seconds = float(message.split("take about ")[1].split(" s on this machine")[0].replace(",", ""))
    assert seconds >= 200  # never faster than the estimate's 1e9 operations/s
    assert not at.metric  # nothing solved yet


def test_the_first_large_game_says_it_compiles_the_kernels(monkeypatch, tmp_path):
    """Without numba's cache of the kernels (a fresh install: here, the package seen from an empty
    folder) the page says the first run compiles them; with it (this checkout has run a game), it
    says nothing."""
    import dpgames.games as games

    def open_slow_game():
        at = start()
        for key, value in [
            ("lg.network", "Grid (synthetic)"),
            ("lg.rows", 30),
            ("lg.cols", 30),
            ("lg.pairs", 200),
            ("lg.grid_n", 1_000_000),
            ("lg.rounds.Grid (synthetic)", 20_000),
        ]:
            at.session_state[key] = value
        at.switch_page("dpgames_app/large_games.py").run()
        assert not at.exception and not at.error, errors(at)
        return " ".join(i.value for i in at.info)

    cached = any((Path(games.__file__).parent / "__pycache__").glob("_rounds.*.nbi"))
    if cached:
        assert "compiles the road-network kernels" not in open_slow_game()
    monkeypatch.setattr(games, "__file__", str(tmp_path / "games" / "__init__.py"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    notice = open_slow_game()
    assert "compiles the road-network kernels (numba), once" in notice
    # docs/benchmarks.md: Sioux Falls on a fresh venv
    assert "16 CPU-seconds more on a road network" in notice
