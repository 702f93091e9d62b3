"""Page: exact truthfulness by mixing (Nissim, Smorodinsky & Tennenholtz 2012; Dwork & Roth 10.2.3).

The inputs are turned into an ``nst_mix`` scenario table and read by the scenario layer itself
(dpgames.scenarios.nst_mix), so the page builds exactly the environment, population and mechanisms
that ``dpgames run`` builds; every number then comes from dpgames.analysis.truthfulness (nst_report,
truthfulness_audit) and the mechanisms' exact laws.
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import networkx as nx
import numpy as np
import pandas as pd
import streamlit as st

from dpgames import CommitmentMechanism, NSTMix, grid_graph, line_graph, nst_report, truthfulness_audit
from dpgames.scenarios import Table
from dpgames.scenarios import nst_mix as nst_mix_kind
from dpgames_app.ui import checked, remember, show_chart

TITLE = "Exact truthfulness"
SOURCE = "inputs"
ENVIRONMENTS = ("Pricing (digital goods)", "Facility location")
KEEP = {"persist_state": "session"}


@dataclass(frozen=True)
class Model:
    """The mechanisms, the profile and the NST report for one set of inputs (kept, not copied)."""

    exponential: object
    commitment: CommitmentMechanism
    profile: object
    report: object
    moved: float
    graph: nx.Graph | None


# ---------------------------------------------------------------- library calls (cached)

@st.cache_resource(show_spinner="Computing the exact audits...", max_entries=16)
def build_model(tables: tuple, seed: int) -> Model:
    """Parse the scenario tables with the nst_mix kind and compute the NST report.

    ``tables`` is ``(environment, population, mechanism)`` as sorted item tuples (hashable)."""
    environment, population, mechanism = (dict(t) for t in tables)
    spec = nst_mix_kind.parse(Table({"environment": environment, "population": population,
                                     "mechanism": mechanism}, SOURCE))
    rng = nst_mix_kind.population_rng(np.random.SeedSequence(seed))
    exponential, profile, moved = spec.setup(None, rng, None)
    commitment = CommitmentMechanism(exponential.environment)
    graph = None
    if environment["type"] == "facility_location":
        graph = grid_graph(environment["rows"], environment["cols"]) if environment["graph"] == "grid" \
            else line_graph(environment["nodes"])
    return Model(exponential, commitment, profile, nst_report(exponential, commitment, profile), moved, graph)


@st.cache_data(show_spinner=False, max_entries=256)
def mix_numbers(_model: Model, key: tuple, q: float) -> dict:
    """The mix at ``q``: its exact audit (gains by class x lie), expected objective and outcome law."""
    mix = NSTMix(_model.exponential, _model.commitment, q)
    audit = truthfulness_audit(mix, _model.profile)
    return {"truthful": audit.is_truthful(), "max_gain": audit.max_gain, "worst": audit.worst_case,
            "gains": audit.gains, "classes": audit.classes, "objective": mix.expected_objective(_model.profile),
            "law": mix.distribution(_model.profile).probabilities}


# ---------------------------------------------------------------- inputs

def inputs() -> tuple[tuple, int]:
    """The sidebar, as the three tables of an nst_mix scenario, and the seed."""
    st.sidebar.subheader("Environment")
    kind = st.sidebar.radio("Environment", ENVIRONMENTS, key=remember("tr.env", ENVIRONMENTS[1]), **KEEP,
                            label_visibility="collapsed")
    seed = int(st.sidebar.number_input("Seed", 0, 2**32 - 1, key=remember("tr.seed", 2026), step=1, **KEEP,
                                       help="Draws the agents' types (as `dpgames run --seed` would)."))
    if kind == ENVIRONMENTS[0]:
        environment, population, mechanism = pricing_inputs()
    else:
        environment, population, mechanism = facility_inputs()
    tables = tuple(tuple(sorted(t.items())) for t in (environment, population, mechanism))
    return tables, seed


def pricing_inputs() -> tuple[dict, dict, dict]:
    n = st.sidebar.number_input("Bidders n", 1, 100_000, key=remember("tr.price_n", 1000), step=100, **KEEP)
    st.sidebar.caption("Values uniform on [0, 1], each moved to the nearest point of the type grid (the "
                       "midpoints between consecutive prices).")
    st.sidebar.subheader("Mechanism")
    eps = st.sidebar.number_input("Privacy epsilon", 0.0, 100.0, key=remember("tr.price_eps", 0.5), step=0.1,
                                  format="%.3f", **KEEP)
    alpha = st.sidebar.number_input("Price grid step alpha", 0.01, 1.0, key=remember("tr.alpha", 0.05), step=0.01,
                                    format="%.3f", **KEEP, help="Prices alpha, 2 alpha, ..., 1: the outcomes.")
    reactions = st.sidebar.radio("Reactions under the exponential mechanism", ("forced", "free"), horizontal=True,
                                 key=remember("tr.price_reactions", "forced"), **KEEP,
                                 help="forced: the auction sells by the bids; free: NST's posted price, "
                                      "everyone buys by her true value.")
    return ({"type": "pricing"}, {"distribution": "uniform", "n": int(n)},
            {"epsilon": eps, "alpha": alpha, "reactions": reactions})


def facility_inputs() -> tuple[dict, dict, dict]:
    graph = st.sidebar.radio("Graph", ("grid", "line"), horizontal=True, key=remember("tr.graph", "grid"), **KEEP)
    environment: dict = {"type": "facility_location", "graph": graph}
    left, right = st.sidebar.columns(2)
    if graph == "grid":
        environment["rows"] = int(left.number_input("rows", 1, 10, key=remember("tr.rows", 6), **KEEP))
        environment["cols"] = int(right.number_input("columns", 1, 10, key=remember("tr.cols", 6), **KEEP))
    else:
        environment["nodes"] = int(left.number_input("nodes", 2, 60, key=remember("tr.nodes", 12), **KEEP))
    environment["k"] = int(st.sidebar.number_input("Facilities to open k", 1, 3, key=remember("tr.k", 2), **KEEP))
    n = st.sidebar.number_input("Residents n", 1, 100_000, key=remember("tr.fac_n", 400), step=50, **KEEP,
                                help="Each lives at a node drawn uniformly; her location is her private type.")
    st.sidebar.subheader("Mechanism")
    eps = st.sidebar.number_input("Privacy epsilon", 0.0, 100.0, key=remember("tr.fac_eps", 1.0), step=0.1,
                                  format="%.3f", **KEEP)
    reactions = st.sidebar.radio("Reactions under the exponential mechanism", ("free", "forced"), horizontal=True,
                                 key=remember("tr.fac_reactions", "free"), **KEEP,
                                 help="free: residents use the facility nearest their true home (NST); "
                                      "forced: nearest their reported home.")
    return environment, {"distribution": "uniform", "n": int(n)}, {"epsilon": eps, "reactions": reactions}


# ---------------------------------------------------------------- outputs

def headline(model: Model) -> None:
    report, env = model.report, model.exponential.environment
    cols = st.columns(4)
    cols[0].metric("Gap gamma of M^P", f"{report.gap.gamma:.4g}",
                   help=f"min over pairs of types of the most a forced reaction can cost; attained by type "
                        f"{report.gap.true_label!r} reporting {report.gap.lie_label!r}.")
    q_theorem = report.theorem.q_exact_form
    cols[1].metric("q from the theorem", "none" if q_theorem is None else f"{q_theorem:.4g}",
                   help="q = G |P| / (G |P| + gamma) with G = (e^eps - 1) U_max (Dwork & Roth's 2 eps U_max: "
                        + ("none" if report.theorem.q_dwork_roth is None else f"{report.theorem.q_dwork_roth:.4g}")
                        + ("" if report.theorem.dwork_roth_valid else ", NOT valid for eps > 1.256") + ").")
    least = report.least
    cols[2].metric("Exact least q", "none below 1" if least.q is None else f"{least.q:.4g}",
                   help="The least q at which no agent gains from any lie at this profile (every agent x every type).")
    worst = report.exponential_audit.worst_case
    cols[3].metric("Largest gain under M_eps", f"{worst['gain']:.3g}",
                   help=f"Agent {worst['agent']} (type {worst['true_type']!r}) reporting {worst['lie']!r}; "
                        f"bound (e^eps - 1) U_max = {report.theorem.gain_exact:.3g}.")
    profile = model.profile
    moved = f"; values moved at most {model.moved:.3g} onto the type grid" if model.moved > 0 else ""
    st.caption(f"{env.name}: {profile.n:,} agents in {profile.classes.size} classes, {env.n_types} types, "
               f"{env.n_outcomes:,} outcomes; eps = {model.exponential.epsilon:g} "
               f"(sensitivity {model.exponential.mechanism.sensitivity:g}, U_max {env.utility_range:g}){moved}.")
    for diagnosis in (report.gap.diagnosis, least.diagnosis):
        if diagnosis:
            st.warning(diagnosis, icon=":material/warning:")
    if least.q is not None and least.agent is not None:
        st.caption(f"The exact q is set by agent {least.agent} (type {least.true_type!r}) reporting "
                   f"{least.lie!r}: she gains G = {least.exponential_gain:.3g} under the exponential mechanism "
                   f"and loses L = {least.commitment_loss:.3g} under M^P, so q = G / (G + L).")


def use_least_q(q: float) -> None:
    st.session_state["tr.q"] = q


def q_section(model: Model, key: tuple) -> dict:
    """The q slider and the live indicator; returns the mix's numbers at the chosen q."""
    st.subheader("Mix (1 - q) M_eps + q M^P")
    least = model.report.least.q
    remember("tr.q", 0.5 if least is None else float(least))
    left, right = st.columns([3, 1])
    q = left.slider("q: probability of running the commitment mechanism", 0.0, 1.0, key="tr.q", step=0.0001,
                    format="%.4f", **KEEP)
    right.button("Set q to the exact least q", key="button.tr_least", disabled=least is None,
                 on_click=use_least_q, args=(0.0 if least is None else float(least),))
    mix = mix_numbers(model, key, q)
    worst = mix["worst"]
    if mix["truthful"]:
        st.success(f"Exactly truthful at q = {q:.4f}: no agent gains from any lie (largest gain "
                   f"{mix['max_gain']:.3g}).", icon=":material/check_circle:")
    else:
        st.warning(f"Violated at q = {q:.4f}: agent {worst['agent']} (type {worst['true_type']!r}) gains "
                   f"{worst['gain']:.3g} by reporting {worst['lie']!r}.", icon=":material/report:")
    return mix


