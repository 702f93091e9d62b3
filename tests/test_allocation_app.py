"""The allocation app page under AppTest: its figures are the library's (recomputed here
directly)."""

from pathlib import Path

import numpy as np
import pytest

from app_session import downloaded, metric_value
from dpgames.allocation import AscendingAuction, Market, optimal_allocation
from dpgames.scenarios import Scenario
from dpgames_app.ui import figure

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "dpgames_app" / "allocation.py"


def test_page_defaults_are_the_library_figures():
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception] + [
        e.value for e in at.error
    ]
    market_seed, noise_seed = np.random.SeedSequence(2026).spawn(2)  # the allocation kind's streams
    market = Market.random(20_000, 2, 5000, np.random.default_rng(market_seed))
    private = AscendingAuction(0.25, 5.0).run(market, rng=noise_seed)
    assert metric_value(at, "welfare") == figure(private.welfare)
    assert metric_value(at, "optimal welfare (exact)") == figure(optimal_allocation(market).welfare)
    assert metric_value(at, "privacy spent (joint eps)") == figure(5.0)
    assert metric_value(at, "non-private welfare") == figure(
        AscendingAuction(0.25).run(market).welfare
    )


def test_small_nonprivate_market_and_bad_size():
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    at.sidebar.number_input(key="al.n").set_value(8)
    at.sidebar.number_input(key="al.s").set_value(2)
    at.sidebar.toggle(key="al.private").set_value(False)
    at.run()
    assert not at.exception and not at.error
    market = Market.random(8, 2, 2, np.random.default_rng(np.random.SeedSequence(2026).spawn(2)[0]))
    assert metric_value(at, "welfare") == figure(AscendingAuction(0.25).run(market).welfare)
    assert metric_value(at, "privacy spent (joint eps)") == "none (non-private)"
    at.sidebar.number_input(key="al.n").set_value(1_000_000)
    at.sidebar.number_input(key="al.k").set_value(50)
    at.run()
    assert at.error and "at most" in at.error[0].value


def test_page_defaults_are_dpgames_run_of_the_shipped_scenario():
    """Same settings as scenarios/allocation_two_goods.toml (seed 2026): the same numbers."""
    expected = Scenario.from_file(ROOT / "scenarios" / "allocation_two_goods.toml").run().metrics
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    assert not at.exception and not at.error
    assert metric_value(at, "welfare") == figure(expected["welfare"])
    assert metric_value(at, "non-private welfare") == figure(expected["welfare_nonprivate"])
    assert metric_value(at, "optimal welfare (exact)") == figure(expected["opt"])


def test_saved_settings_reproduce_the_page():
    """The "Scenario file (TOML)" download, run as `dpgames run` would, gives the page's figures
    (here with the private counters off and other settings than the defaults)."""
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    at.number_input(key="al.n").set_value(3000)
    at.number_input(key="al.s").set_value(700)
    at.number_input(key="al.seed").set_value(11)
    at.toggle(key="al.private").set_value(False)
    at.run()
    assert not at.exception and not at.error
    saved = (
        Scenario.from_text(downloaded(at, "Scenario file (TOML)"), source="<page>").run().metrics
    )
    assert metric_value(at, "welfare") == figure(saved["welfare_nonprivate"])
    assert metric_value(at, "optimal welfare (exact)") == figure(saved["opt"])
    assert "epsilon" not in saved


def test_prices_and_counts_read_in_full():
    """Who gets nothing pays '-', not None; the goods table keeps its counts as numbers."""
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    who = at.dataframe[1].value
    assert set(who.loc[who["told: good"] == "none", "price"]) <= {"-"}
    assert at.dataframe[0].value["supply"].tolist() == [5000, 5000]
