"""The "General large games" and "Markets for privacy" pages each have a collapsed "The mechanism
and its guarantees" section with typeset formulas, and the pages still run cleanly with it."""

from pathlib import Path

import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
APP = Path(__file__).resolve().parents[1] / "dpgames_app"


@pytest.mark.parametrize(
    "page, formulas",
    [
        (
            "anonymous_games.py",
            [r"\tilde y_t", r"\lVert y_t - y_t' \rVert_1 \le 2", r"e^{\varepsilon} - 1"],
        ),
        (
            "privacy_market.py",
            [r"\mathrm{Lap}(1/\varepsilon)", r"\ln\frac{1}{\beta}", r"\varepsilon\, c_{(m+1)}"],
        ),
    ],
)
def test_theory_expander_with_formulas(page, formulas):
    at = AppTest.from_file(str(APP / page), default_timeout=120)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception] + [
        e.value for e in at.error
    ]
    [section] = [e for e in at.expander if e.label == "The mechanism and its guarantees"]
    shown = [x.value for x in section.latex]
    assert len(shown) >= 4
    for formula in formulas:
        assert any(formula in text for text in shown), (formula, shown)
