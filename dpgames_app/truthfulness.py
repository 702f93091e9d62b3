"""Page: exact truthfulness by mixing (Nissim, Smorodinsky & Tennenholtz 2012; Dwork & Roth 10.2.3).

The inputs are turned into an ``nst_mix`` scenario table and read by the scenario layer itself
through the scenario-kind contract (``Scenario.parse(kind=nst_mix).build()``), so the page builds
exactly the environment, population and mechanisms that ``dpgames run`` builds; every number then
comes from dpgames.analysis.truthfulness (nst_report, truthfulness_audit) and the mechanisms' exact
laws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import networkx as nx
import numpy as np
import pandas as pd
import streamlit as st

from dpgames import CommitmentMechanism, NSTMix, ObjectiveExponentialMechanism, truthfulness_audit
from dpgames.analysis.nst import NSTReport
from dpgames.mechanisms import Profile, grid_graph, line_graph
from dpgames.scenarios import Scenario, nst_mix
from dpgames_app.ui import (
    MIN_EPSILON,
    checked,
    diverging,
    dot_chart,
    downloads,
    remember,
    show_chart,
)

TITLE = "Exact truthfulness"
ENVIRONMENTS = ("Pricing (digital goods)", "Facility location")
# the log slider's left end: q = 1e-7 (type a smaller q, or 0, in the box beside it)
LOG_Q_MIN = -7.0


@dataclass(frozen=True)
class Model:
    """The mechanisms, the profile and the NST report for one set of inputs (kept, not copied)."""

    exponential: ObjectiveExponentialMechanism
    commitment: CommitmentMechanism
    profile: Profile
    report: NSTReport
    moved: float
    graph: nx.Graph | None


# ---------------------------------------------------------------- library calls (cached)


def scenario_data(tables: tuple, seed: int) -> dict:
    """The inputs as an ``nst_mix`` scenario (the dict a TOML file holds)."""
    environment, population, mechanism = (dict(t) for t in tables)
    kind = (
        "pricing"
        if environment["type"] == "pricing"
        else f"facility location ({environment['graph']})"
    )
    return {
        "kind": "nst_mix",
        "title": f"NST mix, {kind}, {population['n']:,} agents, eps = {mechanism['epsilon']:g}",
        "seed": seed,
        "environment": environment,
        "population": population,
        "mechanism": mechanism,
    }


@st.cache_resource(show_spinner="Computing the exact audits...", max_entries=16)
def build_model(tables: tuple, seed: int) -> Model:
    """Validate the inputs as an ``nst_mix`` scenario and build its run as ``dpgames run`` does.

    ``tables`` is ``(environment, population, mechanism)`` as sorted item tuples (hashable)."""
    built = Scenario.from_dict(scenario_data(tables, seed)).parse(kind=nst_mix).build()
    environment = dict(tables[0])
    graph = None
    if environment["type"] == "facility_location":
        graph = (
            grid_graph(environment["rows"], environment["cols"])
            if environment["graph"] == "grid"
            else line_graph(environment["nodes"])
        )
    return Model(
        built.exponential, built.commitment, built.profile, built.report, built.moved, graph
    )


@st.cache_data(show_spinner=False, max_entries=256)
def mix_numbers(_model: Model, key: tuple, q: float) -> dict:
    """The mix at ``q``: its exact audit (gains by class x lie), expected objective and outcome
    law."""
    mix = NSTMix(_model.exponential, _model.commitment, q)
    audit = truthfulness_audit(mix, _model.profile)
    return {
        "truthful": audit.is_truthful(),
        "max_gain": audit.max_gain,
        "worst": audit.worst_case,
        "gains": audit.gains,
        "classes": audit.classes,
        "objective": mix.expected_objective(_model.profile),
        "law": mix.distribution(_model.profile).probabilities,
    }


@st.cache_data(show_spinner=False, max_entries=16)
def result_json(tables: tuple, seed: int) -> str:
    """The Result of ``dpgames run`` on the inputs' scenario, as JSON (for the download)."""
    return Scenario.from_dict(scenario_data(tables, seed)).run().to_json()


# ---------------------------------------------------------------- inputs


