"""Page: McSherry & Talwar's digital-goods auction (Dwork & Roth 10.2.1), explored interactively.

The sidebar's settings are a ``digital_goods`` scenario (the very dict a TOML file holds): the page
builds its bids, price law and baselines through the scenario-kind contract
(``Scenario.parse(kind=digital_goods).build()``), the code path of ``dpgames run``, so one seed
gives one population and one set of numbers everywhere.  The settings download as a scenario file
that ``dpgames run`` reproduces bit for bit.  The extras (the misreport heatmap, the curves against
epsilon, single draws) come from the same law and bids.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import cast

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dpgames import DigitalGoodsAuction
from dpgames.analysis.misreport import misreport_audit_of_law
from dpgames.display import GAIN_CEILING, bound_text
from dpgames.mechanisms.digital_goods import PriceSet
from dpgames.scenarios import Budget, Scenario, ScenarioError, digital_goods as dg
from dpgames.scenarios.digital_goods import DigitalGoodsRun
from dpgames.validation import ValidationError
from dpgames_app.ui import (
    MIN_EPSILON,
    SHIPPED_DATA,
    SLOW_SECONDS,
    checked,
    csv_header,
    diverging,
    dot_chart,
    downloads,
    machine_seconds,
    money,
    public_message,
    remember,
    rule,
    show_chart,
    upload_folder,
)

TITLE = "Digital-goods auction"
SOURCES = ("Type distribution", "CSV of bids", "Scenario file (TOML)")
PRICE_SETS = ("grid", "continuous", "list")
CONVENTIONS = {
    "dwork-roth": "Dwork & Roth (eps-DP)",
    "mcsherry-talwar": "McSherry & Talwar (2 eps-DP)",
}
MAX_N = 1_000_000
HEAVY_N = (
    100_000  # above this many bidders the exact audits and the epsilon curves wait for a button
)
HEATMAP_AGENTS = 40
EPS_POINTS = 25
EPS_POINTS_LARGE = 9  # points of the epsilon curves above 20,000 bidders
BOUND = "Thm 3.11 bound (w.p. 1 - beta)"
#: The page runs what it shows; a million bidders is above the CLI's default work limit
#: (``--max-work``).
PAGE_BUDGET = Budget(max_work=1e12)


# ---------------------------------------------------------------- library calls (cached)

Files = tuple[tuple[str, bytes], ...]


def scenario_of(data: dict, files: Files, folder: Path) -> Scenario:
    """The page's settings as a scenario whose data files (an uploaded CSV) lie in ``folder``;
    shipped examples (scenarios/data) may be named too, as by an uploaded scenario file."""
    return Scenario.from_dict(data, "settings", folder, (SHIPPED_DATA,))


def with_files(files: Files, call):
    """``call(folder)`` with the uploaded files laid out in a fresh folder; messages never name
    it."""
    with upload_folder(files) as folder:
        try:
            return call(folder)
        except ValueError as exc:
            exc.args = (public_message(str(exc), folder),)
            raise


@st.cache_resource(show_spinner=False, max_entries=6)
def build_run(key: str, _data: dict, _files: Files) -> DigitalGoodsRun:
    """Validate the settings and build the run (bids, exact price law, baselines) as ``dpgames run``
    does.  ``key`` identifies data and files."""
    return with_files(
        _files, lambda folder: scenario_of(_data, _files, folder).parse(kind=dg).build()
    )


@st.cache_data(show_spinner=False, max_entries=32)
def build_seconds(key: str, _data: dict, _files: Files) -> float:
    """The build's time, without the audits, before doing it: the library's estimate of its work
    (the kind's ``estimate``, elementary operations) on this machine
    (:func:`~dpgames_app.ui.machine_seconds`)."""

    def work(folder: Path) -> float:
        stages = scenario_of(_data, _files, folder).parse(kind=dg).estimate()
        return sum(e.work for e in stages if "audit" not in e.what)

    return machine_seconds(with_files(_files, work))


@st.cache_data(show_spinner=False, max_entries=6)
def result_json(key: str, _data: dict, _files: Files) -> str:
    """The Result of ``dpgames run`` on these settings, as JSON (for the download)."""
    return with_files(
        _files, lambda folder: scenario_of(_data, _files, folder).run(budget=PAGE_BUDGET).to_json()
    )


@st.cache_data(show_spinner=False, max_entries=16)
def audit_numbers(key: str, _run: DigitalGoodsRun) -> dict:
    """The exact misreport audit, as the scenario runs it, plus the gains of about HEATMAP_AGENTS
    agents (evenly spread in value, and the agent who gains most) against every report, for the
    heatmap."""
    values, law, eps = _run.values, _run.law, _run.auction.guarantee.epsilon
    audit = misreport_audit_of_law(law, eps, values, values, _run.spec.lie_grid())
    distinct, first = np.unique(values, return_index=True)
    picks = np.unique(
        np.linspace(0, distinct.size - 1, min(distinct.size, HEATMAP_AGENTS)).round().astype(int)
    )
    rows = np.union1d(first[picks], [audit.worst_agent])
    rows = rows[np.argsort(values[rows], kind="stable")]
    shown = misreport_audit_of_law(
        law, eps, values[rows], values[rows], audit.lies, keep_gains=True
    )
    gains = cast(np.ndarray, shown.gains)  # kept: keep_gains=True
    lies = audit.lies
    v_lo, v_hi = cell_edges(values[rows])
    l_lo, l_hi = cell_edges(lies)
    heat = pd.DataFrame(
        {
            "true value": np.repeat(values[rows], lies.size),
            "report": np.tile(lies, rows.size),
            "gain": gains.ravel(),
            "v0": np.repeat(v_lo, lies.size),
            "v1": np.repeat(v_hi, lies.size),
            "r0": np.tile(l_lo, rows.size),
            "r1": np.tile(l_hi, rows.size),
        }
    )
    worst = audit.worst_case
    return {
        "max_gain": audit.max_gain,
        "worst": worst,
        "bound_2eps": audit.bound_prop_10_1,
        "bound_exact": min(1.0, float(audit.exact_dp_bound[audit.worst_agent])),
        "within": audit.within_bounds(),
        "lies": lies.size,
        "heat": heat,
    }


def cell_edges(centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edges of heatmap cells centred on ascending ``centres`` (midpoints; half a gap at the
    ends)."""
    if centres.size == 1:
        return centres - 0.005, centres + 0.005
    mid = (centres[1:] + centres[:-1]) / 2
    return (
        np.concatenate([[centres[0] - (mid[0] - centres[0])], mid]),
        np.concatenate([mid, [centres[-1] + (centres[-1] - mid[-1])]]),
    )


def auction_at(auction: DigitalGoodsAuction, eps: float) -> DigitalGoodsAuction:
    """The same auction (price set, step, weights) at another epsilon."""
    prices: PriceSet | np.ndarray
    listed = auction.prices_for(1) if auction.price_set == "explicit" else None
    if listed is not None:
        prices = listed  # an explicit list: the same at every number of bids
    else:
        prices = "continuous" if auction.price_set == "continuous" else "grid"
    return DigitalGoodsAuction(eps, prices, auction.alpha, auction.convention)


@st.cache_data(show_spinner=False, max_entries=512)
def eps_point(
    key: str, eps: float, _run: DigitalGoodsRun, beta: float, _lies: np.ndarray | None
) -> dict:
    """Expected revenue, the theorem's bound and the exact largest gain from lying at one
    epsilon."""
    auction = auction_at(_run.auction, eps)
    law = auction.price_law(_run.values)
    audit = misreport_audit_of_law(law, auction.guarantee.epsilon, _run.values, _run.values, _lies)
    loss = (
        auction.revenue_loss_bound(_run.values.size, beta)
        if auction.prices_for(_run.values.size) is not None
        else float("nan")
    )
    return {
        "epsilon": eps,
        "expected revenue": law.expected_revenue(),
        "OPT": _run.opt.revenue,
        BOUND: _run.opt.revenue - loss,
        "largest gain": max(audit.max_gain, 0.0),
        # A gain is at most 1 (utilities in [0, 1]): the bounds are drawn capped there, as the
        # Result has them.
        "2 eps": min(1.0, audit.bound_prop_10_1),
        "(e^eps - 1) E[(v - p)+]": min(1.0, float(audit.exact_dp_bound.max())),
    }


def eps_curves(
    key: str, run: DigitalGoodsRun, beta: float, lies: np.ndarray | None
) -> pd.DataFrame:
    """:func:`eps_point` on a log-spaced grid of epsilons, with a progress bar while points are
    computed."""
    eps = run.auction.epsilon
    points = EPS_POINTS if run.values.size <= 20_000 else EPS_POINTS_LARGE
    grid = np.geomspace(min(0.01, eps / 2), max(10.0, eps * 2), points)
    bar = (
        st.progress(0.0, text="Computing the curves against epsilon...")
        if run.values.size > 5000
        else None
    )
    rows = []
    for i, e in enumerate(grid):
        rows.append(eps_point(key, float(e), run, beta, lies))
        if bar is not None:
            bar.progress(
                (i + 1) / grid.size, text=f"Curves against epsilon: {i + 1} of {grid.size} points"
            )
    if bar is not None:
        bar.empty()
    return pd.DataFrame(rows)


def draw_auction(run: DigitalGoodsRun, seed: int, draw: int) -> dict:
    """Draw ``draw`` of the price: draw 1 is the one ``dpgames run`` reports (its draw stream),
    later draws come from ``default_rng([seed, draw])``; and the bidders it sells to."""
    price = (
        run.sampled_price
        if draw == 1
        else run.law.sample_price(rng=np.random.default_rng([seed, draw]))
    )
    values = run.values
    buyers = values >= price
    edges = np.linspace(0.0, 1.0, 51)
    buys, _ = np.histogram(values[buyers], edges)
    passes, _ = np.histogram(values[~buyers], edges)
    bars = pd.DataFrame(
        {
            "from": np.tile(edges[:-1], 2),
            "to": np.tile(edges[1:], 2),
            "bidders": np.concatenate([buys, passes]),
            "outcome": ["buys"] * buys.size + ["does not buy"] * passes.size,
        }
    )
    count = int(buyers.sum())
    return {
        "draw": draw,
        "price": float(price),
        "buyers": count,
        "revenue": float(price) * count,
        "bars": bars,
    }


# ---------------------------------------------------------------- inputs


def bidders() -> tuple[dict, Files, str]:
    """The ``[population]`` table from the sidebar, the files it reads and a one-line
    description."""
    source = st.sidebar.radio(
        "Bids from", SOURCES, key=remember("dg.source", SOURCES[0]), persist_state="session"
    )
    if source == SOURCES[1]:
        return csv_bidders()
    if source == SOURCES[2]:
        return scenario_bidders()
    kind = st.sidebar.selectbox(
        "Distribution of values",
        ("uniform", "beta"),
        key=remember("dg.dist", "uniform"),
        persist_state="session",
    )
    left, right = st.sidebar.columns(2)
    if kind == "uniform":
        low = left.number_input(
            "lowest", 0.0, 1.0, key=remember("dg.low", 0.0), step=0.05, persist_state="session"
        )
        high = right.number_input(
            "highest", 0.0, 1.0, key=remember("dg.high", 1.0), step=0.05, persist_state="session"
        )
        params, shape = {"low": low, "high": high}, f"uniform on [{low:g}, {high:g}]"
    else:
        a = left.number_input(
            "a", 0.0, 1000.0, key=remember("dg.a", 2.0), step=0.5, persist_state="session"
        )
        b = right.number_input(
            "b", 0.0, 1000.0, key=remember("dg.b", 5.0), step=0.5, persist_state="session"
        )
        params, shape = {"a": a, "b": b}, f"Beta({a:g}, {b:g})"
    n = int(
        st.sidebar.number_input(
            "Bidders n",
            1,
            MAX_N,
            key=remember("dg.n", 1000),
            step=1000,
            persist_state="session",
            help=f"Up to {MAX_N:,}; above {HEAVY_N:,} the exact audits wait for a button.",
        )
    )
    return {"distribution": kind, "n": n, **params}, (), f"{n:,} bidders, values {shape}"


def csv_bidders() -> tuple[dict, Files, str]:
    upload = st.sidebar.file_uploader(
        "CSV of bids in [0, 1]",
        type=["csv", "txt"],
        key="upload.dg_csv",
        help="One bidder per row; a header row is optional.",
    )
    if upload is None:
        st.info(
            "Upload a CSV file of bids (one number in [0, 1] per row), e.g. "
            "scenarios/data/example_bids.csv, "
            "in the sidebar."
        )
        st.stop()
    data = upload.getvalue()
    header = csv_header(data)
    population = {"distribution": "csv", "path": Path(upload.name).name}
    if header:
        # As a scenario file says it: the column named "value" if there is one, else the user's
        # choice.
        default = "value" if "value" in header else header[-1]
        key = f"dg.column.{hashlib.sha256(','.join(header).encode()).hexdigest()[:12]}"
        column = st.sidebar.selectbox(
            "Column of the bids",
            header,
            index=header.index(default),
            key=key,
            help="The CSV's header row; a scenario file names it with `column`.",
        )
        population["column"] = column
    return population, ((upload.name, data),), f"bids from {upload.name}"


@st.cache_data(show_spinner=False, max_entries=8)
def uploaded_scenario(name: str, data: bytes) -> dict:
    """An uploaded digital_goods scenario: its data and the settings that fill the page's inputs.
    Like every upload, it may read only the shipped example data (scenarios/data), never another
    server file."""

    def read(folder: Path) -> dict:
        scenario = Scenario.from_bytes(data, name, folder, (SHIPPED_DATA,))
        if scenario.data.get("kind") != "digital_goods":
            raise ScenarioError(
                f"{name}: field 'kind': this page runs 'digital_goods' scenarios, this file is "
                f"{scenario.data.get('kind')!r}: open it on the Scenarios page",
                "kind",
            )
        spec = scenario.parse(kind=dg).spec  # validates every field, exactly as the CLI does
        auction = spec.auction
        listed = auction.prices_for(1) if auction.price_set == "explicit" else None
        settings = {
            "dg.eps": auction.epsilon,
            "dg.convention": auction.convention,
            "dg.price_set": "list" if listed is not None else auction.price_set,
            "dg.balanced": auction.alpha is None,
            "dg.posted": spec.posted_price,
            "dg.beta": spec.beta,
            "dg.rsop": spec.rsop_samples,
            "dg.audit": spec.audit,
        }
        if isinstance(scenario.data.get("seed"), int):
            settings["dg.seed"] = scenario.data["seed"]
        if auction.alpha is not None:
            settings["dg.alpha"] = auction.alpha
        settings["dg.loaded_lies"] = scenario.data.get("audit", {}).get("lies")
        if listed is not None:
            settings["dg.price_list"] = ", ".join(f"{p:g}" for p in listed)
        return {"data": scenario.data, "settings": settings, "sha": scenario.sha256}

    return with_files((), read)


def scenario_bidders() -> tuple[dict, Files, str]:
    upload = st.sidebar.file_uploader(
        'Scenario file (kind = "digital_goods")',
        type=["toml"],
        key="upload.dg_toml",
        help="Its population is used; its mechanism and baseline settings fill the inputs below.",
    )
    if upload is None:
        st.info(
            "Upload a digital_goods scenario file (TOML), e.g. "
            "scenarios/digital_goods.toml, in the sidebar."
        )
        st.stop()
    loaded = checked(uploaded_scenario, upload.name, upload.getvalue())
    if st.session_state.get("dg.loaded") != loaded["sha"]:
        # Its settings (the seed among them, whose input is already drawn) fill the inputs on a
        # fresh run.
        st.session_state["dg.loaded"] = loaded["sha"]
        st.session_state["dg.pending"] = {**loaded["settings"], "dg.loaded_name": upload.name}
        st.rerun()
    return dict(loaded["data"]["population"]), (), f"the population of {upload.name}"


def seed_input() -> int:
    st.sidebar.subheader("Bidders")
    return int(
        st.sidebar.number_input(
            "Seed",
            0,
            2**32 - 1,
            key=remember("dg.seed", 2026),
            step=1,
            persist_state="session",
            help="The scenario's root seed: the population, RSOP's random splits and "
            "the first draw follow from it, as in `dpgames run`.",
        )
    )


def mechanism() -> dict:
    """The ``[mechanism]`` table from the sidebar."""
    st.sidebar.subheader("Mechanism")
    eps = st.sidebar.number_input(
        "Privacy epsilon",
        MIN_EPSILON,
        1e6,
        key=remember("dg.eps", 0.5),
        step=0.1,
        format="%.4g",
        persist_state="session",
        help=f"The price is eps-DP in the bids: smaller = more private "
        f"(at least {MIN_EPSILON:g}; eps = 0 would ignore the bids).",
    )
    price_set = st.sidebar.radio(
        "Prices",
        PRICE_SETS,
        key=remember("dg.price_set", "grid"),
        horizontal=True,
        persist_state="session",
        help="grid {alpha, 2 alpha, ..., 1}; continuous [0, 1]; or your own list.",
    )
    table: dict = {"epsilon": eps}
    if price_set == "grid":
        table["prices"] = "grid"
        if not st.sidebar.checkbox(
            "Balanced step alpha = 1 / ceil(eps n / 2)",
            key=remember("dg.balanced", True),
            persist_state="session",
        ):
            table["alpha"] = st.sidebar.number_input(
                "Grid step alpha",
                1e-6,
                1.0,
                key=remember("dg.alpha", 0.01),
                step=0.005,
                format="%.6g",
                persist_state="session",
            )
    elif price_set == "list":
        text = st.sidebar.text_input(
            "Prices in (0, 1], any order",
            key=remember("dg.price_list", "0.25, 0.5, 0.75, 1"),
            persist_state="session",
        )
        prices = checked(parse_prices, text)
        if list(prices) != [
            float(p.strip()) for p in text.replace(";", ",").split(",") if p.strip()
        ]:
            st.sidebar.caption(
                "Run with the prices sorted, repeats dropped: "
                f"{', '.join(f'{p:g}' for p in prices)}."
            )
        table["prices"] = list(prices)
    else:
        table["prices"] = "continuous"
    table["convention"] = st.sidebar.selectbox(
        "Weights",
        tuple(CONVENTIONS),
        format_func=CONVENTIONS.__getitem__,
        key=remember("dg.convention", "dwork-roth"),
        persist_state="session",
        help="Dwork & Roth: weights exp(eps Rev / 2), eps-DP. McSherry & Talwar's original weights "
        "exp(eps Rev): 2 eps-DP.",
    )
    return table


def parse_prices(text: str) -> tuple[float, ...]:
    """The prices of a comma-separated list, ascending, without repeats (the scenario's price
    set)."""
    items = [item.strip() for item in text.replace(";", ",").split(",") if item.strip()]
    try:
        return tuple(sorted({float(item) for item in items}))
    except ValueError:
        raise ValidationError(
            "prices", f": write numbers separated by commas, e.g. 0.25, 0.5, 1 (got {text!r})"
        ) from None


def baselines_and_audit() -> tuple[dict, dict]:
    """The ``[baselines]`` and ``[audit]`` tables from the sidebar."""
    st.sidebar.subheader("Baselines")
    posted = st.sidebar.slider(
        "Fixed posted price",
        0.0,
        1.0,
        key=remember("dg.posted", 0.5),
        step=0.01,
        persist_state="session",
    )
    rsop = st.sidebar.number_input(
        "RSOP random splits",
        2,
        10_000_000,
        key=remember("dg.rsop", 2000),
        step=500,
        persist_state="session",
        help="Monte Carlo splits for RSOP (exact enumeration up to 20 bidders). Its "
        "cost grows with splits x bidders: lower it for a million bidders.",
    )
    beta = st.sidebar.number_input(
        "beta (the bound holds w.p. 1 - beta)",
        1e-12,
        0.999999,
        key=remember("dg.beta", 0.05),
        step=0.01,
        format="%.3g",
        persist_state="session",
    )
    audit = st.sidebar.checkbox(
        "Exact misreport audit",
        key=remember("dg.audit", True),
        persist_state="session",
        help="Every bidder against every report: the largest gain from lying.",
    )
    return {"posted_price": posted, "rsop_samples": int(rsop)}, {"enabled": audit, "beta": beta}


def default_settings() -> None:
    """Forget the settings an uploaded scenario file filled in: the inputs take their defaults
    again."""
    for key in [
        k
        for k in st.session_state
        if isinstance(k, str) and k.startswith("dg.") and k not in ("dg.source", "dg.loaded")
    ]:
        del st.session_state[key]


def settings() -> tuple[dict, Files, str]:
    """The page's settings as a digital_goods scenario (data, uploaded files) and a description."""
    st.session_state.update(st.session_state.pop("dg.pending", {}))  # an uploaded file's settings
    seed = seed_input()
    population, files, described = bidders()
    mech = mechanism()
    base, audit = baselines_and_audit()
    uploaded = st.session_state.get("dg.source") == SOURCES[2]
    if not uploaded and st.session_state.get("dg.loaded_name"):
        st.sidebar.caption(
            f"The seed, mechanism and baseline settings are still those loaded from "
            f"{st.session_state['dg.loaded_name']}; the population is yours."
        )
        st.sidebar.button(
            "Back to the default settings", key="button.dg_defaults", on_click=default_settings
        )
    lies = st.session_state.get("dg.loaded_lies") if uploaded else None
    if lies is not None:
        audit["lies"] = lies
    data = {
        "kind": "digital_goods",
        "title": f"Digital-goods auction: {described}, eps = {mech['epsilon']:g}",
        "seed": seed,
        "population": population,
        "mechanism": mech,
        "baselines": base,
        "audit": audit,
    }
    return data, files, described


# ---------------------------------------------------------------- outputs

THEORY = [
    (
        "The price is drawn by the exponential mechanism with score the revenue it would raise "
        "(Dwork & Roth's weights, eps-DP; McSherry & Talwar's original weights drop the "
        "2 and are 2 eps-DP):",
        r"\Pr[p] \;\propto\; \exp\!\Big(\frac{\varepsilon\,\mathrm{Rev}(p, "
        r"b)}{2\Delta}\Big),\qquad "
        r"\mathrm{Rev}(p, b) = p\cdot\#\{i : b_i \ge p\},\qquad \Delta = \max p = 1",
    ),
    (
        "The benchmark is the best fixed price in hindsight; on the grid R = {alpha, 2 "
        "alpha, ..., 1} "
        "(Thm 3.11), with probability at least 1 - beta:",
        r"\mathrm{OPT} = \max_p \mathrm{Rev}(p, v),\qquad \mathrm{Rev} \;\ge\; "
        r"\mathrm{OPT} - \alpha n - "
        r"\frac{2}{\varepsilon}\ln\frac{|R|}{\beta}",
    ),
    (
        "Since the price is eps-DP in the bids, no bidder gains more than 2 eps from "
        "lying (Proposition 10.1; "
        "utilities in [0, 1]); the exact bound for a bidder of value v is tighter:",
        r"\text{gain} \;\le\; (e^{\varepsilon} - 1)\; \mathbb{E}\big[(v - p)^{+}\big] "
        r"\;\le\; 2\varepsilon",
    ),
]


def theory() -> None:
    with st.expander("The mechanism and its guarantees", icon=":material/function:"):
        for text, formula in THEORY:
            st.markdown(text)
            st.latex(formula)


def headline(run: DigitalGoodsRun, bound: float | None) -> None:
    cols = st.columns(5)
    revenue, opt = run.expected_revenue, run.opt.revenue
    cols[0].metric(
        "Expected revenue",
        money(revenue),
        border=True,
        help=f"Exact: E[p #{{i : b_i >= p}}] under the law of the eps-DP price, truthful bids. "
        f"Full value {revenue!r}.",
    )
    cols[1].metric(
        "OPT",
        money(opt),
        border=True,
        help=f"Best fixed price with hindsight (omniscient): price {run.opt.price:.4f}. Full "
        f"value {opt!r}.",
    )
    cols[2].metric(
        "F2", money(run.f2), border=True, help=f"max over k >= 2 of k v_(k). Full value {run.f2!r}."
    )
    rsop = run.rsop
    cols[3].metric(
        "RSOP",
        money(rsop.mean),
        border=True,
        help="Random sampling optimal price: exact over all splits"
        if rsop.exact
        else f"Monte Carlo over {rsop.samples:,} random splits; 95% CI [{rsop.ci_low:,.2f}, "
        f"{rsop.ci_high:,.2f}]. Full value {rsop.mean!r}.",
    )
    cols[4].metric(
        "Fixed price",
        money(run.posted_revenue),
        border=True,
        help=f"Revenue of the fixed posted price. Full value {run.posted_revenue!r}.",
    )
    prices = run.auction.prices_for(run.values.size)
    ratio = f"revenue / OPT = {revenue / opt:.4f}" if opt > 0 else "OPT is 0"
    st.caption(
        f"{run.values.size:,} bidders; price set: "
        f"{'continuous [0, 1]' if prices is None else f'{prices.size:,} prices'}; "
        f"{run.auction.guarantee}; {ratio}."
    )
    if bound is not None:
        st.caption(
            f"Thm 3.11 (Dwork & Roth): revenue >= {bound:,.2f} with probability >= 1 - beta"
            + (" (vacuous at this n and eps: the bound is negative)." if bound < 0 else ".")
        )


def price_law_frame(run: DigitalGoodsRun) -> pd.DataFrame:
    return pd.DataFrame({k: np.asarray(v) for k, v in dg.price_table(run.law).items()})


def price_law_chart(frame: pd.DataFrame, opt_price: float) -> None:
    x = alt.X("price:Q", title="price p (value units)", scale=alt.Scale(domain=[0, 1]))
    if "probability" in frame:
        base = (
            alt.Chart(frame)
            .mark_rule(color="#1f77b4")
            .encode(
                x=x,
                y=alt.Y("probability:Q", title="probability of the price"),
                tooltip=[
                    alt.Tooltip("price:Q", format=".4f"),
                    alt.Tooltip("probability:Q", format=".3e"),
                ],
            )
        )
    else:
        base = (
            alt.Chart(frame)
            .mark_area(color="#1f77b4", opacity=0.6, interpolate="step-after")
            .encode(
                x=x,
                y=alt.Y("density:Q", title="density of the price (per unit price)"),
                tooltip=[
                    alt.Tooltip("price:Q", format=".4f"),
                    alt.Tooltip("density:Q", format=".4g"),
                ],
            )
        )
    show_chart(
        (base + rule(opt_price, f"OPT price {opt_price:.3f}")).properties(
            title="Law of the posted price (exact)", height=300
        )
    )


def benchmarks_frame(run: DigitalGoodsRun, posted: float) -> pd.DataFrame:
    revenue = [run.expected_revenue, run.opt.revenue, run.f2, run.rsop.mean, run.posted_revenue]
    opt = run.opt.revenue
    return pd.DataFrame(
        {
            "mechanism": ["exponential mechanism", "OPT", "F2", "RSOP", f"fixed price {posted:g}"],
            "revenue": revenue,
            "share of OPT": [r / opt if opt > 0 else 1.0 for r in revenue],
        }
    )


def benchmarks_chart(frame: pd.DataFrame) -> None:
    """Each revenue as a share of OPT, on an axis around the data; the revenue itself in the
    tooltip."""
    show_chart(
        dot_chart(
            frame,
            "mechanism",
            "share of OPT",
            "Expected revenue as a share of OPT",
            "expected revenue / OPT",
            lambda v: f"{v:.2%}",
            "%",
        ).properties(height=300)
    )


def legend() -> alt.Legend:
    return alt.Legend(orient="bottom", labelLimit=400, title=None)


def eps_charts(curves: pd.DataFrame, eps: float) -> None:
    revenue = curves.melt(
        "epsilon", ["expected revenue", "OPT", BOUND], "curve", "revenue"
    ).dropna()
    revenue["revenue"] = revenue["revenue"].clip(lower=0)  # a negative bound is vacuous: drawn at 0
    x = alt.X("epsilon:Q", title="privacy epsilon (log scale)", scale=alt.Scale(type="log"))
    left = (
        alt.Chart(revenue)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("revenue:Q", title="revenue (sum of prices paid)"),
            color=alt.Color("curve:N", legend=legend()),
            tooltip=[
                alt.Tooltip("epsilon:Q", format=".4g"),
                "curve",
                alt.Tooltip("revenue:Q", format=",.2f"),
            ],
        )
    )
    gains = curves.melt(
        "epsilon", ["largest gain", "(e^eps - 1) E[(v - p)+]", "2 eps"], "curve", "gain"
    )
    gains = gains[gains["gain"] > 0]
    right = (
        alt.Chart(gains)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y("gain:Q", title="best lie's gain (log scale)", scale=alt.Scale(type="log")),
            color=alt.Color("curve:N", legend=legend()),
            tooltip=[
                alt.Tooltip("epsilon:Q", format=".4g"),
                "curve",
                alt.Tooltip("gain:Q", format=".3e"),
            ],
        )
    )
    a, b = st.columns(2)
    with a:
        show_chart(
            (left + rule(eps, f"eps = {eps:g}")).properties(
                title="Expected revenue against epsilon", height=360
            )
        )
    with b:
        show_chart(
            (right + rule(eps, f"eps = {eps:g}")).properties(
                title="Largest gain from lying against epsilon", height=360
            )
        )
        st.caption(
            "The gain is in expected utility (values in [0, 1]); both bounds are drawn "
            "capped at 1, "
            "the most any gain can be."
        )


