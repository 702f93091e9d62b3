"""The built-in mechanisms rewritten as plain user functions for ``dpgames.CustomMechanism``.

Each wrapper uses only a built-in's PUBLIC behaviour: its exact output law
(``distribution(profile)``, ``price_distribution(bids)``) and the environment's utility array
``utility[t, s, r]``.  Reactions, valuations and payments are recomputed here, plainly, from their
definitions (the best reaction is the first reaction of largest utility; Huang & Kannan's payment is
``E[v_i] - (ln Z - ln Z_-i) / beta``). A custom audit of a wrapper recomputes the law for every
deviation (one ``rule`` call per report tuple), so it is an independent oracle of the built-ins'
fast audits (tilted laws, class rows).

Outcome labels carry everything a utility needs: where reactions are FORCED to the reported type,
the label is ``(s, r_0, ..., r_{n-1})`` (or ``(branch, s, r_0, ...)`` in the NST mix) and the
utility takes the agent's index: ``u(t, label, agent) = utility[t, s, r_agent]``.
"""

from __future__ import annotations

import math

import numpy as np

from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.custom import CustomMechanism
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.environment import Environment
from dpgames.mechanisms.huang_kannan import HuangKannan
from dpgames.mechanisms.nst_mix import NSTMix
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism


class EnvironmentView:
    """Type labels <-> indices and the plain best reaction / utility of an environment."""

    def __init__(self, env: Environment):
        self.env = env
        self.labels = env.types.tolist()  # plain Python labels, in the env's order
        self.index = {label: i for i, label in enumerate(self.labels)}
        self.u = env.utility

    def indices(self, reports) -> list[int]:
        return [self.index[x] for x in reports]

    def profile(self, reports):
        return self.env.profile(
            np.array(self.labels, dtype=self.env.types.dtype)[self.indices(reports)]
        )

    def reaction(self, t: int, s: int) -> int:
        """The first reaction of largest utility for type index ``t`` at outcome ``s``."""
        row = [float(x) for x in self.u[t, s]]
        return row.index(max(row))

    def best(self, label, s: int) -> float:
        return float(max(self.u[self.index[label], s]))

    def forced(self, label, s: int, reaction: int) -> float:
        return float(self.u[self.index[label], s, reaction])

    def reactions(self, reports, s: int) -> tuple[int, ...]:
        return tuple(self.reaction(t, s) for t in self.indices(reports))


def law_of(distribution) -> list[tuple[int, float]]:
    """``(outcome index, probability)`` pairs of a FiniteDistribution, zero-probability ones
    dropped."""
    return [(s, float(p)) for s, p in enumerate(distribution.probabilities) if p > 0]


def add(law: dict, label, p: float) -> None:
    law[label] = law.get(label, 0.0) + p


def exponential_custom(
    em: ObjectiveExponentialMechanism, anonymous: bool = False
) -> CustomMechanism:
    """The exponential mechanism: free reactions -> outcome ``s``, utility ``max_r u(t, s, r)``;
    forced reactions -> outcome ``(s, r(t'_0, s), ...)``, utility ``u(t, s, r_agent)``."""
    view = EnvironmentView(em.environment)
    if em.reactions == "free":

        def rule(reports):
            return {s: p for s, p in law_of(em.distribution(view.profile(reports)))}

        def utility(t, s):
            return view.best(t, s)

        return CustomMechanism(rule, utility, view.labels, anonymous=anonymous, name="EM (free)")

    def forced_rule(reports):
        return {
            (s, *view.reactions(reports, s)): p
            for s, p in law_of(em.distribution(view.profile(reports)))
        }

    def forced_utility(t, outcome, agent):
        return view.forced(t, outcome[0], outcome[1 + agent])

    return CustomMechanism(forced_rule, forced_utility, view.labels, name="EM (forced)")


def vectorized_exponential_custom(em: ObjectiveExponentialMechanism) -> CustomMechanism:
    """:func:`exponential_custom` with ``vectorized=True``: the utility takes an array of type
    labels and a list of outcomes (and, forced, an array of agents) and returns the whole table at
    once."""
    scalar = exponential_custom(em)
    view = EnvironmentView(em.environment)
    best = em.environment.utility.max(axis=2)

    def rows(types) -> list[int]:
        return [view.index[t] for t in np.asarray(types).tolist()]

    if em.reactions == "free":

        def utility(types, outcomes):
            return best[np.ix_(rows(types), list(outcomes))]

        return CustomMechanism(scalar.rule, utility, view.labels, vectorized=True)

    def forced_utility(types, outcomes, agents):
        t = rows(types)
        return np.array(
            [
                [
                    [view.forced(view.labels[a], o[0], o[1 + int(agent)]) for o in outcomes]
                    for a in t
                ]
                for agent in np.asarray(agents).tolist()
            ]
        )

    return CustomMechanism(scalar.rule, forced_utility, view.labels, vectorized=True)


