"""Page: pick a scenario file, read it, run it (dpgames.scenarios), download the Result as JSON and
CSV."""

from __future__ import annotations

import itertools
import shlex
import tomllib
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from dpgames import Scenario
from dpgames.scenarios import Result
from dpgames.scenarios.registry import catalogue
from dpgames.scenarios.text import metric_rows
from dpgames.scenarios.toml_writer import toml_value
from dpgames.sweep import SweepResults, results_from_bytes, summarize, summary_metrics
from dpgames.sweep.grid import override_field
from dpgames.sweep.plot import log_spaced as log_spaced_values, numeric_metrics, sweep_figure
from dpgames.validation import ValidationError
from dpgames_app.ui import (
    ROOT,
    SCENARIO_DIR,
    checked,
    csv_text,
    figure,
    log_spaced,
    remember,
    remember_choice,
    run_uploaded,
    show_chart,
    words,
)

TITLE = "Scenarios"
UPLOAD = "upload a file..."
RESULTS_DIR = ROOT / "results"
SHOWN_BYTES = 50_000


@st.cache_data(show_spinner=False, max_entries=32)
def run_scenario_bytes(
    name: str,
    data: bytes,
    base_dir: str | None,
    seed: int | None,
    overrides: tuple[tuple[str, Any], ...],
    uploads: tuple[tuple[str, bytes], ...] = (),
) -> str:
    """Run a scenario file's bytes (with dotted-field overrides) and return the Result as JSON.

    A shipped file (``base_dir`` its folder) reads data from that folder; an upload (``base_dir``
    None) only the data files uploaded with it (``uploads``: (name, bytes) pairs) and
    scenarios/data."""

    def run(scenario: Scenario) -> str:
        if overrides:
            scenario = scenario.with_overrides(dotted(scenario, overrides))
        return scenario.run(seed).to_json()

    if base_dir is None:
        return run_uploaded(name, data, uploads, run)
    return run(Scenario.from_bytes(data, name, Path(base_dir)))


@st.cache_data(show_spinner=False, max_entries=32)
def settings_toml(
    name: str, data: bytes, seed: int | None, overrides: tuple[tuple[str, Any], ...]
) -> str:
    """The scenario file with the overrides and the seed written in (comments are not kept)."""
    scenario = Scenario.from_bytes(data, name)
    changes = dotted(scenario, overrides)
    if seed is not None:
        changes["seed"] = seed
    return (scenario.with_overrides(changes) if changes else scenario).to_toml()


