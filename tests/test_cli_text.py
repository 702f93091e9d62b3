"""What `dpgames run` prints as text, `--tables-dir`, `--version`, `--help`, and the sweep plot's
words.

Oracles are independent of the formatter: numbers parsed back from the text against the Result's
JSON (the same run), CSV files read with the csv module, the version read from pyproject.toml with
tomllib, the Thm 3.11 bound computed from its formula, Student-t intervals from scipy."""

from __future__ import annotations

import csv
import json
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpgames.cli import build_parser, main
from dpgames.scenarios import Scenario
from dpgames.scenarios.text import format_number, plural
from dpgames.sweep import SweepResults
from dpgames.sweep.plot import figure_title, log_spaced, sweep_figure

ROOT = Path(__file__).resolve().parents[1]
SMALL = {
    "kind": "digital_goods",
    "seed": 5,
    "title": "Small auction, 40 bidders, eps = 0.5",
    "population": {"distribution": "uniform", "n": 40},
    "mechanism": {"epsilon": 0.5, "alpha": 0.02},
    "baselines": {"rsop_samples": 200},
}


def _run(capsys, argv):
    assert main(argv) == 0
    return capsys.readouterr().out


def _scenario(tmp_path, data=SMALL, name="s.toml"):
    path = tmp_path / name
    path.write_text(Scenario.from_dict(data).to_toml())
    return path


def _pair(capsys, path, *extra):
    text = _run(capsys, ["run", str(path), *extra])
    result = json.loads(_run(capsys, ["run", str(path), "--json"]))
    return text, result


def _metric_lines(text, result):
    """Each metric's printed value (the line after its label), in order."""
    lines = text.splitlines()[2 : 2 + len(result["metrics"])]
    out = {}
    for key, line in zip(result["metrics"], lines):
        label = result["labels"].get(key, key)
        assert line.startswith(label), (line, label)
        out[key] = line[len(label) :].strip()
    return out


def _parse(text):
    """A printed figure, without the remark a kind may add after it ("1 (vacuous: gains <= 1)")."""
    return float(text.split(" (")[0].replace(",", ""))


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["digital_goods.toml", "nst_pricing.toml", "huang_kannan_public_project.toml", "braess.toml"],
)
def test_every_printed_number_parses_back_to_the_results_value(capsys, name):
    text, result = _pair(capsys, ROOT / "scenarios" / name)
    shown = _metric_lines(text, result)
    for key, value in result["metrics"].items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            assert shown[key] == str(value)
            continue
        assert "e+" not in shown[key] or abs(value) >= 1e15, shown[key]  # no 1.41976e+06
        if abs(value) >= 1000:
            assert "," in shown[key]
        assert math.isclose(_parse(shown[key]), value, rel_tol=5e-6, abs_tol=0), (
            key,
            shown[key],
            value,
        )


