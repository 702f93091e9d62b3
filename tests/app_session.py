"""Starting the Streamlit app under ``AppTest`` on a page: shared by the app's test modules."""

from __future__ import annotations

from pathlib import Path

import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest

ROOT = Path(__file__).resolve().parent.parent


def start(page: str | None = None) -> AppTest:
    """The app after its first run, switched to ``dpgames_app/{page}.py`` when a page is given."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    if page is not None:
        at.switch_page(f"dpgames_app/{page}.py").run()
    return at