def gain_text(gain: float) -> str:
    """A gain within rounding of 0 (utilities are in [0, 1]) is no gain."""
    return "none (0)" if gain <= 1e-12 else f"{gain:.3g}"


VACUOUS = "Values and prices are in [0, 1], so no gain exceeds 1: a bound of 1 or more is vacuous."


def misreport_section(audit: dict, continuous: bool) -> None:
    st.subheader("Incentive to misreport (exact audit)")
    worst = audit["worst"]
    cols = st.columns(4)
    tried = (
        f"{audit['lies']:,} reports evenly spread over [0, 1] (prices are continuous: not "
        "every report)"
        if continuous
        else f"every one of the {audit['lies']:,} reports that can change the outcome"
    )
    cols[0].metric(
        "Largest gain from lying",
        gain_text(audit["max_gain"]),
        border=True,
        help=f"The exact expected gain of every bidder for {tried}. Full value "
        f"{audit['max_gain']!r}.",
    )
    cols[1].metric(
        "Bound 2 eps",
        bound_text(audit["bound_2eps"], why=False),
        border=True,
        help=f"Proposition 10.1 (Dwork & Roth): 2 eps = {audit['bound_2eps']:.4g}. {VACUOUS}",
    )
    cols[2].metric(
        "Exact DP bound",
        bound_text(audit["bound_exact"], why=False),
        border=True,
        help=f"min(1, (e^eps - 1) E[(v - p)+]) for the bidder who gains most. {VACUOUS}",
    )
    cols[3].metric("Within every bound", "yes" if audit["within"] else "NO", border=True)
    st.caption(f"Reports tried for each bidder: {tried}.")
    if audit["max_gain"] > 1e-12:
        share = (
            f"{audit['max_gain'] / audit['bound_2eps']:.2%} of 2 eps"
            if audit["bound_2eps"] < GAIN_CEILING
            else f"2 eps = {audit['bound_2eps']:.4g} says nothing here: a gain is at most 1"
        )
        st.caption(
            f"The best lie: bidder {worst['agent']} with value {worst['true_value']:.4f} reports "
            f"{worst['lie']:.4f} and gains {worst['gain']:.3g} in expected utility ({share})."
        )
    else:
        st.caption(
            "No bidder gains from any report (every gain is within rounding of 0): "
            "truthful bidding is "
            "a best response here."
        )
    heat = audit["heat"]
    color = diverging("gain", "gain from the lie", heat["gain"].to_numpy())
    chart = (
        alt.Chart(heat)
        .mark_rect()
        .encode(
            x=alt.X("r0:Q", title="reported value (bid)", scale=alt.Scale(domain=[0, 1])),
            x2="r1:Q",
            y=alt.Y("v0:Q", title="true value", scale=alt.Scale(domain=[0, 1])),
            y2="v1:Q",
            color=color,
            tooltip=[
                alt.Tooltip("true value:Q", format=".4f"),
                alt.Tooltip("report:Q", format=".4f"),
                alt.Tooltip("gain:Q", format=".3e"),
            ],
        )
    )
    st.caption(
        "Rows: bidders spread evenly over the values (and the one who gains most); "
        "columns: every report "
        "tried. Diverging colours centred at 0 on a symmetric log scale, clipped at the "
        "98th percentile of "
        "|gain|: red, the lie pays; blue, it costs; white, it changes nothing."
    )
    show_chart(chart.properties(height=420, title="Gain from reporting instead of the true value"))