def test_every_table_is_printed_with_head_tail_and_how_many_rows_were_left_out(capsys):
    text, result = _pair(capsys, ROOT / "scenarios" / "nst_pricing.toml")
    assert set(result["tables"]) >= {"outcome_law", "scaling"}
    for name, columns in result["tables"].items():
        count = len(next(iter(columns.values())))
        block = text.split(f"table {name}: {count} rows\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert block[0].split() == list(columns)
        rows = [line.split() for line in block[1:] if "not shown" not in line]
        first = next(iter(columns))
        if count > 10:
            assert any(f"... {count - 10:,} rows not shown ..." in line for line in block)
            keep = [*range(5), *range(count - 5, count)]
        else:
            keep = list(range(count))
        assert len(rows) == len(keep)
        for row, i in zip(rows, keep):
            cell = columns[first][i]
            assert math.isclose(_parse(row[0]), float(cell), rel_tol=5e-6)
    assert "every row: --json, or --tables-dir DIR" in text


def test_rows_option_and_tables_dir_write_every_row(tmp_path, capsys):
    path = _scenario(tmp_path)
    folder = tmp_path / "tables"
    text = _run(capsys, ["run", str(path), "--rows", "2", "--tables-dir", str(folder)])
    result = json.loads(_run(capsys, ["run", str(path), "--json"]))
    law = result["tables"]["price_law"]
    count = len(law["price"])
    assert f"... {count - 4} rows not shown ..." in text
    for name, columns in result["tables"].items():
        with open(folder / f"{name}.csv", newline="") as f:
            rows = list(csv.reader(f))
        assert rows[0] == list(columns) and len(rows) == 1 + len(next(iter(columns.values())))
        for j, column in enumerate(columns.values()):
            assert [float(r[j]) for r in rows[1:]] == pytest.approx(
                [float(v) for v in column], rel=1e-15
            )


def test_version_is_the_one_in_pyproject(capsys):
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"dpgames {version}"


def test_help_texts_show_a_single_percent_sign(capsys):
    for command in (["sweep", "--help"], ["plot", "--help"], ["run", "--help"], ["--help"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(command)
        out = capsys.readouterr().out
        assert "%%" not in out
    with pytest.raises(SystemExit):
        build_parser().parse_args(["sweep", "--help"])
    assert "95% CI" in capsys.readouterr().out


# --------------------------------------------------------------------- the rules for figures


def test_format_number_against_plain_rules():
    for x in [
        0.0,
        0.5,
        1.0,
        12.5,
        999.999,
        1000.0,
        1834.87,
        104694.0,
        1419759.6,
        2.5e14,
        -98765.4,
        3e-7,
    ]:
        shown = format_number(x)
        assert math.isclose(_parse(shown), x, rel_tol=5e-6, abs_tol=0)
        assert ("," in shown) == (
            abs(x) >= 1000 and round(abs(x), 6 - len(str(int(abs(x))))) >= 1000
        )
        assert "e+" not in shown
    assert (
        format_number(104694) == "104,694"
        and format_number(999) == "999"
        and format_number(None) == "-"
    )
    assert format_number(True) == "True" and format_number("a b") == "a b"


@pytest.mark.parametrize(
    "count, noun, expected",
    [
        (1, "iteration", "1 iteration"),
        (2, "iteration", "2 iterations"),
        (1, "class", "1 class"),
        (0, "class", "0 classes"),
        (1, "seed", "1 seed"),
        (2500, "split", "2,500 splits"),
    ],
)
def test_plural(count, noun, expected):
    assert plural(count, noun) == expected


@pytest.mark.slow
def test_a_rounding_sized_misreport_gain_is_reported_as_none(capsys):
    """On the continuum a bidder's best lie gains ~1e-15 (rounding): the audit's own figure is
    within 1e-12, and the Result then names nobody."""
    from dpgames.analysis.misreport import misreport_audit
    from dpgames.scenarios import digital_goods as dg

    parsed = Scenario.from_file(ROOT / "scenarios" / "continuous.toml").parse()
    built = dg.build(parsed.spec, parsed.seed)
    raw = misreport_audit(built.auction, built.values)
    assert raw.max_gain <= 1e-12
    text, result = _pair(capsys, ROOT / "scenarios" / "continuous.toml")
    m = result["metrics"]
    assert m["max_misreport_gain"] == 0.0 and m["max_misreport_gain_by"].startswith("none")
    assert "worst_agent" not in m and "attained by agent" not in text
    # ... and its quantile table agrees: every gain within rounding is 0, none is a 2.8e-15 artefact
    gains = result["tables"]["misreport_gain_quantiles"]["best_gain"]
    assert gains == [0.0] * len(gains) and raw.gain_quantiles()[1.0] != 0.0
    # ... and with nobody to name, the DP bound shown is the largest over the agents (not an
    # arbitrary one's)
    assert m["bound_exact_dp"] == pytest.approx(min(1.0, float(raw.exact_dp_bound.max())), rel=1e-9)
    assert "the largest over the agents" in text
    text, result = _pair(capsys, ROOT / "scenarios" / "digital_goods.toml")
    assert result["metrics"]["max_misreport_gain"] > 1e-12 and "worst_agent" in result["metrics"]


def test_a_thinned_price_table_says_so(tmp_path, capsys):
    """eps n / 2 = 2,500 grid prices: the price_law table keeps 2,000 of them and the label says
    it."""
    data = {
        **SMALL,
        "population": {"distribution": "uniform", "n": 5000},
        "mechanism": {"epsilon": 1.0},
        "audit": {"enabled": False},
    }
    text, result = _pair(capsys, _scenario(tmp_path, data))
    prices = result["tables"]["price_law"]["price"]
    assert result["metrics"]["price_set"] == "2,500 prices" and len(prices) == 2000
    assert (
        "price set (table price_law: 2,000 of them, spread evenly; each row's "
        "probability is the full law's)" in text
    )
    assert math.fsum(result["tables"]["price_law"]["probability"]) < 1.0


@pytest.mark.slow
def test_anonymous_game_labels_and_rounding(capsys):
    text, result = _pair(capsys, ROOT / "scenarios" / "anonymous_market_entry.toml")
    assert "((" not in text and "))" not in text
    excess = result["metrics"]["eta_minus_cross_regret"]
    assert excess == 0.0 or abs(excess) > 1e-12


@pytest.mark.parametrize("n, eps", [(40, 0.5), (2000, 2.0)])
def test_the_revenue_bound_is_thm_3_11_and_says_when_it_is_vacuous(tmp_path, capsys, n, eps):
    data = {
        **SMALL,
        "population": {"distribution": "uniform", "n": n},
        "mechanism": {"epsilon": eps, "alpha": 0.02},
        "audit": {"enabled": False, "beta": 0.05},
    }
    _, result = _pair(capsys, _scenario(tmp_path, data))
    m = result["metrics"]
    prices = int(m["price_set"].split()[0].replace(",", ""))
    # Dwork & Roth Thm 3.11, Delta = 1
    bound = m["opt"] - 0.02 * n - (2 / eps) * math.log(prices / 0.05)
    assert m["revenue_bound"] == pytest.approx(bound, rel=1e-9, abs=1e-9)
    label = result["labels"]["revenue_bound"]
    assert ("vacuous at this n and eps" in label) == (bound < 0)
    assert (bound < 0) == (n == 40)


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.3, 0.5, 2.0])
def test_gain_bounds_of_1_or_more_are_marked_vacuous_in_the_text_only(tmp_path, capsys, eps):
    """Values and prices lie in [0, 1], so a gain from a lie is at most 1: Proposition 10.1's 2 eps
    (and the capped DP bounds) say nothing from 1 up, and the text says so; the JSON keeps the plain
    value and label."""
    data = {**SMALL, "mechanism": {"epsilon": eps, "alpha": 0.02}}
    text, result = _pair(capsys, _scenario(tmp_path, data))
    m, shown = result["metrics"], _metric_lines(text, result)
    assert m["bound_2eps"] == pytest.approx(2 * eps, rel=1e-12)
    assert result["labels"]["bound_2eps"] == "bound 2 eps (Prop 10.1)"
    assert shown["bound_2eps"].endswith("(vacuous: gains <= 1)") is (2 * eps >= 1)
    for key in ("bound_exact_dp", "bound_monotone"):
        assert "vacuous" not in result["labels"][key]
        assert shown[key].endswith("(vacuous: gains <= 1)") is (m[key] >= 1), (key, shown[key])
    assert 0 <= m["max_misreport_gain"] <= 1


# --------------------------------------------------------------------- the sweep plot's words


def _hand_results(values_by_eps, labels=None, title="Auction, 200 bidders, eps = 0.5"):
    rows = [
        {
            "params": {"mechanism.epsilon": e},
            "seed": j,
            "status": "ok",
            "metrics": {"gain": v, "epsilon": e},
        }
        for e, vs in values_by_eps.items()
        for j, v in enumerate(vs)
    ]
    header = {"title": title, "parameters": {"mechanism.epsilon": list(values_by_eps)}, "seeds": 3}
    return SweepResults("<hand>", header, rows, labels=labels or {})


def test_plot_title_labels_log_axis_and_band_clipped_at_zero():
    pytest.importorskip("matplotlib")
    data = {0.01: [0.0, 0.0, 0.3], 0.1: [0.1, 0.2, 0.3], 1.0: [0.5, 0.6, 0.7]}
    results = _hand_results(
        data, {"gain": "largest gain from lying", "epsilon": "epsilon (privacy)"}
    )
    fig = sweep_figure(results, "epsilon", ["gain"])
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert (
        ax.get_ylabel() == "largest gain from lying"
        and ax.get_xlabel() == "epsilon (privacy) [mechanism.epsilon]"
    )
    title = fig._suptitle.get_text()
    assert "eps = 0.5" not in title and title.startswith("Auction, 200 bidders")
    low = stats.ttest_1samp(data[0.01], 0).confidence_interval().low
    assert low < 0  # the unclipped t interval goes below 0 ...
    ys = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert ys.min() == 0.0  # ... the band stops at 0: every gain is >= 0


def test_a_metric_with_negative_values_is_not_clipped_and_linear_x_stays_linear():
    pytest.importorskip("matplotlib")
    data = {0.1: [-1.0, 0.0, 0.5], 0.2: [0.0, 0.1, 0.2], 0.3: [0.0, 0.2, 0.4]}
    fig = sweep_figure(_hand_results(data), "epsilon", ["gain"])
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear" and ax.get_ylabel() == "gain"
    low = stats.ttest_1samp(data[0.1], 0).confidence_interval().low
    assert np.isclose(ax.collections[0].get_paths()[0].vertices[:, 1], low).any()


def test_log_spacing_and_title_rules():
    assert log_spaced(np.geomspace(0.05, 2, 7)) and log_spaced([100, 1000, 10000, 100000])
    assert not log_spaced(np.linspace(0.1, 2, 7)) and not log_spaced([0.0, 1.0, 10.0, 100.0])
    assert (
        figure_title("Digital-goods auction, 1,000 uniform bidders, eps = 0.5", ["population.n"])
        == "Digital-goods auction, eps = 0.5"
    )
    assert (
        figure_title("Private auction: revenue against epsilon", ["mechanism.epsilon"])
        == "Private auction: revenue against epsilon"
    )
    # plotted against n, the title no longer says "against epsilon" (the other swept parameter)
    swept = ["mechanism.epsilon", "population.n"]
    assert (
        figure_title("Private auction: revenue against eps", swept, x="population.n")
        == "Private auction: revenue against n"
    )
    assert (
        figure_title("Private auction: revenue against epsilon", swept, x="mechanism.epsilon")
        == "Private auction: revenue against epsilon"
    )
    assert (
        figure_title("Revenue against epsilons", swept, x="population.n")
        == "Revenue against epsilons"
    )


def test_sweep_writes_the_labels_the_plot_uses(tmp_path):
    pytest.importorskip("matplotlib")
    from dpgames.sweep import load_results, plan_sweep, run_sweep

    path = _scenario(tmp_path, {**SMALL, "audit": {"enabled": False}})
    plan = plan_sweep(path, ["epsilon=0.1,1,10"], seeds=2)
    run = run_sweep(plan, tmp_path / "r.jsonl", workers=1, progress=False)
    direct = Scenario.from_file(path).run()
    assert run.results.labels["revenue_over_opt"] == direct.labels["revenue_over_opt"]
    assert load_results(tmp_path / "r.jsonl").labels == run.results.labels
    fig = sweep_figure(run.results, "epsilon", ["revenue_over_opt"])
    assert fig.axes[0].get_ylabel() == "revenue / OPT" and fig.axes[0].get_xscale() == "log"
    assert re.search(r"eps = ", fig._suptitle.get_text()) is None


# --------------------------------------------------------------------- dpgames check


def test_check_validates_and_estimates_without_running(tmp_path, capsys, monkeypatch):
    from dpgames.scenarios import digital_goods as dg

    def refuse(spec, seed):
        raise AssertionError("check must not run the scenario")

    monkeypatch.setattr(dg, "run", refuse)
    path = _scenario(tmp_path)
    out = _run(capsys, ["check", str(path)])
    assert out.startswith(f'{path}: valid digital_goods scenario "{SMALL["title"]}" (seed 5)')
    stages = dg.estimate(Scenario.from_file(path).parse().spec)
    for stage in stages:
        assert stage.what in out
    assert "whole run" in out
    assert main(["check", str(path), "--max-work", "10"]) == 2
    assert "--max-work" in capsys.readouterr().err
    bad = _scenario(tmp_path, {**SMALL, "mechanism": {"epsilon": 0}}, "bad.toml")
    assert main(["check", str(bad)]) == 2
    assert "field 'mechanism.epsilon'" in capsys.readouterr().err


# --------------------------------------------------------------------- notebooks: HTML and a
# DataFrame


def test_result_html_and_frame_hold_every_metric():
    from html.parser import HTMLParser

    from dpgames.scenarios import run_scenario

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.cells, self.inside = [], False

        def handle_starttag(self, tag, attrs):
            self.inside = tag == "td"

        def handle_data(self, data):
            if self.inside:
                self.cells.append(data)
                self.inside = False

    result = run_scenario(ROOT / "scenarios" / "small_exact.toml")
    parser = Cells()
    parser.feed(result._repr_html_())
    pairs = dict(zip(parser.cells[0::2], parser.cells[1::2]))
    for key, value in result.metrics.items():
        shown = pairs[result.labels.get(key, key)]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert math.isclose(_parse(shown), value, rel_tol=5e-6)
    for name, columns in result.tables.items():
        assert pairs[name].startswith(
            f"{len(next(iter(columns.values())))} rows x {len(columns)} columns"
        )
    frame = result.to_frame()
    assert list(frame["key"]) == list(result.metrics) and list(frame["value"]) == list(
        result.metrics.values()
    )


def test_a_misspelt_key_gets_a_suggestion(tmp_path, capsys):
    path = tmp_path / "typo.toml"
    path.write_text(
        Scenario.from_dict(SMALL).to_toml().replace("epsilon = 0.5", "epsilon = 0.5\nalhpa = 0.1")
    )
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "field 'mechanism.alhpa': unknown key (did you mean 'alpha'?" in err


def test_check_counts_one_thing_in_the_singular(capsys):
    """`dpgames check` of Pigou (1 class) and the public project (1 reaction): no "1 classes"."""
    for name in ("pigou.toml", "huang_kannan_public_project.toml"):
        text = _run(capsys, ["check", str(ROOT / "scenarios" / name)])
        assert not re.search(
            r"(?<![\d,.])1 (classes|reactions|runs|iterations|rows|types|agents)\b", text
        ), text
        assert re.search(r"(?<![\d,.])1 (class|reaction)\b", text), text