def objective_chart(model: Model, mix: dict, q: float) -> None:
    report, env = model.report, model.exponential.environment
    name = env.objective_name
    frame = pd.DataFrame({"mechanism": ["optimum", "exponential mechanism", "M^P (commitment)", f"mix at q = {q:.4f}"],
                          "value": [report.optimum, report.exponential_objective, report.commitment_objective,
                                    mix["objective"]]})
    unit = "minus the total distance, in edges" if name == "welfare" else "sum of prices paid"
    chart = alt.Chart(frame).mark_bar().encode(
        y=alt.Y("mechanism:N", sort=None, title=None, axis=alt.Axis(labelLimit=220)),
        x=alt.X("value:Q", title=f"expected {name} ({unit})"), color=alt.Color("mechanism:N", legend=None),
        tooltip=["mechanism", alt.Tooltip("value:Q", format=",.4f")])
    show_chart(chart.properties(title=f"Expected {name} against the optimum", height=220))
    n = model.profile.n
    table = pd.DataFrame({"mechanism": frame["mechanism"], f"expected {name}": frame["value"],
                          "loss per agent": (report.optimum - frame["value"]) / n})
    st.dataframe(table, hide_index=True,
                 column_config={c: st.column_config.NumberColumn(format="%.6g") for c in table.columns[1:]})


