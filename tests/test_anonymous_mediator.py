"""The anonymous-game mediator (dpgames.games.anonymous_mediator) against independent oracles.

* alpha: recomputed from the kept history by brute force over the others' profiles (small games);
  the decomposition bound ``alpha <= Hedge's bound + 2 feed_error`` with ``feed_error <= Delta
  mean ||Z||_inf + mean-field error`` (own-count games) asserted on random instances; alpha falls
  with n.
* eta: the post-processing bound ``E[eta] <= E[cross_regret] + (e^eps - 1) + delta`` (module
  docstring of the mediator: the form we can justify; KPRU's own constant is not asserted), over
  seeds, with a 95% interval.
* dense comparison: 2- and 3-player normal forms; the correlated-equilibrium LP is solved here with
  scipy.optimize.linprog; the mediator's non-private Blum-Mansour distribution is an r-CE (r its
  measured swap regret) that the LP verifies, and the best CE welfare bounds what it reaches.
* cross-check with dpgames.games (congestion form): the same regrets from RegretTracker.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import optimize, stats

from dpgames.games.anonymous import AnonymousGame, from_congestion
from dpgames.games.anonymous_generators import crowding_game, market_entry, minority_game
from dpgames.games.anonymous_mediator import AnonymousMediator, misreport_gains
from dpgames.games.atomic import RegretTracker, UnilateralCosts
from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame
from dpgames.validation import ValidationError


def random_table_game(rng: np.random.Generator, n_max: int = 8) -> AnonymousGame:
    K, A = int(rng.integers(1, 4)), int(rng.integers(2, 4))
    players = rng.multinomial(int(rng.integers(K + 1, n_max + 1)), np.ones(K) / K)
    players[0] = max(players[0], 1)
    n = int(players.sum())
    slope = rng.random((K, A, 1)) * 0.8
    base = rng.random((K, A, 1)) * 0.2 + 0.8
    return AnonymousGame.from_count_table(players, np.clip(base - slope * np.arange(n) / n, 0, 1))


def brute_regrets(game: AnonymousGame, history: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """External and swap regret per type of the uniform mixture of the rounds' product profiles,
    every expected payoff summed over every profile of the others."""
    types = [k for k, m in enumerate(game.players) for _ in range(int(m))]
    K, A = game.num_types, game.num_actions
    external, swap = np.zeros(K), np.zeros(K)
    for k in range(K):
        if game.players[k] == 0:
            continue
        others = list(types)
        others.remove(k)
        pair = np.zeros((A, A))
        for p in history:
            value = np.zeros(A)
            for profile in itertools.product(range(A), repeat=len(others)):
                w = np.prod([p[t, a] for t, a in zip(others, profile)])
                value += (
                    w * game.payoffs(np.bincount(profile, minlength=A)[None].astype(float))[0, k]
                )
            pair += np.outer(p[k], value)
        pair /= len(history)
        follow = np.trace(pair)
        external[k] = pair.sum(axis=0).max() - follow
        swap[k] = pair.max(axis=1).sum() - follow
    return external, swap


@pytest.mark.parametrize("dynamics", ["hedge", "blum-mansour"])
def test_alpha_is_the_regret_of_the_suggested_distribution_by_brute_force(dynamics):
    game = market_entry([2, 2], capacity=2, outside=[0.5, 0.45])
    out = AnonymousMediator(rounds=40, epsilon=2.0, dynamics=dynamics, keep_history=True).run(
        game, rng=5
    )
    external, swap = brute_regrets(game, out.history)
    np.testing.assert_allclose(out.external_regret, np.maximum(external, 0), atol=1e-10)
    np.testing.assert_allclose(out.swap_regret, np.maximum(swap, 0), atol=1e-10)


@pytest.mark.parametrize("seed", range(8))
def test_alpha_within_the_decomposition_bound_on_random_instances(seed):
    rng = np.random.default_rng(seed)
    game = random_table_game(rng, n_max=40)
    mediator = AnonymousMediator(
        rounds=int(rng.integers(50, 400)),
        epsilon=float(rng.choice([0.5, 1.0, 4.0])),
        dynamics=str(rng.choice(["hedge", "blum-mansour"])),
        noise=str(rng.choice(["gaussian", "tree"])),
    )
    out = mediator.run(game, rng=seed)
    live = game.players > 0
    assert (out.observed_regret <= out.regret_bound + 1e-9).all()  # Hedge / Blum-Mansour theorem
    assert (out.alpha[live] <= out.observed_regret[live] + 2 * out.feed_error[live] + 1e-9).all()
    # own-count tables are Delta-Lipschitz in each count: the noise moves a fed payoff by <= Delta
    # |Z_a|
    assert (out.feed_error <= game.largeness * out.noise_inf + out.mean_field_error + 1e-9).all()
    assert out.privacy.epsilon <= mediator.epsilon * (1 + 1e-9)


def test_the_noise_error_falls_as_one_over_n_and_alpha_tends_to_the_non_private_alpha():
    """At fixed T and eps the noise Z_t does not depend on n (same seed, same draws) while Delta =
    O(1/n): the feed error (<= Delta mean ||Z||_inf, asserted) falls as 1/n once the counts are no
    longer clipped, and alpha tends to the non-private dynamics' alpha (at T = 300 the learners' own
    regret dominates)."""
    values = np.random.default_rng(0).uniform(0.3, 1.0, size=(3, 5))
    # exact: payoffs linear in c
    mediator = AnonymousMediator(rounds=300, epsilon=0.2, evaluation="mean-field")
    sizes = (3_000, 300_000, 30_000_000)
    games = [crowding_game(np.full(3, n // 3), values) for n in sizes]
    outs = [mediator.run(g, rng=1) for g in games]
    feed = [o.feed_error.max() for o in outs]
    assert all(o.noise_inf == pytest.approx(outs[0].noise_inf) for o in outs)
    assert all(f <= g.largeness * o.noise_inf + 1e-12 for f, g, o in zip(feed, games, outs))
    assert feed[1] / feed[2] == pytest.approx(100, rel=0.01)
    exact = AnonymousMediator(rounds=300, noise="none", evaluation="mean-field").run(
        games[2], rng=1
    )
    gaps = [abs(o.max_alpha - exact.max_alpha) for o in outs]
    assert gaps[2] <= 2 * feed[2] + 1e-9 and gaps[2] < gaps[0]


def test_gaussian_noise_scale_and_guarantee():
    out = AnonymousMediator(rounds=100, epsilon=None, rho=0.5).run(minority_game([10]), rng=0)
    # l2 sensitivity sqrt(2)
    assert out.sigma == pytest.approx(math.sqrt(2) * math.sqrt(100 / (2 * 0.5)))
    from dpgames.privacy import zcdp_to_dp

    assert out.privacy.epsilon <= zcdp_to_dp(0.5, 1e-6) + 1e-12


def test_same_seed_same_outcome_and_suggestions_count_the_players():
    game = market_entry([4, 5], 3)
    a, b = (AnonymousMediator(rounds=50).run(game, rng=3) for _ in range(2))
    np.testing.assert_array_equal(a.suggestions, b.suggestions)
    np.testing.assert_array_equal(a.suggestions.sum(axis=1), game.players)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_eta_within_the_post_processing_bound_over_seeds(epsilon):
    gaps, etas = [], []
    for seed in range(6):
        rng = np.random.default_rng(40 + seed)
        game = random_table_game(rng, n_max=10)
        if game.num_types < 2:
            game = AnonymousGame.from_count_table(
                [max(game.num_players - 1, 1), 1],
                np.repeat(game.table, 2, axis=0)[:, :, : game.num_players],
            )
        mediator = AnonymousMediator(rounds=60, epsilon=epsilon, dynamics="blum-mansour")
        gains = misreport_gains(mediator, game, rng=seed)
        assert (gains.eta <= 1).all() and (gains.cross_regret >= 0).all()
        gaps.extend(gains.eta - gains.cross_regret)
        etas.extend(gains.eta)
    mean, sem = np.mean(gaps), stats.sem(gaps)
    low = mean - stats.t.ppf(0.975, len(gaps) - 1) * sem
    assert low <= gains.privacy_term  # no 95% interval above (e^eps - 1) + delta


def test_misreport_gain_by_a_plain_rerun():
    """eta for one pair, recomputed from two runs with the same seed and brute-force
    expectations."""
    game = market_entry([2, 1], capacity=1, outside=[0.5, 0.3])
    mediator = AnonymousMediator(rounds=30, epsilon=1.0, keep_history=True)
    gains = misreport_gains(mediator, game, rng=7, pairs=[(0, 1)])
    seed = int(np.random.default_rng(7).integers(2**63))
    truthful = mediator.run(game, rng=seed)
    lied = mediator.run(game, [1, 2], rng=seed)
    types_others = [0, 1]  # the liar's others: one of type 0, one of type 1
    table = np.zeros((2, 2))
    for p in lied.history:
        value = np.zeros(2)
        for profile in itertools.product(range(2), repeat=2):
            w = np.prod([p[t, a] for t, a in zip(types_others, profile)])
            value += w * game.payoffs(np.bincount(profile, minlength=2)[None].astype(float))[0, 0]
        table += np.outer(p[1], value)
    want = table.max(axis=1).sum() / 30 - truthful.expected_payoff[0]
    assert gains.eta[0] == pytest.approx(want, abs=1e-10)


# --- dense comparison with the correlated-equilibrium LP
# ----------------------------------------------
def ce_lp(payoffs: list[np.ndarray], relax: float = 0.0, fixed: np.ndarray | None = None):
    """max sum_i E[u_i] over joint laws x of a normal form with CE constraints
    sum_{a_-i} x(s, a_-i) (u_i(a, a_-i) - u_i(s, a_-i)) <= relax for every player i and s != a."""
    shape = payoffs[0].shape
    size = int(np.prod(shape))
    rows = []
    for i, u in enumerate(payoffs):
        for s in range(shape[i]):
            for a in range(shape[i]):
                if a == s:
                    continue
                row = np.zeros(shape)
                index = [slice(None)] * len(shape)
                index[i] = s
                gain = np.take(u, a, axis=i) - np.take(u, s, axis=i)
                row[tuple(index)] = gain
                rows.append(row.ravel())
    a_eq, b_eq = [np.ones(size)], [1.0]
    if fixed is not None:
        a_eq, b_eq = np.vstack([np.eye(size)]), fixed.ravel()
    welfare = sum(payoffs).ravel()
    res = optimize.linprog(
        -welfare,
        A_ub=np.array(rows),
        b_ub=np.full(len(rows), relax),
        A_eq=np.array(a_eq),
        b_eq=np.array(b_eq),
        bounds=(0, 1),
        method="highs",
    )
    return res


def normal_form_of(game: AnonymousGame, types: list[int]) -> list[np.ndarray]:
    """The anonymous game as a dense normal form (one player of each listed type)."""
    A, n = game.num_actions, len(types)
    tables = [np.zeros((A,) * n) for _ in range(n)]
    for profile in itertools.product(range(A), repeat=n):
        for i in range(n):
            hist = np.bincount([a for j, a in enumerate(profile) if j != i], minlength=A).astype(
                float
            )
            tables[i][profile] = game.payoffs(hist[None])[0, types[i], profile[i]]
    return tables


def bimatrix_game(u0: np.ndarray, u1: np.ndarray) -> AnonymousGame:
    """Two players as two types: the other's histogram is one-hot, payoffs linear in it."""

    def payoff(h):
        return np.stack([h @ u0.T, h @ u1], axis=1)  # u0[a, b]: row player; u1[b, a]: column player

    return AnonymousGame([1, 1], u0.shape[0], payoff)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_two_player_mediator_distribution_is_an_lp_verified_approximate_ce(seed):
    rng = np.random.default_rng(seed)
    u0, u1 = rng.random((3, 3)), rng.random((3, 3))
    game = bimatrix_game(u0, u1)
    out = AnonymousMediator(
        rounds=3000, noise="none", dynamics="blum-mansour", keep_history=True
    ).run(game, rng=0)
    x = np.einsum("ta,tb->ab", out.history[:, 0], out.history[:, 1]) / 3000
    dense = normal_form_of(game, [0, 1])
    np.testing.assert_allclose(dense[0], u0, atol=1e-12)
    best = ce_lp(dense)
    assert best.status == 0
    r = float(out.swap_regret.max())
    assert r <= out.regret_bound + 1e-9 and r < 0.05
    assert ce_lp(dense, relax=r + 1e-9, fixed=x).status == 0  # the LP accepts x as an r-CE
    welfare = float(sum(d.ravel() @ x.ravel() for d in dense))
    assert welfare <= -ce_lp(dense, relax=r + 1e-9).fun + 1e-7  # the relaxed LP's best bounds it
    assert out.welfare == pytest.approx(welfare, abs=1e-10)


