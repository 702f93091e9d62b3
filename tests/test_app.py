"""The Streamlit app, page by page, with streamlit.testing.v1.AppTest (no browser).

The numbers on the pages are checked against independent oracles: the price law written with loops
(tests/auction_oracles.py), brute-force OPT and F2, the theorem's bound by hand, a direct count of
the buyers, and, for uploaded scenario files, the Result that ``dpgames run`` computes for the same
file.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from app_session import ROOT, AppTest, downloaded, start
from auction_oracles import grid_price_probabilities, grid_utility
from dpgames import Scenario, run_scenario

SCENARIOS = ROOT / "scenarios"
SMALL = [0.95, 0.9, 0.8, 0.8, 0.75, 0.6, 0.55, 0.5, 0.4, 0.3, 0.2, 0.1]
SMALL_CSV = ("value\n" + "\n".join(f"{v}" for v in SMALL) + "\n").encode()


def metric(at: AppTest, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r}; have {[m.label for m in at.metric]}"
    return found[0]


def number(text: str) -> float:
    return float(text.replace(",", ""))


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def errors(at: AppTest) -> str:
    assert not at.exception, [e.value for e in at.exception]
    assert at.error, "expected an error box"
    return " ".join(e.value for e in at.error)


def oracle_revenue(values, prices, eps: float) -> float:
    probs = grid_price_probabilities(list(prices), list(values), eps)
    return sum(q * p * sum(1 for v in values if v >= p) for q, p in zip(probs, prices))


def brute_opt(values) -> float:
    return max(v * sum(1 for w in values if w >= v) for v in values)


def brute_f2(values) -> float:
    desc = sorted(values, reverse=True)
    return max(k * desc[k - 1] for k in range(2, len(desc) + 1))


def default_values() -> np.ndarray:
    """The page's default population: that of scenarios/digital_goods.toml (1,000 values uniform on
    [0, 1] from the first stream of seed 2026), as the scenario layer draws it."""
    return Scenario.from_file(SCENARIOS / "digital_goods.toml").parse().build().values


def upload(at: AppTest, source: str, name: str, data: bytes) -> AppTest:
    at.radio(key="dg.source").set_value(source).run()
    at.get("file_uploader")[0].set_value((name, data, "text/plain"))
    return at.run()


# ---------------------------------------------------------------- page 1: the digital-goods auction


def test_auction_page_defaults_match_the_oracles():
    at = start()
    clean(at)
    assert at.title[0].value == "Digital-goods auction"
    values = default_values()
    # Balanced grid for eps = 0.5, n = 1000: alpha = 1 / ceil(0.5 * 1000 / 2) = 1/250.
    prices = np.arange(1, 251) / 250
    assert number(metric(at, "Expected revenue")) == pytest.approx(
        oracle_revenue(values, prices, 0.5), abs=0.006
    )
    assert number(metric(at, "OPT")) == pytest.approx(brute_opt(values), abs=0.006)
    assert number(metric(at, "F2")) == pytest.approx(brute_f2(values), abs=0.006)
    assert number(metric(at, "Fixed price")) == pytest.approx(
        0.5 * np.count_nonzero(values >= 0.5), abs=0.006
    )
    assert metric(at, "Within every bound") == "yes"
    assert metric(at, "Bound 2 eps") == "1 (vacuous)"  # 2 eps = 1: a gain is at most 1 anyway


def test_changing_eps_changes_the_revenue_shown():
    at = start()
    before = metric(at, "Expected revenue")
    at.number_input(key="dg.eps").set_value(0.1).run()
    clean(at)
    after = metric(at, "Expected revenue")
    assert after != before
    prices = np.arange(1, 51) / 50  # alpha = 1 / ceil(0.1 * 1000 / 2)
    assert number(after) == pytest.approx(oracle_revenue(default_values(), prices, 0.1), abs=0.006)


def test_eps_zero_is_not_offered_and_price_lists_are_sorted_or_refused_readably():
    at = start()
    assert 0 < at.number_input(key="dg.eps").min <= 1e-6  # eps = 0 cannot be typed in
    at.radio(key="dg.price_set").set_value("list").run()
    clean(at)
    at.text_input(key="dg.price_list").set_value("0.5, 0.25, 0.5").run()
    clean(at)  # sorted, repeats dropped, and said so
    assert any("sorted" in c.value and "0.25, 0.5" in c.value for c in at.sidebar.caption)
    assert number(metric(at, "Expected revenue")) == pytest.approx(
        oracle_revenue(default_values(), [0.25, 0.5], 0.5), abs=0.006
    )
    at.text_input(key="dg.price_list").set_value("cheap, dear").run()
    assert "separated by commas" in errors(at)
    at.text_input(key="dg.price_list").set_value("0.25, 0.5, 1").run()
    clean(at)
    assert number(metric(at, "Expected revenue")) == pytest.approx(
        oracle_revenue(default_values(), [0.25, 0.5, 1.0], 0.5), abs=0.006
    )


def test_continuous_prices_render_without_the_grid_bound():
    at = start()
    at.radio(key="dg.price_set").set_value("continuous").run()
    clean(at)
    assert not any("Thm 3.11" in c.value for c in at.caption)
    assert any("continuous [0, 1]" in c.value for c in at.caption)


def test_csv_upload_valid_and_invalid():
    at = start()
    at.radio(key="dg.source").set_value("CSV of bids").run()
    clean(at)
    assert at.info, "asks for a file before one is uploaded"
    upload(at, "CSV of bids", "bids.csv", SMALL_CSV)
    clean(at)
    assert number(metric(at, "OPT")) == pytest.approx(brute_opt(SMALL), abs=0.006)
    assert number(metric(at, "F2")) == pytest.approx(brute_f2(SMALL), abs=0.006)
    prices = np.arange(1, 4) / 3  # alpha = 1 / ceil(0.5 * 12 / 2)
    assert number(metric(at, "Expected revenue")) == pytest.approx(
        oracle_revenue(SMALL, prices, 0.5), abs=0.006
    )

    upload(at, "CSV of bids", "typo.csv", b"value\n0.5\nabc\n")
    message = errors(at)
    assert "typo.csv" in message and "line 3" in message and "/tmp" not in message
    upload(at, "CSV of bids", "high.csv", b"0.5\n1.5\n")
    assert "outside [0, 1]" in errors(at)
    upload(at, "CSV of bids", "empty.csv", b"")
    assert "no rows" in errors(at)


HEADLINE = {
    "Expected revenue": "expected_revenue",
    "OPT": "opt",
    "F2": "f2",
    "RSOP": "rsop_revenue",
    "Fixed price": "posted_price_revenue",
}


def assert_page_is(at: AppTest, expected: dict) -> None:
    """Every headline figure of the auction page equals the Result's to the cent it is shown with,
    and the audit's largest gain and the theorem's bound too."""
    for label, name in HEADLINE.items():
        assert number(metric(at, label)) == pytest.approx(expected[name], abs=0.0051), label
    assert float(metric(at, "Largest gain from lying")) == pytest.approx(
        expected["max_misreport_gain"], rel=2e-3
    )
    bound = next(
        float(m.replace(",", ""))
        for c in at.caption
        for m in re.findall(r"revenue >= ([\d.,-]+) with", c.value)
    )
    assert bound == pytest.approx(expected["revenue_bound"], abs=0.0051)


def test_auction_page_defaults_are_dpgames_run_json():
    """The page's defaults are scenarios/digital_goods.toml: its figures are those `dpgames run
    --json` prints."""
    import subprocess
    import sys

    printed = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpgames.cli",
            "run",
            str(SCENARIOS / "digital_goods.toml"),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    expected = json.loads(printed)["metrics"]
    at = start()
    clean(at)
    assert_page_is(at, expected)
    # the figure of the issue, by hand
    assert number(metric(at, "RSOP")) == pytest.approx(238.49, abs=0.0051)


def test_saved_settings_reproduce_the_page(tmp_path):
    at = start()
    at.number_input(key="dg.seed").set_value(7)
    at.number_input(key="dg.n").set_value(400)
    at.number_input(key="dg.eps").set_value(0.3)
    at.selectbox(key="dg.convention").set_value("mcsherry-talwar")
    at.slider(key="dg.posted").set_value(0.4)
    at.number_input(key="dg.rsop").set_value(300).run()
    clean(at)
    saved = tmp_path / "saved.toml"
    saved.write_text(downloaded(at, "Scenario file (TOML)"))
    expected = run_scenario(saved).metrics
    assert expected["epsilon"] == 0.3 and expected["n"] == 400
    assert_page_is(at, expected)
    result = json.loads(downloaded(at, "Result (JSON)"))["metrics"]
    assert all(result[k] == expected[k] for k in [*HEADLINE.values(), "max_misreport_gain"])


def test_toml_upload_reproduces_dpgames_run():
    path = SCENARIOS / "digital_goods.toml"
    expected = run_scenario(path).metrics
    at = start()
    upload(at, "Scenario file (TOML)", path.name, path.read_bytes())
    clean(at)
    assert at.number_input(key="dg.eps").value == 0.5
    assert_page_is(at, expected)
    # Thm 3.11 by hand: OPT - alpha n - (2 / eps) ln(|R| / beta), alpha = 1/250, |R| = 250, beta =
    # 0.05.
    assert expected["revenue_bound"] == pytest.approx(
        expected["opt"] - 1000 / 250 - (2 / 0.5) * math.log(250 / 0.05)
    )


def test_shipped_csv_uploads_by_its_value_column(tmp_path):
    """scenarios/data/example_bids.csv (columns bidder, value) is read by its "value" column, as
    scenarios/from_csv.toml reads it; the saved settings, with the CSV beside them, reproduce the
    page."""
    path = SCENARIOS / "data" / "example_bids.csv"
    rows = [line.split(",") for line in path.read_text().splitlines()[1:] if line.strip()]
    values = [float(v) for _, v in rows]
    at = upload(start(), "CSV of bids", path.name, path.read_bytes())
    clean(at)
    column = [s for s in at.selectbox if s.label == "Column of the bids"][0]
    assert column.options == ["bidder", "value"] and column.value == "value"
    assert number(metric(at, "OPT")) == pytest.approx(brute_opt(values), abs=0.0051)
    assert number(metric(at, "F2")) == pytest.approx(brute_f2(values), abs=0.0051)
    (tmp_path / path.name).write_bytes(path.read_bytes())
    saved = tmp_path / "saved.toml"
    saved.write_text(downloaded(at, "Scenario file (TOML)"))
    assert_page_is(at, run_scenario(saved).metrics)
    # The same file read by the shipped scenario, at its settings: the same OPT.
    assert run_scenario(SCENARIOS / "from_csv.toml").metrics["opt"] == pytest.approx(
        brute_opt(values)
    )


def test_csv_column_chosen_from_the_header():
    data = b"id,score,bid\nx,7,0.9\ny,8,0.4\nz,9,0.2\n"
    at = upload(start(), "CSV of bids", "three.csv", data)
    clean(at)
    column = [s for s in at.selectbox if s.label == "Column of the bids"][0]
    assert column.value == "bid"  # no "value" column: the last one, offered with the others
    assert number(metric(at, "OPT")) == pytest.approx(brute_opt([0.9, 0.4, 0.2]), abs=0.0051)
    column.set_value("score").run()
    assert "outside [0, 1]" in errors(at)
    column = [s for s in at.selectbox if s.label == "Column of the bids"][0]
    column.set_value("id").run()
    assert "three.csv" in errors(at)


def test_toml_upload_fills_the_mechanism_inputs():
    path = SCENARIOS / "small_exact.toml"
    at = start()
    upload(at, "Scenario file (TOML)", path.name, path.read_bytes())
    clean(at)
    assert at.number_input(key="dg.eps").value == 1.0
    assert at.checkbox(key="dg.balanced").value is False
    assert at.number_input(key="dg.alpha").value == 0.05
    prices = np.arange(1, 21) / 20
    assert number(metric(at, "Expected revenue")) == pytest.approx(
        oracle_revenue(SMALL, prices, 1.0), abs=0.006
    )


def test_toml_upload_with_a_count_of_lies_audits_those_reports():
    """``lies = 7`` in an uploaded file: the audit tries 7 evenly spaced reports, as ``dpgames run``
    does. Oracle: every bidder's gain from each report, the price law written with loops."""
    text = (SCENARIOS / "small_exact.toml").read_text().replace('lies = "auto"', "lies = 7")
    assert "lies = 7" in text
    prices = [k / 20 for k in range(1, 21)]
    truthful = [grid_utility(prices, SMALL, 1.0, v, v) for v in SMALL]
    best = max(
        grid_utility(prices, SMALL[:i] + [r] + SMALL[i + 1 :], 1.0, v, r) - truthful[i]
        for i, v in enumerate(SMALL)
        for r in np.linspace(0.0, 1.0, 7).tolist()
    )
    at = upload(start(), "Scenario file (TOML)", "seven_lies.toml", text.encode())
    clean(at)
    assert float(metric(at, "Largest gain from lying")) == pytest.approx(max(best, 0.0), rel=2e-3)
    assert_page_is(at, Scenario.from_text(text).run().metrics)


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            b'kind = "digital_goods"\n[population]\ndistribution = "list"\nvalues = '
            b"[0.5]\n[mechanism]\nepsilon = -1\n",
            "bad.toml: field 'mechanism.epsilon'",
        ),
        (b'kind = "pricing"\n', "bad.toml: field 'kind'"),
        (b'kind = "digital_goods"\n[population\n', "bad.toml: malformed TOML"),
        (
            b'kind = "digital_goods"\n[population]\ndistribution = "list"\nvalues = '
            b"[0.5]\n[mechanism]\nepsilon = 1\n"
            b"typo = 3\n",
            "field 'mechanism.typo': unknown key",
        ),
    ],
)
def test_invalid_toml_upload_shows_the_field(text, expected):
    at = start()
    upload(at, "Scenario file (TOML)", "bad.toml", text)
    assert expected in errors(at)


def test_draw_an_auction_sells_to_the_bids_above_the_price_and_survives_reruns():
    values = default_values()
    at = start()
    assert not any(m.label.startswith("Draw") for m in at.metric)
    at.button(key="button.dg_draw").click().run()
    clean(at)
    shown = float(metric(at, "Draw 1: price"))
    # shown to 4 decimals; the grid's prices are multiples of 0.004
    price = round(shown * 250) / 250
    assert price == pytest.approx(shown, abs=1e-9)
    assert number(metric(at, "Buyers")) == np.count_nonzero(values >= price)
    assert number(metric(at, "Revenue")) == pytest.approx(
        price * np.count_nonzero(values >= price), abs=0.006
    )
    assert shown == pytest.approx(
        run_scenario(SCENARIOS / "digital_goods.toml").metrics["sampled_price"], abs=5e-5
    )
    at.button(key="button.dg_draw").click().run()
    assert metric(at, "Draw 2: price")
    at.run()  # a rerun without a click keeps the last draw
    assert metric(at, "Draw 2: price")
    at.number_input(key="dg.eps").set_value(0.3).run()
    # a draw of other settings is not shown
    assert not any(m.label.startswith("Draw") for m in at.metric)


def test_inputs_survive_a_page_switch():
    at = start()
    at.number_input(key="dg.eps").set_value(0.2).run()
    at.switch_page("dpgames_app/scenarios.py").run()
    at.switch_page("dpgames_app/auction.py").run()
    clean(at)
    assert at.number_input(key="dg.eps").value == 0.2


# ---------------------------------------------------------------- page 4: scenarios


def metric_rows(at: AppTest) -> dict[str, str]:
    frame = at.dataframe[0].value
    return dict(zip(frame["name"], frame["value"]))


def test_scenarios_page_lists_runs_and_offers_downloads():
    at = start("scenarios")
    clean(at)
    assert at.title[0].value == "Scenarios"
    box = at.selectbox(key="sc.file")
    assert set(sorted(p.name for p in SCENARIOS.glob("*.toml"))) <= set(box.options)
    box.set_value("digital_goods.toml").run()
    at.button(key="button.sc_run").click().run()
    clean(at)
    expected = run_scenario(SCENARIOS / "digital_goods.toml").metrics
    rows = metric_rows(at)
    assert float(rows["expected_revenue"]) == pytest.approx(expected["expected_revenue"], rel=1e-5)
    assert float(rows["max_misreport_gain"]) == pytest.approx(
        expected["max_misreport_gain"], rel=1e-5
    )
    # 2 eps, eps = 0.5
    assert expected["bound_2eps"] == 1.0 and rows["bound_2eps"] == "1 (vacuous: gains <= 1)"
    labels = {b.label for b in at.get("download_button")}
    assert {"Result (JSON)", "Metrics (CSV)", "price_law (CSV)"} <= labels
    at.run()  # the result survives a rerun
    assert at.dataframe


def test_scenarios_page_overrides_and_seed():
    at = start("scenarios")
    at.selectbox(key="sc.file").set_value("digital_goods.toml")
    at.text_area(key="sc.overrides").set_value("mechanism.epsilon = 0.1\n")
    at.number_input(key="sc.seed").set_value(7).run()
    at.button(key="button.sc_run").click().run()
    clean(at)
    expected = run_scenario(
        SCENARIOS / "digital_goods.toml", seed=7, overrides={"mechanism.epsilon": 0.1}
    ).metrics
    rows = metric_rows(at)
    assert float(rows["expected_revenue"]) == pytest.approx(expected["expected_revenue"], rel=1e-5)
    # 2 eps < 1, the most a gain can be: a bound with content, unmarked
    assert rows["bound_2eps"] == "0.2"
    assert any("seed 7" in c.value for c in at.caption)


def test_scenarios_page_saves_the_settings_it_ran(tmp_path):
    at = start("scenarios")
    at.selectbox(key="sc.file").set_value("digital_goods.toml")
    at.text_area(key="sc.overrides").set_value("mechanism.epsilon = 0.1\npopulation.n = 300\n")
    at.number_input(key="sc.seed").set_value(11).run()
    at.button(key="button.sc_run").click().run()
    clean(at)
    saved = tmp_path / "saved.toml"
    saved.write_text(downloaded(at, "Save these settings as a scenario file (TOML)"))
    expected = run_scenario(saved).metrics
    assert (expected["n"], expected["epsilon"]) == (300, 0.1)
    rows = metric_rows(at)
    assert float(rows["expected_revenue"].replace(",", "")) == pytest.approx(
        expected["expected_revenue"], rel=1e-5
    )
    assert float(rows["rsop_revenue"].replace(",", "")) == pytest.approx(
        expected["rsop_revenue"], rel=1e-5
    )


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ("mechanism.epsilon 0.1", "overrides, line 1"),
        ("mechanism.epsilon = zero", "not a TOML value"),
        ("mechanism.epsilon = -1", "field 'mechanism.epsilon'"),
    ],
)
def test_scenarios_page_bad_overrides(overrides, expected):
    at = start("scenarios")
    at.selectbox(key="sc.file").set_value("digital_goods.toml")
    at.text_area(key="sc.overrides").set_value(overrides).run()
    if not at.error:
        at.button(key="button.sc_run").click().run()
    assert expected in errors(at)


def test_scenarios_page_invalid_upload():
    at = start("scenarios")
    at.selectbox(key="sc.file").set_value("upload a file...").run()
    assert at.info
    at.get("file_uploader")[0].set_value(
        ("mine.toml", b'kind = "digital_goods"\n[population]\nn = 3\n', "text/plain")
    )
    at.run()
    at.button(key="button.sc_run").click().run()
    assert "mine.toml: field 'population.distribution'" in errors(at)


# ---------------------------------------------------------------- page 2: exact truthfulness


def line_instance(nodes: int, k: int):
    """The graph, ``utility[t][s][r] = -distance(t, r-th facility of the s-th k-subset)`` by
    networkx, and the sensitivity by the oracles' loops."""
    import itertools

    import networkx as nx

    from truthfulness_oracles import sensitivity

    graph = nx.path_graph(nodes)
    dist = dict(nx.all_pairs_shortest_path_length(graph))
    subsets = list(itertools.combinations(range(nodes), k))
    utility = [[[-dist[t][f] for f in subset] for subset in subsets] for t in range(nodes)]
    delta = sensitivity(utility, utility)
    return graph, utility, delta


def start_facility(at: AppTest, nodes: int, k: int, n: int, eps: float, seed: int) -> AppTest:
    at.radio(key="tr.env").set_value("Facility location")
    at.radio(key="tr.graph").set_value("line").run()
    at.number_input(key="tr.nodes").set_value(nodes)
    at.number_input(key="tr.k").set_value(k)
    at.number_input(key="tr.fac_n").set_value(n)
    at.number_input(key="tr.fac_eps").set_value(eps)
    at.number_input(key="tr.seed").set_value(seed)
    return at.run()


def test_truthfulness_page_matches_brute_force_on_a_small_line():
    from truthfulness_oracles import facility_welfare_optimum, gap, mix_gains

    nodes, k, n, eps, seed = 7, 2, 6, 1.0, 2
    # The residents as `dpgames run --seed 2` draws them: uniform over the nodes, from the first
    # child seed.
    agents = [
        int(a)
        for a in np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[0]).integers(
            nodes, size=n
        )
    ]
    graph, utility, delta = line_instance(nodes, k)
    at = start_facility(start("truthfulness"), nodes, k, n, eps, seed)
    clean(at)
    assert at.title[0].value == "Exact truthfulness"
    assert float(metric(at, "Gap gamma of M^P")) == pytest.approx(gap(utility), abs=1e-9)
    em_gain = mix_gains(utility, utility, agents, eps, delta, 0.0)
    cm_gain = mix_gains(utility, utility, agents, eps, delta, 1.0)
    # The least q: max over (agent, lie) with G > 0 of G / (G + L), G the gain under the exponential
    # mechanism (q = 0) and L = -gain under M^P (q = 1), both by recomputing the laws.
    least = max(
        g / (g - c) for gi, ci in zip(em_gain, cm_gain) for g, c in zip(gi, ci) if g > 1e-12
    )
    assert float(metric(at, "Exact least q")) == pytest.approx(least, rel=1e-3)
    objectives = dict(
        zip(at.dataframe[0].value["mechanism"], at.dataframe[0].value["expected welfare"])
    )
    assert objectives["optimum"] == pytest.approx(
        facility_welfare_optimum(graph, agents, range(nodes), k)
    )

    below = least * (1 - 1e-3)
    assert max(max(row) for row in mix_gains(utility, utility, agents, eps, delta, below)) > 0
    at.number_input(key="tr.q").set_value(below).run()
    assert at.warning and "Violated at q" in at.warning[-1].value and not at.success
    # the log slider follows the box
    assert at.slider(key="tr.log_q").value == pytest.approx(math.log10(below))
    at.button(key="button.tr_least").click().run()
    clean(at)
    assert at.number_input(key="tr.q").value == pytest.approx(least, rel=1e-9)
    assert max(max(row) for row in mix_gains(utility, utility, agents, eps, delta, least)) <= 1e-12
    assert at.success and "Exactly truthful" in at.success[0].value


def test_truthfulness_page_q_resets_when_the_environment_changes():
    """q opens at the exact least q of the environment shown (grid -> line must not keep the grid's
    q), and the log slider reaches q ~ 1.6e-4 and below."""
    at = start("truthfulness")
    grid_least = float(metric(at, "Exact least q"))
    assert at.number_input(key="tr.q").value == pytest.approx(grid_least, rel=1e-3)
    at.slider(key="tr.log_q").set_value(math.log10(1.6e-4)).run()
    assert at.number_input(key="tr.q").value == pytest.approx(1.6e-4, rel=1e-9)
    assert any("q = 0.00016" in w.value for w in [*at.warning, *at.success])
    at.radio(key="tr.graph").set_value("line").run()
    clean(at)
    line_least = float(metric(at, "Exact least q"))
    assert line_least != pytest.approx(grid_least, rel=1e-3)
    assert at.number_input(key="tr.q").value == pytest.approx(line_least, rel=1e-3)
    assert (
        at.success
        and "Exactly truthful" in at.success[0].value
        and not any("Violated" in w.value for w in at.warning)
    )


def test_truthfulness_log_slider_reads_as_a_power_of_ten():
    """The slider shows log10 q as a plain number, under a label that says so ("10^-1.94" and
    "1e-2.09" read as no number); the box beside it shows q in plain decimals (not 1.1376e-2)."""
    at = start("truthfulness")
    slider = at.slider(key="tr.log_q")
    assert slider.label.startswith("log10 q")
    assert 10 ** float(slider.proto.format % slider.value) == pytest.approx(
        at.number_input(key="tr.q").value, rel=0.03
    )
    box = at.number_input(key="tr.q")
    assert box.proto.format == "%.6g" and "e" not in f"{box.value:.6g}"


def test_truthfulness_saved_settings_reproduce_the_page(tmp_path):
    at = start_facility(start("truthfulness"), 8, 2, 30, 0.7, 5)
    clean(at)
    saved = tmp_path / "nst.toml"
    saved.write_text(downloaded(at, "Scenario file (TOML)"))
    expected = run_scenario(saved).metrics
    assert float(metric(at, "Exact least q")) == pytest.approx(expected["q_exact"], rel=1e-3)
    assert float(metric(at, "Gap gamma of M^P")) == pytest.approx(expected["gamma"], rel=1e-3)
    objectives = dict(
        zip(at.dataframe[0].value["mechanism"], at.dataframe[0].value["expected welfare"])
    )
    assert objectives["exponential mechanism"] == pytest.approx(
        expected["exponential_objective"], rel=1e-12
    )
    assert json.loads(downloaded(at, "Result (JSON)"))["metrics"]["q_exact"] == expected["q_exact"]


def test_truthfulness_page_one_facility_is_never_exactly_truthful():
    at = start_facility(start("truthfulness"), 6, 1, 20, 1.0, 2026)
    clean(at)
    assert metric(at, "Gap gamma of M^P") == "0"
    assert metric(at, "Exact least q") == "none below 1"
    assert any("gamma = 0" in w.value for w in at.warning)
    assert at.button(key="button.tr_least").disabled


def test_truthfulness_page_pricing_eps_changes_the_revenue():
    at = start("truthfulness")
    at.radio(key="tr.env").set_value("Pricing (digital goods)").run()
    clean(at)

    def revenue():
        return dict(
            zip(at.dataframe[0].value["mechanism"], at.dataframe[0].value["expected revenue"])
        )

    before = revenue()["exponential mechanism"]
    at.number_input(key="tr.price_eps").set_value(0.1).run()
    clean(at)
    after = revenue()["exponential mechanism"]
    assert after != before and after < revenue()["optimum"]


@pytest.mark.parametrize(
    "setting, expected",
    [
        (("tr.k", 3), "too large"),
    ],
)
def test_truthfulness_page_bad_inputs_show_readable_errors(setting, expected):
    at = start("truthfulness")
    at.radio(key="tr.env").set_value("Facility location").run()
    at.number_input(key="tr.rows").set_value(10)
    at.number_input(key="tr.cols").set_value(10)
    # eps = 0 (an error later) cannot be typed in
    assert 0 < at.number_input(key="tr.fac_eps").min <= 1e-6
    at.number_input(key=setting[0]).set_value(setting[1]).run()
    assert expected in errors(at)


# ---------------------------------------------------------------- page 3: large games


def test_large_games_page_pigou_matches_the_closed_form():
    at = start("large_games")
    clean(at)
    assert at.title[0].value == "Large games"
    at.selectbox(key="lg.network").set_value("Pigou (two roads)").run()
    at.number_input(key="lg.pigou_n").set_value(200).run()
    clean(at)
    # Pigou: road 0 costs 1, road 1 the share of drivers on it.  Equilibrium: everybody on road 1,
    # cost n; optimum: half on each road, n/2 * 1 + n/2 * 1/2 = 3n/4.
    assert number(metric(at, "User equilibrium")) == pytest.approx(200.0, abs=0.006)
    assert number(metric(at, "System optimum")) == pytest.approx(150.0, abs=0.006)
    assert float(metric(at, "epsilon spent")) == pytest.approx(1.0, rel=1e-3)
    # Gaussian noise calibrated to rho-zCDP over T rounds: sigma = sqrt(2L) sqrt(T / (2 rho)), L = 1
    # road.
    caption = " ".join(c.value for c in at.caption)
    sigma = float(re.search(r"noise sd ([\d.]+)", caption).group(1))
    rho = float(re.search(r"rho = (\d+\.?\d*)", at.metric[4].proto.help).group(1))
    assert sigma == pytest.approx(math.sqrt(2) * math.sqrt(1000 / (2 * rho)), rel=1e-3)


def test_large_games_page_eps_changes_the_cost_and_the_privacy_spent():
    at = start("large_games")
    at.selectbox(key="lg.network").set_value("Pigou (two roads)").run()
    before = metric(at, "Mediator cost")
    at.number_input(key="lg.eps.Pigou (two roads)").set_value(0.25).run()
    clean(at)
    assert metric(at, "Mediator cost") != before
    assert float(metric(at, "epsilon spent")) == pytest.approx(0.25, rel=1e-3)
    at.selectbox(key="lg.noise.Pigou (two roads)").set_value("none").run()
    clean(at)
    assert metric(at, "epsilon spent") == "none (no noise)"


def test_large_games_delta_steps_on_a_log_scale_and_stays_with_its_network(tmp_path):
    at = start("large_games")
    at.selectbox(key="lg.network").set_value("Pigou (two roads)").run()
    delta = at.select_slider(key="lg.delta.Pigou (two roads)")
    assert delta.value == 1e-6
    options = [float(o) for o in delta.options]
    assert options[options.index(1e-6) + 1] == 1e-5  # one step up is one decade, not 1e-2
    delta.set_value(1e-9).run()
    clean(at)
    assert "delta = 1e-09" in at.metric[4].proto.help
    saved = tmp_path / "pigou.toml"
    saved.write_text(downloaded(at, "Scenario file (TOML)"))
    expected = run_scenario(saved).metrics
    assert number(metric(at, "Mediator cost")) == pytest.approx(
        expected["expected_total_cost"], abs=0.0051
    )
    assert float(metric(at, "epsilon spent")) == pytest.approx(expected["epsilon"], rel=1e-3)
    at.selectbox(key="lg.network").set_value("Grid (synthetic)").run()
    # Pigou's 1e-9 does not leak here
    assert at.select_slider(key="lg.delta.Grid (synthetic)").value == 1e-6


def test_large_games_page_braess_paradox(monkeypatch):
    from dpgames.scenarios.large_game import data_roots

    if not (data_roots()[0] / "Braess").is_dir():
        pytest.skip("no TNTP folder Braess (set DPGAMES_TNTP_DIR)")
    at = start("large_games")
    at.selectbox(key="lg.network").set_value("TNTP: Braess").run()
    at.select_slider(key="lg.gap.TNTP: Braess").set_value(1e-8).run()
    clean(at)
    # 6 drivers: selfish routing splits 2/2/2 at 92 each; the optimum avoids the shortcut, 3/3 at 83
    # each.
    assert number(metric(at, "User equilibrium")) == pytest.approx(552.0, abs=0.006)
    assert number(metric(at, "System optimum")) == pytest.approx(498.0, abs=0.006)


def test_large_games_page_malformed_tntp_names_the_file_and_line(monkeypatch, tmp_path):
    folder = tmp_path / "Broken"
    folder.mkdir()
    (folder / "Broken_net.tntp").write_text("<NUMBER OF LINKS> 1\n<END OF METADATA>\n1 2 oops\n")
    (folder / "Broken_trips.tntp").write_text("<END OF METADATA>\nOrigin 1\n2 : 5;\n")
    monkeypatch.setenv("DPGAMES_TNTP_DIR", str(tmp_path))
    at = start("large_games")
    at.selectbox(key="lg.network").set_value("TNTP: Broken").run()
    message = errors(at)
    assert "Broken_net.tntp:3:" in message and "needs 10 fields" in message


def sweep_file(rows: list[tuple[float, int, float]]) -> bytes:
    """A results file written by hand: a header, then one record per (epsilon, seed, revenue)."""
    import json

    header = {
        "format": "dpgames-sweep/1",
        "scenario": "hand.toml",
        "scenario_sha256": "0" * 64,
        "kind": "digital_goods",
        "title": "by hand",
        "root_seed": 1,
        "parameters": {"mechanism.epsilon": sorted({r[0] for r in rows})},
        "seeds": 3,
    }
    lines = [header] + [
        {
            "params": {"mechanism.epsilon": eps},
            "seed": seed,
            "status": "ok",
            "metrics": {"expected_revenue": rev},
        }
        for eps, seed, rev in rows
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_scenarios_page_sweep_results_mean_and_confidence_interval():
    data = sweep_file(
        [(0.5, 0, 1.0), (0.5, 1, 2.0), (0.5, 2, 3.0), (1.0, 0, 5.0), (1.0, 1, 5.0), (1.0, 2, 8.0)]
    )
    at = start("scenarios")
    at.selectbox(key="sc.sweep_file").set_value("upload a file...").run()
    at.get("file_uploader")[-1].set_value(("eps.jsonl", data, "application/json")).run()
    clean(at)
    summary = at.dataframe[-1].value
    row = summary[summary["mechanism.epsilon"] == 0.5].iloc[0]
    # mean 2, sd 1, 3 seeds: 2 +- t(0.975, 2) / sqrt(3), t(0.975, 2) = 4.302653 (printed t tables).
    assert row["mean"] == pytest.approx(2.0)
    assert row["ci_high"] == pytest.approx(2.0 + 4.302653 / math.sqrt(3), rel=1e-6)
    assert summary[summary["mechanism.epsilon"] == 1.0].iloc[0]["mean"] == pytest.approx(6.0)

    at.get("file_uploader")[-1].set_value(
        ("bad.jsonl", b'{"format": "something else"}\n', "application/json")
    ).run()
    assert "bad.jsonl: not a dpgames sweep results file" in errors(at)
    assert at.title[0].value == "Scenarios"


def run_without(path: Path, table: str, seed: int):
    """``dpgames run`` on a scenario file minus one optional table (to skip its slow extras)."""
    import tomllib

    from dpgames import Scenario

    data = tomllib.loads(path.read_text())
    data.pop(table, None)
    return Scenario(data, str(path), "", path.parent).run(seed)


def test_truthfulness_page_defaults_are_nst_facility_k2():
    expected = run_without(SCENARIOS / "nst_facility_k2.toml", "scaling", 2026).metrics
    at = start("truthfulness")
    clean(at)
    assert float(metric(at, "Exact least q")) == pytest.approx(expected["q_exact"], rel=1e-3)
    objectives = dict(
        zip(at.dataframe[0].value["mechanism"], at.dataframe[0].value["expected welfare"])
    )
    assert objectives["exponential mechanism"] == pytest.approx(
        expected["exponential_objective"], rel=1e-9
    )


def test_large_games_page_defaults_are_dpgames_run_of_grid_toml():
    """The page opens on the settings of scenarios/grid.toml (seed 3): the same numbers."""
    expected = run_without(SCENARIOS / "grid.toml", "incentives", 3).metrics
    at = start("large_games")
    clean(at)
    assert metric(at, "Mediator cost") == f"{expected['expected_total_cost']:,.0f}"
    assert metric(at, "User equilibrium") == f"{expected['ue_total_cost']:,.0f}"
    assert float(metric(at, "alpha (regret)")) == pytest.approx(expected["alpha"], rel=1e-3)


def test_large_games_page_pigou_is_dpgames_run():
    expected = run_without(SCENARIOS / "pigou.toml", "incentives", 7).metrics
    at = start("large_games")
    at.selectbox(key="lg.network").set_value("Pigou (two roads)").run()
    at.number_input(key="lg.seed.Pigou (two roads)").set_value(7).run()
    clean(at)
    assert number(metric(at, "Mediator cost")) == pytest.approx(
        expected["expected_total_cost"], abs=0.006
    )
    assert float(metric(at, "alpha (regret)")) == pytest.approx(expected["alpha"], rel=1e-3)


# ---------------------------------------------------------------- the pages' number formats and CSV
# header

from hypothesis import (  # noqa: E402
    given,
    settings,
    strategies as hs,  # noqa: E402
)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(hs.binary(max_size=300))
def test_csv_header_of_any_upload_is_a_clean_list(data):
    """Any bytes: a list of header cells (strings), empty when the first field is a number; never an
    error."""
    from dpgames_app.ui import csv_header

    header = csv_header(data)
    assert isinstance(header, list) and all(isinstance(c, str) for c in header)
    first = data.decode("utf-8", errors="replace").split("\n", 1)[0].split(",", 1)[0].strip()
    try:
        float(first)
        assert header == []
    except ValueError:
        pass


@settings(max_examples=50, deadline=None, derandomize=True)
@given(hs.floats(allow_nan=False, allow_infinity=False, min_value=-1e14, max_value=1e14))
def test_shown_numbers_read_back_to_the_value(x):
    """The tiles' and tables' numbers (thousands separators, no exponent between 1e-4 and 1e15) read
    back to the value within the precision they promise."""
    from dpgames_app.ui import figure, money

    shown = figure(x)
    assert "e+" not in shown
    assert float(shown.replace(",", "")) == pytest.approx(
        x, rel=1e-3, abs=0.06 if abs(x) < 1e5 else 0.5
    )
    assert float(money(x).replace(",", "")) == pytest.approx(x, abs=0.0051 if abs(x) < 1e4 else 0.5)


@pytest.mark.parametrize(
    "values, expected",
    [
        ([100, 1000, 10000, 100000], True),  # decades: a log axis
        ([0.01, 0.1, 1.0, 10.0], True),
        ([10, 260, 510, 760, 1010], False),  # even steps over two decades: linear
        ([0.5, 1.0, 1.5, 2.0], False),  # one decade is not enough
        ([0, 10, 1000, 100000], False),  # 0 cannot go on a log axis
        ([1, 10], False),  # too few points to tell
    ],
)
def test_log_axes_for_log_spaced_columns(values, expected):
    import pandas as pd

    from dpgames_app.ui import log_spaced

    assert log_spaced(pd.Series(values)) is expected


def test_diverging_scale_shows_a_small_gain_beside_large_costs():
    """The auction's default heatmap: costs down to -0.4, one gain of 3.4e-4 (it used to be drawn
    almost white)."""
    from dpgames_app.ui import diverging

    values = np.r_[np.linspace(-0.4, 0.0, 500), 1e-16, 3.4e-4]
    scale = diverging("gain", "gain", values).to_dict()["scale"]
    low, top = scale["domain"]
    assert low == -top and scale["domainMid"] == 0

    def symlog(x: float) -> float:  # Vega's symlog transform
        return math.copysign(math.log1p(abs(x) / scale["constant"]), x)

    # the gain is at least half as red as the deepest red
    assert symlog(3.4e-4) >= 0.5 * symlog(top)
    assert symlog(1e-16) <= 1e-6 * symlog(top)  # a rounding-level "gain" stays white
    none = diverging("gain", "gain", np.linspace(-0.4, 0.0, 500)).to_dict()["scale"]
    assert none["constant"] == pytest.approx(none["domain"][1] * 1e-3)


def test_scenarios_page_table_charts_label_their_axes_in_plain_numbers():
    """A revenue axis reads 250, not 2.5e+2: every linear axis of the table charts is formatted
    ',~r' (d3's rounded decimal, never an exponent), log axes '~s'."""
    at = start("scenarios")
    at.selectbox(key="sc.file").set_value("digital_goods.toml").run()
    at.button(key="button.sc_run").click().run()
    clean(at)
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert specs
    for spec in specs:
        x, y = spec["encoding"]["x"], spec["encoding"]["y"]
        assert y["axis"]["format"] == ",~r"
        assert x["axis"]["format"] == ("~s" if x.get("scale", {}).get("type") == "log" else ",~r")


def test_a_build_estimated_above_30_seconds_waits_for_a_button():
    """10^7 RSOP splits of the default bidders: the library's estimate (digital_goods.estimate, as
    `dpgames check` prints it) is far above SLOW_SECONDS, so the page says so and computes nothing
    until asked."""
    at = start()
    at.number_input(key="dg.rsop").set_value(10_000_000).run()
    clean(at)
    assert any(b.label == "Compute it" for b in at.button)
    assert not any(m.label == "RSOP" for m in at.metric)  # nothing computed
    assert any("10,000,000 random splits" in i.value for i in at.info)
