"""The privacy theorems the library states, each checked on random instances against an oracle
computed another way: post-processing (Dwork & Roth Prop 2.1), group privacy (Thm 2.2 and its (eps,
delta) form), advanced composition (Thm 3.20) against the exact optimal composition (Kairouz, Oh &
Viswanath 2015, Thm 3.3), Bun & Steinke's Prop 1.3 / 1.4 / 1.6 against Renyi divergences integrated
by ``scipy.integrate.quad``, and Sparse with delta > 0 (Thm 3.25) against the composition its proof
uses.

Run with ``-s`` to print the advanced-vs-optimal composition table (also in docs/theorems.md)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, stats
from scipy.special import logsumexp

from dpgames.privacy import (
    AboveThreshold,
    Accountant,
    FiniteDistribution,
    GaussianMechanism,
    KaryResponse,
    PrivacyGuarantee,
    SparseVector,
    audit_finite,
    hockey_stick_divergence,
    zcdp_to_dp,
)
from dpgames.privacy.conversions import RDPCurve, zcdp_to_dp_bun_steinke
from dpgames.privacy.discrete import DiscreteLaplaceMechanism, discrete_laplace_pmf
from dpgames.privacy.exponential import ExponentialMechanism
from dpgames.privacy.gaussian import gaussian_delta, gaussian_epsilon

SETTINGS = dict(max_examples=40, deadline=None, derandomize=True)


def random_laws(rng: np.random.Generator, n_inputs: int, n_outputs: int) -> np.ndarray:
    """Rows: the output law of a random finite mechanism on each input (all probabilities > 0)."""
    w = rng.gamma(0.5, size=(n_inputs, n_outputs)) + 1e-3
    return w / w.sum(axis=1, keepdims=True)


def plain_max_loss(p: np.ndarray, q: np.ndarray) -> float:
    """max_o |ln p(o) - ln q(o)| by a loop (both laws positive)."""
    return max(abs(math.log(a) - math.log(b)) for a, b in zip(p, q))


def plain_hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """sum_o max(0, p(o) - e^eps q(o)), by a loop."""
    return sum(max(0.0, a - math.exp(eps) * b) for a, b in zip(p, q))


# --- post-processing: Dwork & Roth Prop 2.1
# ---------------------------------------------------------------
@settings(**SETTINGS)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_in=st.integers(2, 5),
    n_out=st.integers(2, 8),
    n_post=st.integers(1, 6),
    deterministic=st.booleans(),
    eps=st.floats(0.05, 3.0),
)
def test_post_processing_never_increases_the_audited_loss(
    seed, n_in, n_out, n_post, deterministic, eps
):
    """Dwork & Roth Prop 2.1: for any (randomised) map f, f o M is as private as M.  The audit of
    the composed laws (exact) never exceeds the original's, in max loss and in delta at any eps."""
    rng = np.random.default_rng(seed)
    laws = random_laws(rng, n_in, n_out)
    if deterministic:  # a function outputs -> post outputs, as a 0/1 matrix
        post = np.zeros((n_out, n_post))
        post[np.arange(n_out), rng.integers(0, n_post, n_out)] = 1.0
    else:
        post = random_laws(rng, n_out, n_post)
    composed = laws @ post
    # post outputs no output maps to (then zero on every input)
    composed = composed[:, composed[0] > 0]
    pairs = [(a, b) for a in range(n_in) for b in range(a + 1, n_in)]
    before = audit_finite(
        lambda x: FiniteDistribution.from_probabilities(laws[x]), pairs, epsilon=eps
    )
    after = audit_finite(
        lambda x: FiniteDistribution.from_probabilities(composed[x]), pairs, epsilon=eps
    )
    # oracle: the theorem (after <= before), with both sides also recomputed by plain loops
    assert before.epsilon == pytest.approx(
        max(plain_max_loss(laws[a], laws[b]) for a, b in pairs), rel=1e-12, abs=1e-12
    )
    assert after.epsilon == pytest.approx(
        max(plain_max_loss(composed[a], composed[b]) for a, b in pairs), rel=1e-12, abs=1e-12
    )
    assert after.epsilon <= before.epsilon + 1e-12
    assert after.delta_at_claim <= before.delta_at_claim + 1e-12
    for a, b in pairs:
        for x, y in ((a, b), (b, a)):
            assert (
                plain_hockey_stick(composed[x], composed[y], eps)
                <= plain_hockey_stick(laws[x], laws[y], eps) + 1e-12
            )


