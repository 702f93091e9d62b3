"""The privacy-budget page under AppTest: its composition table against the Accountant called
directly and against the composition theorems written out here, its exact privacy loss against
audit_finite and a brute-force loss by hand, its CSV download, and clean errors on bad inputs."""

from __future__ import annotations

import io
import math
import re

import numpy as np
import pandas as pd
import pytest

from app_session import ROOT, AppTest, downloaded, start
from dpgames.privacy import (
    Accountant,
    ExponentialMechanism,
    KaryResponse,
    LaplaceMechanism,
    audit_finite,
)

PAGE = "privacy_budget"


def open_page() -> AppTest:
    """The page through the app's navigation once app.py registers it, else the page file alone."""
    if f"{PAGE}.py" in (ROOT / "app.py").read_text():
        return start(PAGE)
    at = AppTest.from_file(str(ROOT / "dpgames_app" / f"{PAGE}.py"), default_timeout=120)
    at.run()
    return at


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metric(at: AppTest, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r}; have {[m.label for m in at.metric]}"
    return found[0]


def set_mechanism(at: AppTest, kind: str) -> AppTest:
    at.sidebar.selectbox(key="pb.kind").set_value(kind).run()
    return at


@pytest.fixture(scope="module")
def page() -> AppTest:
    return open_page()


def test_composition_table_is_the_accountants_and_the_theorems(page):
    clean(page)
    frame = page.dataframe[0].value
    eps, delta = 0.1, 1e-6
    g = LaplaceMechanism(eps).guarantee
    for row in frame.itertuples(index=False):
        k = int(row[0])
        totals = Accountant().spend("round", g, k).totals(delta)
        assert [row[1], row[2], row[3], row[4]] == [
            totals[m].epsilon for m in ("basic", "advanced", "zcdp", "rdp")
        ]
        # the theorems by hand: basic k eps (Thm 3.16); advanced (Thm 3.20) with delta' = delta
        assert row[1] == pytest.approx(k * eps, rel=1e-12)
        assert row[2] == pytest.approx(
            math.sqrt(2 * k * math.log(1 / delta)) * eps + k * eps * math.expm1(eps), rel=1e-12
        )
        assert row[5] == min(row[1:5])
    assert list(frame["rounds k"])[0] == 1 and list(frame["rounds k"])[-1] == 10_000
    csv = pd.read_csv(io.StringIO(downloaded(page, "composition (CSV)")))
    # the CSV holds 15 significant digits (no float noise such as 0.30000000000000004): within 5e-15
    # relative
    np.testing.assert_allclose(csv.to_numpy(float), frame.to_numpy(float), rtol=5e-15)
    assert page.latex and len(page.latex) == 4


def test_exponential_mechanism_loss_is_the_audits_and_the_brute_force_one():
    at = set_mechanism(open_page(), "Exponential mechanism")
    clean(at)
    s = np.array([3.0, 1.0, 2.0, 0.5])
    moved = s + np.array([-1.0, 1.0, 1.0, 1.0])
    em = ExponentialMechanism(0.1)
    audit = audit_finite(em.distribution, [(s, moved)], epsilon=0.1)
    shown = float(metric(at, "largest privacy loss (exact)"))
    assert shown == pytest.approx(audit.epsilon, rel=1e-5)
    # by hand: p_i proportional to exp(eps s_i / 2)
    p = np.exp(0.05 * s) / np.exp(0.05 * s).sum()
    q = np.exp(0.05 * moved) / np.exp(0.05 * moved).sum()
    assert shown == pytest.approx(np.abs(np.log(p / q)).max(), rel=1e-5)
    assert shown <= 0.1
    table = pd.read_csv(io.StringIO(downloaded(at, "privacy loss (CSV)")))
    np.testing.assert_allclose(table["P(o)"], p, rtol=1e-12)
    np.testing.assert_allclose(table["privacy loss ln P(o)/Q(o)"], np.log(p / q), rtol=1e-9)


def test_randomized_response_loss_is_exactly_epsilon():
    at = set_mechanism(open_page(), "Randomized response")
    clean(at)
    assert float(metric(at, "largest privacy loss (exact)")) == pytest.approx(0.1, rel=1e-5)
    p = KaryResponse(2, 0.1).output_distribution(0).probabilities
    assert p[0] / p[1] == pytest.approx(math.exp(0.1))


@pytest.mark.parametrize("kind", ["Gaussian", "Sparse vector"])
def test_other_mechanisms_show_without_error(kind):
    at = set_mechanism(open_page(), kind)
    clean(at)
    frame = at.dataframe[0].value
    assert (frame["best"] > 0).all() and np.isfinite(frame["best"]).all()


def test_bad_inputs_show_a_clear_error():
    at = open_page()
    at.sidebar.number_input(key="pb.eps").set_value(0.0).run()
    assert at.error and "epsilon" in at.error[0].value and not at.exception
    at = set_mechanism(open_page(), "Exponential mechanism")
    at.text_input(key="pb.scores.Exponential mechanism").set_value("1, x, 3").run()
    assert at.error and "scores" in at.error[0].value and not at.exception
    at.text_input(key="pb.scores.Exponential mechanism").set_value("1").run()
    assert at.error and "2 to 50" in at.error[0].value


def test_epsilon_tiles_have_no_trailing_zero_decimal(page):
    """Default page: 10,000 rounds of 0.1-DP Laplace, so basic composition gives k eps = 1,000
    exactly (shown "1,000", not "1,000.0"); every tile reads back as the table's last row to 6
    digits."""
    clean(page)
    assert metric(page, "basic epsilon") == "1,000"
    last = page.dataframe[0].value.iloc[-1]
    tiles = {
        m.label.removesuffix(" epsilon"): m.value
        for m in page.metric
        if m.label.endswith(" epsilon")
    }
    assert len(tiles) == 4
    for column, shown in tiles.items():
        if shown == "no bound":
            continue
        assert not re.search(r"\.\d*0$", shown), shown
        assert float(shown.replace(",", "")) == pytest.approx(float(last[column]), rel=1e-5)