def inputs() -> tuple[tuple, int]:
    """The sidebar, as the three tables of an nst_mix scenario, and the seed."""
    st.sidebar.subheader("Environment")
    kind = st.sidebar.radio(
        "Environment",
        ENVIRONMENTS,
        key=remember("tr.env", ENVIRONMENTS[1]),
        persist_state="session",
        label_visibility="collapsed",
    )
    seed = int(
        st.sidebar.number_input(
            "Seed",
            0,
            2**32 - 1,
            key=remember("tr.seed", 2026),
            step=1,
            persist_state="session",
            help="Draws the agents' types (as `dpgames run --seed` would).",
        )
    )
    if kind == ENVIRONMENTS[0]:
        environment, population, mechanism = pricing_inputs()
    else:
        environment, population, mechanism = facility_inputs()
    tables = tuple(tuple(sorted(t.items())) for t in (environment, population, mechanism))
    return tables, seed


def pricing_inputs() -> tuple[dict, dict, dict]:
    n = st.sidebar.number_input(
        "Bidders n", 1, 100_000, key=remember("tr.price_n", 1000), step=100, persist_state="session"
    )
    st.sidebar.caption(
        "Values uniform on [0, 1], each moved to the nearest point of the type grid (the "
        "midpoints between consecutive prices)."
    )
    st.sidebar.subheader("Mechanism")
    eps = st.sidebar.number_input(
        "Privacy epsilon",
        MIN_EPSILON,
        100.0,
        key=remember("tr.price_eps", 0.5),
        step=0.1,
        format="%.3f",
        persist_state="session",
    )
    alpha = st.sidebar.number_input(
        "Price grid step alpha",
        0.01,
        1.0,
        key=remember("tr.alpha", 0.05),
        step=0.01,
        format="%.3f",
        persist_state="session",
        help="Prices alpha, 2 alpha, ..., 1: the outcomes.",
    )
    reactions = st.sidebar.radio(
        "Reactions under the exponential mechanism",
        ("forced", "free"),
        horizontal=True,
        key=remember("tr.price_reactions", "forced"),
        persist_state="session",
        help="forced: the auction sells by the bids; free: NST's posted price, "
        "everyone buys by her true value.",
    )
    return (
        {"type": "pricing"},
        {"distribution": "uniform", "n": int(n)},
        {"epsilon": eps, "alpha": alpha, "reactions": reactions},
    )


def facility_inputs() -> tuple[dict, dict, dict]:
    graph = st.sidebar.radio(
        "Graph",
        ("grid", "line"),
        horizontal=True,
        key=remember("tr.graph", "grid"),
        persist_state="session",
    )
    environment: dict = {"type": "facility_location", "graph": graph}
    left, right = st.sidebar.columns(2)
    if graph == "grid":
        environment["rows"] = int(
            left.number_input("rows", 1, 10, key=remember("tr.rows", 6), persist_state="session")
        )
        environment["cols"] = int(
            right.number_input(
                "columns", 1, 10, key=remember("tr.cols", 6), persist_state="session"
            )
        )
    else:
        environment["nodes"] = int(
            left.number_input("nodes", 2, 60, key=remember("tr.nodes", 12), persist_state="session")
        )
    environment["k"] = int(
        st.sidebar.number_input(
            "Facilities to open k", 1, 3, key=remember("tr.k", 2), persist_state="session"
        )
    )
    n = st.sidebar.number_input(
        "Residents n",
        1,
        100_000,
        key=remember("tr.fac_n", 400),
        step=50,
        persist_state="session",
        help="Each lives at a node drawn uniformly; her location is her private type.",
    )
    st.sidebar.subheader("Mechanism")
    eps = st.sidebar.number_input(
        "Privacy epsilon",
        MIN_EPSILON,
        100.0,
        key=remember("tr.fac_eps", 1.0),
        step=0.1,
        format="%.3f",
        persist_state="session",
    )
    reactions = st.sidebar.radio(
        "Reactions under the exponential mechanism",
        ("free", "forced"),
        horizontal=True,
        key=remember("tr.fac_reactions", "free"),
        persist_state="session",
        help="free: residents use the facility nearest their true home (NST); "
        "forced: nearest their reported home.",
    )
    return (
        environment,
        {"distribution": "uniform", "n": int(n)},
        {"epsilon": eps, "reactions": reactions},
    )


# ---------------------------------------------------------------- outputs


