"""The Scenarios page: its command-line twin, titles that follow the overrides, the sweep chart.

Oracles: `dpgames run` itself (the command the page shows, run through dpgames.cli.main), titles
typed out by hand, the figure `dpgames plot` draws (dpgames.sweep.plot) for the sweep chart."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import tomllib

from app_session import ROOT, AppTest, downloaded, start
from dpgames.cli import main


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def cli_json(argv: list[str]) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return json.loads(out.getvalue())


def run_page(overrides: str, seed: int | None = None) -> AppTest:
    at = start("scenarios")
    at.selectbox(key="sc.file").set_value("digital_goods.toml")
    at.text_area(key="sc.overrides").set_value(overrides)
    if seed is not None:
        at.number_input(key="sc.seed").set_value(seed)
    at.run()
    at.button(key="button.sc_run").click().run()
    clean(at)
    return at


def test_the_page_shows_the_command_that_gives_its_result(monkeypatch):
    at = run_page("epsilon = 0.3\npopulation.n = 300\nmechanism.prices = [0.25, 0.5, 0.75]", seed=7)
    commands = [c.value for c in at.code if c.value.startswith("dpgames run")]
    assert commands == ["dpgames run scenarios/digital_goods.toml --seed 7 --set mechanism.epsilon=0.3 "
                        "--set population.n=300 --set 'mechanism.prices=[0.25, 0.5, 0.75]'"]
    monkeypatch.chdir(ROOT)
    by_cli = cli_json([*shlex.split(commands[0])[1:], "--json"])
    on_page = json.loads(downloaded(at, "Result (JSON)"))
    assert by_cli["metrics"] == on_page["metrics"] and by_cli["tables"] == on_page["tables"]
    assert by_cli["title"] == on_page["title"]


def test_the_title_follows_the_overrides_in_the_page_the_result_and_the_saved_file(tmp_path, monkeypatch):
    at = run_page("mechanism.epsilon = 0.3\npopulation.n = 5000\n")
    expected = "Digital-goods auction, 5,000 uniform bidders, eps = 0.3"
    assert [h.value for h in at.subheader if h.value.startswith("Digital")] == [expected]
    assert json.loads(downloaded(at, "Result (JSON)"))["title"] == expected
    saved = downloaded(at, "Save these settings as a scenario file (TOML)")
    assert tomllib.loads(saved)["title"] == expected
    path = tmp_path / "saved.toml"
    path.write_text(saved)
    assert cli_json(["run", str(path), "--json"])["title"] == expected


def test_without_overrides_the_command_is_the_plain_run():
    at = run_page("")
    assert [c.value for c in at.code if c.value.startswith("dpgames run")] == \
        ["dpgames run scenarios/digital_goods.toml"]
    assert [h.value for h in at.subheader if h.value.startswith("Digital")] == \
        ["Digital-goods auction, 1,000 uniform bidders, eps = 0.5"]