@pytest.mark.slow
def test_prisoners_dilemma_non_private_limit_reaches_the_unique_ce_value():
    u = np.array([[0.6, 0.0], [1.0, 0.2]])  # action 1 (defect) dominates
    game = bimatrix_game(u, u.T)  # symmetric: the column player also gets u[own, other]
    out = AnonymousMediator(rounds=4000, noise="none", dynamics="blum-mansour").run(game, rng=0)
    value = -ce_lp(normal_form_of(game, [0, 1])).fun
    assert value == pytest.approx(0.4)  # the LP: the only CE is (defect, defect)
    # swapping C -> D gains >= 0.2 per unit of cooperation, so P(i cooperates) <= swap_i / 0.2; one
    # player's change of action moves the welfare by at most 1
    assert abs(out.welfare - value) <= out.swap_regret.sum() / 0.2 + 1e-9
    assert (out.swap_regret <= out.regret_bound).all() and out.regret_bound < 0.25


@pytest.mark.slow
def test_three_player_anonymous_game_against_the_ce_lp():
    rng = np.random.default_rng(9)
    game = AnonymousGame.from_count_table([1, 1, 1], rng.random((3, 2, 3)))
    out = AnonymousMediator(
        rounds=3000, noise="none", dynamics="blum-mansour", keep_history=True
    ).run(game, rng=0)
    x = np.einsum("ta,tb,tc->abc", out.history[:, 0], out.history[:, 1], out.history[:, 2]) / 3000
    dense = normal_form_of(game, [0, 1, 2])
    r = float(out.swap_regret.max())
    assert ce_lp(dense, relax=r + 1e-9, fixed=x).status == 0
    assert float(sum((d * x).sum() for d in dense)) <= -ce_lp(dense, relax=r + 1e-9).fun + 1e-7
    assert out.welfare == pytest.approx(float(sum((d * x).sum() for d in dense)), abs=1e-10)


