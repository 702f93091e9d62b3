"""The public API of privacy/, mechanisms/ and games/ at the edges: extreme but finite inputs give a
ValidationError naming the argument or finite figures (a documented inf where infinity is the true
answer), never NaN, another exception, a hang or a MemoryError.  One property over the entry points,
then a named regression test for every input once seen to fail in these layers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from dpgames import cli
from dpgames.agents import Uniform
from dpgames.games import (
    CongestionGame,
    PolynomialCosts,
    grid_network,
    price_of_anarchy,
    system_optimum,
    user_equilibrium,
)
from dpgames.games.atomic import round_players
from dpgames.mechanisms.facility_location import grid_graph, line_graph
from dpgames.privacy import (
    AboveThreshold,
    Accountant,
    BinaryTreeCounter,
    ExponentialMechanism,
    FiniteDistribution,
    GaussianMechanism,
    KaryResponse,
    LaplaceMechanism,
    PrivacyGuarantee,
    ReportNoisyMax,
    SparseVector,
    WarnerResponse,
    gaussian_delta,
    laplace_delta,
    sample_discrete_laplace,
    zcdp_to_dp,
)
from dpgames.scenarios import Scenario
from dpgames.validation import ValidationError

# A clean error or finite figures, and no numpy RuntimeWarning on the way (an overflow the code
# meant is silenced where it happens, with a comment saying why).
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None)
EXTREME = [
    5e-324,
    1e-300,
    1e-12,
    0.5,
    1.0,
    700.0,
    1e12,
    1e300,
    1.7e308,
    2**63,
    10**400,
    0,
    -1.0,
    math.inf,
    math.nan,
    "1",
    None,
    True,
]
extreme = st.sampled_from(EXTREME)
small_int = st.sampled_from([1, 2, 3, 10, 2**31, 2**63, 10**12, 10**400, 0, -1, 2.0, "3", None])


def _finite(value) -> bool:
    """Every float in ``value`` (a number, array, guarantee, distribution ...) is finite."""
    if isinstance(value, PrivacyGuarantee):
        return math.isfinite(value.epsilon) and math.isfinite(value.delta)
    if isinstance(value, FiniteDistribution):
        return bool(np.isfinite(value.probabilities).all())
    if isinstance(value, (float, int, np.floating, np.integer)):
        return math.isfinite(float(value))
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
    return True


def _clean(call):
    """Run ``call``: a ValidationError (with a field) or a result; any other exception fails."""
    try:
        result = call()
    except ValidationError as exc:
        assert isinstance(exc.field, str) and "\n" not in str(exc)
        result = exc
    return result


# --- one property over the entry points
# ---------------------------------------------------------------------
ENTRY_POINTS = {
    "laplace release": lambda a, b, k: LaplaceMechanism(a, b).release([a, b], rng=0),
    "laplace error bound": lambda a, b, k: LaplaceMechanism(a).error_bound(b, k),
    "laplace variance": lambda a, b, k: LaplaceMechanism(a, b).variance,
    "exponential law": lambda a, b, k: ExponentialMechanism(a, b).distribution([a, b, 0.0]),
    "exponential loss bound": lambda a, b, k: ExponentialMechanism(a, b).utility_loss_bound(k, 1.0),
    "noisy max law": lambda a, b, k: ReportNoisyMax(a, b).output_distribution([0.0, 1.0]),
    "gaussian delta": lambda a, b, k: gaussian_delta(a, b),
    "gaussian analytic": lambda a, b, k: (
        GaussianMechanism.analytic(a, min(abs(b), 0.5) if isinstance(b, float) else b).sigma
    ),
    "gaussian release": lambda a, b, k: GaussianMechanism(a, b).release([1.0], rng=0),
    "zcdp to dp": lambda a, b, k: zcdp_to_dp(a, 1e-6),
    "laplace delta": lambda a, b, k: laplace_delta(a, b, 1.0),
    "guarantee group": lambda a, b, k: PrivacyGuarantee(a, 1e-9).for_group(k),
    "accountant basic": lambda a, b, k: (
        Accountant().spend("e", PrivacyGuarantee(a), k).basic_total()
    ),
    "accountant advanced": lambda a, b, k: (
        Accountant().spend("e", PrivacyGuarantee(a), k).advanced_total(1e-6)
    ),
    "accountant rdp": lambda a, b, k: (
        Accountant().spend("e", PrivacyGuarantee(a), k).rdp_total(1e-6)
    ),
    "accountant best": lambda a, b, k: (
        Accountant().spend("e", PrivacyGuarantee(a), k).best_total(1e-6)
    ),
    "warner": lambda a, b, k: WarnerResponse(
        min(abs(a), 0.9) if isinstance(a, float) else a
    ).estimate_yes(1, k),
    "kary": lambda a, b, k: KaryResponse(k, a).p_keep,
    "above threshold": lambda a, b, k: AboveThreshold(a, 0.0, b).accuracy(k, 0.1),
    "sparse vector": lambda a, b, k: SparseVector(a, 0.0, 2, 1e-6, b).guarantee,
    "tree variance": lambda a, b, k: BinaryTreeCounter(
        8, epsilon=a, sensitivity=b
    ).error_variance(),
    "from probabilities": lambda a, b, k: FiniteDistribution.from_probabilities([a, b]),
    "uniform": lambda a, b, k: Uniform(min(a, b), max(a, b)).sample(k if k != 2**63 else 3, rng=0),
    "grid graph": lambda a, b, k: grid_graph(k, 2).number_of_nodes(),
    "line graph": lambda a, b, k: line_graph(k).number_of_nodes(),
    "grid network": lambda a, b, k: grid_network(k, 2, 0).num_links,
    "round players": lambda a, b, k: round_players([a, b]),
    "bpr costs": lambda a, b, k: PolynomialCosts.bpr([a], [b], 0.15, 4.0)(np.array([1.0])),
}


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
@SETTINGS
@given(a=extreme, b=extreme, k=small_int)
def test_extreme_arguments_give_a_clean_error_or_finite_figures(name, a, b, k):
    if name in ("uniform", "round players") and (
        isinstance(a, str) or isinstance(b, str) or None in (a, b)
    ):
        a, b = 0.0, 1.0  # min/max of mixed types is the test's own TypeError, not the library's
    result = _clean(lambda: ENTRY_POINTS[name](a, b, k))
    # eps = inf is a valid input
    infinite_input = any(isinstance(x, float) and math.isinf(x) for x in (a, b))
    documented_inf = name == "accountant advanced"  # inf beyond eps 700 (docstring)
    if not (isinstance(result, ValidationError) or infinite_input or documented_inf):
        assert _finite(result), (name, a, b, k, result)


# --- named regressions
# ----------------------------------------------------------------------------------------
def test_accountant_totals_overflow_is_an_error_not_inf_or_nan():
    # sum of eps: 1e309, beyond the float range
    huge = Accountant().spend("e", PrivacyGuarantee(1e308), 10)
    for total in (
        huge.basic_total,
        lambda: huge.advanced_total(1e-6),
        lambda: huge.rdp_total(1e-6),
        lambda: huge.best_total(1e-6),
    ):
        with pytest.raises(ValidationError, match="exceeds the float range") as info:
            total()
        assert info.value.field == "events"
    budgeted = Accountant(budget=PrivacyGuarantee(1.0))
    assert not budgeted.can_spend(PrivacyGuarantee(1e308), 10)


def test_accountant_advanced_is_a_documented_inf_beyond_eps_700_and_others_stay_exact():
    acc = Accountant().spend("e", PrivacyGuarantee(1e200), 3)
    assert acc.basic_total().epsilon == 3e200  # plain sum
    # eps (e^eps - 1) is beyond any float: looser than basic
    assert acc.advanced_total(1e-6).epsilon == math.inf
    assert acc.best_total(1e-6).epsilon == 3e200
    assert math.isfinite(acc.rdp_total(1e-6).epsilon) and acc.rdp_total(1e-6).epsilon <= 3e200 * (
        1 + 1e-12
    )


def test_accountant_counts_beyond_2_53_refused():
    with pytest.raises(ValidationError, match="count of event"):
        Accountant().spend("e", PrivacyGuarantee(1.0), 10**400)


def test_group_privacy_in_log_space_and_bounded_k():
    g = PrivacyGuarantee(1.0, 1e-6)
    # Dwork & Roth Thm 2.2 form
    assert g.for_group(3).delta == pytest.approx(3 * math.exp(2) * 1e-6, rel=1e-12)
    # 2 e^1000 1e-300 > 1 (was OverflowError)
    assert PrivacyGuarantee(1000.0, 1e-300).for_group(2).delta == 1.0
    for k in (2**63, 10**400):
        with pytest.raises(ValidationError, match="group size k"):
            g.for_group(k)
    with pytest.raises(ValidationError, match="exceeds the float range"):
        PrivacyGuarantee(1e308).for_group(10)


def test_warner_estimate_overflow_is_refused_and_the_estimator_is_exact():
    with pytest.raises(ValidationError, match="estimate_yes"):
        WarnerResponse(5e-324, 0.5).estimate_yes(3, 10)
    w = WarnerResponse(0.5, 0.5)
    assert w.estimate_yes(6, 10) == pytest.approx(2 * 6 - 10 / 2)  # fair coins: 2 n_yes - N / 2


def test_equilibria_with_costs_beyond_the_float_range_are_refused():
    costs = PolynomialCosts([1.0, 0.0], [0.0, 1.0], 1.0)
    pigou = CongestionGame.from_action_lists(costs, [[[0], [1]]], [1e300])
    for solve in (user_equilibrium, system_optimum):
        with pytest.raises(ValidationError, match="beyond the float range"):
            solve(pigou)
    steep = CongestionGame.from_action_lists(
        PolynomialCosts([1.0, 0.0], [0.0, 1.0], 300.0), [[[0], [1]]], [1e3]
    )
    with pytest.raises(ValidationError):
        system_optimum(steep)


def test_price_of_anarchy_without_costs_is_one_not_nan():
    free = CongestionGame.from_action_lists(
        PolynomialCosts([0.0, 0.0], [0.0, 0.0]), [[[0], [1]]], [1.0]
    )
    assert price_of_anarchy(user_equilibrium(free), system_optimum(free)) == 1.0


def test_utility_loss_bound_at_the_smallest_epsilon():
    with pytest.raises(ValidationError, match="utility_loss_bound"):  # was ZeroDivisionError
        ExponentialMechanism(5e-324).utility_loss_bound(10, 1.0)
    assert ExponentialMechanism(0.5, 2.0).utility_loss_bound(10, 3.0) == pytest.approx(
        2 * 2.0 / 0.5 * (math.log(10) + 3)
    )


def test_noise_scales_beyond_the_float_range_are_refused_up_front():
    for make in (
        lambda: AboveThreshold(5e-324, 0.0),
        lambda: BinaryTreeCounter(10, epsilon=5e-324),
        lambda: LaplaceMechanism(5e-324),
        lambda: LaplaceMechanism(1e-300, 1e300),
        lambda: ReportNoisyMax(5e-324),
        lambda: GaussianMechanism(5e-324),
    ):
        with pytest.raises(ValidationError, match="float range"):
            make()


def test_laplace_release_overflowing_the_value_is_refused():
    with pytest.raises(ValidationError, match="release"):
        # noise ~1e307: overflows
        LaplaceMechanism(1e-307).release([1.797e308] * 4 + [-1.797e308] * 4, rng=0)
    out = LaplaceMechanism(1.0).release(1e308, rng=0)
    assert math.isfinite(out)


@pytest.mark.parametrize(
    "call",
    [
        lambda: gaussian_delta(10**400, 1.0),
        lambda: Uniform(-1e308, 1e308),
        lambda: grid_graph(10**400, 2),
        lambda: line_graph(10**400),
        lambda: sample_discrete_laplace(10**400, size=3, rng=0),
        lambda: Accountant().spend("e", PrivacyGuarantee(1.0), 10**400),
        lambda: FiniteDistribution.from_probabilities(np.array(0.5)),  # was IndexError on 0-d input
        lambda: FiniteDistribution.from_log_weights([0.0, -(10**400)]),
        lambda: round_players([10**400]),
    ],
)
def test_former_overflow_and_index_errors_are_validation_errors(call):
    with pytest.raises(ValidationError):
        call()


def test_sizes_are_refused_up_front_with_an_estimate():
    for call in (
        lambda: KaryResponse(10**9, 1.0),
        lambda: grid_graph(2**31, 2),
        lambda: grid_graph(10**12, 10**12),
        lambda: grid_network(2**31, 2, 0),
        lambda: grid_network(10**12, 10**12, 0),
    ):
        with pytest.raises(ValidationError, match="too large: .*about .* of memory"):
            call()
    with pytest.raises(ValidationError, match="size must be (an integer in|at most)"):
        sample_discrete_laplace(1, size=2**63, rng=0)  # was a hang


def _delta_exact(epsilon: float, mu: float) -> float:
    """Balle & Wang's delta(eps) in 60-digit arithmetic (independent of the library's float
    evaluation)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    eps, m = mpmath.mpf(epsilon), mpmath.mpf(mu)
    return mpmath.ncdf(m / 2 - eps / m) - mpmath.exp(eps) * mpmath.ncdf(-m / 2 - eps / m)


