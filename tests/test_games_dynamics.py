"""No-regret dynamics against their theorems; the private mediator's joint DP against an exact law
computed independently (Gauss-Hermite quadrature over the noise), alpha shrinking with n, and the
mediator against the plain numpy reference mediator (tests/mediator_oracle.py, to 1e-12);
per-class reductions against numpy's reduceat; the publisher's noise against its closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames.games.atomic import RegretTracker, round_players
from dpgames.games.classwise import ClassOps
from dpgames.games.costs import PolynomialCosts
from dpgames.games.dynamics import BlumMansour, Hedge, hedge_regret_bound
from dpgames.games.game import CongestionGame
from dpgames.games.mediator import PrivateMediator, rho_for_epsilon
from dpgames.games.network import RoutingGame, grid_network
from dpgames.games.publisher import GaussianPublisher, make_publisher
from dpgames.privacy import zcdp_to_dp
from dpgames.validation import ValidationError
from mediator_oracle import oracle_run


def classes_game(sizes) -> CongestionGame:
    """Classes with the given numbers of one-resource actions (costs irrelevant: losses are
    given)."""
    m = sum(sizes)
    start = np.cumsum([0] + list(sizes))
    actions = [[[r] for r in range(start[k], start[k + 1])] for k in range(len(sizes))]
    return CongestionGame.from_action_lists(
        PolynomialCosts(np.zeros(m), np.zeros(m)), actions, [1] * len(sizes)
    )


def test_hedge_regret_within_its_bound_on_adversarial_losses():
    game = classes_game([2, 5, 9])
    T = 2000
    eta = np.sqrt(8 * np.log(game.actions_per_class) / T)
    hedge = Hedge(game, eta)
    gen = np.random.default_rng(1)
    for _ in range(T):  # losses in [0, 1] reacting to the learner (the best action flips)
        p = hedge.strategy()
        loss = gen.uniform(0, 1, game.num_actions) * (
            p > game.spread(game.class_sum(p) / game.actions_per_class)
        )
        hedge.update(p, loss)
    bound = hedge_regret_bound(game.actions_per_class, T, eta)
    assert np.all(hedge.external_regret() <= bound)
    assert np.all(bound == pytest.approx(np.sqrt(T * np.log(game.actions_per_class) / 2)))


def test_blum_mansour_swap_regret_vanishes_and_respects_its_bound():
    """Shapley's game (Hedge cycles there and keeps positive swap regret); Blum-Mansour's average
    swap regret must fall below N (ln N / eta + eta T / 8) / T and shrink with T."""
    game = classes_game([3, 3])
    payoff = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)  # loss of row vs column
    averages = []
    for T in (250, 4000):
        eta = math.sqrt(8 * math.log(3) / T)
        learner, tracker = BlumMansour(game, eta), RegretTracker(game, swap=True)
        for _ in range(T):
            p = learner.strategy()
            a, b = p[:3], p[3:]
            loss = np.concatenate([payoff @ b, payoff.T @ a])
            learner.update(p, loss)
            tracker.add(p, loss)
        swap = tracker.swap_regret()
        assert np.all(swap * T <= 3 * (math.log(3) / eta + eta * T / 8))
        averages.append(swap.max())
    assert averages[1] < averages[0] / 2


def test_blum_mansour_strategy_is_stationary():
    game = classes_game([4])
    learner = BlumMansour(game, 0.3)
    gen = np.random.default_rng(0)
    for _ in range(5):
        learner.update(learner.strategy(), gen.uniform(size=4))
    p = learner.strategy()
    q = learner._rows().reshape(4, 4)
    assert p @ q == pytest.approx(p) and p.sum() == pytest.approx(1)


# --- joint DP on a tiny instance
# -----------------------------------------------------------------------
def tiny(reports) -> CongestionGame:
    """Resources 0, 1 (roads, linear) and 2 (elsewhere).  Class 0: roads; class 1 (player j alone):
    roads; class 2: resource 2.  Player i reports class 0 or class 2."""
    costs = PolynomialCosts([1.0, 1.5, 0.0], [1.0, 1.0, 1.0])
    return CongestionGame.from_action_lists(costs, [[[0], [1]], [[0], [1]], [[2]]], reports)


def law_of_j(expected_loads: np.ndarray, mediator: PrivateMediator, sigma: float) -> float:
    """P(j is suggested road 0), computed independently: T = 2, t* uniform; round 1 uniform; round 2
    is one Hedge step on costs at max(y + Z, 0) scaled by their max, Z ~ N(0, sigma^2 I) on the
    roads (2-d Gauss-Hermite quadrature)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(120)
    weights = weights / weights.sum()
    z0, z1 = np.meshgrid(nodes * sigma, nodes * sigma, indexing="ij")
    w = np.outer(weights, weights)
    c0 = 1.0 + np.maximum(expected_loads[0] + z0, 0)
    c1 = 1.5 + np.maximum(expected_loads[1] + z1, 0)
    eta = mediator.learning_rate * math.sqrt(8 * math.log(2) / 2)
    scale = np.maximum(c0, c1)
    p_round2 = 1 / (1 + np.exp(-eta * (c1 - c0) / scale))
    return 0.5 * 0.5 + 0.5 * float((w * p_round2).sum())


