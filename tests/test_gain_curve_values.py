"""A GainCurve built by hand from plain sequences (lists, tuples) reads like one built by
``gain_curve``."""

import math

import numpy as np
import pytest

from dpgames.analysis.curves import GainCurve


@pytest.mark.parametrize("kind", [list, tuple, np.asarray])
def test_rows_describe_and_csv_accept_plain_sequences(kind):
    curve = GainCurve(
        "q",
        kind([0.0, 0.5]),
        kind([1.0, 0.0]),
        kind([-1.0, math.inf]),
        kind([False, True]),
        [{"agent": 0, "lie": 2, "gain": 1.0}, {}],
        "DominantAudit",
        0.0,
    )
    assert curve.rows() == [
        {"q": 0.0, "max_gain": 1.0, "margin": -1.0, "truthful": False},
        {"q": 0.5, "max_gain": 0.0, "margin": math.inf, "truthful": True},
    ]
    assert curve.best_gain.tolist() == [1.0, -math.inf]
    assert "(2 values, tol 0)" in curve.describe().splitlines()[0]
    assert curve.csv().splitlines() == [
        "q,max_gain,margin,truthful,worst_agent,worst_lie",
        "0.0,1.0,-1.0,False,0,2",
        "0.5,0.0,inf,True,,",
    ]
    assert isinstance(curve.worst_cases, tuple)
