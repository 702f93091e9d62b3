"""Guarantees as values: the neighbouring relation (composition under one relation, conversion by
group privacy, refusal), RDP curves as tagged data (evaluation against the formulas written out
here), equality, repr and the to_dict / from_dict round trip (also through strict JSON)."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames.privacy import (
    Accountant,
    ExponentialMechanism,
    GaussianMechanism,
    KaryResponse,
    LaplaceMechanism,
    Neighbouring,
    PrivacyGuarantee,
    RDPCurve,
)
from dpgames.privacy.conversions import ALPHAS, rdp_values_to_dp
from dpgames.validation import ValidationError

ADD_REMOVE, REPLACE = Neighbouring.ADD_REMOVE_ONE, Neighbouring.REPLACE_ONE


# --- RDP curves
# -------------------------------------------------------------------------------------


def test_curves_evaluate_their_formulas():
    a = np.array([1.001, 1.5, 2.0, 10.0, 500.0])
    eps, rho = 0.7, 0.3
    np.testing.assert_array_equal(RDPCurve.zcdp(rho)(a), a * rho)
    np.testing.assert_array_equal(RDPCurve.pure(eps)(a), np.minimum(eps, a * eps * eps / 2))
    # Mironov 2017 Prop. 6, written out term by term
    lap = [
        min(
            eps,
            math.log(
                x / (2 * x - 1) * math.exp((x - 1) * eps)
                + (x - 1) / (2 * x - 1) * math.exp(-x * eps)
            )
            / (x - 1),
        )
        for x in a
    ]
    np.testing.assert_allclose(RDPCurve.laplace(eps)(a), lap, rtol=1e-12)


def test_a_table_bounds_every_order_by_the_next_tabled_order():
    pairs = [(4.0, 0.5), (2.0, 0.2), (8.0, 0.4), (16.0, math.inf)]
    curve = RDPCurve.table(pairs)
    orders = np.array([1.1, 2.0, 2.5, 4.0, 6.0, 8.0, 9.0, 16.0, 17.0])
    # brute force: the smallest bound at a tabled order >= alpha (Renyi divergence grows with the
    # order)
    expected = [min([v for o, v in pairs if o >= x], default=math.inf) for x in orders]
    np.testing.assert_array_equal(curve(orders), expected)
    assert curve.pairs == ((2.0, 0.2), (4.0, 0.5), (8.0, 0.4), (16.0, math.inf))


@pytest.mark.parametrize(
    "bad", [[], [(1.0, 0.1)], [(2.0, -1.0)], [(2.0, 0.1), (2.0, 0.2)], [(2.0,)], 5, [("x", 1)]]
)
def test_bad_tables_are_refused(bad):
    with pytest.raises(ValidationError):
        RDPCurve.table(bad)


def test_a_tabled_laplace_curve_gives_the_same_total_as_the_formula():
    """The accountant only sees curve values at its orders: a table of the formula at those orders
    must give exactly the formula's total."""
    formula = RDPCurve.laplace(0.3)
    table = RDPCurve.table(list(zip(ALPHAS.tolist(), formula(ALPHAS).tolist())))
    a = Accountant().spend("lap", PrivacyGuarantee(0.3, rdp=formula), 50)
    b = Accountant().spend("lap", PrivacyGuarantee(0.3, rdp=table), 50)
    assert a.rdp_total(1e-6).epsilon == b.rdp_total(1e-6).epsilon
    assert a.rdp_total(1e-6).epsilon == rdp_values_to_dp(50 * formula(ALPHAS), 1e-6)


# --- equality, repr, serialisation
# --------------------------------------------------------------------


def guarantees():
    return [
        LaplaceMechanism(0.5).guarantee,
        GaussianMechanism(2.0).guarantee,
        GaussianMechanism.analytic(1.0, 1e-6).guarantee,
        ExponentialMechanism(0.3).guarantee,
        KaryResponse(4, 1.0).guarantee,
        PrivacyGuarantee(1.0, 1e-6, ADD_REMOVE.for_group(3), 0.2),
        PrivacyGuarantee(2.0, rdp=RDPCurve.table([(2.0, 0.1), (3.0, math.inf)])),
        PrivacyGuarantee.from_zcdp(0.1).at_delta(1e-6),
    ]


@pytest.mark.parametrize("g", guarantees(), ids=str)
def test_round_trip_equality_and_repr(g):
    data = json.loads(json.dumps(g.to_dict(), allow_nan=False))  # strict JSON: no inf, no NaN
    assert PrivacyGuarantee.from_dict(data) == g
    namespace = {
        "PrivacyGuarantee": PrivacyGuarantee,
        "Neighbouring": Neighbouring,
        "RDPCurve": RDPCurve,
        "inf": math.inf,
    }
    assert eval(repr(g), namespace) == g
    assert hash(PrivacyGuarantee.from_dict(data)) == hash(g)


