"""The testers' benchmark suite (dpgames.privacy.testbed): every sampler against an independent
oracle.

Oracles: exact laws written here from the papers (closed-form pmfs and CDFs, quadrature over the
noise), plain query-by-query loops following the papers' pseudocode (compared with the vectorised
samplers by two-sample tests at fixed seeds), published MurmurHash3 test vectors, and brute-force
enumeration of RAPPOR's output law for the derived privacy losses.
"""

import dataclasses
import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, stats

from dpgames.privacy import TESTBED, BenchmarkMechanism, benchmark_mechanism
from dpgames.privacy.testbed import ABOVE, BELOW, HALTED, bloom_filter
from dpgames.validation import ValidationError

ALPHA = 1e-3  # every test runs at a fixed seed: a p-value below this is a real discrepancy
NAMES = [entry.name for entry in TESTBED]


def entry(name: str) -> BenchmarkMechanism:
    return benchmark_mechanism(name)


def typical_input(e: BenchmarkMechanism) -> np.ndarray:
    gen = np.random.default_rng(len(e.name))
    x = gen.uniform(e.low, e.high, e.length)
    return np.round(x) if e.integer_inputs else x


def chi2_two_sample(a_rows: np.ndarray, b_rows: np.ndarray, min_count: int = 10) -> float:
    """p-value of a chi-square test that two samples of rows (outputs) share one law; rare rows
    pooled."""
    keys_a = [r.tobytes() for r in np.ascontiguousarray(a_rows)]
    keys_b = [r.tobytes() for r in np.ascontiguousarray(b_rows)]
    labels = sorted(set(keys_a) | set(keys_b))
    ca = np.array([keys_a.count(k) for k in labels])
    cb = np.array([keys_b.count(k) for k in labels])
    big = (ca + cb) >= min_count
    table = np.array([np.append(ca[big], ca[~big].sum()), np.append(cb[big], cb[~big].sum())])
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return 1.0
    return stats.chi2_contingency(table)[1]


def chi2_exact(samples: np.ndarray, probabilities: dict) -> float:
    """p-value of a chi-square goodness-of-fit test of integer samples against exact
    probabilities."""
    outcomes = sorted(probabilities)
    observed = np.array([np.sum(samples == o) for o in outcomes])
    assert observed.sum() == samples.size, "a sample fell outside the exact law's support"
    expected = np.array([probabilities[o] for o in outcomes]) * samples.size
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum())[1]


# ------------------------------------------------------------------------------ the suite as a
# whole


def test_names_unique_and_lookup():
    assert len(set(NAMES)) == len(NAMES)
    for e in TESTBED:
        assert benchmark_mechanism(e.name) is e
    with pytest.raises(ValidationError) as info:
        benchmark_mechanism("svt7")
    assert info.value.field == "name" and "svt3" in str(info.value)


def test_entries_state_their_claims():
    for e in TESTBED:
        assert e.epsilon == 0.1
        assert e.relation in ("one-entry", "all-entries", "add-remove")
        assert 1 <= e.length <= 10 and e.low < e.high
        assert e.citation
        if e.true_epsilon is not None:  # a derived figure must agree with the literature's verdict
            assert (e.true_epsilon <= e.epsilon + 1e-12) == e.private, e.name
        if e.published_lower_bound is not None and e.true_epsilon is not None:
            assert e.published_lower_bound <= e.true_epsilon, e.name  # a certified lower bound
    assert sum(e.violation for e in TESTBED) == 11
    assert benchmark_mechanism("svt1").private and not benchmark_mechanism("svt3").private


