"""Fuzzing the public API: every entry point of ``dpgames`` and of its subpackages ``privacy``,
``games`` (anonymous games included), ``mechanisms``, ``analysis``, ``markets`` and ``allocation``
is called with generated arguments (plausible ones, extremes, degenerate-but-valid values such as
5e-324, 1e308, -0.0, empty and single-element lists, huge integers, NaN, inf, strings, bools, None,
empty and 0-d arrays, ragged lists), and every public method of what a constructor returns likewise.
Own mechanisms (``CustomMechanism``) and anonymous games are also built from misbehaving user
functions (that raise, return NaN, inf or +-1e308, or the wrong type) and audited.

Oracle (each call in a forked child, 2 GiB address-space cap, 20 s): the call raises a
``ValueError`` (ideally :class:`dpgames.validation.ValidationError`) whose message is free of
Python/numpy internals, or returns a value whose numbers are all finite or documented infinities
(``true_infinity`` in tests/fuzz_strategies.py). Any other exception (TypeError from inside numpy,
OverflowError, ZeroDivisionError, IndexError, RecursionError, MemoryError), a NaN, an undocumented
inf from finite inputs, a hang or a crash fails.  ``DPGAMES_FUZZ=long`` runs many more cases
(tests/fuzz_strategies.py).

The regression cases at the end are API inputs once seen to fail, one test each.
"""

from __future__ import annotations

import inspect
import math
import os
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, strategies as st

import dpgames
import dpgames.allocation
import dpgames.analysis
import dpgames.games
import dpgames.markets
import dpgames.mechanisms
import dpgames.privacy
from fuzz_strategies import (
    EXTREME_NUMBERS,
    clean_error,
    fuzz_settings,
    log_uniform,
    non_finite,
    report,
    run_isolated,
)

ROOT = Path(__file__).resolve().parent.parent
TNTP_DIR = Path(os.environ.get("DPGAMES_TNTP_DIR", ROOT.parent / "shared" / "data" / "tntp"))

# Entry points whose input is a file or a whole scenario/sweep: fuzzed through the CLI
# (test_fuzz_cli.py).
VIA_CLI = {
    "run_scenario",
    "Scenario",
    "Result",
    "load_results",
    "plan_sweep",
    "run_sweep",
    "ScenarioError",
    "BudgetExceededError",
    "TntpError",
    "SparseVectorHalted",
}
# Records the library returns (not inputs), the internal state of dynamics and the protocols callers
# annotate with (TruthfulnessVerdict): not constructed by users.
RECORDS = {
    "PMWResult",
    "MediatorOutcome",
    "IncentiveAudit",
    "Assignment",
    "PrivacyAudit",
    "Neighbours",
    "HasOutputLaw",
    "DeclaresNeighbours",
    "SparseVectorResult",
    "AuctionOutcome",
    "MisreportAudit",
    "PrivacyEvent",
    "Hedge",
    "BlumMansour",
    "RegretTracker",
    "UnilateralCosts",
    "OnlineTreeCounter",
    "EnvironmentMechanism",
    "BayesianAudit",
    "DominantAudit",
    "ExPostAudit",
    "PrivacyLossAudit",
    "SampledAudit",
    "TruthfulnessAudit",
    "TypeSpaceAudit",
    "TruthfulnessVerdict",
    "ShortestPathTrees",
    "AnonymousOutcome",
    "MisreportGains",
    "CostAudit",
    "EnvyFreeBenchmark",
    "PrivacyAwareAudit",
    "SurveyLaw",
    "SurveyOutcome",
    "AllocationOutcome",
    "EquilibriumCheck",
    "OptimalAllocation",
    "CostLaw",
    "GainCurve",
    "CoalitionAudit",
    "OrdinalAudit",
    "DominantLeastQ",
    "Bids",
    "BenchmarkMechanism",
}
# Assertions for users' test suites: they raise AssertionError by design; the audits they wrap are
# fuzzed.
ASSERTIONS = {"assert_private", "assert_truthful"}
# The fuzzed modules: the top-level entry points and the subpackages that hold the rest of the
# public API.
MODULES = (
    dpgames,
    dpgames.privacy,
    dpgames.games,
    dpgames.mechanisms,
    dpgames.analysis,
    dpgames.markets,
    dpgames.allocation,
)
#: The surfaces added after the first fuzz suite: fuzzed on their own as well
#: (test_fuzz_api_new_surfaces).
NEW_SURFACES = (
    "dpgames.markets",
    "dpgames.allocation",
    "dpgames.games.anonymous",
    "dpgames.games.anonymous_mediator",
    "dpgames.mechanisms.custom",
)


def entry_points() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if (
                name in VIA_CLI
                or name in RECORDS
                or name in ASSERTIONS
                or not callable(obj)
                or (inspect.isclass(obj) and issubclass(obj, BaseException))
            ):
                continue
            found.setdefault(name, obj)
    return dict(sorted(found.items()))


ENTRY_POINTS = entry_points()


# --------------------------------------------------------------------------------------------------
# Arguments: plausible values by parameter name, else (or sometimes) wild ones.


@dataclass(frozen=True)
class Ref:
    """One of a few small valid objects of the 'world' (an environment, a profile, a game...)."""

    name: str
    index: int = 0


POSITIVE = {
    "epsilon",
    "sensitivity",
    "sigma",
    "rho",
    "mu",
    "scale",
    "threshold",
    "alpha",
    "t",
    "shift",
    "penalty",
    "learning_rate",
    "gap",
    "demand_scale",
    "toll_weight",
    "distance_weight",
    "sigma_squared",
    "eta",
    "a",
    "b",
    "high",
    "low",
    "epsilon_lower_bound",
    "budget",
    "start_price",
    "power",
    "mean",
    "capacity",
    "width",
    "capacity_fraction",
    "radius",
    "margin",
    "largeness",
    "tail",
    "unbought_share",
    "reserve",
    "value",
}
PROBABILITY = {
    "delta",
    "beta",
    "p_truth",
    "p_yes",
    "q",
    "confidence",
    "weight_other",
    "tolerance",
    "tol",
}
COUNT = {
    "n",
    "k",
    "n_bids",
    "n_candidates",
    "n_queries",
    "universe_size",
    "horizon",
    "rounds",
    "count",
    "limit",
    "samples",
    "exact_max_n",
    "size",
    "rows",
    "cols",
    "true_yes",
    "max_positives",
    "dim",
    "max_iterations",
    "seeds",
    "exhaustive",
    "order",
    "max_links",
    "max_paths",
    "warmup",
    "indent",
    "sample_size",
    "max_rounds",
    "iterations",
    "num_actions",
    "calls",
    "agent",
    "bit",
    "j",
    "cache_size",
    "seed",
}
ARRAY = {
    "values",
    "bids",
    "scores",
    "answers",
    "stream",
    "prices",
    "types",
    "lies",
    "n_yes",
    "true_counts",
    "histogram",
    "demand",
    "free",
    "coef",
    "power",
    "labels",
    "counts",
    "candidates",
    "locations",
    "punishing",
    "log_probabilities",
    "outcomes",
    "cost",
    "qs",
    "x",
    "x_prime",
    "flow",
    "loads",
    "per_class",
    "position",
    "origins",
    "destinations",
    "players",
    "action_class",
    "index",
    "weights",
    "first",
    "second",
    "true_types",
    "type_indices",
    "suggestions",
    "strategy",
    "loss",
    "unilateral",
    "action_costs",
    "values_",
    "unbought",
    "thresholds",
    "bought",
    "edges",
    "rhos",
    "cost_grid",
    "probabilities",
    "bits",
    "log_prob",
    "log_prob_other",
    "supply",
    "assignment",
    "probabilities_one",
    "histograms",
    "outside",
    "valuation",
    "reports",
    "others",
    "bidders",
}
MATRIX = {"queries", "valuations", "utility", "objective", "incidence"}
REFS = {
    "environment": 3,
    "profile": 3,
    "auction": 1,
    "exponential": 2,
    "commitment": 2,
    "mechanism": 3,
    "model": 2,
    "game": 2,
    "graph": 2,
    "guarantee": 2,
    "budget": 1,
    "curve": 1,
    "other": 2,
    "p": 2,
    "counter": 1,
    "network": 1,
    "equilibrium": 1,
    "optimum": 1,
    "costs": 1,
    "gap": 1,
    "audit": 1,
    "rng": 2,
    "f": 1,
    "event": 1,
    "mediator": 1,
    "neighbours": 1,
    "initial": 1,
}
# What a parameter name means in a module of the newer surfaces (module prefix, name) -> a Ref's
# name.
MODULE_REFS = {
    ("dpgames.markets", "law"): "population_law",
    ("dpgames.markets", "population"): "population_law",
    ("dpgames.markets", "mechanism"): "survey_mechanism",
    ("dpgames.markets", "outcome"): "survey_outcome",
    ("dpgames.markets", "laws"): "cost_laws",
    ("dpgames.markets", "costs_if_one"): "cost_law",
    ("dpgames.allocation", "market"): "market",
    ("dpgames.allocation", "auction"): "ascending",
    ("dpgames.games.anonymous", "game"): "anonymous_game",
    ("dpgames.games.anonymous", "payoff"): "payoff",
    ("dpgames.games.anonymous_mediator", "game"): "anonymous_game",
    ("dpgames.games.anonymous_mediator", "mediator"): "anonymous_mediator",
    ("dpgames.mechanisms.custom", "rule"): "rule",
    ("dpgames.mechanisms.custom", "utility"): "utility",
    ("dpgames.mechanisms.custom", "payments"): "payments",
}
# Refs only the newer surfaces use (count of world objects each).
REFS.update(
    {
        "population_law": 2,
        "survey_mechanism": 2,
        "survey_outcome": 2,
        "cost_laws": 2,
        "cost_law": 2,
        "market": 2,
        "ascending": 2,
        "anonymous_game": 3,
        "payoff": 6,
        "anonymous_mediator": 2,
        "rule": 5,
        "utility": 7,
        "payments": 4,
        "custom": 6,
    }
)

