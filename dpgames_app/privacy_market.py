"""Page: markets for privacy, the sensitive surveyor (Dwork & Roth 10.3; Ghosh & Roth 2011).

Presentation only: the population, the mechanism, its exact error law, the envy-free benchmark and
the cost audit all come from :mod:`dpgames.markets`; the settings are the fields of a
``privacy_market`` scenario file, downloadable for ``dpgames run``.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dpgames.markets import (
    AccuracyAuction,
    FairQuery,
    PopulationLaw,
    UniformCosts,
    cost_audit,
    envy_free_accuracy,
    envy_free_budget,
    privacy_population,
)
from dpgames.scenarios import Scenario
from dpgames_app.ui import checked, downloads, figure, rule, show_chart

TITLE = "Markets for privacy"
MAX_N = 1_000_000
AUDIT_N = 200_000  # above this many agents the audit waits for a button


@st.cache_data(max_entries=8, show_spinner=False)
def market(n: int, bit_rate: float, high: float, shift: float, mechanism: tuple, seed: int) -> dict:
    """Everything the page shows, from the library (cached by the settings)."""
    costs_if_one = UniformCosts(shift, high + shift) if shift > 0 else None
    # the privacy_market kind's stream
    stream = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    pop = privacy_population(
        n, PopulationLaw(bit_rate, UniformCosts(0.0, high), costs_if_one), rng=stream
    )
    kind, a, b, c = mechanism
    mech: AccuracyAuction | FairQuery
    if kind == "accuracy":
        mech = AccuracyAuction(a, b, c)
        target, beta = a * n, b
        bench = envy_free_accuracy(pop.costs, a, b)
    else:
        mech = FairQuery(a, b)
        beta = 0.05
        bench = envy_free_budget(pop.costs, a, beta)
    out = mech.run(pop.costs)
    if kind != "accuracy":
        target = out.guaranteed_radius(beta)
    law = out.error_law(pop.bits)
    x = np.linspace(-3 * max(target, 1.0), 3 * max(target, 1.0), 121)
    return {
        "mech": mech,
        "costs": pop.costs,
        "bought": out.bought,
        "out": out,
        "target": target,
        "beta": beta,
        "bench": bench,
        "within": law.probability_within(target),
        "mae": law.mean_absolute_error(),
        "bias": law.mean(),
        "law_x": x,
        "law_cdf": law.cdf(x),
        "count": pop.count,
    }


def inputs() -> tuple:
    side = st.sidebar
    side.header("Population")
    n = side.number_input("agents n", 10, MAX_N, 10_000, step=1000, key="pm.n")
    bit_rate = side.slider("Pr[b = 1]", 0.0, 1.0, 0.3, key="pm.rate")
    high = side.number_input("costs uniform on [0, high]", 0.01, 100.0, 1.0, key="pm.high")
    shift = side.slider(
        "correlation: costs of b = 1 shifted up by",
        0.0,
        2.0,
        0.0,
        key="pm.shift",
        help="0: costs independent of the bit. > 0: agents with b = 1 value privacy more "
        "(Ghosh & Roth's impossibility setting).",
    )
    side.header("Mechanism")
    kind = side.radio(
        "goal",
        ("accuracy", "budget"),
        key="pm.kind",
        format_func=lambda k: {
            "accuracy": "accuracy goal, least payment (Vickrey)",
            "budget": "budget, best accuracy (FairQuery)",
        }[k],
    )
    if kind == "accuracy":
        alpha = side.number_input(
            "alpha (within alpha n)", 0.001, 0.999, 0.05, format="%.3f", key="pm.alpha"
        )
        beta = side.number_input(
            "beta (failure probability)", 0.001, 0.5, 0.05, format="%.3f", key="pm.beta"
        )
        share = side.slider("share of the radius for the unbought", 0.05, 0.95, 0.5, key="pm.share")
        mechanism = ("accuracy", float(alpha), float(beta), float(share))
    else:
        budget = side.number_input("budget B", 0.001, 1e9, 10.0, key="pm.budget")
        eps = side.number_input(
            "eps bought from each seller", 1e-6, 10.0, 0.002, format="%.6f", key="pm.eps"
        )
        mechanism = ("budget", float(budget), float(eps), 0.0)
    seed = side.number_input("seed", 0, 2**31 - 1, 2026, key="pm.seed")
    return int(n), float(bit_rate), float(high), float(shift), mechanism, int(seed)


def headline(m: dict) -> None:
    out, bench = m["out"], m["bench"]
    cols = st.columns(5)
    cols[0].metric("agents bought", f"{out.n_bought:,}")
    cols[1].metric("eps per bought bit", figure(out.epsilon))
    cols[2].metric("total payment", figure(out.total_payment))
    if isinstance(m["mech"], AccuracyAuction):
        ratio = out.total_payment / bench.payment if bench.payment > 0 else 1.0
        cols[3].metric(
            "envy-free payment",
            figure(bench.payment),
            help="at the true costs: the cheapest fixed price",
        )
        cols[4].metric("payment / envy-free", figure(ratio))
    else:
        cols[3].metric(
            "envy-free radius",
            figure(bench.radius),
            help="The envy-free benchmark on the true costs: the radius of the most accurate "
            "fixed price.",
        )
        cols[4].metric("radius / envy-free", figure(m["target"] / bench.radius))
    st.markdown(
        f"Exact, given the drawn bits (true count {m['count']:,}): Pr[|error| <= "
        f"{figure(m['target'])}] = "
        f"**{figure(m['within'], 6)}**, E|error| = {figure(m['mae'])}, deterministic part "
        f"{figure(m['bias'])} (the unbought agents' bits replaced by 1/2)."
    )


def cost_chart(m: dict) -> None:
    costs, bought = m["costs"], m["bought"]
    sample = np.random.default_rng(0).choice(costs.size, min(costs.size, 5000), replace=False)
    frame = pd.DataFrame(
        {"cost": costs[sample], "bought": np.where(bought[sample], "bought", "not bought")}
    )
    bars = (
        alt.Chart(frame)
        .mark_bar(opacity=0.8)
        .encode(
            x=alt.X("cost:Q", bin=alt.Bin(maxbins=40), title="privacy cost c_i"),
            y=alt.Y("count():Q", title="agents (a sample of 5,000)"),
            color=alt.Color("bought:N", title=None),
        )
    )
    chart = bars
    if m["out"].n_bought:
        chart = bars + rule(float(m["out"].price), f"price per unit eps {m['out'].price:.4g}")
    show_chart(chart.properties(title="Who is bought, at what price", height=320))


def law_chart(m: dict) -> None:
    frame = pd.DataFrame({"error": m["law_x"], "cdf": m["law_cdf"]})
    line = (
        alt.Chart(frame)
        .mark_line()
        .encode(
            x=alt.X("error:Q", title="s_hat - s"), y=alt.Y("cdf:Q", title="Pr[error <= x] (exact)")
        )
    )
    t, height = float(m["target"]), 320
    # (the cdf is near 1 at +target)
    show_chart(
        (
            line
            + rule(-t, "-target", "#2ca02c")
            + rule(t, "target", "#2ca02c", label_y=height // 2)
        ).properties(title="The exact law of the error", height=height)
    )


def audit_section(m: dict) -> None:
    st.subheader("Truthfulness audit: every agent x 100 cost lies (exact)")
    n = m["costs"].size
    if n > AUDIT_N and not st.button("Run the audit", key="pm.audit"):
        st.info(f"{n:,} agents x 100 lies: press the button to run it.")
        return
    audit = checked(cost_audit, m["mech"], m["costs"])
    st.write(audit.describe())
    budgeted = isinstance(m["mech"], FairQuery)  # (the accuracy goal has no budget to stay within)
    cols = st.columns(3 if budgeted else 2)
    cols[0].metric("largest gain from lying", figure(audit.max_gain))
    cols[1].metric("smallest truthful utility", figure(audit.min_utility))
    if budgeted:
        cols[2].metric("within budget", figure(audit.within_budget))


def settings_toml(
    n: int, bit_rate: float, high: float, shift: float, mechanism: tuple, seed: int
) -> str:
    """The page's settings as a ``privacy_market`` scenario file: ``dpgames run`` on it gives the
    page's numbers (same population stream, same mechanism, the audit's 100 lies)."""
    population: dict = {
        "n": n,
        "bit_rate": bit_rate,
        "costs": {"law": "uniform", "low": 0.0, "high": high},
    }
    if shift > 0:
        population["costs_if_one"] = {"law": "uniform", "low": shift, "high": high + shift}
    kind, a, b, c = mechanism
    mech = (
        {"type": "accuracy", "alpha": a, "beta": b, "unbought_share": c}
        if kind == "accuracy"
        else {"type": "budget", "budget": a, "epsilon": b}
    )
    return Scenario.from_dict(
        {
            "kind": "privacy_market",
            "seed": seed,
            "title": f"{TITLE}, {n:,} agents",
            "population": population,
            "mechanism": mech,
            "audit": {"lies": 100},
        },
        source="<settings>",
    ).to_toml()


def theory() -> None:
    """What :mod:`dpgames.markets.surveyor` and :mod:`dpgames.markets.error_law` implement, as
    formulas."""
    with st.expander("The mechanism and its guarantees", expanded=False):
        st.markdown(
            "The surveyor buys the bits of some agents and guesses 1/2 for each of the u "
            "it does not "
            "buy. One bought bit changes the count by at most 1, so the release is eps-DP for each "
            "bought agent's bit (Laplace mechanism, Dwork & Roth Thm 3.6) and does not "
            "depend on an "
            "unbought agent's bit at all:"
        )
        st.latex(
            r"\hat s = \sum_{i\ \text{bought}} b_i + \frac{u}{2} + \mathrm{Lap}(1/\varepsilon)"
        )
        st.markdown(
            "Its error is a finite part plus Laplace noise, so its law is exact (a "
            "mixture of shifted "
            "Laplace laws, F the Laplace CDF, d_j the values of D with weights w_j):"
        )
        st.latex(
            r"E = \hat s - s = \underbrace{\sum_{i\ \text{unbought}} \big(\tfrac12 - "
            r"b_i\big)}_{D,\ "
            r"|D| \le u/2} + L, \qquad \Pr[|E| \le t] = \sum_j w_j \big(F(t - d_j) - F(-t "
            r"- d_j)\big)"
        )
        st.markdown(
            "Whatever the unbought bits, the error is within this radius with probability at least "
            "1 - beta (beta <= 1/2):"
        )
        st.latex(
            r"t^*(u, \varepsilon) = \frac{u}{2} + \frac{\ln\frac{1 + e^{-\varepsilon u}}{2} "
            r"+ \ln\frac{1}{\beta}}{\varepsilon}"
        )
        st.markdown(
            "**Accuracy goal** (Vickrey procurement): before any report, leave "
            "u = max(1, floor(2 share alpha n)) agents unbought, buy m = n - u at the "
            "least eps with "
            "t*(u, eps) <= alpha n; then buy the m cheapest reports and pay each the "
            "(m+1)-th cost. "
            "Truthful (threshold payments of a monotone rule) and individually rational."
        )
        st.latex(r"\text{payment}_i = \varepsilon\, c_{(m+1)}")
        st.markdown(
            "**Budget B** (FairQuery, dpgames' proportional-share variant at a fixed eps): buy the "
            "largest k with k eps c_(k) <= B and pay each her threshold; truthful, individually "
            "rational, and never more than B in total."
        )
        st.latex(
            r"k = \max\{k : k\, \varepsilon\, c_{(k)} \le B\}, \qquad "
            r"\text{payment}_i = \min\big(B/k,\ \varepsilon\, c_{(k+1)}\big), \qquad "
            r"\sum_i \text{payment}_i \le B"
        )
        st.markdown(
            "The benchmark is the best envy-free (fixed-price) mechanism for the same "
            "goal, computed "
            "exactly from the true costs over every number of sellers and every eps."
        )


def page() -> None:
    st.title(TITLE)
    st.caption(
        "Dwork & Roth 10.3; Ghosh & Roth (2011). Agents hold a private bit and a cost for privacy "
        "(c_i eps when their bit is used eps-privately). The surveyor buys privacy from "
        "the cheapest "
        "reports and releases the count of the bought bits plus n_unbought / 2 plus Laplace noise; "
        "the benchmark is the best fixed price computed from the true costs."
    )
    n, bit_rate, high, shift, mechanism, seed = inputs()
    m = checked(market, n, bit_rate, high, shift, mechanism, seed)
    headline(m)
    theory()
    left, right = st.columns(2)
    with left:
        cost_chart(m)
    with right:
        law_chart(m)
    audit_section(m)
    st.subheader("Downloads")
    toml_text = checked(settings_toml, n, bit_rate, high, shift, mechanism, seed)
    law = pd.DataFrame({"error": m["law_x"], "cdf": m["law_cdf"]})
    downloads(
        "privacy_market",
        lambda: Scenario.from_text(toml_text, source="<settings>").run().to_json(),
        {"error law": law},
        lambda: toml_text,
        key="pm.downloads",
    )


page()