@pytest.mark.parametrize("name", NAMES)
def test_shapes_codes_and_seeds(name):
    e = entry(name)
    x = typical_input(e)
    out = e.sampler(x, 500, 7)
    assert out.shape[0] == 500 and out.ndim in (1, 2)
    assert np.isfinite(out).all()  # never NaN, special outcomes are codes
    np.testing.assert_array_equal(out, e.sampler(x, 500, 7))
    assert not np.array_equal(out, e.sampler(x, 500, 8))
    gen = np.random.default_rng(3)
    first = e.sampler(x, 10, gen)
    assert not np.array_equal(first, e.sampler(x, 10, gen))  # a Generator is consumed, not reseeded
    if out.dtype.kind in "iu":
        assert out.dtype in (np.int8, np.int64)
    single = e.sampler(list(x), 1, None)
    assert single.shape[1:] == out.shape[1:]
    required = [p for p in inspect.signature(e.sampler).parameters.values() if p.default is p.empty]
    assert len(required) == 3  # audits tell a sampler (x, size, rng) by its arity


# ------------------------------------------------------------------------------ Laplace, geometric


def test_laplace_and_noisy_hist_exact_laws():
    lap = entry("laplace").sampler([3.5], 20_000, 0)
    assert stats.kstest(lap, stats.laplace(3.5, 10).cdf).pvalue > ALPHA
    x = np.array([0.0, 4.0, 10.0, 2.0, 7.0])
    for name, scale in (("noisy_hist", 10.0), ("noisy_hist_wrong_scale", 0.1)):
        out = entry(name).sampler(x, 20_000, 1)
        for j in range(5):
            assert stats.kstest(out[:, j], stats.laplace(x[j], scale).cdf).pvalue > ALPHA
        assert abs(np.corrcoef(out[:, 0], out[:, 1])[0, 1]) < 0.03
    many = entry("laplace_parallel").sampler([-2.0], 20_000, 2)
    assert many.shape == (20_000, 20)
    assert stats.kstest(many[:, 13], stats.laplace(-2.0, 200).cdf).pvalue > ALPHA
    assert abs(np.corrcoef(many[:, 0], many[:, 19])[0, 1]) < 0.03


def test_laplace_losses_are_the_derived_ones():
    """sup_y ln p(y - x) / p(y - x') on a fine grid: |x - x'| / b (Laplace, broken histogram,
    parallel)."""
    y = np.linspace(-300, 300, 60_001)
    assert np.max(stats.laplace.logpdf(y, 0, 10) - stats.laplace.logpdf(y, 1, 10)) == pytest.approx(
        0.1
    )
    assert entry("laplace").true_epsilon == pytest.approx(0.1)
    y = np.linspace(-20, 20, 40_001)
    loss = np.max(stats.laplace.logpdf(y, 0, 0.1) - stats.laplace.logpdf(y, 1, 0.1))
    assert loss == pytest.approx(entry("noisy_hist_wrong_scale").true_epsilon)
    # 20 copies at b = 200: the loss adds up over the copies, largest when all sit below both inputs
    below = 20 * (stats.laplace.logpdf(-5.0, 0, 200) - stats.laplace.logpdf(-5.0, 1, 200))
    assert below == pytest.approx(entry("laplace_parallel").true_epsilon)


def geometric_pmf(c: int, n: int, eps: float) -> dict:
    """Clamped two-sided geometric, written out (Ghosh, Roughgarden & Sundararajan 2009)."""
    a = math.exp(-eps)
    law = {z: (1 - a) / (1 + a) * a ** abs(z - c) for z in range(1, n)}
    law[0] = a**c / (1 + a)
    law[n] = a ** (n - c) / (1 + a)
    return law


@pytest.mark.parametrize("c", [0, 2, 5])
def test_truncated_geometric_exact_law(c):
    law = geometric_pmf(c, 5, 0.1)
    assert sum(law.values()) == pytest.approx(1.0)
    out = entry("truncated_geometric").sampler([c], 40_000, c)
    assert out.dtype == np.int64 and out.min() >= 0 and out.max() <= 5
    assert chi2_exact(out, law) > ALPHA