@settings(**SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), eps=st.floats(0.1, 4.0), m=st.integers(2, 7))
def test_post_processing_of_the_exponential_mechanism_keeps_its_guarantee(seed, eps, m):
    """Prop 2.1 on a library mechanism: the exponential mechanism's law on neighbouring scores (each
    moved by at most the sensitivity), then a random randomised map: the loss stays <= eps."""
    rng = np.random.default_rng(seed)
    em = ExponentialMechanism(eps, 1.0)
    scores = rng.uniform(0, 5, m)
    neighbour = scores + rng.uniform(-1, 1, m)
    post = random_laws(rng, m, 3)
    p = em.distribution(scores).probabilities @ post
    q = em.distribution(neighbour).probabilities @ post
    assert plain_max_loss(p, q) <= em.guarantee.epsilon + 1e-12
    assert (
        plain_max_loss(p, q)
        <= plain_max_loss(
            em.distribution(scores).probabilities, em.distribution(neighbour).probabilities
        )
        + 1e-12
    )


# --- group privacy: Dwork & Roth Thm 2.2 and its (eps, delta) form
# ----------------------------------------
@settings(**SETTINGS)
@given(
    seed=st.integers(0, 2**32 - 1),
    k=st.integers(2, 5),
    n_out=st.integers(2, 6),
    eps=st.floats(0.05, 2.0),
)
def test_group_privacy_on_inputs_k_apart(seed, k, n_out, eps):
    """A random mechanism on a chain of inputs 0..k (neighbours: i, i+1).  Measured on 0 vs k: the
    max loss is at most k x the neighbours' (Thm 2.2), and the delta at k eps at most k e^{(k-1)
    eps} times the neighbours' delta at eps (the (eps, delta) form); both are for_group(k) of the
    measured guarantee."""
    rng = np.random.default_rng(seed)
    laws = random_laws(rng, k + 1, n_out)
    neighbours = [(i, i + 1) for i in range(k)]
    mech = lambda x: FiniteDistribution.from_probabilities(laws[x])  # noqa: E731
    single = audit_finite(mech, neighbours, epsilon=eps)
    group = audit_finite(mech, [(0, k)], epsilon=k * eps)
    pure = PrivacyGuarantee(single.epsilon).for_group(k)
    assert pure.epsilon == pytest.approx(k * single.epsilon)
    assert group.epsilon <= pure.epsilon + 1e-12
    approx = PrivacyGuarantee(eps, max(single.delta_at_claim, 1e-300)).for_group(k)
    assert approx.epsilon == pytest.approx(k * eps)
    assert approx.delta == pytest.approx(
        min(1.0, k * math.exp((k - 1) * eps) * max(single.delta_at_claim, 1e-300))
    )
    assert group.delta_at_claim <= approx.delta + 1e-12


@pytest.mark.parametrize("eps", [0.1, 0.7, 2.0])
@pytest.mark.parametrize("k", [2, 3, 7])
def test_group_privacy_pure_bound_is_attained(eps, k):
    """Thm 2.2 is tight: the discrete Laplace mechanism (the library's pmf, scale 1/eps) on a count
    is eps-DP for neighbouring counts and its loss between counts k apart is exactly k eps (at any
    output at or below both), so for_group(k) = k eps cannot be improved."""
    scale = Fraction(1) / Fraction(eps).limit_denominator(10**6)
    e = float(1 / scale)
    outputs = np.arange(-60, 61)
    log_pmf = lambda x: np.log(discrete_laplace_pmf(outputs - x, scale))  # noqa: E731
    assert np.max(np.abs(log_pmf(0) - log_pmf(1))) == pytest.approx(e, rel=1e-9)
    assert np.max(np.abs(log_pmf(0) - log_pmf(k))) == pytest.approx(k * e, rel=1e-9)
    assert DiscreteLaplaceMechanism(1 / scale).guarantee.for_group(k).epsilon == pytest.approx(
        k * e, rel=1e-12
    )
    r = math.exp(-e)  # the closed form (1 - r)/(1 + r) r^|o - x| by hand, at an output left of both
    pmf = lambda o, x: (1 - r) / (1 + r) * r ** abs(o - x)  # noqa: E731
    assert math.log(pmf(-5, 0) / pmf(-5, k)) == pytest.approx(k * e, rel=1e-12)


