"""Exact laws after one agent changes her report, for mechanisms with additive log-weights.

The exponential mechanism over an environment (score = the sum of the agents' contributions) and
Huang & Kannan's mechanism both draw outcome ``s`` with probability proportional to

    exp(k * sum_i c[t_i, s] + const(s)).

If one agent of type ``a`` reports ``x`` instead, the weights are multiplied by
``exp(k (c[x, s] - c[a, s]))``; nothing else changes.  So from the law ``P`` of the truthful
profile, for every class ``a`` (rows) and every report ``x`` (columns) at once:

    rho[a, x]      = Z(a -> x) / Z = sum_s P(s) exp(k (c[x, s] - c[a, s]))
    E_{a->x}[f_a]  = sum_s P(s) exp(-k c[a, s]) f[a, s] exp(k c[x, s]) / rho[a, x]
    E_{a->x}[g_x]  = sum_s P(s) exp(-k c[a, s]) g[x, s] exp(k c[x, s]) / rho[a, x]

which are matrix products (D x K times K x m): all D x m deviations cost O(D m K) flops, against
D m recomputations of an O(n K) law by brute force.  Exponents are centred per outcome (their
spread is at most ``k * Delta``); when ``k * Delta`` is too large for floats the same sums are taken
in log space, block by block (slower, still exact).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy.special import logsumexp

from dpgames.validation import ValidationError

#: Largest ``k * Delta`` for the matrix-product path (exp(k Delta) must stay far below float max).
MATMUL_SPREAD = 600.0
#: Floats per block array (8 MB): the log-space path holds two ``b x m x K`` arrays per block, the
#: type-space audit a few ``(classes x true types) x K`` ones; memory stays O(block), not O(D m K).
_BLOCK_ELEMENTS = 1 << 20


Term = tuple[np.ndarray | None, np.ndarray | None]


@dataclass(frozen=True)
class Deviations:
    """For rows = classes ``a`` and columns = reports ``x``: ``log_ratio = log Z(a->x) - log Z``
    and, for each requested term ``(f, g)``, ``E_{a->x}[f[a, s] g[x, s]]`` (D x m each).

    Parameters
    ----------
    log_ratio : numpy.ndarray
        ``D x m``: the log of the ratio of normalisers after each class's lie.
    expectations : list of numpy.ndarray
        One ``D x m`` array per requested term.

    Examples
    --------
    One agent of type 0; two outcomes; type ``t`` adds 1 to outcome ``t``'s log-weight (``k = 1``).
    If she reports type 1 instead, the law moves from ``(e, 1) / (1 + e)`` to ``(1, e) / (1 + e)``:

    >>> c = np.eye(2)                               # contribution[type, outcome]
    >>> log_p = np.log(np.array([np.e, 1.0]) / (1 + np.e))
    >>> at_zero = np.array([[1.0, 0.0], [1.0, 0.0]])  # g[report, outcome]: the outcome is 0
    >>> dev = deviations(log_p, c, 1.0, np.array([0]), [(None, at_zero)])
    >>> dev.expectations[0].round(4).tolist()       # P[outcome 0] after reporting 0, 1
    [[0.7311, 0.2689]]
    >>> bool(np.abs(dev.log_ratio).max() < 1e-15)   # same normaliser: (1 + e) both ways
    True
    """

    log_ratio: np.ndarray
    expectations: list[np.ndarray]


def deviations(
    log_p: np.ndarray,
    contribution: np.ndarray,
    scale: float,
    rows: np.ndarray,
    terms: Sequence[Term] = (),
    score: np.ndarray | None = None,
) -> Deviations:
    """Exact expectations under the law after each class in ``rows`` reports each type instead
    (returns :class:`Deviations`; memory O(block) in the log-space path).

    ``log_p`` (K) is the truthful profile's log-law (normalised, or log-weights with any normaliser:
    at large ``k`` pass ``k (W - max W)`` and ``score = W - max W``: the law after a lie is then
    ``k (score + c[x] - c[a])``, summed before the one multiplication, so it rounds only once),
    ``contribution`` (m x K) the per-type
    term ``c`` of the log-weight, ``scale`` the factor ``k``.  Each term ``(f, g)`` asks for
    ``E_{a->x}[f[a, s] g[x, s]]`` with ``f`` D x K (a row per class in ``rows``) and ``g`` m x K;
    ``None`` stands for 1 (so ``(f, None)`` is the deviator's own value, ``(None, g)`` her
    report's)."""
    c = np.asarray(contribution, dtype=float)
    spread = scale * float(np.max(c.max(axis=0) - c.min(axis=0)))
    if spread <= MATMUL_SPREAD:
        out = _by_matmul(log_p, c, scale, rows, terms)
    else:
        out = _in_log_space(log_p, c, scale, rows, terms, score)
    # log_p may be unnormalised log-weights (e.g. k (W - max W), which a lie shifts without
    # rounding): the expectations do not depend on the normaliser, the ratio is taken against it
    return Deviations(out.log_ratio - logsumexp(log_p), out.expectations)


def _by_matmul(log_p, c, scale, rows, terms) -> Deviations:
    mid = (c.max(axis=0) + c.min(axis=0)) / 2
    tilt = scale * (c - mid)  # |tilt| <= k Delta / 2
    left = np.exp(log_p[None, :] - tilt[rows])  # D x K: P(s) exp(-k (c[a, s] - mid_s))
    right = np.exp(tilt)  # m x K: exp(k (c[x, s] - mid_s))
    rho = left @ right.T
    out = [
        ((left if f is None else left * f) @ (right if g is None else right * g).T) / rho
        for f, g in terms
    ]
    return Deviations(np.log(rho), out)


def _in_log_space(log_p, c, scale, rows, terms, score=None) -> Deviations:
    m, k_out = c.shape
    d = rows.size
    log_ratio = np.empty((d, m))
    out = [np.empty((d, m)) for _ in terms]
    block = max(1, _BLOCK_ELEMENTS // (m * k_out))
    for start in range(0, d, block):
        sl = slice(start, start + block)
        # the difference c[x] - c[a] first, then the factor: at k c ~ 1e7, k c[x] - k c[a] would
        # carry ~1e-9 of rounding into the exponent (and the law)
        if score is None:
            # b x m x K
            logw = log_p[None, None, :] + scale * (c[None, :, :] - c[rows[sl]][:, None, :])
        else:  # log_p = k * score: add in score units, multiply once
            logw = scale * (score[None, None, :] + (c[None, :, :] - c[rows[sl]][:, None, :]))
        lz = logsumexp(logw, axis=2)
        logw -= lz[:, :, None]
        w = np.exp(logw, out=logw)  # in place: one b x m x K array per block
        log_ratio[sl] = lz
        weighted = np.empty_like(w) if any(f is not None for f, _ in terms) else None
        for target, (f, g) in zip(out, terms):
            term = (
                w
                if f is None
                else np.multiply(w, f[sl][:, None, :], out=cast(np.ndarray, weighted)[: w.shape[0]])
            )
            target[sl] = term.sum(axis=2) if g is None else np.einsum("bxs,xs->bx", term, g)
    return Deviations(log_ratio, out)


def log_ratio_without(
    log_p: np.ndarray, contribution: np.ndarray, scale: float, rows: np.ndarray
) -> np.ndarray:
    """``log Z_{-a} - log Z`` for each class ``a`` in ``rows``: the law's normaliser once one agent
    of type ``a`` is removed (``logsumexp_s (log P(s) - k c[a, s])``)."""
    return logsumexp(log_p[None, :] - scale * contribution[rows], axis=1) - logsumexp(log_p)


#: Largest ``classes x types x types x outcomes`` the audit over every true type accepts.
TYPE_SPACE_LIMIT = 2e8


def check_type_space_size(n_classes: int, n_types: int, n_outcomes: int) -> None:
    """Refuse an audit over every true type that would cost more than :data:`TYPE_SPACE_LIMIT`."""
    cost = n_classes * n_types * n_types * n_outcomes
    if cost > TYPE_SPACE_LIMIT:
        raise ValidationError(
            "true_types",
            f"='all': classes x types x types x outcomes = {n_classes} x "
            f"{n_types} x {n_types} x {n_outcomes} = {cost:,} exceeds {TYPE_SPACE_LIMIT:,.0f}; "
            "use the realised-type audit (true_types='own')",
        )


def deviations_by_true_type(
    log_p: np.ndarray,
    contribution: np.ndarray,
    scale: float,
    rows: np.ndarray,
    terms: list[tuple[np.ndarray, np.ndarray | None]],
    score: np.ndarray | None = None,
) -> Deviations:
    """:func:`deviations` with an axis for the deviator's *true* type, which need not be her class.

    Each term ``(f, g)`` has ``f`` indexed by true type (m_t x K) and asks for
    ``E_{a->x}[f[t, s] g[x, s]]``, returned as D x m_t x m (class ``a``, true type ``t``, report
    ``x``); ``log_ratio`` is D x m as before.  The law after ``a -> x`` does not depend on ``t``:
    each class row is repeated once per true type (blocks of classes, bounded memory), O(D m_t m K)
    in all.  Raises ValueError above :data:`TYPE_SPACE_LIMIT`."""
    n_true = terms[0][0].shape[0]
    m, k_out = contribution.shape
    check_type_space_size(rows.size, max(n_true, m), k_out)
    log_ratio = np.empty((rows.size, m))
    out = [np.empty((rows.size, n_true, m)) for _ in terms]
    block = max(1, _BLOCK_ELEMENTS // (n_true * k_out))
    for start in range(0, rows.size, block):
        part = rows[start : start + block]
        dev = deviations(
            log_p,
            contribution,
            scale,
            np.repeat(part, n_true),
            [(np.tile(f, (part.size, 1)), g) for f, g in terms],
            score,
        )
        log_ratio[start : start + part.size] = dev.log_ratio[::n_true]
        for target, values in zip(out, dev.expectations):
            target[start : start + part.size] = values.reshape(part.size, n_true, m)
    return Deviations(log_ratio, out)
