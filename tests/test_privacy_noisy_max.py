"""Report-noisy-max: permute-and-flip probabilities by brute force over permutations, Laplace noisy
max against the closed form for two candidates, sampling against the exact laws, and exact
audits."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpgames.privacy import ExponentialMechanism
from dpgames.privacy.noisy_max import (
    ReportNoisyMax,
    permute_and_flip,
    permute_and_flip_probabilities,
)
from dpgames.testing import assert_private


def permute_and_flip_by_enumeration(p):
    """Average over all m! orders of the chance that candidate r is the first accepted."""
    m = len(p)
    out = np.zeros(m)
    for order in itertools.permutations(range(m)):
        alive = 1.0
        for r in order:
            out[r] += alive * p[r]
            alive *= 1 - p[r]
    return out / math.factorial(m)


@pytest.mark.parametrize(
    "p", [[1.0], [0.3, 1.0], [0.1, 0.9, 1.0, 0.5, 0.0], [1.0, 1.0, 0.2, 0.7, 0.4, 0.05]]
)
def test_permute_and_flip_probabilities_by_enumeration(p):
    np.testing.assert_allclose(
        permute_and_flip_probabilities(p), permute_and_flip_by_enumeration(p), atol=1e-14
    )


@pytest.mark.parametrize("noise", ["exponential", "laplace"])
def test_noisy_max_samples_its_exact_law(noise):
    scores = np.array([0.0, 2.0, 1.0, 3.5, 3.0])
    rnm = ReportNoisyMax(0.7, noise=noise)
    exact = rnm.output_distribution(scores).probabilities
    draws = np.bincount(rnm.sample_indices(scores, 100_000, rng=4), minlength=5)
    assert stats.chisquare(draws, exact * 100_000).pvalue > 1e-3


def test_permute_and_flip_samples_the_law_of_exponential_noisy_max():
    scores = np.array([0.0, 2.0, 1.0, 3.5, 3.0])
    exact = ReportNoisyMax(1.0, noise="exponential").output_distribution(scores).probabilities
    gen = np.random.default_rng(5)
    flips = np.bincount(
        [permute_and_flip(scores, 1.0, rng=gen) for _ in range(20_000)], minlength=5
    )
    assert stats.chisquare(flips, exact * 20_000).pvalue > 1e-3


def test_laplace_noisy_max_of_two_matches_the_difference_of_laplaces():
    """For two candidates, Pr[0 wins] = Pr[L0 - L1 > s1 - s0]; the difference D of two Laplace(b)
    has Pr[D > d] = e^{-d/b} (1 + d/(2b)) / 2 for d >= 0."""
    b = 2.0  # eps = 1, sensitivity 1, not monotone
    for s0, s1 in [(0.0, 0.0), (0.0, 1.5), (3.0, 0.0)]:
        d = s1 - s0
        tail = math.exp(-abs(d) / b) * (1 + abs(d) / (2 * b)) / 2
        p0 = tail if d >= 0 else 1 - tail
        got = ReportNoisyMax(1.0, noise="laplace").output_distribution([s0, s1]).probabilities
        assert got[0] == pytest.approx(p0, abs=1e-10)


def shift_pairs(base):
    return [
        (base, base + np.array(s, dtype=float))
        for s in itertools.product([-1, 0, 1], repeat=base.size)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["laplace", "exponential"])
def test_report_noisy_max_is_private_and_the_monotone_shortcut_is_caught(noise):
    pairs = shift_pairs(np.array([0.0, 0.5, 0.2]))
    assert_private(ReportNoisyMax(1.0, noise=noise), pairs, 1.0)
    monotone_pairs = [(a, b) for a, b in pairs if np.all(b >= a) or np.all(b <= a)]
    assert_private(ReportNoisyMax(1.0, noise=noise, monotone=True), monotone_pairs, 1.0)
    with pytest.raises(AssertionError, match="not 1-DP"):
        # planted: monotone scale on general scores
        assert_private(ReportNoisyMax(1.0, noise=noise, monotone=True), pairs, 1.0)


def test_exponential_mechanism_missing_the_factor_two_is_caught():
    pairs = shift_pairs(np.array([0.0, 0.5, 0.2]))
    assert_private(ExponentialMechanism(1.0).distribution, pairs, 1.0)
    with pytest.raises(AssertionError, match=r"not 1-DP \(exactly\)"):
        assert_private(
            ExponentialMechanism(1.0, convention="mcsherry-talwar").distribution, pairs, 1.0
        )


def test_permute_and_flip_never_scores_worse_than_the_exponential_mechanism():
    """McKenna & Sheldon (2020), Thm 2, checked exactly on random score vectors."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        scores = rng.uniform(0, 10, size=rng.integers(2, 30))
        pf = ReportNoisyMax(0.8).output_distribution(scores).expect(scores)
        em = ExponentialMechanism(0.8).distribution(scores).expect(scores)
        assert pf >= em - 1e-12


def test_guarantee_and_bad_input():
    g = ReportNoisyMax(0.5, sensitivity=2.0, monotone=True).guarantee
    assert g.epsilon == 0.5 and "monotone" in g.neighbouring.detail
    assert ReportNoisyMax(0.5, sensitivity=2.0).scale == 8.0
    with pytest.raises(ValueError, match="noise"):
        ReportNoisyMax(1.0, noise="gumbel")
    with pytest.raises(ValueError, match="scores"):
        ReportNoisyMax(1.0).sample_indices([])
    with pytest.raises(ValueError, match="finite"):
        ReportNoisyMax(1.0).output_distribution([0.0, np.nan])
