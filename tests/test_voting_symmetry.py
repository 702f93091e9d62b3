"""Voting audits at scale: neutrality (one profile per orbit under relabelling the alternatives),
the batched ex-post audit, and SVVAMP's coalitional-manipulation question by multisets of ballots.

Oracles: a brute force calling the rule directly at every profile, agent and lie; orbits found by
applying every relabelling to every multiset; SVVAMP's own answers; the definitions of the notions
themselves.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dpgames import CustomMechanism, truthfulness_audit
from dpgames.analysis.custom_audit import dominant_audit, ex_post_audit
from dpgames.types import coalitions_preferring, ordinal_utility, rankings, weak_orders
from dpgames.validation import ValidationError


# --- rules, as a user writes them
# ------------------------------------------------------------------------
def _scores(profile):
    m = len(profile[0])
    score = [0] * m
    for ballot in profile:
        for place, a in enumerate(ballot):
            score[a] += m - 1 - place
    return score


def borda_fair(profile):
    """Borda, ties broken uniformly at random: neutral (and anonymous)."""
    score = _scores(profile)
    top = [a for a, s in enumerate(score) if s == max(score)]
    return {a: 1 / len(top) for a in top}


def plurality_fair(profile):
    """Plurality, ties broken uniformly at random: neutral."""
    votes = [0] * len(profile[0])
    for ballot in profile:
        votes[ballot[0]] += 1
    top = [a for a, v in enumerate(votes) if v == max(votes)]
    return {a: 1 / len(top) for a in top}


def borda_lowest(profile):
    """Borda, ties to the lowest index (as SVVAMP): anonymous but not neutral."""
    score = _scores(profile)
    return max(range(len(score)), key=lambda a: (score[a], -a))


def dictator_first(profile):
    """Voter 0's top choice: neutral, not anonymous, strategy-proof."""
    return profile[0][0]


def expected_rank(law, ranking):
    return sum(q * -ranking.index(a) for a, q in law.items())


def as_law(out):
    return out if isinstance(out, dict) else {out: 1.0}


def brute_max_gain(rule, m, n):
    """The best lie's gain over every profile of ``n`` voters, agent and lie: the rule called at
    every profile, each voter's expected rank of the winner tabled, then every unilateral change
    compared."""
    types = rankings(range(m))
    T = len(types)
    laws = np.zeros((T,) * n + (m,))
    for p in itertools.product(range(T), repeat=n):
        for a, q in as_law(rule([types[j] for j in p])).items():
            laws[p + (a,)] += q
    value = laws @ np.array([[-t.index(a) for a in range(m)] for t in types]).T  # [..., true type]
    best = -np.inf
    for i, t in itertools.product(range(n), range(T)):
        lies = np.take(value[..., t], range(T), axis=i)  # agent i reports x (axis i), true type t
        truth = np.take(value[..., t], [t], axis=i)
        gains = np.delete(lies - truth, t, axis=i)
        if gains.size:
            best = max(best, float(gains.max()))
    return best


# --- neutrality
# ------------------------------------------------------------------------------------------
CASES = [
    (rule, m, n)
    for rule in (borda_fair, plurality_fair, dictator_first)
    for m, n in ((3, 1), (3, 2), (3, 3), (3, 4), (4, 2))
] + [(borda_fair, 4, 3)]