def headline(model: Model) -> None:
    report, env = model.report, model.exponential.environment
    cols = st.columns(4)
    cols[0].metric(
        "Gap gamma of M^P",
        f"{report.gap.gamma:.4g}",
        help=f"min over pairs of types of the most a forced reaction can cost; attained by type "
        f"{report.gap.true_label!r} reporting {report.gap.lie_label!r}.",
    )
    q_theorem = report.theorem.q_exact_form
    cols[1].metric(
        "q from the theorem",
        "none" if q_theorem is None else f"{q_theorem:.4g}",
        help="q = G |P| / (G |P| + gamma) with G = (e^eps - 1) U_max (Dwork & Roth's 2 eps U_max: "
        + ("none" if report.theorem.q_dwork_roth is None else f"{report.theorem.q_dwork_roth:.4g}")
        + ("" if report.theorem.dwork_roth_valid else ", NOT valid for eps > 1.256")
        + ").",
    )
    least = report.least
    cols[2].metric(
        "Exact least q",
        "none below 1" if least.q is None else f"{least.q:.4g}",
        help="The least q at which no agent gains from any lie at this profile (every agent x "
        "every type).",
    )
    worst = report.exponential_audit.worst_case
    gains = worst["gain"] > 1e-12 * max(1.0, env.utility_range)  # within rounding of 0: no gain
    cols[3].metric(
        "Largest gain under M_eps",
        f"{worst['gain']:.3g}" if gains else "none (0)",
        help=(
            f"Agent {worst['agent']} (type {worst['true_type']!r}) reporting {worst['lie']!r}; "
            if gains
            else "No agent gains from any lie (every gain is within rounding of 0); "
        )
        + f"bound (e^eps - 1) U_max = {report.theorem.gain_exact:.3g}.",
    )
    profile = model.profile
    moved = (
        f"; values moved at most {model.moved:.3g} onto the type grid" if model.moved > 0 else ""
    )
    st.caption(
        f"{env.name}: {profile.n:,} agents in {profile.classes.size} classes, {env.n_types} types, "
        f"{env.n_outcomes:,} outcomes; eps = {model.exponential.epsilon:g} "
        f"(sensitivity {model.exponential.mechanism.sensitivity:g}, U_max "
        f"{env.utility_range:g}){moved}."
    )
    for diagnosis in (report.gap.diagnosis, least.diagnosis):
        if diagnosis:
            st.warning(diagnosis, icon=":material/warning:")
    if least.q is not None and least.agent is not None:
        st.caption(
            f"The exact q is set by agent {least.agent} (type {least.true_type!r}) reporting "
            f"{least.lie!r}: she gains G = {least.exponential_gain:.3g} under the "
            "exponential mechanism "
            f"and loses L = {least.commitment_loss:.3g} under M^P, so q = G / (G + L)."
        )


def set_q(q: float) -> None:
    """Put both q inputs (the log slider and the number box) at ``q``."""
    st.session_state["tr.q"] = float(q)
    st.session_state["tr.log_q"] = LOG_Q_MIN if q <= 0 else max(LOG_Q_MIN, min(0.0, math.log10(q)))


def q_from_log() -> None:
    st.session_state["tr.q"] = float(10 ** st.session_state["tr.log_q"])


def log_from_q() -> None:
    set_q(st.session_state["tr.q"])


