"""`dpgames check` prints every operation count in one format: thousands separators up to 1e15 (as
dpgames.scenarios.text.format_number), never ``1.13e+08`` next to ``2,659,719``."""

import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dpgames.cli import main
from dpgames.scenarios.budget import fmt_count

ROOT = Path(__file__).resolve().parents[1]


@settings(max_examples=50, deadline=None, derandomize=True)
@given(st.floats(0, 9.9e14))
def test_counts_below_1e15_read_back_with_separators(x):
    shown = fmt_count(x)
    assert re.fullmatch(r"\d{1,3}(,\d{3})*", shown), shown
    assert int(shown.replace(",", "")) == round(x)


def test_counts_beyond_1e15_use_an_exponent():
    assert fmt_count(2.5e18) == "2.50e+18"
    assert fmt_count(float("inf")) == "more than 1e308"


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*.toml")), ids=lambda p: p.name)
def test_check_output_has_no_exponent_below_1e15(path, capsys, monkeypatch):
    monkeypatch.setenv("DPGAMES_TNTP_DIR", "/work/shared/data/tntp")
    main(["check", str(path)])
    text = capsys.readouterr().out
    counts = re.findall(r"([\d.,e+]+) operations", text)
    assert counts, text
    for count in counts:
        assert "e+" not in count or float(count) >= 1e15, text