@pytest.mark.parametrize("rule, m, n", CASES)
def test_neutral_audit_equals_the_undeclared_one_and_brute_force(rule, m, n):
    oracle = brute_max_gain(rule, m, n)
    found = {}
    for anonymous in (False, True) if rule is not dictator_first else (False,):
        for neutral in (False, True):
            mech = CustomMechanism(
                rule,
                ordinal_utility,
                types=rankings(range(m)),
                anonymous=anonymous,
                neutral=neutral,
            )
            audit = dominant_audit(mech, n)
            assert abs(-audit.margin - oracle) <= 1e-12
            assert audit.max_gain == pytest.approx(max(oracle, 0.0), abs=1e-12)
            found[anonymous, neutral] = (audit, mech.rule_calls)
            w = audit.worst_case
            if w:  # the witness is a real lie of that gain, whichever profile of its orbit it names
                moved = list(w["profile"])
                moved[w["agent"]] = w["lie"]
                gain = expected_rank(as_law(rule(moved)), w["true_type"]) - expected_rank(
                    as_law(rule(list(w["profile"]))), w["true_type"]
                )
                assert gain == pytest.approx(w["gain"], abs=1e-12)
        plain, sym = found[anonymous, False], found[anonymous, True]
        assert (plain[0].is_truthful(), plain[0].profiles) == (
            sym[0].is_truthful(),
            sym[0].profiles,
        )
        if n >= 3:  # one line per orbit: fewer rule calls
            assert sym[1] < plain[1]
    if rule is dictator_first:
        assert oracle <= 0  # a dictatorship is strategy-proof
    elif (m, n) == (4, 3):
        assert oracle > 0  # Gibbard-Satterthwaite: manipulable


@pytest.mark.parametrize("anonymous", [False, True])
def test_neutral_with_restricted_lies_enumerates_every_profile(anonymous):
    # one lie for everyone: not closed under relabelling, so no orbit may stand for another
    types = rankings(range(3))
    only = [types[5]]
    audits = [
        dominant_audit(
            CustomMechanism(
                borda_fair,
                ordinal_utility,
                types=types,
                anonymous=anonymous,
                neutral=neutral,
            ),
            3,
            lies=only,
        )
        for neutral in (False, True)
    ]
    assert audits[0].max_gain == audits[1].max_gain and audits[0].margin == audits[1].margin
    # the oracle: the best gain of reporting types[5], by direct calls
    best = -np.inf
    for profile in itertools.product(types, repeat=3):
        for i in range(3):
            if profile[i] != only[0]:
                moved = list(profile)
                moved[i] = only[0]
                best = max(
                    best,
                    expected_rank(borda_fair(moved), profile[i])
                    - expected_rank(borda_fair(list(profile)), profile[i]),
                )
    assert -audits[1].margin == pytest.approx(best, abs=1e-12)


def orbits_by_brute_force(m, k):
    """Orbits of multisets of ``k`` rankings under relabelling, each as the set of its sorted
    profiles."""
    types = rankings(range(m))
    index = {t: j for j, t in enumerate(types)}
    orbits = set()
    for combo in itertools.combinations_with_replacement(range(len(types)), k):
        orbit = frozenset(
            tuple(sorted(index[tuple(s[a] for a in types[t])] for t in combo))
            for s in itertools.permutations(range(m))
        )
        orbits.add(orbit)
    return orbits


@pytest.mark.parametrize("m, n", [(3, 1), (3, 2), (3, 4), (3, 6), (4, 3), (4, 4)])
def test_orbit_representatives_one_per_orbit(m, n):
    mech = CustomMechanism(
        borda_fair, ordinal_utility, types=rankings(range(m)), anonymous=True, neutral=True
    )
    reps = [tuple(r) for r in mech.orbit_others(n).tolist()]
    orbits = orbits_by_brute_force(m, n - 1)
    assert len(reps) == len(orbits)
    assert {next(o for o in orbits if r in o) for r in reps} == orbits  # one in each
    assert reps == sorted(reps)  # in the order of the enumeration


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_non_neutral_tie_breaking_is_caught_naming_the_counterexample(n):
    mech = CustomMechanism(
        borda_lowest, ordinal_utility, types=rankings(range(3)), anonymous=True, neutral=True
    )
    with pytest.raises(ValidationError, match=r"neutral.*declared True.*relabelling.*renamed"):
        truthfulness_audit(mech, n=n, profiles="all")