def draw_section(run: DigitalGoodsRun, key: str, seed: int) -> None:
    st.subheader("Draw an auction")
    last = st.session_state.get("dg.draw")
    if st.button("Draw an auction", key="button.dg_draw", type="primary"):
        number = last["draw"] + 1 if last and last["signature"] == key else 1
        last = {"signature": key, **draw_auction(run, seed, number)}
        st.session_state["dg.draw"] = last
    if not last or last["signature"] != key:
        st.caption(
            "One run of the mechanism on these bids: a price drawn from its exact law, "
            "and who buys. "
            "Draw 1 is the draw `dpgames run` reports."
        )
        return
    cols = st.columns(3)
    cols[0].metric(f"Draw {last['draw']}: price", f"{last['price']:.4f}", border=True)
    cols[1].metric("Buyers", f"{last['buyers']:,}", border=True)
    cols[2].metric("Revenue", money(last["revenue"]), border=True)
    chart = (
        alt.Chart(last["bars"])
        .mark_bar()
        .encode(
            x=alt.X(
                "from:Q", bin="binned", title="bid (value units)", scale=alt.Scale(domain=[0, 1])
            ),
            x2="to:Q",
            y=alt.Y("bidders:Q", title="bidders", stack=True),
            color=alt.Color(
                "outcome:N",
                title=None,
                scale=alt.Scale(domain=["buys", "does not buy"], range=["#2ca02c", "#c7c7c7"]),
            ),
        )
    )
    show_chart((chart + rule(last["price"], f"price {last['price']:.3f}")).properties(height=260))


