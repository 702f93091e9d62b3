"""docs/theorems.md stays honest: every test it names exists, every module it names exists, and
every theorem, proposition, lemma, corollary or algorithm cited in a ``dpgames/`` source file
appears in a row of the table that names that file among its modules (so a reader gets from any
cited guarantee to the tests that hold it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs" / "theorems.md"

#: A numbered citation: "Thm 3.10", "Theorem 3", "Prop. 1.6", "Lemma 2.3", "Cor. 9", "Alg. 1".
CITATION = re.compile(
    r"\b(Thm|Theorem|Prop|Proposition|Lemma|Cor|Corollary|Alg|Algorithm)\.?\s?(\d+(?:\.\d+)?)\b"
)
KIND = {"Theorem": "Thm", "Proposition": "Prop", "Corollary": "Cor", "Algorithm": "Alg"}
TEST = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
MODULE = re.compile(r"`(dpgames/[\w/]+\.py)`")


def labels(text: str) -> set[str]:
    """The normalised citations in a text: {"Thm 3.10", "Prop 1.6", ...}."""
    return {f"{KIND.get(kind, kind)} {number}" for kind, number in CITATION.findall(text)}


def rows() -> list[tuple[set[str], set[str], list[tuple[str, str]]]]:
    """Per table row: (citations in its Source cell, modules it names, tests it names)."""
    out = []
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        # "\|" is a literal bar
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) != 4 or cells[0] in ("Result", "---") or set(cells[0]) <= {"-"}:
            continue
        out.append((labels(cells[1]), set(MODULE.findall(cells[2])), TEST.findall(cells[3])))
    return out


def cited_in_the_library() -> set[tuple[str, str]]:
    """Every (module path, normalised citation) in the dpgames sources."""
    found = set()
    for path in sorted((ROOT / "dpgames").rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        found |= {(module, label) for label in labels(path.read_text(encoding="utf-8"))}
    return found


def test_the_table_has_rows_with_tests():
    table = rows()
    assert len(table) >= 30
    assert all(tests for _, _, tests in table)


def test_every_test_named_in_the_table_exists():
    missing = []
    for _, _, tests in rows():
        for file, name in tests:
            path = ROOT / file
            if not path.is_file() or not re.search(
                rf"^def {name}\(", path.read_text(encoding="utf-8"), re.MULTILINE
            ):
                missing.append(f"{file}::{name}")
    assert not missing, f"tests named in docs/theorems.md but not found: {missing}"


def test_every_module_named_in_the_table_exists():
    missing = sorted({m for _, modules, _ in rows() for m in modules if not (ROOT / m).is_file()})
    assert not missing, f"modules named in docs/theorems.md but not found: {missing}"


def test_every_theorem_cited_in_a_docstring_is_in_the_table_with_its_module():
    table = rows()
    absent = sorted(
        f"{module}: {label}"
        for module, label in cited_in_the_library()
        if not any(label in cited and module in modules for cited, modules, _ in table)
    )
    assert not absent, (
        "cited in dpgames/ but without a row of docs/theorems.md naming both the citation (Source) "
        f"and the module: {absent}"
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Dwork & Roth Thm 3.10-3.11 and Prop 10.1", {"Thm 3.10", "Prop 10.1"}),
        (
            "(Bun & Steinke 2016, Prop. 1.6), Lemma 2.3; Balle et al. 2020, Thm. 21",
            {"Prop 1.6", "Lemma 2.3", "Thm 21"},
        ),
        (
            "Theorem 2 and Proposition 4.1 and their Cor. 9; CKS Alg. 3",
            {"Thm 2", "Prop 4.1", "Cor 9", "Alg 3"},
        ),
        ("Thmx 3, Properties 1, a Lemma without a number", set()),
    ],
)
def test_the_citation_pattern(text, expected):
    assert labels(text) == expected