@pytest.mark.parametrize(
    "epsilon,delta,sensitivity",
    [
        (0.01, 1e-6, 7.0),
        (0.1, 1e-6, 0.3),
        (0.1, 1e-6, 1e-5),
        (10.0, 1e-10, 7.0),  # undershot before (up to 1.9e-12)
        (0.5, 1e-12, 1.0),
        (1.0, 1e-12, 3.0),
        (2.0, 1e-3, 1.0),
        (50.0, 0.1, 1.0),
    ],
)
def test_analytic_gaussian_sigma_never_undershoots_the_target_delta(epsilon, delta, sensitivity):
    g = GaussianMechanism.analytic(epsilon, delta, sensitivity)
    exact = _delta_exact(epsilon, sensitivity / g.sigma)
    assert exact <= delta  # rounded up: valid
    assert exact >= delta * (1 - 1e-8)  # and still the smallest sigma to 1e-8


def test_sparse_vector_states_the_accountants_bound_beyond_thm_3_25():
    """Thm 3.25's proof composes c AboveThreshold runs of eps' = eps / sqrt(8 c ln(1/delta)) by
    advanced composition; it gives eps only while eps/2 + c eps' (e^eps' - 1) <= eps."""
    delta = 1e-6
    small = SparseVector(1.0, 0.0, 3, delta)
    assert small.guarantee.epsilon == 1.0 and small.guarantee.delta == delta
    eps, c = 1e4, 200
    per_run = eps / math.sqrt(8 * c * math.log(1 / delta))
    # the proof does not reach eps here
    assert eps / 2 + c * per_run * math.expm1(min(per_run, 700.0)) > eps
    stated = SparseVector(eps, 0.0, c, delta).guarantee
    assert stated.epsilon != eps
    # valid: basic composition of the c runs bounds it
    assert eps < stated.epsilon <= c * per_run * (1 + 1e-12)
    assert stated.delta == delta


