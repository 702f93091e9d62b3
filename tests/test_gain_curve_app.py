"""The "Gain against a parameter" page under AppTest: its table is the library's gain curve, checked
against a brute force over every profile and lie written here, and the exponential family stays
under its DP bound."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
PAGE = Path(__file__).resolve().parents[1] / "dpgames_app" / "gain_curves.py"


def brute_best_gain(law, n, m):
    """The best lie's gain over every profile (ordered), agent and lie: -|t - o| summed over the
    law."""

    def eu(t, r):
        return sum(-abs(t - o) * p for o, p in law(r).items())

    best = -math.inf
    for r in itertools.product(range(m), repeat=n):
        for i, t in enumerate(r):
            for x in range(m):
                if x != t:
                    best = max(best, eu(t, r[:i] + (x,) + r[i + 1 :]) - eu(t, r))
    return best


def mix_law(q):
    def law(r):
        mean, median = round(sum(r) / len(r)), sorted(r)[len(r) // 2]
        return {mean: 1 - q, median: q} if mean != median else {mean: 1.0}

    return law


def exp_law(eps, m):
    def law(r):
        w = [math.exp(eps * -sum(abs(x - o) for x in r) / (m - 1) / 2) for o in range(m)]
        return {o: wo / sum(w) for o, wo in enumerate(w)}

    return law


def started():
    at = AppTest.from_file(str(PAGE), default_timeout=180)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception] + [
        e.value for e in at.error
    ]
    return at


@pytest.mark.slow
def test_default_mix_table_is_the_brute_force():
    at = started()
    table = at.dataframe[0].value
    assert list(table["q"]) == pytest.approx(np.linspace(0, 1, 9).tolist())
    for q, gain, margin in zip(table["q"], table["max_gain"], table["margin"]):
        best = brute_best_gain(mix_law(q), 3, 5)
        assert gain == pytest.approx(max(best, 0.0), abs=1e-12) and margin == pytest.approx(
            -best, abs=1e-12
        )
    assert table["truthful"].tolist()[-1] and not table["truthful"].tolist()[0]
    assert "def mean_median_mix" in at.expander[0].code[0].value


def test_exponential_family_is_the_brute_force_and_under_the_dp_bound():
    at = started()
    at.sidebar.radio(key="gc.family").set_value("exponential mechanism on a line")
    at.sidebar.number_input(key="gc.n").set_value(2)
    at.sidebar.number_input(key="gc.m").set_value(4)
    at.sidebar.slider(key="gc.count").set_value(3)
    at.run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert list(table["eps"]) == pytest.approx([0.0, 2.0, 4.0])
    for eps, gain in zip(table["eps"], table["max_gain"]):
        assert gain == pytest.approx(max(brute_best_gain(exp_law(eps, 4), 2, 4), 0.0), abs=1e-9)
        assert gain <= math.expm1(eps) * 3 + 1e-12
    # eps = 0: the uniform law ignores reports
    assert table["max_gain"].iloc[0] == pytest.approx(0.0, abs=1e-12)


def test_the_smallest_inputs_run_cleanly_in_both_families():
    at = started()
    at.sidebar.number_input(key="gc.m").set_value(2)
    at.sidebar.number_input(key="gc.n").set_value(1)
    at.run()
    assert not at.exception and not at.error
    at.sidebar.radio(key="gc.family").set_value("exponential mechanism on a line")
    at.run()
    assert not at.exception and not at.error