def test_non_neutral_utility_and_payments_are_caught():
    favour_zero = CustomMechanism(
        borda_fair,
        lambda t, o: ordinal_utility(t, o) + (o == 0),
        types=rankings(range(3)),
        neutral=True,
    )
    with pytest.raises(ValidationError, match=r"utility is not invariant under relabelling"):
        truthfulness_audit(favour_zero, n=3, profiles="all")
    taxed = CustomMechanism(
        borda_fair,
        ordinal_utility,
        types=rankings(range(3)),
        payments=lambda r: [float(b[0] == 0) for b in r],  # pay for ranking alternative 0 first
        neutral=True,
    )
    with pytest.raises(ValidationError, match=r"payments change"):
        truthfulness_audit(taxed, n=3, profiles="all")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"types": range(3)}, "every strict ranking"),
        ({"types": rankings(range(3))[:4]}, "every strict ranking"),
        ({"types": rankings(range(7))}, "at most 6 alternatives"),
        ({"type_spaces": [rankings(range(3))] * 2}, "one type space of rankings"),
        ({"types": rankings(range(3)), "neutral": "yes"}, "True or False"),
    ],
)
def test_neutral_declaration_refused_where_it_cannot_hold(kwargs, match):
    kwargs = {"neutral": True, **kwargs}
    with pytest.raises(ValidationError, match=match):
        CustomMechanism(borda_fair, ordinal_utility, **kwargs)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=st.integers(1, 4),
    keep=st.integers(1, 24),
    n=st.integers(1, 3),
    anonymous=st.booleans(),
    neutral=st.sampled_from([True, False, 1, None, "x"]),
)
def test_neutral_argument_is_a_clean_error_or_an_exact_audit(m, keep, n, anonymous, neutral):
    types = rankings(range(m))[:keep]
    try:
        mech = CustomMechanism(
            plurality_fair, ordinal_utility, types=types, anonymous=anonymous, neutral=neutral
        )
    except ValidationError as exc:
        assert exc.field == "neutral"
        return
    assert neutral in (True, False, 1) and (not neutral or len(types) == math.factorial(m))
    undeclared = CustomMechanism(plurality_fair, ordinal_utility, types=types)
    a, b = dominant_audit(mech, n), dominant_audit(undeclared, n)
    assert (a.max_gain, a.margin, a.profiles >= 1) == (b.max_gain, b.margin, True)


# --- the batched ex-post audit
# -------------------------------------------------------------------------
def borda_batch(reports):
    k, n, m = reports.shape
    points = np.broadcast_to(np.arange(m - 1, -1, -1), reports.shape)
    rows = np.broadcast_to(np.arange(k)[:, None, None], reports.shape)
    scores = np.bincount((rows * m + reports).ravel(), weights=points.ravel(), minlength=k * m)
    return scores.reshape(k, m).argmax(axis=1)


def adjacent_swaps(agent, t):
    return [t[:j] + (t[j + 1], t[j]) + t[j + 2 :] for j in range(len(t) - 1)]


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(1, 25),
    anonymous=st.booleans(),
    restricted=st.booleans(),
    by_agent=st.booleans(),
)
def test_batched_ex_post_gains_equal_direct_calls(seed, n, anonymous, restricted, by_agent):
    types = rankings(range(4))
    rng = np.random.default_rng(seed)
    profile = [types[j] for j in rng.integers(24, size=n)]
    weight = rng.uniform(0.5, 2.0, size=n).round(2)

    def utility(t, o, i):
        return weight[i] * -t.index(o)

    if by_agent:
        anonymous = False  # an agent-dependent utility is not anonymous
    u = utility if by_agent else ordinal_utility
    lies = adjacent_swaps if restricted else None
    mech = CustomMechanism(borda_batch, u, types=types, anonymous=anonymous, batched=True)
    audit = ex_post_audit(mech, profile, lies=lies)
    truth = borda_lowest(profile)
    for k, i in enumerate(audit.agents.tolist()):
        tried = adjacent_swaps(i, profile[i]) if restricted else types
        for x, lie in enumerate(types):
            if lie == profile[i]:
                assert audit.gains[k, x] == 0.0
            elif lie not in tried:
                assert audit.gains[k, x] == -np.inf
            else:
                moved = profile[:i] + [lie] + profile[i + 1 :]
                args = (i,) if by_agent else ()
                gain = u(profile[i], borda_lowest(moved), *args) - u(profile[i], truth, *args)
                assert audit.gains[k, x] == pytest.approx(gain, abs=1e-12)
    # one call of the rule for the truthful profile and every audited lie
    assert audit.laws == 1 + int(np.isfinite(audit.gains).sum() - audit.agents.size)


