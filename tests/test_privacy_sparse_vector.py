"""Sparse vector: exact law of AboveThreshold (numerical integration) against sampling, exact
privacy audits with a planted bug, the accuracy theorem (Dwork & Roth Thm 3.24) exactly, and the
stop signal."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpgames.privacy.sparse_vector import AboveThreshold, SparseVector, SparseVectorHalted
from dpgames.testing import assert_private


def test_scales_by_hand():
    at = AboveThreshold(0.5, 10.0, sensitivity=2.0)
    assert (at.threshold_scale, at.query_scale) == (8.0, 16.0)  # 2 Delta / eps, 4 Delta / eps
    sparse = SparseVector(1.0, 0.0, max_positives=3)
    assert (sparse.threshold_scale, sparse.query_scale) == (6.0, 12.0)  # 2c/eps, 4c/eps
    approx = SparseVector(1.0, 0.0, max_positives=2, delta=1e-6)
    assert approx.threshold_scale == pytest.approx(math.sqrt(32 * 2 * math.log(1e6)))


def test_above_threshold_samples_its_exact_law():
    at = AboveThreshold(1.0, 3.0)
    answers = np.array([0.0, 2.0, 4.0, 1.0])
    exact = at.output_distribution(answers)
    assert list(exact.outcomes) == [0, 1, 2, 3, -1]
    gen = np.random.default_rng(9)
    results = [at.run(answers, rng=gen) for _ in range(20_000)]
    observed = [sum(1 for r in results if r.halted and r.above[0] == i) for i in range(4)]
    observed.append(sum(1 for r in results if not r.halted))
    assert stats.chisquare(observed, exact.probabilities * 20_000).pvalue > 1e-3


class QueryNoiseTooSmall(AboveThreshold):
    """Planted bug: query noise Lap(Delta / eps) instead of Lap(4 Delta / eps)."""

    @property
    def query_scale(self):
        return self.threshold_scale / 2


@pytest.mark.slow
def test_above_threshold_is_private_and_a_planted_bug_is_caught():
    base = np.array([1.0, 1.0, 1.0])
    pairs = [(base, base + np.array(s)) for s in itertools.product([-1.0, 0.0, 1.0], repeat=3)]
    assert_private(AboveThreshold(1.0, 1.0), pairs, 1.0)
    with pytest.raises(AssertionError, match="not 1-DP"):
        assert_private(QueryNoiseTooSmall(1.0, 1.0), pairs, 1.0)


def test_accuracy_theorem_exactly():
    """Thm 3.24: if only the last of k queries can be near the threshold, then with probability
    >= 1 - beta the mechanism halts there (and the halting query is >= T - alpha)."""
    eps, beta, k, threshold = 1.0, 0.05, 5, 0.0
    at = AboveThreshold(eps, threshold)
    alpha = at.accuracy(k, beta)
    assert alpha == pytest.approx(8 * (math.log(k) + math.log(2 / beta)) / eps)
    answers = np.array([threshold - alpha] * (k - 1) + [threshold + alpha])
    assert at.output_distribution(answers).probabilities[k - 1] >= 1 - beta


def test_sparse_finds_the_positives_and_says_why_it_stopped():
    sv = SparseVector(50.0, 0.0, max_positives=3)
    answers = np.full(100_000, -10.0)
    answers[[10, 500, 7000, 90_000]] = 10.0
    result = sv.run(answers, rng=2)
    assert list(result.above) == [10, 500, 7000] and result.halted and result.answered == 7001
    quiet = sv.run(np.full(1000, -10.0), rng=3)
    assert quiet.above.size == 0 and not quiet.halted and quiet.answered == 1000


def test_sparse_accuracy_by_simulation():
    """Thm 3.26 with c = 2: every 'above' is >= T - alpha, every 'below' <= T + alpha, w.p. >= 1 -
    beta."""
    sv = SparseVector(2.0, 0.0, max_positives=2)
    k, beta = 50, 0.1
    alpha = sv.accuracy(k, beta)
    rng = np.random.default_rng(4)
    answers = rng.choice([-1.5 * alpha, 1.5 * alpha], size=k, p=[0.9, 0.1])
    failures = 0
    for _ in range(2000):
        r = sv.run(answers, rng=rng)
        seen = np.zeros(k, dtype=bool)
        seen[: r.answered] = True
        above = np.zeros(k, dtype=bool)
        above[r.above] = True
        failures += bool(np.any(answers[above] < -alpha) or np.any(answers[seen & ~above] > alpha))
    assert failures / 2000 <= beta


def test_online_session_stops_explicitly():
    session = SparseVector(100.0, 0.0, max_positives=2).start(rng=1)
    assert [session.ask(v) for v in (-5.0, 5.0, -5.0, 5.0)] == [False, True, False, True]
    assert session.halted and session.answered == 4
    with pytest.raises(SparseVectorHalted, match="halted after 2 positives"):
        session.ask(5.0)


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda: AboveThreshold(0.0, 1.0), "epsilon"),
        (lambda: AboveThreshold(1.0, np.nan), "threshold"),
        (lambda: SparseVector(1.0, 0.0, max_positives=0), "max_positives"),
        (lambda: SparseVector(1.0, 0.0, delta=1.0), "delta"),
        (lambda: AboveThreshold(1.0, 0.0).run([[1.0]]), "answers"),
        (lambda: AboveThreshold(1.0, 0.0).accuracy(0, 0.1), "n_queries"),
    ],
)
def test_bad_input_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        bad()
