"""The privacy-market app page under AppTest: its figures are the library's (recomputed here
directly)."""

import json
from pathlib import Path

import numpy as np
import pytest

from app_session import metric_value
from dpgames.markets import (
    AccuracyAuction,
    PopulationLaw,
    UniformCosts,
    envy_free_accuracy,
    privacy_population,
)
from dpgames.scenarios import Scenario
from dpgames_app.ui import figure

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "dpgames_app" / "privacy_market.py"


def test_page_defaults_are_the_library_figures():
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception] + [
        e.value for e in at.error
    ]
    # the population of the privacy_market kind: the first child stream of the seed
    stream = np.random.default_rng(np.random.SeedSequence(2026).spawn(1)[0])
    pop = privacy_population(10_000, PopulationLaw(0.3, UniformCosts(0, 1)), rng=stream)
    out = AccuracyAuction(0.05, 0.05, 0.5).run(pop.costs)
    assert metric_value(at, "agents bought") == f"{out.n_bought:,}"
    ratio = out.total_payment / envy_free_accuracy(pop.costs, 0.05, 0.05).payment
    assert float(metric_value(at, "payment / envy-free")) == pytest.approx(ratio, rel=1e-3)
    assert float(metric_value(at, "largest gain from lying")) <= 0
    assert any("10,000 agents x 100 lies" in md.value for md in at.markdown)  # thousands separated
    assert not any(m.label == "within budget" for m in at.metric)  # the accuracy goal has no budget


def test_page_defaults_are_dpgames_run_of_the_shipped_scenario():
    """Same settings as scenarios/privacy_market_accuracy.toml (seed 2026): the same numbers."""
    expected = Scenario.from_file(ROOT / "scenarios" / "privacy_market_accuracy.toml").run().metrics
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    assert not at.exception and not at.error
    assert metric_value(at, "agents bought") == f"{expected['n_bought']:,}"
    assert metric_value(at, "total payment") == figure(expected["total_payment"])
    assert metric_value(at, "envy-free payment") == figure(expected["envy_free_payment"])
    assert f"true count {expected['count']:,}" in at.markdown[0].value


def test_budget_mode_shows_the_benchmark_ratio():
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    at.sidebar.radio(key="pm.kind").set_value("budget").run()
    assert not at.exception and not at.error
    assert float(metric_value(at, "radius / envy-free")) >= 1
    assert metric_value(at, "within budget") == "yes"


def test_saved_settings_reproduce_the_page():
    """The page's "Scenario file (TOML)" download, run as `dpgames run` would, gives the page's
    numbers, also for settings away from the defaults (budget mode, correlated costs, another
    seed)."""
    from app_session import downloaded, start

    at = start("privacy_market")
    at.sidebar.number_input(key="pm.n").set_value(3000)
    at.sidebar.slider(key="pm.shift").set_value(0.5)
    at.sidebar.number_input(key="pm.seed").set_value(11)
    at.sidebar.radio(key="pm.kind").set_value("budget").run()
    assert not at.exception and not at.error
    expected = Scenario.from_text(downloaded(at, "Scenario file (TOML)")).run().metrics
    assert expected["n"] == 3000
    assert metric_value(at, "agents bought") == f"{expected['n_bought']:,}"
    assert metric_value(at, "total payment") == figure(expected["total_payment"])
    assert metric_value(at, "envy-free radius") == figure(expected["envy_free_radius"])
    assert f"true count {expected['count']:,}" in at.markdown[0].value
    result = json.loads(downloaded(at, "Result (JSON)"))["metrics"]
    assert result["total_payment"] == expected["total_payment"]