def gains_chart(model: Model, mix: dict, q: float) -> None:
    env = model.exponential.environment
    gains, classes = mix["gains"], mix["classes"]
    labels = [str(env.type_label(int(t))) for t in range(env.n_types)]
    frame = pd.DataFrame({"true type": np.repeat([labels[int(c)] for c in classes], env.n_types),
                          "reported type": np.tile(labels, classes.size), "gain": gains.ravel()})
    frame["lying pays"] = frame["gain"] > 1e-12 * max(1.0, env.utility_range)
    top = float(np.abs(gains).max()) or 1.0
    base = alt.Chart(frame).encode(
        x=alt.X("reported type:N", sort=labels, title="reported type (lie)"),
        y=alt.Y("true type:N", sort=labels, title="true type (agents present)"))
    cells = base.mark_rect().encode(
        color=alt.Color("gain:Q", title="gain", scale=alt.Scale(scheme="redblue", domain=[-top, top])),
        tooltip=["true type", "reported type", alt.Tooltip("gain:Q", format=".3e")])
    marks = base.transform_filter(alt.datum["lying pays"]).mark_rect(fill=None, stroke="black", strokeWidth=1.5)
    st.caption("Each agent's gain from each lie under the mix at this q (rows: the types present); an outlined "
               "cell is a lie that pays.")
    show_chart((cells + marks).properties(title=f"Gain from lying, mix at q = {q:.4f}", height=380))