wild = st.one_of(
    st.sampled_from(EXTREME_NUMBERS),
    st.sampled_from(
        [
            None,
            "",
            "x",
            "auto",
            True,
            [],
            {},
            (),
            b"1",
            1j,
            Fraction(1, 3),
            np.float32(0.5),
            np.int64(2**62),
            np.nan,
            np.array(np.nan),
            np.array(2.0),
            np.array([]),
            np.array([[]]),
            np.array([np.nan, 1.0]),
            np.array([np.inf]),
            np.array(["a", "b"]),
            [[1.0], [2.0, 3.0]],
            [10**400],
            [2**63, 1],
            np.zeros((2, 2)),
            np.array([1e308, 1e308]),
            np.array([-1.0, 0.5]),
            list(range(3)),
            [5e-324],
            [0.5],
            [1e308],
            [-0.0],
            [0.0],
            ["a"],
            [True],
            "a",
            False,
            [[0.5]],
            [np.nan],
            [np.inf],
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
)
small_floats = st.one_of(
    st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.5, 1e-300, 1e-12, 1 - 1e-12])
)
arrays = st.one_of(
    st.lists(small_floats, min_size=1, max_size=6),
    st.lists(small_floats, min_size=1, max_size=6).map(np.array),
    st.sampled_from([[], [0.5], [5e-324], [1e308], [-0.0], [1.0, 1.0], [0.0, 0.0]]),
    st.lists(st.integers(0, 5), min_size=1, max_size=6),
    st.lists(
        st.one_of(small_floats, log_uniform(-12, 12), st.sampled_from(EXTREME_NUMBERS)),
        min_size=0,
        max_size=5,
    ),
)
matrices = st.integers(1, 4).flatmap(
    lambda m: st.lists(st.lists(small_floats, min_size=m, max_size=m), min_size=1, max_size=4)
)


# Strategies for parameters whose shape the name table gets wrong, by (function or method,
# parameter).
STRATEGIES = {
    ("Market", "values"): matrices,
    ("random", "values"): matrices,
    ("CustomMechanism", "types"): st.sampled_from(
        [range(3), [0, 1], ["a", "b", "c"], [], [0], [0.5, -0.0]]
    ),
    ("from_list", "values"): st.one_of(arrays, wild),
}

# Parameters whose meaning differs from the name table above, by (function or method, parameter).
OVERRIDES = {
    ("audit_black_box", "mechanism"): "sampler",
    ("binned", "sampler"): "sampler",
    ("audit_finite", "mechanism"): "finite_mechanism",
    ("audit_finite", "neighbours"): "neighbours",
    ("audit_privacy", "mechanism"): "audited_mechanism",
    ("audit_privacy", "neighbours"): "neighbours",
    ("hockey_stick_divergence", "q"): "other",
    ("user_equilibrium", "gap"): None,
    ("system_optimum", "gap"): None,
    ("load_tntp", "folder"): "folder",
}


def module_ref(module: str, name: str) -> str | None:
    """The Ref a parameter ``name`` of a function of ``module`` takes on the newer surfaces, if
    any."""
    return next(
        (
            ref
            for (prefix, n), ref in MODULE_REFS.items()
            if n == name and (module == prefix or module.startswith(prefix + "."))
        ),
        None,
    )


def plausible(name: str, annotation: str, owner: str = "", module: str = "") -> st.SearchStrategy:
    base = name.rstrip("_")
    ref = module_ref(module, base)
    if ref is not None:
        return st.integers(0, REFS[ref] - 1).map(lambda i: Ref(ref, i))
    if (owner, base) in STRATEGIES:
        return STRATEGIES[(owner, base)]
    if (owner, base) in OVERRIDES:
        ref = OVERRIDES[(owner, base)]
        if ref is None:
            return st.one_of(st.floats(0, 1), st.sampled_from([1e-12, 1e-4, 0.0, 1.0]))
        return st.integers(0, 1).map(lambda i: Ref(ref, i))
    if base in REFS:
        return st.integers(0, REFS[base] - 1).map(lambda i: Ref(base, i))
    if base in PROBABILITY:
        return st.one_of(
            st.floats(0, 1), st.sampled_from([0.0, 1.0, 1e-12, 1e-300, 5e-324, 0.05, 0.5])
        )
    if base in POSITIVE:
        return st.one_of(
            log_uniform(-8, 8),
            st.sampled_from([1.0, 0.5, 2.0, 1e-6, 1e6, 1e-300, 1e300, 5e-324, 1e308, -0.0]),
            st.integers(1, 5),
        )
    if base in COUNT:
        return st.one_of(
            st.integers(0, 8), st.integers(1, 40), st.sampled_from([10**6, 10**9, 2**31, 2**63])
        )
    if base in MATRIX:
        return matrices
    if base in ARRAY or "ArrayLike" in annotation:
        return arrays
    if "bool" in annotation:
        return st.booleans()
    if (
        "str" in annotation
        or "Literal" in annotation
        or base
        in {
            "name",
            "neighbouring",
            "noise",
            "dynamics",
            "convention",
            "reactions",
            "relation",
            "selection",
            "method",
            "evaluation",
            "weight",
        }
    ):
        return st.sampled_from(
            [
                "auto",
                "gaussian",
                "laplace",
                "tree",
                "none",
                "hedge",
                "blum-mansour",
                "free",
                "forced",
                "dwork-roth",
                "mcsherry-talwar",
                "exponential",
                "sparse_vector",
                "path-based",
                "frank-wolfe",
                "event",
                "user",
                "weight",
                "x",
                "",
            ]
        )
    if "int" in annotation:
        return st.integers(0, 10)
    if "float" in annotation:
        return log_uniform(-6, 6)
    return wild


def argument(name: str, annotation: str, owner: str, module: str = "") -> st.SearchStrategy:
    """Mostly plausible values; wild ones a quarter of the time, except for objects (an environment,
    a game, an rng...), which are always valid: the fuzz targets numbers, arrays and sizes, not duck
    typing."""
    good = plausible(name, annotation, owner, module)
    if (
        name.rstrip("_") in REFS
        or (owner, name) in OVERRIDES
        or module_ref(module, name.rstrip("_"))
    ):
        return good
    return st.one_of(good, good, good, wild)