@pytest.mark.slow
def test_suggestions_to_others_are_jointly_private():
    mediator = PrivateMediator(rounds=2, epsilon=4.0, delta=1e-6)
    sigma = math.sqrt(2 * 1) * math.sqrt(2 / (2 * rho_for_epsilon(4.0, 1e-6)))
    assert zcdp_to_dp(mediator.total_rho, 1e-6) == pytest.approx(4.0, rel=1e-6)
    a, b = tiny([1, 1, 0]), tiny([0, 1, 1])  # i in class 0, or i in class 2
    law_a = law_of_j(np.array([1.0, 1.0]), mediator, sigma)  # i and j each put 1/2 on each road
    law_b = law_of_j(np.array([0.5, 0.5]), mediator, sigma)
    # the library draws j's suggestion with exactly this law (statistical check, 4 standard errors)
    runs = 1500
    for game, law in ((a, law_a), (b, law_b)):
        outcomes = [
            PrivateMediator(rounds=2, epsilon=4.0).run(game, rng=s).suggestions[2]
            for s in range(runs)
        ]
        assert np.mean(outcomes) == pytest.approx(law, abs=4 * math.sqrt(law * (1 - law) / runs))
    assert law_a != pytest.approx(law_b, abs=1e-3)  # i's report does move j's law...
    eps = mediator.run(a, rng=0).privacy.epsilon  # ...by at most e^eps, up to delta (hockey stick)
    for p, q in ((law_a, law_b), (law_b, law_a)):
        excess = max(0.0, p - math.exp(eps) * q) + max(0.0, (1 - p) - math.exp(eps) * (1 - q))
        assert excess <= 1e-6
    # and the exact privacy loss here is far inside the guarantee
    assert abs(math.log(law_a / law_b)) < eps and abs(math.log((1 - law_a) / (1 - law_b))) < eps


def test_alpha_shrinks_as_n_grows():
    """Pigou scaled to n players (variable road costs x / n): with the privacy budget fixed, the
    noise matters less as n grows and the exact regret alpha falls."""
    alphas = []
    for n in (20, 200, 2000):
        game = CongestionGame.from_action_lists(
            PolynomialCosts([1.0, 0.0], [0.0, 1.0 / n]), [[[0], [1]]], [n]
        )
        runs = [
            PrivateMediator(rounds=400, epsilon=1.0, evaluation="exact").run(game, rng=s).max_alpha
            for s in range(3)
        ]
        alphas.append(np.mean(runs))
    assert alphas[0] > alphas[1] > alphas[2]


def test_mediator_refuses_bad_parameters():
    with pytest.raises(ValueError, match="rounds"):
        PrivateMediator(rounds=0)
    with pytest.raises(ValueError, match="noise"):
        PrivateMediator(noise="laplace")
    with pytest.raises(ValueError, match="whole number"):
        PrivateMediator(rounds=5).run(tiny([1, 1, 0]), players=np.array([0.5, 1, 0]))