@settings(**SETTINGS)
@given(mu=st.floats(0.05, 2.0), k=st.integers(2, 6), eps=st.floats(0.05, 2.0))
def test_group_privacy_of_the_gaussian_mechanism_exactly(mu, k, eps):
    """The Gaussian mechanism on inputs k apart is the Gaussian with mu k: its exact delta at k eps
    (Balle & Wang Thm 8, computed here from scipy's normal cdf) is within for_group(k)'s
    k e^{(k-1) eps} delta(eps), and its zCDP rho is exactly for_group's k^2 rho (Bun & Steinke Prop
    1.9)."""

    def exact_delta(e, m):
        return stats.norm.cdf(m / 2 - e / m) - math.exp(e) * stats.norm.cdf(-m / 2 - e / m)

    g = GaussianMechanism(1.0 / mu, 1.0)
    single = PrivacyGuarantee(eps, max(exact_delta(eps, mu), 1e-300), rho=g.rho)
    group = single.for_group(k)
    assert exact_delta(k * eps, k * mu) <= group.delta + 1e-12
    assert group.rho == pytest.approx((k * mu) ** 2 / 2, rel=1e-12)
    assert gaussian_delta(k * eps, k * mu) == pytest.approx(exact_delta(k * eps, k * mu), abs=1e-12)


# --- advanced composition (Thm 3.20) against the optimal composition (Kairouz, Oh & Viswanath)
# --------------
def optimal_composition_epsilon(eps: float, k: int, delta: float) -> float:
    """The exact optimal eps at ``delta`` of the k-fold (adaptive) composition of eps-DP mechanisms:
    the k-fold randomized response pair attains it (KOV 2015, Thm 3.3).  The count l of "agree"
    answers is Bin(k, p) against Bin(k, 1 - p), p = e^eps/(1 + e^eps), loss (2 l - k) eps; the
    hockey stick H(e') = sum_{loss > e'} [P(l) - e^{e'} Q(l)] is solved for H = delta segment by
    segment, in closed form."""
    log_p, log_1p = -math.log1p(math.exp(-eps)), -math.log1p(math.exp(eps))  # ln p, ln(1 - p)
    log_comb = [
        math.lgamma(k + 1) - math.lgamma(ell + 1) - math.lgamma(k - ell + 1) for ell in range(k + 1)
    ]
    log_P = [log_comb[ell] + ell * log_p + (k - ell) * log_1p for ell in range(k + 1)]
    log_Q = [log_comb[ell] + ell * log_1p + (k - ell) * log_p for ell in range(k + 1)]
    levels = [(2 * ell - k) * eps for ell in range(k + 1)]  # ascending
    for j in range(k, -1, -1):  # e' in [levels[j-1], levels[j]): S = {l >= j}
        a = math.exp(logsumexp(log_P[j:]))
        if a - delta <= 0:
            continue
        e = math.log(a - delta) - logsumexp(log_Q[j:])
        low = levels[j - 1] if j > 0 else -math.inf
        if low - 1e-12 <= e <= levels[j] + 1e-12:
            return max(e, 0.0)
    return 0.0


def kov_corner_delta(eps: float, k: int, i: int) -> float:
    """KOV Thm 3.3's delta at eps' = (k - 2i) eps (delta = 0 per mechanism), as the paper writes
    it."""
    return (
        sum(
            math.comb(k, ell) * (math.exp((k - ell) * eps) - math.exp((k - 2 * i + ell) * eps))
            for ell in range(i)
        )
        / (1 + math.exp(eps)) ** k
    )


def advanced_vs_optimal_rows(eps_values=(0.01, 0.1, 0.5, 1.0), ks=(1, 10, 50, 200), delta=1e-6):
    rows = []
    for eps in eps_values:
        for k in ks:
            adv = (
                Accountant()
                .spend("randomized response", KaryResponse(2, eps).guarantee, k)
                .advanced_total(delta)
                .epsilon
            )
            rows.append((eps, k, adv, optimal_composition_epsilon(eps, k, delta), k * eps))
    return rows