def test_congestion_form_regrets_agree_with_regret_tracker():
    costs = PolynomialCosts([1.0, 0.2, 0.0], [0.0, 0.5, 1.0])
    congestion = CongestionGame.from_action_lists(costs, [[[0], [1], [2]]] * 2, [4, 3])
    game, scale = from_congestion(congestion)
    out = AnonymousMediator(rounds=80, epsilon=1.0, dynamics="blum-mansour", keep_history=True).run(
        game, rng=2
    )
    tracker = RegretTracker(congestion, swap=True)
    unilateral = UnilateralCosts(congestion, np.array([4, 3]))
    for p in out.history:
        tracker.add(p.ravel(), unilateral(p.ravel()))
    np.testing.assert_allclose(scale * out.external_regret, tracker.external_regret(), atol=1e-9)
    np.testing.assert_allclose(scale * out.swap_regret, tracker.swap_regret(), atol=1e-9)
    np.testing.assert_allclose(
        scale * (1 - out.expected_payoff), tracker.expected_cost(), atol=1e-9
    )


# --- bad input
# ------------------------------------------------------------------------------------------
def test_bad_mediator_arguments_are_refused_by_name():
    for kwargs, name in [
        ({"rounds": 0}, "rounds"),
        ({"noise": "laplace"}, "noise"),
        ({"epsilon": None}, "epsilon"),
        ({"epsilon": 1.0, "rho": 1.0}, "epsilon"),
        ({"delta": 2.0}, "delta"),
        ({"dynamics": "fictitious"}, "dynamics"),
        ({"learning_rate": -1.0}, "learning_rate"),
    ]:
        with pytest.raises(ValidationError) as info:
            AnonymousMediator(**kwargs)
        assert info.value.field == name
    with pytest.raises(ValidationError, match="players"):
        AnonymousMediator(rounds=5).run(minority_game([4]), [5])
    with pytest.raises(ValidationError, match="game"):
        AnonymousMediator(rounds=5).run("minority")
    with pytest.raises(ValidationError, match="pairs"):
        misreport_gains(AnonymousMediator(rounds=5), market_entry([1, 0], 1), pairs=[(1, 0)])


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    rounds=st.integers(-1, 30),
    epsilon=st.floats(-1.0, 5.0) | st.just(float("nan")),
    noise=st.sampled_from(["gaussian", "tree", "none", "other"]),
    dynamics=st.sampled_from(["hedge", "blum-mansour"]),
    reports=st.lists(st.integers(-1, 4), min_size=1, max_size=3),
)
def test_fuzz_mediator(rounds, epsilon, noise, dynamics, reports):
    game = market_entry([2, 1, 1], 2)
    try:
        mediator = AnonymousMediator(rounds=rounds, epsilon=epsilon, noise=noise, dynamics=dynamics)
        out = mediator.run(game, reports, rng=0)
    except ValidationError as error:
        assert error.field in {"rounds", "epsilon", "noise", "players"}
        return
    assert out.suggestions.sum() == 4 and (out.alpha >= 0).all() and np.isfinite(out.alpha).all()
    assert (out.observed_regret <= out.regret_bound + 1e-9).all()


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    pairs=st.lists(
        st.tuples(st.integers(-1, 3), st.integers(-1, 3)) | st.tuples(st.just(0.5), st.just(1)),
        max_size=3,
    )
)
def test_fuzz_misreport_pairs(pairs):
    game = market_entry([2, 1, 0], 1)
    try:
        gains = misreport_gains(AnonymousMediator(rounds=5), game, rng=0, pairs=pairs)
    except ValidationError as error:
        assert error.field == "pairs"
        return
    assert gains.eta.shape == (len(pairs),) and (gains.eta <= 1).all()


