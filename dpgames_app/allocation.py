"""Page: private allocation, the ascending-price auction with private demand counters (joint DP;
dpgames' variant of Hsu, Huang, Roth, Roughgarden & Wu 2014).

Presentation only: the market, both auctions, the optimum, the welfare certificate and the privacy
spent all come from :mod:`dpgames.allocation`.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dpgames.allocation import (
    AscendingAuction,
    Market,
    dual_upper_bound,
    optimal_allocation,
)
from dpgames.allocation.baselines import ASSIGNMENT_LIMIT, LP_LIMIT
from dpgames.scenarios import Scenario
from dpgames_app.ui import checked, downloads, figure, show_chart

TITLE = "Private allocation"
MAX_CELLS = 5_000_000  # bidders x goods
SHOWN_BIDDERS = 20
#: Counts of copies shown with thousands separators.
COUNT_COLUMNS = {
    name: st.column_config.NumberColumn(name, format="localized")
    for name in ("supply", "sold", "sold (non-private)", "sold (optimal)")
}


@st.cache_data(max_entries=8, show_spinner=False)
def market_run(
    n: int, k: int, supply: int, law: str, alpha: float, epsilon: float | None, seed: int
) -> dict:
    """Everything the page shows, from the library (cached by the settings)."""
    # the streams of the allocation kind
    market_seed, noise_seed = np.random.SeedSequence(seed).spawn(2)
    market = Market.random(n, k, supply, np.random.default_rng(market_seed), law)
    exact = AscendingAuction(alpha).run(market)
    private = (
        None if epsilon is None else AscendingAuction(alpha, epsilon).run(market, rng=noise_seed)
    )
    raw = (
        None
        if epsilon is None
        else AscendingAuction(alpha, epsilon, margin=0.0).run(market, rng=noise_seed)
    )
    small = n * min(supply, n) * k <= ASSIGNMENT_LIMIT or n * k <= LP_LIMIT
    opt = optimal_allocation(market) if small else None
    return {
        "market": market,
        "exact": exact,
        "private": private,
        "raw": raw,
        "opt": opt,
        "upper": dual_upper_bound(market, exact.prices),
    }


def inputs() -> tuple:
    side = st.sidebar
    side.header("Market")
    n = side.number_input("bidders n", 1, 1_000_000, 20_000, step=1000, key="al.n")
    k = side.number_input("kinds of goods k", 1, 50, 2, key="al.k")
    supply = side.number_input("copies of each good s", 1, 1_000_000, 5000, step=100, key="al.s")
    law = side.radio(
        "values",
        ("uniform", "common"),
        key="al.law",
        format_func=lambda x: {
            "uniform": "v_ij uniform on [0, 1]",
            "common": "common quality: v_ij = q_j u_ij",
        }[x],
    )
    side.header("Auction")
    alpha = side.number_input(
        "price increment alpha", 0.01, 1.0, 0.25, format="%.3f", key="al.alpha"
    )
    private = side.toggle("private counters", True, key="al.private")
    epsilon = (
        side.number_input("epsilon (joint DP)", 0.01, 100.0, 5.0, key="al.eps") if private else None
    )
    seed = side.number_input("seed", 0, 2**31 - 2, 2026, key="al.seed")
    return (
        int(n),
        int(k),
        int(supply),
        law,
        float(alpha),
        None if epsilon is None else float(epsilon),
        int(seed),
    )


def headline(m: dict) -> None:
    shown = m["private"] or m["exact"]
    opt = m["opt"]
    cols = st.columns(4)
    cols[0].metric("welfare", figure(shown.welfare))
    if opt is not None:
        cols[1].metric(
            "optimal welfare (exact)", figure(opt.welfare), help=f"computed by {opt.method}"
        )
        cols[2].metric(
            "welfare / OPT", figure(shown.welfare / opt.welfare if opt.welfare > 0 else 1.0)
        )
    else:
        cols[1].metric("OPT upper bound (LP duality)", figure(m["upper"]))
        cols[2].metric(
            "welfare / OPT at least", figure(shown.welfare / m["upper"] if m["upper"] > 0 else 1.0)
        )
    cols[3].metric("certificate: OPT - welfare at most", figure(shown.welfare_certificate))
    cols = st.columns(4)
    cols[0].metric("non-private welfare", figure(m["exact"].welfare))
    if m["private"] is not None:
        spent = m["private"].accountant.best_total()
        cols[1].metric("privacy spent (joint eps)", figure(spent.epsilon), help=str(spent))
        cols[2].metric("margin E (the fix)", figure(m["private"].margin))
        cols[3].metric("copies oversold without the fix", figure(int(m["raw"].oversold.sum())))
    else:
        cols[1].metric("privacy spent (joint eps)", "none (non-private)")


def goods_table(m: dict) -> pd.DataFrame:
    market, shown = m["market"], m["private"] or m["exact"]
    frame = pd.DataFrame(
        {
            "good": np.arange(market.k),
            "supply": market.supply,
            "price": shown.prices,
            "sold": market.sold(shown.served),
            "price (non-private)": m["exact"].prices,
            "sold (non-private)": market.sold(m["exact"].served),
        }
    )
    if m["opt"] is not None:
        frame["sold (optimal)"] = market.sold(m["opt"].assignment)
    return frame


def price_chart(m: dict) -> None:
    shown = m["private"] or m["exact"]
    path = shown.price_path
    frame = pd.DataFrame(
        {
            "round": np.repeat(np.arange(path.shape[0]), path.shape[1]),
            "good": np.tile(np.arange(path.shape[1]).astype(str), path.shape[0]),
            "price": path.ravel(),
        }
    )
    chart = (
        alt.Chart(frame)
        .mark_line(interpolate="step-after", point=True)
        .encode(
            x=alt.X("round:Q", title="round", axis=alt.Axis(format="d", tickMinStep=1)),
            y=alt.Y("price:Q", title="public price"),
            color=alt.Color("good:N"),
            strokeDash=alt.StrokeDash("good:N"),
            shape=alt.Shape("good:N"),
        )
    )
    show_chart(chart.properties(title="Prices over rounds (public)", height=300))
    same = [j for j in range(1, path.shape[1]) if np.array_equal(path[:, j], path[:, 0])]
    if same:
        st.caption(
            f"Goods {', '.join(map(str, [0, *same]))} follow the same price path: their "
            "lines lie on top "
            "of each other."
        )


def who_gets_what(m: dict) -> pd.DataFrame:
    market, shown = m["market"], m["private"] or m["exact"]
    rows = np.arange(min(market.n, SHOWN_BIDDERS))
    told = shown.served[rows]
    frame = pd.DataFrame(market.values[rows].round(3), columns=[f"v_{j}" for j in range(market.k)])
    frame.insert(0, "bidder", rows)
    frame["told: good"] = np.where(told >= 0, told.astype(str), "none")
    frame["price"] = [f"{p:g}" if t >= 0 else "-" for t, p in zip(told, shown.paid[rows])]
    frame["utility"] = shown.utilities()[rows]
    return frame


def page() -> None:
    st.title(TITLE)
    st.caption(
        "Unit-demand bidders, k goods with s copies each. Each round, bidders without a "
        "good bid on their "
        "favourite at the public asks; a good whose noisy count of bids at its ask "
        "exceeds s + 1/2 - E "
        "rises by alpha; a holder keeps her good (at her bid) until s later bids outbid "
        "her. Each bidder "
        "is told only her own good and price: eps-jointly DP (dpgames' variant of Hsu, "
        "Huang, Roth, "
        "Roughgarden & Wu 2014)."
    )
    n, k, supply, law, alpha, epsilon, seed = inputs()
    if n * k > MAX_CELLS:
        st.error(
            f"bidders x goods must be at most {MAX_CELLS:,} here, got {n * k:,}",
            icon=":material/error:",
        )
        st.stop()
    m = checked(market_run, n, k, supply, law, alpha, epsilon, seed)
    headline(m)
    price_chart(m)
    st.subheader("Goods")
    st.dataframe(goods_table(m), hide_index=True, column_config=COUNT_COLUMNS)
    st.subheader(
        f"Who gets what (the first {min(n, SHOWN_BIDDERS)} bidders; each sees only her own row)"
    )
    st.dataframe(who_gets_what(m), hide_index=True)
    st.subheader("Downloads")
    toml_text = settings_toml(n, k, supply, law, alpha, epsilon, seed)
    downloads(
        "allocation",
        lambda: Scenario.from_text(toml_text, source="<settings>").run().to_json(),
        {"goods": goods_table(m), "who gets what": who_gets_what(m)},
        lambda: toml_text,
        key="al.downloads",
    )


def settings_toml(
    n: int, k: int, supply: int, law: str, alpha: float, epsilon: float | None, seed: int
) -> str:
    """The page's settings as an ``allocation`` scenario file (``dpgames run`` on it gives the
    page's figures)."""
    auction: dict = {"alpha": alpha}
    if epsilon is not None:
        auction["epsilon"] = epsilon
    return Scenario.from_dict(
        {
            "kind": "allocation",
            "seed": seed,
            "title": f"{TITLE}, {n:,} bidders",
            "market": {"bidders": n, "goods": k, "supply": supply, "law": law},
            "auction": auction,
        },
        source="<settings>",
    ).to_toml()


page()
