"""The docs and the notebook displays: every label cell of a Result's HTML table is left-aligned,
the number of kinds the docs state is the number `dpgames kinds` lists, formulas are typeset, code
wraps."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import yaml

from dpgames import Scenario
from dpgames.scenarios.registry import BUILTIN_KINDS

ROOT = Path(__file__).resolve().parent.parent
NUMBERS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}


class Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self.rows[-1].append(dict(attrs).get("style", ""))


def test_a_results_html_table_aligns_labels_left_and_values_right():
    result = Scenario.from_dict(
        {
            "kind": "digital_goods",
            "seed": 1,
            "mechanism": {"epsilon": 1.0},
            "population": {"distribution": "list", "values": [0.2, 0.6, 0.9]},
        }
    ).run()
    cells = Cells()
    cells.feed(result._repr_html_())
    assert cells.rows and all(
        row == ["text-align:left", "text-align:right"] for row in cells.rows if len(row) == 2
    )


def test_the_docs_count_dpgames_own_kinds_right():
    """dpgames registers BUILTIN_KINDS (kept equal to pyproject's table by test_plugin_kinds); a
    number of kinds the docs state is that one."""
    count = len(BUILTIN_KINDS)
    stated = []
    for path in [*ROOT.glob("docs/**/*.md"), ROOT / "README.md"]:
        text = path.read_text()
        stated += [
            (path, w)
            for w in re.findall(
                r"\b(two|three|four|five|six|seven|eight|nine|ten)\b(?: scenario)? kinds\b",
                text,
                flags=re.IGNORECASE,
            )
        ]
        stated += [
            (path, w)
            for w in re.findall(
                r"own kinds \((two|three|four|five|six|seven|eight|nine|ten)\b", text
            )
        ]
    assert stated and all(NUMBERS[w.lower()] == count for _, w in stated), (stated, count)


def test_formulas_are_typeset_and_code_wraps():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    assert any("mathjax" in js.lower() for js in config["extra_javascript"])
    css = "".join((ROOT / "docs" / c).read_text() for c in config["extra_css"])
    assert re.search(r"pre > code\s*{[^}]*white-space:\s*pre-wrap", css)
    assert (
        "$\\exp(\\varepsilon s / (2\\Delta))$"
        in (ROOT / "docs" / "guide" / "auction.md").read_text()
    )


#: The pages whose formulas are typeset ($...$, arithmatex and MathJax).
MATHS_PAGES = [
    ROOT / "docs" / "theorems.md",
    ROOT / "docs" / "index.md",
    *sorted((ROOT / "docs" / "guide").glob("*.md")),
]


def prose(path: Path) -> str:
    """A page without its fenced code blocks (CLI output and code stay as they are)."""
    return re.sub(r"^```.*?^```", "", path.read_text(), flags=re.DOTALL | re.MULTILINE)


def test_the_theorem_table_holds_formulas_as_maths_and_code_only_as_names():
    """Every inline code span of docs/theorems.md is a name (a module, a test, a function) or a
    command, never a formula: the statements' formulas are typeset."""
    spans = re.findall(r"`([^`]+)`", prose(ROOT / "docs" / "theorems.md"))
    formulas = [
        s for s in spans if not (re.fullmatch(r"[\w./:]+", s) or s.startswith("python -m "))
    ]
    assert spans and not formulas, formulas
    text = (ROOT / "docs" / "guide" / "privacy.md").read_text()
    # advanced composition
    assert r"$\varepsilon\sqrt{2k\ln(1/\delta')} + k\varepsilon(e^{\varepsilon}-1)$" in text


def test_typeset_formulas_in_tables_hold_no_bare_bar():
    """A bare | inside $...$ on a table row would end the cell: tables write \\lvert \\rvert /
    \\lVert \\rVert."""
    bad = []
    for path in MATHS_PAGES:
        for line in prose(path).splitlines():
            if line.startswith("|"):
                bad += [(path.name, m) for m in re.findall(r"\$([^$]+)\$", line) if "|" in m]
    assert not bad, bad


def test_the_auction_notebooks_show_their_rich_displays():
    """A cell ending in a dpgames object shows its HTML table (executed as the docs build executes
    it)."""
    nbformat = __import__("pytest").importorskip("nbformat")
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "examples" / "02_incentive_to_misreport.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=300, resources={"metadata": {"path": str(ROOT / "examples")}}
    ).execute()
    html = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "text/html" in o.get("data", {})
    ]
    assert html and "<table>" in html[0]["data"]["text/html"]


def test_misreport_audit_repr_is_one_short_line_and_describe_has_the_figures():
    import numpy as np

    from dpgames import DigitalGoodsAuction
    from dpgames.analysis import misreport_audit

    values = np.random.default_rng(0).uniform(size=2000)
    audit = misreport_audit(DigitalGoodsAuction(0.5), values)
    text = repr(audit)
    assert "\n" not in text and len(text) < 200 and f"{audit.max_gain:.6g}" in text
    worst = audit.worst_case
    assert f"agent {worst['agent']}" in text
    lines = audit.describe().splitlines()
    assert lines[0].split()[-1] == "2,000" and "largest gain from a lie" in audit.describe()
