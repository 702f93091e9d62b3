"""Exact laws of the sparse vector and noisy-max families (dpgames.privacy.exact_laws), each against
an oracle computed apart from the library: mpmath quadrature at 25 digits, closed forms (the
exponential mechanism's softmax, permute-and-flip by enumerating every order, the difference of two
Laplaces, the Laplace mass of an interval when the queries carry no noise), Monte Carlo of plain
samplers written here with chi-square tests, and the privacy theorems of Lyu, Su & Li (2017), Dwork
& Roth (Claim 3.9) and Ding et al. (2018, 2019) through exact audits."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from dpgames.privacy import noisy_max_law, sparse_vector_law
from dpgames.privacy.audit import audit_finite
from dpgames.privacy.exact_laws import MAX_OUTCOMES, binned
from dpgames.privacy.noisy_max import permute_and_flip
from dpgames.validation import ValidationError

EPS = 1.0


# --------------------------------------------------------------------------------------------------
# Oracles written apart from the library


def mp_integrate(f, points, width, reach):
    """mpmath's tanh-sinh quadrature on pieces at most ``width`` long (the smallest noise scale:
    longer pieces miss digits) between the given breakpoints, then pieces doubling in length out to
    ``reach`` beyond them (the largest noise scale times 60) and the infinite ends; its error
    estimate is checked."""
    finite = [p for p in points if mp.isfinite(p)]
    low, high = min(finite), max(finite)
    steps = int(mp.ceil((high - low) / width))
    doubling = [width * (2**k - 1) for k in range(1, int(mp.ceil(mp.log(reach / width, 2))) + 2)]
    grid = sorted(
        {
            *finite,
            *(low + k * (high - low) / steps for k in range(1, steps)),
            *(low - d for d in doubling),
            *(high + d for d in doubling),
        }
    )
    grid = [p for p in grid if points[0] < p < points[-1]]
    value, error = mp.quad(f, [points[0], *grid, points[-1]], error=True)
    assert error <= max(abs(value) * mp.mpf(10) ** -12, 1000 * mp.eps)
    return value


def mp_laplace_cdf(z):
    return mp.exp(z) / 2 if z < 0 else 1 - mp.exp(-z) / 2


def mp_sparse_vector(q, t, b_t, b_q, pattern, edges=None):
    """Pr[pattern] with one threshold noise, by mpmath quadrature split at the kinks."""
    q, t = [mp.mpf(float(v)) for v in q], mp.mpf(t)
    cuts = [-mp.inf] + [mp.mpf(e) for e in (edges if edges is not None else [])] + [mp.inf]

    def integrand(r):
        value = mp.exp(-abs(r) / b_t) / (2 * b_t)
        for qi, a in zip(q, pattern):
            z = (t + r - qi) / b_q
            if a == "F":
                value *= mp_laplace_cdf(z)
            elif a == "T":
                # not 1 - cdf(z): that cancels to nothing in the far tail
                value *= mp_laplace_cdf(-z)
            elif a != "-":  # above with its value in bin a: q + nu in [max(lower, t + r), upper)
                lower, upper = max(cuts[a], t + r), cuts[a + 1]
                if upper <= lower:
                    return mp.mpf(0)
                value *= mp_laplace_cdf((qi - lower) / b_q) - mp_laplace_cdf((qi - upper) / b_q)
        return value

    kinks = {mp.mpf(0), *(qi - t for qi in q), *(c - t for c in cuts[1:-1])}
    return mp_integrate(
        integrand, [-mp.inf, *sorted(kinks), mp.inf], min(b_t, b_q), 60 * max(b_t, b_q)
    )


def mp_noise(noise, b):
    if noise == "laplace":
        return (lambda z: mp.exp(-abs(z)) / (2 * b)), mp_laplace_cdf
    if noise == "exponential":
        return (lambda z: mp.exp(-z) / b if z >= 0 else mp.mpf(0)), (
            lambda z: -mp.expm1(-z) if z > 0 else mp.mpf(0)
        )
    return (lambda z: mp.exp(-z - mp.exp(-z)) / b), (lambda z: mp.exp(-mp.exp(-z)))


def mp_noisy_max(q, b, noise, i, lower=-mp.inf, upper=mp.inf, gap=None):
    """Pr[argmax = i, X_i in [lower, upper)], or Pr[argmax = i, gap in [gap[0], gap[1])]."""
    f, cdf = mp_noise(noise, b)
    q = [mp.mpf(float(v)) for v in q]

    def others(x, shift):
        return mp.fprod(cdf((x - shift - qj) / b) for j, qj in enumerate(q) if j != i)

    # below min(q) - 12 b every factor F of a Gumbel is under exp(-e^12): start there, not at -inf
    start = min(q) - 12 * b if noise == "gumbel" else -mp.inf
    if gap is None:
        lower = max(lower, start)
        kinks = sorted({v for v in q if lower < v < upper})
        if not lower < upper:
            return mp.mpf(0)
        return mp_integrate(
            lambda x: f((x - q[i]) / b) * others(x, 0), [lower, *kinks, upper], b, 60 * b
        )
    low, high = gap
    kinks = sorted({*q, *(v + low for v in q), *(v + high for v in q if high != mp.inf)})
    return mp_integrate(
        lambda x: f((x - q[i]) / b) * (others(x, low) - (others(x, high) if high != mp.inf else 0)),
        [start, *kinks, mp.inf],
        b,
        60 * b,
    )


def sample_sparse_vector(q, t, b_t, b_q, n, rng, cutoff=1, halt=True, resample=False, edges=None):
    """The mechanism run as written, ``n`` times: one row of answers per run ("-" after the
    stop)."""
    m = len(q)
    out = np.full((n, m), "-", dtype=object)
    rho = rng.laplace(0.0, b_t, n) if b_t > 0 else np.zeros(n)
    aboves = np.zeros(n, dtype=int)
    for i in range(m):
        active = ~(halt & (aboves >= cutoff))
        noisy = q[i] + (rng.laplace(0.0, b_q, n) if b_q > 0 else np.zeros(n))
        up = active & (noisy >= t + rho)
        down = active & ~up
        out[down, i] = "F"
        out[up, i] = "T" if edges is None else np.searchsorted(edges, noisy[up], side="right")
        aboves += up
        if resample:
            rho = np.where(up, rng.laplace(0.0, b_t, n), rho)
    return [tuple(row) for row in out.tolist()]


def assert_frequencies_match(draws, law, n):
    """Chi-square of the observed labels against the law (cells of expected count < 20 pooled)."""
    counts = Counter(draws)
    labels = law.outcomes.tolist()
    assert set(counts) <= set(labels), set(counts) - set(labels)
    expected = law.probabilities * n
    observed = np.array([counts.get(label, 0) for label in labels], dtype=float)
    big = expected >= 20
    exp_cells = np.append(expected[big], expected[~big].sum())
    obs_cells = np.append(observed[big], observed[~big].sum())
    if exp_cells[-1] < 20:
        exp_cells, obs_cells = exp_cells[:-1], obs_cells[:-1]
        exp_cells *= obs_cells.sum() / exp_cells.sum()
    assert stats.chisquare(obs_cells, exp_cells).pvalue > 1e-3


def lyu(algorithm, c=1, eps=EPS, **extra):
    """The variants of Lyu, Su & Li (2017), Alg. 1-6, sensitivity 1, threshold 0."""
    knobs = {
        1: dict(threshold_scale=2 / eps, query_scale=4 * c / eps, cutoff=c),
        2: dict(
            threshold_scale=2 * c / eps, query_scale=4 * c / eps, cutoff=c, resample_threshold=True
        ),
        3: dict(
            threshold_scale=2 / eps,
            query_scale=2 * c / eps,
            cutoff=c,
            output_value=True,
            value_bins=np.linspace(-4.0, 4.0, 5),
        ),
        4: dict(threshold_scale=4 / eps, query_scale=4 / (3 * eps), cutoff=c),
        5: dict(threshold_scale=2 / eps, query_scale=0.0, halt=False),
        6: dict(threshold_scale=2 / eps, query_scale=2 / eps, halt=False),
    }[algorithm]
    knobs.update(extra)
    return lambda x: sparse_vector_law(x, 0.0, **knobs)


def neighbours(m, count, rng):
    """Random pairs of query vectors whose answers each move by at most 1, and the extreme moves."""
    pairs = [(np.zeros(m), np.zeros(m) + s) for s in (1.0, -1.0)]
    pairs += [
        (np.zeros(m), np.r_[np.ones(m - 1), -1.0]),
        (np.zeros(m), np.r_[-np.ones(m - 1), 1.0]),
    ]
    for _ in range(count):
        x = rng.normal(0.0, 2.0, m)
        pairs.append((x, x + rng.choice([-1.0, 1.0], m) * rng.uniform(0.5, 1.0, m)))
    return pairs


# --------------------------------------------------------------------------------------------------
# Quadrature against mpmath at 25 digits: relative error below 1e-9 on every outcome


@pytest.mark.slow
@pytest.mark.parametrize(
    "q, t, b_t, b_q, cutoff, halt",
    [
        (
            [0.3, -1.2, 2.0],
            0.5,
            2.0,
            4.0,
            1,
            True,
        ),  # AboveThreshold, Dwork & Roth's scales at eps = 1
        ([3.5, -2.4, -1.9], 0.0, 3.0, 0.1, 2, False),  # query noise 30 times faster: down to e^-63
        (
            [0.0, 12.0, -12.0],
            2.0,
            0.5,
            1.0,
            2,
            True,
        ),  # queries far apart: probabilities down to e^-28
    ],
)
def test_sparse_vector_law_matches_mpmath(q, t, b_t, b_q, cutoff, halt):
    mp.mp.dps = 25
    law = sparse_vector_law(q, t, threshold_scale=b_t, query_scale=b_q, cutoff=cutoff, halt=halt)
    for label, log_p in zip(law.outcomes, law.log_probabilities):
        assert log_p == pytest.approx(
            float(mp.log(mp_sparse_vector(q, t, b_t, b_q, label))), abs=1e-9
        )


@pytest.mark.slow
def test_resampled_threshold_law_matches_mpmath():
    """A fresh threshold noise (of its own scale) after each above: the answers up to and including
    an above form a segment independent of the rest, each an mpmath integral over its own threshold
    noise."""
    mp.mp.dps = 25
    q, t, b_t, b_r, b_q = [0.2, -0.4, 0.9], 0.1, 1.0, 3.0, 2.0
    law = sparse_vector_law(
        q,
        t,
        threshold_scale=b_t,
        query_scale=b_q,
        cutoff=2,
        resample_threshold=True,
        threshold_resample_scale=b_r,
    )
    for label, log_p in zip(law.outcomes, law.log_probabilities):
        aboves = [i for i, a in enumerate(label) if a == "T"]
        starts = [0, *(i + 1 for i in aboves)]
        ends = [*(i + 1 for i in aboves), len(q)]
        exact = mp.mpf(1)
        for start, end in zip(starts, ends):
            if start < end and label[start] != "-":
                exact *= mp_sparse_vector(
                    q[start:end], t, b_t if start == 0 else b_r, b_q, label[start:end]
                )
        assert log_p == pytest.approx(float(mp.log(exact)), abs=1e-9)


@pytest.mark.slow
def test_sparse_vector_values_match_mpmath():
    mp.mp.dps = 25
    q, edges = [0.4, -0.5], [-1.0, 0.0, 1.5]
    law = sparse_vector_law(
        q, 0.2, threshold_scale=1.0, query_scale=1.5, cutoff=1, output_value=True, value_bins=edges
    )
    assert len(law) == 1 + 4 + 4  # (F, F), (F, bin), (bin, -)
    for label, log_p in zip(law.outcomes, law.log_probabilities):
        assert log_p == pytest.approx(
            float(mp.log(mp_sparse_vector(q, 0.2, 1.0, 1.5, label, edges))), abs=1e-9
        )


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["laplace", "exponential", "gumbel"])
def test_noisy_max_laws_match_mpmath(noise):
    """Every index; the value and gap bins of the runner-up candidate 0 (the others' follow the same
    code)."""
    mp.mp.dps = 25
    q, b = [0.0, 2.5, -4.0], 1.0
    index = noisy_max_law(q, scale=b, noise=noise)
    for i, log_p in enumerate(index.log_probabilities):
        assert log_p == pytest.approx(float(mp.log(mp_noisy_max(q, b, noise, i))), abs=1e-9)
    edges = [-1.0, 1.0, 3.0]
    cuts = [-mp.inf, *map(mp.mpf, edges), mp.inf]
    value = noisy_max_law(q, scale=b, noise=noise, output="index_and_value", bins=edges)
    for k, log_p in enumerate(value.log_probabilities[:4]):
        exact = mp_noisy_max(q, b, noise, 0, cuts[k], cuts[k + 1])
        assert (
            (log_p == -np.inf)
            if exact == 0
            else log_p == pytest.approx(float(mp.log(exact)), abs=1e-9)
        )
    gaps = [0.5, 2.0]
    gap_cuts = [mp.mpf(0), *map(mp.mpf, gaps), mp.inf]
    gap = noisy_max_law(q, scale=b, noise=noise, output="index_and_gap", bins=gaps)
    assert gap.outcomes[:3].tolist() == [(0, 0), (0, 1), (0, 2)]
    for k, log_p in enumerate(gap.log_probabilities[:3]):
        exact = mp_noisy_max(q, b, noise, 0, gap=(gap_cuts[k], gap_cuts[k + 1]))
        assert log_p == pytest.approx(float(mp.log(exact)), abs=1e-9)


# --------------------------------------------------------------------------------------------------
# Closed forms


@pytest.mark.parametrize(
    "q, b", [([0.0, 1.0, 2.5, -3.0], 2.0), ([0.0, 40.0, 39.0], 0.7), ([5.0], 1.0)]
)
def test_gumbel_noisy_max_is_the_exponential_mechanism(q, b):
    softmax = np.exp(np.array(q) / b - np.logaddexp.reduce(np.array(q) / b))
    law = noisy_max_law(q, scale=b, noise="gumbel")
    np.testing.assert_allclose(law.log_probabilities, np.log(softmax), rtol=0, atol=1e-9)


def permute_and_flip_by_orders(scores, scale):
    """Permute-and-flip (McKenna & Sheldon 2020) averaged over every order of the candidates."""
    p = np.exp((np.array(scores) - max(scores)) / scale)
    out = np.zeros(len(scores))
    for order in itertools.permutations(range(len(scores))):
        alive = 1.0
        for r in order:
            out[r] += alive * p[r]
            alive *= 1 - p[r]
    return out / math.factorial(len(scores))


@pytest.mark.slow
def test_exponential_noisy_max_is_permute_and_flip():
    scores, eps = [0.0, 2.0, 1.0, 3.5, 3.0], 0.8
    law = noisy_max_law(scores, scale=2 / eps, noise="exponential")
    np.testing.assert_allclose(
        law.probabilities, permute_and_flip_by_orders(scores, 2 / eps), rtol=1e-9
    )
    gen = np.random.default_rng(7)
    flips = [permute_and_flip(scores, eps, rng=gen) for _ in range(20_000)]
    assert_frequencies_match(flips, law, 20_000)


@pytest.mark.parametrize("s0, s1", [(0.0, 0.0), (0.0, 1.5), (3.0, 0.0), (0.0, 30.0)])
def test_laplace_noisy_max_of_two_is_the_difference_of_two_laplaces(s0, s1):
    """Pr[0 wins] = Pr[L0 - L1 >= s1 - s0], with Pr[D > d] = e^{-d/b} (1 + d/(2b)) / 2 for d >=
    0."""
    b, d = 2.0, abs(s1 - s0)
    log_tail = -d / b + math.log1p(d / (2 * b)) - math.log(2)
    law = noisy_max_law([s0, s1], scale=b)
    loser = 0 if s1 >= s0 else 1
    assert law.log_probabilities[loser] == pytest.approx(log_tail, abs=1e-12)


def test_noisy_max_value_closed_form_equals_the_quadrature_summed_over_the_index():
    for noise in ("laplace", "exponential", "gumbel"):
        q, edges = [0.0, 1.0, -2.0, 0.5], np.linspace(-3.0, 6.0, 10)
        value = noisy_max_law(q, scale=1.3, noise=noise, output="value", bins=edges)
        joint = noisy_max_law(q, scale=1.3, noise=noise, output="index_and_value", bins=edges)
        summed = np.logaddexp.reduce(joint.log_probabilities.reshape(len(q), -1), axis=0)
        possible = np.isfinite(value.log_probabilities)
        np.testing.assert_array_equal(possible, np.isfinite(summed))
        np.testing.assert_allclose(value.log_probabilities[possible], summed[possible], atol=1e-9)


def test_sparse_vector_without_query_noise_is_the_threshold_mass_of_an_interval():
    """Alg. 5: q_i is above exactly when rho <= q_i - T, so a pattern is the Laplace mass of
    (max of the belows' q - T, min of the aboves' q - T]."""
    q, t, b_t = np.array([0.5, -1.0, 2.0, 0.0]), 0.3, 2.0
    law = sparse_vector_law(q, t, threshold_scale=b_t, query_scale=0.0, halt=False)
    for label, p in zip(law.outcomes, law.probabilities):
        up = np.array([a == "T" for a in label])
        low = (q[~up] - t).max() if (~up).any() else -np.inf
        high = (q[up] - t).min() if up.any() else np.inf
        exact = max(stats.laplace.cdf(high, scale=b_t) - stats.laplace.cdf(low, scale=b_t), 0.0)
        assert p == pytest.approx(exact, abs=1e-12)
    assert (law.probabilities > 0).sum() == len(q) + 1  # only the "threshold crossing" patterns


def test_sparse_vector_without_threshold_noise_has_independent_answers():
    q, t, b_q = np.array([0.5, -1.0, 2.0]), 0.3, 1.5
    law = sparse_vector_law(q, t, threshold_scale=0.0, query_scale=b_q, halt=False)
    up = stats.laplace.sf(t - q, scale=b_q)
    for label, p in zip(law.outcomes, law.probabilities):
        assert p == pytest.approx(
            np.prod([u if a == "T" else 1 - u for a, u in zip(label, up)]), rel=1e-12
        )
    deterministic = sparse_vector_law(q, t, threshold_scale=0.0, query_scale=0.0, cutoff=2)
    assert deterministic.outcomes[np.argmax(deterministic.probabilities)] == ("T", "F", "T")
    assert deterministic.probabilities.max() == 1.0


def test_log_matmul_recovers_the_sums_a_scaled_product_underflows():
    """Rows that peak at opposite ends: every scaled product is below e^-900, recomputed in log
    space."""
    from dpgames.privacy.exact_laws import _log_matmul

    gen = np.random.default_rng(12)
    k = np.arange(40.0)
    x = -25.0 * k + gen.normal(0.0, 1.0, (6, 40))
    y = -25.0 * k[::-1] + gen.normal(0.0, 1.0, (5, 40))
    y[0] = -np.inf  # an impossible pattern stays impossible
    expected = np.logaddexp.reduce(x[:, None, :] + y[None, :, :], axis=2)
    np.testing.assert_allclose(_log_matmul(x, y), expected, rtol=1e-13)
    assert expected[:, 1:].max() < -900 and np.isneginf(expected[:, 0]).all()


def test_far_apart_queries_keep_their_tiny_probabilities():
    """Queries 360 noise scales apart (threshold 0, unit scales): for |rho| < 180, ("T", "F") has
    chance (e^{-(180 + rho)} / 2) (e^{rho - 180} / 2) = e^-360 / 4 whatever rho, and |rho| >= 180
    adds a relative e^-180: the law gives ln(e^-360 / 4), though the two halves of its product peak
    360 scales apart."""
    law = sparse_vector_law([-180.0, 180.0], 0.0, threshold_scale=1.0, query_scale=1.0, halt=False)
    log_p = dict(zip(law.outcomes.tolist(), law.log_probabilities))
    assert log_p[("T", "F")] == pytest.approx(-360 - math.log(4), abs=1e-9)


def test_patterns_are_every_halting_sequence_in_order():
    for m, cutoff, halt in [(4, 1, True), (5, 2, True), (3, 1, False)]:
        law = sparse_vector_law(
            np.zeros(m), 0.0, threshold_scale=1.0, query_scale=1.0, cutoff=cutoff, halt=halt
        )
        expected = []
        for answers in itertools.product("FT-", repeat=m):  # "F" < "T" < "-" is the law's order
            stop = (
                [i for i, a in enumerate(answers) if a == "T"][cutoff - 1 : cutoff] if halt else []
            )
            rest = answers[stop[0] + 1 :] if stop else ()
            if all(a == "-" for a in rest) and "-" not in answers[: len(answers) - len(rest)]:
                expected.append(answers)
        assert law.outcomes.tolist() == expected
        assert all(isinstance(label, tuple) for label in law.outcomes)
        assert law.probabilities.sum() == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------------------------------
# Monte Carlo of the mechanisms as written (chi-square, fixed seeds)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm, c", [(1, 2), (2, 2), (3, 1), (4, 2), (6, 1)])
def test_sparse_vector_variants_sample_their_laws(algorithm, c):
    q = np.array([0.5, -1.0, 1.5, 0.0])
    law = lyu(algorithm, c)(q)
    knobs = {
        1: (2.0, 4.0 * c, True, False),
        2: (2.0 * c, 4.0 * c, True, True),
        3: (2.0, 2.0 * c, True, False),
        4: (4.0, 4 / 3, True, False),
        6: (2.0, 2.0, False, False),
    }[algorithm]
    b_t, b_q, halt, resample = knobs
    edges = np.linspace(-4.0, 4.0, 5) if algorithm == 3 else None
    n = 200_000
    draws = sample_sparse_vector(
        q,
        0.0,
        b_t,
        b_q,
        n,
        np.random.default_rng(algorithm),
        cutoff=c,
        halt=halt,
        resample=resample,
        edges=edges,
    )
    assert_frequencies_match(draws, law, n)


def test_noisy_max_gap_and_value_sample_their_laws():
    q, b, n = np.array([0.0, 1.0, 0.5]), 1.5, 200_000
    gen = np.random.default_rng(11)
    noisy = q + gen.laplace(0.0, b, (n, q.size))
    top = np.sort(noisy, axis=1)
    gaps = [0.25, 1.0, 2.5]
    gap_law = noisy_max_law(q, scale=b, output="index_and_gap", bins=gaps)
    draws = list(
        zip(
            np.argmax(noisy, axis=1).tolist(),
            np.searchsorted(gaps, top[:, -1] - top[:, -2], side="right").tolist(),
        )
    )
    assert_frequencies_match(draws, gap_law, n)
    edges = np.linspace(-2.0, 4.0, 7)
    value_law = noisy_max_law(q, scale=b, output="value", bins=edges)
    assert_frequencies_match(
        np.searchsorted(edges, top[:, -1], side="right").tolist(), value_law, n
    )


# --------------------------------------------------------------------------------------------------
# Privacy: the theorems, exactly


@pytest.mark.parametrize("algorithm, c", [(1, 1), (1, 2), (2, 2)])
def test_lyu_algorithms_1_and_2_are_eps_dp(algorithm, c):
    pairs = neighbours(5, 20, np.random.default_rng(c))
    assert audit_finite(lyu(algorithm, c), pairs).epsilon <= EPS + 1e-9


@pytest.mark.parametrize("c", [1, 2])
def test_lee_clifton_exceeds_eps_within_its_bound(c):
    """Alg. 4: ((1 + 6c)/4) eps-DP, and not eps-DP (many belows moving up, then an above moving
    down)."""
    m = 6
    built = (np.zeros(m), np.r_[np.ones(m - 1), -1.0])
    loss = audit_finite(lyu(4, c), [built]).epsilon
    assert loss > 1.5 * EPS
    pairs = [built, *neighbours(m, 10, np.random.default_rng(4))]
    assert audit_finite(lyu(4, c), pairs).epsilon <= (1 + 6 * c) / 4 * EPS + 1e-9


def test_no_query_noise_gives_infinite_loss():
    """Alg. 5: ("T", "F") is impossible on (0, 1) and possible on its neighbour (1, 0)."""
    assert audit_finite(lyu(5), [(np.array([0.0, 1.0]), np.array([1.0, 0.0]))]).epsilon == math.inf


@pytest.mark.parametrize("algorithm", [3, 6])
def test_broken_variants_lose_more_with_every_query(algorithm):
    """Alg. 3 (the value released) and Alg. 6 (no halt): the loss grows without bound with the
    queries."""
    losses = []
    for k in (1, 2, 3, 4):
        x, x2 = np.zeros(2 * k), np.r_[np.ones(k), -np.ones(k)]
        losses.append(
            audit_finite(lyu(algorithm), [(x, x2), (x, np.r_[np.ones(2 * k - 1), -1.0])]).epsilon
        )
    assert np.all(np.diff(losses) > 0.5 * EPS) and losses[-1] > 3 * EPS


def test_report_noisy_max_claim_3_9():
    """Laplace noise of scale 2/eps: eps-DP for queries of sensitivity 1; scale 1/eps: eps-DP when
    the queries move in one direction (Dwork & Roth Claim 3.9, counting queries), up to 2 eps
    otherwise."""
    rng = np.random.default_rng(9)
    general = [(x, x + rng.uniform(-1.0, 1.0, 4)) for x in rng.normal(0.0, 2.0, (20, 4))]
    general.append((np.zeros(4), np.array([1.0, -1.0, -1.0, -1.0])))
    assert audit_finite(lambda x: noisy_max_law(x, scale=2 / EPS), general).epsilon <= EPS + 1e-9
    monotone = [(x, x + rng.uniform(0.0, 1.0, 4)) for x in rng.normal(0.0, 2.0, (20, 4))]
    monotone.append((np.zeros(4), np.array([1.0, 1.0, 0.0, 1.0])))
    tight = lambda x: noisy_max_law(x, scale=1 / EPS)  # noqa: E731
    assert audit_finite(tight, monotone).epsilon <= EPS + 1e-9
    loss = audit_finite(tight, general).epsilon
    assert EPS + 0.1 < loss <= 2 * EPS + 1e-9


def test_noisy_max_with_gap_is_eps_dp_and_the_value_is_not():
    """Ding et al. 2019: index and gap together stay eps-DP; Ding et al. 2018 Alg. 7: the noisy
    maximum is not (all five queries one higher moves its lower tail by e^{5 eps / 2})."""
    rng = np.random.default_rng(10)
    pairs = [(x, x + rng.uniform(-1.0, 1.0, 3)) for x in rng.normal(0.0, 1.0, (10, 3))]
    gap = lambda x: noisy_max_law(  # noqa: E731
        x, scale=2 / EPS, output="index_and_gap", bins=[0.5, 1.0, 2.0, 4.0]
    )
    assert audit_finite(gap, pairs).epsilon <= EPS + 1e-9
    value = lambda x: noisy_max_law(  # noqa: E731
        x, scale=2 / EPS, output="value", bins=np.linspace(-10.0, 10.0, 11)
    )
    loss = audit_finite(value, [(np.zeros(5), np.ones(5))]).epsilon
    assert 2 * EPS < loss <= 2.5 * EPS + 1e-9


# --------------------------------------------------------------------------------------------------
# binned


def test_binned_sampler_draws_the_bins_of_its_sampler():
    edges = np.array([-1.0, 0.0, 0.5, 2.0])
    draw = binned(lambda x, size, rng: x + rng.laplace(0.0, 1.0, size), edges)
    labels = draw(0.3, 100_000, np.random.default_rng(3))
    assert labels.dtype.kind == "i" and labels.min() >= 0 and labels.max() <= edges.size
    cdf = np.r_[0.0, stats.laplace.cdf(edges - 0.3), 1.0]
    expected = np.diff(cdf) * 100_000
    assert stats.chisquare(np.bincount(labels, minlength=edges.size + 1), expected).pvalue > 1e-3
    vector = binned(lambda x, size, rng: rng.normal(x, 1.0, (size, 3)), edges)(
        0.0, 5, np.random.default_rng(0)
    )
    assert vector.shape == (5, 3)


def test_binned_refuses_what_falls_in_no_bin():
    with pytest.raises(ValidationError, match="sampler"):
        binned(3.0, [0.0])
    with pytest.raises(ValidationError, match="edges"):
        binned(lambda x, size, rng: np.zeros(size), [1.0, 0.0])
    with pytest.raises(ValidationError, match="NaN"):
        binned(lambda x, size, rng: np.full(size, np.nan), [0.0])(0, 3, None)
    with pytest.raises(ValidationError, match="numbers"):
        binned(lambda x, size, rng: np.array(["a"] * size), [0.0])(0, 3, None)


# --------------------------------------------------------------------------------------------------
# Refusals and speed


def test_too_many_patterns_are_refused_with_their_count():
    with pytest.raises(ValidationError, match="131,072 answer patterns"):
        sparse_vector_law(np.zeros(17), 0.0, threshold_scale=1.0, query_scale=1.0, halt=False)
    law = sparse_vector_law(np.zeros(16), 0.0, threshold_scale=1.0, query_scale=1.0, halt=False)
    assert len(law) == MAX_OUTCOMES
    assert law.probabilities.sum() == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(output_value=True), "value_bins"),
        (dict(value_bins=[0.0]), "value_bins"),
        (dict(threshold_resample_scale=1.0), "threshold_resample_scale"),
        (dict(cutoff=0), "cutoff"),
        (dict(halt=1), "halt"),
        (dict(query_scale=-1.0), "query_scale"),
        (dict(noise="gaussian"), "noise"),
    ],
)
def test_sparse_vector_bad_arguments(kwargs, field):
    args = dict(threshold_scale=1.0, query_scale=1.0) | kwargs
    with pytest.raises(ValidationError) as caught:
        sparse_vector_law([0.0, 1.0], 0.0, **args)
    assert caught.value.field == field


# --------------------------------------------------------------------------------------------------
# Hypothesis: a clean ValidationError or a law whose invariants hold


def check_law(call):
    try:
        law = call()
    except ValidationError:
        return
    p = law.probabilities
    assert np.all((p >= 0) & (p <= 1))
    assert abs(np.exp(np.logaddexp.reduce(law.log_probabilities)) - 1.0) <= 1e-9


numbers = st.one_of(st.floats(-50, 50), st.sampled_from([0.0, 1e-300, 1e300, np.nan, np.inf, -1.0]))
scales = st.one_of(st.floats(0, 20), st.sampled_from([0.0, 1e-12, 1e-300, 1e12, -1.0, np.nan]))
query_vectors = st.one_of(
    st.lists(st.floats(-20, 20), min_size=0, max_size=6),
    st.sampled_from([[[0.0, 1.0]], "abc", None, [np.nan], [1e308, -1e308]]),
)
edge_lists = st.one_of(
    st.none(),
    st.lists(st.floats(-10, 10), min_size=0, max_size=4),
    st.sampled_from([[1.0, 0.0], [[0.0]], "x", [np.inf]]),
)


@settings(max_examples=60, deadline=None)
@given(
    q=query_vectors,
    t=numbers,
    b_t=scales,
    b_q=scales,
    cutoff=st.integers(-1, 4),
    halt=st.booleans(),
    resample=st.booleans(),
    bins=edge_lists,
)
def test_sparse_vector_law_is_a_law_or_refused(q, t, b_t, b_q, cutoff, halt, resample, bins):
    check_law(
        lambda: sparse_vector_law(
            q,
            t,
            threshold_scale=b_t,
            query_scale=b_q,
            cutoff=cutoff,
            halt=halt,
            resample_threshold=resample,
            output_value=bins is not None,
            value_bins=bins,
        )
    )


@settings(max_examples=60, deadline=None)
@given(
    q=query_vectors,
    b=scales,
    noise=st.sampled_from(["laplace", "exponential", "gumbel", "normal"]),
    output=st.sampled_from(["index", "index_and_gap", "index_and_value", "value", "max"]),
    bins=edge_lists,
)
def test_noisy_max_law_is_a_law_or_refused(q, b, noise, output, bins):
    check_law(lambda: noisy_max_law(q, scale=b, noise=noise, output=output, bins=bins))


@settings(max_examples=40, deadline=None)
@given(edges=edge_lists, values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=5))
def test_binned_gives_bins_or_refuses(edges, values):
    try:
        draw = binned(lambda x, size, rng: np.array(values), edges)
    except ValidationError:
        return
    labels = draw(None, len(values), None)
    cuts = np.asarray(edges, dtype=float)
    assert labels.tolist() == [int((cuts <= v).sum()) for v in values]