def test_equality_sees_every_field():
    g = LaplaceMechanism(0.5).guarantee
    assert g == LaplaceMechanism(0.5).guarantee
    assert g != LaplaceMechanism(0.6).guarantee  # eps and curve differ
    assert g != PrivacyGuarantee(0.5, neighbouring=g.neighbouring)  # no curve
    assert g != PrivacyGuarantee(0.5, neighbouring=ADD_REMOVE, rdp=g.rdp)


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        {"delta": 0.1},
        {"epsilon": 1.0, "colour": "red"},
        {"epsilon": -1.0},
        {"epsilon": 1.0, "neighbouring": {"kind": "swap"}},
        {"epsilon": 1.0, "rdp": {"kind": "laplace", "parameter": "x"}},
        {"epsilon": 1.0, "rdp": {"kind": "table", "pairs": 3}},
    ],
)
def test_bad_dicts_are_refused_cleanly(bad):
    with pytest.raises(ValidationError):
        PrivacyGuarantee.from_dict(bad)


finite = st.floats(0, 50, allow_nan=False)
relations = st.builds(
    Neighbouring,
    st.sampled_from(["replace", "add-remove"]),
    st.integers(1, 5),
    st.sampled_from(["", "one bid changes", "x"]),
)
curves = st.one_of(
    st.none(),
    finite.map(RDPCurve.laplace),
    finite.map(RDPCurve.zcdp),
    finite.map(RDPCurve.pure),
    st.lists(
        st.tuples(st.floats(1.01, 1e4), st.one_of(finite, st.just(math.inf))),
        min_size=1,
        max_size=5,
        unique_by=lambda p: p[0],
    ).map(RDPCurve.table),
)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    eps=st.one_of(finite, st.just(math.inf)),
    delta=st.floats(0, 1),
    relation=relations,
    rho=st.one_of(st.none(), finite),
    rdp=curves,
)
def test_any_guarantee_round_trips_and_converts_the_same(eps, delta, relation, rho, rdp):
    g = PrivacyGuarantee(eps, delta, relation, rho, rdp)
    back = PrivacyGuarantee.from_dict(json.loads(json.dumps(g.to_dict(), allow_nan=False)))
    assert back == g and str(back) == str(g)
    assert back.at_delta(1e-6) == g.at_delta(1e-6)


# --- the neighbouring relation
# ------------------------------------------------------------------------


def test_a_relation_is_a_value_or_a_kinds_name_never_free_text():
    g = PrivacyGuarantee(1.0, neighbouring=REPLACE.described("one bid changes"))
    assert str(g) == "1-DP (replace one individual: one bid changes)"
    assert PrivacyGuarantee(1.0, neighbouring="add-remove").neighbouring == ADD_REMOVE
    assert PrivacyGuarantee(1.0).under("replace").neighbouring.same_relation(REPLACE)
    for text in (3, "one bid changes", "add or remove"):
        with pytest.raises(ValidationError, match="neighbouring"):
            PrivacyGuarantee(1.0, neighbouring=text)


def test_add_remove_converts_to_replace_by_group_privacy():
    """Dwork & Roth Thm 2.2 for k = 2: (2 eps, 2 e^eps delta); Bun & Steinke Prop. 1.9: 4 rho."""
    g = PrivacyGuarantee(0.5, 1e-6, ADD_REMOVE, rho=0.1, rdp=RDPCurve.zcdp(0.1))
    r = g.under(REPLACE)
    assert r.epsilon == 1.0 and r.delta == pytest.approx(2 * math.exp(0.5) * 1e-6, rel=1e-12)
    assert r.rho == pytest.approx(0.4) and r.rdp is None
    assert r.neighbouring.same_relation(REPLACE) and "Thm 2.2" in r.neighbouring.detail
    acc = Accountant(neighbouring=REPLACE).spend(
        "count", PrivacyGuarantee(0.5, neighbouring=ADD_REMOVE), 3
    )
    assert acc.basic_total().epsilon == pytest.approx(3.0)
    assert acc.basic_total().neighbouring.same_relation(REPLACE)


def test_replace_one_is_refused_by_an_add_remove_ledger():
    acc = Accountant().spend("count", PrivacyGuarantee(0.5, neighbouring=ADD_REMOVE))
    assert acc.neighbouring == ADD_REMOVE
    with pytest.raises(ValidationError, match="add or remove") as info:
        acc.spend("median", PrivacyGuarantee(0.5))
    assert info.value.field == "neighbouring"
    with pytest.raises(ValidationError, match="budget"):
        Accountant(budget=PrivacyGuarantee(1.0), neighbouring=ADD_REMOVE)


def test_a_first_replace_event_fixes_the_relation_for_the_next():
    acc = Accountant().spend("median", PrivacyGuarantee(0.5))
    acc = acc.spend("count", PrivacyGuarantee(0.5, neighbouring=ADD_REMOVE))
    assert acc.neighbouring == REPLACE and acc.basic_total().epsilon == pytest.approx(1.5)


