"""Page: the exact gain from lying against a parameter (dpgames.analysis.curves).

Two textbook families written as a user would write them (a rule and a utility, through the public
``CustomMechanism``): the rounded mean mixed with the median (weight ``q`` on the median:
strategy-proof at ``q = 1``, Moulin 1980) and the exponential mechanism choosing a point on a line
(``eps``-DP, so a lie gains at most ``(e^eps - 1)`` times the utility range: Dwork & Roth 10.2.1).
Every number comes from :func:`~dpgames.analysis.curves.gain_curve` (the exact dominant-strategy
audit at each value).
"""

from __future__ import annotations

import inspect
import math

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dpgames import CustomMechanism
from dpgames.analysis.curves import GainCurve, gain_curve
from dpgames_app.ui import checked, downloads, figure, show_chart

TITLE = "Gain against a parameter"
FAMILIES = ("mean/median mix", "exponential mechanism on a line")


def mean_median_mix(q: float, m: int) -> CustomMechanism:
    """With probability ``1 - q`` the rounded mean of the reports, with probability ``q`` their
    median."""

    def rule(reports):
        mean, median = round(sum(reports) / len(reports)), sorted(reports)[len(reports) // 2]
        return {mean: 1 - q, median: q} if mean != median else {mean: 1.0}

    return CustomMechanism(rule, lambda t, o: -abs(t - o), types=range(m), anonymous=True)


def exponential_on_a_line(eps: float, m: int) -> CustomMechanism:
    """A point o of {0, ..., m-1} with probability proportional to exp(eps * score / 2), the score
    -sum_i |r_i - o| of sensitivity m - 1 (rescaled to 1): eps-DP in each report."""

    def rule(reports):
        score = np.array([-sum(abs(r - o) for r in reports) for o in range(m)]) / (m - 1)
        w = np.exp(eps * (score - score.max()) / 2)
        return dict(zip(range(m), (w / w.sum()).tolist()))

    return CustomMechanism(rule, lambda t, o: -abs(t - o), types=range(m), anonymous=True)


BUILDERS = {FAMILIES[0]: (mean_median_mix, "q"), FAMILIES[1]: (exponential_on_a_line, "eps")}


@st.cache_data(max_entries=16, show_spinner="Auditing every profile at each value...")
def curve(family: str, n: int, m: int, values: tuple[float, ...]) -> GainCurve:
    build, parameter = BUILDERS[family]
    return gain_curve(lambda v: build(v, m), values, parameter=parameter, n=n, profiles="all")


def inputs() -> tuple[str, int, int, tuple[float, ...]]:
    side = st.sidebar
    side.header("Mechanism family")
    family = side.radio("family", FAMILIES, key="gc.family")
    n = side.number_input("agents n", 1, 5, 3, key="gc.n")
    m = side.number_input("types (points 0 ... m-1)", 2, 7, 5, key="gc.m")
    side.header("Parameter grid")
    top = 1.0 if family == FAMILIES[0] else 4.0
    low = side.number_input("from", 0.0, top, 0.0, key=f"gc.low.{family}")
    high = side.number_input("to", 0.0, top, top, key=f"gc.high.{family}")
    count = side.slider("values", 2, 21, 9, key="gc.count")
    return family, int(n), int(m), tuple(np.linspace(low, high, count).tolist())


def chart(c: GainCurve, bound: pd.DataFrame | None) -> None:
    # field names without quotes or dots: Vega-Lite reads them as expressions (an apostrophe draws
    # nothing)
    frame = pd.DataFrame(
        {
            c.parameter: c.values,
            "best_gain": c.best_gain,
            "verdict": np.where(c.truthful, "truthful", "a lie gains"),
        }
    )
    x = alt.X(f"{c.parameter}:Q", title=c.parameter)
    y = alt.Y("best_gain:Q", title="best lie's gain (max_gain above 0, -margin below)")
    layers = [
        alt.Chart(frame).mark_line().encode(x=x, y=y),
        alt.Chart(frame)
        .mark_circle(size=70)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "verdict:N",
                scale=alt.Scale(domain=["truthful", "a lie gains"], range=["#2ca02c", "#d62728"]),
            ),
            tooltip=list(frame.columns),
        ),
        alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(color="gray").encode(y="zero:Q"),
    ]
    if bound is not None:
        layers.append(
            alt.Chart(bound)
            .mark_line(strokeDash=[4, 3], color="gray")
            .encode(x=x, y="bound:Q", tooltip=list(bound.columns))
        )
    show_chart(alt.layer(*layers).properties(height=360))


def tiles(c: GainCurve) -> None:
    """The curve in three figures: the largest gain over the grid, where it is reached, and the
    values at which no lie gains (exactly truthful)."""
    worst = int(np.argmax(c.best_gain))
    truthful = [v for v, ok in zip(c.values, c.truthful) if ok]
    left, middle, right = st.columns(3)
    left.metric("largest gain over the grid", figure(max(float(c.best_gain[worst]), 0.0)))
    middle.metric(f"at {c.parameter}", figure(float(c.values[worst])))
    right.metric(
        "exactly truthful at",
        ", ".join(figure(float(v)) for v in truthful[:4]) + (" ..." if len(truthful) > 4 else "")
        if truthful
        else "no value of the grid",
    )


def page() -> None:
    st.title(TITLE)
    st.caption(
        "The exact dominant-strategy audit (every profile, every agent, every lie) of "
        "one mechanism "
        "per parameter value: the best lie's gain against the parameter, each value's worst case "
        "below.  Your own family: `dpgames gain-curve mine.py:build --values linspace:0:1:9 --n 3` "
        "(the code of this one is under the chart)."
    )
    family, n, m, values = inputs()
    c = checked(curve, family, n, m, values)
    bound = None
    if family == FAMILIES[1]:
        bound = pd.DataFrame(
            {"eps": c.values, "bound": [math.expm1(e) * (m - 1) for e in c.values]}
        )
        st.caption(
            "Dashed: the bound (e^eps - 1)(m - 1) of an eps-DP mechanism with utilities in "
            "[-(m - 1), 0] (Dwork & Roth, Prop. 10.1's argument); the exact gain is below it."
        )
    tiles(c)
    chart(c, bound)
    table = pd.DataFrame(c.worst_rows())
    st.dataframe(table, hide_index=True, width="stretch")
    with st.expander(
        "The family's code (save it as mine.py for `dpgames gain-curve`)", icon=":material/code:"
    ):
        st.code(inspect.getsource(BUILDERS[family][0]), language="python")
    downloads("gain_curve", None, {"gain curve": table}, None, key="gc_download")


page()
