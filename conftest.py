"""Doctest collection for the package, and the ``slow`` marker of the integration layers.

**Doctests**: ``python -m pytest`` runs the ``Examples`` of ``dpgames/`` modules.

``testpaths`` (pyproject.toml) includes ``dpgames``; this hook turns each module of the package
whose source holds a ``>>>`` line into a doctest item, so modules without examples are never
imported at collection time (and a module whose examples need an optional dependency must
``pytest.importorskip`` it in the example). One module's doctests: ``python -m pytest
dpgames/agents.py``.  Under ``--doctest-modules`` pytest's own collector does the work and this hook
steps aside, so no example runs twice.

**The ``slow`` marker**: ``python -m pytest -m "not slow"`` runs the library's own tests and
doctests for quick feedback while you work; CI (``python -m pytest``, ``.ci/run``) runs every test,
the slow ones included.  A test is ``slow`` by one of two rules:

* its file is an integration layer, listed in :data:`SLOW_FILES` below (the app under AppTest and in
  a browser, the documentation build, the wheel, the whole-tree linters and type checker, the fuzz
  suites run in forked children): every test in it is marked here;
* it is marked ``@pytest.mark.slow`` at the test (or at one ``pytest.param``): one of the suite's
  heaviest runs (``--durations=0``) and heavy by nature: a whole scenario or CLI run, a fresh
  interpreter or child process, a real sweep, a road network, a long mediator run, a Monte Carlo
  with a large sample or an exact law against mpmath, or an enumeration of a large space.  A test
  that is slow only by waste (an over-large size, a setup repeated per test, more hypothesis
  examples than a unit check needs) is made fast instead.

Under exactly ``-m "not slow"`` the files of :data:`SLOW_FILES` are not even imported
(:func:`pytest_ignore_collect`).

Measured on 2026-11-27 on the shared 2-core development machine (load average about 4, TNTP data
present): ``python -m pytest -m "not slow"`` ran 2,464 of the 3,305 tests in 123 s wall, 82 s CPU
(one process, bytecode cached; 150 s wall, 100 s CPU under ``PYTHONDONTWRITEBYTECODE=1``, which
rewrites every test file's asserts again).
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


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under exactly ``-m "not slow"`` the files of :data:`SLOW_FILES` are not imported at all
    (every test in them would be deselected; their imports, streamlit's and the docs build's among
    them, cost seconds); any other selection collects them."""
    if (
        collection_path.name in SLOW_FILES
        and " ".join(config.option.markexpr.split()) == "not slow"
    ):
        return True
    return None


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
