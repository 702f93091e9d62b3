"""Exact output laws of the sparse vector and report-noisy-max families, correct and broken variants
alike.

Each function returns the :class:`~dpgames.privacy.distribution.FiniteDistribution` of one published
variant on one input, so that a variant is audited exactly in one line::

    audit_finite(lambda x: sparse_vector_law(x, 0.0, threshold_scale=2.0, query_scale=4.0), pairs)

* :func:`sparse_vector_law`: AboveThreshold / sparse vector with the knobs the variants of Lyu, Su &
  Li (2017, "Understanding the Sparse Vector Technique for Differential Privacy", Algorithms 1-6)
  turn: the threshold and query noise scales (0 allowed: no noise), halting after ``c`` answers
  "above" or not, a fresh threshold noise after each "above" (Dwork & Roth's Sparse, their Alg. 2),
  and the noisy query value released with each "above" (their Alg. 3), binned so that the law stays
  finite.
* :func:`noisy_max_law`: report-noisy-max with Laplace, exponential (one-sided) or Gumbel noise,
  reporting the index, the index with the gap to the runner-up (Ding, Wang, Zhang & Kifer 2019,
  "Free gap information": still eps-DP for Laplace noise of scale ``2 Delta / eps``), the index with
  the noisy maximum, or the noisy maximum alone (the broken variants of Ding, Wang, Wang, Zhang &
  Kifer 2018, "Detecting Violations of Differential Privacy", Alg. 7 and 8).
* :func:`binned`: turns a continuous-output sampler into one with finite labels (post-processing: it
  never increases the privacy loss), for :func:`~dpgames.privacy.audit.audit_black_box` or to
  compare with these laws.

**How the laws are computed.**  Given the one continuous variable every answer depends on (the
threshold noise for the sparse vector, the winner's noisy value for noisy max), the answers are
independent, so each outcome's probability is a one-dimensional integral of a product of noise
densities, CDFs and survival functions.  The integrand is smooth between its *kinks* (where a
Laplace density or CDF is not differentiable, a support starts, or a bin edge cuts), so it is
integrated by Gauss-Legendre rules of order 24 on pieces that start at the scale of the fastest
factor next to every kink and double in length away from it (a mesh graded towards the kinks), over
a window that reaches ``40 + m`` noise scales beyond the outermost kinks (the integrand decays at
least like the slowest noise density beyond them, so what is left out is below ``2^m e^{-40-m}`` of
any outcome's probability).  Everything is summed in log space (log-sum-exp), so an outcome of
probability ``e^{-1000}`` keeps its relative accuracy.  The relative error of every probability is
below 1e-9; the tests measure it against mpmath quadrature at 25 digits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from dpgames.privacy.distribution import FiniteDistribution
from dpgames.validation import (
    ValidationError,
    choice,
    finite_array,
    integer,
    memory,
    non_negative,
    positive,
)

#: The largest number of outcomes a law enumerates (answer patterns of the sparse vector, index-bin
#: pairs of noisy max); a larger law is refused with its count.
MAX_OUTCOMES = 2**16

_LOG2 = math.log(2.0)
_ORDER = 24
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(_ORDER)
_LOG_GL_WEIGHTS = np.log(_GL_WEIGHTS)
_MAX_QUERIES = 4096  # beyond this even AboveThreshold's m + 1 patterns need too many nodes
_CHUNK = 2**22  # entries of one temporary block
_UNDERFLOW = 1e-280  # a product sum below this is recomputed in log space

NoiseName = Literal["laplace", "exponential", "gumbel"]


# --------------------------------------------------------------------------------------------------
# Noise families, standardised (scale 1); z may hold +-inf.


def _laplace_log_cdf(z: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(z < 0, z - _LOG2, np.log1p(-0.5 * np.exp(-np.abs(z))))


def _laplace_log_sf(z: np.ndarray) -> np.ndarray:
    return _laplace_log_cdf(-z)


def _laplace_log_pdf(z: np.ndarray) -> np.ndarray:
    return -np.abs(z) - _LOG2


def _exponential_log_cdf(z: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(z > 0, np.log(-np.expm1(-np.maximum(z, 0.0))), -np.inf)


def _exponential_log_sf(z: np.ndarray) -> np.ndarray:
    return -np.maximum(z, 0.0)


def _exponential_log_pdf(z: np.ndarray) -> np.ndarray:
    return np.where(z >= 0, -z, -np.inf)


def _gumbel_log_cdf(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return -np.exp(-z)


def _gumbel_log_sf(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", divide="ignore"):
        return np.log(-np.expm1(-np.exp(-z)))


def _gumbel_log_pdf(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return -z - np.exp(-z)


class _Noise(NamedTuple):
    log_pdf: Callable[[np.ndarray], np.ndarray]
    log_cdf: Callable[[np.ndarray], np.ndarray]
    log_sf: Callable[[np.ndarray], np.ndarray]
    # standardised distances left/right beyond which the
    reach: Callable[[float], tuple[float, float]]
    # density is below e^-tail of its value at the kinks
    steepness: Callable[[float], float]  # the largest |d ln F / dz| where F is above e^-tail


_NOISES: dict[str, _Noise] = {
    "laplace": _Noise(
        _laplace_log_pdf, _laplace_log_cdf, _laplace_log_sf, lambda t: (t, t), lambda t: 1.0
    ),
    "exponential": _Noise(
        _exponential_log_pdf,
        _exponential_log_cdf,
        _exponential_log_sf,
        lambda t: (0.0, t),
        lambda t: 1.0,
    ),
    # ln F(z) = -e^{-z}: its slope e^{-z} reaches the tail where F does
    "gumbel": _Noise(
        _gumbel_log_pdf,
        _gumbel_log_cdf,
        _gumbel_log_sf,
        lambda t: (math.log(t) + 3.0, t),
        lambda t: t,
    ),
}


def _log_interval(noise: _Noise, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``ln Pr[lower <= Z < upper]``, accurate in both tails (the difference of CDFs on the left of
    0, of survival functions on the right, one minus both tails across 0)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        cl, cu = noise.log_cdf(lower), noise.log_cdf(upper)
        sl, su = noise.log_sf(lower), noise.log_sf(upper)
        left = cu + np.log(-np.expm1(cl - cu))
        right = sl + np.log(-np.expm1(su - sl))
        middle = np.log1p(-(np.exp(cl) + np.exp(su)))
        out = np.where(upper <= 0, left, np.where(lower >= 0, right, middle))
    return np.where(upper > lower, out, -np.inf)


# --------------------------------------------------------------------------------------------------
# Quadrature


def _rule(
    name: str, kinks: np.ndarray, lo: float, hi: float, step: float
) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and log-weights on ``[lo, hi]``: the kinks cut it into gaps; in each gap
    the pieces are ``step, 2 step, 4 step, ...`` long from either end towards the middle."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValidationError(name, "is too large: the integration window leaves the float range")
    if step <= 1e-9 * max(abs(lo), abs(hi)):
        raise ValidationError(
            name,
            f": a noise scale this small next to values this large (about {step:.3g} "
            f"against {max(abs(lo), abs(hi)):.3g}) is below the float resolution",
        )
    ends = np.unique(np.clip(np.concatenate([[lo, hi], kinks]), lo, hi))
    a, b = ends[:-1], ends[1:]
    half = (b - a) / 2
    levels = max(int(math.ceil(math.log2(max(float(half.max()) / step, 1.0)))), 0) + 1
    memory(
        name,
        2.0 * ends.size * (levels + 1) * _ORDER * 2,
        what=f"quadrature nodes for {ends.size:,} kinks",
    )
    offsets = step * (2.0 ** np.arange(1, levels + 1) - 1.0)
    inside = offsets[None, :] < half[:, None]
    left = (a[:, None] + offsets[None, :])[inside]
    right = (b[:, None] - offsets[None, :])[inside]
    points = np.unique(np.concatenate([ends, a + half, left, right]))
    centre, radius = (points[1:] + points[:-1]) / 2, (points[1:] - points[:-1]) / 2
    keep = radius > 0
    centre, radius = centre[keep], radius[keep]
    nodes = (centre[:, None] + radius[:, None] * _GL_NODES[None, :]).ravel()
    log_weights = (np.log(radius)[:, None] + _LOG_GL_WEIGHTS[None, :]).ravel()
    return nodes, log_weights


def _tail(factors: int) -> float:
    """How many noise scales the window reaches beyond the outermost kinks (see the module
    docstring)."""
    return 40.0 + factors


def _log_matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``ln sum_k exp(x[r, k] + y[s, k])`` for every ``r, s``: one matrix product of the rows scaled
    by their maxima, and log-sum-exp for the (rare) sums that underflow it."""
    xm, ym = x.max(axis=1), y.max(axis=1)
    xs, ys = np.where(np.isfinite(xm), xm, 0.0), np.where(np.isfinite(ym), ym, 0.0)
    product = np.exp(x - xs[:, None]) @ np.exp(y - ys[:, None]).T
    possible = np.isfinite(xm)[:, None] & np.isfinite(ym)[None, :]
    with np.errstate(divide="ignore"):
        out = np.where(possible, np.log(product) + xs[:, None] + ys[None, :], -np.inf)
    rows, cols = np.nonzero(possible & (product < _UNDERFLOW))
    block = max(1, _CHUNK // x.shape[1])
    for start in range(0, rows.size, block):
        r, c = rows[start : start + block], cols[start : start + block]
        out[r, c] = logsumexp(x[r] + y[c], axis=1)
    return out


def _object_labels(items) -> np.ndarray:
    """A 1-d object array holding the given labels (tuples stay tuples)."""
    items = list(items)
    return np.fromiter(items, dtype=object, count=len(items))


def _edges(name: str, edges: ArrayLike) -> np.ndarray:
    """Bin edges: a non-empty, strictly increasing 1-d array of finite numbers."""
    cuts = finite_array(name, edges)
    if cuts.ndim != 1 or cuts.size == 0:
        raise ValidationError(
            name, f"must be a non-empty 1-d array of bin edges, got shape {cuts.shape}"
        )
    if cuts.size > 1 and not (np.diff(cuts) > 0).all():
        raise ValidationError(name, "must be strictly increasing")
    return cuts


def _queries(queries: ArrayLike) -> np.ndarray:
    q = finite_array("queries", queries)
    if q.ndim != 1 or q.size == 0:
        raise ValidationError(
            "queries", f"must be a non-empty 1-d array of query answers, got shape {q.shape}"
        )
    return q


# --------------------------------------------------------------------------------------------------
# Sparse vector


def _count_patterns(m: int, cutoff: int, halt: bool, above: int) -> int:
    """The number of answer patterns: ``(1 + A)^m`` without halting; with halting after ``c``
    aboves, those with fewer than ``c`` aboves plus those that stop at their ``c``-th (the
    hockey-stick identity gives ``C(m, c) A^c`` of them), where ``A`` is the number of ways to
    answer "above"."""
    if not halt or cutoff > m:
        return (1 + above) ** m
    return (
        sum(math.comb(m, j) * above**j for j in range(cutoff))
        + math.comb(m, cutoff) * above**cutoff
    )


def _patterns(n: int, budget: int, halt: bool, above: int) -> tuple[np.ndarray, np.ndarray]:
    """Every answer pattern of ``n`` queries in lexicographic order of its codes (0 below, ``1..A``
    above, ``A + 1`` not asked after the stop), with its number of aboves."""
    codes = np.zeros((1, 0), dtype=np.int32)
    counts = np.zeros(1, dtype=np.int64)
    stop = above + 1
    for _ in range(n):
        live = ~(halt & (counts >= budget))
        children = np.where(live, above + 1, 1)
        parent = np.repeat(np.arange(codes.shape[0]), children)
        first = np.cumsum(children) - children
        rank = np.arange(parent.size) - first[parent]
        symbol = np.where(live[parent], rank, stop).astype(np.int32)
        codes = np.concatenate([codes[parent], symbol[:, None]], axis=1)
        counts = counts[parent] + ((symbol >= 1) & (symbol <= above))
    return codes, counts


def _answer_tables(
    q: np.ndarray, threshold: float, rho: np.ndarray, query_scale: float, edges: np.ndarray | None
) -> np.ndarray:
    """``ln Pr[answer | threshold noise rho]`` per query, answer (0 below, then above or above in
    each value bin) and node: shape ``(m, 1 + A, K)``.  Query ``i`` is above when ``q_i + nu_i >=
    T + rho``."""
    noise = _NOISES["laplace"]
    level = threshold + rho
    if query_scale == 0:
        up = q[:, None] >= level[None, :]
        below, above = np.where(up, -np.inf, 0.0), np.where(up, 0.0, -np.inf)
    else:
        z = (level[None, :] - q[:, None]) / query_scale
        below, above = noise.log_cdf(z), noise.log_sf(z)
    if edges is None:
        return np.stack([below, above], axis=1)
    lower = np.maximum(np.concatenate([[-np.inf], edges])[None, :, None], level[None, None, :])
    upper = np.concatenate([edges, [np.inf]])[None, :, None]
    if query_scale == 0:
        v = q[:, None, None]
        values = np.where((v >= lower) & (v < upper), 0.0, -np.inf)
    else:
        values = _log_interval(
            noise,
            (lower - q[:, None, None]) / query_scale,
            (upper - q[:, None, None]) / query_scale,
        )
    return np.concatenate([below[:, None, :], values], axis=1)


def _threshold_rule(
    q: np.ndarray, threshold: float, scale: float, query_scale: float, edges: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``rho`` of the threshold noise and ``ln(weight x density)``: one node at 0 without
    noise."""
    if scale == 0:
        return np.zeros(1), np.zeros(1)
    noise = _NOISES["laplace"]
    kinks = [np.zeros(1), q - threshold]
    if edges is not None:
        kinks.append(edges - threshold)
    kinks_all = np.concatenate(kinks)
    reach_left, reach_right = noise.reach(_tail(q.size))
    lo, hi = kinks_all.min() - scale * reach_left, kinks_all.max() + scale * reach_right
    rate = 1.0 / scale + (q.size / query_scale if query_scale > 0 else 0.0)
    rho, log_w = _rule("threshold_scale", kinks_all, lo, hi, 1.0 / rate)
    return rho, log_w + noise.log_pdf(rho / scale) - math.log(scale)


def sparse_vector_law(
    queries: ArrayLike,
    threshold: float,
    *,
    threshold_scale: float,
    query_scale: float,
    cutoff: int = 1,
    halt: bool = True,
    resample_threshold: bool = False,
    threshold_resample_scale: float | None = None,
    output_value: bool = False,
    value_bins: ArrayLike | None = None,
    noise: Literal["laplace"] = "laplace",
) -> FiniteDistribution:
    """The exact law of the answer pattern of a sparse vector variant on the query answers
    ``queries``.

    The mechanism draws ``rho ~ Lap(threshold_scale)`` and, for ``i = 1, 2, ...``, ``nu_i ~
    Lap(query_scale)``; query ``i`` is "above" when ``q_i + nu_i >= T + rho``.  With ``halt`` it
    stops after ``cutoff`` aboves (the rest are not answered); with ``resample_threshold`` a fresh
    ``rho ~ Lap(threshold_resample_scale)`` is drawn after each above; with ``output_value`` an
    above releases ``q_i + nu_i``, binned by ``value_bins``.  The variants of Lyu, Su & Li (2017),
    for sensitivity 1 and ``eps1 = eps2 = eps / 2`` unless said otherwise:

    | Alg. | threshold / query scale | knobs | privacy |
    |---|---|---|---|
    | 1 | ``2/eps`` / ``4c/eps`` | halt after ``c`` | eps-DP |
    | 2 | ``2c/eps`` / ``4c/eps`` | halt, ``resample_threshold`` (Dwork & Roth) | eps-DP |
    | 3 | ``2/eps`` / ``2c/eps`` | halt, ``output_value`` | no finite eps |
    | 4 | ``4/eps`` / ``4/(3 eps)`` | halt after ``c`` (Lee & Clifton 2014) | ``(1+6c)/4`` eps |
    | 5 | ``2/eps`` / ``0`` | ``halt=False`` (Stoddard et al. 2014) | no finite eps |
    | 6 | ``2/eps`` / ``2/eps`` | ``halt=False`` (Chen et al. 2015) | no finite eps |

    Given the threshold noise the answers are independent, so the probability of a pattern is one
    integral over ``rho`` (over one fresh ``rho`` per segment ending in an above when resampling);
    see the module docstring for the quadrature (relative error below 1e-9 per outcome).  A scale of
    0 means no noise.

    Parameters
    ----------
    queries : array_like
        1-d, finite: the query answers ``q_1 .. q_m`` on one input.
    threshold : float
        ``T``.
    threshold_scale, query_scale : float
        Laplace scales, ``>= 0``.
    cutoff : int, default 1
        ``c >= 1``: the number of aboves after which the mechanism stops (with ``halt``).
    halt : bool, default True
    resample_threshold : bool, default False
    threshold_resample_scale : float, optional
        The scale of the fresh threshold noises (default ``threshold_scale``); only with
        ``resample_threshold``.
    output_value : bool, default False
    value_bins : array_like, optional
        Strictly increasing edges ``e_0 < ... < e_{B-1}``; a value ``v`` falls in bin ``#{k : e_k <=
        v}`` (``0 .. B``).  Required with ``output_value``, refused without.
    noise : {"laplace"}
        The noise family.

    Returns
    -------
    FiniteDistribution
        Over the answer patterns, labelled by tuples with one entry per query: ``"T"`` (above),
        ``"F"`` (below), ``"-"`` (not answered after the stop), or with ``output_value`` the bin (an
        ``int``) of an above's released value instead of ``"T"``; in lexicographic order of ``F < T
        (or bins) < -``.

    Raises
    ------
    ValidationError
        On bad arguments, or more than :data:`MAX_OUTCOMES` patterns (the message states their
        count).

    Examples
    --------
    >>> law = sparse_vector_law([0.0, 3.0], 1.0, threshold_scale=2.0, query_scale=4.0)
    >>> law.outcomes.tolist()
    [('F', 'F'), ('F', 'T'), ('T', '-')]
    >>> round(float(law.probabilities.sum()), 12)
    1.0
    """
    q = _queries(queries)
    t = float(finite_array("threshold", threshold, ndim=0))
    b_t = non_negative("threshold_scale", threshold_scale)
    b_q = non_negative("query_scale", query_scale)
    c = integer("cutoff", cutoff, low=1)
    choice("noise", noise, ("laplace",))
    for name, flag in (
        ("halt", halt),
        ("resample_threshold", resample_threshold),
        ("output_value", output_value),
    ):
        if not isinstance(flag, (bool, np.bool_)):
            raise ValidationError(name, f"must be True or False, got {flag!r}")
    halt, resample, with_value = bool(halt), bool(resample_threshold), bool(output_value)
    if threshold_resample_scale is not None and not resample:
        raise ValidationError(
            "threshold_resample_scale", "is used only with resample_threshold=True"
        )
    b_r = (
        b_t
        if threshold_resample_scale is None
        else non_negative("threshold_resample_scale", threshold_resample_scale)
    )
    if with_value != (value_bins is not None):
        raise ValidationError(
            "value_bins",
            "must be given exactly when output_value=True (the released values are "
            "binned so that the law is finite)",
        )
    edges = _edges("value_bins", value_bins) if value_bins is not None else None
    above = 1 if edges is None else edges.size + 1
    m = q.size
    if m > _MAX_QUERIES:
        raise ValidationError(
            "queries",
            f": {m:,} queries; at most {_MAX_QUERIES:,} (the law enumerates answer patterns)",
        )
    count = _count_patterns(m, c, halt, above)
    if count > MAX_OUTCOMES:
        shown = (
            f"{count:,}"
            if count < 10**15
            else f"about 10^{int(count.bit_length() * math.log10(2))}"
        )
        raise ValidationError(
            "queries",
            f": {m} queries give {shown} answer patterns; at most {MAX_OUTCOMES:,} "
            "are enumerated (fewer queries, a halt after fewer aboves, or fewer bins)",
        )

    if resample:
        codes, counts = _patterns(m, c, halt, above)
        log_p = _resampled_log_probabilities(q, t, b_t, b_r, b_q, edges, codes, counts, c, halt)
    else:
        codes, log_p = _shared_log_probabilities(q, t, b_t, b_q, edges, c, halt, above)
    entries = np.array(
        ["F", "T", "-"] if edges is None else ["F", *range(above), "-"], dtype=object
    )
    labels = _object_labels(map(tuple, entries[codes].tolist()))
    return FiniteDistribution.from_log_weights(log_p, labels)


def _checked_tables(q: np.ndarray, t: float, scale: float, b_q: float, edges: np.ndarray | None):
    rho, base = _threshold_rule(q, t, scale, b_q, edges)
    memory(
        "queries",
        q.size * (2 + (0 if edges is None else edges.size)) * rho.size,
        what=f"{q.size} queries x {rho.size:,} quadrature nodes",
    )
    return _answer_tables(q, t, rho, b_q, edges), base


def _shared_log_probabilities(
    q, t, b_t, b_q, edges, c, halt, above
) -> tuple[np.ndarray, np.ndarray]:
    """One threshold noise for every query: ``ln int g(rho) prod_i Pr[a_i | rho] drho`` per pattern,
    the product split into the first half of the queries and the second (a matrix product over the
    nodes). Returns the patterns' codes in lexicographic order and their log-probabilities."""
    tables, base = _checked_tables(q, t, b_t, b_q, edges)
    tables = np.concatenate([tables, np.zeros_like(tables[:, :1])], axis=1)  # "not answered": ln 1
    m = q.size
    split = m // 2

    def logs(first: int, pattern_codes: np.ndarray) -> np.ndarray:
        out = np.zeros((pattern_codes.shape[0], base.size))
        for i in range(pattern_codes.shape[1]):
            out += tables[first + i][pattern_codes[:, i]]
        return out

    head_codes, head_counts = _patterns(split, c, halt, above)
    head_logs = logs(0, head_codes) + base
    found_codes, found_logs = [], []
    # without a halt the second half does not depend on the first: one group
    for used in np.unique(head_counts) if halt else [0]:
        rows = head_counts == used if halt else np.ones(head_counts.size, dtype=bool)
        if halt and used >= c:
            tail_codes = np.full((int(rows.sum()), m - split), above + 1, dtype=np.int32)
            found_codes.append(np.concatenate([head_codes[rows], tail_codes], axis=1))
            found_logs.append(logsumexp(head_logs[rows], axis=1))
            continue
        tail_codes, _ = _patterns(m - split, c - int(used), halt, above)
        pair = _log_matmul(head_logs[rows], logs(split, tail_codes))
        n_head, n_tail = pair.shape
        found_codes.append(
            np.concatenate(
                [np.repeat(head_codes[rows], n_tail, axis=0), np.tile(tail_codes, (n_head, 1))],
                axis=1,
            )
        )
        found_logs.append(pair.ravel())
    all_codes, all_logs = np.concatenate(found_codes), np.concatenate(found_logs)
    order = np.lexsort(all_codes.T[::-1])
    return all_codes[order], all_logs[order]


def _resampled_log_probabilities(q, t, b_t, b_r, b_q, edges, codes, counts, c, halt) -> np.ndarray:
    """A fresh threshold noise after each above: a pattern is a product of independent segments (a
    run of belows ending in an above, and a last run of belows), each one integral over its own
    noise."""
    m = q.size
    n_above = 1 if edges is None else edges.size + 1
    # [start, end, answer]: belows start..end-1, above at end
    seg_above = np.full((m, m, n_above), -np.inf)
    seg_end = np.zeros(m + 1)  # belows from start to the last query
    first = _checked_tables(q, t, b_t, b_q, edges)
    later = _checked_tables(q, t, b_r, b_q, edges) if m > 1 else first
    for s in range(m):
        tables, base = first if s == 0 else later
        belows = np.cumsum(tables[s:, 0], axis=0)
        before = np.concatenate([np.zeros((1, base.size)), belows[:-1]], axis=0)
        seg_above[s, s:] = logsumexp(base + before[:, None, :] + tables[s:, 1:], axis=-1)
        seg_end[s] = logsumexp(base + belows[-1])
    n = codes.shape[0]
    start = np.zeros(n, dtype=np.int64)
    log_p = np.zeros(n)
    for i in range(m):
        symbol = codes[:, i].astype(np.int64)
        hit = (symbol >= 1) & (symbol <= n_above)
        log_p[hit] += seg_above[start[hit], i, symbol[hit] - 1]
        start[hit] = i + 1
    open_end = ~(halt & (counts >= c))
    log_p[open_end] += seg_end[start[open_end]]
    return log_p


# --------------------------------------------------------------------------------------------------
# Report-noisy-max


def _exclusive_sums(values: np.ndarray) -> np.ndarray:
    """``sum_{j != i} values[j]`` along axis 0 without subtracting (``-inf`` entries stay exact)."""
    zero = np.zeros_like(values[:1])
    before = np.concatenate([zero, np.cumsum(values[:-1], axis=0)], axis=0)
    after = np.concatenate([np.cumsum(values[:0:-1], axis=0)[::-1], zero], axis=0)
    return before + after


def noisy_max_law(
    queries: ArrayLike,
    *,
    scale: float,
    noise: NoiseName = "laplace",
    output: Literal["index", "index_and_gap", "index_and_value", "value"] = "index",
    bins: ArrayLike | None = None,
) -> FiniteDistribution:
    """The exact law of report-noisy-max on the query answers ``queries``: ``X_i = q_i + nu_i`` with
    independent noises of scale ``scale``, and the output

    * ``"index"``: ``argmax_i X_i``, ``Pr[i] = int f(x - q_i) prod_{j != i} F(x - q_j) dx``.  eps-DP
      with Laplace or exponential noise of scale ``2 Delta / eps`` (Dwork & Roth Claim 3.9; McKenna
      & Sheldon 2020: exponential noise is permute-and-flip), and of scale ``Delta / eps`` for
      monotone queries; Gumbel noise gives the exponential mechanism, ``Pr[i]`` proportional to
      ``exp(q_i / scale)``;
    * ``"index_and_gap"``: the index and the bin of the gap ``X_(1) - X_(2)`` to the runner-up
      (eps-DP with Laplace noise of scale ``2 Delta / eps``: Ding, Wang, Zhang & Kifer 2019);
    * ``"index_and_value"``: the index and the bin of the noisy maximum ``X_(1)``;
    * ``"value"``: the bin of the noisy maximum alone, ``Pr[X_(1) < e] = prod_j F(e - q_j)`` in
      closed form: not eps-DP for any finite eps in general (Ding, Wang, Wang, Zhang & Kifer 2018,
      Alg. 7 and 8).

    Parameters
    ----------
    queries : array_like
        1-d, non-empty, finite.
    scale : float
        ``> 0``: the Laplace scale, the exponential noise's mean, or the Gumbel scale (location 0).
    noise : {"laplace", "exponential", "gumbel"}
    output : {"index", "index_and_gap", "index_and_value", "value"}
    bins : array_like, optional
        Strictly increasing edges; a value ``v`` falls in bin ``#{k : e_k <= v}``.  Required for
        every output but ``"index"``, refused with it.

    Returns
    -------
    FiniteDistribution
        Labelled by the index (``0 .. m-1``), ``(index, bin)`` tuples, or the bin (``0 .. B``).

    Raises
    ------
    ValidationError
        On bad arguments, more than :data:`MAX_OUTCOMES` outcomes, or a quadrature beyond the memory
        limit.

    Examples
    --------
    >>> law = noisy_max_law([0.0, 1.0], scale=2.0)
    >>> law.probabilities.round(6).tolist()   # Pr[0] = e^{-1/2} (1 + 1/4) / 2
    [0.379082, 0.620918]
    """
    q = _queries(queries)
    b = positive("scale", scale)
    family = _NOISES[choice("noise", noise, ("laplace", "exponential", "gumbel"))]
    output = choice("output", output, ("index", "index_and_gap", "index_and_value", "value"))
    if (output == "index") != (bins is None):
        raise ValidationError(
            "bins",
            "must be given exactly when the output holds a value or a gap (the value is "
            "binned so that the law is finite)",
        )
    edges = None if bins is None else _edges("bins", bins)
    m = q.size
    if output == "value":
        return _noisy_max_value(q, b, family, edges)
    n_out = m if edges is None else m * (edges.size + 1)
    if n_out > MAX_OUTCOMES:
        raise ValidationError(
            "queries",
            f": {m} queries and the bins give {n_out:,} outcomes; at most "
            f"{MAX_OUTCOMES:,} are enumerated",
        )
    if output == "index_and_gap":
        assert edges is not None
        shifts = np.concatenate([[0.0], np.maximum(edges, 0.0)])
        kinks = np.concatenate([q, (q[None, :] + shifts[1:, None]).ravel()])
    else:
        shifts = np.zeros(1)
        kinks = q if edges is None else np.concatenate([q, edges])
    reach_left, reach_right = family.reach(_tail(m))
    lo, hi = kinks.min() - b * reach_left, kinks.max() + b * reach_right
    x, log_w = _rule("scale", kinks, lo, hi, b / (m * family.steepness(_tail(m))))
    memory(
        "queries",
        shifts.size * m * x.size,
        what=f"{shifts.size} x {m} queries x {x.size:,} quadrature nodes",
    )
    log_f = family.log_pdf((x[None, :] - q[:, None]) / b) - math.log(b) + log_w
    others = np.stack(
        [_exclusive_sums(family.log_cdf((x[None, :] - s - q[:, None]) / b)) for s in shifts]
    )
    if output == "index":
        return FiniteDistribution.from_log_weights(logsumexp(log_f + others[0], axis=1))
    assert edges is not None
    n_bins = edges.size + 1
    if output == "index_and_value":
        segment = np.searchsorted(edges, x, side="right")  # nondecreasing: edges are breakpoints
        integrand = log_f + others[0]
        starts = np.searchsorted(segment, np.arange(n_bins), side="left")
        top = np.maximum.reduceat(integrand, starts, axis=1)
        top = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(divide="ignore"):
            log_p = (
                np.log(np.add.reduceat(np.exp(integrand - top[:, segment]), starts, axis=1)) + top
            )
    else:
        # bin k of the gap: between shifts[k] (0 for k = 0) and shifts[k + 1] (infinity for the last
        # bin)
        upper = np.concatenate([others[1:], np.full_like(others[:1], -np.inf)])
        with np.errstate(invalid="ignore", divide="ignore"):
            between = others + np.log(-np.expm1(upper - others))
        between = np.where(np.isfinite(others), between, -np.inf)
        log_p = logsumexp(log_f[None] + between, axis=2).T
    labels = _object_labels((i, k) for i in range(m) for k in range(n_bins))
    return FiniteDistribution.from_log_weights(log_p.ravel(), labels)


def _noisy_max_value(
    q: np.ndarray, b: float, family: _Noise, edges: np.ndarray | None
) -> FiniteDistribution:
    """Bins of the noisy maximum: ``ln Pr[max < e] = sum_j ln F(e - q_j)``, differenced in log space
    (by CDFs below the median of the maximum, by survival functions above it)."""
    assert edges is not None
    log_cdf = family.log_cdf((edges[None, :] - q[:, None]) / b).sum(axis=0)
    with np.errstate(divide="ignore"):
        log_sf = np.log(-np.expm1(log_cdf))
    lower_cdf, upper_cdf = np.concatenate([[-np.inf], log_cdf]), np.concatenate([log_cdf, [0.0]])
    lower_sf, upper_sf = np.concatenate([[0.0], log_sf]), np.concatenate([log_sf, [-np.inf]])
    with np.errstate(divide="ignore", invalid="ignore"):
        by_cdf = upper_cdf + np.log(-np.expm1(lower_cdf - upper_cdf))
        by_sf = lower_sf + np.log(-np.expm1(upper_sf - lower_sf))
    log_p = np.where(upper_cdf <= -_LOG2, by_cdf, by_sf)
    log_p = np.where(np.isnan(log_p), -np.inf, log_p)
    return FiniteDistribution.from_log_weights(log_p, np.arange(edges.size + 1))


# --------------------------------------------------------------------------------------------------
# Binning


def binned(
    sampler: Callable[[object, int, np.random.Generator], ArrayLike], edges: ArrayLike
) -> Callable[[object, int, np.random.Generator], np.ndarray]:
    """A sampler with finite labels: ``binned(sampler, edges)(x, size, rng)`` draws from ``sampler``
    and returns the bin of every number (``#{k : e_k <= v}``, in ``0 .. B``), scalar or vector
    outputs alike. Post-processing, so it is as private as ``sampler`` (Dwork & Roth Prop. 2.1), and
    a mixed or continuous output becomes a finite one that
    :func:`~dpgames.privacy.audit.audit_black_box` or a count can handle.

    Parameters
    ----------
    sampler : callable
        ``sampler(x, size, rng) -> array`` of numbers.
    edges : array_like
        Strictly increasing, finite.

    Returns
    -------
    callable
        ``(x, size, rng) -> numpy.ndarray`` of ``int64`` bin indices, the shape of the sampler's
        output.

    Raises
    ------
    ValidationError
        If ``sampler`` is not callable or the edges are bad; the returned sampler raises it (field
        ``"sampler"``) when the wrapped one returns something other than numbers, or NaN.

    Examples
    --------
    >>> draw = binned(lambda x, size, rng: x + rng.laplace(0.0, 1.0, size), [-1.0, 0.0, 1.0])
    >>> draw(0.0, 6, np.random.default_rng(0)).tolist()
    [2, 1, 0, 0, 2, 3]
    """
    if not callable(sampler):
        raise ValidationError(
            "sampler",
            f"must be a callable sampler(x, size, rng) -> array, got {type(sampler).__name__}",
        )
    cuts = _edges("edges", edges)

    def binned_sampler(x: object, size: int, rng: np.random.Generator) -> np.ndarray:
        values = np.asarray(sampler(x, size, rng))
        if values.dtype.kind not in "biuf":
            raise ValidationError(
                "sampler", f"must return numbers, got an array of dtype {values.dtype}"
            )
        if values.dtype.kind == "f" and np.isnan(values).any():
            raise ValidationError("sampler", "returned NaN, which falls in no bin")
        return np.searchsorted(cuts, values, side="right")

    return binned_sampler