def test_kov_closed_form_agrees_with_the_hockey_stick_solution():
    for eps in (0.1, 0.5, 1.3):
        for k in (1, 4, 9):
            for i in range(1, k // 2 + 1):
                d = kov_corner_delta(eps, k, i)
                if d > 1e-300:
                    assert optimal_composition_epsilon(eps, k, d) == pytest.approx(
                        (k - 2 * i) * eps, abs=1e-9
                    )


@pytest.mark.slow
@settings(**SETTINGS)
@given(eps=st.floats(0.005, 2.0), k=st.integers(1, 300), log_delta=st.floats(-14, -1))
def test_advanced_composition_is_never_below_the_optimal(eps, k, log_delta):
    """Thm 3.20 is a valid bound: the accountant's advanced composition of k eps-DP randomized
    responses is at least the exact optimal composition at the same delta (it may not be below the
    truth)."""
    delta = 10**log_delta
    adv = Accountant().spend("rr", KaryResponse(2, eps).guarantee, k).advanced_total(delta)
    assert adv.delta == pytest.approx(delta)
    assert adv.epsilon >= optimal_composition_epsilon(eps, k, delta) - 1e-9
    # and the library's best total is a valid bound too
    assert (
        Accountant().spend("rr", KaryResponse(2, eps).guarantee, k).best_total(delta).epsilon
        >= optimal_composition_epsilon(eps, k, delta) - 1e-9
    )


@pytest.mark.parametrize("eps, k", [(0.3, 6), (0.1, 10), (1.0, 4)])
def test_advanced_composition_holds_on_the_composed_randomized_response_laws(eps, k):
    """The k-fold product of the library's randomized-response laws, audited exactly (hockey stick
    over all 2^k outputs, the library's and a plain loop): delta at the advanced eps is at most
    delta."""
    delta = 1e-3
    rr = KaryResponse(2, eps)
    p1, q1 = rr.output_distribution(1).probabilities, rr.output_distribution(0).probabilities
    outs = np.array(np.meshgrid(*[[0, 1]] * k, indexing="ij")).reshape(k, -1)
    p = np.prod(p1[outs], axis=0)
    q = np.prod(q1[outs], axis=0)
    adv = Accountant().spend("rr", rr.guarantee, k).advanced_total(delta).epsilon
    lib = hockey_stick_divergence(
        FiniteDistribution.from_probabilities(p), FiniteDistribution.from_probabilities(q), adv
    )
    assert lib == pytest.approx(plain_hockey_stick(p, q, adv), abs=1e-12)
    assert lib <= delta
    assert plain_hockey_stick(p, q, optimal_composition_epsilon(eps, k, delta)) == pytest.approx(
        delta, rel=1e-6
    )


@settings(**SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 4), alpha=st.floats(1.1, 30.0))
def test_rdp_composition_adds_order_by_order(seed, k, alpha):
    """Mironov 2017, Prop 1 (what the accountant's RDP total adds up): the Renyi divergence of a
    product of k random finite pairs, summed over every joint output, is the sum of the factors'
    divergences."""
    rng = np.random.default_rng(seed)
    pairs = [random_laws(rng, 2, int(rng.integers(2, 4))) for _ in range(k)]

    def renyi(p, q):
        return math.log(sum(a**alpha * b ** (1 - alpha) for a, b in zip(p, q))) / (alpha - 1)

    joint_p, joint_q = np.ones(1), np.ones(1)
    for p, q in pairs:
        joint_p, joint_q = np.outer(joint_p, p).ravel(), np.outer(joint_q, q).ravel()
    assert renyi(joint_p, joint_q) == pytest.approx(
        sum(renyi(p, q) for p, q in pairs), rel=1e-9, abs=1e-12
    )


@pytest.mark.slow
@settings(**SETTINGS)
@given(eps=st.floats(0.005, 2.0), k=st.integers(1, 300), log_delta=st.floats(-14, -1))
def test_rdp_and_zcdp_totals_are_never_below_the_optimal_composition(eps, k, log_delta):
    """The accountant's RDP total (Mironov Prop 1 and 3, pure DP as min(eps, alpha eps^2 / 2): BS
    Prop 1.4) and zCDP total (BS Lemma 2.3, Prop 1.3) of k eps-DP randomized responses are valid: at
    least the exact optimal composition (KOV)."""
    delta = 10**log_delta
    ledger = Accountant().spend("rr", KaryResponse(2, eps).guarantee, k)
    optimal = optimal_composition_epsilon(eps, k, delta)
    assert ledger.rdp_total(delta).epsilon >= optimal - 1e-9
    assert ledger.zcdp_total(delta).epsilon >= optimal - 1e-9


def test_print_the_gap_table():
    rows = advanced_vs_optimal_rows()
    print("\n  eps     k   advanced (Thm 3.20)   optimal (KOV)   basic   advanced/optimal")
    for eps, k, adv, opt, basic in rows:
        ratio = adv / opt if opt > 0 else math.inf
        print(f"{eps:5g} {k:5d} {adv:20.4f} {opt:15.4f} {basic:8.3f} {ratio:12.2f}")
        assert adv >= opt - 1e-9


