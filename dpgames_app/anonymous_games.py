"""Page: general large games (anonymous games) and the jointly private mediator (Kearns, Pai, Roth &
Ullman 2014).

Presentation only: the settings are the fields of an ``anonymous_game`` scenario file; the figures
are that scenario's Result (:mod:`dpgames.scenarios.anonymous_game`), downloadable for ``dpgames
run``.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dpgames.scenarios import Scenario
from dpgames_app.ui import checked, downloads, figure, show_chart

TITLE = "General large games"
MAX_N = 10_000_000
GAMES = {
    "crowding": "crowding (restaurant choice)",
    "market_entry": "market entry",
    "el_farol": "El Farol bar",
    "minority": "minority game",
    "public_goods": "threshold public good",
}


def inputs() -> dict:
    """The sidebar's settings as an ``anonymous_game`` scenario's data."""
    side = st.sidebar
    side.header("Game")
    kind = side.selectbox("game", list(GAMES), format_func=GAMES.__getitem__, key="ag.kind")
    # the defaults are scenarios/anonymous_crowding.toml's: the page opens on the numbers `dpgames
    # run` prints
    n = int(side.number_input("players n", 2, MAX_N, 1_000_000, step=1000, key="ag.n"))
    share = side.slider("share of type 0", 0.0, 1.0, 0.4, key="ag.share")
    players = [int(round(n * share)), n - int(round(n * share))]
    game: dict = {"type": kind, "players": players}
    if kind == "crowding":
        game["values"] = [[0.9, 0.6, 0.3, 0.5], [0.3, 0.6, 0.9, 0.5]]
    elif kind == "market_entry":
        game["capacity"] = float(
            side.number_input("capacity (entrants)", 0.0, float(n), float(n // 2), key="ag.cap")
        )
        game["outside"] = [0.5, 0.45]
    elif kind == "el_farol":
        game["capacity_fraction"] = side.slider(
            "bar capacity (share of n)", 0.0, 1.0, 0.6, key="ag.frac"
        )
    elif kind == "public_goods":
        game["threshold"] = float(
            side.number_input(
                "threshold (contributors)", 0.0, float(n), float(n // 4), key="ag.threshold"
            )
        )
        game["width"] = float(
            side.number_input(
                "ramp width (contributors)", 1.0, float(n), max(1.0, n / 4), key="ag.width"
            )
        )
        game["cost"] = 0.1
    side.header("Mediator")
    rounds = int(side.number_input("rounds T", 10, 5000, 500, step=100, key="ag.rounds"))
    noise = side.radio("noise", ("gaussian", "tree", "none"), key="ag.noise")
    mechanism: dict = {
        "rounds": rounds,
        "noise": noise,
        "dynamics": side.radio("dynamics", ("hedge", "blum-mansour"), key="ag.dynamics"),
    }
    if noise != "none":
        mechanism["epsilon"] = float(side.number_input("epsilon", 0.01, 100.0, 1.0, key="ag.eps"))
    seed = int(side.number_input("seed", 0, 2**31 - 1, 2026, key="ag.seed"))
    return {
        "kind": "anonymous_game",
        "seed": seed,
        "title": f"{GAMES[kind]}, {n:,} players",
        "game": game,
        "mechanism": mechanism,
    }


@st.cache_data(max_entries=8, show_spinner=False)
def result_of(toml_text: str):
    """The scenario's Result (cached by its file text)."""
    return Scenario.from_text(toml_text, source="<settings>").run()


