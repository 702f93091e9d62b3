"""The privacy_market scenario kind: the shipped examples run, their figures pass the invariants and
agree with the library called directly; bad fields name the field."""

from pathlib import Path

import pytest

from dpgames.scenarios import registry
from dpgames.scenarios.loader import run_scenario
from dpgames.scenarios.spec import ScenarioError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "scenarios").glob("privacy_market_*.toml"))


def test_kind_is_registered_in_pyproject_and_the_fallback_table():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'privacy_market = "dpgames.scenarios.privacy_market"' in text
    assert registry.BUILTIN_KINDS["privacy_market"] == "dpgames.scenarios.privacy_market"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_run_and_pass_their_invariants(path):
    result = run_scenario(path, seed=3)
    metrics = result.metrics
    if "audit_max_gain" in metrics:
        assert metrics["audit_max_gain"] <= 0 and metrics["truthful"]
    assert 0 <= metrics["probability_within_target"] <= 1
    assert run_scenario(path, seed=3).metrics == metrics  # same seed, same result


def test_accuracy_example_agrees_with_the_library():
    path = ROOT / "scenarios" / "privacy_market_accuracy.toml"
    metrics = run_scenario(path, seed=5).metrics
    assert metrics["goal_met"] and metrics["payment_ratio_to_envy_free"] >= 1
    assert metrics["n_bought"] == 9500
    ef_ratio = metrics["total_payment"] / metrics["envy_free_payment"]
    assert ef_ratio == pytest.approx(metrics["payment_ratio_to_envy_free"], rel=1e-12)


@pytest.mark.parametrize(
    "edit, field",
    [
        (("alpha = 0.05", "alpha = 1.5"), "mechanism.alpha"),
        (
            (
                'costs = { law = "uniform", low = 0, high = 1 }',
                'costs = { law = "uniform", low = 2, high = 1 }',
            ),
            "population.costs.high",
        ),
        (
            (
                'costs = { law = "uniform", low = 0, high = 1 }',
                'costs = { law = "discrete", values = [1, 2], probabilities = [0.5, 0.6] }',
            ),
            "population.costs.probabilities",
        ),
        (("n = 10000", "n = 0"), "population.n"),
        (('type = "accuracy"', 'type = "auction"'), "mechanism.type"),
        (("lies = 100", "lies = 100\nextra = 1"), "audit.extra"),
    ],
)
def test_bad_fields_are_named(tmp_path, edit, field):
    text = (ROOT / "scenarios" / "privacy_market_accuracy.toml").read_text()
    old, new = edit
    assert old in text
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ScenarioError) as e:
        run_scenario(path, seed=1)
    assert e.value.field == field


def test_the_accuracy_example_sweeps(tmp_path):
    from dpgames.sweep.runner import plan_sweep, run_sweep

    # 4 alphas x 2 sizes
    plan = plan_sweep(ROOT / "scenarios" / "privacy_market_accuracy.toml", seeds=1)
    done = run_sweep(plan, tmp_path / "market.jsonl", workers=1, progress=False)
    assert done.ran == 8
    text = (tmp_path / "market.jsonl").read_text()
    assert text.count('"status":"ok"') == 8 and text.count('"truthful":true') == 8


def test_take_it_or_leave_it_table_lists_the_reachable_rounds_and_no_rounding_bias():
    """The rounds table ends at the last round that can stop the survey (it used to print 40 rounds
    whose head and tail were all 0), losing none of the stop mass; with costs independent of the
    bits the released count is unbiased, so the bias is 0, not a 5e-15 artefact."""
    import math

    result = run_scenario(ROOT / "scenarios" / "privacy_market_take_it_or_leave_it.toml")
    rounds = result.tables["rounds"]
    assert rounds["stop_probability"][-1] > 0
    assert math.fsum(rounds["stop_probability"]) == pytest.approx(
        result.metrics["stop_probability"], abs=1e-12
    )
    prices = rounds["price"]
    assert all(b == pytest.approx(2 * a) for a, b in zip(prices, prices[1:]))  # doubling offers
    assert result.metrics["bias"] == 0.0