# --- Bun & Steinke: Prop 1.6 (Gaussian), Prop 1.4 (pure DP => zCDP), Prop 1.3 (zCDP => DP)
# ------------------
def renyi_by_quad(log_p, log_q, alpha: float, breaks=(), reach: float = 60.0) -> float:
    """D_alpha(P || Q) = ln(int p^alpha q^(1-alpha)) / (alpha - 1), integrated by
    scipy.integrate.quad (the integrand in log space, split at ``breaks``)."""
    f = lambda x: math.exp(alpha * log_p(x) + (1 - alpha) * log_q(x))  # noqa: E731
    edges = [-reach, *sorted(breaks), reach]
    total = sum(
        integrate.quad(f, a, b, epsabs=0, epsrel=1e-12, limit=400)[0]
        for a, b in zip(edges, edges[1:])
    )
    return math.log(total) / (alpha - 1)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, derandomize=True)
@given(sigma=st.floats(0.5, 4.0), sens=st.floats(0.1, 2.0), alpha=st.floats(1.05, 12.0))
def test_bun_steinke_prop_1_6_gaussian_renyi_divergence(sigma, sens, alpha):
    """Prop 1.6: D_alpha(N(0, s^2) || N(D, s^2)) = alpha D^2 / (2 s^2): the library's rho times
    alpha."""
    g = GaussianMechanism(sigma, sens)
    log_p = lambda x: stats.norm.logpdf(x, 0, sigma)  # noqa: E731
    log_q = lambda x: stats.norm.logpdf(x, sens, sigma)  # noqa: E731
    numeric = renyi_by_quad(
        log_p, log_q, alpha, breaks=(0.0, sens), reach=40 * sigma + alpha * sens
    )
    assert numeric == pytest.approx(alpha * g.rho, rel=1e-6)
    assert RDPCurve.zcdp(g.rho)(np.array([alpha]))[0] == pytest.approx(numeric, rel=1e-6)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(eps=st.floats(0.05, 3.0), alpha=st.floats(1.05, 20.0))
def test_bun_steinke_prop_1_4_pure_dp_gives_zcdp_on_laplace(eps, alpha):
    """Prop 1.4: eps-DP => (eps^2/2)-zCDP, i.e. D_alpha <= alpha eps^2 / 2 (and <= eps).  Checked on
    the Laplace mechanism (eps-DP with b = 1/eps), whose divergence is integrated numerically; also
    the library's exact Laplace curve (Mironov Prop 6) against the same integral."""
    b = 1.0 / eps
    log_p = lambda x: -abs(x) / b - math.log(2 * b)  # noqa: E731
    log_q = lambda x: -abs(x - 1.0) / b - math.log(2 * b)  # noqa: E731
    numeric = renyi_by_quad(log_p, log_q, alpha, breaks=(0.0, 1.0), reach=800 * b)
    bound = RDPCurve.pure(eps)(np.array([alpha]))[0]
    assert bound == pytest.approx(min(eps, alpha * eps * eps / 2))
    assert numeric <= bound * (1 + 1e-9) + 1e-12
    assert PrivacyGuarantee(eps).rdp_curve()(np.array([alpha]))[0] >= numeric * (1 - 1e-9)
    assert RDPCurve.laplace(eps)(np.array([alpha]))[0] == pytest.approx(
        numeric, rel=1e-6, abs=1e-12
    )


@settings(**SETTINGS)
@given(
    seed=st.integers(0, 2**32 - 1),
    eps=st.floats(0.05, 3.0),
    alpha=st.floats(1.05, 50.0),
    m=st.integers(2, 6),
)
def test_bun_steinke_prop_1_4_on_random_finite_mechanisms(seed, eps, alpha, m):
    """Prop 1.4 on random finite eps-DP pairs (log-ratios drawn in [-eps, eps]): the exact sum
    D_alpha = ln sum p^alpha q^(1-alpha) / (alpha - 1) is at most min(eps, alpha eps^2 / 2)."""
    rng = np.random.default_rng(seed)
    q = random_laws(rng, 1, m)[0]
    p = q * np.exp(rng.uniform(-eps, eps, m) / 2)
    p /= p.sum()  # normalising moves every log-ratio by the same constant
    actual = plain_max_loss(p, q)  # the pair is exactly actual-DP, actual <= eps
    d = math.log(sum(a**alpha * c ** (1 - alpha) for a, c in zip(p, q))) / (alpha - 1)
    assert d <= RDPCurve.pure(actual)(np.array([alpha]))[0] + 1e-12


