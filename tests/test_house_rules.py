"""Rules of the house that a reader would otherwise have to police: the code, tests and docs say
what a thing is, never which tracker request asked for it."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TRACKED = ["dpgames", "dpgames_app", "tests", "benchmarks", "docs", "examples", "scenarios"]
TOP_LEVEL = ["app.py", "README.md", "CONTRIBUTING.md", "CHANGELOG.md", "pyproject.toml"]
SUFFIXES = {".py", ".md", ".toml", ".ipynb", ".txt", ".cfg", ".yml", ".yaml"}
TRACKER_REFERENCE = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)


def project_files() -> list[Path]:
    found = [ROOT / name for name in TOP_LEVEL if (ROOT / name).exists()]
    for folder in TRACKED:
        found += [
            p for p in sorted((ROOT / folder).rglob("*")) if p.suffix in SUFFIXES and p.is_file()
        ]
    return found


def test_no_file_refers_to_an_issue_tracker():
    hits = []
    for path in project_files():
        for number, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        ):
            if TRACKER_REFERENCE.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not hits, "say what the thing is, not which request asked for it:\n" + "\n".join(hits)


@pytest.mark.parametrize(
    "text, found",
    [
        # the references are spelled from a word and a number so that this file holds none itself
        ("see {} {}".format("issue", 7), True),
        ("{} #{} and 4".format("Issues", 3), True),
        ("an issue with the grid", False),
        ("tissue 3", False),
    ],
)
def test_the_tracker_pattern_finds_references_and_nothing_else(text, found):
    assert bool(TRACKER_REFERENCE.search(text)) is found