# --- coalitions: joint reports as multisets, SVVAMP's CM
# ---------------------------------------------------
def brute_coalition_best(rule, utility, types, profile, groups, manipulation, pay=None):
    """The best score of any joint lie of any group, every member's report from ``types`` (the
    product); ``pay(reports)``: the payments, if any."""
    pay = pay or (lambda reports: [0.0] * len(reports))
    truth, paid = rule(profile), pay(profile)
    best = -np.inf
    for group in groups:
        for joint in itertools.product(types, repeat=len(group)):
            if all(profile[i] == r for i, r in zip(group, joint)):
                continue
            moved = list(profile)
            for i, r in zip(group, joint):
                moved[i] = r
            out, moved_paid = rule(moved), pay(moved)
            g = np.array(
                [
                    (utility(profile[i], out) - moved_paid[i])
                    - (utility(profile[i], truth) - paid[i])
                    for i in group
                ]
            )
            score = {
                "strong": g.min(),
                "transfers": g.sum(),
                "weak": g.max() if g.min() >= -1e-12 else g.min(),
            }[manipulation]
            best = max(best, score)
    return best


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(2, 4),
    m=st.integers(2, 4),
    k=st.integers(1, 4),
    manipulation=st.sampled_from(["strong", "weak", "transfers"]),
    batched=st.booleans(),
    payments=st.booleans(),
)
def test_joint_lies_equal_the_product_enumeration(seed, n, m, k, manipulation, batched, payments):
    rng = np.random.default_rng(seed)
    outcomes = 3
    table = rng.integers(outcomes, size=(m,) * n)
    for p in itertools.product(range(m), repeat=n):  # anonymous: the outcome of the sorted profile
        table[p] = table[tuple(sorted(p))]
    u = rng.normal(size=(m, outcomes)).round(3)

    def plain(reports):
        return int(table[tuple(reports)])

    def batch(reports):
        return table[tuple(reports.T)]

    def utility(t, o):
        return float(u[t, o])

    fee = rng.normal(size=(m, outcomes)).round(2)  # paid by a reporter of t when o is chosen

    def pay(reports):
        return [float(fee[r, plain(reports)]) for r in reports]

    def pay_batch(reports):
        return fee[reports, batch(reports)[:, None]]

    charge = (pay_batch if batched else pay) if payments else None
    mech = CustomMechanism(
        batch if batched else plain,
        utility,
        types=range(m),
        anonymous=True,
        batched=batched,
        payments=charge,
    )
    profile = [int(x) for x in rng.integers(m, size=n)]
    k = min(k, n)
    audit = truthfulness_audit(mech, profile, coalitions=k, manipulation=manipulation)
    groups = [c for s in range(1, k + 1) for c in itertools.combinations(range(n), s)]
    oracle = brute_coalition_best(
        plain, utility, range(m), profile, groups, manipulation, pay if payments else None
    )
    assert -audit.margin == pytest.approx(oracle, abs=1e-12)
    assert audit.max_gain == pytest.approx(max(oracle, 0.0), abs=1e-12)
    w = audit.worst_case
    if w:  # the witness: its members' gains at the named joint lie
        moved = list(profile)
        for i, r in zip(w["coalition"], w["lie"]):
            moved[i] = r
        assert moved != profile
        before, after = (
            pay(profile) if payments else [0.0] * n,
            pay(moved) if payments else [0.0] * n,
        )
        gains = [
            (utility(profile[i], plain(moved)) - after[i])
            - (utility(profile[i], plain(profile)) - before[i])
            for i in w["coalition"]
        ]
        assert gains == pytest.approx(list(w["gains"]), abs=1e-12)


def plurality_lowest(profile):
    votes = [0] * len(profile[0])
    for ballot in profile:
        votes[ballot[0]] += 1
    return max(range(len(votes)), key=lambda a: (votes[a], -a))


