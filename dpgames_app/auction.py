"""Page: McSherry & Talwar's digital-goods auction (Dwork & Roth 10.2.1), explored interactively.

Every number comes from dpgames: the exact price law (DigitalGoodsAuction.price_law), the baselines
(dpgames.mechanisms.baselines), the theorem's bound (ExponentialMechanism.utility_loss_bound plus the
grid's alpha n, as the digital_goods scenario reports it) and the exact misreport audit.
"""

from __future__ import annotations

import hashlib

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dpgames import Beta, DigitalGoodsAuction, Population, Scenario, Uniform, misreport_audit
from dpgames.mechanisms.baselines import f2_benchmark, optimal_fixed_price, revenue_at, rsop_revenue
from dpgames.mechanisms.price_laws import GridPriceLaw
from dpgames.scenarios import ScenarioError, Table
from dpgames.scenarios import digital_goods as digital_goods_kind
from dpgames.validation import ValidationError
from dpgames_app.ui import checked, money, remember, rule, run_uploaded, show_chart, with_upload

TITLE = "Digital-goods auction"
SOURCES = ("Type distribution", "CSV of bids", "Scenario file (TOML)")
PRICE_SETS = ("grid", "continuous", "list")
CONVENTIONS = {"dwork-roth": "Dwork & Roth: exp(eps Rev / 2) (eps-DP)",
               "mcsherry-talwar": "McSherry & Talwar: exp(eps Rev) (2 eps-DP)"}
MAX_N = 20_000
RSOP_SAMPLES = 2000
HEATMAP_AGENTS = 40
CHART_POINTS = 2000
EPS_POINTS = 25
BOUND = "Thm 3.11 bound (w.p. 1 - beta)"
KEEP = {"persist_state": "session"}


# ---------------------------------------------------------------- library calls (cached)

@st.cache_data(show_spinner=False, max_entries=32)
def draw_population(distribution: str, params: tuple[float, float], n: int, seed: int) -> np.ndarray:
    law = Uniform(*params) if distribution == "uniform" else Beta(*params)
    return Population.draw(law, n, seed).values


@st.cache_data(show_spinner=False, max_entries=8)
def csv_population(name: str, data: bytes, column: str | None) -> np.ndarray:
    population = with_upload(name, data, lambda path: Population.from_csv(path, column))
    population.check_within(0.0, 1.0)
    return population.values


@st.cache_data(show_spinner=False, max_entries=8)
def scenario_population(name: str, data: bytes) -> dict:
    """An uploaded digital_goods scenario: its result as ``dpgames run`` prints it, the very population
    that run used, and its mechanism settings (to fill the page's inputs).  Like every upload, it may read
    only the shipped example data (scenarios/data), never another file of the server."""
    return run_uploaded(name, data, (), _scenario_population)


def _scenario_population(scenario: Scenario) -> dict:
    if scenario.kind != "digital_goods":
        raise ScenarioError(f"{scenario.source}: field 'kind': this page runs 'digital_goods' scenarios, this file "
                            f"is {scenario.kind!r}: open it on the Scenarios page", "kind")
    result = scenario.run()  # validates every field, exactly as the CLI does
    spec = digital_goods_kind.parse(Table(scenario.data, scenario.source, "", scenario.base_dir, scenario.data_dirs))
    values = digital_goods_kind.population_values(spec, np.random.SeedSequence(result.provenance["seed"]))
    auction = spec.auction
    explicit = auction.price_set == "explicit"
    settings = {"dg.eps": auction.epsilon, "dg.convention": auction.convention,
                "dg.price_set": "list" if explicit else auction.price_set,
                "dg.balanced": auction.alpha is None, "dg.posted": spec.posted_price, "dg.beta": spec.beta}
    if auction.alpha is not None:
        settings["dg.alpha"] = auction.alpha
    if explicit:
        settings["dg.price_list"] = ", ".join(f"{p:g}" for p in auction.prices_for(values.size))
    metrics = pd.DataFrame({"metric": [result.labels.get(k, k) for k in result.metrics],
                            "value": [str(v) for v in result.metrics.values()]})
    return {"values": values, "settings": settings, "metrics": metrics, "title": result.title,
            "seed": result.provenance["seed"], "sha": scenario.sha256}


