"""Shared pieces of the Streamlit pages: paths, readable error boxes, remembered inputs, chart
helpers.

Presentation only: every number shown by the app comes from :mod:`dpgames`; nothing here knows about
mechanisms.  (This folder has no ``__init__.py`` on purpose: it is not part of the installed
package.)
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from dpgames import Scenario
from dpgames.scenarios import calibration
from dpgames.validation import ValidationError

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_DIR = ROOT / "scenarios"
SHIPPED_DATA = SCENARIO_DIR / "data"
SLOW_SECONDS = 30  # a page whose work the library estimates above this waits for a button
MIN_EPSILON = 1e-6  # the least epsilon an input accepts: every mechanism here needs eps > 0

T = TypeVar("T")

# Charts in this app hold at most a few thousand rows; Altair's 5,000-row guard would only get in
# the way of an uploaded population.
alt.data_transformers.disable_max_rows()


@overload
def checked(call: Callable[..., T], *args: Any, stop: Literal[True] = True, **kwargs: Any) -> T: ...


@overload
def checked(
    call: Callable[..., T], *args: Any, stop: Literal[False], **kwargs: Any
) -> T | None: ...


def checked(call: Callable[..., T], *args: Any, stop: bool = True, **kwargs: Any) -> T | None:
    """Run ``call``; bad input (a :class:`~dpgames.validation.ValidationError`, e.g. a
    ``ScenarioError``) becomes a red error box with the library's one-line message, never a
    traceback, and stops the page there (``stop=False``: returns None instead, so that the rest of
    the page still shows).  Any other exception is a bug in dpgames and its box says so
    (``DPGAMES_DEBUG=1``: the page shows the traceback)."""
    try:
        return call(*args, **kwargs)
    except Exception as exc:
        if not isinstance(exc, ValidationError) and os.environ.get("DPGAMES_DEBUG"):
            raise
        st.error(error_text(exc), icon=":material/error:")
        if stop:
            st.stop()
        return None


def error_text(exc: Exception) -> str:
    """The one line the app shows for an exception: the message of bad input, or an internal-error
    line."""
    text = (
        "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        or type(exc).__name__
    )
    if isinstance(exc, ValidationError):
        return text
    if isinstance(exc, MemoryError):
        return "out of memory: lower the sizes"
    if not text.startswith("internal error"):
        text = f"internal error (a bug in dpgames, please report it): {type(exc).__name__}: {text}"
    return f"{text} (set DPGAMES_DEBUG=1 to see the traceback)"


def remember(key: str, default: Any) -> str:
    """Give the input ``key`` its default once; the input then keeps the user's value across reruns
    and page switches (pass ``persist_state="session"`` to the widget).  Returns ``key``."""
    st.session_state.setdefault(key, default)
    return key


def remember_choice(key: str, options: list, default: Any) -> str:
    """:func:`remember` for a choice among ``options``: a remembered value no longer offered
    (another file was opened) goes back to ``default``."""
    if st.session_state.get(key, default) not in options:
        st.session_state[key] = default
    return remember(key, default)


def uploaded_path(name: str, data: bytes, folder: str) -> Path:
    """Write an uploaded file under its own name in a fresh folder, so that the library's messages,
    which name the file, name the user's file."""
    path = Path(folder) / Path(name).name
    path.write_bytes(data)
    return path


def with_upload(name: str, data: bytes, read: Callable[[Path], T]) -> T:
    """``read(path)`` of an uploaded file; messages mention the file by the name the user gave
    it."""
    with tempfile.TemporaryDirectory() as folder:
        path = uploaded_path(name, data, folder)
        try:
            return read(path)
        except ValueError as exc:
            exc.args = (str(exc).replace(str(path), Path(name).name),)
            raise


@contextmanager
def upload_folder(uploads: tuple[tuple[str, bytes], ...]) -> Iterator[Path]:
    """A fresh folder, removed afterwards, holding the uploaded data files under their own names
    (TNTP files ``X_net.tntp``, ``X_trips.tntp`` also in a folder ``X``) and ``data``: the shipped
    examples."""
    with tempfile.TemporaryDirectory(prefix="dpgames-upload-") as name:
        folder = Path(name)
        for file_name, data in uploads:
            base = Path(file_name).name
            if base in ("", ".", "..", "data"):
                continue
            (folder / base).write_bytes(data)
            network = re.fullmatch(r"(.+)_(net|trips|node)\.tntp", base)
            if network:
                (folder / network.group(1)).mkdir(exist_ok=True)
                (folder / network.group(1) / base).write_bytes(data)
        try:
            (folder / "data").symlink_to(SHIPPED_DATA, target_is_directory=True)
        except OSError:
            shutil.copytree(SHIPPED_DATA, folder / "data")
        yield folder