def q_section(model: Model, key: tuple, world: tuple) -> tuple[float, dict]:
    """The q inputs and the live indicator; returns q and the mix's numbers at q.  q starts at the
    exact least q, and starts there again whenever the environment or the population (``world``)
    changes."""
    st.subheader("Mix (1 - q) M_eps + q M^P")
    least = model.report.least.q
    if st.session_state.get("tr.q_world") != world or "tr.q" not in st.session_state:
        st.session_state["tr.q_world"] = world
        set_q(0.5 if least is None else float(least))
    left, middle, right = st.columns([3, 1.3, 1.2], vertical_alignment="bottom")
    left.slider(
        "log10 q, where q is the probability of running the commitment mechanism",
        LOG_Q_MIN,
        0.0,
        key="tr.log_q",
        step=0.01,
        format="%.2f",
        on_change=q_from_log,
        persist_state="session",
        help="Slide log10 q from -7 (q = 0.0000001) to 0 (q = 1): -2 is q = 0.01; type any q "
        "in [0, 1] "
        "in the box beside it.",
    )
    q = middle.number_input(
        "q",
        0.0,
        1.0,
        key="tr.q",
        step=1e-5,
        format="%.6g",
        on_change=log_from_q,
        persist_state="session",
    )
    right.button(
        "Set q to the exact least q",
        key="button.tr_least",
        disabled=least is None,
        on_click=set_q,
        args=(0.0 if least is None else float(least),),
    )
    mix = mix_numbers(model, key, q)
    worst = mix["worst"]
    if mix["truthful"]:
        st.success(
            f"Exactly truthful at q = {q:.4g}: no agent gains from any lie "
            f"({best_lie(mix['max_gain'])}).",
            icon=":material/check_circle:",
        )
    else:
        st.warning(
            f"Violated at q = {q:.4g}: agent {worst['agent']} (type {worst['true_type']!r}) gains "
            f"{worst['gain']:.3g} by reporting {worst['lie']!r}.",
            icon=":material/report:",
        )
    return q, mix


def best_lie(gain: float) -> str:
    """The best lie of a truthful mix in words: what it costs, or that it changes nothing (within
    rounding)."""
    return (
        f"the best lie costs {-gain:.3g}"
        if gain < -1e-12
        else "the best lie changes nothing beyond rounding"
    )


def objective_frame(model: Model, mix: dict, q: float) -> pd.DataFrame:
    report = model.report
    name = model.exponential.environment.objective_name
    values = [
        report.optimum,
        report.exponential_objective,
        report.commitment_objective,
        mix["objective"],
    ]
    return pd.DataFrame(
        {
            "mechanism": [
                "optimum",
                "exponential mechanism",
                "M^P (commitment)",
                f"mix at q = {q:.4g}",
            ],
            f"expected {name}": values,
            "loss per agent": [(report.optimum - v) / model.profile.n for v in values],
        }
    )


def objective_chart(model: Model, frame: pd.DataFrame) -> None:
    name = model.exponential.environment.objective_name
    unit = "minus total distance" if name == "welfare" else "sum of prices paid"
    show_chart(
        dot_chart(
            frame,
            "mechanism",
            f"expected {name}",
            f"Expected {name} against the optimum",
            f"expected {name} ({unit})",
            lambda v: f"{v:,.6g}",
        ).properties(height=220)
    )
    st.dataframe(
        frame,
        hide_index=True,
        column_config={c: st.column_config.NumberColumn(format="%.6g") for c in frame.columns[1:]},
    )


def gains_chart(model: Model, mix: dict, q: float) -> pd.DataFrame:
    env = model.exponential.environment
    gains, classes = mix["gains"], mix["classes"]
    labels = [str(env.type_label(int(t))) for t in range(env.n_types)]
    frame = pd.DataFrame(
        {
            "true type": np.repeat([labels[int(c)] for c in classes], env.n_types),
            "reported type": np.tile(labels, classes.size),
            "gain": gains.ravel(),
        }
    )
    frame["lying pays"] = frame["gain"] > 1e-12 * max(1.0, env.utility_range)
    base = alt.Chart(frame).encode(
        x=alt.X("reported type:N", sort=labels, title="reported type (lie)"),
        y=alt.Y("true type:N", sort=labels, title="true type (agents present)"),
    )
    cells = base.mark_rect().encode(
        color=diverging("gain", "gain from the lie", gains.ravel()),
        tooltip=["true type", "reported type", alt.Tooltip("gain:Q", format=".3e")],
    )
    marks = base.transform_filter(alt.datum["lying pays"]).mark_rect(
        fill=None, stroke="black", strokeWidth=1.5
    )
    st.caption(
        "Each agent's gain from each lie under the mix at this q (rows: the types "
        "present). Diverging "
        "colours centred at 0 on a symmetric log scale: red, the lie pays (and is "
        "outlined); blue, it costs."
    )
    show_chart((cells + marks).properties(title=f"Gain from lying, mix at q = {q:.4g}", height=380))
    return frame


