"""Coalitional and ordinal audits against the literature's theorems and plain itertools loops.

* Top trading cycles is group strategy-proof: no coalition can make every member weakly and one
  strictly better off (Roth 1982; Bird 1984).  Checked at every profile of 3 agents.
* Deferred acceptance (students propose): no coalition of proposers can all strictly gain (Dubins &
  Freedman 1981), at every profile of 3 students; the receiving side is manipulable (Roth 1982): in
  the standard 3 x 3 example below a woman gains by misreporting, and she and another woman both
  strictly gain.
* Borda over 3 alternatives: a profile where no voter alone manipulates but two voters together do,
  found and verified by a plain loop over joint lies.
* Second price: the bidding ring of the two highest bidders is a weak but not a strong manipulation,
  and a manipulation with transfers.
* Random serial dictatorship is SD-strategy-proof; probabilistic serial is weakly SD-strategy-proof
  but not SD-strategy-proof (Bogomolnaia & Moulin 2001): checked at every profile of 3 agents and 3
  objects against a brute force in exact fractions.
* ``rankings`` and ``weak_orders`` against m! and the ordered Bell numbers 1, 3, 13, 75, 541 (OEIS
  A000670).

The oracles (plain loops over coalitions and joint reports, the eating algorithm in fractions) are
written here, independent of dpgames.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

import dpgames
from dpgames.analysis.coalition_audit import coalition_audit
from dpgames.analysis.ordinal_audit import ordinal_audit
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.testing import assert_truthful
from dpgames.types import ordinal_utility, rankings, weak_orders
from dpgames.validation import ValidationError
from strategic_rules import deferred_acceptance

audit = dpgames.truthfulness_audit
THREE = list(itertools.permutations(range(3)))


# --- plain oracles
# ---------------------------------------------------------------------------------------
def manipulations(outcome, value, profile, coalitions, options):
    """Every (coalition, joint lie, gains) at ``profile``: ``value(i, t, o)`` of deterministic
    ``outcome``."""
    base = outcome(profile)
    for group in coalitions:
        for joint in itertools.product(*(options(i, profile[i]) for i in group)):
            moved = list(profile)
            for i, r in zip(group, joint):
                moved[i] = r
            if tuple(moved) == tuple(profile):
                continue
            o = outcome(tuple(moved))
            yield (
                group,
                joint,
                [value(i, profile[i], o) - value(i, profile[i], base) for i in group],
            )


def strong(g):
    return min(g) > 0


def weak(g):
    return min(g) >= 0 and max(g) > 0


def all_groups(n, k):
    return [c for s in range(1, k + 1) for c in itertools.combinations(range(n), s)]


# --- matching
# --------------------------------------------------------------------------------------------
def ttc(prefs):
    """Top trading cycles: agent i owns house i; each round every agent points to the owner of her
    best remaining house, and one cycle trades and leaves."""
    left, assigned = set(range(len(prefs))), {}
    while left:
        point = {i: next(h for h in prefs[i] if h in left) for i in left}
        path, i = [], min(left)
        while i not in path:
            path.append(i)
            i = point[i]
        for j in path[path.index(i) :]:
            assigned[j] = point[j]
            left.discard(j)
    return tuple(assigned[i] for i in range(len(prefs)))


def rank_value(i, t, o):
    return -t.index(o[i])


@pytest.mark.slow
def test_top_trading_cycles_is_group_strategy_proof():
    mech = CustomMechanism(ttc, lambda t, o, i: -t.index(o[i]), types=THREE, name="TTC")
    result = audit(mech, n=3, profiles="all", coalitions=3, manipulation="weak")
    assert (
        result.profiles == 216
        and result.coalitions == 7
        and result.is_truthful()
        and result.max_gain == 0.0
    )
    found = [
        g
        for p in itertools.product(THREE, repeat=3)
        for _, _, g in manipulations(ttc, rank_value, p, all_groups(3, 3), lambda i, t: THREE)
        if weak(g)
    ]
    assert found == []
    assert_truthful(mech, n=3, profiles="all", coalitions=3)


# the standard example (Roth 1982; Roth & Sotomayor 1990, ch. 4): men 0-2 rank women 0-2, women rank
# men
MEN = [(0, 1, 2), (1, 0, 2), (0, 1, 2)]
WOMEN = [(1, 0, 2), (0, 1, 2), (0, 1, 2)]


@pytest.mark.slow
def test_proposing_side_is_not_strongly_coalitionally_manipulable():
    def rule(reports):
        return deferred_acceptance(reports, WOMEN)

    mech = CustomMechanism(
        rule, lambda t, o, i: -t.index(o[i]), types=THREE, name="DA (students propose)"
    )
    result = audit(mech, n=3, profiles="all", coalitions=3, manipulation="strong")
    assert result.is_truthful() and result.profiles == 216
    every = [
        (p, c, j, g)
        for p in itertools.product(THREE, repeat=3)
        for c, j, g in manipulations(rule, rank_value, p, all_groups(3, 3), lambda i, t: THREE)
    ]
    assert not any(strong(g) for *_, g in every)
    # the weak notion: the audit's verdict is the brute force's, whichever it is
    best_weak = max((max(g) if min(g) >= 0 else min(g)) for *_, g in every)
    weak_audit = audit(mech, n=3, profiles="all", coalitions=3, manipulation="weak")
    assert weak_audit.max_gain == max(best_weak, 0) and weak_audit.margin == -best_weak


def two_sided():
    """Men (agents 0-2) and women (3-5) both report; men propose; the outcome is each agent's
    partner."""

    def rule(reports):
        men = deferred_acceptance(reports[:3], reports[3:])
        women = [men.index(w) for w in range(3)]
        return men + tuple(women)

    return rule, CustomMechanism(
        rule,
        lambda t, o, i: -t.index(o[i]),
        roles={"man": THREE, "woman": THREE},
        agent_roles=["man"] * 3 + ["woman"] * 3,
        name="DA (men propose)",
    )


def test_receiving_side_is_manipulable_in_the_standard_example():
    rule, mech = two_sided()
    profile = MEN + WOMEN
    # men-proposing DA: m0-w0, m1-w1, m2-w2; woman 0 (agent 3) ranks man 1 first but gets man 0
    assert rule(tuple(profile)) == (0, 1, 2, 0, 1, 2)

    def women_only(agent, t):
        return THREE if agent >= 3 else []

    alone = audit(mech, profile, lies=women_only)
    assert alone.max_gain == 1.0 and alone.worst_case["agent"] == 3  # she gets man 1: rank 1 -> 0
    pairs = coalition_audit(
        mech, profile, coalitions=[(3, 4), (3, 5), (4, 5)], manipulation="strong"
    )
    oracle = [
        (c, j, g)
        for c, j, g in manipulations(
            rule, rank_value, tuple(profile), [(3, 4), (3, 5), (4, 5)], lambda i, t: THREE
        )
        if strong(g)
    ]
    assert oracle and pairs.max_gain == max(min(g) for *_, g in oracle) == 1.0
    w = pairs.worst_case
    assert w["coalition"] == (3, 4) and w["gains"] == (1.0, 1.0)
    moved = list(profile)
    moved[3], moved[4] = w["lie"]
    # woman 0 gets man 1, woman 1 gets man 0: both their firsts
    assert rule(tuple(moved))[3:5] == (
        1,
        0,
    )
    # the men, facing the truthful women, cannot all strictly gain together (Dubins & Freedman 1981)
    men = coalition_audit(
        mech, profile, coalitions=3, manipulation="strong", lies=lambda i, t: THREE if i < 3 else []
    )
    assert men.is_truthful()


# --- voting
# ----------------------------------------------------------------------------------------------
def borda(reports):
    score = {a: sum(2 - r.index(a) for r in reports) for a in "abc"}
    return max("abc", key=lambda a: (score[a], -ord(a)))  # ties to the earlier letter


BORDA_PROFILE = (("a", "b", "c"), ("a", "b", "c"), ("b", "c", "a"), ("b", "c", "a"))


def test_borda_coalition_manipulation_where_no_single_voter_manipulates():
    mech = CustomMechanism(
        borda, ordinal_utility, types=rankings("abc"), anonymous=True, name="Borda"
    )
    R = rankings("abc")

    def value(i, t, o):
        return -t.index(o)

    singles = [
        g for *_, g in manipulations(borda, value, BORDA_PROFILE, all_groups(4, 1), lambda i, t: R)
    ]
    pairs = [
        g for *_, g in manipulations(borda, value, BORDA_PROFILE, all_groups(4, 2), lambda i, t: R)
    ]
    assert max(g[0] for g in singles) <= 0 and max(min(g) for g in pairs) == 1
    assert audit(mech, list(BORDA_PROFILE), coalitions=1).max_gain == 0.0
    result = audit(mech, list(BORDA_PROFILE), coalitions=2, manipulation="strong")
    assert result.max_gain == 1.0 and set(result.worst_case["coalition"]) == {0, 1}
    with pytest.raises(AssertionError, match=r"coalition \(0, 1\)"):
        assert_truthful(mech, list(BORDA_PROFILE), coalitions=2, manipulation="strong")
    # every profile of 3 voters: the audit's best weak score is the brute force's
    brute = max(
        (max(g) if min(g) >= 0 else min(g))
        for p in itertools.product(R, repeat=3)
        for *_, g in manipulations(borda, value, p, all_groups(3, 2), lambda i, t: R)
    )
    dom = audit(mech, n=3, profiles="all", coalitions=2)
    assert (
        dom.profiles == math.comb(8, 3) and dom.max_gain == max(brute, 0) and dom.margin == -brute
    )


# --- auctions with coalitions
# ----------------------------------------------------------------------------
def second_price_mechanism(values):
    def rule(bids):
        return max(range(len(bids)), key=lambda i: (bids[i], -i))

    def payments(bids):
        w = rule(bids)
        return [
            float(max(b for j, b in enumerate(bids) if j != w)) if i == w else 0.0
            for i in range(len(bids))
        ]

    return CustomMechanism(
        rule, lambda t, winner, i: float(t) if winner == i else 0.0, types=values, payments=payments
    )


def test_second_price_bidding_ring_weak_not_strong_and_with_transfers():
    mech = second_price_mechanism(range(6))
    profile = [5, 4, 1]
    assert audit(mech, profile).is_truthful()  # Vickrey: no single bidder gains
    weak_ring = audit(mech, profile, coalitions=2, manipulation="weak")
    # bidder 1 bids at most 1: bidder 0 pays 1, not 4 (gains 3), bidder 1 still loses (gains 0)
    assert weak_ring.max_gain == 3.0 and weak_ring.worst_case["coalition"] == (0, 1)
    assert weak_ring.worst_case["gains"] == (3.0, 0.0)
    # nobody else can gain
    assert audit(mech, profile, coalitions=2, manipulation="strong").is_truthful()
    assert audit(mech, profile, coalitions=2, manipulation="transfers").max_gain == 3.0


def test_coalition_arguments_are_checked():
    mech = second_price_mechanism(range(3))
    for coalitions, text in [
        (4, "larger than the 3 agents"),
        (0, ">= 1"),
        ([(0, 3)], "agent 3"),
        ([(0, 0)], "repeats"),
        ([()], "empty"),
        ([], "at least one"),
        ("ab", "size k"),
        ([5], "collection of agents"),
        (True, "size k"),
    ]:
        with pytest.raises(ValidationError, match=text) as info:
            audit(mech, [1, 2, 0], coalitions=coalitions)
        assert info.value.field == "coalitions"
    with pytest.raises(ValidationError, match="manipulation") as info:
        audit(mech, [1, 2, 0], coalitions=2, manipulation="pareto")
    big = CustomMechanism(lambda r: sum(r), lambda t, o: 0.0, types=range(40))
    with pytest.raises(ValidationError, match=r"joint lies.*5,000,000") as info:
        audit(big, n=5, profiles=2, coalitions=5)


@st.composite
def coalition_cases(draw):
    n = draw(st.integers(1, 3))
    m = draw(st.integers(1, 3))
    table = {p: draw(st.integers(0, 2)) for p in itertools.product(range(m), repeat=n)}
    u = {(i, t, o): draw(st.integers(-2, 2)) for i in range(n) for t in range(m) for o in range(3)}
    coalitions = draw(
        st.one_of(
            st.integers(-1, 4), st.lists(st.lists(st.integers(-1, 3), max_size=3), max_size=3)
        )
    )
    manipulation = draw(st.sampled_from(["weak", "strong", "transfers", "other"]))
    profile = tuple(draw(st.integers(0, m - 1)) for _ in range(n))
    return n, m, table, u, coalitions, manipulation, profile


SCORES = {"strong": min, "transfers": sum, "weak": lambda g: max(g) if min(g) >= 0 else min(g)}


@pytest.mark.slow
@settings(max_examples=80, deadline=None, derandomize=True)
@given(coalition_cases())
def test_random_coalitions_clean_error_or_brute_force(case):
    n, m, table, u, coalitions, manipulation, profile = case
    mech = CustomMechanism(table.__getitem__, lambda t, o, i: u[(i, t, o)], types=range(m))
    try:
        result = coalition_audit(mech, profile, coalitions=coalitions, manipulation=manipulation)
    except ValidationError as exc:
        assert exc.field in ("coalitions", "manipulation")
        return
    groups = (
        all_groups(n, coalitions)
        if isinstance(coalitions, int)
        else {tuple(sorted(c)) for c in coalitions}
    )
    scores = [
        SCORES[manipulation](g)
        for *_, g in manipulations(
            table.__getitem__, lambda i, t, o: u[(i, t, o)], profile, groups, lambda i, t: range(m)
        )
    ]
    best = max(scores, default=-math.inf)
    assert result.max_gain >= 0 and result.max_gain == max(best, 0) and result.margin == -best
    if scores:
        w = result.worst_case
        assert SCORES[manipulation](list(w["gains"])) == w["gain"] == best


# --- ordinal: random serial dictatorship and probabilistic serial
# ----------------------------------------
OBJECTS = (0, 1, 2)


def serial_dictatorship(prefs, order):
    taken, out = set(), [None] * len(prefs)
    for i in order:
        out[i] = next(o for o in prefs[i] if o not in taken)
        taken.add(out[i])
    return tuple(out)


def rsd_shares(prefs):
    """Exact marginals: share[i][o] = P(agent i gets o), over the n! orders."""
    orders = list(itertools.permutations(range(len(prefs))))
    share = [{o: Fraction(0) for o in OBJECTS} for _ in prefs]
    for order in orders:
        for i, o in enumerate(serial_dictatorship(prefs, order)):
            share[i][o] += Fraction(1, len(orders))
    return share


def rsd(prefs):
    law = {}
    for order in itertools.permutations(range(len(prefs))):
        a = serial_dictatorship(prefs, order)
        law[a] = law.get(a, 0.0) + 1 / math.factorial(len(prefs))
    return law


def ps_shares(prefs):
    """Probabilistic serial (Bogomolnaia & Moulin 2001): the eating algorithm at unit speed, in
    fractions."""
    left = {o: Fraction(1) for o in OBJECTS}
    share = [{o: Fraction(0) for o in OBJECTS} for _ in prefs]
    clock = Fraction(0)
    while clock < 1:
        eaters: dict = {}
        for i, p in enumerate(prefs):
            eaters.setdefault(next(o for o in p if left[o] > 0), []).append(i)
        step = min(min(left[o] / len(ids) for o, ids in eaters.items()), 1 - clock)
        for o, ids in eaters.items():
            for i in ids:
                share[i][o] += step
            left[o] -= step * len(ids)
        clock += step
    return share


def ps(prefs):
    """A law over assignments with PS's marginals (Birkhoff: peel off permutation matrices,
    exactly)."""
    matrix = [[s[o] for o in OBJECTS] for s in ps_shares(prefs)]
    law = {}
    while any(x > 0 for row in matrix for x in row):
        perm = next(
            p for p in itertools.permutations(OBJECTS) if all(matrix[i][p[i]] > 0 for i in range(3))
        )
        w = min(matrix[i][perm[i]] for i in range(3))
        for i in range(3):
            matrix[i][perm[i]] -= w
        law[perm] = law.get(perm, 0.0) + float(w)
    return law


def excesses(true, mine, lie):
    """P_lie(top k) - P_truth(top k) for k = 1..m: the lie is undominated iff one is positive."""
    return [
        sum(lie[o] for o in true[:k]) - sum(mine[o] for o in true[:k])
        for k in range(1, len(true) + 1)
    ]


def brute_sd(shares):
    """The largest excess over every profile, agent and lie, and whether some lie strictly dominates
    truth."""
    worst, dominated = Fraction(-1), False
    for p in itertools.product(THREE, repeat=3):
        s = shares(p)
        for i in range(3):
            for x in THREE:
                if x != p[i]:
                    moved = list(p)
                    moved[i] = x
                    e = excesses(p[i], s[i], shares(moved)[i])
                    worst = max(worst, max(e))
                    dominated |= min(e) >= 0 and max(e) > 0
    return worst, dominated


@pytest.mark.slow
def test_random_serial_dictatorship_is_sd_strategy_proof():
    mech = CustomMechanism(rsd, lambda t, o, i: ordinal_utility(t, o[i]), types=THREE, name="RSD")
    result = audit(mech, n=3, profiles="all", ordinal=True)
    worst, dominated = brute_sd(rsd_shares)
    assert worst == 0 and not dominated
    assert (
        result.is_truthful() and result.max_gain <= result.rounding_slack and result.profiles == 216
    )


@pytest.mark.slow
def test_probabilistic_serial_weakly_but_not_sd_strategy_proof():
    mech = CustomMechanism(ps, lambda t, o, i: ordinal_utility(t, o[i]), types=THREE, name="PS")
    worst, dominated = brute_sd(ps_shares)
    assert worst == Fraction(1, 12) and not dominated
    sd = audit(mech, n=3, profiles="all", ordinal=True)
    assert sd.max_gain == pytest.approx(1 / 12, abs=1e-12) and not sd.is_truthful()
    w = sd.worst_case
    moved = list(w["profile"])
    moved[w["agent"]] = w["lie"]
    assert max(
        excesses(w["true_type"], ps_shares(w["profile"])[w["agent"]], ps_shares(moved)[w["agent"]])
    ) == Fraction(1, 12)
    assert audit(mech, n=3, profiles="all", ordinal="weak").is_truthful()
    with pytest.raises(AssertionError, match="not truthful"):
        assert_truthful(mech, n=3, profiles="all", ordinal=True)

    # restricted to adjacent swaps of the true ranking, against the brute force over the same lies
    def swaps(agent, t):
        return [t[:k] + (t[k + 1], t[k]) + t[k + 2 :] for k in range(2)]

    adjacent = ordinal_audit(mech, n=3, profiles="all", lies=swaps)
    best = Fraction(-1)
    for p in itertools.product(THREE, repeat=3):
        for i in range(3):
            for x in swaps(i, p[i]):
                moved = list(p)
                moved[i] = x
                best = max(best, max(excesses(p[i], ps_shares(p)[i], ps_shares(moved)[i])))
    assert adjacent.max_gain == pytest.approx(float(best), abs=1e-12)


def test_ordinal_refuses_payments_and_bad_values():
    mech = second_price_mechanism(range(3))
    with pytest.raises(ValidationError, match="payments") as info:
        audit(mech, [1, 2, 0], ordinal=True)
    assert info.value.field == "ordinal"


# --- rankings and weak orders
# ----------------------------------------------------------------------------
def test_rankings_and_weak_orders_counts_and_shapes():
    for m, fubini in zip(range(1, 6), [1, 3, 13, 75, 541]):
        items = list(range(m))
        ranks, orders = rankings(items), weak_orders(items)
        assert len(ranks) == len(set(ranks)) == math.factorial(m) and ranks == sorted(ranks)
        assert len(orders) == len(set(orders)) == fubini
        for order in orders:
            flat = [a for tier in order for a in tier]
            assert sorted(flat) == items and all(tier for tier in order)
    assert weak_orders("ab") == [(("a", "b"),), (("a",), ("b",)), (("b",), ("a",))]
    assert (
        ordinal_utility(("b", "a", "c"), "c") == -2
        and ordinal_utility((("a", "b"), ("c",)), "c") == -1
    )
    for bad in ([], [1, 1], [[1]], 5, range(11)):
        with pytest.raises(ValidationError) as info:
            rankings(bad)
        assert info.value.field == "alternatives"
    with pytest.raises(ValidationError):
        weak_orders(range(9))
    with pytest.raises(ValidationError):
        ordinal_utility(("a",), "z")
    with pytest.raises(ValidationError, match="type_spaces="):
        CustomMechanism(borda, ordinal_utility, types=[rankings("ab"), rankings("abc")])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.one_of(
        st.lists(st.one_of(st.integers(0, 3), st.sampled_from("xy"), st.just([0])), max_size=4),
        st.integers(),
        st.text(max_size=4),
    )
)
def test_random_alternatives_clean_error_or_orders(alternatives):
    try:
        ranks, orders = rankings(alternatives), weak_orders(alternatives)
    except ValidationError as exc:
        assert exc.field == "alternatives"
        return
    m = len(list(alternatives))
    assert len(ranks) == math.factorial(m) and all(
        sorted(map(str, r)) == sorted(map(str, alternatives)) for r in ranks
    )
    assert len(orders) == [1, 1, 3, 13, 75, 541][m]
    mech = CustomMechanism(lambda r: r[0][0], ordinal_utility, types=ranks)  # a dictator
    assert audit(mech, n=1, profiles="all", ordinal=True).is_truthful()


@pytest.mark.slow
@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    st.integers(1, 2),
    st.sampled_from(["ab", "abc"]),
    st.data(),
    st.sampled_from([True, "weak", "sd", "strong", 1, None]),
)
def test_random_lotteries_and_ordinal_values_clean_error_or_brute_force(
    n, alternatives, data, ordinal
):
    R = rankings(alternatives)
    weights = st.lists(
        st.integers(0, 3), min_size=len(alternatives), max_size=len(alternatives)
    ).filter(any)
    table = {p: data.draw(weights) for p in itertools.product(R, repeat=n)}

    def rule(reports):
        w = table[tuple(reports)]
        return {a: x / sum(w) for a, x in zip(alternatives, w) if x}

    mech = CustomMechanism(rule, ordinal_utility, types=R)
    try:
        result = audit(mech, n=n, profiles="all", ordinal=ordinal)
    except ValidationError as exc:
        assert exc.field == "ordinal"
        return
    assert ordinal in (True, "weak", "sd")

    def lottery(p):
        w = table[tuple(p)]
        return {a: Fraction(x, sum(w)) for a, x in zip(alternatives, w)}

    best = Fraction(-2)
    for p in itertools.product(R, repeat=n):
        for i in range(n):
            for x in R:
                if x != p[i]:
                    moved = list(p)
                    moved[i] = x
                    e = excesses(p[i], lottery(p), lottery(moved))
                    score = max(e) if ordinal != "weak" or min(e) >= 0 else min(e)
                    best = max(best, score)
    assert result.max_gain >= 0 and result.max_gain == pytest.approx(
        max(float(best), 0.0), abs=1e-12
    )
    assert result.margin == pytest.approx(-float(best), abs=1e-12)
