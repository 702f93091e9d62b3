"""What the pages say about their numbers and inputs: vacuous bounds, the reports an audit tried,
the settings an uploaded file left behind, the best lie of a truthful mix.

Oracles: `dpgames run` on the page's own settings file (the reports tried), the bound 2 eps >= 1 of
Proposition 10.1 against gains that lie in [0, 1], the uploaded file's own values."""

from __future__ import annotations

import tomllib

import pytest

from app_session import AppTest, downloaded, metric_value, start
from dpgames import Scenario


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("eps, vacuous", [(0.3, False), (0.5, True), (2.0, True)])
def test_the_2_eps_tile_says_when_the_bound_is_vacuous(eps, vacuous):
    at = start()
    at.number_input(key="dg.n").set_value(200)
    at.number_input(key="dg.eps").set_value(eps).run()
    clean(at)
    shown = metric_value(at, "Bound 2 eps")
    assert float(shown.split()[0]) == pytest.approx(2 * eps)
    assert shown.endswith("(vacuous)") is vacuous  # gains lie in [0, 1]: a bound >= 1 says nothing


def test_continuous_prices_say_which_reports_were_tried(tmp_path):
    at = start()
    at.number_input(key="dg.n").set_value(200)
    at.radio(key="dg.price_set").set_value("continuous").run()
    clean(at)
    saved = tmp_path / "page.toml"
    saved.write_text(downloaded(at, "Scenario file (TOML)"))
    tried = Scenario.from_file(saved).run().metrics["audit_lies"]
    captions = [c.value for c in at.caption if c.value.startswith("Reports tried")]
    assert captions == [
        f"Reports tried for each bidder: {tried:,} reports evenly spread over [0, 1] (prices are "
        "continuous: not every report)."
    ]


def test_grid_prices_say_every_report_was_tried():
    at = start()
    at.number_input(key="dg.n").set_value(200).run()
    clean(at)
    assert any(
        c.value.startswith("Reports tried for each bidder: every one of the") for c in at.caption
    )


UPLOADED = b"""kind = "digital_goods"
seed = 99
[population]
distribution = "list"
values = [0.2, 0.4, 0.6, 0.8, 0.9]
[mechanism]
epsilon = 0.7
prices = [0.2, 0.4, 0.6, 0.8]
"""


def test_settings_loaded_from_an_upload_are_announced_after_switching_back_and_can_be_reset():
    at = start()
    at.radio(key="dg.source").set_value("Scenario file (TOML)").run()
    [u for u in at.get("file_uploader") if u.key == "upload.dg_toml"][0].set_value(
        ("mine.toml", UPLOADED, "text/plain")
    )
    at.run()
    clean(at)
    assert at.number_input(key="dg.seed").value == 99 and at.number_input(key="dg.eps").value == 0.7
    # the upload is in use: nothing to say
    assert not any("mine.toml" in c.value for c in at.sidebar.caption)
    at.radio(key="dg.source").set_value("Type distribution").run()
    clean(at)
    assert at.number_input(key="dg.seed").value == 99  # kept ...
    # ... and said so
    assert any("still those loaded from mine.toml" in c.value for c in at.sidebar.caption)
    at.button(key="button.dg_defaults").click().run()
    clean(at)
    saved = tomllib.loads(downloaded(at, "Scenario file (TOML)"))
    assert (saved["seed"], saved["mechanism"]["epsilon"], saved["mechanism"]["prices"]) == (
        2026,
        0.5,
        "grid",
    )
    assert not any("mine.toml" in c.value for c in at.sidebar.caption)


def test_a_truthful_mix_states_its_best_lie_in_words():
    at = start("truthfulness")
    clean(at)
    assert at.success, "the page opens at the exact least q: truthful"
    text = at.success[0].value
    assert "largest gain -" not in text and "best lie" in text


def test_a_large_auction_waits_for_a_button_before_building_when_this_machine_is_slow(monkeypatch):
    """200,000 bidders: the library estimates 8e9 operations, 8 s at 1e9 a second, but the build
    took 45 to 98 s on a loaded 2-core machine.  The page scales the estimate by this machine's
    calibrated speed, so the gate comes before the baselines are computed.  The speed is pinned here
    (5e-9 s an operation, a loaded machine): no clock in the test."""
    from dpgames.scenarios import calibration, digital_goods as dg
    from dpgames_app import ui

    rate = 5e-9
    monkeypatch.setattr(calibration, "seconds_per_operation", lambda: rate)
    ui.seconds_per_operation.clear()
    try:
        big = Scenario.from_dict(
            {
                "kind": "digital_goods",
                "seed": 2026,
                "population": {"distribution": "uniform", "n": 200_000},
                "mechanism": {"epsilon": 0.5},
            }
        ).parse()
        work = sum(e.work for e in dg.estimate(big.spec) if "audit" not in e.what)
        at = start_page_with_bidders(200_000)
        assert any(b.label == "Compute it" for b in at.button)
        assert not any(m.label == "RSOP" for m in at.metric)  # nothing heavy ran
        stated = [
            float(i.value.split("take about ")[1].split(" s")[0].replace(",", ""))
            for i in at.info
            if "take about" in i.value
        ]
        # page: 2 digits
        assert stated and stated[0] == pytest.approx(work * rate, rel=0.05) and stated[0] > 30
    finally:
        ui.seconds_per_operation.clear()


def start_page_with_bidders(n: int) -> AppTest:
    at = start()
    at.number_input(key="dg.n").set_value(n).run()
    clean(at)
    return at