def heavy_allowed(n: int, key: str) -> bool:
    """Above HEAVY_N bidders the audits and curves run once the user asks (they take a minute)."""
    if n <= HEAVY_N or st.session_state.get("dg.heavy") == key:
        return True
    st.info(
        f"With {n:,} bidders the exact misreport audit and the curves against epsilon "
        "take a minute or more."
    )
    if st.button("Compute them", key="button.dg_heavy"):
        st.session_state["dg.heavy"] = key
        return True
    return False


def page() -> None:
    st.title(TITLE)
    st.caption(
        "McSherry & Talwar (2007); Dwork & Roth section 10.2.1. One price for everybody, "
        "drawn by the "
        "exponential mechanism with score Rev(p) = p #{bids >= p}; every bidder who bid "
        "at least the "
        "price buys at that price. All numbers are exact unless marked Monte Carlo, and "
        "equal those of "
        "`dpgames run` on the settings file below."
    )
    theory()
    data, files, described = settings()
    key = hashlib.sha256(
        json.dumps(data, sort_keys=True).encode()
        + b"".join(hashlib.sha256(d).digest() for _, d in files)
    ).hexdigest()
    st.markdown(f"**Population:** {described}.")
    seconds = checked(build_seconds, key, data, files)
    if seconds > 10:
        st.info(
            "The bidders, the price law and the baselines (RSOP with "
            f"{data['baselines']['rsop_samples']:,} "
            f"random splits) take about {seconds:,.0f} s on this machine (once: they are "
            "then cached); lower "
            '"RSOP random splits" or the bidders in the sidebar for a quicker look.',
            icon=":material/hourglass_top:",
        )
        if seconds > SLOW_SECONDS and st.session_state.get("dg.confirmed") != key:
            if not st.button("Compute it", key="button.dg_build", type="primary"):
                st.stop()
            st.session_state["dg.confirmed"] = key
    with st.spinner(
        "Drawing the bidders, the exact price law and the baselines...", show_time=True
    ):
        run = checked(build_run, key, data, files)
    spec = run.spec
    bound = run.revenue_bound(spec.beta)
    headline(run, bound)
    law = price_law_frame(run)
    bench = benchmarks_frame(run, spec.posted_price)
    a, b = st.columns(2)
    with a:
        price_law_chart(law, run.opt.price)
    with b:
        benchmarks_chart(bench)
    tables = {"price law": law, "benchmarks": bench}
    if spec.audit and heavy_allowed(run.values.size, key):
        st.subheader("Privacy against revenue and incentives")
        curves = checked(eps_curves, key, run, spec.beta, spec.lie_grid())
        eps_charts(curves, spec.auction.epsilon)
        with st.spinner("The exact misreport audit...", show_time=True):
            audit = checked(audit_numbers, key, run)
        misreport_section(audit, spec.auction.price_set == "continuous")
        tables.update(
            {
                "epsilon curves": curves,
                "heatmap gains": audit["heat"][["true value", "report", "gain"]],
            }
        )
    draw_section(run, key, data["seed"])
    st.subheader("Downloads")
    stem = "digital_goods_app"
    downloads(
        stem,
        lambda: result_json(key, data, files),
        tables,
        lambda: Scenario.from_dict(data).to_toml(),
        key="dg_download",
    )
    if files:
        st.caption(
            f"The scenario file reads {files[0][0]}: keep the CSV beside it, then "
            f"`dpgames run {stem}.toml`."
        )
    elif run.values.size > 200_000:
        st.caption(
            f"`dpgames run {stem}.toml --max-work 1e12`: this size is above the CLI's "
            "default work limit."
        )
    else:
        st.caption(f"`dpgames run {stem}.toml` prints the numbers above.")


page()
