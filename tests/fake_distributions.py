"""Installed distributions made up for a test: metadata (and modules) in a folder put on
``sys.path``.

``importlib.metadata`` finds a distribution by its ``NAME-VERSION.dist-info`` folder on
``sys.path``, as pip leaves it; so a test can "install" a package that registers scenario kinds
without pip, and undo it.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def install_fake_distribution(
    monkeypatch: pytest.MonkeyPatch,
    folder: Path,
    name: str,
    kinds: dict[str, str],
    modules: dict[str, str] | None = None,
    version: str = "0.1",
) -> None:
    """Put a distribution ``name`` registering ``kinds`` (kind -> module) in the group
    ``dpgames.kinds``, and the given ``modules`` (module name -> source), on ``sys.path`` until the
    test ends."""
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = "".join(f"{kind} = {target}\n" for kind, target in kinds.items())
    (info / "entry_points.txt").write_text(f"[dpgames.kinds]\n{lines}")
    for module, source in (modules or {}).items():
        (folder / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(folder))