def commitment_custom(cm: CommitmentMechanism) -> CustomMechanism:
    """``M^P``: ``s`` uniform on the punishing set, every agent forced to her report's reaction."""
    view = EnvironmentView(cm.environment)
    punishing = [int(s) for s in cm.punishing]

    def rule(reports):
        return {(s, *view.reactions(reports, s)): 1 / len(punishing) for s in punishing}

    def utility(t, outcome, agent):
        return view.forced(t, outcome[0], outcome[1 + agent])

    return CustomMechanism(rule, utility, view.labels, name="M^P")


def mix_custom(mix: NSTMix) -> CustomMechanism:
    """``(1 - q) EM + q M^P``; labels ``("em", s)`` (free), ``("em", s, r...)`` (forced EM) or
    ``("mp", s, r...)``."""
    view = EnvironmentView(mix.environment)
    em, q = mix.exponential, mix.q
    punishing = [int(s) for s in mix.commitment.punishing]

    def rule(reports):
        law: dict = {}
        if q < 1:
            for s, p in law_of(em.distribution(view.profile(reports))):
                label = (
                    ("em", s) if em.reactions == "free" else ("em", s, *view.reactions(reports, s))
                )
                add(law, label, (1 - q) * p)
        if q > 0:
            for s in punishing:
                add(law, ("mp", s, *view.reactions(reports, s)), q / len(punishing))
        return law

    def utility(t, outcome, agent):
        if len(outcome) == 2:
            return view.best(t, outcome[1])
        return view.forced(t, outcome[1], outcome[2 + agent])

    return CustomMechanism(rule, utility, view.labels, name=f"NST mix q={q:g}")


def hk_valuations(env: Environment) -> np.ndarray:
    """``v[t, s] = max_r u(t, s, r)`` shifted so that the smallest is 0 when some are negative."""
    best = env.utility.max(axis=2)
    return best - min(0.0, float(best.min()))


def _log_sum_exp(xs) -> float:
    top = max(xs)
    return top + math.log(sum(math.exp(x - top) for x in xs))


def hk_payments_plain(values: list[list[float]], offset: list[float], beta: float) -> list[float]:
    """``p_i = E[v_i] - (ln Z - ln Z_-i) / beta`` with ``Z = sum_s exp(beta (sum_j v_j(s) +
    offset(s)))``."""
    k = len(offset)
    total = [sum(v[s] for v in values) + offset[s] for s in range(k)]
    log_z = _log_sum_exp([beta * w for w in total])
    law = [math.exp(beta * w - log_z) for w in total]
    out = []
    for v in values:
        log_z_without = _log_sum_exp([beta * (total[s] - v[s]) for s in range(k)])
        out.append(sum(p * v[s] for s, p in enumerate(law)) - (log_z - log_z_without) / beta)
    return out


def huang_kannan_custom(hk: HuangKannan, anonymous: bool = False) -> CustomMechanism:
    """Huang-Kannan: outcome ``s`` from the built-in law, utility ``v[t, s]``, payments recomputed
    plainly."""
    view = EnvironmentView(hk.environment)
    v = hk_valuations(hk.environment)
    offset = hk.environment.offset.tolist()

    def rule(reports):
        return {s: p for s, p in law_of(hk.distribution(view.profile(reports)))}

    def utility(t, s):
        return float(v[view.index[t], s])

    def payments(reports):
        return hk_payments_plain([v[i].tolist() for i in view.indices(reports)], offset, hk.beta)

    return CustomMechanism(
        rule, utility, view.labels, payments=payments, anonymous=anonymous, name="Huang-Kannan"
    )


def auction_custom(auction: DigitalGoodsAuction, n: int) -> tuple[CustomMechanism, list[float]]:
    """The digital-goods auction on a price grid for ``n`` bidders, types = reports = ``{0} + grid``
    (exhaustive: a report between two prices is worth the lower one).  Outcome ``(p, buys_0, ...)``
    with ``buys_i = [b_i >= p]`` (the auction sells by the bid); utility ``(v - p)
    1{buys_agent}``."""
    grid = [0.0] + auction.prices_for(n).tolist()

    def rule(reports):
        law = auction.price_distribution(np.array(reports, dtype=float))
        return {
            (float(p), *(b >= p for b in reports)): float(q)
            for p, q in zip(law.outcomes.tolist(), law.probabilities)
            if q > 0
        }

    def utility(value, outcome, agent):
        price = outcome[0]
        return value - price if outcome[1 + agent] else 0.0

    return CustomMechanism(rule, utility, grid, name="digital goods"), grid
