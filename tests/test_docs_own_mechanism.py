"""The worked examples of the own-mechanism guide run, and print what the guide says they print.

Each section's Python blocks run in order in one namespace (as a reader pastes them); a block
followed by an output block must print exactly that output, and the theorems' verdicts are checked
here again.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "own-mechanism.md"
SECTIONS = (
    "Matching",
    "Voting",
    "Auctions with coalitions",
    "Gain against a parameter",
    "Privacy of rankings: Kendall tau neighbours",
)


def blocks(section: str) -> list[tuple[str, str | None]]:
    """The section's Python blocks, each with the plain block right after it (its output), if
    any."""
    text = GUIDE.read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    out = []
    for found in re.finditer(r"```python\n(.*?)```", body, flags=re.S):
        follows = re.match(r"\s*```\n(.*?)```", body[found.end() :], flags=re.S)
        out.append((found.group(1), None if follows is None else follows.group(1)))
    return out


def run(code: str, namespace: dict) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(GUIDE), "exec"), namespace)
    return printed.getvalue()


@pytest.fixture(scope="module")
def namespace() -> dict:
    import dpgames
    from dpgames.testing import assert_truthful

    return {"dpgames": dpgames, "assert_truthful": assert_truthful}


@pytest.mark.slow
@pytest.mark.parametrize("section", SECTIONS)
def test_section_runs_and_prints_its_output(section, namespace):
    found = blocks(section)
    assert found, section
    for code, output in found:
        printed = run(code, namespace)
        if output is not None:
            assert printed.strip() == output.strip()


@pytest.mark.slow
def test_the_theorems_verdicts(namespace):
    for section in SECTIONS:
        for code, _ in blocks(section):
            run(code, namespace)
    ns = namespace
    # Voting: nobody alone, but the two a-voters together (Gibbard-Satterthwaite for Borda)
    voters = [("a", "b", "c")] * 2 + [("b", "c", "a")] * 2
    assert ns["dpgames"].truthfulness_audit(ns["vote"], voters).max_gain == 0.0
    assert (
        ns["dpgames"]
        .truthfulness_audit(ns["vote"], voters, coalitions=2, manipulation="strong")
        .max_gain
        == 1.0
    )
    # Voting: neutral=True changes no answer; lowest-index tie-breaking is refused as not neutral
    undeclared = ns["dpgames"].CustomMechanism(
        ns["borda_fair"], ns["ordinal_utility"], types=ns["rankings"]("abc"), anonymous=True
    )
    assert ns["dpgames"].truthfulness_audit(undeclared, n=5, profiles="all").max_gain == (
        ns["dpgames"].truthfulness_audit(ns["fair"], n=5, profiles="all").max_gain
    )
    assert ns["message"].startswith("neutral is declared True")
    # SVVAMP's CM at that profile: the two a-voters (the coalition found by hand above)
    assert ns["cm"].worst_case["coalition"] == (0, 1) and not ns["cm"].is_truthful()
    # Auctions: the ring is weak, not strong
    ring = ns["dpgames"].truthfulness_audit(
        ns["vickrey"], [5, 4, 1], coalitions=2, manipulation="strong"
    )
    assert ring.max_gain == 0.0
    # Rankings: a Mallows law loses eps per adjacent swap
    audit_privacy, kendall_neighbours = ns["audit_privacy"], ns["kendall_neighbours"]
    assert audit_privacy(ns["mallows"], kendall_neighbours("abcd")).epsilon == pytest.approx(
        0.4, rel=1e-9
    )
    assert audit_privacy(ns["mallows"], kendall_neighbours("abcd", k=2)).epsilon == pytest.approx(
        0.8, rel=1e-9
    )


def test_the_planner_block_runs(namespace):
    text = GUIDE.read_text()
    [code] = [
        c for c in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "samples_for_power" in c
    ]
    printed = run(code, namespace).splitlines()
    assert printed[1] == "73 137"
