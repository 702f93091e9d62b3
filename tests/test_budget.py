"""Budgets before work: every oversized scenario is refused in well under 2 s, with its estimate and
the option that raises the limit; feasible sizes still run; the sizes an estimate uses are the sizes
the run builds (oracle: the built objects themselves)."""

import contextlib
import math
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dpgames.cli import main
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.scenarios import Scenario
from dpgames.scenarios.budget import (
    DEFAULT_MAX_MEMORY,
    DEFAULT_MAX_WORK,
    Budget,
    BudgetError,
    Estimate,
    combinations,
    parse_count,
    parse_size,
    price_count,
)
from dpgames.scenarios.spec import Table
from dpgames.validation import ValidationError

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


def _scenario(name: str, overrides: dict) -> Scenario:
    return Scenario.from_file(SCENARIOS / f"{name}.toml").with_overrides(overrides)


# (scenario file, overrides, the option the message must name)
OVERSIZED = {
    "rsop_samples=1e9": ("digital_goods", {"baselines.rsop_samples": 10**9}, "--max-work"),
    "epsilon=1e6 (default grid)": ("digital_goods", {"mechanism.epsilon": 1e6}, "--max-memory"),
    "epsilon=5e5 (default grid)": ("digital_goods", {"mechanism.epsilon": 5e5}, "--max-memory"),
    "n=1e9 bidders": ("digital_goods", {"population.n": 10**9}, "--max-memory"),
    "alpha=5e-324": ("digital_goods", {"mechanism.alpha": 5e-324}, "--max-memory"),
    "pricing alpha=5e-8": ("nst_pricing", {"mechanism.alpha": 5e-8}, "--max-memory"),
    "pricing alpha=5e-324": ("nst_pricing", {"mechanism.alpha": 5e-324}, "--max-memory"),
    "mediator rounds=1e8": ("pigou", {"mediator.rounds": 10**8}, "--max-"),
    "grid network rows=1e12": ("grid", {"game.rows": 10**12}, "--max-memory"),
    "grid network rows=2^31": ("grid", {"game.rows": 2**31}, "--max-memory"),
    "facility grid rows=1e12": ("nst_facility_k2", {"environment.rows": 10**12}, "--max-memory"),
    "facility grid rows=2^31": (
        "huang_kannan_facility",
        {"environment.rows": 2**31},
        "--max-memory",
    ),
    "public project 1e18 agents": (
        "huang_kannan_public_project",
        {"population.counts.family": 10**18},
        "--max-memory",
    ),
}


@pytest.mark.parametrize("case", sorted(OVERSIZED))
def test_oversized_runs_are_refused_up_front_with_the_estimate_and_the_option(case):
    name, overrides, option = OVERSIZED[case]
    scenario = _scenario(name, overrides)
    with pytest.raises(BudgetError) as info:
        # refused from the estimate: nothing heavy runs (timed in benchmarks/)
        scenario.run(seed=0)
    message = str(info.value)
    beyond_floats = info.value.estimate == math.inf
    if beyond_floats:  # refused whatever the limit
        assert "more than 1e308" in message and "beyond any machine" in message
    else:
        assert "needs about" in message and "(estimate)" in message and "over the limit" in message
        assert option in message
    assert info.value.field.startswith("--max-")
    assert info.value.estimate > info.value.limit
    assert "\n" not in message


