"""Shared pieces of the Streamlit pages: paths, readable error boxes, remembered inputs, chart helpers.

Presentation only: every number shown by the app comes from :mod:`dpgames`; nothing here knows about
mechanisms.  (This folder has no ``__init__.py`` on purpose: it is not part of the installed package.)
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import altair as alt
import pandas as pd
import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_DIR = ROOT / "scenarios"

T = TypeVar("T")

# Charts in this app hold at most a few thousand rows; Altair's 5,000-row guard would only get in the way
# of an uploaded population.
alt.data_transformers.disable_max_rows()


def checked(call: Callable[..., T], *args: Any, stop: bool = True, **kwargs: Any) -> T | None:
    """Run ``call``; bad input (a ``ValueError``, e.g. a ``ScenarioError``) becomes a red error box with
    the library's one-line message, never a traceback, and stops the page there (``stop=False``:
    returns None instead, so that the rest of the page still shows)."""
    try:
        return call(*args, **kwargs)
    except ValueError as exc:
        st.error(str(exc), icon=":material/error:")
        if stop:
            st.stop()
        return None


def remember(key: str, default: Any) -> str:
    """Give the input ``key`` its default once; the input then keeps the user's value across reruns and
    page switches (pass ``persist_state="session"`` to the widget).  Returns ``key``."""
    st.session_state.setdefault(key, default)
    return key


def remember_choice(key: str, options: list, default: Any) -> str:
    """:func:`remember` for a choice among ``options``: a remembered value no longer offered (another
    file was opened) goes back to ``default``."""
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
    """``read(path)`` of an uploaded file; messages mention the file by the name the user gave it."""
    with tempfile.TemporaryDirectory() as folder:
        path = uploaded_path(name, data, folder)
        try:
            return read(path)
        except ValueError as exc:
            raise ValueError(str(exc).replace(str(path), Path(name).name)) from None


def rule(x: float, label: str, color: str = "#d62728") -> alt.LayerChart:
    """A labelled vertical marker at ``x`` (for example the OPT price or the current epsilon)."""
    frame = pd.DataFrame({"x": [x], "label": [label]})
    line = alt.Chart(frame).mark_rule(color=color, strokeDash=[6, 3], strokeWidth=2).encode(x="x:Q")
    text = alt.Chart(frame).mark_text(align="left", dx=4, dy=-6, color=color, baseline="bottom").encode(
        x="x:Q", y=alt.value(12), text="label:N")
    return line + text


def show_chart(chart: alt.TopLevelMixin) -> None:
    st.altair_chart(chart, width="stretch")


def money(x: float) -> str:
    """Revenue (sum of the prices paid; values and prices in [0, 1]) for a metric tile."""
    return f"{x:,.2f}"
