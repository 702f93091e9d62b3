"""Kendall tau neighbours of rankings for the privacy audits.

Oracles: a brute-force enumeration of every pair of permutations with the distance counted from its
definition (pairs of alternatives ordered differently), shortest paths in the adjacent-swap graph
built here with networkx, and the privacy loss of a Mallows law computed pair by pair.
"""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpgames.privacy import audit_privacy
from dpgames.types import PAIR_LIMIT, kendall_neighbours, kendall_tau
from dpgames.validation import ValidationError


def discordant(a, b):
    return sum(
        (a.index(x) < a.index(y)) != (b.index(x) < b.index(y))
        for x, y in itertools.combinations(a, 2)
    )


def brute_pairs(alternatives, k):
    perms = list(itertools.permutations(alternatives))
    return {
        frozenset((a, b)) for a, b in itertools.combinations(perms, 2) if 1 <= discordant(a, b) <= k
    }


def test_distance_is_the_least_number_of_adjacent_swaps():
    perms = list(itertools.permutations("abcd"))
    graph = nx.Graph()
    for p in perms:
        for i in range(3):
            graph.add_edge(p, p[:i] + (p[i + 1], p[i]) + p[i + 2 :])
    start = perms[5]
    hops = nx.single_source_shortest_path_length(graph, start)
    for p in perms:
        assert kendall_tau(start, p) == discordant(start, p) == hops[p]


@pytest.mark.parametrize("m", [2, 3, 4])
def test_single_rankings_equal_the_brute_force_at_every_k(m):
    alternatives = tuple(range(m))
    for k in range(1, m * (m - 1) // 2 + 1):
        got = list(kendall_neighbours(alternatives, k))
        assert len(got) == len(kendall_neighbours(alternatives, k))
        assert len({frozenset(p) for p in got}) == len(got)  # each unordered pair once
        assert {frozenset(p) for p in got} == brute_pairs(alternatives, k)
    # the largest k: every pair of distinct rankings
    assert len(kendall_neighbours(alternatives, m * (m - 1) // 2)) == math.comb(
        math.factorial(m), 2
    )


@pytest.mark.parametrize("voters, k", [(1, 1), (2, 1), (2, 2), (3, 1)])
def test_profiles_equal_the_brute_force(voters, k):
    perms = list(itertools.permutations("abc"))
    want = set()
    for p, q in itertools.combinations(itertools.product(perms, repeat=voters), 2):
        changed = [i for i in range(voters) if p[i] != q[i]]
        if len(changed) == 1 and discordant(p[changed[0]], q[changed[0]]) <= k:
            want.add(frozenset((p, q)))
    pairs = kendall_neighbours("abc", k, voters=voters)
    got = list(pairs)
    assert len(got) == len(pairs) == len(want) and {frozenset(p) for p in got} == want
    assert f"profiles of {voters} rankings" in pairs.relation


def mallows(eps, alternatives):
    orders = list(itertools.permutations(alternatives))

    def law(x):
        w = np.array([math.exp(-eps * discordant(x, r)) for r in orders])
        return dict(zip(orders, (w / w.sum()).tolist()))

    return law


@pytest.mark.parametrize("k", [1, 2])
def test_privacy_audit_of_a_mallows_law_over_kendall_neighbours(k):
    """Pr[r | x] proportional to exp(-eps d(x, r)): the log ratio at two centres is eps (d(y, r) -
    d(x, r)) up to the normalisers (equal: the distance's law does not depend on the centre), at
    most eps d(x, y) by the triangle inequality, reached at r = x."""
    eps, alternatives = 0.4, "abcd"
    law = mallows(eps, alternatives)
    audit = audit_privacy(law, kendall_neighbours(alternatives, k))
    brute = max(
        abs(math.log(law(a)[r] / law(b)[r]))
        for a, b in (tuple(p) for p in brute_pairs(alternatives, k))
        for r in itertools.permutations(alternatives)
    )
    assert audit.exact and audit.epsilon == pytest.approx(brute, rel=1e-9) == pytest.approx(
        k * eps, rel=1e-9
    )
    assert f"Kendall tau distance <= {k}" in kendall_neighbours(alternatives, k).relation


def test_bad_input_names_the_argument():
    for kwargs, field in [
        ({"alternatives": "a"}, "alternatives"),
        ({"alternatives": "aa"}, "alternatives"),
        ({"alternatives": "abc", "k": 4}, "k"),
        ({"alternatives": "abc", "k": 0}, "k"),
        ({"alternatives": "abc", "voters": 0}, "voters"),
        ({"alternatives": "abcdefg", "voters": 3}, "voters"),
        ({"alternatives": range(10)}, "alternatives"),
        ({"alternatives": 5}, "alternatives"),
    ]:
        with pytest.raises(ValidationError) as info:
            kendall_neighbours(**kwargs)
        assert info.value.field == field, kwargs
    with pytest.raises(ValidationError, match="b must rank the same alternatives"):
        kendall_tau("abc", "abd")
    with pytest.raises(ValidationError, match="a must be a ranking"):
        kendall_tau("aab", "abc")


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    alternatives=st.one_of(
        st.lists(st.integers(0, 5), max_size=5),
        st.text(alphabet="abcde", max_size=5),
        st.none(),
        st.integers(),
    ),
    k=st.one_of(st.integers(-1, 11), st.floats(0, 3), st.booleans()),
    voters=st.one_of(st.none(), st.integers(-1, 3), st.just(2.0)),
)
def test_clean_error_or_pairs_at_the_stated_distance(alternatives, k, voters):
    try:
        pairs = kendall_neighbours(alternatives, k, voters=voters)
    except ValidationError:
        return
    got = list(itertools.islice(pairs, 5000))
    assert len(pairs) <= PAIR_LIMIT and (len(got) == len(pairs) or len(got) == 5000)
    for x, y in got:
        if voters is None:
            assert 1 <= kendall_tau(x, y) <= k
        else:
            changed = [i for i in range(voters) if x[i] != y[i]]
            assert len(changed) == 1 and 1 <= kendall_tau(x[changed[0]], y[changed[0]]) <= k


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    a=st.one_of(
        st.permutations("abcd"), st.lists(st.sampled_from("abcde"), max_size=5), st.integers()
    ),
    b=st.one_of(st.permutations("abcd"), st.text(alphabet="abcd", max_size=4)),
)
def test_distance_clean_error_or_a_symmetric_count_of_discordant_pairs(a, b):
    try:
        d = kendall_tau(a, b)
    except ValidationError:
        return
    assert d == kendall_tau(b, a) == discordant(tuple(a), tuple(b))
    assert 0 <= d <= math.comb(len(tuple(a)), 2)