def theory() -> None:
    """What :mod:`dpgames.games.anonymous_mediator` implements and guarantees, as formulas."""
    with st.expander("The mechanism and its guarantees", expanded=False):
        st.markdown(
            "Each round t, type k's no-regret learner (Hedge, or Blum-Mansour) mixes "
            "with p_t,k; the "
            "mediator publishes the noisy expected histogram, and type k is charged at "
            "the histogram "
            "of the others read off it:"
        )
        st.latex(
            r"\tilde y_t = \sum_k n_k\, p_{t,k} + Z_t, \qquad "
            r"h_{t,k} = \mathrm{clip}\big(\tilde y_t - p_{t,k},\ 0,\ n - 1\big)"
        )
        st.markdown(
            "One player changing her reported type moves y_t by at most (the sensitivity of the "
            "publisher):"
        )
        st.latex(
            r"\lVert y_t - y_t' \rVert_1 \le 2, \qquad \lVert y_t - y_t' \rVert_2 \le \sqrt{2}"
        )
        st.markdown(
            "A round t* is drawn uniformly, independently of the reports, and each player is "
            "suggested a draw of her type's mix at t*. Every type's strategy is a function of the "
            "published histograms alone, so the suggestions to everybody but i are post-processing "
            "of the billboard (billboard lemma): jointly (eps, delta)-DP in i's report, "
            "with eps and "
            "delta from the noise's privacy accounting."
        )
        st.latex(r"t^* \sim \mathrm{Uniform}\{1, \dots, T\}, \qquad a_i \sim p_{t^*, k_i}")
        st.markdown(
            "The regret alpha of the suggested distribution (swap regret under "
            "Blum-Mansour, external "
            "under Hedge) is measured on the true game and checked against its "
            "decomposition, with N "
            "actions and learning rate eta (the first term times N for Blum-Mansour):"
        )
        st.latex(
            r"\alpha \;\le\; \frac{1}{T}\Big(\frac{\ln N}{\eta} + \frac{\eta T}{8}\Big) "
            r"+ 2\,\overline{\lvert \text{fed payoff} - \text{true payoff} \rvert}"
        )
        st.markdown(
            "Incentives are measured, not assumed: the gain g of reporting k' and best-responding "
            "to the suggestion is computed exactly; what the post-processing of (eps, delta)-DP "
            "justifies is"
        )
        st.latex(
            r"\mathbb{E}[g_{k \to k'}] \;\le\; \mathbb{E}[\mathrm{cross\_regret}_{k,k'}] "
            r"+ (e^{\varepsilon} - 1) + \delta"
        )


def page() -> None:
    st.title(TITLE)
    st.caption(
        "Kearns, Pai, Roth & Ullman (2014). Players of a few types choose among the same "
        "actions; a "
        "payoff depends on one's type, action and the histogram of the others' actions (one switch "
        "moves it by at most Delta). The mediator runs no-regret dynamics per type on "
        "noisy published "
        "histograms and suggests each player an action: jointly differentially private."
    )
    data = inputs()
    scenario = checked(Scenario.from_dict, data, source="<settings>")
    toml_text = scenario.to_toml()
    result = checked(result_of, toml_text)
    m = result.metrics
    cols = st.columns(5)
    cols[0].metric("alpha (largest regret)", figure(m["alpha"]))
    cols[1].metric("regret bound + 2 feed error", figure(m["alpha_decomposition_bound"]))
    cols[2].metric("Delta (largeness)", figure(m["largeness"]))
    cols[3].metric("payoff per player", figure(m["welfare_per_player"]))
    cols[4].metric("epsilon", figure(m.get("epsilon", "none")))
    st.caption(
        f"Expected payoffs on the true game: {m['evaluation']}. alpha is the "
        f"{'swap' if m['dynamics'] == 'blum-mansour' else 'external'} regret of the "
        "suggested distribution."
    )
    theory()
    trace = pd.DataFrame(result.tables["trace"])
    suggestions = pd.DataFrame(result.tables["suggestions"])
    left, right = st.columns(2)
    with left:
        show_chart(
            alt.Chart(trace)
            .mark_line()
            .encode(
                x=alt.X("round:Q", title="round"),
                y=alt.Y("alpha:Q", title="regret so far (true game)"),
            )
            .properties(title="alpha over the rounds", height=300)
        )
    with right:
        show_chart(
            alt.Chart(suggestions)
            .mark_bar()
            .encode(
                x=alt.X("action:O", title="action", axis=alt.Axis(labelAngle=0)),
                y=alt.Y("players:Q", title="players suggested"),
                color=alt.Color("type:N", title="type"),
                xOffset="type:N",
            )
            .properties(title="Suggestions (one draw)", height=300)
        )
    downloads(
        "anonymous_game",
        result.to_json,
        {"suggestions": suggestions, "trace": trace},
        lambda: toml_text,
        key="ag.downloads",
    )
    st.caption(
        "`dpgames run anonymous_game.toml` (the scenario file above) prints these "
        "numbers; the page "
        "opens on the settings of `scenarios/anonymous_crowding.toml`."
    )


page()
