"""Coalitional and individual manipulation of Borda, plurality and IRV: dpgames' exact audits
against SVVAMP.

SVVAMP (Durand, https://github.com/francois-durand/svvamp) decides, with rule-specific exact
algorithms, whether a profile is *coalitionally manipulable* (CM: the voters who prefer some c to
the winner w can cast ballots electing c, the others sincere) and *individually manipulable* (IM:
one voter can elect a candidate she prefers to w).  With strict rankings and a deterministic rule,
CM is dpgames' *strong* coalitional manipulation over coalitions of any size (every member strictly
gains: she prefers the new winner; the coalition of all who prefer it can cast the same ballots),
and IM is a profitable unilateral lie.  The rules are written here as a user would, with SVVAMP's
tie-breaking (lowest index wins; IRV eliminates the highest index among the tied).  Skipped when
SVVAMP is not installed (``pip install 'dpgames[bench]'``).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgames import CustomMechanism, truthfulness_audit
from dpgames.types import ordinal_utility, rankings

svvamp = pytest.importorskip("svvamp")


def borda(profile):
    m = len(profile[0])
    score = [0] * m
    for ballot in profile:
        for position, c in enumerate(ballot):
            score[c] += m - 1 - position
    return max(range(m), key=lambda c: (score[c], -c))


def plurality(profile):
    m = len(profile[0])
    votes = [0] * m
    for ballot in profile:
        votes[ballot[0]] += 1
    return max(range(m), key=lambda c: (votes[c], -c))


def irv(profile):
    alive = set(range(len(profile[0])))
    while len(alive) > 1:
        firsts = {c: 0 for c in alive}
        for ballot in profile:
            firsts[next(c for c in ballot if c in alive)] += 1
        # fewest first places; ties: highest index
        alive.remove(min(alive, key=lambda c: (firsts[c], -c)))
    return alive.pop()


RULES = {
    "borda": (borda, "RuleBorda"),
    "plurality": (plurality, "RulePlurality"),
    "irv": (irv, "RuleIRV"),
}
#: SVVAMP's exact algorithms (its defaults may answer nan, "cannot decide").
EXACT = {
    "borda": {"cm_option": "exact"},
    "plurality": {},
    "irv": {"cm_option": "exact", "im_option": "exact"},
}


def random_profiles(m, n, count, seed):
    rng = np.random.default_rng(seed)
    return [np.array([rng.permutation(m) for _ in range(n)]) for _ in range(count)]


def svvamp_rule(name, rk):
    return getattr(svvamp, RULES[name][1])(**EXACT[name])(svvamp.Profile(preferences_rk=rk))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RULES))
@pytest.mark.parametrize("m, n, count", [(3, 4, 12), (4, 3, 4)])
def test_coalitional_and_individual_verdicts_equal_svvamps(name, m, n, count):
    rule = RULES[name][0]
    mech = CustomMechanism(rule, ordinal_utility, types=rankings(range(m)), anonymous=True)
    seen = set()
    for rk in random_profiles(m, n, count, seed=hash((name, m, n)) % 2**32):
        profile = [tuple(int(c) for c in row) for row in rk]
        result = svvamp_rule(name, rk)
        assert rule(profile) == result.w_  # the same rule, the same tie-breaking
        assert result.is_cm_ in (True, False) and result.is_im_ in (True, False)  # decided, not nan
        cm = truthfulness_audit(mech, profile, coalitions=n, manipulation="strong")
        im = truthfulness_audit(mech, profile)
        assert (not cm.is_truthful()) is bool(result.is_cm_), (profile, cm.worst_case)
        assert (not im.is_truthful()) is bool(result.is_im_), (profile, im.worst_case)
        if not cm.is_truthful():
            # the coalition's joint lie elects a candidate every member prefers to w
            w = cm.worst_case
            lied = list(profile)
            for agent, ballot in zip(w["coalition"], w["lie"]):
                lied[agent] = ballot
            new = rule(lied)
            assert all(profile[a].index(new) < profile[a].index(result.w_) for a in w["coalition"])
        seen.add(bool(result.is_cm_))
    if name == "borda" and m == 3:
        assert seen == {True, False}  # the sample holds both verdicts