def run_uploaded(
    name: str, data: bytes, uploads: tuple[tuple[str, bytes], ...], call: Callable[[Scenario], T]
) -> T:
    """``call(scenario)`` for an uploaded scenario file.  It may read only the data files uploaded
    with it and the shipped examples (scenarios/data), never another file of the server (paths are
    confined, see :meth:`dpgames.scenarios.Table.path`); messages name the user's files, not the
    server's folders."""
    with upload_folder(uploads) as folder:
        try:
            return call(Scenario.from_bytes(data, name, folder, (SHIPPED_DATA,)))
        except ValueError as exc:
            exc.args = (public_message(str(exc), folder),)
            raise


def public_message(message: str, folder: Path) -> str:
    """``message`` without the server's folders: the upload folder and the shipped data folder."""
    for path, shown in ((folder, ""), (SHIPPED_DATA, "scenarios/data/")):
        for form in {str(path), os.path.realpath(path)}:
            message = message.replace(form + os.sep, shown).replace(
                form, shown.rstrip("/") or "the upload"
            )
    return message.replace("; add one with --data-dir", "")


def rule(x: float, label: str, color: str = "#d62728", label_y: int = 12) -> alt.LayerChart:
    """A labelled vertical marker at ``x`` (for example the OPT price or the current epsilon), its
    label ``label_y`` pixels below the top of the plot (lower it where the data reach the top
    there)."""
    frame = pd.DataFrame({"x": [x], "label": [label]})
    line = alt.Chart(frame).mark_rule(color=color, strokeDash=[6, 3], strokeWidth=2).encode(x="x:Q")
    text = (
        alt.Chart(frame)
        .mark_text(align="left", dx=4, dy=-6, color=color, baseline="bottom")
        .encode(x="x:Q", y=alt.value(label_y), text="label:N")
    )
    return line + text


#: The Altair charts the pages draw (the chart types that ``st.altair_chart`` accepts).
Chart = (
    alt.Chart
    | alt.LayerChart
    | alt.HConcatChart
    | alt.VConcatChart
    | alt.ConcatChart
    | alt.FacetChart
    | alt.RepeatChart
)


def show_chart(chart: Chart) -> None:
    """An Altair chart at the column's width; its toolbar (on hover) downloads it as PNG and shows
    its data."""
    st.altair_chart(chart, width="stretch")


def money(x: float) -> str:
    """Revenue (sum of the prices paid; values and prices in [0, 1]) for a metric tile: cents below
    10,000, whole units above (thousands separated), so that a tile never cuts the figure off."""
    return f"{x:,.2f}" if abs(x) < 1e4 else f"{x:,.0f}"


def figure(x: Any, digits: int = 4) -> str:
    """A number for a metric tile or a table: thousands separators for large figures, ``digits``
    significant digits otherwise, "yes"/"no" for booleans, text unchanged."""
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if not isinstance(x, (int, float, np.integer, np.floating)):
        return str(x)
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if abs(x) >= 1e5:
        return f"{x:,.0f}"
    if abs(x) >= 10 ** (digits - 1):
        return f"{x:,.1f}".removesuffix(".0")
    return f"{x:,.{digits}g}"


#: A small run timed once to calibrate the library's work estimates on this machine (about a
#: second).
@st.cache_resource(show_spinner="Timing this machine once, to estimate the work...")
def seconds_per_operation() -> float:
    """The library's calibration (:func:`dpgames.scenarios.calibration.seconds_per_operation`), kept
    for the server's life."""
    return calibration.seconds_per_operation()


def machine_seconds(work: float) -> float:
    """The time ``work`` operations take on this machine (the calibrated rate above
    :data:`~dpgames.scenarios.calibration.TIMED_ABOVE` operations, the nominal 1e9 a second
    below)."""
    return work * (
        seconds_per_operation() if work > calibration.TIMED_ABOVE else calibration.NOMINAL
    )


def csv_text(frame: pd.DataFrame) -> str:
    """A table as CSV text: numbers with 15 significant digits, the most a double holds exactly in
    decimal (0.3, not 0.30000000000000004), as ``dpgames run --tables-dir`` writes them."""
    return frame.to_csv(index=False, float_format="%.15g")


def downloads(
    stem: str,
    result: Callable[[], str] | None,
    tables: dict[str, pd.DataFrame],
    scenario: Callable[[], str] | None,
    key: str,
) -> None:
    """The page's downloads in one row: the Result as JSON (``result``: called on click, it may run
    the scenario), each table as CSV, and the settings as a scenario file (``scenario``: its TOML
    text) that ``dpgames run`` reproduces bit for bit."""
    items: list[tuple[str, Any, str, str]] = []
    if scenario is not None:
        items.append(("Scenario file (TOML)", scenario, f"{stem}.toml", "application/toml"))
    if result is not None:
        items.append(("Result (JSON)", result, f"{stem}.json", "application/json"))
    items += [
        (f"{name} (CSV)", csv_text(frame), f"{stem}_{name.replace(' ', '_')}.csv", "text/csv")
        for name, frame in tables.items()
    ]
    cols = st.columns(min(3, len(items)))
    for i, (label, data, file_name, mime) in enumerate(items):
        cols[i % len(cols)].download_button(
            label,
            data,
            file_name,
            mime,
            key=f"button.{key}_{i}",
            on_click="ignore",
            icon=":material/download:",
            width="stretch",
            help="These settings as a scenario file: `dpgames run` on it gives the numbers of this "
            "page, bit for bit."
            if label.startswith("Scenario")
            else None,
        )
    st.caption(
        'Figures: each chart\'s toolbar (top right, on hover) has "Download as PNG" and '
        '"Show data"; '
        "Streamlit offers no SVG, so the data behind the charts is in the CSV files above."
    )


