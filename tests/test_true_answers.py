"""Degenerate but valid scenarios give their true answer through ``dpgames run``, not an internal
error.

* A mediator without noise is not private: eps = rho = inf is the true privacy level (the definition
  of eps-DP holds for no finite eps when a report moves the output deterministically), and the
  incentive theorem, whose bound grows with eps, then bounds nothing.  The figures are shown as
  ``inf``.
* A take-it-or-leave-it survey whose offers stay far below every cost never stops within
  ``max_rounds``: its success probability is 0 and there is no price given success; the run says so.
* Parameters whose payments (or noise scale) leave the float range are refused up front, naming the
  field.

Oracles: the definitions above and closed forms of the survey's payment, not the code's own output.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dpgames.cli import main
from dpgames.scenarios import large_game, nst_mix
from dpgames.scenarios.invariants import InvariantError, Invariants, check_result, may_be_infinite
from dpgames.scenarios.loader import Scenario
from dpgames.scenarios.result import Metric, Result
from dpgames.validation import ValidationError

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


def scenario(tmp_path: Path, name: str, edits: dict[str, str]) -> Path:
    """A shipped scenario with whole lines replaced (``edits``: the line's start -> the new
    line)."""
    lines = (SCENARIOS / name).read_text().splitlines()
    for start, new in edits.items():
        hits = [i for i, line in enumerate(lines) if line.startswith(start)]
        assert len(hits) == 1, (name, start)
        lines[hits[0]] = new
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def run_json(capsys, path: Path) -> dict:
    code = main(["run", str(path), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def refused(capsys, path: Path) -> str:
    code = main(["run", str(path)])
    captured = capsys.readouterr()
    assert code == 2, (captured.out[-500:], captured.err)
    lines = captured.err.splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith("dpgames: error: ")
        and "internal error" not in lines[0]
    )
    return lines[0]


# --- a mediator without noise
# -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pigou.toml", "grid.toml"])
def test_a_mediator_without_noise_has_epsilon_inf(capsys, tmp_path, name):
    path = scenario(
        tmp_path,
        name,
        {"noise = ": 'noise = "none"', "rounds = ": "rounds = 50", "enabled = ": "enabled = true"},
    )
    metrics = run_json(capsys, path)["metrics"]
    # JSON has no infinity: the project writes non-finite figures as the strings "inf" / "nan"
    assert metrics["epsilon"] == "inf" and metrics["rho"] == "inf" and metrics["sigma"] == 0
    assert metrics["theorem_bound"] == "inf"
    # everything else stays finite (the costs and regrets do not depend on privacy)
    others = {k: v for k, v in metrics.items() if k not in ("epsilon", "rho", "theorem_bound")}
    assert all(
        not isinstance(v, str) or v not in ("inf", "-inf", "nan") for v in others.values()
    ), others
    assert main(["run", str(path)]) == 0
    text = capsys.readouterr().out
    assert any(
        line.startswith("privacy spent: epsilon") and line.rstrip().endswith(" inf")
        for line in text.splitlines()
    ), text


def test_with_noise_epsilon_stays_the_finite_budget(capsys, tmp_path):
    path = scenario(
        tmp_path, "pigou.toml", {"rounds = ": "rounds = 50", "enabled = ": "enabled = false"}
    )
    metrics = run_json(capsys, path)["metrics"]
    assert (
        metrics["epsilon"] <= 1.0 + 1e-9 and math.isfinite(metrics["rho"]) and metrics["sigma"] > 0
    )


def test_an_infinite_epsilon_with_noise_is_still_a_bug():
    """The allowance is the metric's, under its condition (sigma = 0), and only for +inf."""
    base = {"epsilon": "inf", "rho": "inf", "theorem_bound": "inf", "sigma": 0.0}
    check_result(Result("large_game", "", dict(base)), large_game.INVARIANTS)
    for metric, value in [
        ("sigma", 0.5),
        ("epsilon", "nan"),
        ("epsilon", "-inf"),
        ("alpha", "inf"),
    ]:
        with pytest.raises(InvariantError):
            check_result(Result("large_game", "", {**base, metric: value}), large_game.INVARIANTS)
    with pytest.raises(InvariantError):  # another kind declared nothing
        check_result(Result("nst_mix", "", {"epsilon": "inf"}), nst_mix.INVARIANTS)


def test_may_be_infinite_takes_declared_metrics_one_by_one():
    [rule] = may_be_infinite(Metric("loss", "a loss"))
    assert rule.allows("loss", "inf", {}) and not rule.allows("loss_2", "inf", {})
    # a plugin kind names its metrics in its INVARIANTS (as the voting example does); only those,
    # only +inf
    own = Invariants(infinite_ok=may_be_infinite(Metric("max_privacy_loss", "a privacy loss")))
    check_result(Result("true_answers_demo", "", {"max_privacy_loss": "inf"}), own)
    for metrics in (
        {"max_privacy_loss_bound": "inf"},
        {"max_privacy_loss": "-inf"},
        {"max_privacy_loss": "nan"},
    ):
        with pytest.raises(InvariantError):
            check_result(Result("true_answers_demo", "", metrics), own)