# --- the split, compiled mediator against the plain numpy reference mediator
# -------------------------------


def _oracle_instances():
    """A congestion game with classes of 1 to 3 actions (one class without players) and a routing
    game on a 4 x 5 grid (warm-up with column generation)."""
    costs = PolynomialCosts([1.0, 0.5, 0.2, 0.0], [0.3, 0.7, 0.4, 1.1], [2, 1, 3, 1])
    small = CongestionGame.from_action_lists(
        costs, [[[0], [1, 2], [3]], [[1], [0, 2], [2, 3]], [[0]], [[2], [3]]], [3, 2, 4, 0]
    )
    grid = RoutingGame(
        grid_network(4, 5, np.random.default_rng(0)),
        np.array([0, 3, 12, 19, 7]),
        np.array([19, 12, 3, 0, 15]),
        np.array([30, 20, 25, 10, 5.0]),
    )
    # 5000 classes of 1 to 3 actions: enough for the column path of ClassOps
    gen = np.random.default_rng(1)
    sizes = gen.integers(1, 4, 5000)
    many = CongestionGame.from_action_lists(
        PolynomialCosts(gen.uniform(0, 1, 40), gen.uniform(0, 0.01, 40), 2),
        [
            [sorted(set(gen.integers(0, 40, gen.integers(1, 5)).tolist())) for _ in range(n)]
            for n in sizes
        ],
        gen.integers(0, 4, sizes.size),
    )
    return {
        "congestion": (small, None),
        "routing": (grid, round_players(grid.demand)),
        "many classes": (many, None),
    }


ORACLE_SETTINGS = [
    {},
    {"noise": "tree"},
    {"noise": "none", "epsilon": None},
    {"dynamics": "blum-mansour"},
    {"evaluation": "nonatomic"},
    {"evaluation": "mean-field"},
    {"keep_history": True},
    {"rho": 0.5, "epsilon": None, "learning_rate": 50.0},
]


def assert_same_outcome(new, old):
    """The compiled mediator against the oracle: the same draws (noise, ``t*``, multinomial counts)
    and numbers within 1e-12 (today they agree bit for bit).  Strategies: 1e-12 relative or 1e-15
    absolute (a probability's rounding); costs: 1e-12 relative; a regret is a difference of sums of
    costs (``follow - min deviate``) whose rounding is relative to the costs, not to the regret: its
    absolute tolerance is 1e-12 times the largest cost.  The suggestions must be equal: numpy's
    multinomial is discontinuous where a conditional probability crosses 1/2 (two equally good
    actions), so strategies one ulp apart may draw differently, and equal draws are what "same
    stream" promises."""
    for name in ("suggestions", "suggested_round", "sigma", "rho", "sensitivity_l2", "evaluation"):
        assert np.array_equal(getattr(new, name), getattr(old, name)), name
    scale = 1e-12 * old.cost_range
    np.testing.assert_allclose(new.cost_range, old.cost_range, rtol=1e-12)
    np.testing.assert_allclose(new.expected_cost, old.expected_cost, rtol=1e-12)
    np.testing.assert_allclose(new.alpha, old.alpha, rtol=1e-12, atol=scale)
    assert np.array_equal(new.trace["round"], old.trace["round"])
    np.testing.assert_allclose(new.trace["alpha"], old.trace["alpha"], rtol=1e-12, atol=scale)
    np.testing.assert_allclose(
        new.trace["observed_regret"], old.trace["observed_regret"], rtol=1e-12, atol=1e-12
    )
    assert (new.history is None) == (old.history is None)
    if new.history is not None:
        np.testing.assert_allclose(new.history, old.history, rtol=1e-12, atol=1e-15)
    assert (new.game.incidence != old.game.incidence).nnz == 0
    np.testing.assert_allclose(new.ex_post.gain, old.ex_post.gain, rtol=1e-12, atol=scale)
    assert new.privacy == old.privacy