def test_truncated_geometric_loss_is_eps():
    losses = [
        abs(math.log(geometric_pmf(c, 5, 0.1)[z] / geometric_pmf(c + 1, 5, 0.1)[z]))
        for c in range(5)
        for z in range(6)
    ]
    assert max(losses) == pytest.approx(entry("truncated_geometric").true_epsilon)
    with pytest.raises(ValidationError, match="count in 0..5"):
        entry("truncated_geometric").sampler([6], 3, 0)
    with pytest.raises(ValidationError, match="whole numbers"):
        entry("truncated_geometric").sampler([2.5], 3, 0)


def test_prefix_sums_difference_back_to_laplace():
    x = np.linspace(-9, 9, 10)
    for name in ("prefix_sum", "prefix_sum_all_entries"):
        out = entry(name).sampler(x, 20_000, 4)
        noisy = np.diff(out, axis=1, prepend=0.0)
        for j in (0, 5, 9):
            assert stats.kstest(noisy[:, j], stats.laplace(x[j], 10).cdf).pvalue > ALPHA
    # an invertible linear map of x + Lap(10): loss ||x - x'||_1 / 10 (one entry: 0.1; all entries:
    # 1.0)
    assert entry("prefix_sum").true_epsilon == pytest.approx(1 / 10)
    assert entry("prefix_sum_all_entries").true_epsilon == pytest.approx(10 / 10)


# ------------------------------------------------------------------------------ report noisy max

NOISE = {"laplace": stats.laplace(0, 20), "exponential": stats.expon(0, 20)}


def argmax_law(x: np.ndarray, noise) -> dict:
    """P(argmax = i) = int f(t - x_i) prod_{j != i} F(t - x_j) dt, by quadrature."""
    law = {}
    for i in range(x.size):
        others = np.delete(x, i)

        def density(t, i=i, others=others):
            return noise.pdf(t - x[i]) * np.prod(noise.cdf(t - others))

        law[i] = integrate.quad(density, x.min() - 400, x.max() + 400, points=list(x), limit=400)[0]
    return law


@pytest.mark.parametrize("noise", ["laplace", "exponential"])
def test_noisy_max_index_exact_law(noise):
    x = np.array([1.0, -3.0, 8.0, 8.0, 0.0])
    law = argmax_law(x, NOISE[noise])
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-6)
    out = entry(f"noisy_max_{noise}_index").sampler(x, 40_000, 5)
    assert chi2_exact(out, law) > ALPHA


@pytest.mark.parametrize("noise", ["laplace", "exponential"])
def test_noisy_max_value_exact_cdf(noise):
    x = np.array([1.0, -3.0, 8.0, 2.0, 0.0])
    out = entry(f"noisy_max_{noise}_value").sampler(x, 20_000, 6)
    cdf = lambda m: np.prod(NOISE[noise].cdf(np.subtract.outer(m, x)), axis=-1)  # noqa: E731
    assert stats.kstest(out, cdf).pvalue > ALPHA


