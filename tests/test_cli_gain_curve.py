"""``dpgames gain-curve``: a user's mechanism family audited at each parameter value, as text, CSV
and PNG.

Oracle: a brute force over every profile, lie and outcome of the mean/median mix (expected utilities
summed outcome by outcome), independent of the audits.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dpgames.cli import InputError, load_target, main
from dpgames.validation import ValidationError

FAMILY = textwrap.dedent("""
    from dpgames import CustomMechanism

    def law(q, r):
        mean, median = round(sum(r) / len(r)), sorted(r)[len(r) // 2]
        return {mean: 1 - q, median: q} if mean != median else {mean: 1.0}

    def build(q):
        return CustomMechanism(lambda r: law(q, r), lambda t, o: -abs(t - o), types=range(4), anonymous=True)

    def broken(q):
        raise RuntimeError("no mechanism here")

    NOT_CALLABLE = 3
""")


def brute_best_gain(q, n=3, types=range(4)):
    """The best lie's gain over every profile, agent and lie, from the law written out again."""

    def law(r):
        mean, median = round(sum(r) / len(r)), sorted(r)[len(r) // 2]
        return {mean: 1 - q, median: q} if mean != median else {mean: 1.0}

    def eu(t, r):
        return sum(-abs(t - o) * p for o, p in law(r).items())

    best = -float("inf")
    for r in itertools.product(types, repeat=n):
        for i, t in enumerate(r):
            for x in types:
                if x != t:
                    best = max(best, eu(t, r[:i] + (x,) + r[i + 1 :]) - eu(t, r))
    return best


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse's own errors: one line, exit code 2
            code = stop.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture()
def family(tmp_path):
    path = tmp_path / "family.py"
    path.write_text(FAMILY)
    return path


@pytest.mark.slow
def test_gain_curve_table_csv_and_png_equal_the_brute_force(family, tmp_path):
    stem = tmp_path / "out" / "curve"
    code, out, err = run(
        [
            "gain-curve",
            f"{family}:build",
            "--values",
            "linspace:0:1:5",
            "--parameter",
            "q",
            "--n",
            "3",
            "--out",
            str(stem),
        ]
    )
    assert code == 0, err
    assert "DominantAudit against q (5 values" in out and f"{stem}.csv" in err
    rows = list(csv.DictReader((tmp_path / "out" / "curve.csv").read_text().splitlines()))
    assert [float(r["q"]) for r in rows] == [0.0, 0.25, 0.5, 0.75, 1.0]
    for r in rows:
        best = brute_best_gain(float(r["q"]))
        assert float(r["max_gain"]) == pytest.approx(max(best, 0.0), abs=1e-12)
        assert float(r["margin"]) == pytest.approx(-best, abs=1e-12)
        assert (r["truthful"] == "True") is (best <= 1e-12)
        assert {"worst_agent", "worst_true_type", "worst_lie", "worst_profile"} <= set(r)
    assert (tmp_path / "out" / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_gain_curve_at_a_profile_with_coalitions(family, tmp_path):
    code, out, err = run(
        [
            "gain-curve",
            f"{family}:build",
            "--values",
            "0,1",
            "--profile",
            "0,1,3",
            "--coalitions",
            "2",
            "--out",
            str(tmp_path / "c"),
        ]
    )
    assert code == 0, err
    assert "CoalitionAudit" in out
    header = (tmp_path / "c.csv").read_text().splitlines()[0]
    assert "worst_coalition" in header and "worst_gains" in header


@pytest.mark.parametrize(
    "args, message",
    [
        (["{family}build", "--values", "1", "--n", "3"], "FILE.py:NAME or MODULE:NAME"),
        (["/nonexistent/nothere.py:build", "--values", "1", "--n", "3"], "no file"),
        (["{family}:nope", "--values", "1", "--n", "3"], "no callable nope"),
        (["{family}:NOT_CALLABLE", "--values", "1", "--n", "3"], "no callable NOT_CALLABLE"),
        (["no_such_module_xyz:build", "--values", "1", "--n", "3"], "ModuleNotFoundError"),
        (
            ["{family}:broken", "--values", "1", "--n", "3"],
            "build raised RuntimeError: no mechanism here at value=1",
        ),
        (["{family}:build", "--values", "linspace:0:1", "--n", "3"], "--values"),
        (
            ["{family}:build", "--values", "2", "--n", "3"],
            "probabilities must be finite numbers >= 0 (at value=2)",
        ),  # q = 2: probabilities outside [0, 1] (at the first profile met)
        (
            ["{family}:build", "--values", "0", "--profile", "0,1", "--profiles", "all"],
            "--profiles goes with --n",
        ),
        (["{family}:build", "--values", "0", "--profile", "0,9,1"], "9"),
        (["{family}:build", "--values", "0", "--n", "3", "--coalitions", "5"], "coalitions"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(family, tmp_path, args, message):
    argv = ["gain-curve"] + [a.format(family=family) for a in args] + ["--out", str(tmp_path / "o")]
    code, _, err = run(argv)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "o.csv").exists()


def test_a_missing_audit_choice_is_an_argparse_error(family):
    code, _, err = run(["gain-curve", f"{family}:build", "--values", "1"])
    assert code == 2 and "one of the arguments --n --profile is required" in err


def test_load_target_imports_a_module_attribute():
    assert load_target("math:sqrt")(16.0) == 4.0
    with pytest.raises(InputError, match="must be FILE.py:NAME"):
        load_target("math:")


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    values=st.one_of(
        st.text(alphabet="0123456789.,:-lnspaceig", min_size=1, max_size=14),
        st.sampled_from(["0,0.5,1", "linspace:0:1:3", "range:0:2:1", "0.5", "nan", "1,1"]),
    ),
    profile=st.one_of(st.none(), st.text(alphabet="0123456789,.-x", min_size=1, max_size=8)),
)
def test_values_and_profile_clean_error_or_a_curve(family, tmp_path, values, profile):
    where = ["--n", "2"] if profile is None else ["--profile", profile]
    code, out, err = run(
        ["gain-curve", f"{family}:build", "--values", values, *where, "--out", str(tmp_path / "h")]
    )
    if code == 2:
        assert err.startswith("dpgames: error:") and err.count("\n") == 1
        return
    assert code == 0, err
    rows = list(csv.DictReader((tmp_path / "h.csv").read_text().splitlines()))
    assert rows and all(float(r["max_gain"]) >= 0 and 0 <= float(r["value"]) <= 1 for r in rows)


def test_figure_draws_the_best_lies_gain_and_refuses_labels_as_an_axis(family):
    from dpgames.analysis import gain_curve, gain_curve_figure

    build = load_target(f"{family}:build")
    curve = gain_curve(build, [0.0, 0.5, 1.0], parameter="q", n=3, profiles="all")
    [ax] = gain_curve_figure(curve).axes
    [line] = ax.get_lines()[1:]  # after the zero line
    assert line.get_xdata().tolist() == [0.0, 0.5, 1.0]
    assert line.get_ydata().tolist() == pytest.approx(
        [brute_best_gain(q) for q in (0.0, 0.5, 1.0)], abs=1e-12
    )
    named = gain_curve(lambda v: build(0.5), ["low", "high"], n=2, profiles="all")
    with pytest.raises(ValidationError, match="values must be finite numbers to be plotted"):
        gain_curve_figure(named)