@pytest.mark.parametrize(
    "instance, settings_",
    [(i, s) for i in ("congestion", "routing") for s in ORACLE_SETTINGS]
    + [
        ("many classes", {"evaluation": "nonatomic", "learning_rate": 50.0}),
        ("many classes", {"rounds": 12, "warmup": 0}),
    ],
    ids=lambda v: (
        v if isinstance(v, str) else ",".join(f"{k}={x}" for k, x in v.items()) or "default"
    ),
)
def test_mediator_equals_the_reference_mediator(instance, settings_):
    """Warm-up, play loop and publisher split; under Hedge one compiled pass a round (both cost
    products, the update, the regret sums, the next loads): the same seed gives the same outcome as
    the old one-piece run (tests/mediator_oracle.py), to 1e-12 (:func:`assert_same_outcome`; a large
    learning rate makes Hedge underflow and take its log-space path too)."""
    model, players = _oracle_instances()[instance]
    mediator = PrivateMediator(**{"rounds": 60, "warmup": 20, "max_paths": 3, **settings_})
    for seed in range(3):
        assert_same_outcome(
            mediator.run(model, players, seed), oracle_run(mediator, model, players, seed)
        )


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_mediator_equals_the_oracle_on_random_small_games(seed):
    """Random congestion games (1 to 9 actions per class, some classes without players, cost powers
    1 to 4) and routing games on random grids, every noise and evaluation drawn at random: outcomes
    within 1e-12 of the oracle's for three seeds each."""
    gen = np.random.default_rng(100 + seed)
    m = int(gen.integers(2, 12))
    sizes = gen.integers(1, 10, int(gen.integers(1, 30)))
    costs = PolynomialCosts(gen.uniform(0, 2, m), gen.uniform(0, 1, m), gen.integers(1, 5, m))
    actions = [
        [sorted(set(gen.integers(0, m, gen.integers(1, m + 1)).tolist())) for _ in range(n)]
        for n in sizes
    ]
    congestion = CongestionGame.from_action_lists(costs, actions, gen.integers(0, 6, sizes.size))
    nodes = gen.integers(0, 12, (3, 2))
    routing = RoutingGame(
        grid_network(3, 4, gen),
        nodes[:, 0],
        np.where(nodes[:, 1] == nodes[:, 0], 11 - nodes[:, 0], nodes[:, 1]),
        gen.uniform(1, 20, 3).round(),
    )
    noise = ["gaussian", "tree", "none"][int(gen.integers(3))]
    settings_ = {
        "rounds": int(gen.integers(2, 80)),
        "noise": noise,
        "epsilon": None if noise == "none" else 1.0,
        "evaluation": ["auto", "exact", "mean-field", "nonatomic"][int(gen.integers(4))],
        "learning_rate": float(gen.choice([1.0, 3.0, 40.0])),
        "keep_history": bool(gen.integers(2)),
        "max_paths": int(gen.integers(1, 5)),
    }
    for model in (congestion, routing):
        mediator = PrivateMediator(**settings_)
        players = None if model is congestion else round_players(model.demand)
        for run_seed in range(3):
            assert_same_outcome(
                mediator.run(model, players, run_seed),
                oracle_run(mediator, model, players, run_seed),
            )


@pytest.mark.slow
def test_mediator_equals_the_oracle_with_32_bit_resource_indices():
    """More than 65,534 resources: the compiled round reads 32-bit resource indices (16-bit
    otherwise)."""
    gen = np.random.default_rng(5)
    m = 70_000
    costs = PolynomialCosts(gen.uniform(0, 1, m), gen.uniform(0, 0.1, m), 2)
    actions = [
        [sorted(set(gen.integers(0, m, 6).tolist())) for _ in range(int(n))]
        for n in gen.integers(1, 5, 40)
    ]
    game = CongestionGame.from_action_lists(costs, actions, gen.integers(0, 5, 40))
    mediator = PrivateMediator(rounds=30, evaluation="nonatomic", learning_rate=20.0)
    for seed in range(2):
        assert_same_outcome(mediator.run(game, rng=seed), oracle_run(mediator, game, rng=seed))


