"""What the pages say about their numbers and inputs: vacuous bounds, the reports an audit tried, the
settings an uploaded file left behind, the best lie of a truthful mix.

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
    assert shown.endswith("(vacuous)") is vacuous        # gains lie in [0, 1]: a bound >= 1 says nothing


def test_continuous_prices_say_which_reports_were_tried(tmp_path):
    at = start()
    at.number_input(key="dg.n").set_value(200)
    at.radio(key="dg.price_set").set_value("continuous").run()
    clean(at)
    saved = tmp_path / "page.toml"
    saved.write_text(downloaded(at, "Scenario file (TOML)"))
    tried = Scenario.from_file(saved).run().metrics["audit_lies"]
    captions = [c.value for c in at.caption if c.value.startswith("Reports tried")]
    assert captions == [f"Reports tried for each bidder: {tried:,} reports evenly spread over [0, 1] (prices are "
                        "continuous: not every report)."]


def test_grid_prices_say_every_report_was_tried():
    at = start()
    at.number_input(key="dg.n").set_value(200).run()
    clean(at)
    assert any(c.value.startswith("Reports tried for each bidder: every one of the") for c in at.caption)


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
    [u for u in at.get("file_uploader") if u.key == "upload.dg_toml"][0].set_value(("mine.toml", UPLOADED, "text/plain"))
    at.run()
    clean(at)
    assert at.number_input(key="dg.seed").value == 99 and at.number_input(key="dg.eps").value == 0.7
    assert not any("mine.toml" in c.value for c in at.sidebar.caption)     # the upload is in use: nothing to say
    at.radio(key="dg.source").set_value("Type distribution").run()
    clean(at)
    assert at.number_input(key="dg.seed").value == 99                      # kept ...
    assert any("still those loaded from mine.toml" in c.value for c in at.sidebar.caption)   # ... and said so
    at.button(key="button.dg_defaults").click().run()
    clean(at)
    saved = tomllib.loads(downloaded(at, "Scenario file (TOML)"))
    assert (saved["seed"], saved["mechanism"]["epsilon"], saved["mechanism"]["prices"]) == (2026, 0.5, "grid")
    assert not any("mine.toml" in c.value for c in at.sidebar.caption)


def test_a_truthful_mix_states_its_best_lie_in_words():
    at = start("truthfulness")
    clean(at)
    assert at.success, "the page opens at the exact least q: truthful"
    text = at.success[0].value
    assert "largest gain -" not in text and "best lie" in text