def csv_header(data: bytes) -> list[str]:
    """The header row of an uploaded CSV file (empty when its first field is a number: no
    header)."""
    try:
        first = next(
            csv.reader(io.StringIO(data[:65536].decode("utf-8", errors="replace"), newline="")), []
        )
    except csv.Error:  # not CSV: the loader says what is wrong with the file, by line
        return []
    if not first:
        return []
    try:
        float(first[0])
        return []
    except ValueError:
        return [cell.strip() for cell in first]


def dot_chart(
    frame: pd.DataFrame,
    label: str,
    value: str,
    title: str,
    axis_title: str,
    shown: Callable[[float], str],
    axis_format: str | None = None,
) -> alt.LayerChart:
    """One dot per row on an axis that spans the data (not from 0, so that 267 and 271 look apart);
    each row's label carries its value (``shown(value)``), so no text can run off the plot.  A dot
    plot, because a bar cut off from 0 would mislead."""
    low, high = float(frame[value].min()), float(frame[value].max())
    pad = max((high - low) * 0.15, abs(high) * 0.002, 1e-9)
    scale = alt.Scale(domain=[low - pad, high + pad], zero=False, nice=False)
    rows = frame.assign(
        row=[f"{name}: {shown(v)}" for name, v in zip(frame[label], frame[value])],
        axis_start=low - pad,
    )
    x = alt.X(
        f"{value}:Q",
        title=axis_title,
        scale=scale,
        axis=alt.Axis(format=axis_format, tickCount=5) if axis_format else alt.Axis(tickCount=5),
    )
    y = alt.Y("row:N", sort=None, title=None, axis=alt.Axis(labelLimit=0))
    base = alt.Chart(rows)
    lines = base.mark_rule(color="#dddddd").encode(
        x=alt.X("axis_start:Q", scale=scale), x2=f"{value}:Q", y=y
    )
    dots = base.mark_circle(size=110, opacity=1).encode(
        x=x,
        y=y,
        color=alt.Color("row:N", legend=None),
        tooltip=[
            alt.Tooltip(c, format=",.6g") if pd.api.types.is_float_dtype(frame[c]) else c
            for c in frame.columns
        ],
    )
    return (lines + dots).properties(title=title)


def diverging(field: str, title: str, values: np.ndarray) -> alt.Color:
    """A colour for gains: diverging and centred at 0 (red: lying pays; blue: it costs), on a
    symmetric log scale whose range is robust (the 98th percentile of |value|), so that one extreme
    cell does not wash out the rest and tiny positive gains still show: the log scale's linear zone
    (``constant``) is small enough that the largest gain beyond rounding (1e-12) is drawn at least
    half as dark as the range's end (with ``c = best^2 / top``, ``log1p(best / c) >= log1p(top / c)
    / 2``), even beside costs 1,000 times larger."""
    top = float(np.quantile(np.abs(values), 0.98)) if values.size else 0.0
    top = top if top > 0 else 1e-12
    best = float(np.max(values)) if values.size else 0.0
    constant = top * 1e-3 if best <= 1e-12 else min(top * 1e-3, best * best / top)
    ticks = sorted({-top, 0.0, top} | ({best} if 1e-12 < best < top else set()))
    return alt.Color(
        f"{field}:Q",
        title=title,
        legend=alt.Legend(format=".2~g", gradientLength=260, values=ticks),
        scale=alt.Scale(
            type="symlog",
            constant=max(constant, 1e-15),
            scheme="redblue",
            reverse=True,
            domain=[-top, top],
            domainMid=0,
            clamp=True,
        ),
    )


def words(name: str) -> str:
    """A column or parameter name as an axis title: ``mechanism.epsilon`` -> ``epsilon``,
    ``best_gain`` -> ``best gain``."""
    return name.rsplit(".", 1)[-1].replace("_", " ")


def log_spaced(x: pd.Series) -> bool:
    """Whether positive values span two decades or more and are closer to evenly spaced in log than
    in linear terms (e.g. n = 100, 1000, 10000): then a log axis shows them evenly."""
    values = np.unique(pd.to_numeric(x, errors="coerce").dropna().to_numpy(dtype=float))
    if values.size < 3 or values[0] <= 0 or values[-1] / values[0] < 100:
        return False

    def spread(v: np.ndarray) -> float:  # the relative spread of consecutive gaps
        gaps = np.diff(v)
        return float(np.std(gaps) / np.mean(gaps))

    return spread(np.log(values)) < spread(values)