def test_mediator_equals_the_oracle_where_exponentials_underflow(monkeypatch):
    """Learning rates so large that Hedge's shifts and log-space scores fall below log of the
    smallest normal number: the compiled round takes those exponentials apart
    (dpgames.games._rounds.TINY) and the outcome is still the oracle's; the test checks that both
    kernels did put some aside."""
    from dpgames.games.mediator import _kernels

    kernels, aside = _kernels(), {"charge": 0, "log_scores": 0}

    def counted(name):
        kernel = getattr(kernels, name)

        def run(*args):
            out = kernel(*args)
            aside[name] += int(out[2] if name == "charge" else out)
            return out

        return run

    for name in aside:
        monkeypatch.setattr(kernels, name, counted(name))
    model, players = _oracle_instances()["many classes"]
    mediator = PrivateMediator(rounds=60, evaluation="nonatomic", learning_rate=5000.0)
    for seed in range(2):
        assert_same_outcome(
            mediator.run(model, players, seed), oracle_run(mediator, model, players, seed)
        )
    assert aside["charge"] > 0 and aside["log_scores"] > 0


@given(st.lists(st.floats(-800.0, 5.0), min_size=1, max_size=300), st.data())
@settings(max_examples=60, deadline=None, derandomize=True)
def test_numpy_exp_is_elementwise_where_it_underflows(values, data):
    """What taking tiny exponentials apart rests on: numpy's ``exp`` of some entries of an array is,
    bit for bit, its ``exp`` of the whole array at those entries (whatever the length and the
    neighbours)."""
    x = np.asarray(values)
    pick = np.asarray(
        data.draw(st.lists(st.integers(0, x.size - 1), min_size=1, max_size=x.size, unique=True))
    )
    assert np.array_equal(np.exp(x)[pick].view(np.int64), np.exp(x[pick]).view(np.int64))


@pytest.mark.slow
def test_importing_the_mediator_does_not_import_numba():
    """numba is imported on the first compiled round only (dpgames.games._rounds)."""
    import subprocess
    import sys

    code = "import sys, dpgames, dpgames.games.mediator; print('numba' in sys.modules)"
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "False"
    )


def test_hedge_log_space_path_is_exercised_by_the_oracle_comparison():
    """The large learning rate of the last oracle setting does underflow a class (else the
    comparison above would not cover Hedge's log-space recomputation)."""
    game = _oracle_instances()["congestion"][0]
    hedge = Hedge(game, 50.0 * np.ones(game.num_classes))
    underflowed = False
    for t in range(60):
        p = hedge.strategy()
        # the best action alternates
        loss = np.where(np.arange(game.num_actions) % 2 == t % 2, 40.0, 0.0)
        w = p * np.exp(-50.0 * loss)
        underflowed |= bool((game.class_sum(w) == 0).any())
        hedge.update(p, loss)
        assert np.allclose(game.class_sum(hedge.strategy()), 1.0)
    assert underflowed


