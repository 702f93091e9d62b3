"""Summary (mean and 95% CI per cell), the plot, the results table for the app, and the CLI."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpgames.cli import main
from dpgames.sweep import (
    SweepError,
    SweepResults,
    load_results,
    mean_ci,
    summarize,
    summary_metrics,
)
from dpgames.sweep.plot import sweep_figure
from dpgames.sweep.summary import (
    cell_groups,
    format_summary,
    numeric,
    resolve_metric,
    resolve_parameter,
    write_summary_csv,
)

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "sweep_epsilon.toml"


# --- the confidence interval ----------------------------------------------------------------------


def test_mean_ci_against_a_textbook_t_table():
    # 1..5: mean 3, s = sqrt(2.5), t_{0.975, 4} = 2.776 (printed t tables), half-width 2.776 * s /
    # sqrt(5).
    est = mean_ci([1, 2, 3, 4, 5])
    half = 2.776445 * math.sqrt(2.5) / math.sqrt(5)
    assert est.n == 5 and est.mean == 3
    assert est.low == pytest.approx(3 - half, abs=1e-6) and est.high == pytest.approx(
        3 + half, abs=1e-6
    )


def test_mean_ci_equals_the_one_sample_t_test_interval():
    x = np.random.default_rng(3).exponential(size=17)
    est = mean_ci(x, level=0.9)
    ci = stats.ttest_1samp(x, 0.0).confidence_interval(0.9)
    assert (est.low, est.high) == pytest.approx((ci.low, ci.high), rel=1e-12)


@pytest.mark.slow
def test_mean_ci_covers_the_true_mean_95_percent_of_the_time_for_normal_data():
    """Theorem: the t interval has exact coverage for normal samples.  4,000 intervals of 5 draws:
    coverage within 4 binomial standard errors of 0.95."""
    draws = np.random.default_rng(2026).normal(1.5, 2.0, size=(4000, 5))
    covered = [(e.low <= 1.5 <= e.high) for e in map(mean_ci, draws)]
    assert abs(np.mean(covered) - 0.95) < 4 * math.sqrt(0.95 * 0.05 / 4000)


def test_mean_ci_edge_cases():
    assert mean_ci([]).n == 0 and math.isnan(mean_ci([]).mean)
    one = mean_ci([2.0])
    assert one.mean == 2.0 and math.isnan(one.low) and math.isnan(one.high)
    assert mean_ci([1.0, float("nan"), 3.0]).n == 2
    flat = mean_ci([4.0, 4.0, 4.0])
    assert (flat.low, flat.mean, flat.high) == (4.0, 4.0, 4.0)


# --- summary of a hand-made results table
# ------------------------------------------------------------


def _results(rows) -> SweepResults:
    return SweepResults("mem", {"parameters": {"mechanism.epsilon": [], "population.n": []}}, rows)


def _row(eps, n, seed, revenue=None, error=None):
    params = {"mechanism.epsilon": eps, "population.n": n}
    if error:
        return {"params": params, "seed": seed, "status": "error", "error": error}
    return {
        "params": params,
        "seed": seed,
        "status": "ok",
        "metrics": {"epsilon": eps, "revenue": revenue, "label": "x", "ok": revenue > 2},
    }


HAND = [
    _row(0.5, 10, 0, 1.0),
    _row(0.5, 10, 1, 2.0),
    _row(0.5, 10, 2, 4.0),
    _row(1, 10, 0, 3.0),
    _row(1, 10, 1, error="boom"),
    _row(1, 10, 2, 5.0),
]


def test_summarize_groups_seeds_per_cell_and_counts_failures():
    table = summarize(_results(HAND), ["revenue", "ok"])
    assert table["metric"] == ["revenue", "ok", "revenue", "ok"]
    assert table["mechanism.epsilon"] == [0.5, 0.5, 1, 1] and table["population.n"] == [10] * 4
    assert table["seeds"] == [3, 3, 2, 2] and table["failed"] == [0, 0, 1, 1]
    assert table["mean"] == pytest.approx([7 / 3, 1 / 3, 4.0, 1.0])
    # t_{0.975, 1} = 12.706 (t table); s of {3, 5} = sqrt 2
    half = 12.706205 * math.sqrt(2) / math.sqrt(2)
    # every revenue is >= 0, so the t-interval [4 - 12.706, 4 + 12.706] is clipped at 0
    assert (table["ci_low"][2], table["ci_high"][2]) == pytest.approx((0.0, 4 + half), abs=1e-5)
    text = format_summary(table)
    assert text.splitlines()[0].split() == [
        "mechanism.epsilon",
        "population.n",
        "metric",
        "seeds",
        "mean",
        "95%",
        "CI",
    ]
    assert "[0, 16.7062]" in text and "-8.7062" not in text


def test_interval_is_clipped_at_0_only_for_a_metric_never_negative(tmp_path):
    """Oracle: scipy's one-sample t interval, clipped at 0 where every recorded value is >= 0
    (revenue) and left alone where one is negative (the same values shifted by -1 in one cell)."""
    rows = HAND[:3] + [_row(1, 10, j, r) for j, r in enumerate([0.0, 0.001, 0.03])]
    shifted = [
        dict(r, metrics=dict(r["metrics"], revenue=r["metrics"]["revenue"] - 1))
        if r["params"]["mechanism.epsilon"] == 1
        else r
        for r in rows
    ]
    for records, floor in ((rows, 0.0), (shifted, -math.inf)):
        table = summarize(_results(records), ["revenue"])
        for i, eps in enumerate(table["mechanism.epsilon"]):
            values = [
                r["metrics"]["revenue"] for r in records if r["params"]["mechanism.epsilon"] == eps
            ]
            ci = stats.ttest_1samp(values, 0.0).confidence_interval()
            assert table["ci_low"][i] == pytest.approx(max(ci.low, floor), abs=1e-9)
            assert table["ci_high"][i] == pytest.approx(ci.high, abs=1e-9)
        lines = write_summary_csv(table, tmp_path / "s.csv").read_text().splitlines()[1:]
        assert [float(line.split(",")[-2]) for line in lines] == pytest.approx(table["ci_low"])
    # t-interval of {0, .001, .03} < 0
    assert summarize(_results(rows), ["revenue"])["ci_low"][1] == 0.0


def test_summary_has_no_row_for_a_label_and_no_interval_on_a_constant(tmp_path):
    failed = [_row(2, 10, 0, error="boom"), _row(2, 10, 1, error="bang")]
    table = summarize(_results(HAND + failed))
    cells = list(zip(table["mechanism.epsilon"], table["metric"]))
    assert (0.5, "label") not in cells and (1, "label") not in cells  # "x" is no number in any seed
    # every seed failed: shown
    assert [m for e, m in cells if e == 2] == [
        "epsilon",
        "revenue",
        "label",
        "ok",
    ]
    assert all(
        s == 0 and f == 2
        for e, s, f in zip(table["mechanism.epsilon"], table["seeds"], table["failed"])
        if e == 2
    )
    i = cells.index((0.5, "epsilon"))  # the same value in every seed: an echo, not an estimate
    assert (table["seeds"][i], table["mean"][i]) == (3, 0.5)
    assert math.isnan(table["ci_low"][i]) and math.isnan(table["ci_high"][i])
    lines = write_summary_csv(table, tmp_path / "s.csv").read_text().splitlines()
    assert lines[1 + i] == "0.5,10,epsilon,3,0,0.5,,"  # undefined: empty cells
    assert "-" in format_summary(table).splitlines()[1 + i]


def test_default_summary_metrics_are_those_that_vary_across_seeds():
    # epsilon is an echo of the parameter (constant within each cell); label is not a number.
    assert summary_metrics(_results(HAND)) == ["revenue", "ok"]
    assert summary_metrics(_results(HAND), ["rev"]) == ["revenue"]


def test_metric_and_parameter_names_resolve_or_say_what_exists():
    metrics = ["expected_revenue", "rsop_revenue", "opt"]
    assert (
        resolve_metric("opt", metrics) == "opt"
        and resolve_metric("expected", metrics) == "expected_revenue"
    )
    with pytest.raises(
        SweepError, match="metric 'revenue' is ambiguous: use one of expected_revenue, rsop_revenue"
    ):
        resolve_metric("revenue", metrics)
    with pytest.raises(
        SweepError, match=r"no metric 'welfare' in the results \(metrics: expected_revenue"
    ):
        resolve_metric("welfare", metrics)
    assert (
        resolve_parameter("epsilon", ["mechanism.epsilon", "population.n"]) == "mechanism.epsilon"
    )
    with pytest.raises(SweepError, match="'alpha' is not a swept parameter"):
        resolve_parameter("alpha", ["mechanism.epsilon"])


def test_results_table_for_the_app_has_one_row_per_cell():
    results = _results(HAND)
    columns = results.columns()
    assert list(columns) == [
        "mechanism.epsilon",
        "population.n",
        "seed",
        "status",
        "epsilon",
        "revenue",
        "label",
        "ok",
        "error",
    ]
    assert columns["revenue"] == [1.0, 2.0, 4.0, 3.0, None, 5.0]
    assert columns["error"] == [None] * 4 + ["boom", None]
    frame = results.to_frame()
    assert frame.shape == (6, 9) and frame["revenue"].sum() == 15.0


# --- the plot
# ----------------------------------------------------------------------------------------


def test_plot_draws_the_means_and_the_t_intervals_of_each_cell():
    rows = [
        _row(e, n, j, r)
        for (e, n), base in {(0.5, 10): 1.0, (1, 10): 2.0, (0.5, 20): 5.0, (1, 20): 6.0}.items()
        for j, r in enumerate([base, base + 1, base + 3])
    ]
    fig = sweep_figure(_results(rows), "epsilon", ["revenue"])
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == ["n=10", "n=20"]
    for line, bases in zip(ax.lines, ([1.0, 2.0], [5.0, 6.0])):
        assert list(line.get_xdata()) == [0.5, 1]
        assert list(line.get_ydata()) == pytest.approx([b + 4 / 3 for b in bases])
    for band, bases in zip(ax.collections, ([1.0, 2.0], [5.0, 6.0])):
        ys = band.get_paths()[0].vertices[:, 1]
        for b in bases:
            # the band reaches the t interval of {b, b + 1, b + 3} (scipy's t-test oracle),
            # clipped at 0: revenues >= 0
            ci = stats.ttest_1samp([b, b + 1, b + 3], 0).confidence_interval()
            assert np.isclose(ys, max(ci.low, 0.0)).any() and np.isclose(ys, ci.high).any()
    assert ax.get_xlabel() == "epsilon [mechanism.epsilon]" and ax.get_ylabel() == "revenue"


# --- the command line
# ---------------------------------------------------------------------------------

SMALL = ["--set", "epsilon=0.25,1", "--set", "n=30,60", "--set", "rsop_samples=40", "--seeds", "3"]


@pytest.mark.slow
def test_cli_sweep_prints_the_summary_and_writes_results_and_csv(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    assert main(["sweep", str(SCENARIO), *SMALL, "--workers", "1", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "revenue_over_opt" in text and "max_misreport_gain" in text and "95% CI" in text
    assert f"12 cells in {out} (12 run now, 0 already there)" in text
    results = load_results(out)
    assert len(results.rows) == 12 and results.header["summary"][0] == "revenue_over_opt"
    csv_lines = (tmp_path / "r.summary.csv").read_text().splitlines()
    assert csv_lines[0].startswith(
        "mechanism.epsilon,population.n,baselines.rsop_samples,metric,seeds"
    )
    # one row per cell and metric with a number in some seed of the cell (labels have none)
    numeric_pairs = sum(
        any(math.isfinite(numeric(r["metrics"].get(m))) for r in rows)
        for rows in cell_groups(results)
        for m in results.metrics
    )
    assert len(csv_lines) == 1 + numeric_pairs
    # the theorem the example illustrates: the gain from lying stays below 2 eps in every cell
    for row in results.rows:
        assert row["metrics"]["max_misreport_gain"] <= 2 * row["params"]["mechanism.epsilon"]

    assert (
        main(["sweep", str(SCENARIO), *SMALL, "--workers", "1", "--out", str(out), "--resume"]) == 0
    )
    assert "(0 run now, 12 already there)" in capsys.readouterr().out

    png = tmp_path / "plot.png"
    assert (
        main(
            [
                "plot",
                str(out),
                "--x",
                "epsilon",
                "--y",
                "revenue_over_opt,expected_revenue",
                "--out",
                str(png),
                "--log-x",
            ]
        )
        == 0
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--set", "epsilonn=1,2"],
            r"sweep_epsilon.toml: parameter 'epsilonn': no field of that name",
        ),
        (["--set", "low=0,0.1", "--set", "x"], r"--set 'x': expected NAME=V1,V2"),
        (["--set", "epsilon=1,1"], r"--set epsilon: value 1 appears twice"),
        (["--set", "seed=1,2"], r"parameter 'seed': cannot be swept"),
        (["--set", "epsilon=range:1:0:1"], r"--set epsilon: range must be \[start, stop, step\]"),
        (
            ["--set", "epsilon=-1,-2", "--set", "n=30", "--seeds", "1"],
            r"swept value mechanism.epsilon = -1 is invalid: .*field 'mechanism.epsilon': "
            r"must be a number > 0",
        ),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, message):
    code = main(
        [
            "sweep",
            str(SCENARIO),
            *args,
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path / "r.jsonl"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("dpgames: error: ")
    assert re.search(message, err[-1]), err


def test_cli_plot_errors(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    assert (
        main(
            [
                "sweep",
                str(SCENARIO),
                "--set",
                "n=30",
                "--set",
                "rsop_samples=40",
                "--seeds",
                "2",
                "--set",
                "epsilon=0.5,1",
                "--workers",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["plot", str(out), "--x", "epsilon", "--y", "revenue"]) == 2
    assert "metric 'revenue' is ambiguous: use one of expected_revenue" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "none.jsonl"), "--x", "epsilon", "--y", "opt"]) == 2
    assert "none.jsonl: results file not found" in capsys.readouterr().err
    header = json.loads(out.read_text().splitlines()[0])
    assert header["parameters"]["mechanism.epsilon"] == [0.5, 1]