def plurality_batch(reports):
    k, n, m = reports.shape
    votes = np.zeros((k, m))
    np.add.at(votes, (np.repeat(np.arange(k), n), reports[:, :, 0].ravel()), 1)
    return votes.argmax(axis=1)


@pytest.mark.parametrize(
    "name, plain, batch, option",
    [
        ("RuleBorda", borda_lowest, borda_batch, {"cm_option": "exact"}),
        ("RulePlurality", plurality_lowest, plurality_batch, {}),
    ],
)
def test_coalitional_manipulation_equals_svvamps_for_every_coalition_size(
    name, plain, batch, option
):
    svvamp = pytest.importorskip("svvamp")
    m, types = 4, rankings(range(4))
    rng = np.random.default_rng(7)
    verdicts = set()
    for n, count in ((5, 6), (9, 3)):
        for _ in range(count):
            rk = np.array([rng.permutation(m) for _ in range(n)])
            profile = [tuple(int(c) for c in row) for row in rk]
            result = getattr(svvamp, name)(**option)(svvamp.Profile(preferences_rk=rk))
            assert plain(profile) == result.w_
            groups = coalitions_preferring(profile, result.w_)
            for rule, batched in ((plain, False), (batch, True)):
                if n == 9 and not batched:
                    continue  # hundreds of thousands of joint lies: the batched rule's job
                mech = CustomMechanism(
                    rule, ordinal_utility, types=types, anonymous=True, batched=batched
                )
                audit = truthfulness_audit(mech, profile, coalitions=groups, manipulation="strong")
                assert (not audit.is_truthful()) is bool(result.is_cm_), (profile, groups)
            verdicts.add(bool(result.is_cm_))
    assert verdicts == {True, False}


def test_large_coalitions_refused_with_the_count():
    types = rankings(range(4))
    mech = CustomMechanism(borda_batch, ordinal_utility, types=types, anonymous=True, batched=True)
    profile = [types[0]] * 12
    with pytest.raises(ValidationError, match=r"28,048,799 joint lies"):
        truthfulness_audit(mech, profile, coalitions=[range(9)], manipulation="strong")


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 4),
    picks=st.lists(st.integers(0, 10**6), min_size=1, max_size=6),
    winner=st.integers(0, 4),
    weak=st.booleans(),
)
def test_coalitions_preferring_is_its_definition(m, picks, winner, weak):
    space = weak_orders(range(m)) if weak else rankings(range(m))
    profile = [space[p % len(space)] for p in picks]
    if winner >= m:
        with pytest.raises(ValidationError, match="winner"):
            coalitions_preferring(profile, winner)
        return
    groups = coalitions_preferring(profile, winner)
    expected = []
    for c in range(m):
        group = tuple(
            i
            for i, order in enumerate(profile)
            if ordinal_utility(order, c) > ordinal_utility(order, winner)
        )
        if group and group not in expected:
            expected.append(group)
    assert sorted(groups) == sorted(expected)


@pytest.mark.parametrize("profile", [[], "abc", [3], None])
def test_coalitions_preferring_bad_profile(profile):
    with pytest.raises(ValidationError, match="profile"):
        coalitions_preferring(profile, 0)


def test_neutrality_checked_with_a_vectorized_utility():
    def rank(types, outcomes):  # a (types x outcomes) table of minus the outcome's place
        return np.array([[-t.index(o) for o in outcomes] for t in types])

    types = rankings(range(3))
    fair = CustomMechanism(
        borda_fair, rank, types=types, anonymous=True, neutral=True, vectorized=True
    )
    plain = CustomMechanism(borda_fair, ordinal_utility, types=types, anonymous=True)
    assert dominant_audit(fair, 4).max_gain == dominant_audit(plain, 4).max_gain
    tilted = CustomMechanism(
        borda_fair,
        lambda types, outcomes: rank(types, outcomes) + (np.array(outcomes) == 2),
        types=types,
        neutral=True,
        vectorized=True,
    )
    with pytest.raises(ValidationError, match="not invariant under relabelling"):
        dominant_audit(tilted, 4)