@settings(**SETTINGS)
@given(mu=st.floats(0.02, 3.0), log_delta=st.floats(-12, -2))
def test_bun_steinke_prop_1_3_zcdp_to_dp_is_valid_for_the_gaussian(mu, log_delta):
    """Prop 1.3: rho-zCDP => (rho + 2 sqrt(rho ln 1/delta), delta)-DP.  For the Gaussian (rho =
    mu^2/2) the exact delta at that eps (Balle & Wang, from scipy's normal cdf) is at most delta,
    and the library's conversion (the best over orders) is no larger and still valid."""
    delta = 10**log_delta
    rho = mu * mu / 2
    eps_bs = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    assert zcdp_to_dp_bun_steinke(rho, delta) == pytest.approx(eps_bs)
    exact = lambda e: (  # noqa: E731
        stats.norm.cdf(mu / 2 - e / mu) - math.exp(e) * stats.norm.cdf(-mu / 2 - e / mu)
    )
    assert exact(eps_bs) <= delta * (1 + 1e-9)
    lib = zcdp_to_dp(rho, delta)
    assert lib <= eps_bs + 1e-12
    assert exact(lib) <= delta * (1 + 1e-6)
    assert gaussian_epsilon(delta, mu) <= lib + 1e-9


# --- sparse vector with delta > 0: Dwork & Roth Thm 3.25
# ----------------------------------------------------
@pytest.mark.parametrize("c", [1, 2, 5, 20, 100])
@pytest.mark.parametrize("log_delta", [-12, -6, -3, -1])
def test_sparse_vector_with_delta_states_what_its_proof_composes(c, log_delta):
    """Thm 3.25: Sparse with delta > 0 runs c AboveThreshold instances of eps' = eps / sqrt(8 c
    ln(1/delta)) (threshold noise 2 Delta / eps', query noise 4 Delta / eps') and composes them by
    Thm 3.20 into eps/2 + c eps'(e^eps' - 1) <= eps.  Over eps from 1e-3 to 1e3: the noise is the
    proof's; where the composition (computed here by hand) is at most eps the guarantee is (eps,
    delta); elsewhere it is at least the exact optimal composition of c eps'-DP mechanisms (KOV, so
    a valid statement of what the proof gives) and at most the basic c eps'."""
    delta = 10.0**log_delta
    for eps in np.geomspace(1e-3, 1e3, 25):
        sv = SparseVector(float(eps), 0.0, c, delta, sensitivity=0.5)
        eps_run = eps / math.sqrt(8 * c * math.log(1 / delta))
        assert sv.threshold_scale == pytest.approx(2 * 0.5 / eps_run, rel=1e-12)
        assert sv.query_scale == pytest.approx(4 * 0.5 / eps_run, rel=1e-12)
        by_hand = math.sqrt(2 * c * math.log(1 / delta)) * eps_run + c * eps_run * math.expm1(
            eps_run
        )
        assert by_hand == pytest.approx(eps / 2 + c * eps_run * math.expm1(eps_run), rel=1e-12)
        g = sv.guarantee
        assert g.delta == delta
        if by_hand <= eps:
            assert g.epsilon == eps
        else:
            assert g.epsilon >= optimal_composition_epsilon(eps_run, c, delta) - 1e-9
            assert g.epsilon <= c * eps_run * (1 + 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("eps, log_delta", [(0.5, -6), (2.0, -3), (8.0, -2)])
def test_sparse_vector_one_positive_with_delta_is_audited_exactly(eps, log_delta):
    """c = 1: Sparse with delta is AboveThreshold at eps' <= eps; its exact law of the halting query
    (the library's numerical integral) on answer vectors moved by at most the sensitivity has loss
    <= eps'."""
    delta = 10.0**log_delta
    sv = SparseVector(eps, 1.0, 1, delta)
    eps_run = eps / math.sqrt(8 * math.log(1 / delta))
    at = AboveThreshold(eps_run, 1.0)
    assert at.threshold_scale == pytest.approx(
        sv.threshold_scale
    ) and at.query_scale == pytest.approx(sv.query_scale)
    rng = np.random.default_rng(int(eps * 10))
    for _ in range(4):
        a = rng.uniform(-1, 3, 4)
        b = a + rng.choice([-1.0, 1.0], 4) * rng.uniform(0, 1, 4)
        audit = audit_finite(at, [(a, b)])
        assert audit.epsilon <= eps_run + 1e-6 <= sv.guarantee.epsilon + 1e-6
