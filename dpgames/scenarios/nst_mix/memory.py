"""The ``nst_mix`` kind's memory and work model: what a run holds and computes, from the spec's
sizes alone (see :mod:`dpgames.scenarios.budget`)."""

from __future__ import annotations

from collections import Counter

from dpgames.analysis.nst import _BLOCK_ELEMENTS as _NST_BLOCK, DOMINANT_LIMIT, PRUNE_LIMIT
from dpgames.mechanisms.commitment import _BLOCK_ELEMENTS as _GAP_BLOCK
from dpgames.scenarios import budget
from dpgames.scenarios.nst_mix.spec import FacilitySetting, NSTSpec, PricingSetting


def estimate(spec: NSTSpec) -> list[budget.Estimate]:
    """Peak memory and work (see :mod:`dpgames.scenarios.budget`): the environment, the audits, the
    commitment gap and the dominant-strategy least q (when affordable) at the population's size and
    again at each size of ``[scaling]``.

    Parameters
    ----------
    spec : NSTSpec

    Returns
    -------
    list of Estimate
    """
    setting = spec.environment
    pricing = isinstance(setting, PricingSetting)
    out = []
    for n, times in Counter([spec.agents, *spec.scaling]).items():
        # a size listed twice is run twice
        size = setting.size(spec.epsilon, budget.size(n))
        label = f"n = {budget.fmt_count(budget.size(n))}"
        terms = size.reactions if setting.reactions == "forced" else 1.0
        if isinstance(setting, FacilitySetting):
            who = setting.population
            fewest, most = budget.class_range(
                who.distribution, budget.size(n), size.types, who.values, who.weights
            )
        else:  # values uniform on [0, 1] put at least 1 / types on each midpoint, as uniform draws would
            uniform = setting.population.distribution == "uniform" and setting.types is None
            fewest, most = budget.class_range(
                "uniform" if uniform else "", budget.size(n), size.types
            )
        stages = budget.environment_estimates(
            size,
            [n],
            label,
            terms,
            (PRICING_BYTES_PER_AGENT if pricing else budget.FLOAT * 8),
            fewest=fewest,
            most=most,
        )
        out += budget.repeated(stages + _mix_estimates(size, budget.size(n), label), times)
    return out


#: Bytes per bidder of a pricing run: the values drawn (and, at a [scaling] size, redrawn, joined
#: and permuted), their nearest grid types, the bids' sorted law and the profile.
PRICING_BYTES_PER_AGENT = 16 * budget.FLOAT
#: Work of the dominant-strategy least q's pruning per (true type, lie) pair and pair of outcomes
#: (its bound over every law, a closed form on outcomes x outcomes arrays: 0.3 to 0.6 ms of CPU time
#: measured per type pair at 64 outcomes), when ``types^2 x outcomes^2 <=``
#: :data:`~dpgames.analysis.nst.PRUNE_LIMIT`.
PRUNE_OPS = 200.0
#: Rows of the others' multisets the dominant-strategy least q takes at once
#: (dpgames.analysis.nst._multisets).
MULTISET_BLOCK = 4096.0
#: Floats per block of the dominant-strategy scan (dpgames.analysis.nst) and of the commitment gap
#: with more than two reactions (dpgames.mechanisms.commitment).
DOMINANT_BLOCK = float(_NST_BLOCK)
GAP_BLOCK = float(_GAP_BLOCK)


def _mix_estimates(size: budget.EnvironmentSize, n: float, label: str) -> list[budget.Estimate]:
    """The stages only the mix has, the utility tables held: the commitment gap (more than 2
    reactions: blocks of types x types x outcomes floats, up to ``GAP_BLOCK``) and the
    dominant-strategy least ``q`` when affordable (:data:`~dpgames.analysis.nst.DOMINANT_LIMIT`):
    four arrays of ``MULTISET_BLOCK`` multisets of the others x types x outcomes, up to a quarter of
    its block (the laws after the reports and their rows for the pairs still live, taken as one per
    true type: the bound of every law prunes most), and the multisets themselves as Python
    tuples."""
    t, o, r = size.types, size.outcomes, size.reactions
    held = 6 * budget.FLOAT * t * o * r + budget.ENVIRONMENT_RUN_OVERHEAD
    out = []
    if r > 2:
        out.append(
            budget.Estimate(
                f"{label}: the commitment gap",
                held + budget.FLOAT * min(t * t * o, max(GAP_BLOCK, t * o)),
                t * t * o * r,
            )
        )
    profiles = budget.combinations(n - 1 + t - 1, t - 1)
    if profiles * t * t * o <= DOMINANT_LIMIT:
        rows = min(profiles, MULTISET_BLOCK)
        pruning = PRUNE_OPS * t * t * o * o if t * t * o * o <= PRUNE_LIMIT else 0.0
        out.append(
            budget.Estimate(
                f"{label}: the dominant-strategy least q ({budget.fmt_count(profiles)} profiles "
                "of the others)",
                held
                + 4 * budget.FLOAT * min(rows * t * o, DOMINANT_BLOCK / 4)
                + rows * (100 + 40 * t),
                10 * profiles * t * o + pruning,
            )
        )
    return out
