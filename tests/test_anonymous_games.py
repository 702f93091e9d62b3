"""Anonymous games in aggregate form (dpgames.games.anonymous) against independent oracles: expected
payoffs and largeness by brute force over every action profile of the others, the classic games'
equilibria by their closed forms, the congestion form against dpgames.games.atomic, and bad
input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames.games.anonymous import AnonymousGame, from_congestion
from dpgames.games.anonymous_generators import (
    crowding_game,
    el_farol,
    market_entry,
    minority_game,
    threshold_public_goods,
)
from dpgames.games.atomic import UnilateralCosts
from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame
from dpgames.validation import ValidationError

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True)


def profile_payoff(
    game: AnonymousGame, types: list[int], profile: tuple[int, ...], i: int, action: int
) -> float:
    """Player i's payoff playing ``action`` when the others play ``profile`` (her own entry
    ignored)."""
    hist = np.zeros(game.num_actions)
    for j, a in enumerate(profile):
        if j != i:
            hist[a] += 1
    return float(game.payoffs(hist[None, :])[0, types[i], action])


def type_list(players) -> list[int]:
    return [k for k, m in enumerate(players) for _ in range(int(m))]


def brute_expected(game: AnonymousGame, strategy: np.ndarray) -> np.ndarray:
    """E[u(k, a, H)] for one type-k player, every other player drawing from her type's row: a plain
    sum over every action profile of the others."""
    types = type_list(game.players)
    out = np.zeros((game.num_types, game.num_actions))
    for k in range(game.num_types):
        others = list(types)
        others.remove(k)
        for profile in itertools.product(range(game.num_actions), repeat=len(others)):
            weight = np.prod([strategy[t, a] for t, a in zip(others, profile)])
            hist = np.bincount(profile, minlength=game.num_actions).astype(float)
            out[k] += weight * game.payoffs(hist[None, :])[0, k]
    return out


def brute_largeness(game: AnonymousGame) -> float:
    """The most one other player's switch moves a payoff: every profile of the others, every
    switch."""
    m, A = game.num_players - 1, game.num_actions
    worst = 0.0
    for profile in itertools.product(range(A), repeat=m):
        base = np.bincount(profile, minlength=A).astype(float)
        for j in range(m):
            for b in range(A):
                moved = base.copy()
                moved[profile[j]] -= 1
                moved[b] += 1
                worst = max(
                    worst, float(np.abs(game.payoffs(base[None]) - game.payoffs(moved[None])).max())
                )
    return worst


def random_function_game(rng: np.random.Generator) -> AnonymousGame:
    """A payoff that depends non-linearly on the whole histogram (not own-count)."""
    K, A = int(rng.integers(1, 3)), int(rng.integers(2, 4))
    players = rng.integers(1, 3, size=K)
    n = int(players.sum())
    w = rng.random((K, A, A))

    def payoff(h):
        x = h / max(n - 1, 1)
        return 0.5 + 0.5 * np.tanh(np.einsum("kab,Bb->Bka", w - 0.5, x**2))

    return AnonymousGame(players, A, payoff)


@pytest.mark.parametrize("seed", range(6))
def test_exact_expected_payoffs_match_the_sum_over_every_profile_of_the_others(seed):
    rng = np.random.default_rng(seed)
    K, A = int(rng.integers(1, 3)), int(rng.integers(2, 4))
    players = rng.integers(1, 3, size=K)
    table_game = AnonymousGame.from_count_table(players, rng.random((K, A, int(players.sum()))))
    for game in (table_game, random_function_game(rng)):
        strategy = rng.dirichlet(np.ones(game.num_actions), size=game.num_types)
        got = game.expected_payoffs(strategy, evaluation="exact")
        np.testing.assert_allclose(got, brute_expected(game, strategy), atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_largeness_is_the_largest_payoff_change_of_one_switch(seed):
    rng = np.random.default_rng(100 + seed)
    K, A = int(rng.integers(1, 3)), int(rng.integers(2, 4))
    players = rng.integers(1, 3, size=K)
    for game in (
        AnonymousGame.from_count_table(players, rng.random((K, A, int(players.sum())))),
        random_function_game(rng),
    ):
        assert game.largeness == pytest.approx(brute_largeness(game), abs=1e-12)


def test_declared_largeness_of_the_constructors_holds_on_the_exact_table():
    assert minority_game([7]).largeness == pytest.approx(1 / 7)
    assert crowding_game([2, 3], [[0.2, 0.9], [0.5, 0.1]]).largeness == pytest.approx(0.9 / 5)
    assert market_entry([6], capacity=3).largeness == pytest.approx(1 / 12)
    assert threshold_public_goods([8], threshold=2, width=4).largeness == pytest.approx(1 / 8)
    big = crowding_game([10**7], [[0.5, 1.0, 0.2]])  # K A n over the table limit
    assert (
        big.table is None
        and big.largeness == pytest.approx(1e-7)
        and "declared" in big.largeness_method
    )


def pure_equilibria(game: AnonymousGame) -> list[tuple[int, ...]]:
    """Every pure Nash equilibrium, by checking every profile and every unilateral deviation."""
    types = type_list(game.players)
    found = []
    for profile in itertools.product(range(game.num_actions), repeat=game.num_players):
        if all(
            profile_payoff(game, types, profile, i, profile[i])
            >= profile_payoff(game, types, profile, i, b) - 1e-12
            for i in range(game.num_players)
            for b in range(game.num_actions)
        ):
            found.append(profile)
    return found


@pytest.mark.parametrize("n,capacity", [(5, 2), (6, 3), (4, 0), (5, 5)])
def test_market_entry_equilibria_have_capacity_or_one_fewer_entrants(n, capacity):
    entrants = {sum(p) for p in pure_equilibria(market_entry([n], capacity))}
    assert entrants == {m for m in (capacity - 1, capacity) if 0 <= m <= n}


def test_el_farol_is_market_entry_at_the_capacity_fraction():
    a, b = el_farol([10], 0.6), market_entry([10], 6.0, 0.5)
    np.testing.assert_array_equal(a.table, b.table)


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_minority_game_equilibria_split_the_players_within_one(n):
    found = pure_equilibria(minority_game([n]))
    want = [p for p in itertools.product(range(2), repeat=n) if abs(n - 2 * sum(p)) <= 1]
    assert sorted(found) == sorted(want)


def test_crowding_game_expected_payoff_has_its_closed_form():
    n, p = 9, np.array([[0.2, 0.5, 0.3]])
    values = np.array([[0.9, 0.4, 0.7]])
    got = crowding_game([n], values).expected_payoffs(p, evaluation="exact")
    np.testing.assert_allclose(got, values * (1 - (n - 1) * p / n), atol=1e-12)  # E[C] = (n - 1) p
    # linear payoffs: the mean-field evaluation is exact
    np.testing.assert_allclose(
        crowding_game([n], values).expected_payoffs(p, evaluation="mean-field"), got, atol=1e-12
    )


def test_crowding_game_equal_values_equilibria_balance_the_restaurants():
    found = pure_equilibria(crowding_game([5], [[0.8, 0.8, 0.8]]))
    assert found and all(np.ptp(np.bincount(p, minlength=3)) <= 1 for p in found)
    assert len(found) == len(
        [
            p
            for p in itertools.product(range(3), repeat=5)
            if np.ptp(np.bincount(p, minlength=3)) <= 1
        ]
    )


@pytest.mark.parametrize(
    "n,threshold,width,cost", [(6, 1, 3, 0.1), (6, 2, 2, 0.3), (7, 0, 5, 0.25), (5, 3, 1, 0.6)]
)
def test_threshold_public_goods_equilibria_by_the_pivotal_condition(n, threshold, width, cost):
    def b(m):
        return min(max((m - threshold) / width, 0.0), 1.0)

    # m contributors are an equilibrium iff every contributor's marginal benefit covers her cost and
    # no free rider's does (payoffs (1 + b(m) - cost [contributes]) / 2)
    want = {
        m
        for m in range(n + 1)
        if (m == 0 or b(m) - b(m - 1) >= cost - 1e-12)
        and (m == n or b(m + 1) - b(m) <= cost + 1e-12)
    }
    got = {sum(p) for p in pure_equilibria(threshold_public_goods([n], threshold, width, cost))}
    assert got == want


def test_congestion_form_gives_the_expected_costs_of_dpgames_games_atomic():
    costs = PolynomialCosts([1.0, 0.5, 0.0], [0.0, 0.5, 1.0], [1, 2, 1])
    game = CongestionGame.from_action_lists(costs, [[[0], [1], [2]], [[0], [1], [2]]], [3, 2])
    anonymous, scale = from_congestion(game)
    rng = np.random.default_rng(3)
    for _ in range(5):
        p = rng.dirichlet(np.ones(3), size=2)
        want = UnilateralCosts(game, np.array([3, 2]))(p.ravel()).reshape(2, 3)
        got = scale * (1 - anonymous.expected_payoffs(p, evaluation="exact"))
        np.testing.assert_allclose(got, want, atol=1e-10)


def test_congestion_form_refuses_non_singleton_or_unequal_action_sets():
    costs = PolynomialCosts([1.0, 0.0], [0.0, 1.0])
    with pytest.raises(ValidationError, match="singleton"):
        from_congestion(CongestionGame.from_action_lists(costs, [[[0, 1], [1]]], [2]))
    with pytest.raises(ValidationError, match="same resources"):
        from_congestion(CongestionGame.from_action_lists(costs, [[[0], [1]], [[1], [0]]], [1, 1]))


def test_mean_field_error_is_measured_not_assumed():
    game = AnonymousGame.from_count_table(
        [6], (np.arange(6) % 2).astype(float)[None, None, :].repeat(2, axis=1)
    )
    p = np.array([[0.5, 0.5]])
    exact, mean_field = (
        game.expected_payoffs(p, evaluation="exact"),
        game.expected_payoffs(p, evaluation="mean-field"),
    )
    assert exact[0, 0] == pytest.approx(0.5)  # a fair coin's parity over 5 others
    assert mean_field[0, 0] == pytest.approx(0.5)  # at c = 2.5: halfway between 0 and 1
    assert not np.allclose(
        game.expected_payoffs(np.array([[0.9, 0.1]]), evaluation="exact"),
        game.expected_payoffs(np.array([[0.9, 0.1]]), evaluation="mean-field"),
    )


# --- bad input
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "payoff,match",
    [
        (lambda h: np.full((h.shape[0], 1, 2), np.nan), "NaN"),
        (lambda h: np.full((h.shape[0], 1, 2), 1.5), r"outside \[0, 1\]"),
        (lambda h: np.full((h.shape[0], 2), 0.5), "shape"),
        (lambda h: 1 / 0, "ZeroDivisionError"),
        ("not a function", "callable"),
    ],
)
def test_bad_payoff_functions_are_refused_naming_payoff(payoff, match):
    with pytest.raises(ValidationError, match=match) as info:
        AnonymousGame([3], 2, payoff)
    assert info.value.field == "payoff"


def test_bad_tables_players_and_declarations_are_refused_by_name():
    with pytest.raises(ValidationError, match="table"):
        AnonymousGame.from_count_table([3], np.full((1, 2, 2), 0.5))
    with pytest.raises(ValidationError, match="table"):
        AnonymousGame.from_count_table([3], np.full((1, 2, 3), -0.5))
    with pytest.raises(ValidationError, match="players"):
        minority_game([0, 0])
    with pytest.raises(ValidationError, match="largeness"):
        AnonymousGame(
            [2],
            2,
            lambda h: np.broadcast_to((h / 1.0)[:, None, :], (h.shape[0], 1, 2)).clip(0, 1),
            largeness=0.1,
        )
    with pytest.raises(ValidationError, match="largeness"):
        # too many histograms and nothing declared
        AnonymousGame([10**4], 3, lambda h: np.full((h.shape[0], 1, 3), 0.5))
    with pytest.raises(ValidationError, match="strategy"):
        minority_game([3]).expected_payoffs([[0.5, 0.6]])
    with pytest.raises(ValidationError, match="evaluation"):
        AnonymousGame(
            [10**4], 3, lambda h: np.full((h.shape[0], 1, 3), 0.5), largeness=0.0
        ).expected_payoffs(np.full((1, 3), 1 / 3), evaluation="exact")


@SETTINGS
@given(
    players=st.lists(st.integers(-1, 4), min_size=1, max_size=3),
    actions=st.integers(0, 3),
    low=st.floats(-0.5, 1.0) | st.just(float("nan")),
    high=st.floats(0.0, 1.5) | st.just(float("nan")),
    shape_ok=st.booleans(),
)
def test_fuzz_anonymous_game(players, actions, low, high, shape_ok):
    def payoff(h):
        K = len(players) if shape_ok else len(players) + 1
        span = np.linspace(low, high, max(actions, 1))
        return np.broadcast_to(span, (h.shape[0], K, max(actions, 1)))

    try:
        game = AnonymousGame(players, actions, payoff)
    except ValidationError as error:
        assert error.field in {"players", "num_actions", "payoff", "largeness"}
        return
    assert 0 <= game.largeness <= 1
    p = np.full((game.num_types, game.num_actions), 1 / game.num_actions)
    values = game.expected_payoffs(p)
    assert (
        values.shape == (game.num_types, game.num_actions) and ((values >= 0) & (values <= 1)).all()
    )


@SETTINGS
@given(
    kind=st.sampled_from(["entry", "minority", "crowding", "goods", "farol"]),
    players=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    a=st.floats(-1.0, 8.0) | st.just(float("nan")),
    b=st.floats(-1.0, 2.0) | st.just(float("nan")),
)
def test_fuzz_constructors(kind, players, a, b):
    try:
        if kind == "entry":
            game = market_entry(players, a, min(max(b, -1), 2))
        elif kind == "minority":
            game = minority_game(players)
        elif kind == "crowding":
            game = crowding_game(players, np.full((len(players), 3), b))
        elif kind == "goods":
            game = threshold_public_goods(players, a, b, 0.2)
        else:
            game = el_farol(players, b)
    except ValidationError as error:
        assert error.field in {
            "players",
            "capacity",
            "outside",
            "values",
            "threshold",
            "width",
            "cost",
            "capacity_fraction",
        }
        return
    assert np.isfinite(game.largeness) and game.largeness >= 0
    table = game.table
    assert table is not None and ((table >= 0) & (table <= 1)).all()
    assert np.abs(np.diff(table, axis=2)).max(initial=0) <= game.largeness + 1e-12


def test_congestion_form_pure_gains_equal_dpgames_games_pure_regret():
    """Every pure profile (counts per resource) of a small singleton congestion game: the anonymous
    form's best-deviation gains, scaled back to costs, equal dpgames.games.atomic.pure_regret's."""
    from dpgames.games.atomic import pure_regret

    costs = PolynomialCosts([1.0, 0.5, 0.0], [0.0, 0.5, 1.0], [1, 2, 1])
    congestion = CongestionGame.from_action_lists(costs, [[[0], [1], [2]]], [5])
    game, scale = from_congestion(congestion)
    for counts in itertools.product(range(6), repeat=3):
        if sum(counts) != 5:
            continue
        # the others, seen from a
        histograms = np.array([np.array(counts) - np.eye(3)[a] for a in range(3)])
        payoffs = game.payoffs(np.clip(histograms, 0, None))[:, 0, :]  # (own action, action)
        gain = np.array([payoffs[a].max() - payoffs[a, a] if counts[a] else 0.0 for a in range(3)])
        np.testing.assert_allclose(scale * gain, pure_regret(congestion, counts).gain, atol=1e-9)


@SETTINGS
@given(
    strategy=st.lists(
        st.lists(st.floats(-0.5, 1.5) | st.just(float("nan")), min_size=1, max_size=3),
        min_size=1,
        max_size=3,
    ),
    others=st.none() | st.lists(st.integers(-1, 4), min_size=1, max_size=3),
    histogram=st.lists(st.floats(-2, 8) | st.just(float("inf")), min_size=1, max_size=3),
    evaluation=st.sampled_from(["auto", "exact", "mean-field", "other"]),
)
def test_fuzz_payoffs_and_expectations(strategy, others, histogram, evaluation):
    game = market_entry([3, 2], 2)
    try:
        values = game.payoffs([histogram])
    except ValidationError as error:
        assert error.field == "histograms"
    else:
        assert values.shape == (1, 2, 2) and ((values >= 0) & (values <= 1)).all()
    try:
        expected = game.expected_payoffs(strategy, others, evaluation)
    except ValidationError as error:
        assert error.field in {"strategy", "others", "evaluation"}
        return
    assert expected.shape == (2, 2) and ((expected >= 0) & (expected <= 1 + 1e-12)).all()
