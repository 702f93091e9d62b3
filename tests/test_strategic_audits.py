"""Named margins, restricted deviations, per-agent type spaces and roles, and gain curves of the
custom audits.

Oracles: plain loops written here over the rule's own dict (every agent, every profile listed by
itertools, every allowed lie; interim gains with product weights); hand-derived figures (a one-agent
dictator: every lie loses at least 1); a loop of audits for the gain curve.  Every new argument also
has a hypothesis test whose oracle is "a clean ValidationError, or an audit whose invariants hold"
(``max_gain >= 0``, ``margin = -(best lie's gain)``, both equal to the brute force).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dpgames
from dpgames.analysis.curves import gain_curve
from dpgames.analysis.custom_audit import custom_truthfulness_audit, dominant_audit, ex_post_audit
from dpgames.analysis.sampled_audit import bayesian_audit, sampled_audit
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.testing import assert_truthful
from dpgames.validation import ValidationError

audit = dpgames.truthfulness_audit


def distance(t, outcome):
    return -abs(t - outcome)


def law_dict(rule, reports):
    out = rule(tuple(reports))
    return dict(out) if isinstance(out, dict) else {out: 1.0}


def eu(rule, utility, agent, t, reports, payments=None):
    """Expected utility summed outcome by outcome (``utility(t, o, agent)``)."""
    total = sum(p * utility(t, o, agent) for o, p in law_dict(rule, reports).items())
    return total - (payments(tuple(reports))[agent] if payments else 0.0)


def best_lie(rule, utility, spaces, profiles, lies, payments=None):
    """The best lie's gain over ``profiles`` (each agent, each allowed lie): ``-inf`` when none."""
    best = -math.inf
    for profile in profiles:
        for i, t in enumerate(profile):
            truth = eu(rule, utility, i, t, profile, payments)
            for x in spaces[i]:
                if x == t or x not in lies(i, t):
                    continue
                moved = list(profile)
                moved[i] = x
                best = max(best, eu(rule, utility, i, t, moved, payments) - truth)
    return best


def every(i, t):
    return range(1000)


# --- 1. named margins
# ------------------------------------------------------------------------------------
def dictator(reports):
    return reports[0]


def test_margin_of_a_one_agent_dictator_every_audit():
    # the outcome is her report and u = -|t - o| on {0, 1, 2}: each lie loses |t - x| >= 1, the best
    # loses exactly 1, so max_gain = 0 and margin = 1 in every notion (ex post, dominant, Bayesian,
    # sampled)
    mech = CustomMechanism(dictator, distance, types=range(3))
    results = [
        audit(mech, [1]),
        audit(mech, [0]),
        audit(mech, [1], true_types="all"),
        audit(mech, n=1, profiles="all"),
        audit(mech, n=1, prior={0: 0.2, 1: 0.5, 2: 0.3}),
        audit(lambda r, rng: r[0], [2], utility=distance, types=range(3), samples=50),
    ]
    for result in results:
        assert result.max_gain == 0.0 and result.margin == 1.0, result
        assert result.worst_case["gain"] == -1.0 and result.is_truthful()
        assert "margin 1" in result.describe()