def log_max_density(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """ln of the density of max_i (x_i + Lap(20)), in log space."""
    logpdf = stats.laplace.logpdf(np.subtract.outer(m, x), 0, 20)
    logcdf = stats.laplace.logcdf(np.subtract.outer(m, x), 0, 20)
    return np.logaddexp.reduce(logpdf + logcdf.sum(axis=1, keepdims=True) - logcdf, axis=1)


def test_noisy_max_laplace_value_loss_is_five_halves_eps():
    m = np.linspace(-400, 400, 8001)
    zeros = np.zeros(5)
    loss = log_max_density(m, zeros) - log_max_density(m, zeros + 1)
    assert loss.max() == pytest.approx(entry("noisy_max_laplace_value").true_epsilon, abs=1e-9)
    gen = np.random.default_rng(9)
    for _ in range(20):  # no pair of the relation does better
        a = gen.uniform(-10, 9, 5)
        b = a + gen.uniform(-1, 1, 5)
        assert np.max(np.abs(log_max_density(m, a) - log_max_density(m, b))) <= 0.25 + 1e-9


def test_noisy_max_exponential_value_support_moves():
    """max_i (x_i + Exp) >= max_i x_i: the output M < 2 has probability 0 under x' = 2 and
    (1 - e^{-1/20})^5 > 0 under x = 1 (all entries): the loss is infinite."""
    s = entry("noisy_max_exponential_value").sampler(np.full(5, 2.0), 100_000, 10)
    assert s.min() >= 2.0
    assert stats.expon(0, 20).cdf(1.0) ** 5 > 0
    assert entry("noisy_max_exponential_value").true_epsilon == math.inf


# ------------------------------------------------------------------------------ sparse vector


def svt_loop(
    x, gen, *, threshold, threshold_scale, query_scale, cutoff, redraw=False, release=False
):
    """One run of Lyu, Su & Li's pseudocode, query by query (their Fig. 1)."""
    rho = gen.laplace(0, threshold_scale)
    count, codes, values = 0, [], []
    for q in x:
        if cutoff is not None and count >= cutoff:
            codes.append(HALTED)
            values.append(0.0)
            continue
        noisy = q + (gen.laplace(0, query_scale) if query_scale > 0 else 0.0)
        if noisy >= threshold + rho:
            codes.append(ABOVE)
            values.append(noisy)
            count += 1
            if redraw:
                rho = gen.laplace(0, threshold_scale)
        else:
            codes.append(BELOW)
            values.append(0.0)
    return codes + values if release else codes


#: The papers' parameters at eps = 0.1, written here from Lyu et al.'s Fig. 1 (c = 1, T = 1; Alg. 1
#: T = 0.5).
LYU = {
    "svt1": dict(threshold=0.5, threshold_scale=1 / 0.05, query_scale=2 / 0.05, cutoff=1),
    "svt2": dict(
        threshold=1.0, threshold_scale=1 / 0.05, query_scale=2 / 0.05, cutoff=1, redraw=True
    ),
    "svt3": dict(
        threshold=1.0, threshold_scale=1 / 0.05, query_scale=1 / 0.05, cutoff=1, release=True
    ),
    "svt4": dict(threshold=1.0, threshold_scale=1 / 0.025, query_scale=1 / 0.075, cutoff=1),
    "svt5": dict(threshold=1.0, threshold_scale=1 / 0.05, query_scale=0.0, cutoff=None),
    "svt6": dict(threshold=1.0, threshold_scale=1 / 0.05, query_scale=1 / 0.05, cutoff=None),
}
SVT_INPUTS = [np.array([1.0] * 5 + [-1.0] * 5), np.array([10.0, -10, 3, 3, 0, 0, 5, -5, 2, 8])]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LYU))
@pytest.mark.parametrize("which", [0, 1])
def test_sparse_vector_matches_the_papers_loop(name, which):
    x = SVT_INPUTS[which]
    gen = np.random.default_rng(11)
    loop = np.array([svt_loop(x, gen, **LYU[name]) for _ in range(3000)])
    fast = entry(name).sampler(x, 30_000, 12)
    assert fast.shape[1] == loop.shape[1]
    codes_loop, codes_fast = loop[:, :10].astype(np.int8), fast[:, :10].astype(np.int8)
    assert chi2_two_sample(codes_loop, codes_fast) > ALPHA
    if LYU[name].get("release"):
        released = fast[:, 10:][codes_fast == ABOVE]
        assert stats.ks_2samp(loop[:, 10:][codes_loop == ABOVE], released).pvalue > ALPHA
        assert np.all(fast[:, 10:][codes_fast != ABOVE] == 0.0)


def test_sparse_vector_redraw_with_two_answers():
    """Alg. 2's fresh threshold after each "above" only matters for c >= 2: check it there."""
    from dpgames.privacy.testbed import _SparseVector

    knobs = dict(threshold=1.0, threshold_scale=40.0, query_scale=80.0, cutoff=2)
    x = SVT_INPUTS[1]
    gen = np.random.default_rng(13)
    loop = np.array([svt_loop(x, gen, redraw=True, **knobs) for _ in range(3000)], dtype=np.int8)
    fast = _SparseVector(1.0, 40.0, 80.0, 2, redraw=True)(x, 30_000, 14)
    assert chi2_two_sample(loop, fast) > ALPHA
    assert np.all((fast == ABOVE).sum(axis=1) <= 2)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["svt1", "svt4"])