# --- a take-it-or-leave-it survey that never stops
# ------------------------------------------------------------

SURVEY = "privacy_market_take_it_or_leave_it.toml"


def test_a_survey_whose_offers_stay_below_every_cost_never_stops(capsys, tmp_path):
    # Offers 1e-300 2^j, j < 40, at most ~5.5e-289: a passer-by accepts with that probability (costs
    # uniform on [0, 1]); a round needs 450 acceptances of 500, which has probability 0 in floats.
    # Each round pays 500 F(p) p eps = 250 p^2, about 1e-577 in all: 0 in floats.
    metrics = run_json(
        capsys, scenario(tmp_path, SURVEY, {"start_price = ": "start_price = 1e-300"})
    )["metrics"]
    assert metrics["stop_probability"] == 0
    assert metrics["expected_payment"] == 0
    assert "mean_price" not in metrics  # no success to condition on
    assert metrics["outcome"] == "no round succeeds within max_rounds = 40"


def test_a_survey_of_costs_far_above_its_offers_pays_the_few_who_accept(capsys, tmp_path):
    # Costs uniform on [0, 1e30]: the offers p_j = 0.01 2^j (j < 40) are accepted with probability
    # p_j / 1e30, far too rarely to end a round, so every round is reached and pays 500 (p_j / 1e30)
    # p_j eps: E[payment] = 250e-30 sum_j (0.01 2^j)^2 = 250e-30 1e-4 (4^40 - 1) / 3.
    edits = {"costs = ": 'costs = { law = "uniform", low = 0, high = 1e30 }'}
    metrics = run_json(capsys, scenario(tmp_path, SURVEY, edits))["metrics"]
    assert metrics["stop_probability"] == 0 and "mean_price" not in metrics
    assert metrics["expected_payment"] == pytest.approx(250e-30 * 1e-4 * (4**40 - 1) / 3, rel=1e-9)


@pytest.mark.parametrize(
    "line, field",
    [
        (
            "epsilon = 1e308",
            "mechanism.epsilon",
        ),  # 500 x 1e308 x 0.01 x 2^40: beyond the float range
        ("start_price = 1e308", "mechanism.start_price"),  # the second offer, 2e308, already is
        ("epsilon = 5e-324", "mechanism.epsilon"),  # the noise's scale 1/eps is
    ],
)
def test_a_survey_whose_payments_overflow_is_refused_naming_the_field(
    capsys, tmp_path, line, field
):
    message = refused(capsys, scenario(tmp_path, SURVEY, {line.split("=")[0]: line}))
    assert f"'{field}'" in message and "float range" in message


def test_the_largest_payment_that_fits_runs(capsys, tmp_path):
    # 500 x 0.01 x 2^40 ~ 5.5e12: eps = 1e290 keeps every payment below 1e303 (the limit is 2^1023 ~
    # 9e307)
    metrics = run_json(capsys, scenario(tmp_path, SURVEY, {"epsilon = ": "epsilon = 1e290"}))[
        "metrics"
    ]
    assert math.isfinite(metrics["expected_payment"]) and metrics["stop_probability"] == 1


_extremes = st.sampled_from([5e-324, 1e-300, 1e-12, 0.01, 1.0, 1e12, 1e290, 1e300, 1e308])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    start_price=_extremes,
    epsilon=_extremes,
    high=_extremes,
    max_rounds=st.integers(1, 1000),
    sample_size=st.integers(1, 40),
)
def test_property_a_survey_is_refused_cleanly_or_gives_finite_figures(
    start_price, epsilon, high, max_rounds, sample_size
):
    """Any survey: a ValidationError naming a field, or a Result (its invariants checked by the
    loader) with finite figures and a mean price exactly when some round can succeed."""
    spec = {
        "kind": "privacy_market",
        "seed": 1,
        "population": {
            "n": 10,
            "bit_rate": 0.3,
            "costs": {"law": "uniform", "low": 0, "high": high},
        },
        "mechanism": {
            "type": "take_it_or_leave_it",
            "sample_size": sample_size,
            "alpha": 0.2,
            "epsilon": epsilon,
            "start_price": start_price,
            "max_rounds": max_rounds,
        },
        "audit": {"lies": 0},
    }
    try:
        result = Scenario.from_dict(spec).run()
    except ValidationError as exc:
        assert exc.field.startswith("mechanism.") and "float range" in str(exc), str(exc)
        return
    m = result.metrics
    assert all(not isinstance(v, str) or v not in ("inf", "-inf", "nan") for v in m.values()), m
    assert ("mean_price" in m) != ("outcome" in m)
    assert 0 <= m["stop_probability"] <= 1 and m["expected_payment"] >= 0