def test_margin_zero_on_ties_negative_when_a_lie_gains_and_inf_without_lies():
    median = CustomMechanism(
        lambda r: sorted(r)[len(r) // 2], distance, types=range(5), anonymous=True
    )
    tie = audit(median, [1, 3, 4])  # agent 0 reporting 0 leaves the median at 3: a tie
    assert tie.max_gain == 0.0 and tie.margin == 0.0
    mean = CustomMechanism(
        lambda r: round(sum(r) / len(r)), distance, types=range(11), anonymous=True
    )
    gain = audit(mean, [3, 7, 5, 1, 9])  # agent 0 (3) reporting 0: mean 4.4 -> 4, from 5: gains 1
    assert gain.max_gain == 1.0 and gain.margin == -1.0
    none = audit(mean, [3, 7, 5, 1, 9], lies=[])
    assert (
        none.max_gain == 0.0
        and none.margin == math.inf
        and none.worst_case == {}
        and none.is_truthful()
    )
    assert "no lie to try" in none.describe()


# --- 2. restricted deviations
# ----------------------------------------------------------------------------
GRID = [0, 1, 2, 3, 4]


def first_price(reports):
    """The highest bid wins (ties to the lower index) and pays it."""
    return max(range(len(reports)), key=lambda i: (reports[i], -i))


def auction():
    # quasi-linear first price: outcome = winner, utility = value if she wins, payment = her bid if
    # she wins
    def utility(t, winner, agent):
        return float(t) if winner == agent else 0.0

    def payments(reports):
        w = first_price(reports)
        return [float(reports[i]) if i == w else 0.0 for i in range(len(reports))]

    return CustomMechanism(first_price, utility, types=GRID, payments=payments), utility, payments


def shading(agent, value):
    return [b for b in GRID if b <= value]


def test_lies_function_shading_only_matches_brute_force_in_every_notion():
    mech, utility, payments = auction()
    for profile in [(3, 1), (4, 4), (2, 3)]:
        got = audit(mech, list(profile), lies=shading)
        want = best_lie(
            first_price, utility, [GRID] * 2, [profile], lambda i, t: shading(i, t), payments
        )
        assert got.max_gain == pytest.approx(max(want, 0.0), abs=1e-12)
        assert got.margin == pytest.approx(-want, abs=1e-12)
    dom = audit(mech, n=2, profiles="all", lies=shading)
    want = best_lie(
        first_price, utility, [GRID] * 2, itertools.product(GRID, repeat=2), shading, payments
    )
    # shading pays in first price
    assert dom.max_gain == pytest.approx(want, abs=1e-12) and want > 0
    # overbidding only never pays in first price: the restricted audit says so, the unrestricted
    # does not
    over = audit(mech, n=2, profiles="all", lies=lambda i, v: [b for b in GRID if b >= v])
    assert over.is_truthful() and not dom.is_truthful()
    # Bayesian: interim gains over the other's uniform value, against a plain weighted loop
    bayes = audit(mech, n=2, prior={v: 0.2 for v in GRID}, lies=shading)
    best = -math.inf
    for t in GRID:
        for x in shading(0, t):
            if x != t:
                gain = sum(
                    0.2
                    * (
                        eu(first_price, utility, 0, t, (x, o), payments)
                        - eu(first_price, utility, 0, t, (t, o), payments)
                    )
                    for o in GRID
                )
                best = max(best, gain)
    assert bayes.max_gain == pytest.approx(max(best, 0.0), abs=1e-12)
    assert bayes.margin == pytest.approx(-best, abs=1e-12)


def test_lies_set_and_the_entry_points_accept_it():
    mean = CustomMechanism(
        lambda r: round(sum(r) / len(r)), distance, types=range(11), anonymous=True
    )
    # only the extreme reports 0 and 10: agent 0 (3) reporting 0 gains 1 (see above), as the brute
    # force says
    got = audit(mean, [3, 7, 5, 1, 9], lies={0, 10})
    want = best_lie(
        lambda r: round(sum(r) / len(r)),
        lambda t, o, i: -abs(t - o),
        [range(11)] * 5,
        [(3, 7, 5, 1, 9)],
        lambda i, t: {0, 10},
    )
    assert got.max_gain == want == 1.0
    assert "(0, 10)" in got.describe()
    with pytest.raises(AssertionError, match="gains 1 by reporting 0"):
        assert_truthful(mean, [3, 7, 5, 1, 9], lies=[0, 10])
    assert_truthful(mean, [3, 7, 5, 1, 9], lies=[5])  # nobody gains by reporting 5


def test_agent_dependent_lies_on_an_anonymous_mechanism_audit_every_agent_they_concern():
    rule = lambda r: round(sum(r) / len(r))  # noqa: E731
    anon = CustomMechanism(rule, distance, types=range(6), anonymous=True)
    plain = CustomMechanism(rule, distance, types=range(6))

    def lies(agent, t):  # only agent 2 may lie, and only downwards
        return range(t) if agent == 2 else []

    for profile in [(1, 1, 1), (4, 0, 4), (2, 5, 5)]:
        a, p = audit(anon, list(profile), lies=lies), audit(plain, list(profile), lies=lies)
        assert a.max_gain == p.max_gain and a.margin == p.margin
    da = dominant_audit(anon, 3, lies=lies)
    dp = dominant_audit(plain, 3, lies=lies)
    want = best_lie(
        rule,
        lambda t, o, i: -abs(t - o),
        [range(6)] * 3,
        itertools.product(range(6), repeat=3),
        lies,
    )
    assert da.max_gain == dp.max_gain == pytest.approx(max(want, 0.0))
    assert da.margin == pytest.approx(-want) and da.worst_case["agent"] == 2


def test_bad_lies_are_clean_errors():
    mean = CustomMechanism(lambda r: round(sum(r) / len(r)), distance, types=range(5))
    cases = [
        ({7}, "in no type space"),
        (5, "collection of reports"),
        ("ab", "collection of reports"),
        (lambda i, t: [9], "not in her type space"),
        (lambda i, t: 3, "must return a collection"),
        (lambda i, t: 1 / 0, "ZeroDivisionError"),
        (lambda i, t: [[1]], "not in her type space"),
    ]
    for lies, text in cases:
        with pytest.raises(ValidationError, match=text) as info:
            audit(mean, [1, 2, 3], lies=lies)
        assert info.value.field == "lies"


# --- 3. per-agent type spaces and roles
# ------------------------------------------------------------------
def test_a_list_of_type_spaces_is_never_read_as_labels():
    for types in ([range(3), range(2)], [[0, 1], [0, 1, 2]], [{1}, {2}]):
        with pytest.raises(ValidationError, match="type_spaces=") as info:
            CustomMechanism(dictator, distance, types=types)
        assert info.value.field == "types"


def two_spaces(anonymous=False):
    # agent 0 reports in {0, 1, 2}, agent 1 in {10, 20}: the outcome is the sum mod 4 of 0/1/2 and
    # 1/2
    def rule(r):
        return (r[0] + r[1] // 10) % 4

    def utility(t, o, agent):
        return -abs((t if agent == 0 else t // 10) - o)

    return rule, utility, CustomMechanism(rule, utility, type_spaces=[range(3), (10, 20)])


def test_type_spaces_fix_n_and_each_agent_reports_in_her_own():
    rule, utility, mech = two_spaces()
    assert mech.n_agents == 2 and mech.type_space(1) == (10, 20) and mech.types == (0, 1, 2, 10, 20)
    got = audit(mech, n=2, profiles="all")
    spaces = [range(3), (10, 20)]
    want = best_lie(rule, utility, spaces, itertools.product(*spaces), lambda i, t: spaces[i])
    assert (
        got.profiles == 6
        and got.max_gain == pytest.approx(max(want, 0))
        and got.margin == pytest.approx(-want)
    )
    ex = audit(mech, [2, 10], true_types="all")
    # outside her space
    assert np.isneginf(ex.gains[0][:, 3:]).all() and np.isneginf(ex.gains[1][:, :3]).all()
    prior = bayesian_audit(mech, [{0: 0.5, 2: 0.5}, {10: 0.25, 20: 0.75}], 2)
    best = -math.inf
    for i, (_mine, other) in enumerate(
        [({0: 0.5, 2: 0.5}, {10: 0.25, 20: 0.75}), ({10: 0.25, 20: 0.75}, {0: 0.5, 2: 0.5})]
    ):
        for t in spaces[i]:
            for x in spaces[i]:
                if x != t:

                    def at(report, o):
                        return (report, o) if i == 0 else (o, report)

                    best = max(
                        best,
                        sum(
                            q
                            * (
                                eu(rule, utility, i, t, at(x, o))
                                - eu(rule, utility, i, t, at(t, o))
                            )
                            for o, q in other.items()
                        ),
                    )
    assert prior.max_gain == pytest.approx(max(best, 0.0), abs=1e-12)
    assert prior.margin == pytest.approx(-best, abs=1e-12)
    for bad, field, text in [
        ([1, 10, 10], "profile", "has 2"),
        ([10, 1], "profile", "not in the type space"),
        ([3, 10], "profile", "not in the type space"),
    ]:
        with pytest.raises(ValidationError, match=text) as info:
            audit(mech, bad)
        assert info.value.field == field
    with pytest.raises(ValidationError, match="has 2") as info:
        audit(mech, n=3, profiles="all")
    with pytest.raises(ValidationError, match="positive probability|not in"):
        bayesian_audit(mech, {0: 0.5, 10: 0.5}, 2)


def test_roles_with_per_role_utilities_and_anonymity_within_a_role():
    # two buyers (values 0..3) and two sellers (costs 0..3); the price is the mean of the medians of
    # the roles' reports, rounded; buyers want it low, sellers high, with a per-role utility
    def rule(r):
        buyers, sellers = sorted(r[:2]), sorted(r[2:])
        return round((sum(buyers) + sum(sellers)) / 4)

    utilities = {"buyer": lambda t, price: t - price, "seller": lambda t, price: price - t}
    kw = dict(
        roles={"buyer": range(4), "seller": range(4)},
        agent_roles=["buyer", "buyer", "seller", "seller"],
    )
    anon = CustomMechanism(rule, utilities, anonymous=True, **kw)
    plain = CustomMechanism(rule, utilities, **kw)
    a, p = audit(anon, n=4, profiles="all"), audit(plain, n=4, profiles="all")
    assert a.profiles == math.comb(5, 2) ** 2 == 100 and p.profiles == 4**4
    util = lambda t, o, i: utilities["buyer" if i < 2 else "seller"](t, o)  # noqa: E731
    want = best_lie(rule, util, [range(4)] * 4, itertools.product(range(4), repeat=4), every)
    assert a.max_gain == p.max_gain == pytest.approx(want) and a.margin == p.margin
    # anonymity across roles is not claimed: swapping a buyer and a seller changes the price's
    # meaning
    assert anon._key(np.array([0, 1, 2, 3])) != anon._key(np.array([2, 1, 0, 3]))
    assert anon._key(np.array([0, 1, 2, 3])) == anon._key(np.array([1, 0, 3, 2]))
    for kwargs, field, text in [
        (dict(roles={"b": range(2)}, agent_roles=["b", "x"]), "agent_roles", "unknown role 'x'"),
        (dict(roles={"b": range(2)}), "agent_roles", "give both"),
        (dict(roles={"b": range(2)}, agent_roles="bb"), "agent_roles", "sequence of role names"),
        (dict(types=range(2), roles={"b": range(2)}, agent_roles=["b"]), "types", "exactly one"),
        (dict(type_spaces=[]), "type_spaces", "non-empty"),
    ]:
        with pytest.raises(ValidationError, match=text) as info:
            CustomMechanism(rule, utilities if "roles" in kwargs else distance, **kwargs)
        assert info.value.field == field
    with pytest.raises(ValidationError, match="missing") as info:
        CustomMechanism(rule, {"buyer": utilities["buyer"]}, **kw)
    assert info.value.field == "utility"


def test_privacy_interface_with_per_agent_type_spaces():
    rule, utility, mech = two_spaces()
    pairs = list(mech.neighbouring_reports(n=2))
    listed = set()
    for p in itertools.product(range(3), (10, 20)):
        for q in itertools.product(range(3), (10, 20)):
            if sum(a != b for a, b in zip(p, q)) == 1:
                listed.add(frozenset([p, q]))
    assert {frozenset(pair) for pair in pairs} == listed and len(pairs) == len(listed) == 9
    assert mech.neighbouring_reports(n=2).count == 9
    assert mech.output_distribution((2, 20)) == {0: 1.0}
    starts = list(mech.neighbouring_reports(profiles=[(1, 10)]))
    assert sorted(b for _, b in starts) == [(0, 10), (1, 20), (2, 10)]
    # anonymous within roles: multisets per role, each unordered pair once
    roles = CustomMechanism(
        lambda r: sum(r),
        lambda t, o: -abs(t - o),
        roles={"a": range(3), "b": range(2)},
        agent_roles=["a", "a", "b"],
        anonymous=True,
    )
    got = list(roles.neighbouring_reports(n=3))

    def canon(p):
        return tuple(sorted(p[:2])) + p[2:]

    want = set()
    for p in itertools.product(range(3), range(3), range(2)):
        for q in itertools.product(range(3), range(3), range(2)):
            if sum(a != b for a, b in zip(p, q)) == 1 and canon(p) != canon(q):
                want.add(frozenset([canon(p), canon(q)]))
    assert {frozenset(pair) for pair in got} == want and len(got) == len(
        want
    ) == roles.neighbouring_reports(n=3).count


# --- 6. gain curves
# --------------------------------------------------------------------------------------
def mixed(q):
    """The rounded mean with probability 1 - q, the median with probability q."""

    def rule(r):
        mean, median = round(sum(r) / len(r)), sorted(r)[len(r) // 2]
        return {mean: 1 - q, median: q} if mean != median else {mean: 1.0}

    return CustomMechanism(rule, distance, types=range(6), anonymous=True)


def test_gain_curve_equals_a_loop_of_audits():
    values = np.linspace(0.0, 1.0, 6)
    curve = gain_curve(mixed, values, parameter="q", n=3, profiles="all")
    loop = [audit(mixed(q), n=3, profiles="all") for q in values]
    np.testing.assert_array_equal(curve.values, values)
    np.testing.assert_array_equal(curve.max_gain, [a.max_gain for a in loop])
    np.testing.assert_array_equal(curve.margin, [a.margin for a in loop])
    assert (
        curve.truthful.tolist() == [a.is_truthful() for a in loop]
        and curve.truthful[-1]
        and not curve.truthful[0]
    )
    assert (
        list(curve.worst_cases) == [a.worst_case for a in loop] and curve.audit == "DominantAudit"
    )
    assert len(curve.rows()) == 6 and "q" in curve.rows()[0] and "max_gain" in curve.describe()
    # a profile and coalitions pass through
    at = gain_curve(mixed, [0.0, 1.0], profile=[0, 2, 5], coalitions=2)
    assert at.audit == "CoalitionAudit"
    for bad, field in [
        (dict(build=3, values=[1]), "build"),
        (dict(build=mixed, values=[]), "values"),
        (dict(build=mixed, values=5), "values"),
        (dict(build=lambda v: 1 / 0, values=[1]), "build"),
        (dict(build=lambda v: 3, values=[1]), "build"),
    ]:
        with pytest.raises(ValidationError) as info:
            gain_curve(**bad, n=3, profiles="all")
        assert info.value.field == field


# --- hypothesis: every new argument
# ----------------------------------------------------------------------
@st.composite
def table_mechanisms(draw):
    """A random deterministic rule on per-agent type spaces (as a table), a utility table per
    agent."""
    n = draw(st.integers(1, 3))
    sizes = [draw(st.integers(1, 3)) for _ in range(n)]
    spaces = [tuple(range(10 * i, 10 * i + s)) for i, s in enumerate(sizes)]
    table = {p: draw(st.integers(0, 2)) for p in itertools.product(*spaces)}
    u = {(i, t, o): draw(st.integers(-3, 3)) for i in range(n) for t in spaces[i] for o in range(3)}
    return n, spaces, table, u


def lies_strategy(spaces):
    everything = sorted({t for s in spaces for t in s})
    bad = st.sampled_from([{99}, 7, None])
    subset = st.sets(st.sampled_from(everything + [99]))
    return st.one_of(bad, subset, subset.map(lambda s: lambda i, t: s))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True)
@given(table_mechanisms(), st.data())
def test_random_spaces_and_lies_clean_error_or_brute_force(case, data):
    n, spaces, table, u = case
    rule = table.__getitem__
    utility = lambda t, o, i: u[(i, t, o)]  # noqa: E731
    lies = data.draw(lies_strategy(spaces))
    mech = CustomMechanism(lambda r: table[tuple(r)], utility, type_spaces=spaces)
    allowed = (
        (lambda i, t: spaces[i])
        if lies is None
        else (lies if callable(lies) else (lambda i, t: lies))
    )
    profile = tuple(data.draw(st.sampled_from(s)) for s in spaces)
    try:
        got = audit(mech, list(profile), lies=lies)
        dom = audit(mech, n=n, profiles="all", lies=lies)
    except ValidationError as exc:
        assert exc.field == "lies"
        return
    for result, profiles in [(got, [profile]), (dom, itertools.product(*spaces))]:
        want = best_lie(lambda r: rule(tuple(r)), utility, spaces, profiles, allowed)
        assert result.max_gain >= 0.0
        assert result.max_gain == max(want, 0.0)
        assert result.margin == -want
        assert result.worst_case == {} if want == -math.inf else result.worst_case["gain"] == want


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.data())
def test_random_type_space_arguments_clean_error_or_consistent(data):
    kind = data.draw(st.sampled_from(["types", "type_spaces", "roles"]))
    label = st.one_of(
        st.integers(0, 4), st.sampled_from(["a", "b"]), st.just([1]), st.just(range(2))
    )
    space = st.lists(label, max_size=3)
    kwargs: dict = {}
    if kind == "types":
        kwargs["types"] = data.draw(st.one_of(space, st.lists(space, max_size=2)))
    elif kind == "type_spaces":
        kwargs["type_spaces"] = data.draw(st.one_of(st.lists(space, max_size=3), st.integers()))
    else:
        kwargs["roles"] = data.draw(st.dictionaries(st.sampled_from(["r", "s"]), space, max_size=2))
        kwargs["agent_roles"] = data.draw(st.lists(st.sampled_from(["r", "s", "t"]), max_size=3))
    try:
        mech = CustomMechanism(lambda r: 0, lambda t, o: 0.0, **kwargs)
    except ValidationError:
        return
    n = mech.n_agents or 2
    spaces = [mech.type_space(i) for i in range(n)]
    assert all(spaces) and set(mech.types) == {t for s in spaces for t in s}
    result = audit(mech, n=n, profiles="all")
    assert result.max_gain == 0.0 and result.profiles == math.prod(len(s) for s in spaces)
    assert result.margin == (math.inf if all(len(s) == 1 for s in spaces) else 0.0)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    st.one_of(st.lists(st.floats(allow_nan=True), max_size=4), st.integers(), st.text(max_size=3)),
    st.sampled_from(["q", 3]),
)
def test_random_gain_curve_arguments_clean_error_or_a_table(values, parameter):
    try:
        curve = gain_curve(lambda v: mixed(0.5), values, parameter=parameter, profile=[0, 1, 5])
    except ValidationError as exc:
        assert exc.field in ("values", "parameter")
        return
    assert curve.values.size == len(values) and (curve.max_gain >= 0).all()
    assert (curve.margin == -np.array([w["gain"] for w in curve.worst_cases])).all()


def test_the_entry_point_refuses_mixed_notions_cleanly():
    mech = CustomMechanism(dictator, distance, types=range(3))
    for kwargs, field in [
        (dict(coalitions=1, ordinal=True), "ordinal"),
        (dict(coalitions=1, prior={0: 1}), "coalitions"),
        (dict(ordinal=True, true_types="all"), "ordinal"),
        (dict(ordinal="maybe"), "ordinal"),
        (dict(coalitions=1, profiles="search", n=1), "profiles"),
    ]:
        with pytest.raises(ValidationError) as info:
            custom_truthfulness_audit(mech, [1], **kwargs)
        assert info.value.field == field
    assert isinstance(ex_post_audit(mech, [1], lies=[0]).margin, float)
    assert (
        sampled_audit(
            CustomMechanism(lambda r, rng: r[0], distance, types=range(3)), [1], samples=5, lies=[]
        ).margin
        == math.inf
    )


def test_prior_per_role_and_sampled_lies_against_plain_loops():
    # a buyer (values 0..2) and a seller (costs 0..2); price = round of the mean report, trade
    # always
    def rule(r):
        return round((r[0] + r[1]) / 2)

    utilities = {"buyer": lambda t, price: t - price, "seller": lambda t, price: price - t}
    mech = CustomMechanism(
        rule,
        utilities,
        roles={"buyer": range(3), "seller": range(3)},
        agent_roles=["buyer", "seller"],
    )
    prior = {"buyer": {0: 0.5, 2: 0.5}, "seller": {1: 1.0}}
    got = bayesian_audit(mech, prior, 2)
    want = -math.inf
    for i, sign in [(0, 1), (1, -1)]:
        mine, other = (
            (prior["buyer"], prior["seller"]) if i == 0 else (prior["seller"], prior["buyer"])
        )
        for t in range(3):
            for x in range(3):
                if x != t:

                    def price(report, o):
                        return rule((report, o) if i == 0 else (o, report))

                    want = max(
                        want, sum(q * sign * (price(t, o) - price(x, o)) for o, q in other.items())
                    )
    assert got.max_gain == pytest.approx(max(want, 0.0)) and got.margin == pytest.approx(-want)
    # a deterministic simulator: the sampled audit's gains are exact, restricted to the lies given
    simulator = CustomMechanism(
        lambda r, rng: rule(r),
        utilities,
        roles={"buyer": range(3), "seller": range(3)},
        agent_roles=["buyer", "seller"],
    )
    sampled = sampled_audit(simulator, [2, 0], samples=10, lies=lambda i, t: [1])
    loop = max(
        utilities["buyer"](2, rule((1, 0))) - utilities["buyer"](2, rule((2, 0))),
        utilities["seller"](0, rule((2, 1))) - utilities["seller"](0, rule((2, 0))),
    )
    assert sampled.max_gain == max(loop, 0.0) and sampled.margin == -loop