# --- per-class reductions: numpy's reduceat is the oracle
# -----------------------------------------------
@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    sizes=st.lists(st.integers(1, 12), min_size=1, max_size=80),
    runs=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    special=st.booleans(),
)
def test_class_ops_equal_reduceat_bit_for_bit(sizes, runs, seed, special):
    sizes = np.sort(sizes) if runs else np.asarray(sizes)
    start = np.r_[0, np.cumsum(sizes)]
    gen = np.random.default_rng(seed)
    values = gen.standard_normal(start[-1]) * 10.0 ** gen.uniform(-12, 12, start[-1])
    if special:  # infinities, NaN and signed zeros must come out as reduceat's do
        values[gen.integers(0, values.size, 3)] = gen.choice([np.inf, -np.inf, np.nan, -0.0], 3)
    per_class = gen.standard_normal(sizes.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        # inf - inf, x / 0: both sides must agree on them
        _class_ops_agree(start, values, per_class, sizes)


def _class_ops_agree(start, values, per_class, sizes):
    """Every ClassOps mode against numpy's reduceat, gathers and a sort (the oracles)."""
    for mode in ("runs", "sorted", "reduceat", None):
        ops = ClassOps(start, mode=mode)
        for mine, theirs in (
            (ops.sum, np.add.reduceat),
            (ops.min, np.minimum.reduceat),
            (ops.max, np.maximum.reduceat),
        ):
            assert np.array_equal(mine(values), theirs(values, start[:-1]), equal_nan=True)
        owner = np.repeat(np.arange(sizes.size), sizes)
        # sorting: the oracle
        assert np.array_equal(ops.argmin(values), np.lexsort((values, owner))[start[:-1]])
        spread = per_class[owner]
        assert np.array_equal(ops.spread(per_class), spread)
        assert np.array_equal(
            ops.combine(np.subtract, values, per_class), values - spread, equal_nan=True
        )
        assert np.array_equal(
            ops.combine(np.divide, values, per_class, per_class_first=True),
            spread / values,
            equal_nan=True,
        )


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    st.one_of(
        st.lists(st.integers(-3, 20), max_size=6).map(np.array),
        st.just(np.zeros((2, 2), int)),
        st.just(np.array([0.0, 1.0])),
        st.just(np.array([1, 2])),
    )
)
def test_class_ops_refuse_bad_boundaries_or_agree_with_reduceat(start):
    try:
        ops = ClassOps(start)
    except ValidationError as exc:
        assert exc.field == "class_start"
        return
    values = np.arange(ops.num_actions, dtype=float)
    assert np.array_equal(
        ops.sum(values), np.add.reduceat(values, start[:-1]) if start.size > 1 else np.zeros(0)
    )


# --- the publisher
# ---------------------------------------------------------------------------------------
def test_gaussian_publisher_noise_has_the_stated_sd():
    """sigma = sqrt(2L) sqrt(T / (2 rho)) (closed form); the draws' variance within a 99.9%
    chi-square band."""
    from scipy import stats

    pub = GaussianPublisher(rounds=50, rho=0.25, delta=1e-6, links=3, rng=np.random.default_rng(4))
    assert pub.sigma == pytest.approx(math.sqrt(6) * math.sqrt(50 / 0.5))
    noise = np.concatenate([pub.publish(np.full(1000, 7.0)) - 7.0 for _ in range(4)])
    low, high = stats.chi2.ppf([0.0005, 0.9995], noise.size) / noise.size
    assert low <= noise.var() / pub.sigma**2 <= high
    assert pub.guarantee.epsilon == pytest.approx(zcdp_to_dp(0.25, 1e-6), rel=1e-9)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    noise=st.sampled_from(["gaussian", "tree", "none", "laplace"]),
    rounds=st.integers(-1, 20),
    rho=st.floats(-1.0, 5.0),
    delta=st.floats(-0.5, 1.5),
    links=st.integers(-1, 5),
    resources=st.integers(-1, 4),
)
def test_make_publisher_refuses_bad_input_or_publishes_finite_loads(
    noise, rounds, rho, delta, links, resources
):
    try:
        pub = make_publisher(
            noise,
            rounds=rounds,
            rho=rho,
            delta=delta,
            links=links,
            resources=resources,
            rng=np.random.default_rng(0),
        )
    except ValidationError as exc:
        assert exc.field in {"noise", "rounds", "rho", "delta", "links", "resources"}
        return
    assert noise != "laplace" and links >= 1
    out = pub.publish(np.ones(max(resources, 1)))
    assert np.isfinite(out).all() and pub.sigma >= 0 and pub.guarantee.epsilon >= 0


def test_class_argmin_of_a_class_that_is_all_nan_is_its_first_action():
    """A hypothesis find: with no finite value anywhere, argmin raised an IndexError (no hit to
    mark)."""
    values = np.array([np.nan, np.nan, 2.0, np.nan])
    for mode in ("runs", "sorted", "reduceat"):
        ops = ClassOps([0, 2, 4], mode=mode)
        assert (
            ops.argmin(values).tolist()
            == [0, 2]
            == np.lexsort((values, [0, 0, 1, 1]))[[0, 2]].tolist()
        )
        assert ClassOps([0, 1], mode=mode).argmin(np.array([np.nan])).tolist() == [0]