def make_auction(eps: float, prices: str | tuple[float, ...], alpha: float | None,
                 convention: str) -> DigitalGoodsAuction:
    return DigitalGoodsAuction(eps, prices if isinstance(prices, str) else np.asarray(prices), alpha, convention)


def revenue_bound(auction: DigitalGoodsAuction, values: np.ndarray, opt: float, beta: float) -> float:
    """Thm 3.11 on a finite price set R (NaN on the continuum): with probability >= 1 - beta,
    Rev >= OPT - alpha n - (2 Delta / eps) ln(|R| / beta); as the digital_goods scenario reports it."""
    if auction.prices_for(values.size) is None:
        return float("nan")
    return opt - auction.revenue_loss_bound(values.size, beta)


@st.cache_data(show_spinner=False, max_entries=64)
def auction_numbers(values: np.ndarray, eps: float, prices, alpha, convention: str, posted: float,
                    beta: float, seed: int) -> dict:
    auction = make_auction(eps, prices, alpha, convention)
    law = auction.price_law(values)
    opt = optimal_fixed_price(values)
    rsop = rsop_revenue(values, RSOP_SAMPLES, rng=seed)
    grid = auction.prices_for(values.size)
    if isinstance(law, GridPriceLaw):
        keep = np.unique(np.linspace(0, law.prices.size - 1, CHART_POINTS).round().astype(int))
        frame = pd.DataFrame({"price": law.prices[keep], "probability": law.distribution.probabilities[keep]})
    else:
        p = np.linspace(0.0, 1.0, CHART_POINTS + 1)
        frame = pd.DataFrame({"price": p, "density": law.density(p)})
    return {"revenue": law.expected_revenue(), "opt": opt.revenue, "opt_price": opt.price,
            "f2": f2_benchmark(values), "rsop": rsop.mean, "rsop_exact": rsop.exact,
            "rsop_ci": (rsop.ci_low, rsop.ci_high), "posted": revenue_at(posted, values),
            "bound": revenue_bound(auction, values, opt.revenue, beta), "price_law": frame,
            "price_set": "continuous [0, 1]" if grid is None else f"{grid.size} prices",
            "guarantee": str(auction.guarantee)}


@st.cache_data(show_spinner=False, max_entries=16)
def eps_curves(values: np.ndarray, eps_range: tuple[float, float], prices, alpha, convention: str,
               beta: float) -> pd.DataFrame:
    """Expected revenue, the theorem's bound, and the exact largest gain from lying against eps."""
    opt = optimal_fixed_price(values).revenue
    rows = []
    for eps in np.geomspace(*eps_range, EPS_POINTS):
        auction = make_auction(float(eps), prices, alpha, convention)
        audit = misreport_audit(auction, values)
        rows.append({"epsilon": eps, "expected revenue": auction.expected_revenue(values), "OPT": opt,
                     BOUND: revenue_bound(auction, values, opt, beta), "largest gain": audit.max_gain,
                     "2 eps (Prop 10.1)": audit.bound_prop_10_1,
                     "(e^eps - 1) E[(v - p)+]": float(audit.exact_dp_bound.max())})
    return pd.DataFrame(rows)


@st.cache_data(show_spinner=False, max_entries=16)
def misreport_numbers(values: np.ndarray, eps: float, prices, alpha, convention: str) -> dict:
    """The exact audit, plus the gains of about HEATMAP_AGENTS agents (evenly spread in value, and the
    agent who gains most) for the heatmap."""
    audit = misreport_audit(make_auction(eps, prices, alpha, convention), values, keep_gains=True)
    distinct, first = np.unique(values, return_index=True)
    picks = np.unique(np.linspace(0, distinct.size - 1, min(distinct.size, HEATMAP_AGENTS)).round().astype(int))
    rows = np.union1d(first[picks], [audit.worst_agent])
    rows = rows[np.argsort(values[rows], kind="stable")]
    shown_values, lies = values[rows], audit.lies
    v_lo, v_hi = cell_edges(shown_values)
    l_lo, l_hi = cell_edges(lies)
    heat = pd.DataFrame({
        "true value": np.repeat(shown_values, lies.size), "report": np.tile(lies, rows.size),
        "gain": audit.gains[rows].ravel(), "v0": np.repeat(v_lo, lies.size), "v1": np.repeat(v_hi, lies.size),
        "r0": np.tile(l_lo, rows.size), "r1": np.tile(l_hi, rows.size)})
    worst = audit.worst_case
    return {"max_gain": audit.max_gain, "worst": worst, "bound_2eps": audit.bound_prop_10_1,
            "bound_exact": float(audit.exact_dp_bound[worst["agent"]]),
            "bound_monotone": float(audit.monotone_bound[worst["agent"]]), "within": audit.within_bounds(),
            "lies": lies.size, "heat": heat}


