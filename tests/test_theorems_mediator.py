"""The private mediator's alpha and eta against what the papers state (Kearns, Pai, Roth & Ullman
2014; Rogers & Roth 2014; Dwork & Roth 2014, section 10.2.2), on random congestion instances and
seeds.

* **alpha** is the regret of the correlated distribution the mediator suggests from (the uniform
  mixture of the rounds' product strategies) on the true atomic game.  Oracle: recomputed here from
  the kept history with every expected cost by a plain Poisson-binomial convolution of the other
  players' independent choices (not the library's moment formulas), external regret for Hedge and
  swap regret for Blum-Mansour.
* **eta** is the largest gain from misreporting then best-responding (and from ignoring the
  suggestion). The incentive theorem states that a mediator that is (eps, delta)-jointly DP and
  computes an alpha-approximate correlated equilibrium with probability 1 - beta makes "report
  truthfully, then follow" an eta-approximate ex-post Nash equilibrium.  The exact constant differs
  between the versions of the paper and could not be retrieved from the reference search; asserted
  here is the form Dwork & Roth 10.2.2 give and the library cites, eta = alpha + 2 eps + beta +
  delta for costs in [0, 1], in cost units alpha + (2 eps + delta) C with C the largest expected
  action cost and beta = 0 (alpha is measured, not bounded), recomputed here from independent runs
  with the audit's seeds.  The gains are Monte Carlo over the mediator's noise: the assertion is
  that no 95% interval lies above it.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgames.games.costs import PolynomialCosts
from dpgames.games.game import CongestionGame
from dpgames.games.incentives import audit_incentives
from dpgames.games.mediator import PrivateMediator


def random_congestion(rng: np.random.Generator) -> tuple[CongestionGame, np.ndarray]:
    """2-3 classes of 1-3 players, 3-4 resources, 2-3 distinct actions per class (1-2 resources
    each), costs a + b x^p with p in {1, 2}."""
    n_res, n_classes = int(rng.integers(3, 5)), int(rng.integers(2, 4))
    actions = []
    for _ in range(n_classes):
        mine: list[list[int]] = []
        while len(mine) < int(rng.integers(2, 4)):
            a = sorted(rng.choice(n_res, size=int(rng.integers(1, 3)), replace=False).tolist())
            if a not in mine:
                mine.append(a)
        actions.append(mine)
    costs = PolynomialCosts(
        np.round(rng.uniform(0, 1, n_res), 2),
        np.round(rng.uniform(0.2, 1, n_res), 2),
        rng.choice([1.0, 2.0], n_res),
    )
    players = rng.integers(1, 4, n_classes)
    return CongestionGame.from_action_lists(costs, actions, players), players


def plain_expected_costs(
    game: CongestionGame, players: np.ndarray, strategy: np.ndarray
) -> np.ndarray:
    """Per action a (of class k): E[sum_{r in a} c_r(1 + X_r)] for one class-k player, X_r the
    number of the *other* players on r, each drawing her action independently from her class's
    strategy: the law of X_r is the convolution of their Bernoulli(P[her action uses r]) (a Poisson
    binomial), by loops."""
    inc = game.incidence.toarray()
    uses = [
        [
            float(strategy[inc[:, r] > 0][game.action_class[inc[:, r] > 0] == k].sum())
            for r in range(game.num_resources)
        ]
        for k in range(game.num_classes)
    ]
    out = np.zeros(game.num_actions)
    for a in range(game.num_actions):
        k = game.action_class[a]
        for r in np.flatnonzero(inc[a]):
            law = [1.0]
            for j in range(game.num_classes):
                for _ in range(int(players[j]) - (1 if j == k else 0)):
                    p = uses[j][r]
                    law = [
                        (law[x] if x < len(law) else 0.0) * (1 - p)
                        + (law[x - 1] * p if x >= 1 else 0.0)
                        for x in range(len(law) + 1)
                    ]
            c = game.costs
            out[a] += sum(
                q * (c.free[r] + c.coef[r] * (1 + x) ** c.power[r]) for x, q in enumerate(law)
            )
    return out


def plain_regret(game, players, history, swap: bool) -> np.ndarray:
    """Per class: external (or swap) regret of the uniform mixture of the rounds' strategies."""
    costs = np.array([plain_expected_costs(game, players, p) for p in history])  # T x actions
    T = history.shape[0]
    out = np.zeros(game.num_classes)
    for k in range(game.num_classes):
        acts = np.flatnonzero(game.action_class == k)
        follow = sum(float(history[t, acts] @ costs[t, acts]) for t in range(T))
        if not swap:
            out[k] = (follow - min(costs[:, b].sum() for b in acts)) / T
        else:
            out[k] = (
                sum(
                    max(
                        0.0,
                        max(
                            sum(history[t, a] * (costs[t, a] - costs[t, b]) for t in range(T))
                            for b in acts
                        ),
                    )
                    for a in acts
                )
                / T
            )
    return out


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dynamics", ["hedge", "blum-mansour"])
def test_alpha_is_the_regret_of_the_suggested_distribution(seed, dynamics):
    rng = np.random.default_rng(seed)
    game, players = random_congestion(rng)
    eps = float(rng.choice([0.5, 2.0]))
    outcome = PrivateMediator(
        rounds=60, epsilon=eps, dynamics=dynamics, evaluation="exact", keep_history=True
    ).run(game, players, rng=seed)
    expected = plain_regret(outcome.game, players, outcome.history, swap=dynamics == "blum-mansour")
    np.testing.assert_allclose(outcome.alpha, expected, rtol=1e-9, atol=1e-12)
    assert (outcome.alpha >= -1e-12).all()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_eta_within_the_incentive_theorem(seed, eps):
    rng = np.random.default_rng(100 + seed)
    game, players = random_congestion(rng)
    mediator = PrivateMediator(rounds=80, epsilon=eps, delta=1e-6, evaluation="exact")
    seeds, audit_seed = 4, 7 + seed
    audit = audit_incentives(mediator, game, players, seeds=seeds, exhaustive=12, rng=audit_seed)
    assert audit.exhaustive
    # the theorem's eta from independent truthful runs with the audit's seeds (drawn first from its
    # rng)
    run_seeds = np.random.default_rng(audit_seed).integers(2**63, size=seeds)
    runs = [
        PrivateMediator(
            rounds=80, epsilon=eps, delta=1e-6, evaluation="exact", keep_history=True
        ).run(game, players, int(s))
        for s in run_seeds
    ]
    alpha = float(np.mean([r.max_alpha for r in runs]))
    c = max(r.cost_range for r in runs)
    stated_eps = runs[0].privacy.epsilon
    assert stated_eps == pytest.approx(eps, rel=1e-6)  # the guarantee the theorem is fed
    eta = alpha + (2 * stated_eps + 1e-6) * c
    assert audit.theorem_bound == pytest.approx(eta, rel=1e-9)
    # no audited deviation gains more than eta (no 95% interval entirely above it)
    assert (audit.misreport_ci[:, 0] <= eta).all()
    assert (audit.ignore_ci[:, 0] <= eta).all()
    # ignoring the suggestion gains exactly the class's alpha, run by run
    for i, k in enumerate(audit.true_class):
        assert audit.ignore_gain[i] == pytest.approx(
            np.mean([r.alpha[k] for r in runs]), rel=1e-9, abs=1e-12
        )
