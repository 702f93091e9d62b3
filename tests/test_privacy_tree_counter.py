"""The binary-tree counter against oracles built independently of its code: the dyadic decomposition
by brute force, the node sensitivities from an explicit node x round matrix, the error covariance
from that decomposition, and exact tails of sums of Laplace / normal noise."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpgames.privacy import BinaryTreeCounter, PrivacyGuarantee
from dpgames.privacy.tree_counter import laplace_sum_quantile


def dyadic_nodes(horizon):
    """All intervals (start, end] = ((k-1) 2^j, k 2^j] inside [1, horizon], by enumeration."""
    nodes, size = [], 1
    while size <= horizon:
        nodes += [(start, start + size) for start in range(0, horizon - size + 1, size)]
        size *= 2
    return nodes


def decomposition(t, nodes):
    """Greedy cover of rounds 1..t by the largest aligned intervals, walking left to right."""
    used, pos = [], 0
    while pos < t:
        best = max((n for n in nodes if n[0] == pos and n[1] <= t), key=lambda n: n[1])
        used.append(best)
        pos = best[1]
    return used


def node_round_matrix(horizon):
    nodes = dyadic_nodes(horizon)
    a = np.zeros((len(nodes), horizon))
    for i, (s, e) in enumerate(nodes):
        a[i, s:e] = 1.0
    return nodes, a


@pytest.mark.parametrize("horizon", [1, 2, 7, 8, 13, 100])
@pytest.mark.parametrize("relation", ["event", "user"])
def test_node_sensitivity_matches_explicit_matrix(horizon, relation):
    _, a = node_round_matrix(horizon)
    if relation == "event":  # one round changes by 1: the worst column
        l1, l2 = a.sum(axis=0).max(), np.sqrt((a**2).sum(axis=0)).max()
    else:  # every round changes by 1 in the same direction
        l1, l2 = a.sum(), np.linalg.norm(a.sum(axis=1))
    lap = BinaryTreeCounter(horizon, epsilon=1.0, sensitivity=3.0, relation=relation)
    gau = BinaryTreeCounter(horizon, rho=1.0, sensitivity=3.0, relation=relation)
    assert lap.node_sensitivity == pytest.approx(3 * l1)
    assert gau.node_sensitivity == pytest.approx(3 * l2)
    assert lap.noise_scale == pytest.approx(3 * l1 / 1.0)
    assert gau.noise_scale == pytest.approx(3 * l2 / math.sqrt(2.0))


def test_error_does_not_depend_on_data_and_online_equals_batch():
    c = BinaryTreeCounter(29, epsilon=0.7)
    x = np.random.default_rng(1).integers(0, 5, size=(29, 3)).astype(float)
    y = np.random.default_rng(2).normal(size=(29, 3))
    ex = c.release(x, rng=11) - np.cumsum(x, axis=0)
    ey = c.release(y, rng=11) - np.cumsum(y, axis=0)
    np.testing.assert_allclose(ex, ey, atol=1e-9)
    online = c.start(3, rng=11)
    np.testing.assert_allclose(
        np.array([online.update(r) for r in x]), c.release(x, rng=11), atol=1e-9
    )
    # a shorter stream is the start of the same release
    np.testing.assert_allclose(c.release(x[:10], rng=11), c.release(x, rng=11)[:10], atol=1e-9)
    assert c.release(x[:, 0], rng=3).shape == (29,)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_error_covariance_is_that_of_the_dyadic_decomposition(noise):
    """Cov(err_t, err_s) = node variance * #shared nodes; 200000 coordinates act as replications."""
    horizon, dim = 11, 200_000
    c = BinaryTreeCounter(horizon, **({"epsilon": 2.0} if noise == "laplace" else {"rho": 0.5}))
    err = c.release(np.zeros((horizon, dim)), rng=7)
    nodes = dyadic_nodes(horizon)
    use = np.array(
        [[n in decomposition(t, nodes) for n in nodes] for t in range(1, horizon + 1)], dtype=float
    )
    node_var = 2 * c.noise_scale**2 if noise == "laplace" else c.noise_scale**2
    expected = node_var * use @ use.T
    observed = err @ err.T / dim
    # standard error of an empirical covariance is at most sqrt((var_t var_s + cov^2) * kurtosis /
    # dim)
    se = np.sqrt(np.outer(np.diag(expected), np.diag(expected)) * 6 / dim)
    assert np.all(np.abs(observed - expected) < 5 * se)
    assert np.all(np.abs(err.mean(axis=1)) < 5 * np.sqrt(np.diag(expected) / dim))
    np.testing.assert_allclose(c.error_variance(), np.diag(expected))


