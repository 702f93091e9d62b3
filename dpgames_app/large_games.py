"""Page: large games and the jointly private mediator (Kearns, Pai, Roth & Ullman 2014; Dwork & Roth
10.2.2).

The inputs become the tables of a ``large_game`` scenario, read by the scenario layer itself through
the scenario-kind contract (``Scenario.parse(kind=large_game)``, then ``build``): the game, and on
demand the user equilibrium, the system optimum and the private mediator, exactly as ``dpgames run``
computes them.
"""

from __future__ import annotations

import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import networkx as nx
import numpy as np
import pandas as pd
import streamlit as st

from dpgames.games.assignment import Assignment, price_of_anarchy
from dpgames.games.game import CongestionGame
from dpgames.games.kernels import first_compile_notice, kernels_compiled
from dpgames.games.mediator import MediatorOutcome
from dpgames.games.network import RoutingGame
from dpgames.scenarios import Scenario, large_game
from dpgames.scenarios.large_game import LargeGameRun
from dpgames_app.ui import (
    MIN_EPSILON,
    SCENARIO_DIR,
    SLOW_SECONDS,
    checked,
    dot_chart,
    downloads,
    machine_seconds,
    remember,
    show_chart,
)

TITLE = "Large games"
PIGOU, GRID = "Pigou (two roads)", "Grid (synthetic)"
FLOWS = ("the mediator's suggestions", "the user equilibrium", "the system optimum")
LAYOUT_NODES = 200  # above this, a force layout (seeded) instead of Kamada-Kawai
BIG_GAME = (
    20_000  # classes (OD pairs) above which solving waits for a button (as above SLOW_SECONDS)
)
GAPS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-8)
DELTAS = (1e-12, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)


@dataclass(frozen=True)
class Played:
    """The model, its baselines and the mediator's outcome for one set of inputs (kept, not
    copied)."""

    model: CongestionGame | RoutingGame
    players: np.ndarray
    equilibrium: Assignment
    optimum: Assignment
    outcome: MediatorOutcome
    positions: dict | None  # where to draw the nodes of a road network (None: not a network)


# ---------------------------------------------------------------- the shipped scenario of each
# network


