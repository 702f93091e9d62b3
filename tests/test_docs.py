"""The documentation site: complete, built with warnings as errors, and linked from the README.

``mkdocs build --strict`` fails on a broken link, a missing page, a name mkdocstrings cannot find,
or a docstring whose Parameters section names an argument the function does not have.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_api", ROOT / "docs" / "gen_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_pages_are_the_generated_ones():
    """Every public name has its entry: the committed pages equal what docs/gen_api.py writes
    now."""
    for name, text in load_generator().pages().items():
        path = ROOT / "docs" / "api" / name
        assert path.exists(), f"docs/api/{name} missing: run python docs/gen_api.py"
        assert path.read_text() == text, f"docs/api/{name} is stale: run python docs/gen_api.py"


def test_every_public_name_is_in_the_reference():
    """An independent walk over the packages' __all__: each name appears on some API page."""
    import dpgames

    reference = "\n".join(p.read_text() for p in (ROOT / "docs" / "api").glob("*.md"))
    packages = [
        "dpgames",
        *(
            f"dpgames.{p}"
            for p in (
                "privacy",
                "mechanisms",
                "markets",
                "allocation",
                "games",
                "analysis",
                "scenarios",
                "sweep",
            )
        ),
    ]
    missing = [
        f"{package}.{name}"
        for package in packages
        for name in importlib.import_module(package).__all__
        if not re.search(rf"[.\[`]{re.escape(name)}[\]`\s]", reference)
    ]
    assert not missing, f"not in docs/api: {missing}"
    assert dpgames.__all__


NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))


def test_notebooks_are_stored_without_outputs():
    """Notebooks are committed stripped (their outputs are made by the docs build, which executes
    them)."""
    import json

    assert len(NOTEBOOKS) >= 4
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text())["cells"]
        dirty = [
            i
            for i, c in enumerate(cells)
            if c["cell_type"] == "code" and (c["outputs"] or c["execution_count"])
        ]
        assert not dirty, (
            f"{path.name}: cells {dirty} hold outputs (strip them: clear outputs before committing)"
        )


def test_every_notebook_is_in_the_site():
    nav = (ROOT / "mkdocs.yml").read_text()
    assert all(f"examples/{p.name}" in nav for p in NOTEBOOKS)


def test_site_builds_strictly(tmp_path):
    """Builds the site with warnings as errors, executing every notebook (a failing cell fails the
    build)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "-d",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", **__import__("os").environ},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "api" / "privacy" / "index.html").exists()


def test_readme_links_resolve():
    """Every relative link of the README names a file of the repository (anchors are checked by
    mkdocs)."""
    text = (ROOT / "README.md").read_text()
    targets = [
        t.split("#")[0]
        for t in re.findall(r"\]\(([^)\s]+)\)", text)
        if not t.startswith(("http", "#"))
    ]
    assert targets, "the README links its guides"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, missing
