"""Page: pick a scenario file, read it, run it (dpgames.scenarios), download the Result as JSON and CSV."""

from __future__ import annotations

import itertools
import tomllib
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from dpgames import Result, Scenario
from dpgames_app.ui import SCENARIO_DIR, checked, remember, show_chart

TITLE = "Scenarios"
UPLOAD = "upload a file..."
KEEP = {"persist_state": "session"}


@st.cache_data(show_spinner=False, max_entries=32)
def run_scenario_bytes(name: str, data: bytes, base_dir: str | None, seed: int | None,
                       overrides: tuple[tuple[str, Any], ...]) -> str:
    """Run a scenario file's bytes (with dotted-field overrides) and return the Result as JSON."""
    scenario = Scenario.from_bytes(data, name, Path(base_dir) if base_dir else None)
    if overrides:
        scenario = scenario.with_overrides(dict(overrides))
    return scenario.run(seed).to_json()


def parse_overrides(text: str) -> tuple[tuple[str, Any], ...]:
    """``mechanism.epsilon = 0.3`` lines (values in TOML syntax) -> ``(("mechanism.epsilon", 0.3), ...)``."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key or any(not part.strip() for part in key.split(".")):
            raise ValueError(f"overrides, line {number}: write field = value, e.g. mechanism.epsilon = 0.3 "
                             f"(got {line.strip()!r})")
        try:
            out.append((key, tomllib.loads(f"value = {value.strip()}")["value"]))
        except tomllib.TOMLDecodeError:
            raise ValueError(f"overrides, line {number}: {value.strip()!r} is not a TOML value "
                             "(numbers, true/false, \"strings\", [lists])") from None
    return tuple(out)


def choose_file() -> tuple[str, bytes, str | None] | None:
    """The scenario to run: a file of scenarios/ or an upload.  Returns (name, bytes, base folder)."""
    files = sorted(path.name for path in SCENARIO_DIR.glob("*.toml"))
    first = "digital_goods.toml" if "digital_goods.toml" in files else ([*files, UPLOAD][0])
    choice = st.selectbox("Scenario file", [*files, UPLOAD], key=remember("sc.file", first), **KEEP)
    if choice == UPLOAD:
        upload = st.file_uploader("Scenario file (TOML)", type=["toml"], key="upload.sc_toml")
        if upload is None:
            st.info("Upload a scenario file, or pick one of scenarios/.")
            return None
        return upload.name, upload.getvalue(), None
    path = SCENARIO_DIR / choice
    return f"scenarios/{choice}", path.read_bytes(), str(SCENARIO_DIR)


def show_result(result: Result, stem: str) -> None:
    st.subheader(result.title)
    seed = result.provenance.get("seed")
    st.caption(f"kind {result.kind}; seed {seed}; dpgames {result.provenance.get('dpgames')}; "
               f"scenario SHA-256 {str(result.provenance.get('scenario_sha256', ''))[:12]}...")
    metrics = pd.DataFrame({"metric": [result.labels.get(k, k) for k in result.metrics],
                            "value": [format_value(v) for v in result.metrics.values()],
                            "name": list(result.metrics)})
    st.dataframe(metrics, hide_index=True, height=35 * (len(metrics) + 1) + 3)
    cols = st.columns(2 + len(result.tables))
    cols[0].download_button("Result (JSON)", result.to_json(), f"{stem}.json", "application/json",
                            key="button.sc_json")
    cols[1].download_button("Metrics (CSV)", result.metrics_csv(), f"{stem}_metrics.csv", "text/csv",
                            key="button.sc_metrics")
    for col, name in zip(cols[2:], result.tables):
        col.download_button(f"{name} (CSV)", result.table_csv(name), f"{stem}_{name}.csv", "text/csv",
                            key=f"button.sc_table_{name}")
    for name, columns in result.tables.items():
        table_view(name, pd.DataFrame(columns))


def table_view(name: str, frame: pd.DataFrame) -> None:
    """A table, and a line chart of each numeric column against the first one when that is numeric."""
    st.markdown(f"**{name}**")
    first = frame.columns[0]
    numeric = [c for c in frame.columns[1:] if pd.api.types.is_numeric_dtype(frame[c])]
    if pd.api.types.is_numeric_dtype(frame[first]) and numeric and len(frame) >= 2:
        for column, place in zip(numeric, itertools.cycle(st.columns(min(3, len(numeric))))):
            # Plain field names: Vega-Lite reads dots and brackets in a field name as nested access.
            points = pd.DataFrame({"x": frame[first], "y": frame[column]})
            chart = alt.Chart(points).mark_line(point=len(frame) <= 50).encode(
                x=alt.X("x:Q", title=first), y=alt.Y("y:Q", title=column, axis=alt.Axis(format="~g")),
                tooltip=[alt.Tooltip("x:Q", title=first), alt.Tooltip("y:Q", title=column)])
            with place:
                show_chart(chart.properties(height=240))
    with st.expander(f"{name}: {len(frame)} rows"):
        st.dataframe(frame, hide_index=True)


def format_value(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def page() -> None:
    st.title(TITLE)
    st.caption("Ready-to-run scenario files (scenarios/*.toml), each commented for a newcomer. Running one "
               "here is the same as `dpgames run FILE --seed S`.")
    chosen = choose_file()
    if chosen is None:
        return
    name, data, base_dir = chosen
    with st.expander(f"Read {name}", expanded=False):
        st.code(data.decode("utf-8", errors="replace"), language="toml")
    left, right = st.columns([1, 2])
    seed = left.number_input("Seed (empty: the file's seed)", 0, 2**32 - 1, value=None, step=1, key="sc.seed", **KEEP)
    overrides_text = right.text_area("Overrides, one `field = value` a line", key=remember("sc.overrides", ""),
                                     placeholder="mechanism.epsilon = 0.3", height=90, **KEEP)
    overrides = checked(parse_overrides, overrides_text)
    request = (name, data, base_dir, None if seed is None else int(seed), overrides)
    if st.button("Run", key="button.sc_run", type="primary"):
        st.session_state["sc.result"] = (request, checked(run_scenario_bytes, *request))
    ran = st.session_state.get("sc.result")
    if ran is None or ran[0] != request:
        st.caption("Press Run to run this file with these settings.")
        return
    show_result(Result.from_json(ran[1]), Path(name).stem)


page()