def test_the_cli_refuses_in_one_line_and_the_option_raises_the_limit(tmp_path, capsys):
    small = SCENARIOS / "small_exact.toml"
    assert main(["run", str(small), "--max-work", "1e3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--max-work" in err and "needs about" in err
    assert main(["run", str(small), "--max-work", "1e12", "--max-memory", "8GB"]) == 0
    assert main(["run", str(small), "--max-memory", "lots"]) == 2
    assert "--max-memory" in capsys.readouterr().err


def test_a_raised_limit_lets_the_same_run_through():
    """The refusal is the budget's, not the run's: with the limit raised the same scenario runs."""
    scenario = _scenario("small_exact", {})
    with pytest.raises(BudgetError):
        scenario.run(seed=1, budget=Budget(max_work=1e3))
    result = scenario.run(seed=1, budget=Budget(max_work=1e7))
    assert result.metrics["n"] == 12


@pytest.mark.parametrize(
    "name, overrides",
    [
        (
            "digital_goods",
            {"population.n": 20_000, "baselines.rsop_samples": 100},
        ),  # large but feasible
        ("nst_pricing", {"scaling.n": [100]}),
        ("huang_kannan_public_project", {}),
    ],
)
def test_feasible_sizes_still_run_under_the_default_budget(name, overrides):
    result = _scenario(name, overrides).run(seed=3)
    assert result.metrics["n"] >= 1


@pytest.mark.parametrize(
    "name",
    [
        "digital_goods",
        "large_n",
        "small_exact",
        "continuous",
        "from_csv",
        "nst_pricing",
        "nst_facility_k1",
        "nst_facility_k2",
        "huang_kannan_facility",
        "huang_kannan_public_project",
        "pigou",
        "grid",
        "braess",
        "sioux_falls",
        "anaheim",
        "sweep_epsilon",
    ],
)
def test_every_shipped_scenario_fits_the_default_budget_with_room(name):
    """Twice under the defaults: the shipped examples are never near the limits."""
    scenario = Scenario.from_file(SCENARIOS / f"{name}.toml")
    top = Table(scenario.data, scenario.source, "", scenario.base_dir, scenario.data_dirs)
    module = __import__(f"dpgames.scenarios.{scenario.data['kind']}", fromlist=["estimate"])
    try:
        spec = module.parse(top)
    except Exception as exc:  # a TNTP network not installed here
        pytest.skip(str(exc))
    Budget(DEFAULT_MAX_MEMORY / 2, DEFAULT_MAX_WORK / 2).check_all(module.estimate(spec))


# --- the sizes an estimate uses are the sizes the run builds
# ----------------------------------------


@pytest.mark.parametrize(
    "epsilon, alpha, n",
    [
        (0.5, None, 1000),
        (1.0, 0.05, 12),
        (0.1, None, 100_000),
        (3.0, 0.3, 7),
        (0.01, None, 5),
        (2.0, 1 / 3, 10),
    ],
)
def test_price_count_is_the_size_of_the_grid_the_auction_uses(epsilon, alpha, n):
    auction = DigitalGoodsAuction(epsilon, "grid", alpha)
    assert price_count(epsilon, "grid", alpha, n) == auction.prices_for(n).size


@pytest.mark.parametrize(
    "name, field",
    [
        ("digital_goods", "population.n"),
        ("nst_pricing", "scaling.n"),
        ("grid", "game.rows"),
        ("nst_facility_k2", "environment.rows"),
        ("pigou", "incentives.seeds"),
        ("huang_kannan_public_project", "population.counts.family"),
        ("digital_goods", "baselines.rsop_samples"),
    ],
)
def test_sizes_beyond_floats_are_refused_whatever_the_limit(name, field):
    """A 401-digit size is refused (not an OverflowError), even with --max-memory inf --max-work
    inf."""
    value = [10**400] if field == "scaling.n" else 10**400
    with pytest.raises(BudgetError, match="beyond any machine"):
        _scenario(name, {field: value}).run(seed=0, budget=Budget(math.inf, math.inf))


@pytest.mark.parametrize("rounds", [2**63, 10**30, 10**400])
def test_mediator_rounds_beyond_int64_are_refused_naming_the_field(rounds):
    """The mediator's random round and counters are int64: more rounds are refused when the file is
    read, whatever the limits (it was numpy's "high is out of bounds for int64" after the budget
    passed)."""
    with pytest.raises(ValidationError, match="mediator.rounds"):
        _scenario("pigou", {"mediator.rounds": rounds}).run(
            seed=0, budget=Budget(math.inf, math.inf)
        )


def test_price_count_of_a_vanishing_step_is_unbounded_not_an_overflow():
    assert price_count(1.0, "grid", 5e-324, 10) == math.inf
    assert price_count(1.0, "continuous", None, 10) == 11
    assert price_count(1.0, [0.2, 0.5], None, 10) == 2


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, overrides",
    [
        ("nst_facility_k2", {}),
        ("nst_facility_k1", {}),
        ("huang_kannan_facility", {"environment.k": 3}),
        ("nst_pricing", {"mechanism.alpha": 0.1}),
    ],
)
def test_the_environment_sizes_estimated_are_the_ones_built(name, overrides):
    """Types x outcomes x reactions in the estimate's description equal the built environment's."""
    import re

    scenario = _scenario(name, overrides)
    result = scenario.run(seed=0)
    top = Table(scenario.data, scenario.source, "", scenario.base_dir, scenario.data_dirs)
    module = __import__(f"dpgames.scenarios.{scenario.data['kind']}", fromlist=["estimate"])
    text = " ".join(e.what for e in module.estimate(module.parse(top)))
    found = re.search(r"\(([\d,]+) types x ([\d,]+) outcomes", text)
    types, outcomes = (int(g.replace(",", "")) for g in found.groups())
    assert (types, outcomes) == (result.metrics["types"], result.metrics["outcomes"])


def test_combinations_against_math_comb():
    for n, k in [(36, 2), (64, 1), (10, 10), (30, 15), (5, 7)]:
        assert combinations(n, k) == pytest.approx(math.comb(n, k) if k <= n else 0, rel=1e-9)
    assert combinations(1e12, 5) == pytest.approx(1e60 / 120, rel=1e-6)
    assert combinations(1e300, 1e10) == math.inf


# --- options
# -----------------------------------------------------------------------------------------


def test_sizes_and_counts_parse_with_units():
    assert (
        parse_size("8GB") == 8e9
        and parse_size("512MB") == 512e6
        and parse_size("4GiB") == 4 * 2**30
    )
    assert (
        parse_size("2G") == 2 * 2**30
        and parse_size("1000") == 1000
        and parse_size("inf") == math.inf
    )
    assert parse_count("1e11") == 1e11 and parse_count("inf") == math.inf
    for bad in ("", "8XB", "-1GB", "0", "GB", "1e400e"):
        with pytest.raises(ValidationError):
            parse_size(bad)
    for bad in ("", "lots", "0", "-5", "nan"):
        with pytest.raises(ValidationError):
            parse_count(bad)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(st.one_of(st.text(max_size=12), st.floats(), st.integers()))
def test_any_size_text_is_a_positive_size_or_a_clean_error(text):
    for parse in (parse_size, parse_count):
        try:
            value = parse(text)
        except ValidationError as exc:
            assert exc.field.startswith("--max-")
        else:
            assert value > 0


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    memory=st.floats(min_value=0, allow_nan=False),
    work=st.floats(min_value=0, allow_nan=False),
    limit_memory=st.floats(min_value=1, allow_nan=False),
    limit_work=st.floats(min_value=1, allow_nan=False),
)
def test_check_refuses_exactly_what_is_over_a_limit(memory, work, limit_memory, limit_work):
    budget = Budget(limit_memory, limit_work)
    over = memory > limit_memory or work > limit_work
    try:
        budget.check(Estimate("a stage", memory, work))
    except BudgetError as exc:
        assert over and exc.estimate > exc.limit
    else:
        assert not over


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    n=st.integers(1, 10**30),
    epsilon=st.floats(1e-9, 1e9),
    alpha=st.none() | st.floats(5e-324, 1.0),
    rsop=st.integers(2, 10**30),
)
def test_digital_goods_estimates_never_crash(n, epsilon, alpha, rsop):
    """Any validated size: a BudgetError or an estimate that fits (then not run here)."""
    overrides = {"population.n": n, "mechanism.epsilon": epsilon, "baselines.rsop_samples": rsop}
    if alpha is not None:
        overrides["mechanism.alpha"] = alpha
    scenario = _scenario("digital_goods", overrides)
    top = Table(scenario.data, scenario.source, "", scenario.base_dir, scenario.data_dirs)
    from dpgames.scenarios import digital_goods

    estimates = digital_goods.estimate(digital_goods.parse(top))
    assert all(e.memory >= 0 and e.work >= 0 for e in estimates)
    with contextlib.suppress(BudgetError):
        Budget().check_all(estimates)


