"""Scenario kind ``voting``: a private median vote on a line, mixed with a random dictator.

```toml
kind = "voting"
[election]
alternatives = 11          # m positions 0 .. m-1 on a line (2 .. 51)
[population]
n = 101                    # voters (1 .. 5000), peaks drawn from the seed:
distribution = "uniform"   # "uniform" on 0 .. m-1, or "binomial": Binomial(m - 1, p)
p = 0.5                    # binomial only
# peaks = [0, 3, 3, 7]     # or the voters' peaks themselves (then no n / distribution)
[mechanism]
epsilon = 0.5              # > 0: the exponential mechanism's privacy parameter
dictator = 0.0             # q in [0, 1]: the random dictator's weight in the mix
```
See :mod:`dpgames_voting.mechanism` for the mechanism and its guarantees.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import dpgames
from dpgames.scenarios import Metrics, MetricSet, Result, Table
from dpgames.scenarios.budget import Estimate
from dpgames.scenarios.invariants import Invariants, at_most, may_be_infinite
from dpgames.scenarios.streams import child_streams
from dpgames_voting.mechanism import (
    least_dictator_weight,
    utility_matrix,
    vote_law,
    voting_mechanism,
)

DESCRIPTION = (
    "A private median vote (exponential mechanism on welfare) mixed with a random dictator"
)
EXAMPLES = tuple(sorted((Path(__file__).parent / "scenarios").glob("*.toml")))

MAX_ALTERNATIVES = 51  # the exact audits enumerate every (peak, lie) pair: m^2 laws
MAX_VOTERS = 5000  # each law is computed from the n reports

# Every metric a run records, declared once: its name, meaning, unit and the theorem a bound comes
# from.
METRICS = MetricSet()
N = METRICS.add("n", "voters", "voters")
ALTERNATIVES = METRICS.add(
    "alternatives", "alternatives m (positions 0 .. m-1 on a line)", "alternatives"
)
EPSILON = METRICS.add(
    "epsilon", "the exponential mechanism's privacy parameter", "", "McSherry & Talwar 2007"
)
DICTATOR = METRICS.add("dictator", "the random dictator's weight q in the mix", "probability")
MEDIAN_PEAK = METRICS.add(
    "median_peak", "the median peak: the welfare-optimal alternative", "alternative"
)
EXPECTED_WELFARE = METRICS.add("expected_welfare", "expected welfare sum_i u_i (exact)", "utility")
OPTIMAL_WELFARE = METRICS.add("optimal_welfare", "largest welfare (at the median)", "utility")
WELFARE_RATIO = METRICS.add("welfare_ratio", "expected / largest welfare")
EXPECTED_DISTANCE_TO_MEDIAN = METRICS.add(
    "expected_distance_to_median",
    "expected distance of the outcome to the median (exact)",
    "alternatives",
)
MAX_MISREPORT_GAIN = METRICS.add(
    "max_misreport_gain",
    "largest gain from misreporting, any voter, any lie (exact)",
    "utility (in [0, 1])",
)
MISREPORT_MARGIN = METRICS.add(
    "misreport_margin", "the best lie's loss: how strictly truth wins (exact)", "utility"
)
WORST_TRUE_TYPE = METRICS.add(
    "worst_true_type", "the peak of the voter attaining max_misreport_gain", "alternative"
)
WORST_LIE = METRICS.add("worst_lie", "that voter's best lie", "alternative")
GAIN_BOUND = METRICS.add(
    "gain_bound",
    "min(1, (1 - q)(e^eps - 1)): the bound on any gain",
    "utility",
    "Dwork & Roth Prop 10.1 (eps-DP, utilities in [0, 1])",
)
GAINS_WITHIN_BOUND = METRICS.add("gains_within_bound", "the largest gain is within gain_bound")
TRUTHFUL = METRICS.add("truthful", "exactly truthful at this profile")
LEAST_DICTATOR_WEIGHT = METRICS.add(
    "least_dictator_weight",
    "the least q making the mix exactly truthful here (exact)",
    "probability",
    "Nissim, Smorodinsky & Tennenholtz 2012",
)
MAX_PRIVACY_LOSS = METRICS.add(
    "max_privacy_loss", "largest privacy loss, any one voter's change (exact)", "nats"
)
SAMPLED_OUTCOME = METRICS.add("sampled_outcome", "one draw of the outcome", "alternative")

# What dpgames checks on every Result of this kind (beside its own rules: every figure finite ...).
# The privacy loss is infinite when the random dictator has weight > 0: a dictator's outcome reveals
# her peak.
INVARIANTS = Invariants(
    rules=[at_most(MAX_MISREPORT_GAIN, GAIN_BOUND, "no lie gains more than (1 - q)(e^eps - 1)")],
    infinite_ok=may_be_infinite(
        MAX_PRIVACY_LOSS, statement="a random dictator (q > 0) reveals one voter's peak"
    ),
)


def data_roots() -> tuple[Path, ...]:
    """No data of its own: peaks are given or drawn from the seed."""
    return ()


@dataclass(frozen=True)
class VotingSpec:
    alternatives: int
    peaks: tuple[int, ...] | None  # given in the file, else drawn:
    n: int
    distribution: str
    p: float
    epsilon: float
    dictator: float


def parse(top: Table) -> VotingSpec:
    election = top.table("election", required=True)
    m = election.integer("alternatives", low=2, high=MAX_ALTERNATIVES)
    election.done()
    pop = top.table("population", required=True)
    peaks = pop.value(
        "peaks",
        lambda x: (
            isinstance(x, list)
            and 1 <= len(x) <= MAX_VOTERS
            and all(isinstance(e, int) and not isinstance(e, bool) and 0 <= e < m for e in x)
        ),
        f"a list of 1 to {MAX_VOTERS} whole numbers in [0, {m - 1}]",
        None,
    )
    n, distribution, p = (len(peaks), "listed", 0.5) if peaks is not None else _drawn(pop)
    pop.done()
    mech = top.table("mechanism", required=True)
    epsilon = mech.number("epsilon", low=0, low_open=True)
    dictator = mech.number("dictator", 0.0, low=0, high=1)
    mech.done()
    return VotingSpec(
        m, None if peaks is None else tuple(peaks), n, distribution, p, epsilon, dictator
    )


def _drawn(pop: Table) -> tuple[int, str, float]:
    n = pop.integer("n", low=1, high=MAX_VOTERS)
    distribution = pop.choice("distribution", ("uniform", "binomial"), "uniform")
    p = pop.number("p", 0.5, low=0, high=1) if distribution == "binomial" else 0.5
    return n, distribution, p


def draw_peaks(spec: VotingSpec, rng: np.random.Generator) -> np.ndarray:
    """The voters' peaks: the listed ones, else ``n`` draws of the population's distribution."""
    if spec.peaks is not None:
        return np.asarray(spec.peaks, dtype=np.intp)
    if spec.distribution == "binomial":
        return rng.binomial(spec.alternatives - 1, spec.p, size=spec.n).astype(np.intp)
    return rng.integers(0, spec.alternatives, size=spec.n, dtype=np.intp)


def estimate(spec: VotingSpec) -> list[Estimate]:
    """Peak memory and work, counted (not calibrated: a run is small by the field limits): the two
    exact audits compute a law of m outcomes for each of at most m^2 (peak, lie) pairs, from the n
    reports."""
    m = float(spec.alternatives)
    return [Estimate("the exact audits", 8.0 * 2 * m**3 + 1e6, 2 * m**3 + spec.n)]


@dataclass(frozen=True)
class VotingRun:
    """A run: the spec, the voters' peaks (drawn from the seed's first child stream) and the second
    child stream, from which one outcome is drawn."""

    spec: VotingSpec
    peaks: np.ndarray
    draw_seed: np.random.SeedSequence


def build(spec: VotingSpec, seed: np.random.SeedSequence) -> VotingRun:
    population_seed, draw_seed = child_streams(seed, 2)  # the caller's seed is not advanced
    return VotingRun(spec, draw_peaks(spec, np.random.default_rng(population_seed)), draw_seed)


def run(built: VotingRun) -> Result:
    spec, peaks, draw_seed = built.spec, built.peaks, built.draw_seed
    m, eps, q = spec.alternatives, spec.epsilon, spec.dictator
    counts = np.bincount(peaks, minlength=m)
    law = vote_law(counts, eps, q)
    welfare = counts @ utility_matrix(m)
    median = int(np.sort(peaks)[(peaks.size - 1) // 2])
    mech = voting_mechanism(m, eps, q)
    audit = dpgames.truthfulness_audit(mech, peaks.tolist())
    worst = audit.worst_case
    privacy = dpgames.audit_finite(
        lambda c: dpgames.FiniteDistribution.from_probabilities(vote_law(np.asarray(c), eps, q)),
        _one_voter_changes(counts),
    )
    # utilities in [0, 1]: no gain exceeds 1
    bound = min(1.0, (1.0 - q) * float(np.expm1(min(eps, 700.0))))
    out = Metrics()
    out.put(N, peaks.size, "voters")
    out.put(ALTERNATIVES, m, "alternatives m")
    out.put(EPSILON, eps, "epsilon (the exponential mechanism is eps-DP)")
    out.put(DICTATOR, q, "random dictator weight q")
    out.put(MEDIAN_PEAK, median, "median peak (the welfare-optimal alternative)")
    out.put(EXPECTED_WELFARE, float(law @ welfare), "expected welfare sum_i u_i (exact)")
    out.put(OPTIMAL_WELFARE, float(welfare.max()), "largest welfare (the median)")
    out.put(WELFARE_RATIO, float(law @ welfare / welfare.max()), "expected / largest welfare")
    out.put(
        EXPECTED_DISTANCE_TO_MEDIAN,
        float(law @ np.abs(np.arange(m) - median)),
        "expected distance of the outcome to the median (exact)",
    )
    out.put(
        MAX_MISREPORT_GAIN,
        audit.max_gain,
        "largest gain from misreporting, any voter, any lie (exact; >= 0)",
    )
    out.put(MISREPORT_MARGIN, audit.margin, "the best lie's loss: how strictly truth wins (exact)")
    out.put(WORST_TRUE_TYPE, worst["true_type"], "  attained by a voter with peak")
    out.put(WORST_LIE, worst["lie"], "  reporting")
    out.put(
        GAIN_BOUND,
        bound,
        "bound min(1, (1 - q)(e^eps - 1)) on any gain (eps-DP, utilities in [0, 1])",
    )
    out.put(GAINS_WITHIN_BOUND, audit.is_truthful(bound), "largest gain within the bound")
    out.put(TRUTHFUL, audit.is_truthful(), "exactly truthful at this profile")
    out.put(
        LEAST_DICTATOR_WEIGHT,
        least_dictator_weight(peaks, m, eps),
        "least q making the mix exactly truthful here (exact)",
    )
    out.put(
        MAX_PRIVACY_LOSS,
        privacy.epsilon,
        "largest privacy loss, any one voter's change (exact; <= eps when q = 0)",
    )
    out.put(
        SAMPLED_OUTCOME,
        int(np.random.default_rng(draw_seed).choice(m, p=law)),
        "one draw: the outcome",
    )
    tables = {
        "outcome_law": {
            "alternative": np.arange(m),
            "probability": law,
            "exponential_mechanism": vote_law(counts, eps, 0.0),
            "voters_with_peak": counts,
        }
    }
    guarantee = (
        f"{eps:g}-DP"
        if q == 0
        else f"not DP (random dictator weight {q:g}); exponential part {eps:g}-DP"
    )
    return out.result("voting", tables, {"guarantee": guarantee})


def _one_voter_changes(counts: np.ndarray) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every profile one voter's change of report makes from ``counts`` (as pairs of count
    tuples)."""
    m = counts.size
    here = tuple(int(c) for c in counts)
    pairs = []
    for t in np.flatnonzero(counts):
        for lie in range(m):
            if lie != t:
                changed = counts.copy()
                changed[t] -= 1
                changed[lie] += 1
                pairs.append((here, tuple(int(c) for c in changed)))
    return pairs