def facility_chart(model: Model, mix: dict) -> None:
    """The graph: residents per node (size), each node's probability of hosting an open facility (colour)."""
    env, graph = model.exponential.environment, model.graph
    choice = st.radio("Facility probabilities under", ("the mix at q", "the exponential mechanism", "M^P (uniform)"),
                      horizontal=True, key=remember("tr.law", "the mix at q"), **KEEP)
    law = {"the mix at q": mix["law"],
           "the exponential mechanism": model.exponential.distribution(model.profile).probabilities,
           "M^P (uniform)": model.commitment.distribution().probabilities}[choice]
    nodes = list(graph.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    outcomes = np.asarray(env.outcomes).reshape(env.n_outcomes, -1)
    opened = np.bincount(np.vectorize(index.get)(outcomes).ravel(), weights=np.repeat(law, outcomes.shape[1]),
                         minlength=len(nodes))
    residents = np.zeros(len(nodes))
    np.add.at(residents, np.vectorize(index.get)(env.types), model.profile.counts)
    optimum = set(np.atleast_1d(outcomes[model.report.optimal_outcome]).tolist())
    pos = nx.get_node_attributes(graph, "pos")
    node_frame = pd.DataFrame({"node": [str(v) for v in nodes], "x": [pos[v][0] for v in nodes],
                               "y": [pos[v][1] for v in nodes], "residents": residents,
                               "P(open)": opened, "optimal": [v in optimum for v in nodes]})
    edge_frame = pd.DataFrame([{"x": pos[u][0], "y": pos[u][1], "x2": pos[v][0], "y2": pos[v][1]}
                               for u, v in graph.edges])
    x = alt.X("x:Q", axis=None, scale=alt.Scale(padding=20))
    y = alt.Y("y:Q", axis=None, scale=alt.Scale(padding=20))
    edges = alt.Chart(edge_frame).mark_rule(color="#bbbbbb").encode(x=x, y=y, x2="x2:Q", y2="y2:Q")
    points = alt.Chart(node_frame).mark_circle(stroke="#333333", strokeWidth=0.5, opacity=1).encode(
        x=x, y=y, size=alt.Size("residents:Q", title="residents", scale=alt.Scale(range=[30, 900])),
        color=alt.Color("P(open):Q", title="P(facility open)", scale=alt.Scale(scheme="oranges")),
        tooltip=["node", "residents", alt.Tooltip("P(open):Q", format=".4f"), "optimal"])
    best = alt.Chart(node_frame[node_frame["optimal"]]).mark_point(shape="diamond", size=1100, color="#1f77b4",
                                                                   strokeWidth=3).encode(x=x, y=y)
    st.caption("Circle size: residents at the node; colour: the probability that a facility opens there; "
               "blue diamonds: the optimal facilities.")
    show_chart((edges + points + best).properties(title="Where the facilities open", height=420))


def pricing_chart(model: Model, mix: dict) -> None:
    env = model.exponential.environment
    prices = np.asarray(env.outcomes, dtype=float)
    frame = pd.DataFrame({"price": np.tile(prices, 3),
                          "probability": np.concatenate([model.exponential.distribution(model.profile).probabilities,
                                                         model.commitment.distribution().probabilities, mix["law"]]),
                          "mechanism": np.repeat(["exponential mechanism", "M^P (uniform)", "the mix at q"],
                                                 prices.size)})
    chart = alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("price:Q", title="price (value units)", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("probability:Q", title="probability of the price"),
        color=alt.Color("mechanism:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["mechanism", "price", alt.Tooltip("probability:Q", format=".4f")])
    show_chart(chart.properties(title="Law of the posted price (exact)", height=380))


def page() -> None:
    st.title(TITLE)
    st.caption("Nissim, Smorodinsky & Tennenholtz (2012); Dwork & Roth 10.2.3. With probability 1 - q run the "
               "exponential mechanism (eps-DP, near-optimal, a lie gains a little), with probability q the "
               "commitment mechanism M^P (a uniformly random outcome, and every agent must react as her "
               "REPORTED type would: a lie then costs). Every gain below is exact: every agent against every "
               "type as a lie, the others truthful.")
    tables, seed = inputs()
    model = checked(build_model, tables, seed)
    headline(model)
    key = (tables, seed)
    mix = q_section(model, key)
    q = st.session_state["tr.q"]
    left, right = st.columns(2)
    with left:
        if model.graph is not None:
            facility_chart(model, mix)
        else:
            pricing_chart(model, mix)
    with right:
        objective_chart(model, mix, q)
        gains_chart(model, mix, q)


page()
