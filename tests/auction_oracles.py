"""Independent oracles for the digital-goods auction, written plainly (loops, math,
scipy.integrate), on purpose unlike the library's vectorised, log-space code."""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate


def grid_price_probabilities(prices, bids, epsilon, sensitivity=None):
    """P[p] proportional to exp(eps * Rev(p) / (2 * max price)), by loops over prices and bids."""
    delta = max(prices) if sensitivity is None else sensitivity
    revenues = [p * sum(1 for b in bids if b >= p) for p in prices]
    top = max(revenues)
    weights = [math.exp(epsilon * (r - top) / (2 * delta)) for r in revenues]
    total = sum(weights)
    return [w / total for w in weights]


def grid_utility(prices, bids, epsilon, value, report, sensitivity=None):
    """E[(value - p) 1{report >= p}] with the price law computed on ``bids`` (the report
    included)."""
    probs = grid_price_probabilities(prices, bids, epsilon, sensitivity)
    return sum(q * (value - p) for q, p in zip(probs, prices) if report >= p)


def continuous_density(bids, epsilon):
    """The unnormalised density exp(eps * p * #{b >= p} / 2) on [0, 1] and its break points."""
    bids = list(bids)

    def f(p):
        return math.exp(epsilon * p * sum(1 for b in bids if b >= p) / 2)

    points = sorted(set([0.0, 1.0] + [b for b in bids if 0 < b < 1]))
    return f, points


def _integral(g, points, upper=1.0):
    total = 0.0
    for lo, hi in zip(points[:-1], points[1:]):
        hi = min(hi, upper)
        if hi > lo:
            total += integrate.quad(g, lo, hi, epsabs=1e-13, epsrel=1e-12)[0]
    return total


def continuous_utility(bids, epsilon, value, report):
    f, points = continuous_density(bids, epsilon)
    z = _integral(f, points)
    pts = sorted(set(points + [min(max(report, 0.0), 1.0)]))
    return _integral(lambda p: f(p) * (value - p), pts, upper=report) / z


def continuous_cdf(bids, epsilon):
    f, points = continuous_density(bids, epsilon)
    z = _integral(f, points)

    def cdf(x):
        pts = sorted(set(points + [float(x)]))
        return _integral(f, pts, upper=float(x)) / z

    return np.vectorize(cdf)


def continuous_expected_revenue(bids, epsilon):
    f, points = continuous_density(bids, epsilon)
    z = _integral(f, points)
    return _integral(lambda p: f(p) * p * sum(1 for b in bids if b >= p), points) / z