def cell_edges(centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edges of heatmap cells centred on ascending ``centres`` (midpoints; half a gap at the ends)."""
    if centres.size == 1:
        return centres - 0.005, centres + 0.005
    mid = (centres[1:] + centres[:-1]) / 2
    return (np.concatenate([[centres[0] - (mid[0] - centres[0])], mid]),
            np.concatenate([mid, [centres[-1] + (centres[-1] - mid[-1])]]))


def draw_auction(values: np.ndarray, eps: float, prices, alpha, convention: str, seed: int, draw: int) -> dict:
    """One run of the mechanism (draw number ``draw`` of this seed) and the bidders it sells to."""
    outcome = make_auction(eps, prices, alpha, convention).run(values, np.random.default_rng([seed, draw]))
    edges = np.linspace(0.0, 1.0, 51)
    buys, _ = np.histogram(values[outcome.buyers], edges)
    passes, _ = np.histogram(values[~outcome.buyers], edges)
    bars = pd.DataFrame({"from": np.tile(edges[:-1], 2), "to": np.tile(edges[1:], 2),
                         "bidders": np.concatenate([buys, passes]),
                         "outcome": ["buys"] * buys.size + ["does not buy"] * passes.size})
    return {"draw": draw, "price": outcome.price, "buyers": int(outcome.buyers.sum()),
            "revenue": outcome.revenue, "bars": bars}


# ---------------------------------------------------------------- inputs

def bidders(seed: int) -> tuple[np.ndarray, str]:
    """The population, from the sidebar; returns the values and a one-line description."""
    source = st.sidebar.radio("Bids from", SOURCES, key=remember("dg.source", SOURCES[0]), **KEEP)
    if source == SOURCES[1]:
        upload = st.sidebar.file_uploader("CSV of bids in [0, 1]", type=["csv", "txt"], key="upload.dg_csv",
                                          help="One bid per row; a header row is optional.")
        column = st.sidebar.text_input("Column (optional)", key=remember("dg.column", ""), **KEEP,
                                       help="The header of the bid column; the first column if empty.")
        if upload is None:
            st.info("Upload a CSV file of bids (one number in [0, 1] per row) in the sidebar.")
            st.stop()
        values = checked(csv_population, upload.name, upload.getvalue(), column.strip() or None)
        return values, f"{values.size:,} bids from {upload.name}"
    if source == SOURCES[2]:
        return scenario_bidders()
    kind = st.sidebar.selectbox("Distribution of values", ("uniform", "beta"), key=remember("dg.dist", "uniform"),
                                **KEEP)
    left, right = st.sidebar.columns(2)
    if kind == "uniform":
        params = (left.number_input("lowest", 0.0, 1.0, key=remember("dg.low", 0.0), step=0.05, **KEEP),
                  right.number_input("highest", 0.0, 1.0, key=remember("dg.high", 1.0), step=0.05, **KEEP))
    else:
        params = (left.number_input("a", 0.0, 1000.0, key=remember("dg.a", 2.0), step=0.5, **KEEP),
                  right.number_input("b", 0.0, 1000.0, key=remember("dg.b", 5.0), step=0.5, **KEEP))
    n = st.sidebar.number_input("Bidders n", 1, MAX_N, key=remember("dg.n", 1000), step=100, **KEEP)
    values = checked(draw_population, kind, params, int(n), seed)
    return values, f"{values.size:,} bidders, values {kind}{params}"


def scenario_bidders() -> tuple[np.ndarray, str]:
    upload = st.sidebar.file_uploader("Scenario file (kind = \"digital_goods\")", type=["toml"],
                                      key="upload.dg_toml", help="Its population is used; its mechanism "
                                      "and baseline settings fill the inputs below.")
    if upload is None:
        st.info("Upload a digital_goods scenario file (TOML), e.g. scenarios/digital_goods.toml, in the sidebar.")
        st.stop()
    loaded = checked(scenario_population, upload.name, upload.getvalue())
    if st.session_state.get("dg.loaded") != loaded["sha"]:
        st.session_state["dg.loaded"] = loaded["sha"]
        st.session_state.update(loaded["settings"])
    with st.expander(f"{upload.name}: its result as `dpgames run` prints it (seed {loaded['seed']})"):
        st.dataframe(loaded["metrics"], hide_index=True)
    return loaded["values"], f"{loaded['values'].size:,} bidders of {upload.name} ({loaded['title']})"


def seed_input() -> int:
    st.sidebar.subheader("Bidders")
    return int(st.sidebar.number_input("Seed", 0, 2**32 - 1, key=remember("dg.seed", 2026), step=1, **KEEP,
                                       help="Seeds the population draw, RSOP's random splits and the auction draws."))


def mechanism(n: int) -> tuple[float, str | tuple[float, ...], float | None, str]:
    st.sidebar.subheader("Mechanism")
    eps = st.sidebar.number_input("Privacy epsilon", 0.0, 1000.0, key=remember("dg.eps", 0.5), step=0.1,
                                  format="%.3f", **KEEP, help="The price is eps-DP in the bids: smaller = more private.")
    price_set = st.sidebar.radio("Prices", PRICE_SETS, key=remember("dg.price_set", "grid"), horizontal=True, **KEEP,
                                 help="grid {alpha, 2 alpha, ..., 1}; continuous [0, 1]; or your own list.")
    alpha, prices = None, price_set
    if price_set == "grid":
        if not st.sidebar.checkbox("Balanced step alpha = 1 / ceil(eps n / 2)", key=remember("dg.balanced", True),
                                   **KEEP):
            alpha = st.sidebar.number_input("Grid step alpha", 0.0001, 1.0, key=remember("dg.alpha", 0.01),
                                            step=0.005, format="%.4f", **KEEP)
    elif price_set == "list":
        text = st.sidebar.text_input("Prices (ascending, in (0, 1])", key=remember("dg.price_list", "0.25, 0.5, 0.75, 1"),
                                     **KEEP)
        prices = checked(parse_prices, text)
    convention = st.sidebar.selectbox("Weights", tuple(CONVENTIONS), format_func=CONVENTIONS.get,
                                      key=remember("dg.convention", "dwork-roth"), **KEEP)
    checked(make_auction, eps, prices, alpha, convention).prices_for(n)  # validates every field now
    return eps, prices, alpha, convention


def parse_prices(text: str) -> tuple[float, ...]:
    items = [item.strip() for item in text.replace(";", ",").split(",") if item.strip()]
    try:
        return tuple(float(item) for item in items)
    except ValueError:
        raise ValidationError("prices", f": write numbers separated by commas, e.g. 0.25, 0.5, 1 (got {text!r})") from None


def baselines() -> tuple[float, float]:
    st.sidebar.subheader("Baselines")
    posted = st.sidebar.slider("Fixed posted price", 0.0, 1.0, key=remember("dg.posted", 0.5), step=0.01, **KEEP)
    beta = st.sidebar.number_input("beta (the bound holds w.p. 1 - beta)", 0.001, 0.999,
                                   key=remember("dg.beta", 0.05), step=0.01, format="%.3f", **KEEP)
    return posted, beta


# ---------------------------------------------------------------- outputs

def headline(numbers: dict, n: int) -> None:
    cols = st.columns(5)
    cols[0].metric("Expected revenue (exact)", money(numbers["revenue"]),
                   help="E[p #{i : b_i >= p}] under the exact law of the eps-DP price; truthful bids.")
    cols[1].metric("OPT", money(numbers["opt"]), help="Best fixed price with hindsight (omniscient).")
    cols[2].metric("F2", money(numbers["f2"]), help="max over k >= 2 of k v_(k).")
    low, high = numbers["rsop_ci"]
    cols[3].metric("RSOP", money(numbers["rsop"]),
                   help="Random sampling optimal price: exact over all splits" if numbers["rsop_exact"]
                   else f"Monte Carlo over {RSOP_SAMPLES} random splits; 95% CI [{low:,.2f}, {high:,.2f}]")
    cols[4].metric("Fixed price", money(numbers["posted"]), help="Revenue of the fixed posted price.")
    bound = numbers["bound"]
    ratio = f"revenue / OPT = {numbers['revenue'] / numbers['opt']:.4f}" if numbers["opt"] > 0 else "OPT is 0"
    st.caption(f"{n:,} bidders; price set: {numbers['price_set']}; {numbers['guarantee']}; {ratio}.")
    if np.isfinite(bound):
        st.caption(f"Thm 3.11 (Dwork & Roth): revenue >= {bound:,.2f} with probability >= 1 - beta"
                   + (" (vacuous here: the bound is negative)." if bound < 0 else "."))


def price_law_chart(numbers: dict) -> None:
    frame = numbers["price_law"]
    if "probability" in frame:
        base = alt.Chart(frame).mark_rule(color="#1f77b4").encode(
            x=alt.X("price:Q", title="price p", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("probability:Q", title="probability of the price"), tooltip=["price", "probability"])
    else:
        base = alt.Chart(frame).mark_area(color="#1f77b4", opacity=0.6, interpolate="step-after").encode(
            x=alt.X("price:Q", title="price p", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("density:Q", title="density of the price (per unit price)"), tooltip=["price", "density"])
    show_chart((base + rule(numbers["opt_price"], f"OPT price {numbers['opt_price']:.3f}")).properties(
        title="Law of the posted price (exact)", height=300))


def benchmarks_chart(numbers: dict, posted: float) -> None:
    frame = pd.DataFrame({"mechanism": ["exponential mechanism", "OPT", "F2", "RSOP", f"fixed price {posted:g}"],
                          "revenue": [numbers["revenue"], numbers["opt"], numbers["f2"], numbers["rsop"],
                                      numbers["posted"]]})
    chart = alt.Chart(frame).mark_bar().encode(
        y=alt.Y("mechanism:N", sort=None, title=None, axis=alt.Axis(labelLimit=220)),
        x=alt.X("revenue:Q", title="expected revenue (sum of prices paid; values in [0, 1])"),
        color=alt.Color("mechanism:N", legend=None), tooltip=["mechanism", alt.Tooltip("revenue:Q", format=",.3f")])
    show_chart(chart.properties(title="Expected revenue against the benchmarks", height=300))


def eps_charts(curves: pd.DataFrame, eps: float) -> None:
    revenue = curves.melt("epsilon", ["expected revenue", "OPT", BOUND], "curve", "revenue")
    revenue["revenue"] = revenue["revenue"].clip(lower=0)  # a negative bound is vacuous: drawn at 0
    x = alt.X("epsilon:Q", title="privacy epsilon (log scale)", scale=alt.Scale(type="log"))
    left = alt.Chart(revenue.dropna()).mark_line(point=True).encode(
        x=x, y=alt.Y("revenue:Q", title="revenue (value units)"),
        color=alt.Color("curve:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=260)), tooltip=["epsilon", "curve", "revenue"])
    gains = curves.melt("epsilon", ["largest gain", "(e^eps - 1) E[(v - p)+]", "2 eps (Prop 10.1)"], "curve", "gain")
    gains = gains[gains["gain"] > 0]
    right = alt.Chart(gains).mark_line(point=True).encode(
        x=x, y=alt.Y("gain:Q", title="utility gained by the best lie (log scale)", scale=alt.Scale(type="log")),
        color=alt.Color("curve:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=260)), tooltip=["epsilon", "curve", "gain"])
    a, b = st.columns(2)
    with a:
        show_chart((left + rule(eps, f"eps = {eps:g}")).properties(
            title="Expected revenue against epsilon", height=320))
    with b:
        show_chart((right + rule(eps, f"eps = {eps:g}")).properties(
            title="Largest gain from lying against epsilon", height=320))


def misreport_section(audit: dict) -> None:
    st.subheader("Incentive to misreport (exact audit)")
    worst = audit["worst"]
    cols = st.columns(4)
    cols[0].metric("Largest gain from lying", f"{audit['max_gain']:.3g}",
                   help=f"Over every agent and {audit['lies']} reports, by exact enumeration.")
    cols[1].metric("Bound 2 eps (Prop 10.1)", f"{audit['bound_2eps']:.3g}")
    cols[2].metric("(e^eps - 1) E[(v - p)+]", f"{audit['bound_exact']:.3g}", help="The exact DP bound for that agent.")
    cols[3].metric("Within every bound", "yes" if audit["within"] else "NO")
    st.caption(f"The best lie: agent {worst['agent']} with value {worst['true_value']:.4f} reports "
               f"{worst['lie']:.4f} and gains {worst['gain']:.3g} in expected utility "
               f"({audit['max_gain'] / audit['bound_2eps']:.2%} of 2 eps).")
    heat = audit["heat"]
    top = max(audit["max_gain"], 1e-300)
    heat = heat.assign(shown=heat["gain"].clip(-top, top))
    chart = alt.Chart(heat).mark_rect().encode(
        x=alt.X("r0:Q", title="reported value (bid)", scale=alt.Scale(domain=[0, 1])), x2="r1:Q",
        y=alt.Y("v0:Q", title="true value", scale=alt.Scale(domain=[0, 1])), y2="v1:Q",
        color=alt.Color("shown:Q", title="gain", scale=alt.Scale(scheme="redblue", domain=[-top, top])),
        tooltip=[alt.Tooltip("true value:Q", format=".4f"), alt.Tooltip("report:Q", format=".4f"),
                 alt.Tooltip("gain:Q", format=".3e")])
    st.caption("Rows: agents spread evenly over the values (and the agent who gains most); columns: every "
               "report tried. Colours are clipped at the largest gain: blue, lying pays; red, it costs.")
    show_chart(chart.properties(height=420, title="Gain from reporting instead of the true value"))


def draw_section(values: np.ndarray, setting: tuple, seed: int) -> None:
    st.subheader("Draw an auction")
    signature = hashlib.sha256(values.tobytes() + repr((setting, seed)).encode()).hexdigest()
    last = st.session_state.get("dg.draw")
    if st.button("Draw an auction", key="button.dg_draw", type="primary"):
        number = last["draw"] + 1 if last and last["signature"] == signature else 1
        last = {"signature": signature, **draw_auction(values, *setting, seed, number)}
        st.session_state["dg.draw"] = last
    if not last or last["signature"] != signature:
        st.caption("One run of the mechanism on these bids: a price drawn from its exact law, and who buys.")
        return
    cols = st.columns(3)
    cols[0].metric(f"Draw {last['draw']}: price", f"{last['price']:.4f}")
    cols[1].metric("Buyers", f"{last['buyers']:,}")
    cols[2].metric("Revenue", money(last["revenue"]))
    chart = alt.Chart(last["bars"]).mark_bar().encode(
        x=alt.X("from:Q", bin="binned", title="bid (value units)", scale=alt.Scale(domain=[0, 1])), x2="to:Q",
        y=alt.Y("bidders:Q", title="bidders", stack=True),
        color=alt.Color("outcome:N", title=None, scale=alt.Scale(domain=["buys", "does not buy"],
                                                                 range=["#2ca02c", "#c7c7c7"])))
    show_chart((chart + rule(last["price"], f"price {last['price']:.3f}")).properties(height=260))


def page() -> None:
    st.title(TITLE)
    st.caption("McSherry & Talwar (2007); Dwork & Roth section 10.2.1. One price for everybody, drawn by the "
               "exponential mechanism with score Rev(p) = p #{bids >= p}; every bidder who bid at least the "
               "price buys at that price. All numbers are exact unless marked Monte Carlo.")
    seed = seed_input()
    values, described = bidders(seed)
    setting = mechanism(values.size)
    posted, beta = baselines()
    st.markdown(f"**Population:** {described}.")
    numbers = checked(auction_numbers, values, *setting, posted, beta, seed)
    headline(numbers, values.size)
    a, b = st.columns(2)
    with a:
        price_law_chart(numbers)
    with b:
        benchmarks_chart(numbers, posted)
    eps = setting[0]
    st.subheader("Privacy against revenue and incentives")
    eps_range = (min(0.01, eps / 2), max(10.0, eps * 2))
    eps_charts(checked(eps_curves, values, eps_range, *setting[1:], beta), eps)
    misreport_section(checked(misreport_numbers, values, *setting))
    draw_section(values, setting, seed)


page()