@st.cache_data(show_spinner=False)
def shipped_files() -> dict[str, tuple[str, dict]]:
    """The shipped ``large_game`` scenario file each network opens on: network label -> (file name,
    data).

    Pigou and the grid open on ``pigou.toml`` and ``grid.toml``; a TNTP network on the first file
    that reads it.  Their seed, gap and mediator settings are that network's defaults, so the page
    opens on the numbers ``dpgames run`` prints for the file."""
    found: dict[str, tuple[str, dict]] = {}
    for path in sorted(SCENARIO_DIR.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        game = data.get("game") if data.get("kind") == "large_game" else None
        if not isinstance(game, dict):
            continue
        label = {"pigou.toml": PIGOU, "grid.toml": GRID}.get(path.name)
        if game.get("source") == "tntp" and isinstance(game.get("network"), str):
            label = f"TNTP: {game['network']}"
        if label is not None and label not in found:
            found[label] = (path.name, data)
    return found


def network_defaults(network: str) -> dict:
    """The settings the page starts from on ``network``: its shipped file's (see
    :func:`shipped_files`), else seed 3, gap 1e-4, Gaussian noise, epsilon 1, delta 1e-6, 1,000
    rounds of Hedge.  ``hidden``: the file's mediator settings the sidebar does not offer
    (max_paths, warmup), kept as they are."""
    file, data = shipped_files().get(network, (None, {}))
    baselines, mediator = data.get("baselines", {}), data.get("mediator", {})
    gap, delta = baselines.get("gap", 1e-4), mediator.get("delta", 1e-6)
    return {
        "file": file,
        "seed": data.get("seed", 3),
        "gap": gap if gap in GAPS else 1e-4,
        "noise": mediator.get("noise", "gaussian"),
        "epsilon": float(mediator.get("epsilon", 1.0)),
        "delta": delta if delta in DELTAS else 1e-6,
        "rounds": mediator.get("rounds", 1000),
        "dynamics": mediator.get("dynamics", "hedge"),
        "hidden": {k: mediator[k] for k in ("max_paths", "warmup") if k in mediator},
    }


# ---------------------------------------------------------------- library calls (cached)


def scenario_data(tables: tuple, seed: int) -> dict:
    """The inputs as a ``large_game`` scenario (the dict a TOML file holds), without the incentive
    audit."""
    game, baselines, mediator = (dict(t) for t in tables)
    return {
        "kind": "large_game",
        "title": "Large game from the app",
        "seed": seed,
        "game": game,
        "baselines": baselines,
        "mediator": mediator,
        "incentives": {"enabled": False},
    }


@st.cache_resource(show_spinner="Reading the game...", max_entries=8)
def build(tables: tuple, seed: int) -> tuple[LargeGameRun, float]:
    """Validate the inputs as a large_game scenario and build its run (the game read; solved on
    first use of ``run.played``), with the library's estimate of the run's work.

    ``tables`` is ``(game, baselines, mediator)`` as sorted item tuples."""
    parsed = Scenario.from_dict(scenario_data(tables, seed)).parse(kind=large_game)
    return parsed.build(), sum(stage.work for stage in parsed.estimate())


@st.cache_data(show_spinner=False, max_entries=8)
def result_json(tables: tuple, seed: int) -> str:
    """The Result of ``dpgames run`` on the inputs' scenario, as JSON (for the download)."""
    return Scenario.from_dict(scenario_data(tables, seed)).run().to_json()


@st.cache_resource(show_spinner="Solving the equilibria and running the mediator...", max_entries=8)
def play(tables: tuple, seed: int, layout: tuple | None) -> Played:
    """Solve the baselines and run the mediator; ``layout`` says how to place the nodes
    (``("grid", rows, cols)``, ``("file", path)`` or ``("graph",)``)."""
    run, _ = build(tables, seed)
    model, game = run.model, run.played
    # layout None (Pigou's two roads) comes with no network; a network without one is laid out from
    # its graph
    positions = (
        node_positions(model, layout or ("graph",)) if isinstance(model, RoutingGame) else None
    )
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
    (root,) = large_game.data_roots()
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def inputs() -> tuple[tuple, int, tuple | None, str]:
    """The sidebar, as the tables of a large_game scenario; the seed, the node layout and a
    description."""
    folders = {f"TNTP: {p.name}": p for p in tntp_folders()}
    st.sidebar.subheader("Game")
    network = st.sidebar.selectbox(
        "Network",
        [PIGOU, GRID, *folders],
        key=remember("lg.network", GRID),
        persist_state="session",
        help="TNTP networks are read from $DPGAMES_TNTP_DIR (else ../shared/data/tntp "
        "beside the repository).",
    )
    if not folders:
        st.sidebar.caption(
            "No TNTP networks found: set DPGAMES_TNTP_DIR to a folder of TNTP networks."
        )
    defaults = network_defaults(network)
    seed = int(
        st.sidebar.number_input(
            "Seed",
            0,
            2**32 - 1,
            key=remember(f"lg.seed.{network}", defaults["seed"]),
            step=1,
            persist_state="session",
            help="Seeds the mediator's noise and suggestions (as `dpgames run --seed`).",
        )
    )
    game: dict[str, object]
    layout: tuple | None
    if network == PIGOU:
        n = int(
            st.sidebar.number_input(
                "Drivers n",
                1,
                1_000_000,
                key=remember("lg.pigou_n", 1000),
                step=100,
                persist_state="session",
            )
        )
        # Pigou's example: road 0 always costs 1; road 1 costs the fraction of the drivers on it.
        game = {
            "source": "resources",
            "free": [1.0, 0.0],
            "coef": [0.0, 1.0 / n],
            "power": [1.0, 1.0],
            "classes": [{"players": n, "actions": [[0], [1]]}],
        }
        layout, described = (
            None,
            f"Pigou's two roads, {n:,} drivers: road 0 costs 1, road 1 costs its share of drivers",
        )
    elif network == GRID:
        left, right = st.sidebar.columns(2)
        rows = int(
            left.number_input("rows", 2, 30, key=remember("lg.rows", 10), persist_state="session")
        )
        cols = int(
            right.number_input(
                "columns", 2, 30, key=remember("lg.cols", 10), persist_state="session"
            )
        )
        pairs = int(
            left.number_input(
                "OD pairs", 1, 200, key=remember("lg.pairs", 20), persist_state="session"
            )
        )
        grid_seed = int(
            right.number_input(
                "grid seed", 0, 2**32 - 1, key=remember("lg.grid_seed", 1), persist_state="session"
            )
        )
        n = int(
            st.sidebar.number_input(
                "Drivers n",
                1,
                1_000_000,
                key=remember("lg.grid_n", 10_000),
                step=1000,
                persist_state="session",
            )
        )
        game = {
            "source": "grid",
            "rows": rows,
            "cols": cols,
            "pairs": pairs,
            "players": n,
            "grid_seed": grid_seed,
        }
        layout = ("grid", rows, cols)
        described = f"a {rows} x {cols} road grid, {n:,} drivers on {pairs} random OD pairs (BPR link costs)"
    else:
        folder = folders[network]
        scale = st.sidebar.number_input(
            "Demand scale",
            0.0001,
            1000.0,
            key=remember(f"lg.scale.{folder.name}", 1.0),
            step=0.1,
            format="%.4g",
            persist_state="session",
            help="Multiplies every OD pair's trips.",
        )
        # from the kind's data root
        game = {
            "source": "tntp",
            "network": folder.name,
            "demand_scale": scale,
        }
        node_file = folder / f"{folder.name}_node.tntp"
        layout = ("file", str(node_file)) if node_file.is_file() else ("graph",)
        described = f"the TNTP network {folder.name}, demand x {scale:g}"
    mediator = mediator_inputs(network, defaults)
    gap = st.sidebar.select_slider(
        "Baselines solved to relative gap",
        GAPS,
        key=remember(f"lg.gap.{network}", defaults["gap"]),
        persist_state="session",
        format_func=lambda g: f"{g:.0e}",
    )
    if defaults["file"]:
        described += f"; opens on the settings of scenarios/{defaults['file']}"
    baselines = {"gap": gap, "method": "path-based"}
    tables = tuple(tuple(sorted(t.items())) for t in (game, baselines, mediator))
    return tables, seed, layout, described


def mediator_inputs(network: str, defaults: dict) -> dict:
    """The ``[mediator]`` table, remembered per network (a setting does not leak to another
    network), starting from ``defaults`` (:func:`network_defaults`), whose hidden settings are kept
    as they are."""
    st.sidebar.subheader("Private mediator")
    noise = st.sidebar.selectbox(
        "Noise on the published loads",
        ("gaussian", "tree", "none"),
        key=remember(f"lg.noise.{network}", defaults["noise"]),
        persist_state="session",
        help="gaussian: per round, zCDP accounting; tree: binary-tree counter; none: "
        "the non-private dynamics.",
    )
    eps = st.sidebar.number_input(
        "Privacy epsilon (all rounds)",
        MIN_EPSILON,
        1000.0,
        key=remember(f"lg.eps.{network}", defaults["epsilon"]),
        step=0.1,
        format="%.3f",
        persist_state="session",
        disabled=noise == "none",
    )
    delta = st.sidebar.select_slider(
        "delta",
        DELTAS,
        key=remember(f"lg.delta.{network}", defaults["delta"]),
        persist_state="session",
        format_func=lambda d: f"{d:.0e}",
        disabled=noise == "none",
        help="(eps, delta)-joint DP over all rounds; log-spaced choices.",
    )
    rounds = st.sidebar.number_input(
        "Rounds T",
        2,
        20_000,
        key=remember(f"lg.rounds.{network}", defaults["rounds"]),
        step=100,
        persist_state="session",
    )
    dynamics = st.sidebar.radio(
        "Dynamics",
        ("hedge", "blum-mansour"),
        horizontal=True,
        key=remember(f"lg.dynamics.{network}", defaults["dynamics"]),
        persist_state="session",
        help="hedge: coarse correlated equilibrium; blum-mansour: swap regret, "
        "a correlated equilibrium.",
    )
    table = {
        "epsilon": eps,
        "delta": delta,
        "rounds": int(rounds),
        "noise": noise,
        "dynamics": dynamics,
    }
    return table | defaults["hidden"]


# ---------------------------------------------------------------- outputs


def cost(x: float) -> str:
    """A total cost for a metric tile: whole units from 10,000 on (thousands separated), else
    cents."""
    return f"{x:,.0f}" if abs(x) >= 1e4 else f"{x:,.2f}"


def headline(played: Played) -> None:
    out, ue, so = played.outcome, played.equilibrium, played.optimum
    # Two rows: a road network's total cost (7,470,836 on Sioux Falls) needs a wide tile.
    cols = [*st.columns(3), *st.columns(3)]
    cols[0].metric(
        "Mediator cost",
        cost(out.total_expected_cost),
        border=True,
        help="Expected total cost of the players following the suggestions: "
        f"{out.total_expected_cost:,.4f}.",
    )
    cols[1].metric(
        "User equilibrium",
        cost(ue.total_cost),
        border=True,
        help=f"Total cost {ue.total_cost:,.4f}; relative gap {ue.relative_gap:.1e}.",
    )
    cols[2].metric(
        "System optimum",
        cost(so.total_cost),
        border=True,
        help=f"Total cost {so.total_cost:,.4f}; price of anarchy {price_of_anarchy(ue, so):.4f}.",
    )
    cols[3].metric(
        "alpha (regret)",
        f"{out.max_alpha:.4g}",
        border=True,
        help="Largest gain of a unilateral deviation from the suggested distribution "
        f"({out.evaluation}): "
        f"{out.max_alpha:.6g} cost units.",
    )
    spent = out.privacy.epsilon
    cols[4].metric(
        "epsilon spent",
        "none (no noise)" if not np.isfinite(spent) else f"{spent:.4g}",
        border=True,
        help=f"At delta = {out.privacy.delta:g}; zCDP rho = {out.rho:.4g}.",
    )
    cols[5].metric(
        "Price of anarchy",
        f"{price_of_anarchy(ue, so):.4f}",
        border=True,
        help="User equilibrium cost / system optimum cost: what selfish routing costs without "
        "a mediator.",
    )
    classes = played.players.size
    st.caption(
        f"{int(played.players.sum()):,} players in {classes:,} "
        f"class{'es' if classes != 1 else ''}, "
        f"{out.game.num_resources:,} resources, {out.game.num_actions:,} actions; noise "
        f"sd {out.sigma:.4g} per "
        f"resource and round; l2 sensitivity {out.sensitivity_l2:.4g} of a round's loads; "
        "neighbouring relation: "
        f"{out.privacy.neighbouring}. Costs are in the network's time units."
    )


THEORY = [
    (
        "Link costs follow the BPR function of the load x (free-flow time t0, capacity c):",
        r"t(x) = t_0\Big(1 + B\,\big(\tfrac{x}{c}\big)^{\text{power}}\Big)",
    ),
    (
        "Each round the mediator publishes every link's load with Gaussian noise; a "
        "player's report moves a "
        "round's loads by at most Delta_2 in l2 (she leaves one path, joins another), so "
        "T rounds are rho-zCDP "
        "(Bun & Steinke), hence (eps, delta)-DP; the accountant certifies the smallest "
        "eps of this closed form and "
        "of the Renyi-DP conversions:",
        r"\tilde x_t = x_t + \mathcal N(0, \sigma^2 I),\qquad \rho = "
        r"\frac{T\,\Delta_2^2}{2\sigma^2},\qquad "
        r"\varepsilon \;\le\; \rho + 2\sqrt{\rho \ln(1/\delta)}",
    ),
    (
        "Each player's suggestion depends only on the public noisy loads and her own "
        "report (billboard lemma): the "
        "suggestions to all but player i are jointly (eps, delta)-DP in i's report. "
        "Truthful reporting and "
        "following the suggestion is then an approximate ex-post equilibrium (Kearns, "
        "Pai, Roth & Ullman 2014), "
        "with C the largest cost a player can incur:",
        r"\text{gain from any deviation} \;\le\; \alpha + (2\varepsilon + \delta)\, C",
    ),
]


def theory() -> None:
    with st.expander("The game, the noise and the guarantee", icon=":material/function:"):
        for text, formula in THEORY:
            st.markdown(text)
            st.latex(formula)


def regret_chart(played: Played) -> pd.DataFrame:
    trace = pd.DataFrame(
        {
            "round": np.asarray(played.outcome.trace["round"]),
            "alpha": np.asarray(played.outcome.trace["alpha"]),
        }
    )
    positive = bool((trace["alpha"] > 0).all())
    chart = (
        alt.Chart(trace)
        .mark_line(point=len(trace) <= 30)
        .encode(
            x=alt.X("round:Q", title="round t (log scale)", scale=alt.Scale(type="log")),
            y=alt.Y(
                "alpha:Q",
                title="alpha (cost units" + (", log scale)" if positive else ")"),
                scale=alt.Scale(type="log" if positive else "linear"),
            ),
            tooltip=["round", alt.Tooltip("alpha:Q", format=".4g")],
        )
    )
    st.caption(
        "alpha after t rounds: the largest gain of a unilateral deviation from the "
        "distribution the "
        "dynamics have computed so far, on the true game."
    )
    show_chart(chart.properties(title="Regret alpha against rounds", height=300))
    return trace


def cost_frame(played: Played) -> pd.DataFrame:
    out = played.outcome
    return pd.DataFrame(
        {
            "flow": [
                "mediator (expected)",
                "mediator (realised suggestions)",
                "user equilibrium",
                "system optimum",
            ],
            "total cost": [
                out.total_expected_cost,
                out.realised_total_cost,
                played.equilibrium.total_cost,
                played.optimum.total_cost,
            ],
        }
    )


def cost_chart(frame: pd.DataFrame) -> None:
    show_chart(
        dot_chart(
            frame,
            "flow",
            "total cost",
            "Total cost against the baselines",
            "total cost (time units)",
            cost,
            "~s",
        ).properties(height=220)
    )


def loads_of(played: Played, which: str) -> np.ndarray:
    if which == FLOWS[0]:
        return played.outcome.game.loads(played.outcome.suggestions)
    return (played.equilibrium if which == FLOWS[1] else played.optimum).loads


def flow_section(played: Played) -> None:
    which = st.radio(
        "Flows of",
        FLOWS,
        horizontal=True,
        key=remember("lg.flows", FLOWS[0]),
        persist_state="session",
    )
    loads = loads_of(played, which)
    if played.positions is None or not isinstance(played.model, RoutingGame):
        frame = pd.DataFrame({"road": [f"road {r}" for r in range(loads.size)], "drivers": loads})
        chart = (
            alt.Chart(frame)
            .mark_bar()
            .encode(
                x=alt.X("road:N", title=None),
                y=alt.Y("drivers:Q", title="drivers on the road"),
                tooltip=["road", alt.Tooltip("drivers:Q", format=",.2f")],
            )
        )
        show_chart(chart.properties(title=f"Load of each road: {which}", height=320))
        return
    network, pos = played.model.network, played.positions
    tail, head = network.tail.tolist(), network.head.tolist()
    # Both directions of a road are drawn as one segment carrying their sum.
    roads: dict[tuple, float] = {}
    for u, v, x in zip(tail, head, loads.tolist()):
        key = (u, v) if str(u) <= str(v) else (v, u)
        roads[key] = roads.get(key, 0.0) + x
    frame = pd.DataFrame(
        [
            {
                "x": pos[u][0],
                "y": pos[u][1],
                "x2": pos[v][0],
                "y2": pos[v][1],
                "road": f"{u} - {v}",
                "load": x,
            }
            for (u, v), x in roads.items()
        ]
    )
    x = alt.X("x:Q", axis=None, scale=alt.Scale(zero=False, padding=10))
    y = alt.Y("y:Q", axis=None, scale=alt.Scale(zero=False, padding=10))
    edges = (
        alt.Chart(frame)
        .mark_rule()
        .encode(
            x=x,
            y=y,
            x2="x2:Q",
            y2="y2:Q",
            color=alt.Color(
                "load:Q",
                title="players (both directions)",
                scale=alt.Scale(scheme="inferno", reverse=True),
                legend=alt.Legend(orient="bottom", gradientLength=300),
            ),
            strokeWidth=alt.StrokeWidth("load:Q", legend=None, scale=alt.Scale(range=[0.5, 7])),
            tooltip=["road", alt.Tooltip("load:Q", format=",.1f")],
        )
    )
    nodes = pd.DataFrame(
        {
            "x": [pos[v][0] for v in network.labels.tolist()],
            "y": [pos[v][1] for v in network.labels.tolist()],
            "node": [str(v) for v in network.labels.tolist()],
        }
    )
    dots = alt.Chart(nodes).mark_circle(size=18, color="#444444").encode(x=x, y=y, tooltip=["node"])
    show_chart((edges + dots).properties(title=f"Link loads: {which}", height=460))


def class_table(played: Played) -> pd.DataFrame:
    out = played.outcome
    names = out.game.class_names or tuple(str(k) for k in range(played.players.size))
    frame = pd.DataFrame(
        {
            "class (OD pair)": list(names),
            "players": played.players,
            "alpha": out.alpha,
            "expected cost": out.expected_cost,
        }
    )
    with st.expander(f"Per class: regret and expected cost ({len(frame)} classes)"):
        st.dataframe(
            frame.sort_values("players", ascending=False).head(2000),
            hide_index=True,
            column_config={
                "players": st.column_config.NumberColumn(format="localized"),
                "alpha": st.column_config.NumberColumn(format="%.4g"),
                "expected cost": st.column_config.NumberColumn(format="localized"),
            },
        )
    return frame


def page() -> None:
    st.title(TITLE)
    st.caption(
        "Kearns, Pai, Roth & Ullman (2014); Dwork & Roth 10.2.2. Players report their "
        "types (origin and "
        "destination) to a mediator that runs no-regret dynamics on noisy published "
        "loads and suggests "
        "each player a route. The suggestions to everybody but one player are jointly "
        "differentially private in that player's report, so truthful reporting and following is an "
        "approximate equilibrium. Baselines: the user equilibrium and the system optimum."
    )
    theory()
    tables, seed, layout, described = inputs()
    st.markdown(f"**Game:** {described}.")
    run, work = checked(build, tables, seed)
    classes, spec = run.model.num_classes, run.spec
    seconds = machine_seconds(work)
    big = classes > BIG_GAME or seconds > SLOW_SECONDS
    if not kernels_compiled():
        st.info(first_compile_notice(), icon=":material/build:")
    if big and not st.session_state.get("lg.confirmed") == tables:
        st.info(
            f"This game has {classes:,} classes (OD pairs) and {spec.mediator.rounds:,} "
            "rounds: the equilibria "
            f"and the mediator take about {seconds:,.0f} s on this machine (the library's "
            "estimate of the work, "
            f"{work:.3g} operations as `dpgames check` prints it, timed against a small run here)."
        )
        if not st.button("Solve it", key="button.lg_solve", type="primary"):
            st.stop()
        st.session_state["lg.confirmed"] = tables
    played = solve(tables, seed, layout, classes)
    headline(played)
    left, right = st.columns([3, 2])
    with left:
        flow_section(played)
    with right:
        costs = cost_frame(played)
        cost_chart(costs)
        trace = regret_chart(played)
    per_class = class_table(played)
    st.subheader("Downloads")
    downloads(
        "large_game_app",
        None if big else (lambda: result_json(tables, seed)),
        {"costs": costs, "trace": trace, "classes": per_class},
        lambda: Scenario.from_dict(scenario_data(tables, seed)).to_toml(),
        key="lg_download",
    )
    st.caption(
        "`dpgames run large_game_app.toml` prints the costs, alpha and the privacy spent above"
        + (
            " (the Result of a game this size is left to the command line: it solves the "
            "game again)."
            if big
            else "."
        )
    )


def solve(tables: tuple, seed: int, layout: tuple | None, classes: int) -> Played:
    """:func:`play`, with a status box and the time taken the first time these inputs are solved."""
    done = st.session_state.setdefault("lg.solved", set())
    signature = repr((tables, seed, layout))
    if signature in done:
        return checked(play, tables, seed, layout)
    with st.status(
        f"Solving the user equilibrium, the system optimum and the mediator ({classes:,} "
        "classes)...",
        expanded=False,
    ) as status:
        start = time.monotonic()
        played = checked(play, tables, seed, layout)
        status.update(label=f"Solved in {time.monotonic() - start:.1f} s", state="complete")
    done.add(signature)
    return played


page()
