"""Randomized response against hand-derived probabilities and exact binomial enumeration."""

import math

import numpy as np
import pytest
from scipy import stats

from dpgames.privacy.randomized_response import KaryResponse, WarnerResponse
from dpgames.testing import assert_private


def reported_yes_pmf(true_yes, n, a, c):
    """Pr[n_yes = m] by enumerating how many true yes (k1) and true no (k0) are reported yes."""
    pmf = np.zeros(n + 1)
    for k1 in range(true_yes + 1):
        for k0 in range(n - true_yes + 1):
            pmf[k1 + k0] += stats.binom.pmf(k1, true_yes, a) * stats.binom.pmf(k0, n - true_yes, c)
    return pmf


def test_warner_fair_coins_by_hand():
    w = WarnerResponse()
    assert (w.p_yes_given_yes, w.p_yes_given_no) == (0.75, 0.25)
    assert w.epsilon == pytest.approx(math.log(3))
    assert w.estimate_yes(30, 100) == 2 * 30 - 100 / 2


@pytest.mark.parametrize("p_truth, p_yes", [(0.5, 0.5), (0.7, 0.3), (0.2, 0.9)])
def test_warner_estimator_is_unbiased_with_the_stated_variance_exactly(p_truth, p_yes):
    w = WarnerResponse(p_truth, p_yes)
    a, c = p_truth + (1 - p_truth) * p_yes, (1 - p_truth) * p_yes
    n = 12
    for true_yes in range(n + 1):
        pmf = reported_yes_pmf(true_yes, n, a, c)
        estimates = w.estimate_yes(np.arange(n + 1), n)
        mean = pmf @ estimates
        assert mean == pytest.approx(true_yes, abs=1e-10)
        assert pmf @ (estimates - true_yes) ** 2 == pytest.approx(
            w.estimator_variance(true_yes, n), rel=1e-10
        )
        np.testing.assert_allclose(w.count_distribution(true_yes, n).probabilities, pmf, atol=1e-14)


def test_warner_epsilon_is_exact_and_the_survey_count_inherits_it():
    w = WarnerResponse(0.7, 0.3)
    # Pr[yes|yes] = 0.79, Pr[yes|no] = 0.09: eps = max(ln(0.79/0.09), ln(0.91/0.21))
    assert w.epsilon == pytest.approx(max(math.log(0.79 / 0.09), math.log(0.91 / 0.21)))
    assert_private(w, [(0, 1)], w.epsilon)
    with pytest.raises(AssertionError):
        assert_private(w, [(0, 1)], w.epsilon - 1e-6)
    # the count of yes reports is post-processing: adjacent true counts stay eps-close
    assert_private(lambda m: w.count_distribution(m, 8), [(m, m + 1) for m in range(8)], w.epsilon)


def test_respond_frequencies_match_the_channel():
    w = WarnerResponse(0.6, 0.4)
    answers = np.repeat([0, 1], 100_000)
    reports = w.respond(answers, rng=3)
    for truth in (0, 1):
        observed = np.bincount(reports[answers == truth], minlength=2)
        assert stats.chisquare(observed, 100_000 * w.matrix[truth]).pvalue > 1e-3
    np.testing.assert_array_equal(w.respond(answers, rng=3), reports)


def test_kary_probabilities_by_hand():
    k = KaryResponse(3, math.log(2))  # keep: 2/(2+2) = 1/2, each other: 1/4
    np.testing.assert_allclose(k.matrix, [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])
    assert_private(k, [(i, j) for i in range(3) for j in range(3)], math.log(2))


def test_kary_estimator_unbiased_with_exact_variance():
    k = KaryResponse(4, 1.0)
    counts = np.array([50, 0, 30, 20])
    # E[observed_v] = sum_i counts_i P(v | i); Var[observed_v] = sum_i counts_i P(v|i)(1 - P(v|i))
    expected_obs = counts @ k.matrix
    var_obs = counts @ (k.matrix * (1 - k.matrix))
    np.testing.assert_allclose(np.linalg.solve(k.matrix.T, expected_obs), counts, atol=1e-9)
    p, q = math.e / (math.e + 3), 1 / (math.e + 3)
    np.testing.assert_allclose(k.estimator_variance(counts), var_obs / (p - q) ** 2)
    est = np.array(
        [k.estimate_counts(k.respond(np.repeat(np.arange(4), counts), rng=s)) for s in range(2000)]
    )
    se = np.sqrt(k.estimator_variance(counts) / 2000)
    assert np.all(np.abs(est.mean(axis=0) - counts) < 4 * se)


def test_planted_off_by_one_is_caught():
    """The classic bug: q = 1 / (e^eps + k) (and the true value keeping the rest) is not eps-DP."""
    k = KaryResponse(3, 1.0)
    buggy = KaryResponse(3, 1.0)
    q = 1 / (math.e + 3)
    buggy.matrix = np.full((3, 3), q)
    np.fill_diagonal(buggy.matrix, 1 - 2 * q)
    assert_private(k, [(0, 1), (1, 2)], 1.0)
    with pytest.raises(AssertionError, match=r"inputs \d vs \d, outcome \d"):
        assert_private(buggy, [(0, 1), (1, 2)], 1.0)


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda: WarnerResponse(p_truth=0), "p_truth"),
        (lambda: WarnerResponse(p_yes=1.5), "p_yes"),
        (lambda: KaryResponse(1, 1.0), "k must be"),
        (lambda: KaryResponse(3, 0), "epsilon"),
        (lambda: WarnerResponse().respond([0, 2]), "answers"),
        (lambda: WarnerResponse().output_distribution(2), "answer"),
        (lambda: WarnerResponse().count_distribution(5, 3), "true_yes"),
    ],
)
def test_bad_input_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        bad()
