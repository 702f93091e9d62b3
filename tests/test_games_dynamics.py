"""No-regret dynamics against their theorems; the private mediator's joint DP against an exact law
computed independently (Gauss-Hermite quadrature over the noise), and alpha shrinking with n."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgames.games.atomic import RegretTracker
from dpgames.games.costs import PolynomialCosts
from dpgames.games.dynamics import BlumMansour, Hedge, hedge_regret_bound
from dpgames.games.game import CongestionGame
from dpgames.games.mediator import PrivateMediator, rho_for_epsilon
from dpgames.privacy import zcdp_to_dp


def classes_game(sizes) -> CongestionGame:
    """Classes with the given numbers of one-resource actions (costs irrelevant: losses are given)."""
    m = sum(sizes)
    start = np.cumsum([0] + list(sizes))
    actions = [[[r] for r in range(start[k], start[k + 1])] for k in range(len(sizes))]
    return CongestionGame.from_action_lists(PolynomialCosts(np.zeros(m), np.zeros(m)), actions, [1] * len(sizes))


def test_hedge_regret_within_its_bound_on_adversarial_losses():
    game = classes_game([2, 5, 9])
    T = 2000
    eta = np.sqrt(8 * np.log(game.actions_per_class) / T)
    hedge = Hedge(game, eta)
    gen = np.random.default_rng(1)
    for t in range(T):  # losses in [0, 1] reacting to the learner (the best action flips)
        p = hedge.strategy()
        loss = gen.uniform(0, 1, game.num_actions) * (p > game.spread(game.class_sum(p) / game.actions_per_class))
        hedge.update(p, loss)
    bound = hedge_regret_bound(game.actions_per_class, T, eta)
    assert np.all(hedge.external_regret() <= bound)
    assert np.all(bound == pytest.approx(np.sqrt(T * np.log(game.actions_per_class) / 2)))


def test_blum_mansour_swap_regret_vanishes_and_respects_its_bound():
    """Shapley's game (Hedge cycles there and keeps positive swap regret); Blum-Mansour's average swap
    regret must fall below N (ln N / eta + eta T / 8) / T and shrink with T."""
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


# --- joint DP on a tiny instance -----------------------------------------------------------------------
def tiny(reports) -> CongestionGame:
    """Resources 0, 1 (roads, linear) and 2 (elsewhere).  Class 0: roads; class 1 (player j alone):
    roads; class 2: resource 2.  Player i reports class 0 or class 2."""
    costs = PolynomialCosts([1.0, 1.5, 0.0], [1.0, 1.0, 1.0])
    return CongestionGame.from_action_lists(costs, [[[0], [1]], [[0], [1]], [[2]]], reports)


def law_of_j(expected_loads: np.ndarray, mediator: PrivateMediator, sigma: float) -> float:
    """P(j is suggested road 0), computed independently: T = 2, t* uniform; round 1 uniform; round 2
    is one Hedge step on costs at max(y + Z, 0) scaled by their max, Z ~ N(0, sigma^2 I) on the roads
    (2-d Gauss-Hermite quadrature)."""
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


def test_suggestions_to_others_are_jointly_private():
    mediator = PrivateMediator(rounds=2, epsilon=4.0, delta=1e-6)
    sigma = math.sqrt(2 * 1) * math.sqrt(2 / (2 * rho_for_epsilon(4.0, 1e-6)))
    assert zcdp_to_dp(mediator.total_rho, 1e-6) == pytest.approx(4.0, rel=1e-6)
    a, b = tiny([1, 1, 0]), tiny([0, 1, 1])  # i in class 0, or i in class 2
    law_a = law_of_j(np.array([1.0, 1.0]), mediator, sigma)   # i and j each put 1/2 on each road
    law_b = law_of_j(np.array([0.5, 0.5]), mediator, sigma)
    # the library draws j's suggestion with exactly this law (statistical check, 4 standard errors)
    runs = 1500
    for game, law in ((a, law_a), (b, law_b)):
        outcomes = [PrivateMediator(rounds=2, epsilon=4.0).run(game, rng=s).suggestions[2] for s in range(runs)]
        assert np.mean(outcomes) == pytest.approx(law, abs=4 * math.sqrt(law * (1 - law) / runs))
    assert law_a != pytest.approx(law_b, abs=1e-3)  # i's report does move j's law...
    eps = mediator.run(a, rng=0).privacy.epsilon    # ...by at most e^eps, up to delta (hockey stick)
    for p, q in ((law_a, law_b), (law_b, law_a)):
        excess = max(0.0, p - math.exp(eps) * q) + max(0.0, (1 - p) - math.exp(eps) * (1 - q))
        assert excess <= 1e-6
    # and the exact privacy loss here is far inside the guarantee
    assert abs(math.log(law_a / law_b)) < eps and abs(math.log((1 - law_a) / (1 - law_b))) < eps


def test_alpha_shrinks_as_n_grows():
    """Pigou scaled to n players (variable road costs x / n): with the privacy budget fixed, the noise
    matters less as n grows and the exact regret alpha falls."""
    alphas = []
    for n in (20, 200, 2000):
        game = CongestionGame.from_action_lists(PolynomialCosts([1.0, 0.0], [0.0, 1.0 / n]), [[[0], [1]]], [n])
        runs = [PrivateMediator(rounds=400, epsilon=1.0, evaluation="exact").run(game, rng=s).max_alpha
                for s in range(3)]
        alphas.append(np.mean(runs))
    assert alphas[0] > alphas[1] > alphas[2]


def test_mediator_refuses_bad_parameters():
    with pytest.raises(ValueError, match="rounds"):
        PrivateMediator(rounds=0)
    with pytest.raises(ValueError, match="noise"):
        PrivateMediator(noise="laplace")
    with pytest.raises(ValueError, match="whole number"):
        PrivateMediator(rounds=5).run(tiny([1, 1, 0]), players=np.array([0.5, 1, 0]))