def test_citations_name_the_theorem_not_a_placeholder():
    import dpgames.games.incentives as incentives
    import dpgames.games.mediator as mediator

    for module in (incentives, mediator):
        assert "10.2x" not in module.__doc__ and "Kearns, Pai, Roth & Ullman 2014" in module.__doc__


# --- the command line classifies errors
# ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raised,code,words",
    [
        (ValidationError("epsilon", "must be > 0"), 2, "dpgames: error: epsilon must be > 0"),
        (ZeroDivisionError("float division by zero"), 1, "internal error (a bug in dpgames"),
        (
            ValueError("zero-size array to reduction operation maximum which has no identity"),
            1,
            "internal error",
        ),
        (KeyError("status"), 1, "DPGAMES_DEBUG=1"),
    ],
)
def test_cli_input_errors_exit_2_and_bugs_exit_1(monkeypatch, capsys, raised, code, words):
    def fail(*args, **kwargs):
        raise raised

    monkeypatch.delenv("DPGAMES_DEBUG", raising=False)
    monkeypatch.setattr(Scenario, "from_file", fail)  # the run's first call
    monkeypatch.setattr(cli, "_budget", lambda args: None)
    assert cli.main(["run", "any.toml"]) == code
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_cli_debug_reraises_for_the_traceback(monkeypatch):
    monkeypatch.setenv("DPGAMES_DEBUG", "1")
    monkeypatch.setattr(Scenario, "from_file", lambda *a, **k: 1 / 0)
    monkeypatch.setattr(cli, "_budget", lambda args: None)
    with pytest.raises(ZeroDivisionError):
        cli.main(["run", "any.toml"])


def test_exact_figures_unchanged_at_ordinary_inputs():
    """The edges changed nothing inside: closed forms at ordinary inputs."""
    assert LaplaceMechanism(0.5, 2.0).variance == pytest.approx(2 * 4.0**2)
    assert KaryResponse(4, math.log(3)).p_keep == pytest.approx(3 / 6)
    assert BinaryTreeCounter(8, epsilon=1.0).error_variance([7])[0] == pytest.approx(
        2 * (4 / 1.0) ** 2 * 3
    )
    mu = 1.3
    assert gaussian_delta(0.7, mu) == pytest.approx(
        stats.norm.cdf(mu / 2 - 0.7 / mu) - math.exp(0.7) * stats.norm.cdf(-mu / 2 - 0.7 / mu),
        rel=1e-10,
    )