def facility_chart(model: Model, graph: nx.Graph, mix: dict) -> pd.DataFrame:
    """The graph (``model.graph``): residents per node (size), each node's probability of hosting an
    open facility (colour)."""
    env = model.exponential.environment
    choice = st.radio(
        "Facility probabilities under",
        ("the mix at q", "the exponential mechanism", "M^P (uniform)"),
        horizontal=True,
        key=remember("tr.law", "the mix at q"),
        persist_state="session",
    )
    law = {
        "the mix at q": mix["law"],
        "the exponential mechanism": model.exponential.distribution(model.profile).probabilities,
        "M^P (uniform)": model.commitment.distribution().probabilities,
    }[choice]
    nodes = list(graph.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    outcomes = np.asarray(env.outcomes).reshape(env.n_outcomes, -1)
    opened = np.bincount(
        np.vectorize(index.get)(outcomes).ravel(),
        weights=np.repeat(law, outcomes.shape[1]),
        minlength=len(nodes),
    )
    residents = np.zeros(len(nodes))
    np.add.at(residents, np.vectorize(index.get)(env.types), model.profile.counts)
    optimum = set(np.atleast_1d(outcomes[model.report.optimal_outcome]).tolist())
    pos = nx.get_node_attributes(graph, "pos")
    node_frame = pd.DataFrame(
        {
            "node": [str(v) for v in nodes],
            "x": [pos[v][0] for v in nodes],
            "y": [pos[v][1] for v in nodes],
            "residents": residents,
            "P(open)": opened,
            "optimal": [v in optimum for v in nodes],
        }
    )
    edge_frame = pd.DataFrame(
        [{"x": pos[u][0], "y": pos[u][1], "x2": pos[v][0], "y2": pos[v][1]} for u, v in graph.edges]
    )
    x = alt.X("x:Q", axis=None, scale=alt.Scale(padding=20))
    y = alt.Y("y:Q", axis=None, scale=alt.Scale(padding=20))
    edges = alt.Chart(edge_frame).mark_rule(color="#bbbbbb").encode(x=x, y=y, x2="x2:Q", y2="y2:Q")
    points = (
        alt.Chart(node_frame)
        .mark_circle(stroke="#333333", strokeWidth=0.5, opacity=1)
        .encode(
            x=x,
            y=y,
            size=alt.Size(
                "residents:Q",
                title="residents",
                scale=alt.Scale(range=[30, 900]),
                # below the graph, in a row: stacked under the colour bar it ran out of the chart
                legend=alt.Legend(orient="bottom", direction="horizontal"),
            ),
            color=alt.Color(
                "P(open):Q", title="P(facility open)", scale=alt.Scale(scheme="oranges")
            ),
            tooltip=["node", "residents", alt.Tooltip("P(open):Q", format=".4f"), "optimal"],
        )
    )
    best = (
        alt.Chart(node_frame[node_frame["optimal"]])
        .mark_point(shape="diamond", size=1100, color="#1f77b4", strokeWidth=3)
        .encode(x=x, y=y)
    )
    st.caption(
        "Circle size: residents at the node; colour: the probability that a facility opens there; "
        "blue diamonds: the optimal facilities."
    )
    show_chart((edges + points + best).properties(title="Where the facilities open", height=420))
    return node_frame


def pricing_chart(model: Model, mix: dict) -> pd.DataFrame:
    env = model.exponential.environment
    prices = np.asarray(env.outcomes, dtype=float)
    frame = pd.DataFrame(
        {
            "price": np.tile(prices, 3),
            "probability": np.concatenate(
                [
                    model.exponential.distribution(model.profile).probabilities,
                    model.commitment.distribution().probabilities,
                    mix["law"],
                ]
            ),
            "mechanism": np.repeat(
                ["exponential mechanism", "M^P (uniform)", "the mix at q"], prices.size
            ),
        }
    )
    # The mix is close to one of the other two laws at most q: dashes and hollow points keep every
    # series visible where they overlap.
    names = ["exponential mechanism", "M^P (uniform)", "the mix at q"]
    chart = (
        alt.Chart(frame)
        .mark_line(point=alt.OverlayMarkDef(filled=False, size=50), strokeWidth=2)
        .encode(
            x=alt.X("price:Q", title="price (value units)", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("probability:Q", title="probability of the price"),
            color=alt.Color(
                "mechanism:N",
                scale=alt.Scale(domain=names, range=["#1f77b4", "#7f7f7f", "#d62728"]),
                legend=alt.Legend(orient="top", direction="horizontal", labelLimit=0, title=None),
            ),
            strokeDash=alt.StrokeDash(
                "mechanism:N",
                scale=alt.Scale(domain=names, range=[[1, 0], [2, 2], [7, 4]]),
                legend=None,
            ),
            shape=alt.Shape(
                "mechanism:N",
                scale=alt.Scale(domain=names, range=["circle", "square", "triangle-up"]),
                legend=None,
            ),
            order=alt.Order("mechanism:N"),
            tooltip=[
                "mechanism",
                alt.Tooltip("price:Q", format=".4f"),
                alt.Tooltip("probability:Q", format=".4f"),
            ],
        )
    )
    show_chart(chart.properties(title="Law of the posted price (exact)", height=380))
    return frame


THEORY = [
    (
        "The exponential mechanism M_eps picks outcome s with weights set by the "
        "objective F (total welfare or "
        "revenue) of the reports, Delta its sensitivity:",
        r"\Pr[s] \;\propto\; \exp\!\Big(\frac{\varepsilon\, "
        r"F(t, s)}{2\Delta}\Big)",
    ),
    (
        "The commitment mechanism M^P draws s uniformly and makes each agent react as "
        "her reported type would. "
        "Its gap gamma is the least that a lie can be made to cost:",
        r"\gamma = \min_{i,\; t_i \ne t_i',\; t_{-i}}\; \max_{s}\; \big[u(t_i, s, r_i(t_i, s)) - "
        r"u(t_i, s, r_i(t_i', s))\big]",
    ),
    (
        "The mix (1 - q) M_eps + q M^P is exactly truthful once the most a lie gains under M_eps, "
        "G <= (e^eps - 1) U_max, is outweighed by what M^P takes away (the worst outcome "
        "has probability "
        ">= 1/|P|):",
        r"(1 - q)\, G \;\le\; q\, \frac{\gamma}{|P|} \quad\Longleftrightarrow\quad q \;\ge\; "
        r"\frac{G\,|P|}{G\,|P| + \gamma}",
    ),
    (
        "On a finite type space the least such q at this profile is computed exactly: "
        "for every agent and lie, "
        "with G her gain under M_eps and L her loss under M^P,",
        r"q^{*} = \max_{i,\; t_i'} \frac{G_i(t_i')}"
        r"{G_i(t_i') + L_i(t_i')}",
    ),
]


def theory() -> None:
    with st.expander("The mechanisms and the theorem", icon=":material/function:"):
        for text, formula in THEORY:
            st.markdown(text)
            st.latex(formula)


def page() -> None:
    st.title(TITLE)
    st.caption(
        "Nissim, Smorodinsky & Tennenholtz (2012); Dwork & Roth 10.2.3. With probability "
        "1 - q run the "
        "exponential mechanism (eps-DP, near-optimal, a lie gains a little), with "
        "probability q the "
        "commitment mechanism M^P (a uniformly random outcome, and every agent must react as her "
        "REPORTED type would: a lie then costs). Every gain below is exact: every agent "
        "against every "
        "type as a lie, the others truthful."
    )
    theory()
    tables, seed = inputs()
    model = checked(build_model, tables, seed)
    headline(model)
    key = (tables, seed)
    q, mix = q_section(model, key, (tables[0], tables[1], seed))
    left, right = st.columns(2)
    with left:
        if model.graph is not None:
            law = facility_chart(model, model.graph, mix)
        else:
            law = pricing_chart(model, mix)
    with right:
        objectives = objective_frame(model, mix, q)
        objective_chart(model, objectives)
        gains = gains_chart(model, mix, q)
    st.subheader("Downloads")
    data = scenario_data(tables, seed)
    downloads(
        "nst_mix_app",
        lambda: result_json(tables, seed),
        {
            "objectives": objectives,
            "gains at q": gains,
            "laws" if model.graph is None else "facilities": law,
        },
        lambda: Scenario.from_dict(data).to_toml(),
        key="tr_download",
    )
    st.caption(
        "`dpgames run nst_mix_app.toml` prints the gap, both q and the objectives above "
        "(the mix at the "
        "exact least q; the tables here are at the q you chose)."
    )


page()