def test_billboard_every_types_strategies_are_functions_of_the_published_histograms(monkeypatch):
    """The billboard lemma's premise: with the published sequence held fixed, changing one player's
    report changes no type's strategy in any round (so the others' suggestions are post-processing
    of the billboard)."""
    import dpgames.games.anonymous_mediator as module

    class Fixed:
        sigma, guarantee = 0.0, None

        def __init__(self):
            self.values = iter(np.random.default_rng(0).uniform(0, 6, size=(30, 2)))

        def publish(self, loads):
            return next(self.values)

    monkeypatch.setattr(module, "make_publisher", lambda *args, **kwargs: Fixed())
    game = market_entry([4, 3], 3, [0.5, 0.4])
    mediator = AnonymousMediator(rounds=30, keep_history=True)
    a = mediator.run(game, [4, 3], rng=1)
    b = mediator.run(game, [3, 4], rng=1)
    np.testing.assert_array_equal(a.history, b.history)


def test_tree_counter_noise_and_guarantee():
    from dpgames.privacy import BinaryTreeCounter

    out = AnonymousMediator(rounds=64, epsilon=None, rho=0.5, noise="tree").run(
        minority_game([10]), rng=0
    )
    counter = BinaryTreeCounter(64, rho=0.5, sensitivity=math.sqrt(2), relation="user")
    assert out.sigma == pytest.approx(counter.noise_scale)
    from dpgames.privacy import zcdp_to_dp

    assert out.privacy.epsilon <= zcdp_to_dp(0.5, 1e-6) + 1e-12