TNTP = Path(
    __import__("os").environ.get("DPGAMES_TNTP_DIR", ROOT.parent / "shared" / "data" / "tntp")
)


@pytest.mark.skipif(
    not (TNTP / "Anaheim").is_dir(), reason="TNTP networks not installed (DPGAMES_TNTP_DIR)"
)
def test_tntp_sizes_from_the_metadata_bound_the_loaded_network():
    """Oracle: the network load_tntp builds. Links equal; classes (OD pairs) at most zones x
    (zones - 1)."""
    from dpgames.games.tntp import load_tntp
    from dpgames.scenarios.large_game import _tntp_size

    for name in ("SiouxFalls", "Anaheim", "Braess"):
        size = _tntp_size(TNTP / name, name)
        game = load_tntp(TNTP / name)
        assert size.resources == game.network.num_links
        assert game.num_classes <= size.classes


@pytest.mark.skipif(
    not (TNTP / "Anaheim").is_dir(), reason="TNTP networks not installed (DPGAMES_TNTP_DIR)"
)
def test_anaheim_with_the_incentive_audit_is_refused_with_its_runs():
    """The incentive audit's mediator runs (seeds x (1 + audited pairs)) count: Anaheim's run alone
    fits, with the default audit it does not."""
    scenario = Scenario.from_file(SCENARIOS / "anaheim.toml", [TNTP])
    with pytest.raises(BudgetError, match=r"x 11 runs"):
        scenario.with_overrides({"incentives.enabled": True}).run(seed=0)
