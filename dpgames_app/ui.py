"""Shared pieces of the Streamlit pages: paths, readable error boxes, remembered inputs, chart helpers.

Presentation only: every number shown by the app comes from :mod:`dpgames`; nothing here knows about
mechanisms.  (This folder has no ``__init__.py`` on purpose: it is not part of the installed package.)
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import altair as alt
import pandas as pd
import streamlit as st

from dpgames import Scenario
from dpgames.validation import ValidationError

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_DIR = ROOT / "scenarios"
SHIPPED_DATA = SCENARIO_DIR / "data"

T = TypeVar("T")

# Charts in this app hold at most a few thousand rows; Altair's 5,000-row guard would only get in the way
# of an uploaded population.
alt.data_transformers.disable_max_rows()


def checked(call: Callable[..., T], *args: Any, stop: bool = True, **kwargs: Any) -> T | None:
    """Run ``call``; bad input (a :class:`~dpgames.validation.ValidationError`, e.g. a ``ScenarioError``)
    becomes a red error box with the library's one-line message, never a traceback, and stops the page
    there (``stop=False``: returns None instead, so that the rest of the page still shows).  Any other
    exception is a bug in dpgames and its box says so (``DPGAMES_DEBUG=1``: the page shows the traceback)."""
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
    """The one line the app shows for an exception: the message of bad input, or an internal-error line."""
    text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or type(exc).__name__
    if isinstance(exc, ValidationError):
        return text
    if isinstance(exc, MemoryError):
        return "out of memory: lower the sizes"
    if not text.startswith("internal error"):
        text = f"internal error (a bug in dpgames, please report it): {type(exc).__name__}: {text}"
    return f"{text} (set DPGAMES_DEBUG=1 to see the traceback)"


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
            exc.args = (str(exc).replace(str(path), Path(name).name),)
            raise


@contextmanager
def upload_folder(uploads: tuple[tuple[str, bytes], ...]) -> Iterator[Path]:
    """A fresh folder, removed afterwards, holding the uploaded data files under their own names (TNTP
    files ``X_net.tntp``, ``X_trips.tntp`` also in a folder ``X``) and ``data``: the shipped examples."""
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


def run_uploaded(name: str, data: bytes, uploads: tuple[tuple[str, bytes], ...],
                 call: Callable[[Scenario], T]) -> T:
    """``call(scenario)`` for an uploaded scenario file.  It may read only the data files uploaded with
    it and the shipped examples (scenarios/data), never another file of the server (paths are
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
            message = message.replace(form + os.sep, shown).replace(form, shown.rstrip("/") or "the upload")
    return message.replace("; add one with --data-dir", "")


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