def parameters(fn) -> list[inspect.Parameter]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [
        p
        for p in sig.parameters.values()
        if p.name != "self"
        and not p.name.startswith("_")
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def draw_call(data, fn, label: str, module: str | None = None) -> dict[str, Any]:
    """Keyword arguments for ``fn``: every required parameter, and each optional one half the
    time."""
    kwargs = {}
    module = module or getattr(fn, "__module__", "") or ""
    for p in parameters(fn):
        if p.default is inspect.Parameter.empty or data.draw(
            st.booleans(), label=f"{label}.{p.name}?"
        ):
            kwargs[p.name] = data.draw(
                argument(p.name, str(p.annotation), label, module), label=f"{label}.{p.name}"
            )
    return kwargs


# --------------------------------------------------------------------------------------------------
# The world: small valid objects the Refs resolve to (built once; each forked case gets its own
# copy).


def build_world() -> dict[str, list[Any]]:
    from dpgames import (
        CommitmentMechanism,
        DigitalGoodsAuction,
        ObjectiveExponentialMechanism,
        PrivateMediator,
    )
    from dpgames.games import PolynomialCosts
    from dpgames.mechanisms import (
        facility_location_environment,
        grid_graph,
        line_graph,
        pricing_environment,
        public_project_environment,
    )
    from dpgames.privacy import BinaryTreeCounter, FiniteDistribution, PrivacyGuarantee

    envs = [
        pricing_environment([0.25, 0.5, 0.75, 1.0]),
        public_project_environment(
            [[0, 1.0, 0.3], [0, 0.2, 1.0]], ["none", "park", "library"], cost=[0, 0.5, 0.8]
        ),
        facility_location_environment(line_graph(4), k=1),
    ]
    profiles = [env.profile_from_counts(np.arange(1, env.n_types + 1) % 3 + 1) for env in envs]
    exps = [
        ObjectiveExponentialMechanism(envs[0], 1.0),
        ObjectiveExponentialMechanism(envs[2], 0.5),
    ]
    commits = [CommitmentMechanism(envs[0]), CommitmentMechanism(envs[2])]
    objects: dict[str, list[Any]] = {
        "environment": envs,
        "profile": profiles,
        "auction": [DigitalGoodsAuction(1.0, alpha=0.1)],
        "exponential": exps,
        "commitment": commits,
        "mechanism": [exps[0], commits[0], exps[1]],
        "graph": [line_graph(5), grid_graph(2, 3)],
        "guarantee": [PrivacyGuarantee(1.0), PrivacyGuarantee(0.5, 1e-6)],
        "budget": [PrivacyGuarantee(2.0, 1e-5)],
        "curve": [PrivacyGuarantee(1.0, 0.0, rho=0.5).rdp_curve()],
        "other": [FiniteDistribution(np.log([0.5, 0.5])), FiniteDistribution(np.log([0.9, 0.1]))],
        "counter": [BinaryTreeCounter(8, epsilon=1.0)],
        "gap": [commits[0].gap()],
        "rng": [0, np.random.default_rng(1)],
        "f": [lambda x: x],
        "event": [lambda x: x > 0],
        "mediator": [PrivateMediator(rounds=20)],
        "neighbours": [[(0, 1)], [(0.0, 1.0), (1.0, 2.0)]],
        "initial": [None],
        "audit": [None],
        "sampler": [
            lambda x, size, rng: rng.laplace(1.0 if x is True else 0.0, 1.0, size),
            lambda x, size, rng: rng.normal(1e300 if x is True else 0.0, 1e-300, size),
        ],
        "finite_mechanism": [
            lambda x: FiniteDistribution(np.log([0.3 + 0.1 * float(x), 0.7 - 0.1 * float(x)])),
            lambda x: FiniteDistribution(np.array([0.0, -1e308 * float(x)])),
        ],
        "audited_mechanism": [
            lambda x: {"yes": 0.5 + 0.1 * float(x), ("no", 1): 0.5 - 0.1 * float(x)},
            lambda x, size, rng: rng.laplace(float(x), 1.0, size),
        ],
        "folder": [str(TNTP_DIR / "Braess"), "/nonexistent"],
        "costs": [PolynomialCosts([1.0, 0.0], [0.0, 0.001])],
        "network": [None],
        "equilibrium": [None],
        "optimum": [None],
    }
    objects["p"] = objects["other"]
    objects.update(new_surfaces_world())
    if (TNTP_DIR / "Braess").exists():
        from dpgames import load_tntp

        braess = load_tntp(TNTP_DIR / "Braess")
        objects["model"] = [braess, braess.initial_game()]
        objects["network"] = [braess.network]
        objects["game"] = [braess.initial_game()] * 2
    else:
        objects["model"] = objects["game"] = [None, None]
    return objects


def _raise(*_args):
    raise RuntimeError("a user function failed")


def _raise1(x):
    _raise(x)


def _raise2(t, o):
    _raise(t, o)


def _payoff(h):
    share = 1 - np.asarray(h) / 4.0
    return np.stack([share, 0.5 * share], axis=1)


# Own mechanisms' user functions, well-behaved first, then misbehaving (raise, NaN, inf, 1e308,
# wrong type).
CUSTOM_RULES = [
    lambda r: sorted(r)[len(r) // 2],
    _raise1,
    lambda r: [1, 2],
    lambda r: {0: float("nan"), 1: 0.5},
    lambda r: {0: 0.25, 1: 0.75},
]
CUSTOM_UTILITIES = [
    lambda t, o: -abs(float(t) - float(o)),
    _raise2,
    lambda t, o: float("nan"),
    lambda t, o: float("inf"),
    lambda t, o: 1e308 if t == o else -1e308,
    lambda t, o: "x",
    lambda t, o: None,
]
CUSTOM_PAYMENTS = [None, lambda r: [0.1] * len(r), lambda r: [float("nan")] * len(r), _raise1]
PAYOFFS = [
    _payoff,
    _raise1,
    lambda h: np.full((np.asarray(h).shape[0], 2), np.nan),
    lambda h: np.zeros(3),
    lambda h: np.full((np.asarray(h).shape[0], 2), "x"),
    lambda h: np.full((np.asarray(h).shape[0], 2), 1e308),
]


def new_surfaces_world() -> dict[str, list[Any]]:
    """Small valid objects of the markets, allocation, anonymous games and own mechanisms."""
    from dpgames import CustomMechanism
    from dpgames.allocation import AscendingAuction, Market
    from dpgames.games import AnonymousGame, AnonymousMediator, market_entry, minority_game
    from dpgames.markets import (
        AccuracyAuction,
        DiscreteCosts,
        FairQuery,
        PopulationLaw,
        UniformCosts,
    )

    costs = [0.1, 0.5, 0.9, 0.3, 0.2, 0.7]
    customs = [
        CustomMechanism(CUSTOM_RULES[0], CUSTOM_UTILITIES[0], range(3), anonymous=True),
        CustomMechanism(
            CUSTOM_RULES[4], CUSTOM_UTILITIES[0], range(3), payments=CUSTOM_PAYMENTS[1]
        ),
    ]
    customs += [
        CustomMechanism(CUSTOM_RULES[0], u, range(3), anonymous=True) for u in CUSTOM_UTILITIES[1:5]
    ]
    return {
        "population_law": [
            PopulationLaw(0.3, UniformCosts(0, 1)),
            PopulationLaw(
                0.5, DiscreteCosts([1, 2], [0.5, 0.5]), DiscreteCosts([2, 3], [0.5, 0.5])
            ),
        ],
        "survey_mechanism": [AccuracyAuction(0.2), FairQuery(1.0, 0.5)],
        "survey_outcome": [AccuracyAuction(0.3).run(costs), FairQuery(1.0, 0.5).run(costs)],
        "cost_laws": [[UniformCosts(0, 1), UniformCosts(1, 2)], [DiscreteCosts([1.0], [1.0])]],
        "cost_law": [UniformCosts(0, 2), DiscreteCosts([0.0, 1e308], [0.5, 0.5])],
        "market": [
            Market([[0.9, 0.2], [0.5, 0.6], [0.4, 0.1]], supply=1),
            Market.random(6, 2, supply=2, rng=1),
        ],
        "ascending": [AscendingAuction(0.1), AscendingAuction(0.2, epsilon=2.0)],
        "anonymous_game": [
            minority_game([2, 2]),
            market_entry([3, 2], capacity=2),
            AnonymousGame([1, 1], 2, _payoff),
        ],
        "payoff": PAYOFFS,
        "anonymous_mediator": [
            AnonymousMediator(rounds=20),
            AnonymousMediator(rounds=20, epsilon=None, noise="none"),
        ],
        "rule": CUSTOM_RULES,
        "utility": CUSTOM_UTILITIES,
        "payments": CUSTOM_PAYMENTS,
        "custom": customs,
    }


_WORLD: dict[str, list[Any]] = {}


def world() -> dict[str, list[Any]]:
    """The world, built once in the test process: each forked case inherits a private copy of it."""
    if not _WORLD:
        _WORLD.update(build_world())
    return _WORLD


def resolve(value: Any, world: dict[str, list[Any]]) -> Any:
    if isinstance(value, Ref):
        options = world.get(value.name) or [None]
        return options[value.index % len(options)]
    return value


def finite_inputs(kwargs: dict[str, Any]) -> bool:
    """Whether every number given is finite (only then is an inf in the output a wrong figure)."""
    return non_finite(kwargs, "args") is None and not any(
        isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**1023 for v in kwargs.values()
    )


# Functions whose docstring names +inf as a true answer (a privacy loss when an event proves the
# bit): only NaN and -inf are wrong figures there.
DOCUMENTED_INFINITY = {"selection_privacy_loss", "correlation_sweep"}


def _nan_or_minus_inf(x: Any, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if isinstance(x, dict):
        return any(_nan_or_minus_inf(v, depth + 1) for v in x.values())
    if isinstance(x, (list, tuple)):
        return any(_nan_or_minus_inf(v, depth + 1) for v in x)
    if isinstance(x, (float, np.floating, np.ndarray)) and np.asarray(x).dtype.kind == "f":
        arr = np.asarray(x)
        return bool(np.isnan(arr).any() or (arr == -np.inf).any())
    return False


def verdict(exc: BaseException | None, value: Any, kwargs: dict[str, Any], what: str) -> str | None:
    """None if acceptable, else the failure (run inside the child)."""
    if exc is not None:
        if isinstance(exc, ValueError):
            problem = clean_error(str(exc))
            return (
                f"UNCLEAN {type(exc).__name__} from {what}: {str(exc)[:300]!r} ({problem})"
                if problem
                else None
            )
        if type(exc).__name__ == "SparseVectorHalted":
            return None
        return f"UNCAUGHT {type(exc).__name__} from {what}: {str(exc)[:300]}"
    bad = non_finite(value, "result")
    if bad is None:
        return None
    if what.split("(")[0] in DOCUMENTED_INFINITY and not _nan_or_minus_inf(value):
        return None
    if finite_inputs(kwargs):
        return f"NON-FINITE {bad} from {what} with finite inputs"
    return None


def call_and_check(
    target: str, ctor_kwargs: dict, method: str | None, method_kwargs: dict
) -> str | None:
    import traceback

    objects = world()
    fn = ENTRY_POINTS[target]
    kwargs = {k: resolve(v, objects) for k, v in ctor_kwargs.items()}
    try:
        obj = fn(**kwargs)
    except BaseException as exc:  # noqa: BLE001
        v = verdict(exc, None, kwargs, f"{target}(...)")
        return v and v + "\n" + traceback.format_exc()[-1200:]
    if method is None or not inspect.isclass(fn):
        return verdict(None, obj, kwargs, f"{target}(...)")
    margs = {k: resolve(v, objects) for k, v in method_kwargs.items()}
    try:
        attr = getattr(obj, method)
        out = attr(**margs) if callable(attr) else attr
    except BaseException as exc:  # noqa: BLE001
        v = verdict(exc, None, {**kwargs, **margs}, f"{target}(...).{method}")
        return v and v + "\n" + traceback.format_exc()[-1200:]
    return verdict(None, out, {**kwargs, **margs}, f"{target}(...).{method}")


# The audit engine's methods of CustomMechanism: they take the type indices and laws the audits
# computed (the user's entry points, law / expected_utility / indices / check_anonymity, validate
# and are fuzzed).
ENGINE = {
    "CustomMechanism": {
        "labels",
        "key",
        "entry",
        "table",
        "fill",
        "value",
        "values_at",
        "values",
        "draw",
        "expected_payments",
    }
}


def public_members(cls) -> list[str]:
    names = []
    for klass in cls.__mro__:
        if klass.__module__.startswith("dpgames"):
            names += [
                n
                for n, v in vars(klass).items()
                if not n.startswith("_")
                and (callable(v) or isinstance(v, property))
                and not isinstance(v, (staticmethod, classmethod, type))
            ]
    return sorted(set(names) - ENGINE.get(cls.__name__, set()))


def run_call(target, ctor_kwargs, method, method_kwargs) -> None:
    case = f"{target}(**{ctor_kwargs!r:.1500})" + (
        f".{method}(**{method_kwargs!r:.1500})" if method else ""
    )
    world()  # built here, before the fork
    outcome = run_isolated(
        lambda: call_and_check(target, ctor_kwargs, method, method_kwargs), timeout=20
    )
    if outcome.status == "returned":
        problem = outcome.value
    elif outcome.status == "raised":
        problem = (
            f"HARNESS {outcome.value[0]}: {outcome.value[1][:300]}\n{outcome.value[2][-1500:]}"
        )
    elif outcome.status == "timeout":
        problem = "HANG: no answer within 20 s"
    else:
        problem = f"CRASH: {outcome.value}"
    report(case, problem)


@fuzz_settings(200)
@given(st.data())
def test_fuzz_api(data):
    target = data.draw(st.sampled_from(sorted(ENTRY_POINTS)), label="entry point")
    fn = ENTRY_POINTS[target]
    ctor_kwargs = draw_call(data, fn, target)
    method, method_kwargs = None, {}
    if inspect.isclass(fn) and public_members(fn):
        method = data.draw(st.sampled_from(public_members(fn)), label="method")
        member = inspect.getattr_static(fn, method)
        if callable(member):
            method_kwargs = draw_call(data, member, method)
    run_call(target, ctor_kwargs, method, method_kwargs)


def _in_new_surface(obj) -> bool:
    return getattr(obj, "__module__", "").startswith(NEW_SURFACES)


NEW_ENTRY_POINTS = sorted(name for name, obj in ENTRY_POINTS.items() if _in_new_surface(obj))


@fuzz_settings(150)
@given(st.data())
def test_fuzz_api_new_surfaces(data):
    """The markets, allocation, anonymous games and own mechanisms on their own (NEW_ENTRY_POINTS, a
    part of the entry points the fuzz above draws from)."""
    target = data.draw(st.sampled_from(NEW_ENTRY_POINTS), label="entry point")
    fn = ENTRY_POINTS[target]
    ctor_kwargs = draw_call(data, fn, target)
    method, method_kwargs = None, {}
    if inspect.isclass(fn) and public_members(fn):
        method = data.draw(st.sampled_from(public_members(fn)), label="method")
        member = inspect.getattr_static(fn, method)
        if callable(member):
            method_kwargs = draw_call(data, member, method, fn.__module__)
    run_call(target, ctor_kwargs, method, method_kwargs)


#: Degenerate but valid values (and a few invalid ones) put in one parameter at a time, the rest
#: plausible.
DEGENERATE = [
    5e-324,
    1e-300,
    1e308,
    1.7976931348623157e308,
    -0.0,
    0.0,
    [],
    [0.5],
    [5e-324, 1e308],
    "a",
    True,
    math.nan,
    math.inf,
    10**400,
]


@fuzz_settings(150)
@given(st.data())
def test_fuzz_api_degenerate_values(data):
    """One parameter of a call (of the constructor or of a method) set to a degenerate value, the
    others plausible: what an external fuzzer varying one field at a time meets first."""
    target = data.draw(st.sampled_from(sorted(ENTRY_POINTS)), label="entry point")
    fn = ENTRY_POINTS[target]
    ctor_kwargs = {k: v for k, v in draw_call(data, fn, target).items()}
    method, method_kwargs = None, {}
    if inspect.isclass(fn) and public_members(fn):
        method = data.draw(st.sampled_from(public_members(fn)), label="method")
        member = inspect.getattr_static(fn, method)
        if callable(member):
            method_kwargs = draw_call(data, member, method, fn.__module__)
    numeric = [
        (kw, name)
        for kw in (ctor_kwargs, method_kwargs)
        for name, value in kw.items()
        if not isinstance(value, Ref)
    ]
    if numeric:
        kw, name = data.draw(st.sampled_from(numeric), label="degenerate parameter")
        kw[name] = data.draw(st.sampled_from(DEGENERATE), label=f"{name} =")
    run_call(target, ctor_kwargs, method, method_kwargs)


def audit_custom(index: int, profile: Any, options: dict[str, Any]) -> str | None:
    """Audit world custom mechanism ``index`` (well-behaved or with a misbehaving user function)."""
    import traceback

    mechanism = world()["custom"][index]
    what = f"truthfulness_audit(custom[{index}], {profile!r}, **{options!r})"
    try:
        out = dpgames.truthfulness_audit(mechanism, profile, **options)
    except BaseException as exc:  # noqa: BLE001
        v = verdict(exc, None, {"profile": profile, **options}, what)
        return v and v + "\n" + traceback.format_exc()[-1200:]
    return verdict(None, out, {"profile": profile, **options}, what)


@fuzz_settings(60)
@given(
    index=st.integers(0, REFS["custom"] - 1),
    profile=st.one_of(st.lists(st.integers(0, 2), min_size=1, max_size=4), wild),
    true_types=st.sampled_from(["own", "all"]),
    rng=st.one_of(st.none(), st.integers(0, 3), wild),
)
def test_fuzz_custom_mechanism_audits(index, profile, true_types, rng):
    options: dict[str, Any] = {"true_types": true_types}
    if rng is not None:
        options["rng"] = rng
    world()
    outcome = run_isolated(lambda: audit_custom(index, profile, options), timeout=20)
    problem = (
        outcome.value
        if outcome.status == "returned"
        else f"{outcome.status.upper()}: {outcome.value!r:.1500}"
    )
    report(f"custom[{index}] {profile!r:.200} {options!r:.200}", problem)


# --------------------------------------------------------------------------------------------------
# Regression cases (API inputs once seen to fail), each exact: a clean ValueError or finite figures.

API_REGRESSIONS = {
    "Accountant.basic after a huge spend": (
        "Accountant",
        {},
        "spend_then",
        {"what": "basic_total", "eps": 1e308, "count": 10},
    ),
    "Accountant.advanced after a huge spend": (
        "Accountant",
        {},
        "spend_then",
        {"what": "advanced_total", "eps": 1e308, "count": 10},
    ),
    "Accountant.rdp after a huge spend": (
        "Accountant",
        {},
        "spend_then",
        {"what": "rdp_total", "eps": 1e300, "count": 10},
    ),
    "PrivacyGuarantee.for_group huge k": (
        "PrivacyGuarantee",
        {"epsilon": 1.0, "delta": 1e-6},
        "for_group",
        {"k": 10**400},
    ),
    "PrivacyGuarantee.for_group overflow": (
        "PrivacyGuarantee",
        {"epsilon": 1e300, "delta": 1e-6},
        "for_group",
        {"k": 10**10},
    ),
    "WarnerResponse.estimate_yes p_truth=0.5": (
        "WarnerResponse",
        {"p_truth": 0.5},
        "estimate_yes",
        {"n_yes": 3, "n": 10},
    ),
    "WarnerResponse.estimate_yes n=0": (
        "WarnerResponse",
        {"p_truth": 0.75},
        "estimate_yes",
        {"n_yes": 0, "n": 0},
    ),
    "ExponentialMechanism.utility_loss_bound eps=5e-324": (
        "ExponentialMechanism",
        {"epsilon": 5e-324},
        "utility_loss_bound",
        {"n_candidates": 10, "t": 1.0},
    ),
    "ExponentialMechanism.utility_loss_bound 1 candidate": (
        "ExponentialMechanism",
        {"epsilon": 1.0},
        "utility_loss_bound",
        {"n_candidates": 10**400, "t": 1.0},
    ),
    "AboveThreshold.accuracy": (
        "SparseVector",
        {"epsilon": 5e-324, "threshold": 0.0},
        "accuracy",
        {"n_queries": 10, "beta": 0.05},
    ),
    "BinaryTreeCounter.error_variance tiny eps": (
        "BinaryTreeCounter",
        {"horizon": 8, "epsilon": 5e-324},
        "error_variance",
        {},
    ),
    "LaplaceMechanism.release huge values": (
        "LaplaceMechanism",
        {"epsilon": 5e-324},
        "release",
        {"values": [1e308], "rng": 0},
    ),
    "LaplaceMechanism.release 1e308": (
        "LaplaceMechanism",
        {"epsilon": 1e-10},
        "release",
        {"values": [1.7e308], "rng": 0},
    ),
    "DigitalGoodsAuction.expected_utilities": (
        "DigitalGoodsAuction",
        {"epsilon": 1e6},
        "expected_utilities",
        {"values": [0.5, 0.9]},
    ),
    "Uniform.sample huge n": ("Uniform", {}, "sample", {"n": 10**400, "rng": 0}),
    "Uniform huge bounds": (
        "Uniform",
        {"low": -1e308, "high": 1e308},
        "sample",
        {"n": 3, "rng": 0},
    ),
    "KaryResponse k=10**9": (
        "KaryResponse",
        {"k": 10**9, "epsilon": 1.0},
        "estimator_variance",
        {"true_counts": [1, 2]},
    ),
    "Accountant.plus huge": (
        "Accountant",
        {},
        "spend_then",
        {"what": "best_total", "eps": 1e308, "count": 2**63},
    ),
}

FUNCTION_REGRESSIONS = {
    "grid_graph huge": ("grid_graph", {"rows": 10**400, "cols": 2}),
    "grid_graph 10**12": ("grid_graph", {"rows": 10**12, "cols": 10**12}),
    "line_graph huge": ("line_graph", {"n": 10**400}),
    "gaussian_delta extreme": ("gaussian_delta", {"epsilon": 1e308, "mu": 1e-308}),
    "gaussian_delta huge int": ("gaussian_delta", {"epsilon": 10**400, "mu": 1.0}),
    "FiniteDistribution.from_probabilities 0-d": (
        "FiniteDistribution.from_probabilities",
        {"probabilities": np.array(0.5)},
    ),
    "sample_discrete_laplace huge scale": (
        "sample_discrete_laplace",
        {"scale": 10**400, "size": 3, "rng": 0},
    ),
    "sample_discrete_laplace tiny scale": (
        "sample_discrete_laplace",
        {"scale": 5e-324, "size": 3, "rng": 0},
    ),
    "positive(2**1100)": ("validation.positive", {"name": "epsilon", "value": 2**1100}),
    "probability(10**400)": ("validation.probability", {"name": "delta", "value": 10**400}),
    "finite_array huge ints": ("validation.finite_array", {"name": "values", "values": [10**400]}),
    "price_grid tiny alpha": ("price_grid", {"alpha": 5e-324}),
    "price_grid huge int": ("price_grid", {"alpha": 10**400}),
    "user_equilibrium huge demand": ("user_equilibrium_scaled", {"scale": 1e300}),
    "system_optimum huge demand": ("system_optimum_scaled", {"scale": 1e300}),
}


def _regression_call(name: str, kwargs: dict) -> str | None:
    import traceback

    try:
        if name.startswith("validation."):
            from dpgames import validation

            out = getattr(validation, name.split(".")[1])(**kwargs)
        elif name == "price_grid":
            from dpgames.mechanisms.digital_goods import price_grid

            out = price_grid(**kwargs)
        elif name == "FiniteDistribution.from_probabilities":
            from dpgames.privacy import FiniteDistribution

            out = FiniteDistribution.from_probabilities(**kwargs)
        elif name.endswith("_scaled"):
            from dpgames.games import load_tntp, system_optimum, user_equilibrium

            game = load_tntp(TNTP_DIR / "Braess")
            game = game.with_demand(np.asarray(game.demand, dtype=float) * kwargs["scale"])
            out = (user_equilibrium if name.startswith("user") else system_optimum)(game)
        else:
            fn = getattr(dpgames.privacy, name, None) or getattr(dpgames.mechanisms, name)
            out = fn(**kwargs)
    except BaseException as exc:  # noqa: BLE001
        v = verdict(exc, None, kwargs, name)
        return v and v + "\n" + traceback.format_exc()[-1000:]
    return verdict(None, out, kwargs, name)


def _method_regression(target: str, ctor: dict, method: str, margs: dict) -> str | None:
    import traceback

    if method == "spend_then":
        from dpgames.privacy import Accountant, PrivacyGuarantee

        try:
            acc = Accountant().spend("q", PrivacyGuarantee(margs["eps"], 1e-9), margs["count"])
            out = getattr(acc, margs["what"])(
                *(() if margs["what"] in ("basic_total", "best_total") else (1e-6,))
            )
        except BaseException as exc:  # noqa: BLE001
            v = verdict(exc, None, {}, f"Accountant.{margs['what']}")
            return v and v + "\n" + traceback.format_exc()[-1000:]
        return verdict(None, out, {}, f"Accountant.{margs['what']}")
    return call_and_check(target, ctor, method, margs)


@pytest.mark.parametrize("name", list(API_REGRESSIONS))
def test_regression_api_method(name):
    target, ctor, method, margs = API_REGRESSIONS[name]
    outcome = run_isolated(lambda: _method_regression(target, ctor, method, margs), timeout=20)
    assert outcome.status == "returned", f"{outcome.status}: {outcome.value!r:.1500}"
    assert outcome.value is None, outcome.value


@pytest.mark.parametrize("name", list(FUNCTION_REGRESSIONS))
def test_regression_api_function(name):
    fn, kwargs = FUNCTION_REGRESSIONS[name]
    if fn.endswith("_scaled") and not (TNTP_DIR / "Braess").exists():
        pytest.skip("TNTP data not found")
    outcome = run_isolated(lambda: _regression_call(fn, kwargs), timeout=20)
    assert outcome.status == "returned", f"{outcome.status}: {outcome.value!r:.1500}"
    assert outcome.value is None, outcome.value


def test_world_is_valid():
    """The fuzzer's 'plausible' objects are themselves valid (else every case would test
    nothing)."""
    outcome = run_isolated(lambda: sorted(build_world()), timeout=60)
    assert outcome.status == "returned", outcome.value
    assert len(ENTRY_POINTS) > 40


# Found by the long fuzz runs (DPGAMES_FUZZ=long), each exact, as an expression.
BRAESS = f"load_tntp({str(TNTP_DIR / 'Braess')!r})"
FOUND = {
    "N1 RoutingNetwork scalar labels": "RoutingNetwork(labels=0.0, tail=9, head=9, costs=PolynomialCosts([1., 0.], [0., "
    ".001]), zones=0.9)",
    "N2 Population.check_within non-numbers": "Population(values=np.array([0.5, 1.0])).check_within(low=np.zeros((1, 0)), high=())",
    "N3 grid_network capacity not a pair": "grid_network(14, 14, rng=0, capacity=14, b=2)",
    "N3 grid_network free_flow not a pair": "grid_network(12, 12, free_flow=0.0)",
    "N4 rdp_to_dp alphas=0": "rdp_to_dp(PrivacyGuarantee(1.0, 0.0, rho=0.5).rdp_curve(), delta=0.5, alphas=0)",
    "N4 rdp_to_dp huge alphas": "rdp_to_dp(PrivacyGuarantee(1.0, 0.0, rho=0.5).rdp_curve(), delta=0.5, "
    "alphas=-10**400)",
    "N5 CongestionGame string incidence": "CongestionGame(PolynomialCosts([1., 0.], [0., .001]), 'x', -1.0, [0.5, 0.5])",
    "N6 audit_incentives huge seeds": f"audit_incentives(PrivateMediator(rounds=20), {BRAESS}, players=[2, 2, 3], "
    "seeds=10**9, exhaustive=10**9, rng=0)",
    "N7 sample_noisy_max huge size": "ExponentialMechanism(1.0).sample_noisy_max(scores=[0.0], size=2**31, rng=0)",
    "N7 sample_noisy_max float size": "ExponentialMechanism(1.0).sample_noisy_max(scores=[4, 3, 2], size=-5.4e16, rng=0)",
    "A17 profile of another environment": "HuangKannan(public_project_environment([[0, 1.0, 0.3], [0, 0.2, 1.0]], "
    "['none', 'park', 'library'], cost=[0, 0.5, 0.8]), beta=32).payments("
    "facility_location_environment(line_graph(4), k=1).profile_from_counts([2, 3, 1, 2]))",
    "N9 PMW update_bound tiny universe": "PrivateMultiplicativeWeights(epsilon=1.0, alpha=1.0, eta=1.0).update_bound("
    "universe_size=2.7787204133730943e-180)",
    "N12 ObjectiveExponentialMechanism list sensitivity": "ObjectiveExponentialMechanism(pricing_environment("
    "[0.25, 0.5, 1.0]), epsilon=3, sensitivity=[1.0])",
    "N13 public_project_environment ragged outcomes": "public_project_environment([[0.1, 0.9]], outcomes=[[1.0], [2.0, 3.0]])",
    "N8 audit_black_box one sample": "audit_black_box(lambda x, size, rng: rng.laplace(0, 1, size), [(0, 1)], samples=1, "
    "rng=0)",
    # the newer surfaces (markets, allocation, anonymous games, own mechanisms)
    "M1 cost law sample with a seed": "MixtureCosts([UniformCosts(0, 1), ExponentialCosts(2.0)], [0.5, 0.5]).sample(3, 0)",
    "M1 cost law sample with None": "DiscreteCosts([1.0, 2.0], [0.5, 0.5]).sample(3, None)",
    "M2 Laplace privacy loss at 1e200": "expected_laplace_privacy_loss(1e200)",
    "M3 single_minded_lies huge k": "single_minded_lies(10 ** 7, 1.0)",
    "M4 anonymous misreport pairs an int": "dpgames.games.misreport_gains(AnonymousMediator(rounds=5), "
    "minority_game([2, 2]), pairs=5)",
    "M5 outcome_privacy_cost overflow": "outcome_privacy_cost(1e300, 1e300, -1e300)",
    "M5 outcome_privacy_cost shapes": "outcome_privacy_cost(np.zeros((1, 0)), [0.0, 1.0, 0.5, 0.2], 1e-308)",
    "M6 cost law CDF at a huge int": "ExponentialCosts().cdf([10 ** 400])",
    "M6 cost law CDF at a string": "PowerCosts(2.0).cdf('a')",
    "M7 ascending auction horizon 1e308": "AscendingAuction(1.0).horizon(1e308)",
    "M7 ascending auction margin huge k": "AscendingAuction(0.1, epsilon=1.0).margin_for(10 ** 400)",
    "M8 price set for NaN bids": "DigitalGoodsAuction(1.0).prices_for(float('nan'))",
    "M8 revenue bound huge n": "DigitalGoodsAuction(1.0).revenue_loss_bound(10 ** 400, 0.1)",
    "M9 anonymous game type_names an int": "AnonymousGame([1, 1], 2, lambda h: np.stack([1 - h / 2, 0.5 - h / 4], 1), "
    "type_names=-12446)",
    "M10 Market assignment of floats": "Market([[0.0], [0.3], [0.25]], supply=[1]).is_feasible(np.array([0.0]))",
    "M11 FairQuery buys nobody": "FairQuery(1e-9, 1.0).run([1.0, 2.0])",
    "M12 envy-free budget of subnormal costs": "envy_free_budget([5e-324, 5e-324], 1.0)",
    "M13 least_epsilon float iterations": "least_epsilon(7.8e-149, -0.0, 4.7, 7.8e-149, 9.8e28)",
    "M14 accountant delta a string": "Accountant().spend('q', PrivacyGuarantee(1.0)).group_total(2, 'x')",
    "M15 survey law tail a string": "TakeItOrLeaveIt(10, 0.1, 1.0, 0.1).law(PopulationLaw(0.5, UniformCosts()), tail='x')",
    "M16 survey that never stops": "TakeItOrLeaveIt(500, 0.1, 0.5, 1e-300).law(PopulationLaw(0.3, UniformCosts()))",
    "M17 custom utility 1e308": "truthfulness_audit(CustomMechanism(lambda r: sorted(r)[len(r) // 2], "
    "lambda t, o: 1e308 if t == o else -1e308, range(3), anonymous=True), [0])",
    "M18 custom audit rng -1": "truthfulness_audit(CustomMechanism(lambda r: max(r), lambda t, o: -abs(t - o), "
    "range(3)), "
    "[0, 1], true_types='all', n=2, profiles='search', rng=-1)",
    "M19 population of strings": "Population.from_list(['a'])",
    # one parameter at a time set to a degenerate value, the others plausible
    "D1 correlation sweep huge n": "correlation_sweep([0.2, 0.5], n=10 ** 400)",
    "D2 dominant profile count huge n": "dominant_profile_count(10 ** 400, 3)",
    "D3 facility location weight a list": "facility_location_environment(line_graph(4), weight=[])",
    "D4 load_tntp folder a float": "load_tntp(5e-324)",
    "D5 worst-case radius at eps 5e-324": "worst_case_radius([0.2, 0.5, 0.9], 5e-324, 0.1)",
    "D5 worst-case radius ragged eps": "worst_case_radius([0.2, 0.5, 0.9], [5e-324, 1e308], 0.1)",
    "D6 mediator publisher huge L": "PrivateMediator().publisher(links=10 ** 400, resources=3)",
    "D7 sparse vector huge max_positives": "SparseVector(1.0, 1.0, max_positives=10 ** 400)",
    "D8 envy-free budget of huge costs": "envy_free_budget([1e308, 1e308], 1e-300)",
    "D10 dual bound of huge prices": "dual_upper_bound(Market([[0.9, 0.2], [0.5, 0.6], [0.4, 0.1]], supply=1), "
    "np.array([1e308, 1e308]))",
    "D9 selection loss bought not booleans": "selection_privacy_loss(PopulationLaw(0.5, DiscreteCosts([1, 2], [0.5, 0.5]), "
    "DiscreteCosts([2, 3], [0.5, 0.5])), [2 ** 63, 1], [2 ** 63, 1])",
}


def _evaluate(expression: str) -> str | None:
    import traceback

    namespace = {"np": np, "dpgames": dpgames}
    for module in MODULES:
        namespace.update({name: getattr(module, name) for name in module.__all__})
    try:
        out = eval(expression, namespace)  # noqa: S307 - a fixed expression of this file
    except BaseException as exc:  # noqa: BLE001
        v = verdict(exc, None, {}, expression)
        return v and v + "\n" + traceback.format_exc()[-1000:]
    return verdict(None, out, {}, expression)


@pytest.mark.parametrize("name", list(FOUND))
def test_regression_fuzz_findings(name):
    if "load_tntp" in FOUND[name] and not (TNTP_DIR / "Braess").exists():
        pytest.skip("TNTP data not found")
    outcome = run_isolated(lambda: _evaluate(FOUND[name]), timeout=20)
    assert outcome.status == "returned", f"{outcome.status}: {outcome.value!r:.1500}"
    assert outcome.value is None, outcome.value


# --------------------------------------------------------------------------------------------------
# The walk: every numeric parameter of every entry point (and of the public methods of what a
# constructor returns) given a string, a bool, NaN and inf, one at a time, the other arguments a
# call that succeeds.

#: The four values no numeric parameter takes as a number (module docstring of dpgames.validation).
NOT_NUMBERS = {"a string": "0.5", "a bool": True, "NaN": math.nan, "inf": math.inf}

#: Calls that succeed, as keyword expressions (``W``: the fuzzer's world, ``made``: the object whose
#: method it is), where the name table's plain values do not (a count array, costs, a distribution
#: that sums to 1, a file...).  By entry point or method.
BASELINES: dict[str, str] = {
    "Accountant.spend": "dict(name='q', guarantee=W['guarantee'][0])",
    "AccuracyAuction": "dict(alpha=0.2)",
    "TakeItOrLeaveIt": "dict(sample_size=10, alpha=0.2, epsilon=1.0, start_price=0.5)",
    "AnonymousGame": "dict(players=[2, 2], num_actions=2, payoff=W['payoff'][0])",
    "el_farol": "dict(players=[2, 2])",
    "minority_game": "dict(players=[2, 2])",
    "market_entry": "dict(players=[2, 2], capacity=2)",
    "crowding_game": "dict(players=[2, 2], values=[[0.5, 0.8], [0.9, 0.2]])",
    "threshold_public_goods": "dict(players=[2, 2], threshold=2, width=1)",
    "BinaryTreeCounter": "dict(horizon=8, epsilon=1.0)",
    "CustomMechanism": "dict(rule=W['rule'][0], utility=W['utility'][0], types=range(3))",
    "DiscreteCosts": "dict(values=[1.0, 2.0], probabilities=[0.5, 0.5])",
    "DiscreteGaussianMechanism.release": "dict(values=[1, 2], rng=0)",
    "DiscreteLaplaceMechanism.release": "dict(values=[1, 2], rng=0)",
    "ErrorLaw": "dict(shifts=[0.0, 1.0], weights=[0.5, 0.5], scale=1.0)",
    "FairQuery": "dict(budget=1.0, epsilon=0.5)",
    "FiniteDistribution": "dict(log_probabilities=np.log([0.5, 0.5]))",
    "KaryResponse.respond": "dict(answers=[0, 1, 2], rng=0)",
    "KaryResponse.estimator_variance": "dict(true_counts=[1, 2, 3])",
    "WarnerResponse.respond": "dict(answers=[0, 1], rng=0)",
    "WarnerResponse.output_distribution": "dict(answer=1)",
    "Market": "dict(values=[[0.9, 0.2], [0.5, 0.6]], supply=[1, 1])",
    "MixtureCosts": "dict(laws=W['cost_laws'][0], weights=[0.5, 0.5])",
    "PopulationLaw": "dict(bit_rate=0.5, costs=W['cost_law'][0])",
    "PrivacyPopulation": "dict(bits=[0, 1], costs=[0.5, 0.25])",
    "Profile": "dict(type_indices=[0, 1], n_types=2)",
    "binned": "dict(sampler=W['sampler'][0], edges=[0.0, 1.0, 2.0])",
    "correlated_uniform_law": "dict(rho=0.5)",
    "cost_audit": "dict(mechanism=W['survey_mechanism'][0], costs=[0.1, 0.5, 0.9])",
    "envy_free_accuracy": "dict(costs=[0.1, 0.5, 0.9], alpha=0.3)",
    "envy_free_budget": "dict(costs=[0.1, 0.5, 0.9], budget=1.0)",
    "noisy_max_law": "dict(queries=[1.0, 0.0], scale=1.0)",
    "sparse_vector_law": "dict(queries=[1.0, 0.0], threshold=0.5, threshold_scale=1.0, query_scale=1.0)",
    "pricing_environment": "dict(prices=[0.25, 0.5, 1.0])",
    "selection_privacy_loss": "dict(law=W['population_law'][0], thresholds=[0.5, 0.25], bought=[1, 0])",
    "truthfulness_audit": "dict(mechanism=W['commitment'][0], profile=W['profile'][0])",
    "gain_curve": "dict(build=lambda q: CustomMechanism(rule=W['rule'][0], utility=W['utility'][0], "
    "types=range(3)), values=[0.0, 0.5], n=2, profiles='all')",
    "gain_curve_figure": "dict(curve=gain_curve(lambda q: CustomMechanism(rule=W['rule'][0], "
    "utility=W['utility'][0], types=range(3)), [0.0, 0.5], n=2, profiles='all'))",
    "samples_for_power": "dict(gain=0.25, sd=1.0)",
    "audit_privacy": "dict(mechanism=W['audited_mechanism'][1], neighbours=[(0, 1)], samples=1000, rng=0)",
    "AccuracyAuction.run": "dict(costs=[0.1, 0.5, 0.9, 0.3, 0.2, 0.7])",
    "FairQuery.run": "dict(costs=[0.1, 0.5, 0.9])",
    "AnonymousGame.evaluation_method": "dict(evaluation='auto')",
    "AnonymousGame.expected_payoffs": "dict(strategy=np.full((2, 2), 0.5))",
    "AnonymousGame.payoffs": "dict(histograms=[[1, 2], [2, 1]])",
    "AnonymousGame.with_players": "dict(players=[1, 3])",
    **{
        f"AuctionPricing.{m}": "dict(profile=made.environment.profile(made.environment.types[[0, 1, 2]]))"
        for m in (
            "distribution",
            "expected_objective",
            "run",
            "type_space_deviation_utilities",
            "deviation_utilities",
        )
    },
    "CommitmentMechanism.forced_utility": "dict(true_types=[0, 1])",
    "KaryResponse.output_distribution": "dict(answer=1)",
    "Market.sold": "dict(assignment=[0, -1])",
    "Market.welfare": "dict(assignment=[0, -1])",
    "PopulationLaw.posterior_one": "dict(costs=[0.5, 0.25])",
    "PopulationLaw.law_given": "dict(bit=1)",
    "AnonymousGame.check_strategy": "dict(strategy=np.full((2, 2), 0.5))",
    "CommitmentMechanism.forced_loss": "dict(true_types=[0, 1])",
    "KaryResponse.estimate_counts": "dict(reports=[0, 1, 2])",
    "WarnerResponse.estimate_counts": "dict(reports=[0, 1])",
    "Market.is_feasible": "dict(assignment=[0, -1])",
    "CongestionGame": "{f: getattr(W['game'][0], f) for f in ('costs', 'incidence', 'action_class', "
    "'demand')}",
    "RoutingGame": "{f: getattr(W['model'][0], f) for f in ('network', 'origins', 'destinations', "
    "'demand')}",
    "RoutingNetwork": "{f: getattr(W['network'][0], f) for f in ('labels', 'tail', 'head', 'costs', "
    "'zones')}",
    "PolynomialCosts.subset": "dict(index=[0])",
    "Population.check_within": "dict(low=0.0, high=1.0)",
    "Neighbouring": "dict(kind='replace')",
    "PrivacyGuarantee.under": "dict(neighbouring='replace')",
    "RDPCurve": "dict(kind='zcdp', parameter=0.5)",
    "Neighbouring.described": "dict(detail='one record replaced')",
    "Neighbouring.same_relation": "dict(other=Neighbouring('replace'))",
    "PrivateMediator.publisher": "dict(links=3, resources=3)",
    "benchmark_mechanism": "dict(name='laplace')",
    "clopper_pearson": "dict(successes=3, trials=10, confidence=0.95)",
    "cost_law": "dict(spec=W['cost_law'][0])",
    "dominant_affordable": "dict(environment=W['environment'][0], n_agents=3)",
    "dominant_least_q": "dict(exponential=W['exponential'][0], commitment=W['commitment'][0], n_agents=2)",
    "dominant_profile_count": "dict(n_agents=3, n_types=4)",
    "misreport_audit_of_law": "dict(law=W['auction'][0].price_law([0.5, 0.25]), epsilon=1.0, values=[0.5, 0.25], "
    "bids=[0.5, 0.25])",
    "privacy_audit_of_law": "dict(law=W['auction'][0].price_law([0.5, 0.25]), epsilon=1.0, bids=[0.5, 0.25])",
    "neighbouring_inputs": "dict(length=3)",
    "theorem_q": "dict(epsilon=1.0, gap=W['gap'][0], utility_range=1.0)",
    "release_law": "dict(outcome=W['survey_outcome'][0], bits=[0, 1, 0, 1, 1, 0], edges=[-10.0, 0.0, "
    "10.0])",
    "audit_incentives": "dict(mediator=W['mediator'][0], model=W['model'][1], players=[2], rng=0)",
    "equilibrium_violations": "dict(market=W['market'][0], assignment=[0, 1, -1], prices=[0.1, 0.1])",
    "from_congestion": "dict(game=CongestionGame.from_action_lists(PolynomialCosts([1.0, 0.5], [0.0, 0.5]), "
    "[[[0], [1]]], [3]))",
    "RoutingGame.public_paths": "dict(k=2)",
    "price_of_anarchy": "dict(equilibrium=user_equilibrium(W['game'][0]), "
    "optimum=system_optimum(W['game'][0]))",
    "pure_regret": "dict(game=W['game'][0], counts=np.ones(W['game'][0].num_actions))",
    "audit_black_box": "dict(sampler=W['sampler'][0], neighbours=[(0, 1)], samples=1000, rng=0)",
    "privacy_aware_audit": "dict(mechanism=W['commitment'][0], profile=W['profile'][0], valuation=0.5)",
    "privacy_aware_custom_audit": "dict(mechanism=W['custom'][1], profile=[0, 1], valuation=0.5)",
}
#: Entry points the walk does not call, and why.
NOT_WALKED = {
    "Environment": "built by the *_environment constructors, walked here",
}
#: Methods the walk does not call, and why.
METHODS_NOT_WALKED = {
    **{
        f"CustomMechanism.{m}": "a helper of the audit engine, given the checked profiles it enumerates"
        for m in (
            "canonical",
            "check_anonymity",
            "check_n",
            "check_neutrality",
            "classes",
            "expected_utility",
            "indices",
            "law",
            "neighbouring_reports",
            "orbit_others",
            "output_distribution",
            "paid",
            "profiles",
            "random_profile",
            "role",
            "roles_of",
            "space",
            "type_index",
        )
    },
    "FairQuery.affordable": "a vectorised predicate the run and the audit evaluate on checked costs",
    **{
        f"CongestionGame.{m}": "takes arrays shaped by the game (loads, flows, actions): walked through the "
        "equilibria, the mediator and the fuzz above"
        for m in (
            "action_costs",
            "all_or_nothing",
            "class_argmin",
            "loads",
            "overlap",
            "potential",
            "spread",
            "total_cost",
            "with_actions",
            "with_costs",
            "with_demand",
        )
    },
    **{
        f"RoutingGame.{m}": "takes path sets and trees of the network: walked through the equilibria and the "
        "fuzz above"
        for m in (
            "add_shortest_paths",
            "new_columns",
            "shortest_path_trees",
            "shortest_paths",
            "with_demand",
        )
    },
    **{
        f"RoutingNetwork.{m}": "takes node labels and link weights of the network: walked through the equilibria"
        for m in ("node", "shortest_path_trees", "shortest_paths", "sink")
    },
}


def _numeric(p: inspect.Parameter) -> bool:
    base = p.name.rstrip("_")
    if base in POSITIVE | PROBABILITY | COUNT:
        return True
    if isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
        return True
    return str(p.annotation) in ("float", "int", "float | None", "int | None")


def _plain(p: inspect.Parameter, owner: str, module: str, objects: dict[str, list[Any]]) -> Any:
    """A valid value by the name table (the first world object for a Ref), or
    ``inspect.Parameter.empty``."""
    name, annotation = p.name.rstrip("_"), str(p.annotation)
    ref = (
        module_ref(module, name) or OVERRIDES.get((owner, name)) or (name if name in REFS else None)
    )
    if ref:
        return (objects.get(ref) or [None])[0]
    for names, value in (
        (PROBABILITY, 0.1),
        (COUNT, 3),
        (POSITIVE, 0.5),
        (MATRIX, [[0.5, 0.25], [0.2, 0.9]]),
        (ARRAY, [0.5, 0.25]),
    ):
        if name in names:
            return value
    if "ArrayLike" in annotation:
        return [0.5, 0.25]
    return inspect.Parameter.empty


def _walk_one(
    fn, owner: str, module: str, objects: dict[str, list[Any]], found: list[str], made: Any = None
) -> Any:
    namespace = {
        "W": objects,
        "np": np,
        "made": made,
        **{n: getattr(m, n) for m in MODULES for n in m.__all__},
    }
    if owner in BASELINES:
        kwargs = eval(BASELINES[owner], namespace)  # noqa: S307 - a fixed expression of this file
    else:
        kwargs = {}
        for p in parameters(fn):
            if p.default is inspect.Parameter.empty:
                kwargs[p.name] = _plain(p, owner, module, objects)
                if kwargs[p.name] is inspect.Parameter.empty:
                    found.append(f"{owner}: no valid call known (add one to BASELINES)")
                    return None
    try:
        result = fn(**kwargs)
    except Exception as exc:  # noqa: BLE001
        found.append(f"{owner}: the baseline call fails: {type(exc).__name__}: {str(exc)[:200]}")
        return None
    from dpgames.validation import ValidationError

    for p in parameters(fn):
        if not _numeric(p):
            continue
        for label, value in NOT_NUMBERS.items():
            if (owner, p.name, label) in ACCEPTED:
                continue
            try:
                fn(**{**kwargs, p.name: value})
            except ValidationError as error:
                if (
                    not re.search(rf"\b{p.name}\b", error.field)
                    and (owner, p.name) not in FIELD_ALIASES
                ):
                    found.append(f"{owner}({p.name}={value!r}): the error names {error.field!r}")
            except Exception as exc:  # noqa: BLE001
                found.append(f"{owner}({p.name}={value!r}): {type(exc).__name__}: {str(exc)[:200]}")
            else:
                found.append(f"{owner}({p.name}={value!r}) is accepted")
    return result


def walk(target: str) -> list[str]:
    """What the walk finds wrong with one entry point and the methods of what it returns (run in a
    child)."""
    objects, fn, found = world(), ENTRY_POINTS[target], []
    made = _walk_one(fn, target, fn.__module__, objects, found)
    if inspect.isclass(fn) and made is not None:
        for method in public_members(fn):
            member = inspect.getattr_static(fn, method)
            if (
                callable(member)
                and not isinstance(member, property)
                and f"{target}.{method}" not in METHODS_NOT_WALKED
            ):
                _walk_one(
                    getattr(made, method), f"{target}.{method}", fn.__module__, objects, found, made
                )
    return found


#: Documented acceptances: (entry point, parameter, value) -> where the documentation says so.
ACCEPTED = {
    **{
        (
            owner,
            "epsilon",
            "inf",
        ): "epsilon = inf is no privacy (a point mass); documented on the parameter"
        for owner in (
            "PrivacyGuarantee",
            "GaussianMechanism.delta_for_epsilon",
            "audit_finite",
            "gaussian_delta",
            "hockey_stick_divergence",
            "laplace_delta",
            "worst_case_radius",
            "audit_black_box",
            "audit_privacy",
        )
    },
    **{
        (
            owner,
            name,
            "a string",
        ): "an exact rational parameter of dpgames.privacy.discrete: 'p/q' text is its exact form"
        for owner, name in (
            ("DiscreteGaussianMechanism", "sigma_squared"),
            ("DiscreteLaplaceMechanism", "epsilon"),
            ("sample_discrete_gaussian", "sigma_squared"),
            ("sample_discrete_laplace", "scale"),
        )
    },
}
#: The error names the argument differently on purpose: (entry point, parameter) -> the name it
#: uses.
FIELD_ALIASES = {
    ("PrivateMediator", "rho"): "epsilon or rho (give exactly one)",
    ("AnonymousMediator", "rho"): "epsilon or rho (give exactly one)",
    ("hockey_stick_divergence", "q"): "other (the second law)",
    ("PrivacyGuarantee.for_group", "k"): "group size k",
    ("BinaryTreeCounter", "rho"): "epsilon or rho (give exactly one)",
}


@pytest.mark.parametrize("target", sorted(set(ENTRY_POINTS) - set(NOT_WALKED)))
def test_numeric_parameters_refuse_strings_bools_nan_and_inf(target):
    """Each numeric parameter given ``"0.5"``, ``True``, NaN and inf, the other arguments valid: a
    :class:`~dpgames.validation.ValidationError` naming that parameter, or an acceptance listed in
    ACCEPTED."""
    if target == "load_tntp" and not (TNTP_DIR / "Braess").exists():
        pytest.skip("TNTP data not found")
    world()
    outcome = run_isolated(lambda: walk(target), timeout=60)
    assert outcome.status == "returned", f"{outcome.status}: {outcome.value!r:.1500}"
    assert not outcome.value, "\n".join(outcome.value)