def test_sparse_vector_first_above_exact_law(name):
    """c = 1: P(first "above" at k) = int p_rho(r) prod_{j<k} F(T + r - x_j) (1 - F(T + r - x_k))
    dr."""
    knobs = LYU[name]
    x = SVT_INPUTS[1]
    rho, nu = stats.laplace(0, knobs["threshold_scale"]), stats.laplace(0, knobs["query_scale"])
    t = knobs["threshold"]

    def density(r, k):
        below = np.prod(nu.cdf(t + r - x[:k]))
        return rho.pdf(r) * below * (nu.sf(t + r - x[k]) if k < x.size else 1.0)

    kinks = sorted({0.0, *(x - t)})  # where rho's density or a query's CDF bends
    law = {
        k: integrate.quad(density, -1500, 1500, args=(k,), points=kinks, limit=500)[0]
        for k in range(11)
    }
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-7)
    out = entry(name).sampler(x, 40_000, 15)
    is_above = out == ABOVE
    first = np.where(is_above.any(axis=1), is_above.argmax(axis=1), 10)
    assert chi2_exact(first, law) > ALPHA
    after = np.arange(10) > first[:, None]  # c = 1: everything after the "above" is halted
    assert np.all(out[after] == HALTED) and np.all(out[~after & ~is_above] == BELOW)


def test_svt5_answers_split_only_when_queries_differ():
    """No query noise: on x = (1,...,1) the answers agree surely; on x' = (2,...,2,0,...,0) they
    split exactly when -1 < rho <= 1, probability 1 - e^{-1/20}: an output of probability 0 under
    x."""
    sampler = entry("svt5").sampler
    same = sampler(np.ones(10), 50_000, 16)
    assert np.all(same == same[:, :1])
    split = sampler(np.array([2.0] * 5 + [0.0] * 5), 50_000, 17)
    mixed = np.sum(np.any(split != split[:, :1], axis=1))
    assert stats.binomtest(int(mixed), 50_000, 1 - math.exp(-1 / 20)).pvalue > ALPHA
    assert entry("svt5").true_epsilon == math.inf


def test_svt34_parallel_is_svt3_and_svt4_side_by_side():
    x = SVT_INPUTS[1]
    out = entry("svt34_parallel").sampler(x, 30_000, 18)
    assert out.shape == (30_000, 30)
    gen = np.random.default_rng(19)
    three = dict(LYU["svt3"], query_scale=2 / 0.05, cutoff=2)  # c = 2: query noise Lap(c / eps2)
    four = dict(LYU["svt4"], cutoff=2)
    loop3 = np.array([svt_loop(x, gen, **three) for _ in range(3000)])
    loop4 = np.array([svt_loop(x, gen, **four) for _ in range(3000)], dtype=np.int8)
    assert chi2_two_sample(loop3[:, :10].astype(np.int8), out[:, :10].astype(np.int8)) > ALPHA
    assert chi2_two_sample(loop4, out[:, 20:].astype(np.int8)) > ALPHA
    assert (
        stats.ks_2samp(
            loop3[:, 10:][loop3[:, :10] == ABOVE], out[:, 10:20][out[:, :10] == ABOVE]
        ).pvalue
        > ALPHA
    )


def numerical_svt_loop(x, gen, eps=0.1, t=1.0, c=2):
    """Wang et al.'s numerical sparse vector, query by query."""
    rho = gen.laplace(0, 3 / eps)
    count, codes, values = 0, [], []
    for q in x:
        if count >= c:
            codes.append(HALTED)
            values.append(0.0)
        elif q + gen.laplace(0, 6 * c / eps) >= t + rho:
            codes.append(ABOVE)
            values.append(q + gen.laplace(0, 3 * c / eps))
            count += 1
        else:
            codes.append(BELOW)
            values.append(0.0)
    return codes + values