def test_error_standard_deviation_is_order_log_three_halves():
    for horizon in [10, 1000, 10**6]:
        c = BinaryTreeCounter(horizon, epsilon=1.0)
        levels = math.floor(math.log2(horizon)) + 1
        assert (
            np.sqrt(c.error_variance([horizon, 1, horizon // 2]).max())
            <= math.sqrt(2 * levels) * levels + 1e-9
        )


def exact_two_sided_tail_of_laplace_sum(k, a):
    """Pr[|G1 - G2| > a] for independent Gamma(k, 1): the sum of k Laplace(1) is G1 - G2."""
    value, _ = integrate.quad(lambda g: stats.gamma.sf(a + g, k) * stats.gamma.pdf(g, k), 0, np.inf)
    return 2 * value


@pytest.mark.parametrize("k", [1, 2, 3, 10, 40])
@pytest.mark.parametrize("beta", [0.1, 1e-4])
def test_laplace_sum_quantile_is_exact(k, beta):
    a = laplace_sum_quantile(k, beta)
    assert exact_two_sided_tail_of_laplace_sum(k, a) == pytest.approx(beta, rel=1e-6)


@pytest.mark.parametrize("kwargs", [{"rho": 0.3}, {"epsilon": 1.5}])
def test_error_bound_is_the_exact_quantile(kwargs):
    c = BinaryTreeCounter(6, **kwargs)
    err = c.release(np.zeros((6, 100_000)), rng=3)
    bound = c.error_bound(0.05)
    exceed = (np.abs(err) > bound[:, None]).mean(axis=1)
    # binomial(100000, 0.05): standard deviation 0.0007
    assert np.all(np.abs(exceed - 0.05) < 0.004)


def test_max_error_bound_holds_simultaneously():
    c = BinaryTreeCounter(64, epsilon=1.0)
    bound = c.max_error_bound(0.1, dim=50)
    fails = sum(np.abs(c.release(np.zeros((64, 50)), rng=s)).max() > bound for s in range(200))
    assert fails <= 20 + 3 * math.sqrt(200 * 0.1 * 0.9)


def test_guarantees_name_noise_and_relation():
    g = BinaryTreeCounter(10, epsilon=0.5, sensitivity=2).guarantee
    assert (g.epsilon, g.delta, g.rho) == (0.5, 0.0, None) and "l1" in g.neighbouring.detail
    z = BinaryTreeCounter(10, rho=0.2, relation="user").guarantee
    assert (
        z == PrivacyGuarantee.from_zcdp(0.2, z.neighbouring)
        and "every round" in z.neighbouring.detail
        and "l2" in z.neighbouring.detail
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"horizon": 0, "epsilon": 1}, "horizon"),
        ({"horizon": 5}, "exactly one"),
        ({"horizon": 5, "epsilon": 1, "rho": 1}, "exactly one"),
        ({"horizon": 5, "epsilon": -1}, "epsilon"),
        ({"horizon": 5, "rho": float("nan")}, "rho"),
        ({"horizon": 5, "epsilon": 1, "sensitivity": 0}, "sensitivity"),
        ({"horizon": 5, "epsilon": 1, "relation": "round"}, "relation"),
    ],
)
def test_bad_parameters_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BinaryTreeCounter(**kwargs)


def test_bad_streams_are_refused():
    c = BinaryTreeCounter(3, epsilon=1)
    with pytest.raises(ValueError, match="horizon"):
        c.release(np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        c.release([1.0, np.nan])
    online = c.start(2, rng=0)
    with pytest.raises(ValueError, match="2 entries"):
        online.update([1, 2, 3])
    for _ in range(3):
        online.update([1, 1])
    with pytest.raises(ValueError, match="used up"):
        online.update([1, 1])
