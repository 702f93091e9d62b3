"""The digital-goods misreport and privacy audits as they were before the rank-1 rewrite
(2026-11-24), frozen here as the oracle the new implementation is compared with (gains within 1e-12,
the same largest privacy loss).  Log-space blocks over distinct bids x reports, built on the price
law's exact range functionals (``log_range`` / ``log_between``): slow, but exact at any eps.  Test
code only."""

from __future__ import annotations

import numpy as np

from dpgames.mechanisms.price_laws import GridPriceLaw, log_sub

_CHUNK_ELEMENTS = 1 << 19


def _lies_for(law):
    prices = law.prices if isinstance(law, GridPriceLaw) else None
    if prices is not None and prices.size + 1 <= 1001:
        return np.concatenate([[0.0], prices])
    return np.linspace(0.0, 1.0, 101)


def misreport_before(law, values, bids, lies=None):
    """``(gains n x L, truthful n)``: the old ``misreport_audit_of_law`` with
    ``keep_gains=True``."""
    v, b = np.asarray(values, float), np.asarray(bids, float)
    ell = _lies_for(law) if lies is None else np.asarray(lies, float)
    ell_canon = law.canonical(ell)
    at_lie = law.log_range(-1.0, ell_canon)
    truthful = np.empty(b.size)
    gains = np.empty((b.size, ell.size))
    rows = max(1, _CHUNK_ELEMENTS // ell.size)
    for who, a, c, m0, m1, same in _by_distinct_bid(law, b, ell_canon, at_lie, rows):
        vv = v[who]
        t = vv * m0 - m1
        g = a * vv[:, None] - c - t[:, None]
        g[same] = 0.0
        truthful[who] = t
        gains[who] = g
    return gains, truthful


def _by_distinct_bid(law, b, ell, at_lie, rows):
    u, inv = np.unique(law.canonical(b), return_inverse=True)
    order = np.argsort(inv, kind="stable")
    starts = np.searchsorted(inv[order], np.arange(0, u.size + rows, rows))
    for block, first in enumerate(range(0, u.size, rows)):
        a, c, at_bid = _liar_coefficients(law, u[first : first + rows], ell, at_lie)
        agents = order[starts[block] : starts[block + 1]]
        for lo in range(0, agents.size, rows):
            who = agents[lo : lo + rows]
            j = inv[who] - first
            yield (
                who,
                a[j],
                c[j],
                np.exp(at_bid[0][j]),
                np.exp(at_bid[1][j]),
                u[inv[who]][:, None] == ell[None, :],
            )


def log_normaliser_ratio(law, bids, reports, at_bid, at_report):
    bb, rr = bids[:, None], reports[None, :]
    between = law.log_between(bids, reports)
    above_bid = law.log_range(bids, 2.0)[0][:, None]
    up = np.logaddexp(0.0, log_sub(between[2], between[0]))
    down = np.logaddexp(np.logaddexp(at_report[0][None, :], above_bid), between[4])
    return np.where(rr > bb, up, np.where(rr < bb, down, 0.0)), between


def _liar_coefficients(law, u, ell, at_lie):
    at_bid = law.log_range(-1.0, u)
    log_z, between = log_normaliser_ratio(law, u, ell, at_bid, at_lie)
    raising = ell[None, :] > u[:, None]
    log_a = np.where(raising, np.logaddexp(at_bid[0][:, None], between[2]), at_lie[0][None, :])
    log_c = np.where(raising, np.logaddexp(at_bid[1][:, None], between[3]), at_lie[1][None, :])
    return np.exp(log_a - log_z), np.exp(log_c - log_z), at_bid


def privacy_losses_before(law, bids, replacements=None):
    """Distinct canonical bids x replacements: the old audit's largest ``|privacy loss|`` per pair
    (its ``max_loss`` is the largest entry), and the distinct canonical bids."""
    b = np.asarray(bids, float)
    r = _lies_for(law) if replacements is None else np.asarray(replacements, float)
    r_canon = law.canonical(r)
    at_r = law.log_range(-1.0, r_canon)
    u = np.unique(law.canonical(b))
    log_z, _ = log_normaliser_ratio(law, u, r_canon, law.log_range(-1.0, u), at_r)
    bb, rr = u[:, None], r_canon[None, :]
    sign = np.where(rr > bb, 1.0, -1.0)
    lo, hi = np.minimum(bb, rr), np.maximum(bb, rr)
    p_low, p_high, inside, outside = law.prices_between(lo, hi)
    k = law.scale
    in_loss = np.maximum(np.abs(sign * k * p_low - log_z), np.abs(sign * k * p_high - log_z))
    return np.maximum(np.where(inside, in_loss, 0.0), np.where(outside, np.abs(log_z), 0.0)), u