def test_groups_of_the_same_kind_convert_and_compose():
    g3 = PrivacyGuarantee(0.3).for_group(3)
    assert g3.neighbouring == REPLACE.for_group(3)
    r = g3.under(REPLACE)  # a bound for groups of up to 3 holds for one individual as it is
    assert (r.epsilon, r.delta) == (g3.epsilon, 0.0) and r.neighbouring.same_relation(REPLACE)
    # up: group privacy
    assert PrivacyGuarantee(0.3).under(REPLACE.for_group(3)).epsilon == g3.epsilon
    acc = Accountant().spend("q", PrivacyGuarantee(0.2), 2)
    total = acc.group_total(2)
    assert total.epsilon == pytest.approx(0.8) and total.neighbouring.same_relation(
        REPLACE.for_group(2)
    )


# --- Jupyter display
# ----------------------------------------------------------------------------------


class _Cells(__import__("html.parser").parser.HTMLParser):
    """The text of every table cell, and whether an <svg> appears."""

    def __init__(self, html: str):
        super().__init__()
        self.cells, self.svg, self._in = [], False, False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self._in = tag == "td"
        self.svg |= tag == "svg"

    def handle_data(self, data):
        if self._in:
            self.cells.append(data)
            self._in = False


def test_html_shows_the_figures():
    from dpgames.privacy import FiniteDistribution, audit_finite

    g = PrivacyGuarantee(0.5, 1e-6, REPLACE.described("one bid changes"), rho=0.2)
    cells = _Cells(g._repr_html_()).cells
    assert cells == [
        "epsilon",
        "0.5",
        "delta",
        "1e-06",
        "rho (zCDP)",
        "0.2",
        "neighbours",
        "replace one individual",
        "assuming",
        "one bid changes",
    ]
    d = FiniteDistribution.from_probabilities([1, 3, 0], outcomes=["a", "b", "c"])
    shown = _Cells(d._repr_html_())
    assert shown.svg and shown.cells == [
        "outcomes",
        "3",
        "support (probability > 0)",
        "2",
        "most likely outcome",
        "b",
        "its probability",
        "0.75",
    ]
    audit = audit_finite(KaryResponse(2, 1.0), [(0, 1)], epsilon=0.5)
    cells = _Cells(audit._repr_html_()).cells
    assert cells[:2] == ["epsilon (exact)", "1"] and "0.287649" in cells


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    eps=finite,
    delta=st.floats(0, 1e-3),
    own=relations,
    target=relations,
    rho=st.one_of(st.none(), finite),
)
def test_restating_under_another_relation_is_refused_or_a_valid_group_bound(
    eps, delta, own, target, rho
):
    g = PrivacyGuarantee(eps, delta, own, rho)
    try:
        r = g.under(target)
    except ValidationError as error:
        # the one refusal: replace -> add/remove (no theorem)
        assert (
            error.field == "neighbouring" and own.kind == "replace" and target.kind == "add-remove"
        )
        return
    assert r.neighbouring.same_relation(target)
    if own.same_relation(target):
        assert r == g
        return
    # group privacy for k = ceil(distance / own group), Dwork & Roth Thm 2.2: (k eps, k e^{(k-1)
    # eps} delta)
    k = -(-target.group * (2 if own.kind != target.kind else 1) // own.group)
    assert r.epsilon == pytest.approx(k * eps, rel=1e-12)
    assert r.delta == pytest.approx(
        min(1.0, k * math.exp((k - 1) * eps) * delta) if delta else 0.0, rel=1e-9
    )
    assert (r.rho is None) == (rho is None) and (rho is None or r.rho == pytest.approx(k * k * rho))


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    pairs=st.lists(
        st.tuples(st.floats(-5, 1e4), st.one_of(st.floats(-1, 50), st.just(math.inf))), max_size=6
    ),
    orders=st.lists(st.floats(1.0001, 2e4), min_size=1, max_size=8),
)
def test_any_table_is_refused_cleanly_or_a_non_decreasing_curve(pairs, orders):
    try:
        curve = RDPCurve.table(pairs)
    except ValidationError:
        return
    a = np.sort(np.array(orders))
    values = curve(a)
    assert np.all(values[1:] >= values[:-1]) and np.all(values >= 0)
    for x, v in zip(a, values):  # the smallest bound at a tabled order >= x
        assert v == min([b for o, b in curve.pairs if o >= x], default=math.inf)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    data=st.dictionaries(
        st.sampled_from(["epsilon", "delta", "neighbouring", "rho", "rdp", "other"]),
        st.one_of(
            st.none(),
            st.floats(allow_nan=True),
            st.text(max_size=3),
            st.integers(-2, 2),
            st.dictionaries(
                st.sampled_from(["kind", "group", "detail", "parameter", "pairs"]),
                st.one_of(
                    st.sampled_from(["replace", "laplace", "table"]),
                    st.integers(-1, 3),
                    st.floats(),
                ),
                max_size=3,
            ),
        ),
        max_size=5,
    )
)
def test_any_dict_reads_cleanly_or_round_trips(data):
    try:
        g = PrivacyGuarantee.from_dict(data)
    except ValidationError:
        return
    assert PrivacyGuarantee.from_dict(g.to_dict()) == g
