"""Doctest collection for the package, and the ``slow`` marker of the integration layers.

**Doctests**: ``python -m pytest`` runs the ``Examples`` of ``dpgames/`` modules.

``testpaths`` (pyproject.toml) includes ``dpgames``; this hook turns each module of the package whose source
holds a ``>>>`` line into a doctest item, so modules without examples are never imported at collection time
(and a module whose examples need an optional dependency must ``pytest.importorskip`` it in the example).
One module's doctests: ``python -m pytest dpgames/agents.py``.  Under ``--doctest-modules`` pytest's own
collector does the work and this hook steps aside, so no example runs twice.

**Markers**: the test files of the layers around the library (the app under AppTest and in a browser, the
documentation build, the wheel, the whole-tree linters and type checker, the fuzz suites run in forked
children) are marked ``slow`` here, by file, so ``python -m pytest -m "not slow"`` runs the library's own
tests for quick feedback; CI (``python -m pytest``) runs everything.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule

_PACKAGE = Path(__file__).resolve().parent / "dpgames"

#: Test files of the integration layers (module docstring): every test in them is marked ``slow``.
SLOW_FILES = frozenset(
    {
        # the app (AppTest and a browser)
        "test_app.py",
        "test_app_browser.py",
        "test_app_privacy_budget.py",
        "test_app_review.py",
        "test_app_scenarios.py",
        "test_app_theory_sections.py",
        "test_app_uploads.py",
        "test_app_wording.py",
        "test_allocation_app.py",
        "test_anonymous_app.py",
        "test_markets_app.py",
        # the documentation build and its displays, the wheel
        "test_docs.py",
        "test_docs_display.py",
        "test_packaging.py",
        # whole-tree ruff and one mypy run
        "test_lint.py",
        "test_audit_typing.py",
        "test_typed_exports.py",
        # the fuzz suites (each case in a forked child)
        "test_fuzz_api.py",
        "test_fuzz_cli.py",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow = pytest.mark.slow
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(slow)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> DoctestModule | None:
    if (
        getattr(parent.config.option, "doctestmodules", False)
        or file_path.suffix != ".py"
        or file_path.name == "__main__.py"
    ):
        return None
    if not file_path.resolve().is_relative_to(_PACKAGE):
        return None
    if b">>>" not in file_path.read_bytes():
        return None
    return DoctestModule.from_parent(parent, path=file_path)
