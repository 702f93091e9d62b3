"""Page: large games and the jointly private mediator (Kearns, Pai, Roth & Ullman 2014; Dwork & Roth 10.2.2).

The inputs become the tables of a ``large_game`` scenario, read by the scenario layer itself
(dpgames.scenarios.large_game), and the page calls that kind's ``play``: the game, the user
equilibrium, the system optimum and the private mediator, exactly as ``dpgames run`` computes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import altair as alt
import networkx as nx
import numpy as np
import pandas as pd
import streamlit as st

from dpgames.games.assignment import price_of_anarchy
from dpgames.games.network import RoutingGame
from dpgames.scenarios import Table
from dpgames.scenarios import large_game as large_game_kind
from dpgames_app.ui import checked, remember, show_chart

TITLE = "Large games"
SOURCE = "inputs"
PIGOU, GRID = "Pigou (two roads)", "Grid (synthetic)"
FLOWS = ("the mediator's suggestions", "the user equilibrium", "the system optimum")
LAYOUT_NODES = 200  # above this, a force layout (seeded) instead of Kamada-Kawai
BIG_GAME = 20_000   # classes (OD pairs) above which solving waits for a button: it takes minutes
GAPS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-8)
KEEP = {"persist_state": "session"}


@dataclass(frozen=True)
class Played:
    """The model, its baselines and the mediator's outcome for one set of inputs (kept, not copied)."""

    model: object
    players: np.ndarray
    equilibrium: object
    optimum: object
    outcome: object
    positions: dict | None


# ---------------------------------------------------------------- library calls (cached)

@st.cache_resource(show_spinner="Reading the game...", max_entries=8)
def build(tables: tuple) -> tuple:
    """Parse the scenario tables with the large_game kind and build the game: ``(spec, model)``.

    ``tables`` is ``(game, baselines, mediator)`` as sorted item tuples."""
    game, baselines, mediator = (dict(t) for t in tables)
    spec = large_game_kind.parse(Table({"game": game, "baselines": baselines, "mediator": mediator,
                                        "incentives": {"enabled": False}}, SOURCE))
    return spec, spec.build()


@st.cache_resource(show_spinner="Solving the equilibria and running the mediator...", max_entries=8)
def play(tables: tuple, seed: int, layout: tuple | None) -> Played:
    """Solve the baselines and run the mediator; ``layout`` says how to place the nodes
    (``("grid", rows, cols)``, ``("file", path)`` or ``("graph",)``)."""
    spec, model = build(tables)
    game = large_game_kind.play(spec, np.random.SeedSequence(seed), model)
    positions = node_positions(model, layout) if isinstance(model, RoutingGame) else None
    return Played(model, game.players, game.equilibrium, game.optimum, game.outcome, positions)


