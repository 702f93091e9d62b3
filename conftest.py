"""Doctest collection for the package: ``python -m pytest`` runs the ``Examples`` of ``dpgames/`` modules.

``testpaths`` (pyproject.toml) includes ``dpgames``; this hook turns each module of the package whose source
holds a ``>>>`` line into a doctest item, so modules without examples are never imported at collection time
(and a module whose examples need an optional dependency must ``pytest.importorskip`` it in the example).
One module's doctests: ``python -m pytest dpgames/agents.py``.  Under ``--doctest-modules`` pytest's own
collector does the work and this hook steps aside, so no example runs twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule

_PACKAGE = Path(__file__).resolve().parent / "dpgames"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> DoctestModule | None:
    if getattr(parent.config.option, "doctestmodules", False) or file_path.suffix != ".py" \
            or file_path.name == "__main__.py":
        return None
    if not file_path.resolve().is_relative_to(_PACKAGE):
        return None
    if b">>>" not in file_path.read_bytes():
        return None
    return DoctestModule.from_parent(parent, path=file_path)
