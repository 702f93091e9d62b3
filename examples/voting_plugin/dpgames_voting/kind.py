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
from dpgames.scenarios import Result, Table
from dpgames.scenarios.invariants import at_most, register
from dpgames_voting.mechanism import (
    least_dictator_weight,
    utility_matrix,
    vote_law,
    voting_mechanism,
)

DESCRIPTION = "A private median vote (exponential mechanism on welfare) mixed with a random dictator"
EXAMPLES = sorted((Path(__file__).parent / "scenarios").glob("*.toml"))

MAX_ALTERNATIVES = 51   # the exact audits enumerate every (peak, lie) pair: m^2 laws
MAX_VOTERS = 5000       # each law is computed from the n reports


# Invariants dpgames checks on every Result of this kind (beside its own: every figure finite ...).  The
# privacy loss is infinite when the random dictator has weight > 0: a dictator's outcome reveals her peak.
register("voting", [at_most("max_misreport_gain", "gain_bound", "no lie gains more than (1 - q)(e^eps - 1)")],
         infinite_ok=["max_privacy_loss"])

@dataclass(frozen=True)
class VotingSpec:
    alternatives: int
    peaks: tuple[int, ...] | None    # given in the file, else drawn:
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
    peaks = pop.value("peaks", lambda x: isinstance(x, list) and 1 <= len(x) <= MAX_VOTERS and all(
        isinstance(e, int) and not isinstance(e, bool) and 0 <= e < m for e in x),
        f"a list of 1 to {MAX_VOTERS} whole numbers in [0, {m - 1}]", None)
    n, distribution, p = (len(peaks), "listed", 0.5) if peaks is not None else _drawn(pop)
    pop.done()
    mech = top.table("mechanism", required=True)
    epsilon = mech.number("epsilon", low=0, low_open=True)
    dictator = mech.number("dictator", 0.0, low=0, high=1)
    mech.done()
    return VotingSpec(m, None if peaks is None else tuple(peaks), n, distribution, p, epsilon, dictator)


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


def run(spec: VotingSpec, seed: np.random.SeedSequence) -> Result:
    population_seed, draw_seed = seed.spawn(2)
    peaks = draw_peaks(spec, np.random.default_rng(population_seed))
    m, eps, q = spec.alternatives, spec.epsilon, spec.dictator
    counts = np.bincount(peaks, minlength=m)
    law = vote_law(counts, eps, q)
    welfare = counts @ utility_matrix(m)
    median = int(np.sort(peaks)[(peaks.size - 1) // 2])
    mech = voting_mechanism(m, eps, q)
    audit = dpgames.truthfulness_audit(mech, peaks.tolist())
    worst = audit.worst_case
    privacy = dpgames.audit_finite(lambda c: dpgames.FiniteDistribution.from_probabilities(
        vote_law(np.asarray(c), eps, q)), _one_voter_changes(counts))
    bound = min(1.0, (1.0 - q) * float(np.expm1(min(eps, 700.0))))   # utilities in [0, 1]: no gain exceeds 1
    metrics = {
        "n": (peaks.size, "voters"),
        "alternatives": (m, "alternatives m"),
        "epsilon": (eps, "epsilon (the exponential mechanism is eps-DP)"),
        "dictator": (q, "random dictator weight q"),
        "median_peak": (median, "median peak (the welfare-optimal alternative)"),
        "expected_welfare": (float(law @ welfare), "expected welfare sum_i u_i (exact)"),
        "optimal_welfare": (float(welfare.max()), "largest welfare (the median)"),
        "welfare_ratio": (float(law @ welfare / welfare.max()), "expected / largest welfare"),
        "expected_distance_to_median": (float(law @ np.abs(np.arange(m) - median)),
                                        "expected distance of the outcome to the median (exact)"),
        "max_misreport_gain": (audit.max_gain, "largest gain from misreporting, any voter, any lie (exact; >= 0)"),
        "misreport_margin": (audit.margin, "the best lie's loss: how strictly truth wins (exact)"),
        "worst_true_type": (worst["true_type"], "  attained by a voter with peak"),
        "worst_lie": (worst["lie"], "  reporting"),
        "gain_bound": (bound, "bound min(1, (1 - q)(e^eps - 1)) on any gain (eps-DP, utilities in [0, 1])"),
        "gains_within_bound": (audit.is_truthful(bound), "largest gain within the bound"),
        "truthful": (audit.is_truthful(), "exactly truthful at this profile"),
        "least_dictator_weight": (least_dictator_weight(peaks, m, eps),
                                  "least q making the mix exactly truthful here (exact)"),
        "max_privacy_loss": (privacy.epsilon,
                             "largest privacy loss, any one voter's change (exact; <= eps when q = 0)"),
        "sampled_outcome": (int(np.random.default_rng(draw_seed).choice(m, p=law)), "one draw: the outcome"),
    }
    tables = {"outcome_law": {"alternative": np.arange(m), "probability": law,
                              "exponential_mechanism": vote_law(counts, eps, 0.0), "voters_with_peak": counts}}
    guarantee = f"{eps:g}-DP" if q == 0 else f"not DP (random dictator weight {q:g}); exponential part {eps:g}-DP"
    return Result("voting", "", {k: v for k, (v, _) in metrics.items()},
                  {k: label for k, (_, label) in metrics.items()}, tables, {"guarantee": guarantee})


def _one_voter_changes(counts: np.ndarray) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every profile one voter's change of report makes from ``counts`` (as pairs of count tuples)."""
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
