"""Starting the Streamlit app under ``AppTest`` on a page, and reading what its download buttons
give: shared by the app's test modules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
from streamlit.runtime.media_file_manager import MediaFileManager  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# AppTest gives each run a fresh media file manager and drops it afterwards; what a download button
# would serve is recorded here as the page registers it (a file's URL or a deferred callable's id).
_SERVED: dict[str, bytes | str | Callable[[], bytes | str]] = {}
_add, _add_deferred = MediaFileManager.add, MediaFileManager.add_deferred


def _recording_add(self, path_or_data, *args, **kwargs):
    url = _add(self, path_or_data, *args, **kwargs)
    _SERVED[url] = path_or_data
    return url


def _recording_add_deferred(self, data_callable, *args, **kwargs):
    file_id = _add_deferred(self, data_callable, *args, **kwargs)
    _SERVED[file_id] = data_callable
    return file_id


MediaFileManager.add, MediaFileManager.add_deferred = _recording_add, _recording_add_deferred


def start(page: str | None = None) -> AppTest:
    """The app after its first run, switched to ``dpgames_app/{page}.py`` when a page is given."""
    _SERVED.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    if page is not None:
        at.switch_page(f"dpgames_app/{page}.py").run()
    return at


def downloaded(at: AppTest, label: str) -> str:
    """The text the download button labelled ``label`` gives (its callable is called, as on a
    click)."""
    buttons = [b for b in at.get("download_button") if b.proto.label == label]
    assert buttons, (
        f"no download button {label!r}; have {[b.proto.label for b in at.get('download_button')]}"
    )
    proto = buttons[0].proto
    data = _SERVED[proto.deferred_file_id or proto.url]
    data = data() if callable(data) else data
    return data.decode() if isinstance(data, bytes) else data


def metric_value(at: AppTest, label: str) -> str:
    """The value shown by the page's metric tile named ``label`` (failing with the labels there
    are)."""
    found = [m.value for m in at.metric if m.label == label]
    assert found, [m.label for m in at.metric]
    return found[0]
