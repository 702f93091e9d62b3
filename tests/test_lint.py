"""The repository's habits, checked by the test command: ruff (lint and import order) and mypy, both
configured in pyproject.toml ([tool.ruff], [tool.mypy]).  A failure shows the tool's own report."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import mypy_once

ROOT = Path(__file__).resolve().parents[1]
# the paths ruff checks (CONTRIBUTING.md documents the same command)
RUFF_PATHS = ["dpgames", "dpgames_app", "app.py", "tests", "benchmarks", "conftest.py", "examples"]


def run_tool(*args: str) -> subprocess.CompletedProcess:
    module = args[0]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]')")
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_ruff_finds_nothing():
    """The rules of [tool.ruff.lint] (pyflakes, pycodestyle errors, import order, pyupgrade,
    bugbear, simplify, numpy, docstrings of public names) on the library, the app, the tests, the
    benchmarks and the examples (notebooks included)."""
    done = run_tool("ruff", "check", "--no-cache", "--output-format", "concise", *RUFF_PATHS)
    assert done.returncode == 0, f"ruff check reports:\n{done.stdout}{done.stderr}"


def test_the_code_is_formatted():
    """``ruff format`` (pyproject.toml's line length) leaves every checked file as it is."""
    done = run_tool("ruff", "format", "--check", "--no-cache", *RUFF_PATHS)
    assert done.returncode == 0, f"run `ruff format` on:\n{done.stdout}{done.stderr}"


def test_mypy_finds_nothing():
    """mypy with the configuration of pyproject.toml ([tool.mypy]: dpgames/, dpgames_app/, app.py),
    in the session's one mypy run (tests/mypy_once.py, which also checks the typing tests'
    snippets)."""
    found = mypy_once.errors()
    assert not found, "mypy reports:\n" + "\n".join(found)