def node_positions(model: RoutingGame, layout: tuple) -> dict:
    """Where to draw each node: the grid's own layout, a TNTP node file's coordinates, or a layout
    computed from the graph (deterministic)."""
    labels = model.network.labels.tolist()
    if layout[0] == "grid":
        cols = layout[2]
        return {v: (v % cols, -(v // cols)) for v in labels}
    if layout[0] == "file":
        table = pd.read_csv(layout[1], sep=r"\s+", comment=";", skipinitialspace=True)
        table.columns = [c.strip().lower() for c in table.columns]
        coords = {int(r.node): (float(r.x), float(r.y)) for r in table.itertuples()}
        if all(v in coords for v in labels):
            return coords
    graph = nx.Graph(list(zip(model.network.tail.tolist(), model.network.head.tolist())))
    if graph.number_of_nodes() <= LAYOUT_NODES:
        return nx.kamada_kawai_layout(graph)
    return nx.spring_layout(graph, seed=0)


# ---------------------------------------------------------------- inputs

def tntp_folders() -> list[Path]:
    root = large_game_kind.default_tntp_dir()
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def inputs() -> tuple[tuple, int, tuple | None, str]:
    """The sidebar, as the tables of a large_game scenario; the seed, the node layout and a description."""
    folders = {f"TNTP: {p.name}": p for p in tntp_folders()}
    st.sidebar.subheader("Game")
    network = st.sidebar.selectbox("Network", [PIGOU, GRID, *folders], key=remember("lg.network", GRID), **KEEP,
                                   help="TNTP networks are read from $DPGAMES_TNTP_DIR (else ../shared/data/tntp "
                                        "beside the repository).")
    if not folders:
        st.sidebar.caption("No TNTP networks found: set DPGAMES_TNTP_DIR to a folder of TNTP networks.")
    seed = int(st.sidebar.number_input("Seed", 0, 2**32 - 1, key=remember("lg.seed", 3), step=1, **KEEP,
                                       help="Seeds the mediator's noise and suggestions (as `dpgames run --seed`)."))
    if network == PIGOU:
        n = int(st.sidebar.number_input("Drivers n", 1, 1_000_000, key=remember("lg.pigou_n", 1000), step=100, **KEEP))
        # Pigou's example: road 0 always costs 1; road 1 costs the fraction of the drivers on it.
        game = {"source": "resources", "free": [1.0, 0.0], "coef": [0.0, 1.0 / n], "power": [1.0, 1.0],
                "classes": [{"players": n, "actions": [[0], [1]]}]}
        layout, described = None, f"Pigou's two roads, {n:,} drivers: road 0 costs 1, road 1 costs its share of drivers"
    elif network == GRID:
        left, right = st.sidebar.columns(2)
        rows = int(left.number_input("rows", 2, 30, key=remember("lg.rows", 10), **KEEP))
        cols = int(right.number_input("columns", 2, 30, key=remember("lg.cols", 10), **KEEP))
        pairs = int(left.number_input("OD pairs", 1, 200, key=remember("lg.pairs", 20), **KEEP))
        grid_seed = int(right.number_input("grid seed", 0, 2**32 - 1, key=remember("lg.grid_seed", 1), **KEEP))
        n = int(st.sidebar.number_input("Drivers n", 1, 1_000_000, key=remember("lg.grid_n", 10_000), step=1000, **KEEP))
        game = {"source": "grid", "rows": rows, "cols": cols, "pairs": pairs, "players": n, "grid_seed": grid_seed}
        layout = ("grid", rows, cols)
        described = f"a {rows} x {cols} road grid, {n:,} drivers on {pairs} random OD pairs (BPR link costs)"
    else:
        folder = folders[network]
        scale = st.sidebar.number_input("Demand scale", 0.0001, 1000.0, key=remember(f"lg.scale.{folder.name}", 1.0),
                                        format="%.4f", **KEEP, help="Multiplies every OD pair's trips.")
        game = {"source": "tntp", "network": folder.name, "demand_scale": scale}  # from default_tntp_dir()
        node_file = folder / f"{folder.name}_node.tntp"
        layout = ("file", str(node_file)) if node_file.is_file() else ("graph",)
        described = f"the TNTP network {folder.name}, demand x {scale:g}"
    mediator = mediator_inputs()
    gap = st.sidebar.select_slider("Baselines solved to relative gap", GAPS, key=remember("lg.gap", 1e-4), **KEEP,
                                   format_func=lambda g: f"{g:.0e}")
    baselines = {"gap": gap, "method": "path-based"}
    tables = tuple(tuple(sorted(t.items())) for t in (game, baselines, mediator))
    return tables, seed, layout, described


def mediator_inputs() -> dict:
    st.sidebar.subheader("Private mediator")
    noise = st.sidebar.selectbox("Noise on the published loads", ("gaussian", "tree", "none"),
                                 key=remember("lg.noise", "gaussian"), **KEEP,
                                 help="gaussian: per round, zCDP accounting; tree: binary-tree counter; none: "
                                      "the non-private dynamics.")
    eps = st.sidebar.number_input("Privacy epsilon (all rounds)", 0.0, 1000.0, key=remember("lg.eps", 1.0), step=0.1,
                                  format="%.3f", **KEEP, disabled=noise == "none")
    delta = st.sidebar.number_input("delta", 1e-12, 0.5, key=remember("lg.delta", 1e-6), format="%.1e", **KEEP)
    rounds = st.sidebar.number_input("Rounds T", 2, 20_000, key=remember("lg.rounds", 1000), step=100, **KEEP)
    dynamics = st.sidebar.radio("Dynamics", ("hedge", "blum-mansour"), horizontal=True,
                                key=remember("lg.dynamics", "hedge"), **KEEP,
                                help="hedge: coarse correlated equilibrium; blum-mansour: swap regret, "
                                     "a correlated equilibrium.")
    return {"epsilon": eps, "delta": delta, "rounds": int(rounds), "noise": noise, "dynamics": dynamics}


# ---------------------------------------------------------------- outputs

def headline(played: Played) -> None:
    out, ue, so = played.outcome, played.equilibrium, played.optimum
    cols = st.columns(5)
    cols[0].metric("Mediator cost (expected)", f"{out.total_expected_cost:,.2f}",
                   help="Players following the suggestions, in expectation over the suggested distribution.")
    cols[1].metric("User equilibrium", f"{ue.total_cost:,.2f}", help=f"Relative gap {ue.relative_gap:.1e}.")
    cols[2].metric("System optimum", f"{so.total_cost:,.2f}",
                   help=f"Price of anarchy {price_of_anarchy(ue, so):.4f}.")
    cols[3].metric("alpha (largest regret)", f"{out.max_alpha:.4g}",
                   help=f"Largest gain of a unilateral deviation from the suggested distribution ({out.evaluation}).")
    spent = out.privacy.epsilon
    cols[4].metric("Privacy spent: epsilon", "none (no noise)" if not np.isfinite(spent) else f"{spent:.4g}",
                   help=f"At delta = {out.privacy.delta:g}; zCDP rho = {out.rho:.4g}.")
    st.caption(f"{int(played.players.sum()):,} players in {played.players.size} classes, {out.game.num_resources} "
               f"resources, {out.game.num_actions} actions; noise sd {out.sigma:.4g} per resource and round; "
               f"l2 sensitivity {out.sensitivity_l2:.4g} of a round's loads; neighbouring relation: "
               f"{out.privacy.neighbouring}. Costs are in the network's time units.")


def regret_chart(played: Played) -> None:
    trace = pd.DataFrame({"round": np.asarray(played.outcome.trace["round"]),
                          "alpha": np.asarray(played.outcome.trace["alpha"])})
    chart = alt.Chart(trace).mark_line(point=len(trace) <= 30).encode(
        x=alt.X("round:Q", title="round t"), y=alt.Y("alpha:Q", title="alpha: largest regret (cost units)"),
        tooltip=["round", alt.Tooltip("alpha:Q", format=".4g")])
    st.caption("alpha after t rounds: the largest gain of a unilateral deviation from the distribution the "
               "dynamics have computed so far, on the true game.")
    show_chart(chart.properties(title="Regret against rounds", height=280))


def cost_chart(played: Played) -> None:
    out = played.outcome
    frame = pd.DataFrame({"flow": ["mediator (expected)", "mediator (realised suggestions)", "user equilibrium",
                                   "system optimum"],
                          "total cost": [out.total_expected_cost, out.realised_total_cost,
                                         played.equilibrium.total_cost, played.optimum.total_cost]})
    chart = alt.Chart(frame).mark_bar().encode(
        y=alt.Y("flow:N", sort=None, title=None, axis=alt.Axis(labelLimit=240)),
        x=alt.X("total cost:Q", title="total cost (time units)"),
        color=alt.Color("flow:N", legend=None), tooltip=["flow", alt.Tooltip("total cost:Q", format=",.3f")])
    show_chart(chart.properties(title="Total cost against the baselines", height=220))


def loads_of(played: Played, which: str) -> np.ndarray:
    if which == FLOWS[0]:
        return played.outcome.game.loads(played.outcome.suggestions)
    return (played.equilibrium if which == FLOWS[1] else played.optimum).loads


def flow_section(played: Played) -> None:
    which = st.radio("Flows of", FLOWS, horizontal=True, key=remember("lg.flows", FLOWS[0]), **KEEP)
    loads = loads_of(played, which)
    if played.positions is None:
        frame = pd.DataFrame({"road": [f"road {r}" for r in range(loads.size)], "drivers": loads})
        chart = alt.Chart(frame).mark_bar().encode(x=alt.X("road:N", title=None),
                                                    y=alt.Y("drivers:Q", title="drivers on the road"),
                                                    tooltip=["road", alt.Tooltip("drivers:Q", format=",.2f")])
        show_chart(chart.properties(title=f"Load of each road: {which}", height=320))
        return
    network, pos = played.model.network, played.positions
    tail, head = network.tail.tolist(), network.head.tolist()
    # Both directions of a road are drawn as one segment carrying their sum.
    roads: dict[tuple, float] = {}
    for u, v, x in zip(tail, head, loads.tolist()):
        key = (u, v) if str(u) <= str(v) else (v, u)
        roads[key] = roads.get(key, 0.0) + x
    frame = pd.DataFrame([{"x": pos[u][0], "y": pos[u][1], "x2": pos[v][0], "y2": pos[v][1], "road": f"{u} - {v}",
                           "load": x} for (u, v), x in roads.items()])
    x = alt.X("x:Q", axis=None, scale=alt.Scale(zero=False, padding=10))
    y = alt.Y("y:Q", axis=None, scale=alt.Scale(zero=False, padding=10))
    edges = alt.Chart(frame).mark_rule().encode(
        x=x, y=y, x2="x2:Q", y2="y2:Q",
        color=alt.Color("load:Q", title="players (both directions)", scale=alt.Scale(scheme="inferno", reverse=True),
                        legend=alt.Legend(orient="bottom", gradientLength=300)),
        strokeWidth=alt.StrokeWidth("load:Q", legend=None, scale=alt.Scale(range=[0.5, 7])),
        tooltip=["road", alt.Tooltip("load:Q", format=",.1f")])
    nodes = pd.DataFrame({"x": [pos[v][0] for v in network.labels.tolist()],
                          "y": [pos[v][1] for v in network.labels.tolist()],
                          "node": [str(v) for v in network.labels.tolist()]})
    dots = alt.Chart(nodes).mark_circle(size=18, color="#444444").encode(x=x, y=y, tooltip=["node"])
    show_chart((edges + dots).properties(title=f"Link loads: {which}", height=460))


def class_table(played: Played) -> None:
    out = played.outcome
    names = out.game.class_names or tuple(str(k) for k in range(played.players.size))
    frame = pd.DataFrame({"class (OD pair)": list(names), "players": played.players, "alpha": out.alpha,
                          "expected cost": out.expected_cost})
    with st.expander(f"Per class: regret and expected cost ({len(frame)} classes)"):
        st.dataframe(frame.sort_values("players", ascending=False).head(2000), hide_index=True)


def page() -> None:
    st.title(TITLE)
    st.caption("Kearns, Pai, Roth & Ullman (2014); Dwork & Roth 10.2.2. Players report their types (origin and "
               "destination) to a mediator that runs no-regret dynamics on noisy published loads and suggests "
               "each player a route. The suggestions to everybody but one player are jointly "
               "differentially private in that player's report, so truthful reporting and following is an "
               "approximate equilibrium. Baselines: the user equilibrium and the system optimum.")
    tables, seed, layout, described = inputs()
    st.markdown(f"**Game:** {described}.")
    _, model = checked(build, tables)
    classes = model.num_classes
    if classes > BIG_GAME and not st.session_state.get("lg.confirmed") == tables:
        st.info(f"This game has {classes:,} classes (OD pairs): the equilibria and the mediator take minutes.")
        if not st.button("Solve it", key="button.lg_solve", type="primary"):
            st.stop()
        st.session_state["lg.confirmed"] = tables
    played = checked(play, tables, seed, layout)
    headline(played)
    left, right = st.columns([3, 2])
    with left:
        flow_section(played)
    with right:
        cost_chart(played)
        regret_chart(played)
    class_table(played)


page()
