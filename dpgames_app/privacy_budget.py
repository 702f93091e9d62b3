"""Page: the privacy budget, composing one mechanism over k rounds under four accounting methods,
and the exact privacy loss of one round on two neighbouring inputs.

Presentation only: every total comes from :class:`dpgames.privacy.Accountant` (``totals``), every
per-round guarantee from the mechanism's own ``guarantee``, the Gaussian noise from its analytic
calibration, and the privacy-loss distributions and privacy curves from the mechanisms' exact laws
(:func:`dpgames.privacy.audit_finite`, :func:`~dpgames.privacy.hockey_stick_divergence`) or the
closed forms of :mod:`dpgames.privacy.audit` and :mod:`dpgames.privacy.gaussian`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dpgames.display import format_number
from dpgames.privacy import (
    AboveThreshold,
    Accountant,
    ExponentialMechanism,
    FiniteDistribution,
    GaussianMechanism,
    KaryResponse,
    LaplaceMechanism,
    PrivacyGuarantee,
    SparseVector,
    audit_finite,
    gaussian_delta,
    hockey_stick_divergence,
    laplace_delta,
)
from dpgames.validation import ValidationError, finite_array
from dpgames_app.ui import checked, downloads, figure, remember, show_chart

TITLE = "Privacy budget"
MECHANISMS = (
    "Laplace",
    "Gaussian",
    "Exponential mechanism",
    "Randomized response",
    "Sparse vector",
)
DELTAS = [10.0**-e for e in range(12, 1, -1)]  # 1e-12 .. 1e-2, one power of ten a step
METHODS = ("basic", "advanced", "zcdp", "rdp")
METHOD_NAMES = {"basic": "basic", "advanced": "advanced", "zcdp": "zCDP", "rdp": "Renyi DP"}
COLUMNS = [METHOD_NAMES[m] for m in METHODS]  # the table's columns, in the theorems' order
MAX_ROUNDS = 10**6
FORMULAS = {
    "basic": (
        r"\varepsilon_{\mathrm{tot}} = \sum_{i=1}^{k} \varepsilon_i, \qquad "
        r"\delta_{\mathrm{tot}} = \sum_{i=1}^{k} \delta_i",
        "Basic composition (Dwork & Roth, Thm 3.16).",
    ),
    "advanced": (
        r"\varepsilon_{\mathrm{tot}} = \sqrt{2 \ln(1/\delta') \sum_i \varepsilon_i^2}"
        r" + \sum_i \varepsilon_i \left(e^{\varepsilon_i} - 1\right), \qquad "
        r"\delta_{\mathrm{tot}} = \sum_i \delta_i + \delta'",
        "Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth, Thm 3.20).",
    ),
    "zcdp": (
        r"\rho_{\mathrm{tot}} = \sum_i \rho_i \;\left(\varepsilon\text{-DP} \Rightarrow "
        r"\tfrac{\varepsilon^2}{2}\text{-zCDP}\right), \qquad "
        r"\varepsilon = \rho_{\mathrm{tot}} + 2\sqrt{\rho_{\mathrm{tot}} \ln(1/\delta)}",
        "zCDP (Bun & Steinke 2016, Lemma 2.3, Prop. 1.3 and 1.4; the library also tries the RDP "
        "conversion below and keeps the smaller eps).",
    ),
    "rdp": (
        r"\varepsilon_{\mathrm{tot}}(\alpha) = \sum_i \varepsilon_i(\alpha), \qquad "
        r"\varepsilon = \min_{\alpha > 1} \; \varepsilon_{\mathrm{tot}}(\alpha) + "
        r"\ln\frac{\alpha - 1}{\alpha}"
        r" - \frac{\ln \delta + \ln \alpha}{\alpha - 1}",
        "Renyi DP (Mironov 2017, Prop. 1; conversion of Canonne, Kamath & Steinke 2020, Prop. 12), "
        "over a grid of orders alpha.",
    ),
}


# ---------------------------------------------------------------- library calls


def mechanism_for(kind: str, epsilon: float, delta_round: float, values: int, positives: int):
    """The mechanism one round runs (its ``guarantee`` is what the accountant composes)."""
    if kind == "Laplace":
        return LaplaceMechanism(epsilon)
    if kind == "Gaussian":
        return GaussianMechanism.analytic(epsilon, delta_round)
    if kind == "Exponential mechanism":
        return ExponentialMechanism(epsilon)
    if kind == "Randomized response":
        return KaryResponse(values, epsilon)
    return (
        AboveThreshold(epsilon, 0.0)
        if positives == 1
        else SparseVector(epsilon, 0.0, max_positives=positives)
    )


def rounds_grid(k_max: int) -> np.ndarray:
    """About 40 round counts from 1 to ``k_max``, log-spaced (the chart's axis is logarithmic)."""
    return np.unique(np.geomspace(1, k_max, 40).round().astype(np.int64))


def composition_table(guarantee: PrivacyGuarantee, k_max: int, delta: float) -> pd.DataFrame:
    """eps at ``delta`` of ``k`` runs of ``guarantee`` for every method and k (inf: no bound by
    it)."""
    rows = []
    for k in rounds_grid(k_max):
        totals = Accountant().spend("round", guarantee, int(k)).totals(delta)
        rows.append(
            {
                "rounds k": int(k),
                **{
                    METHOD_NAMES[m]: totals[m].epsilon if m in totals else math.inf for m in METHODS
                },
            }
        )
    frame = pd.DataFrame(rows)
    frame["best"] = frame[COLUMNS].min(axis=1)
    return frame


def neighbouring_inputs(
    kind: str, mechanism, scores: np.ndarray | None
) -> tuple[Callable, tuple, str]:
    """The exact law of one round (input -> FiniteDistribution), two neighbouring inputs, and what
    they are (``scores`` None: randomized response, the one mechanism here whose inputs are not
    scores)."""
    if scores is None:
        return mechanism.output_distribution, (0, 1), "one respondent's true value: 0 vs 1"
    if kind == "Exponential mechanism":
        moved = scores + np.where(np.arange(scores.size) == 0, -1.0, 1.0)  # every score moves by 1
        return (
            mechanism.distribution,
            (scores, moved),
            "scores s vs s': the first candidate's score 1 lower, every other 1 higher",
        )
    return (
        mechanism.output_distribution,
        (scores, scores + 1.0),
        "query answers a vs a + 1 (outcome: the halting query's index; -1: never halted)",
    )


def loss_table(p: FiniteDistribution, q: FiniteDistribution) -> pd.DataFrame:
    """The privacy-loss distribution ``L = ln P(o) - ln Q(o)`` with ``o ~ P``: each loss value and
    its probability under P (outcomes with the same loss merged)."""
    loss = p.privacy_loss(q)
    frame = pd.DataFrame(
        {
            "outcome": [str(o) for o in p.outcomes],
            "P(o)": p.probabilities,
            "Q(o)": q.probabilities,
            "privacy loss ln P(o)/Q(o)": loss,
        }
    )
    return frame[frame["P(o)"] > 0]


def privacy_curve(kind: str, mechanism, laws, epsilons: np.ndarray) -> np.ndarray:
    """The exact smallest delta at each eps' for one round on the neighbouring inputs (both
    orders)."""
    if kind == "Laplace":
        return np.array([laplace_delta(e, 1.0, mechanism.scale) for e in epsilons])
    if kind == "Gaussian":
        return np.array([gaussian_delta(e, mechanism.mu) for e in epsilons])
    p, q = laws
    return np.array(
        [max(hockey_stick_divergence(p, q, e), hockey_stick_divergence(q, p, e)) for e in epsilons]
    )


def parse_scores(text: str, what: str) -> np.ndarray:
    """Numbers separated by commas (at least two, finite): the scores or query answers of the
    example."""
    try:
        values = [float(x) for x in text.replace(";", ",").split(",") if x.strip()]
    except ValueError:
        raise ValidationError(what, f"must be numbers separated by commas, got {text!r}") from None
    scores = finite_array(what, values, ndim=1)
    if scores.size < 2 or scores.size > 50:
        raise ValidationError(what, f"must hold 2 to 50 numbers, got {scores.size}")
    return scores


# ---------------------------------------------------------------- page


def inputs() -> dict:
    side = st.sidebar
    side.header("One round")
    kind = side.selectbox(
        "mechanism", MECHANISMS, key=remember("pb.kind", "Laplace"), persist_state="session"
    )
    epsilon = side.number_input(
        "epsilon per round",
        min_value=0.0,
        max_value=100.0,
        format="%.4f",
        key=remember("pb.eps", 0.1),
        persist_state="session",
        help="For the Gaussian: the target epsilon of its analytic calibration.",
    )
    delta_round, values, positives = 1e-8, 2, 1
    if kind == "Gaussian":
        delta_round = side.select_slider(
            "delta per round (analytic calibration)",
            DELTAS,
            key=remember("pb.dr", 1e-8),
            format_func=lambda d: f"{d:.0e}",
            persist_state="session",
        )
    if kind == "Randomized response":
        values = side.number_input(
            "number of answers k", 2, 1000, key=remember("pb.values", 2), persist_state="session"
        )
    if kind == "Sparse vector":
        positives = side.number_input(
            "answers 'above' before it stops (c)",
            1,
            100,
            key=remember("pb.c", 1),
            persist_state="session",
        )
    side.header("Composition")
    k_max = side.number_input(
        "rounds k (up to)", 1, MAX_ROUNDS, key=remember("pb.k", 10_000), persist_state="session"
    )
    delta = side.select_slider(
        "total delta",
        DELTAS,
        key=remember("pb.delta", 1e-6),
        format_func=lambda d: f"{d:.0e}",
        persist_state="session",
    )
    return {
        "kind": kind,
        "epsilon": float(epsilon),
        "delta_round": float(delta_round),
        "values": int(values),
        "positives": int(positives),
        "k_max": int(k_max),
        "delta": float(delta),
    }


def composition_chart(frame: pd.DataFrame, delta: float) -> alt.Chart:
    long = frame.melt("rounds k", COLUMNS, "accounting", "epsilon")
    long = long[np.isfinite(long["epsilon"]) & (long["epsilon"] > 0)]
    # distinct colours and dashes: where two methods agree (e.g. basic and RDP for few rounds) both
    # show
    return (
        alt.Chart(long)
        .mark_line(point=True, strokeWidth=2)
        .encode(
            x=alt.X("rounds k:Q", scale=alt.Scale(type="log"), title="rounds k (log scale)"),
            # axis titles no longer than the plot is high: a longer rotated title pushes the chart's
            # title out of view
            y=alt.Y("epsilon:Q", scale=alt.Scale(type="log"), title="total epsilon (log scale)"),
            color=alt.Color(
                "accounting:N",
                title="accounting",
                sort=COLUMNS,
                scale=alt.Scale(scheme="category10"),
                legend=alt.Legend(labelLimit=0),
            ),
            strokeDash=alt.StrokeDash("accounting:N", sort=COLUMNS, legend=None),
            tooltip=["rounds k", "accounting", alt.Tooltip("epsilon:Q", format=".6g")],
        )
        .properties(
            title=f"Total epsilon of k rounds at delta = {delta:.0e}, by accounting method",
            height=380,
        )
    )


def composition_section(s: dict, mechanism) -> pd.DataFrame:
    guarantee = mechanism.guarantee
    st.markdown(
        f"One round: **{guarantee}**"
        + (
            f"; Gaussian noise sigma = {figure(mechanism.sigma)} "
            f"(analytic calibration, Balle & Wang 2018)"
            if s["kind"] == "Gaussian"
            else ""
        )
    )
    frame = checked(composition_table, guarantee, s["k_max"], s["delta"])
    last = frame.iloc[-1]
    cols = st.columns(len(METHODS) + 1)
    cols[0].metric("rounds k", f"{int(last['rounds k']):,}")
    for col, name in zip(cols[1:], COLUMNS):
        col.metric(
            f"{name} epsilon",
            format_number(float(last[name])) if math.isfinite(last[name]) else "no bound",
        )
    show_chart(composition_chart(frame, s["delta"]))
    missing = [name for name in COLUMNS if not np.isfinite(frame[name]).all()]
    if missing:
        st.caption(
            f"Not drawn where it gives no bound (epsilon = inf): {', '.join(missing)}. "
            "Basic composition "
            "needs the rounds' deltas to sum to at most the total delta, advanced "
            "composition strictly "
            "less; a round stated in zCDP only has no pure epsilon."
        )
    with st.expander("The composition theorems", expanded=False):
        for m in METHODS:
            formula, source = FORMULAS[m]
            st.markdown(f"**{METHOD_NAMES[m]}**: {source}")
            st.latex(formula)
    st.dataframe(frame, hide_index=True, width="stretch")
    return frame


def loss_section(s: dict, mechanism) -> pd.DataFrame | None:
    st.subheader("One round on two neighbouring inputs: the exact privacy loss")
    eps_grid = np.linspace(0.0, 2.0 * max(s["epsilon"], 1e-3), 41)
    laws, table = None, None
    if s["kind"] in ("Laplace", "Gaussian"):
        st.caption(
            "Continuous output: the exact privacy curve from its closed form (Laplace: "
            "the hockey-stick "
            "divergence of two shifted Laplace laws; Gaussian: Balle & Wang 2018, Thm "
            "8), inputs one "
            "sensitivity apart."
        )
    elif s["kind"] == "Sparse vector" and s["positives"] > 1:
        st.info("The exact law is computed for AboveThreshold (c = 1); set c = 1 to see it.")
        return None
    else:
        default = "3, 1, 2, 0.5" if s["kind"] == "Exponential mechanism" else "-1, 0.5, -2, 1"
        label = (
            "scores s (one per candidate)"
            if s["kind"] == "Exponential mechanism"
            else "query answers a"
        )
        if s["kind"] != "Randomized response":
            text = st.text_input(
                label, key=remember(f"pb.scores.{s['kind']}", default), persist_state="session"
            )
            scores = checked(
                parse_scores, text, "scores" if s["kind"] == "Exponential mechanism" else "answers"
            )
        else:
            scores = None
        law, pair, what = neighbouring_inputs(s["kind"], mechanism, scores)
        p, q = checked(law, pair[0]), checked(law, pair[1])
        laws = (p, q)
        audit = checked(audit_finite, law, [pair], epsilon=s["epsilon"])
        table = loss_table(p, q)
        cols = st.columns(3)
        cols[0].metric("largest privacy loss (exact)", figure(audit.epsilon, 6))
        cols[1].metric("stated epsilon", figure(mechanism.guarantee.epsilon, 6))
        delta = cast(
            float, audit.delta_at_claim
        )  # audit_finite sets it: a claimed epsilon is given
        # the hockey-stick sum of terms that cancel up to rounding
        rounding = 0 < delta <= 1e-12
        shown = "0 (to rounding)" if rounding else figure(delta, 6)
        cols[2].metric(
            f"delta at epsilon = {figure(s['epsilon'])}",
            shown,
            help=f"computed {delta:.3g}" if rounding else None,
        )
        st.caption(
            f"Neighbouring inputs: {what}. The loss L = ln P(o) - ln Q(o) of each outcome "
            "o, with o drawn "
            "from P; the audit (dpgames.privacy.audit_finite) checks both orders."
        )
        bars = (
            alt.Chart(table)
            .mark_bar(size=14)
            .encode(
                x=alt.X("privacy loss ln P(o)/Q(o):Q", title="privacy loss L = ln P(o) / Q(o)"),
                y=alt.Y("sum(P(o)):Q", title="probability under P"),
                tooltip=[
                    "outcome",
                    alt.Tooltip("P(o):Q", format=".6g"),
                    alt.Tooltip("Q(o):Q", format=".6g"),
                    alt.Tooltip("privacy loss ln P(o)/Q(o):Q", format=".6g"),
                ],
            )
        )
        show_chart(bars.properties(title="Privacy-loss distribution (exact)", height=300))
    deltas = checked(privacy_curve, s["kind"], mechanism, laws, eps_grid)
    curve = pd.DataFrame({"epsilon": eps_grid, "delta": deltas})
    line = (
        alt.Chart(curve)
        .mark_line(point=True)
        .encode(
            x=alt.X("epsilon:Q", title="epsilon"),
            y=alt.Y("delta:Q", title="delta (exact)"),
            tooltip=[alt.Tooltip("epsilon:Q", format=".4g"), alt.Tooltip("delta:Q", format=".6g")],
        )
    )
    show_chart(
        line.properties(
            title="Privacy curve of one round: the smallest delta at each epsilon", height=300
        )
    )
    return table


def page() -> None:
    st.title(TITLE)
    st.caption(
        "Compose one mechanism over k rounds and compare the accountant's four totals at "
        "one delta; "
        "then the exact privacy loss of a single round. Every number is computed by "
        "dpgames.privacy."
    )
    s = inputs()
    mechanism = checked(
        mechanism_for, s["kind"], s["epsilon"], s["delta_round"], s["values"], s["positives"]
    )
    frame = composition_section(s, mechanism)
    table = loss_section(s, mechanism)
    tables = {"composition": frame} | ({"privacy loss": table} if table is not None else {})
    downloads("privacy_budget", None, tables, None, key="pb")


page()
