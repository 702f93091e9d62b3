"""The anonymous-games app page under AppTest: its figures are the scenario's (recomputed here
directly)."""

from pathlib import Path

import pytest

from app_session import metric_value
from dpgames.scenarios import Scenario

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
PAGE = Path(__file__).resolve().parents[1] / "dpgames_app" / "anonymous_games.py"


def _run(at):
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception] + [
        e.value for e in at.error
    ]


def test_page_defaults_are_the_scenario_figures():
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    _run(at)
    import tomllib  # the page opens on the shipped scenario's settings (review session 22)

    data = tomllib.loads((PAGE.parents[1] / "scenarios" / "anonymous_crowding.toml").read_text())
    data.pop("sweep")
    metrics = Scenario.from_dict(data).run().metrics
    assert float(metric_value(at, "alpha (largest regret)")) == pytest.approx(
        metrics["alpha"], rel=1e-3
    )
    assert float(metric_value(at, "epsilon")) == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize("kind", ["market_entry", "el_farol", "minority", "public_goods"])
def test_every_game_runs(kind):
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    at.sidebar.selectbox(key="ag.kind").set_value(kind)
    at.sidebar.number_input(key="ag.n").set_value(200)
    at.sidebar.radio(key="ag.dynamics").set_value("blum-mansour")
    _run(at)
    assert (
        float(metric_value(at, "alpha (largest regret)"))
        <= float(metric_value(at, "regret bound + 2 feed error")) + 1e-9
    )