def test_numerical_sparse_vector_matches_the_papers_loop():
    x = SVT_INPUTS[1]
    gen = np.random.default_rng(20)
    loop = np.array([numerical_svt_loop(x, gen) for _ in range(3000)])
    fast = entry("numerical_svt").sampler(x, 30_000, 21)
    assert chi2_two_sample(loop[:, :10].astype(np.int8), fast[:, :10].astype(np.int8)) > ALPHA
    assert (
        stats.ks_2samp(
            loop[:, 10:][loop[:, :10] == ABOVE], fast[:, 10:][fast[:, :10] == ABOVE]
        ).pvalue
        > ALPHA
    )


# ------------------------------------------------------------------------------ RAPPOR


def test_murmur3_published_vectors():
    from dpgames.privacy.testbed import _murmur3_32

    vectors = [
        (b"", 0, 0),
        (b"", 1, 0x514E28B7),
        (b"", 0xFFFFFFFF, 0x81F16F39),
        (b"\0\0\0\0", 0, 0x2362F9DE),
        (b"Hello, world!", 0x9747B28C, 0x24884CBA),
        (b"aaaa", 0x9747B28C, 0x5A97808A),
        (b"The quick brown fox jumps over the lazy dog", 0x9747B28C, 0x2FA826CD),
    ]
    for data, seed, expected in vectors:
        assert _murmur3_32(data, seed) == expected


def test_bloom_filters_are_dp_sniper_s():
    mmh3 = pytest.importorskip("mmh3")
    for v in range(-10, 11):
        expected = np.zeros(20, dtype=bool)
        expected[[mmh3.hash(str(v), seed=i) % 20 for i in range(4)]] = True
        np.testing.assert_array_equal(bloom_filter(v), expected)


RAPPOR = {"rappor": (0.75, 0.45, 0.55, False), "one_time_rappor": (0.95, 0.45, 0.55, True)}


def bit_probabilities(f, p, q, one_time):
    """P(report bit = 1 | Bloom bit set), P(... | unset), from the paper's steps 2-3."""
    set_, unset = 1 - f / 2, f / 2
    if one_time:
        return set_, unset
    return set_ * q + (1 - set_) * p, unset * q + (1 - unset) * p


@pytest.mark.parametrize("name", sorted(RAPPOR))
def test_rappor_bits_follow_the_paper(name):
    hi, lo = bit_probabilities(*RAPPOR[name])
    out = entry(name).sampler([3], 40_000, 22)
    bits = bloom_filter(3)
    for j in range(20):
        expected = hi if bits[j] else lo
        assert stats.binomtest(int(out[:, j].sum()), 40_000, expected).pvalue > ALPHA
    assert (
        abs(np.corrcoef(out[:, np.flatnonzero(bits)[0]], out[:, np.flatnonzero(~bits)[0]])[0, 1])
        < 0.03
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RAPPOR))
def test_rappor_loss_by_enumeration(name):
    """Enumerate all 2^20 reports of values 0 and 1: max ln P_0(o) / P_1(o) is the Hamming distance
    of the two filters times the one-bit loss; the entry's figure is the largest over consecutive
    values."""
    hi, lo = bit_probabilities(*RAPPOR[name])
    reports = ((np.arange(2**20)[:, None] >> np.arange(20)) & 1).astype(bool)

    def log_law(v):
        chance = np.where(bloom_filter(v), hi, lo)
        return np.where(reports, np.log(chance), np.log1p(-chance)).sum(axis=1)

    loss = np.max(log_law(0) - log_law(1))
    one_bit = math.log(hi / lo)
    assert loss == pytest.approx(np.sum(bloom_filter(0) != bloom_filter(1)) * one_bit)
    widest = max(np.sum(bloom_filter(v) != bloom_filter(v + 1)) for v in range(-10, 10))
    assert widest == 8  # some consecutive values have disjoint filters
    # the one-entry patterns of neighbouring_inputs are [1] vs [0] and [1] vs [2]: 6 and 5 bits
    # apart
    assert [np.sum(bloom_filter(1) != bloom_filter(v)) for v in (0, 2)] == [6, 5]
    assert entry(name).true_epsilon == pytest.approx(widest * one_bit)
    with pytest.raises(ValidationError, match="whole numbers"):
        entry(name).sampler([0.5], 3, 0)


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_refused_by_field(name):
    e = entry(name)
    x = typical_input(e)
    for bad_x in ([], [[1.0, 2.0]], ["a"] * e.length, [math.nan] * e.length, None):
        with pytest.raises(ValidationError) as info:
            e.sampler(bad_x, 3, 0)
        assert info.value.field == "x"
    for bad_size in (0, -1, 2.0, True, "3"):
        with pytest.raises(ValidationError) as info:
            e.sampler(x, bad_size, 0)
        assert info.value.field == "size"
    with pytest.raises(ValidationError) as info:
        e.sampler(x, 10**12, 0)
    assert info.value.field == "size" and "batches" in str(info.value)
    with pytest.raises(ValidationError) as info:
        e.sampler(x, 3, -1)
    assert info.value.field == "rng"


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(NAMES),
    x=st.lists(
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-20, 20)), max_size=12
    ),
    size=st.one_of(st.integers(-3, 40), st.floats(allow_nan=True)),
)
def test_any_input_gives_a_clean_error_or_valid_outputs(name, x, size):
    e = entry(name)
    try:
        out = e.sampler(x, size, 0)
    except ValidationError:
        return
    assert out.shape[0] == size and np.isfinite(out).all()
    reference = e.sampler(typical_input(e), 1, 0) if len(x) == e.length else None
    if reference is not None:
        assert out.shape[1:] == reference.shape[1:]