def dotted(scenario: Scenario, overrides: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """The overrides by dotted field: a short name (``epsilon``) stands for the one field of the
    file it ends (``mechanism.epsilon``), as in ``dpgames run --set`` and ``dpgames sweep
    --set``."""
    return {
        override_field(name, scenario.data, scenario.source): value for name, value in overrides
    }


@st.cache_data(show_spinner=False, max_entries=32)
def command_line(
    name: str, data: bytes, seed: int | None, overrides: tuple[tuple[str, Any], ...]
) -> str:
    """The ``dpgames run`` command that runs what the page runs: the file, the seed and each
    override as ``--set field=value`` (the value in TOML), quoted for a POSIX shell."""
    changes = dotted(Scenario.from_bytes(data, name), overrides)
    words = ["dpgames", "run", name, *(["--seed", str(seed)] if seed is not None else [])]
    for field, value in changes.items():
        words += ["--set", f"{field}={toml_value(value)}"]
    return shlex.join(words)


def data_uploads() -> tuple[tuple[str, bytes], ...]:
    """The data files uploaded for an uploaded scenario: the only files, with scenarios/data, it may
    read."""
    files = st.file_uploader(
        "Data files it names (CSV, edge lists, TNTP `X_net.tntp` and `X_trips.tntp`: "
        'then `path = "."`, `network = "X"`)',
        accept_multiple_files=True,
        key="upload.sc_data",
    )
    return tuple((f.name, f.getvalue()) for f in files or ())


def parse_overrides(text: str) -> tuple[tuple[str, Any], ...]:
    """``mechanism.epsilon = 0.3`` lines (values in TOML syntax) -> ``(("mechanism.epsilon", 0.3),
    ...)``."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key or any(not part.strip() for part in key.split(".")):
            raise ValidationError(
                "overrides",
                f", line {number}: write field = value, e.g. mechanism.epsilon = 0.3 "
                f"(got {line.strip()!r})",
            )
        try:
            out.append((key, tomllib.loads(f"value = {value.strip()}")["value"]))
        except tomllib.TOMLDecodeError:
            raise ValidationError(
                "overrides",
                f", line {number}: {value.strip()!r} is not a TOML value "
                '(numbers, true/false, "strings", [lists])',
            ) from None
    return tuple(out)


def choose_file() -> tuple[str, bytes, str | None] | None:
    """The scenario to run: a file of scenarios/, an example file an installed kind ships, or an
    upload. Returns (name, bytes, base folder)."""
    files = sorted(path.name for path in SCENARIO_DIR.glob("*.toml"))
    examples = kind_examples()
    options = [*files, *examples, UPLOAD]
    first = "digital_goods.toml" if "digital_goods.toml" in files else options[0]
    choice = st.selectbox(
        "Scenario file",
        options,
        key=remember_choice("sc.file", options, first),
        persist_state="session",
    )
    if choice == UPLOAD:
        upload = st.file_uploader("Scenario file (TOML)", type=["toml"], key="upload.sc_toml")
        if upload is None:
            st.info(
                "Upload a scenario file, or pick one of scenarios/.  An uploaded file "
                "may read only the "
                "data files you upload with it and the shipped examples (scenarios/data)."
            )
            return None
        return upload.name, upload.getvalue(), None
    if choice in examples:
        path = examples[choice]
        return str(path), path.read_bytes(), str(path.parent)
    path = SCENARIO_DIR / choice
    return f"scenarios/{choice}", path.read_bytes(), str(SCENARIO_DIR)


def kind_examples() -> dict[str, Path]:
    """The example scenario files that installed kinds ship (``EXAMPLES``), as "kind: file" ->
    path."""
    return {f"{info.name}: {path.name}": path for info in catalogue() for path in info.examples}


def kinds_section() -> None:
    """The installed scenario kinds (dpgames' own and plugins'), as `dpgames kinds` lists them."""
    rows = catalogue()
    with st.expander(f"Installed scenario kinds: {len(rows)}", expanded=False):
        st.table(
            pd.DataFrame(
                {
                    "kind": [r.name for r in rows],
                    "package": [r.package for r in rows],
                    "description": [r.description or f"cannot be used: {r.error}" for r in rows],
                }
            )
        )
        st.caption(
            "A package adds kinds through the entry-point group `dpgames.kinds`; the example "
            "scenario files it ships are offered in the file list below."
        )


def show_result(result: Result, stem: str) -> None:
    st.subheader(result.title)
    seed = result.provenance.get("seed")
    st.caption(
        f"kind {result.kind}; seed {seed}; dpgames {result.provenance.get('dpgames')}; "
        f"scenario SHA-256 {str(result.provenance.get('scenario_sha256', ''))[:12]}..."
    )
    # as `dpgames run` prints them, with the kind's remarks
    rows = metric_rows(result, format_value)
    metrics = pd.DataFrame(
        {
            "metric": [label.strip() for label, _ in rows],
            "value": [text for _, text in rows],
            "name": list(result.metrics),
        }
    )
    st.dataframe(
        metrics,
        hide_index=True,
        height=35 * (len(metrics) + 1) + 3,
        width="stretch",
        column_config={
            column: st.column_config.TextColumn(title, width=text_width(metrics[column]))
            for column, title in (
                ("metric", "metric"),
                ("value", "value"),
                ("name", "name (in --json)"),
            )
        },
    )
    cols = st.columns(2 + len(result.tables))
    cols[0].download_button(
        "Result (JSON)", result.to_json(), f"{stem}.json", "application/json", key="button.sc_json"
    )
    cols[1].download_button(
        "Metrics (CSV)",
        result.metrics_csv(),
        f"{stem}_metrics.csv",
        "text/csv",
        key="button.sc_metrics",
    )
    for col, name in zip(cols[2:], result.tables):
        col.download_button(
            f"{name} (CSV)",
            result.table_csv(name),
            f"{stem}_{name}.csv",
            "text/csv",
            key=f"button.sc_table_{name}",
        )
    for name, columns in result.tables.items():
        table_view(name, pd.DataFrame(columns))


#: The result tables' columns in words (an axis title) and what they mean (a note under the table).
COLUMNS: dict[str, tuple[str, str]] = {
    "action": ("action", "the action the mediator suggests"),
    "agents": ("agents", "how many agents"),
    "alpha": ("alpha (regret)", "the largest gain of a unilateral deviation"),
    "best_gain": (
        "best gain from a lie",
        "the most an agent gains by her best lie; negative: every lie costs her",
    ),
    "bought": ("bought", "whether the mechanism buys the agents' data"),
    "cdf": ("Pr[error <= x]", "the exact law of the error"),
    "class": ("class", "a class of players (an origin-destination pair)"),
    "commitment": ("Pr under M^P", "the outcome's probability under the commitment mechanism"),
    "cost_from": ("cost from", "the lower end of the costs"),
    "cost_to": ("cost to", "the upper end of the costs"),
    "density": ("density", "the price's probability density"),
    "epsilon": ("epsilon", "the privacy parameter"),
    "error": ("error x", "the estimate's error"),
    "expected_cost": ("expected cost", "a player's expected cost under the mediator"),
    "exponential": ("Pr under M_eps", "the outcome's probability under the exponential mechanism"),
    "gamma": ("gap gamma", "the gap of the commitment mechanism"),
    "good": ("good", "a good on sale"),
    "ignore_gain": (
        "gain from ignoring",
        "the gain from ignoring the suggestion; negative: following pays",
    ),
    "lie_class": ("reported class", "the class a player reports"),
    "loss_bound_per_agent": ("loss bound per agent", "the theorem's bound on the loss per agent"),
    "loss_per_agent_exponential": (
        "loss per agent, M_eps",
        "the exponential mechanism's loss per agent",
    ),
    "loss_per_agent_mix": ("loss per agent, mix", "the mix's loss per agent"),
    "max_gain_exponential": (
        "largest gain, M_eps",
        "the largest gain from a lie under the exponential mechanism",
    ),
    "misreport_gain": (
        "gain from the lie",
        "the gain of reporting the other class; negative: the lie costs",
    ),
    "mix": ("Pr under the mix", "the outcome's probability under the mix"),
    "n": ("agents n", "how many agents"),
    "observed_regret": ("observed regret", "the regret measured after each round"),
    "outcome": ("outcome", "an outcome of the mechanism"),
    "payment": ("payment", "what an agent pays"),
    "players": ("players", "how many players"),
    "price": ("price", "a price"),
    "price_nonprivate": ("price, non-private", "the price of the non-private auction"),
    "probability": ("probability", "the probability of the row's outcome"),
    "q_exact": (
        "exact least q",
        "the least mixing probability that makes the mix exactly truthful",
    ),
    "q_theorem_exact": ("q of the theorem", "the mixing probability the theorem gives"),
    "quantile": ("quantile", "the quantile over the agents"),
    "revenue": ("revenue", "the revenue at this price"),
    "round": ("round", "the round"),
    "sold": ("sold", "copies sold"),
    "sold_nonprivate": ("sold, non-private", "copies sold by the non-private auction"),
    "sold_optimal": ("sold, optimum", "copies sold at the optimum"),
    "sqrt_O_lnO_over_gamma_n": ("sqrt(|O| ln|O| / (gamma n))", "the rate of the theorem's bound"),
    "stop_probability": ("stop probability", "the probability the mechanism stops in this round"),
    "supply": ("supply", "copies on sale"),
    "true_class": ("true class", "a player's true class"),
    "type": ("type", "an agent's type"),
    "utility": ("utility", "an agent's expected utility"),
    "welfare": ("welfare", "the outcome's welfare"),
}


def column_words(column: str) -> str:
    """A result column in words, for an axis title (its name with spaces when the app has no words
    for it)."""
    return COLUMNS.get(column, (words(column), ""))[0]


def table_view(name: str, frame: pd.DataFrame) -> None:
    """A table, a line chart of each numeric column against the first one when that is numeric, and
    what each column means (a negative gain included)."""
    st.markdown(f"**{name}**")
    first = frame.columns[0]
    numeric = [c for c in frame.columns[1:] if pd.api.types.is_numeric_dtype(frame[c])]
    if pd.api.types.is_numeric_dtype(frame[first]) and numeric and len(frame) >= 2:
        for column, place in zip(numeric, itertools.cycle(st.columns(min(3, len(numeric))))):
            # Plain field names: Vega-Lite reads dots and brackets in a field name as nested access.
            points = pd.DataFrame({"x": frame[first], "y": frame[column]})
            log_x = log_spaced(points["x"])
            # 250, not 2.5e+2
            chart = (
                alt.Chart(points)
                .mark_line(point=len(frame) <= 50)
                .encode(
                    x=alt.X(
                        "x:Q",
                        title=column_words(first) + (" (log scale)" if log_x else ""),
                        scale=alt.Scale(type="log" if log_x else "linear"),
                        axis=alt.Axis(format="~s" if log_x else ",~r"),
                    ),
                    y=alt.Y("y:Q", title=column_words(column), axis=alt.Axis(format=",~r")),
                    tooltip=[
                        alt.Tooltip("x:Q", title=column_words(first)),
                        alt.Tooltip("y:Q", title=column_words(column)),
                    ],
                )
            )
            with place:
                show_chart(chart.properties(height=240))
    meanings = [
        f"{column_words(c)} (`{c}`): {COLUMNS[c][1]}" for c in frame.columns if c in COLUMNS
    ]
    if meanings:
        st.caption("; ".join(meanings) + ".")
    with st.expander(f"{name}: {len(frame)} rows"):
        st.dataframe(frame, hide_index=True)


def text_width(texts: pd.Series) -> int:
    """A table column's width in pixels that shows its longest text whole (8 pixels a character of
    the app's 14-pixel font, with room for the cell's padding)."""
    return 8 * max([len(str(t)) for t in texts] + [8]) + 24


def format_value(v: Any) -> str:
    """A metric for the table: 6 significant digits, thousands separated, no exponent from 1e-4
    up."""
    return figure(v, 6)


@st.cache_data(show_spinner=False, max_entries=8)
def sweep_tables(name: str, data: bytes) -> dict:
    """A sweep results file (JSON Lines): its header, its flat table and the mean and 95% CI per
    parameter combination and metric (dpgames.sweep.summarize)."""
    results = results_from_bytes(data, name)
    return {
        "results": results,
        "header": results.header,
        "parameters": results.parameters,
        "metrics": numeric_metrics(results),
        "shown": summary_metrics(results),
        "failures": len(results.failures),
        "torn": results.torn,
        "cells": pd.DataFrame(results.columns()),
        "summary": pd.DataFrame(summarize(results)),
    }


def choose_results() -> tuple[str, bytes] | None:
    files = sorted(RESULTS_DIR.glob("*.jsonl")) if RESULTS_DIR.is_dir() else []
    names = [f"results/{p.name}" for p in files]
    choice = st.selectbox(
        "Results file",
        [*names, UPLOAD],
        key=remember_choice("sc.sweep_file", [*names, UPLOAD], UPLOAD),
        persist_state="session",
        help="Made by `dpgames sweep FILE --out results/NAME.jsonl`.",
    )
    if choice != UPLOAD:
        return choice, (ROOT / choice).read_bytes()
    upload = st.file_uploader("Sweep results (JSON Lines)", type=["jsonl"], key="upload.sc_sweep")
    return None if upload is None else (upload.name, upload.getvalue())


def sweep_section() -> None:
    st.header("Sweep results")
    st.caption(
        "A results file of `dpgames sweep`: the mean of each metric across seeds with its 95% "
        "confidence interval (Student's t), per combination of the swept parameters."
    )
    chosen = choose_results()
    if chosen is None:
        return
    tables = checked(sweep_tables, *chosen, stop=False)
    if tables is None:
        return
    header = tables["header"]
    st.markdown(
        f"**{header.get('title', '')}** ({header.get('kind', '?')}): {len(tables['cells'])} cells, "
        f"{header.get('seeds', '?')} seeds per combination, root seed {header.get('root_seed')}, "
        f"from {header.get('scenario')}."
    )
    if tables["failures"]:
        st.warning(f"{tables['failures']} cells failed; their errors are in the cells table.")
    if tables["torn"]:
        st.caption("The file ends in an incomplete line (a sweep cut short): it is ignored.")
    parameters, metrics = tables["parameters"], tables["metrics"]
    if not parameters or not metrics:
        st.info("The file has no swept parameter or no finished cell with a numeric metric yet.")
        return
    left, right = st.columns(2)
    x = left.selectbox(
        "x: parameter",
        parameters,
        key=remember_choice("sc.sweep_x", parameters, parameters[0]),
        persist_state="session",
    )
    first = tables["shown"][0] if tables["shown"] else metrics[0]
    y = right.selectbox(
        "y: metric",
        metrics,
        key=remember_choice("sc.sweep_y", metrics, first),
        persist_state="session",
        help="The metrics with numbers (text ones, such as a price set, are in the cells table).",
    )
    sweep_chart(tables["results"], x, y)
    summary = tables["summary"]
    shown = summary[summary["metric"].isin(tables["shown"])]
    st.dataframe(
        shown,
        hide_index=True,
        column_config={  # every digit a small gain has, not 4 decimals
            c: st.column_config.NumberColumn(c, format="%.6g")
            for c in shown.columns
            if pd.api.types.is_float_dtype(shown[c])
        },
    )
    cols = st.columns(2)
    cols[0].download_button(
        "Summary (CSV)",
        csv_text(summary),
        "sweep_summary.csv",
        "text/csv",
        key="button.sc_sweep_summary",
    )
    cols[1].download_button(
        "Cells (CSV)",
        csv_text(tables["cells"]),
        "sweep_cells.csv",
        "text/csv",
        key="button.sc_sweep_cells",
    )


def sweep_chart(results: SweepResults, x: str, y: str) -> None:
    """The figure ``dpgames plot RESULTS --x X --y Y`` draws
    (:func:`dpgames.sweep.plot.sweep_figure`): the mean of ``y`` against ``x`` with its 95% CI band,
    a line per combination of the other parameters; a toggle for the log x axis, on by default when
    the values are log-spaced (as the command's ``--log-x``/``--linear-x``)."""
    values = sorted(
        {v for v in results.columns()[x] if isinstance(v, (int, float)) and not isinstance(v, bool)}
    )
    can_log = len(values) >= 2 and values[0] > 0
    log_x = st.toggle(
        "Log x axis",
        value=can_log and log_spaced_values(values),
        key=f"sc.sweep_log.{x}",
        disabled=not can_log,
        help="On by default when the x values are log-spaced (e.g. geomspace), "
        "as in `dpgames plot`."
        if can_log
        else "Only for positive numbers.",
    )
    figure_ = checked(sweep_figure, results, x, [y], log_x=log_x, stop=False)
    if figure_ is not None:
        st.pyplot(figure_, width="stretch")
        command = shlex.join(
            ["dpgames", "plot", "RESULTS", "--x", x, "--y", y, "--log-x" if log_x else "--linear-x"]
        )
        st.caption(f"The same figure on the command line: `{command}`.")


def page() -> None:
    st.title(TITLE)
    st.caption(
        "Ready-to-run scenario files (scenarios/*.toml), each commented for a newcomer. "
        "Running one "
        "here is the same as `dpgames run FILE --seed S --set field=value ...`: the exact command "
        "is shown under the result."
    )
    kinds_section()
    chosen = choose_file()
    if chosen is None:
        sweep_section()
        return
    name, data, base_dir = chosen
    uploads = data_uploads() if base_dir is None else ()
    with st.expander(f"Read {name}", expanded=False):
        st.code(
            data[:SHOWN_BYTES].decode("utf-8", errors="replace")
            + ("\n..." if len(data) > SHOWN_BYTES else ""),
            language="toml",
        )
    left, right = st.columns([1, 2])
    seed = left.number_input(
        "Seed (empty: the file's seed)",
        0,
        2**32 - 1,
        value=None,
        step=1,
        key="sc.seed",
        persist_state="session",
    )
    overrides_text = right.text_area(
        "Overrides, one `field = value` a line",
        key=remember("sc.overrides", ""),
        placeholder="mechanism.epsilon = 0.3",
        height=90,
        persist_state="session",
        help="A dotted field (mechanism.epsilon) or its last part when only one field "
        "of the file ends so (epsilon), as in `dpgames run --set`; values in TOML.",
    )
    overrides = checked(parse_overrides, overrides_text, stop=False)
    if overrides is not None:
        run_section(
            (name, data, base_dir, None if seed is None else int(seed), overrides, uploads),
            Path(name).stem,
        )
        saved = checked(
            settings_toml, name, data, None if seed is None else int(seed), overrides, stop=False
        )
        if saved is not None:
            st.download_button(
                "Save these settings as a scenario file (TOML)",
                saved,
                f"{Path(name).stem}_settings.toml",
                "application/toml",
                key="button.sc_settings",
                on_click="ignore",
                icon=":material/download:",
                help="The file with your overrides and seed written in: `dpgames run` on it gives "
                "the numbers above (data files it names stay relative to its folder).",
            )
    sweep_section()


def run_section(request: tuple, stem: str) -> None:
    """The Run button and the last result of this very request (it survives reruns)."""
    if st.button("Run", key="button.sc_run", type="primary"):
        result = checked(run_scenario_bytes, *request, stop=False)
        st.session_state["sc.result"] = None if result is None else (request, result)
    ran = st.session_state.get("sc.result")
    if ran is not None and ran[0] == request:
        show_result(Result.from_json(ran[1]), stem)
        name, data, _, seed, overrides, _ = request
        st.caption("The same run on the command line (`--json` for every table, every row):")
        st.code(command_line(name, data, seed, overrides), language="bash")
    elif not st.session_state.get("button.sc_run"):
        st.caption("Press Run to run this file with these settings.")


page()
