"""The Scenarios page: its command-line twin, titles that follow the overrides, the sweep chart.

Oracles: `dpgames run` itself (the command the page shows, run through dpgames.cli.main), titles
typed out by hand, the figure `dpgames plot` draws (dpgames.sweep.plot) for the sweep chart."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import tomllib

import pytest

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
    assert commands == [
        "dpgames run scenarios/digital_goods.toml --seed 7 --set mechanism.epsilon=0.3 "
        "--set population.n=300 --set 'mechanism.prices=[0.25, 0.5, 0.75]'"
    ]
    monkeypatch.chdir(ROOT)
    by_cli = cli_json([*shlex.split(commands[0])[1:], "--json"])
    on_page = json.loads(downloaded(at, "Result (JSON)"))
    assert by_cli["metrics"] == on_page["metrics"] and by_cli["tables"] == on_page["tables"]
    assert by_cli["title"] == on_page["title"]


def test_the_title_follows_the_overrides_in_the_page_the_result_and_the_saved_file(
    tmp_path, monkeypatch
):
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
    assert [c.value for c in at.code if c.value.startswith("dpgames run")] == [
        "dpgames run scenarios/digital_goods.toml"
    ]
    assert [h.value for h in at.subheader if h.value.startswith("Digital")] == [
        "Digital-goods auction, 1,000 uniform bidders, eps = 0.5"
    ]


# ---------------------------------------------------------------- the sweep viewer is `dpgames
# plot`'s figure

EPSILONS = [0.1, 0.31622776601683794, 1.0, 3.1622776601683795, 10.0]  # geomspace(0.1, 10, 5)


def log_sweep_file() -> bytes:
    """A results file written by hand: epsilon log-spaced x n in {100, 400} x 3 seeds; a revenue far
    from 0, a gain of order 1e-4 and a text metric (a price set)."""
    header = {
        "format": "dpgames-sweep/1",
        "scenario": "hand.toml",
        "scenario_sha256": "0" * 64,
        "kind": "digital_goods",
        "title": "by hand, eps = 0.5",
        "root_seed": 1,
        "parameters": {"mechanism.epsilon": EPSILONS, "population.n": [100, 400]},
        "seeds": 3,
    }
    lines = [header]
    for eps in EPSILONS:
        for n in (100, 400):
            for seed in range(3):
                lines.append(
                    {
                        "params": {"mechanism.epsilon": eps, "population.n": n},
                        "seed": seed,
                        "status": "ok",
                        "metrics": {
                            "expected_revenue": n / 4 + eps + seed,
                            "max_misreport_gain": 1.234e-4 * (seed + 1),
                            "price_set": "grid of 20",
                        },
                    }
                )
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def open_sweep(monkeypatch) -> tuple[AppTest, list]:
    """The page on the hand-made results file; the figures the page draws are recorded."""
    import dpgames.sweep.plot as plot

    drawn: list = []
    real = plot.sweep_figure

    def recording(*args, **kwargs):
        fig = real(*args, **kwargs)
        drawn.append((args, kwargs, fig))
        return fig

    monkeypatch.setattr(plot, "sweep_figure", recording)
    at = start("scenarios")
    at.selectbox(key="sc.sweep_file").set_value("upload a file...").run()
    at.get("file_uploader")[-1].set_value(("log.jsonl", log_sweep_file(), "application/json")).run()
    clean(at)
    return at, drawn


def test_the_sweep_chart_is_the_plot_commands_figure_with_a_log_toggle(monkeypatch):
    from dpgames.sweep import results_from_bytes
    from dpgames.sweep.plot import sweep_figure

    at, drawn = open_sweep(monkeypatch)
    # no price_set
    assert at.selectbox(key="sc.sweep_y").options == [
        "expected_revenue",
        "max_misreport_gain",
    ]
    at.selectbox(key="sc.sweep_y").set_value("expected_revenue").run()
    fig = drawn[-1][2]
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"  # geomspace: log x by default
    assert ax.get_ylim()[0] > 10  # fitted to the bands (23..113), not from 0
    assert len({line.get_color() for line in ax.lines}) == 2  # n = 100 and n = 400 apart
    assert not any(sum(line.get_color()[:3]) > 2.4 for line in ax.lines)  # none almost white
    cli = sweep_figure(
        results_from_bytes(log_sweep_file(), "log.jsonl"), "mechanism.epsilon", ["expected_revenue"]
    )
    for mine, theirs in zip(ax.lines, cli.axes[0].lines):
        assert list(mine.get_xdata()) == list(theirs.get_xdata()) and list(
            mine.get_ydata()
        ) == list(theirs.get_ydata())
    assert (
        ax.get_ylabel() == cli.axes[0].get_ylabel()
        and fig.texts[0].get_text() == cli.texts[0].get_text()
    )
    at.toggle(key="sc.sweep_log.mechanism.epsilon").set_value(False).run()
    assert drawn[-1][2].axes[0].get_xscale() == "linear"
    assert any("--linear-x" in c.value for c in at.caption)


def test_the_sweep_summary_shows_small_gains_unrounded(monkeypatch):
    at, _ = open_sweep(monkeypatch)
    table = at.dataframe[-1]
    summary = table.value
    gains = summary[summary["metric"] == "max_misreport_gain"]
    assert gains["mean"].iloc[0] == pytest.approx(2.468e-4)
    formats = {
        name: spec["type_config"].get("format")
        for name, spec in json.loads(table.proto.columns or "{}").items()
        if spec.get("type_config")
    }
    assert formats.get("mean") == "%.6g" and formats.get("ci_low") == "%.6g"


# ---------------------------------------------------------------- the result's words


def test_metric_columns_are_wide_enough_for_their_longest_text_and_table_columns_are_explained():
    at = run_page("")
    frame = at.dataframe[0].value
    widths = {
        name: spec.get("width") for name, spec in json.loads(at.dataframe[0].proto.columns).items()
    }
    for column in ("metric", "value", "name"):
        longest = max(len(str(t)) for t in frame[column])
        assert isinstance(widths[column], int) and widths[column] >= 7 * longest, (
            column,
            widths[column],
            longest,
        )
    notes = " ".join(c.value for c in at.caption)
    assert (
        "best gain from a lie (`best_gain`)" in notes and "negative: every lie costs her" in notes
    )
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    titles = {s["encoding"]["y"]["title"] for s in specs}
    assert "best gain from a lie" in titles and "best gain" not in titles