def test_entries_refuse_bad_fields():
    base = entry("laplace")
    for field, value in (
        ("name", ""),
        ("sampler", 3),
        ("epsilon", 0),
        ("private", "yes"),
        ("relation", "one"),
        ("length", 0),
        ("low", 10),
        ("integer_inputs", None),
        ("citation", None),
        ("true_epsilon", -1.0),
        ("published_lower_bound", math.inf),
    ):
        with pytest.raises(ValidationError) as info:
            dataclasses.replace(base, **{field: value})
        assert info.value.field == ("high" if field == "low" else field)


@settings(max_examples=80, deadline=None)
@given(
    epsilon=st.one_of(st.floats(allow_nan=True), st.integers(-2, 3), st.none()),
    relation=st.sampled_from(["one-entry", "all-entries", "add-remove", "", "ONE-ENTRY", 1]),
    length=st.one_of(st.integers(-2, 12), st.floats(0, 5)),
    low=st.floats(allow_nan=True),
    high=st.floats(-20, 20),
    true_epsilon=st.one_of(st.none(), st.floats(allow_nan=True), st.just(math.inf)),
)
def test_any_entry_fields_give_a_clean_error_or_a_sound_entry(
    epsilon, relation, length, low, high, true_epsilon
):
    try:
        e = dataclasses.replace(
            entry("laplace"),
            epsilon=epsilon,
            relation=relation,
            length=length,
            low=low,
            high=high,
            true_epsilon=true_epsilon,
        )
    except ValidationError:
        return
    assert (
        e.epsilon > 0 and e.relation in ("one-entry", "all-entries", "add-remove") and e.length >= 1
    )
    assert e.low < e.high and (e.true_epsilon is None or e.true_epsilon >= 0)


# ------------------------------------------------------------------------------ the audit


def test_audit_smoke_flags_the_wrong_scale_histogram():
    from dpgames.privacy import audit_privacy, neighbouring_inputs

    e = entry("noisy_hist_wrong_scale")
    neighbours = neighbouring_inputs(
        length=e.length, relation=e.relation, low=e.low, high=e.high, random=2, rng=0
    )
    audit = audit_privacy(
        e.sampler, neighbours, samples=20_000, confidence=0.95, epsilon=e.epsilon, rng=0
    )
    assert e.epsilon < audit.epsilon <= e.true_epsilon
