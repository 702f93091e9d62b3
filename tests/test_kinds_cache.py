"""`dpgames kinds` reads its list from a cache that any change of the installed kinds invalidates.

Oracles: which modules a fresh interpreter has imported (sys.modules), the uncached catalogue
itself, and file modification times set by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpgames.scenarios import registry

ROOT = Path(__file__).resolve().parent.parent
PROBE = (
    "import sys, json; from dpgames.scenarios.registry import catalogue; rows = catalogue(); "
    "print(json.dumps([[r.name, r.package, r.description, r.error] for r in rows])); "
    "print(sorted(m for m in sys.modules if m.startswith('dpgames.scenarios.') and "
    "m.split('.')[-1] in "
    "('digital_goods', 'large_game', 'allocation', 'nst_mix', 'privacy_market', "
    "'huang_kannan', 'anonymous_game')))"
)


def _probe(cache: Path) -> tuple[list, str]:
    env = {**os.environ, "DPGAMES_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return json.loads(out[0]), out[1]


@pytest.mark.slow
def test_a_second_listing_imports_no_kind_and_lists_the_same(tmp_path):
    first, imported = _probe(tmp_path)
    assert imported != "[]"  # the first listing imports every kind to read it
    assert (tmp_path / "kinds.json").is_file()
    second, imported = _probe(tmp_path)
    # the second reads the cache: the same rows, no import
    assert imported == "[]" and second == first
    assert [r[0] for r in first] == [r.name for r in registry._catalogue(registry.installed())]


def test_a_changed_fingerprint_lists_afresh(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGAMES_CACHE_DIR", str(tmp_path))
    rows = registry.catalogue()
    calls = []
    real = registry._catalogue
    monkeypatch.setattr(registry, "_catalogue", lambda entries: calls.append(1) or real(entries))
    assert registry.catalogue() == rows and calls == []
    monkeypatch.setattr(registry, "_source_state", lambda target: "changed")
    assert registry.catalogue() == rows and calls == [1]


def test_editing_or_adding_a_source_file_changes_the_source_state(tmp_path, monkeypatch):
    package = tmp_path / "kindpkg_cache_probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = registry._source_state("kindpkg_cache_probe.kind:thing")
    (package / "kind.py").write_text("def parse(top): ...\n")
    added = registry._source_state("kindpkg_cache_probe.kind")
    os.utime(package / "kind.py", ns=(10**18, 10**18))
    edited = registry._source_state("kindpkg_cache_probe.kind")
    assert len({before, added, edited}) == 3
    assert registry._source_state("no_such_module_anywhere.kind") == "not found"


def test_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    # a folder under a file: cannot exist
    monkeypatch.setenv("DPGAMES_CACHE_DIR", str(blocker / "sub"))
    assert [r.name for r in registry.catalogue()] == [
        r.name for r in registry._catalogue(registry.installed())
    ]
