"""The ``nst_mix`` kind's run objects: the population drawn from the seed, the exponential and
commitment mechanisms built on it, and the exact NST report."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpgames.analysis.nst import NSTReport, nst_report
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.digital_goods import DigitalGoodsAuction
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.nst_mix import balanced_epsilon
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.pricing import AuctionPricing
from dpgames.scenarios.nst_mix.spec import NSTSpec, PricingSetting
from dpgames.scenarios.streams import child_streams
from dpgames.validation import ValidationError


def _nearest(grid: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of the nearest grid value (the lower one on ties) for each value."""
    if grid.size == 1:
        return np.zeros(values.size, dtype=np.intp)
    hi = np.clip(np.searchsorted(grid, values), 1, grid.size - 1)
    lo = hi - 1
    return np.where(np.abs(values - grid[lo]) <= np.abs(grid[hi] - values), lo, hi)


def facility_environment(spec: NSTSpec) -> Environment | None:
    """The facility-location environment, built once per run (None for pricing, whose environment
    depends on the number of bidders).

    Parameters
    ----------
    spec : NSTSpec

    Returns
    -------
    Environment or None
    """
    setting = spec.environment
    return None if isinstance(setting, PricingSetting) else setting.facility.build()


def draw_population(
    spec: NSTSpec, env: Environment | None, n: int | None, seed: np.random.SeedSequence
) -> np.ndarray:
    """The agents, drawn from ``seed``: bidders' values (pricing) or the agents' locations
    (facility).

    Parameters
    ----------
    spec : NSTSpec
    env : Environment or None
        The facility environment (:func:`facility_environment`); None for pricing.
    n : int or None
        The number of agents (None: the population's own size).  A pricing population is drawn again
        at size ``n`` (a fixed list is repeated) and put in random order.
    seed : numpy.random.SeedSequence
        The population's stream.

    Returns
    -------
    numpy.ndarray
    """
    rng = np.random.default_rng(seed)
    setting = spec.environment
    if not isinstance(setting, PricingSetting):
        return setting.population.draw(env if env is not None else setting.facility.build(), rng, n)
    values = setting.population.draw(rng).values
    if n is not None:
        copies = [values] + [
            setting.population.draw(rng).values for _ in range(-(-n // values.size) - 1)
        ]
        values = rng.permutation(np.concatenate(copies))[:n]
    return values


def exponential_at(
    spec: NSTSpec, env: Environment | None, agents: np.ndarray, epsilon: float
) -> tuple[ObjectiveExponentialMechanism, Profile, float]:
    """The exponential mechanism at ``epsilon`` on ``agents`` (:func:`draw_population`), their
    profile and the largest move of a value onto the type grid (0 for a facility).

    Parameters
    ----------
    spec : NSTSpec
    env : Environment or None
        The facility environment; None for pricing (built here from the bidders).
    agents : numpy.ndarray
    epsilon : float

    Returns
    -------
    (ObjectiveExponentialMechanism, Profile, float)

    Raises
    ------
    ScenarioError
        The mechanism cannot be built from the fields (naming the field its error names).
    """
    setting = spec.environment
    if not isinstance(setting, PricingSetting):
        env = env if env is not None else setting.facility.build()
        with spec.mechanism.fields():
            em = ObjectiveExponentialMechanism(env, epsilon, reactions=setting.reactions)
        return em, env.profile(agents), 0.0
    try:
        auction = DigitalGoodsAuction(epsilon, setting.prices, setting.alpha)
        pricing = AuctionPricing(auction, agents.size, setting.types, setting.reactions)
    except (
        ValidationError
    ) as exc:  # the type grid is a field of [environment], the rest of [mechanism]
        where = setting.where if exc.field == "types" else spec.mechanism
        raise where.error(exc.field, exc.reason) from None
    grid = pricing.environment.types
    nearest = _nearest(grid, agents)
    return (
        pricing,
        Profile(nearest, pricing.environment.n_types),
        float(np.max(np.abs(grid[nearest] - agents))),
    )


def commitment(spec: NSTSpec, env: Environment) -> CommitmentMechanism:
    """The commitment mechanism ``M^P`` on ``env`` with the spec's punishing outcomes.

    Parameters
    ----------
    spec : NSTSpec
    env : Environment

    Returns
    -------
    CommitmentMechanism
    """
    with spec.mechanism.fields():
        return CommitmentMechanism(
            env, None if spec.punishing is None else np.asarray(spec.punishing, dtype=np.intp)
        )


def mechanisms(
    spec: NSTSpec,
    env: Environment | None,
    n: int | None,
    seed: np.random.SeedSequence,
    epsilon: float | None,
) -> tuple[ObjectiveExponentialMechanism, Profile, float]:
    """The population drawn once from ``seed`` and the exponential mechanism on it at ``epsilon``;
    None (``"balanced"``): at the eps balancing the two losses (Nissim, Smorodinsky & Tennenholtz
    2012), found from the commitment gap of the environment built at eps = 1 on the same agents.

    Parameters
    ----------
    spec : NSTSpec
    env : Environment or None
    n : int or None
    seed : numpy.random.SeedSequence
    epsilon : float or None

    Returns
    -------
    (ObjectiveExponentialMechanism, Profile, float)

    Raises
    ------
    ScenarioError
        ``"balanced"`` with gamma = 0 (no eps balances the losses), naming ``mechanism.epsilon``.
    """
    agents = draw_population(spec, env, n, seed)
    if epsilon is not None:
        return exponential_at(spec, env, agents, epsilon)
    probe, profile, _ = exponential_at(spec, env, agents, 1.0)
    probe_env = probe.environment
    gap = commitment(spec, probe_env).gap()
    if gap.gamma <= 0:
        raise spec.mechanism.error("epsilon", f"'balanced' needs gamma > 0; {gap.diagnosis}")
    eps = balanced_epsilon(
        profile.n,
        probe_env.n_outcomes,
        gap,
        probe.mechanism.sensitivity,
        probe_env.utility_range,
        probe_env.objective_range,
    )
    return exponential_at(spec, env, agents, eps)


@dataclass(frozen=True)
class NSTRun:
    """An ``nst_mix`` run before its metrics: the spec and root seed, the exponential and commitment
    mechanisms, the agents' profile, the largest move of a value onto the type grid, and the exact
    NST report.  The app and ``dpgames run`` both start from it.

    Examples
    --------
    >>> from dpgames.scenarios import Scenario
    >>> built = Scenario.from_dict({"kind": "nst_mix", "seed": 1, "mechanism": {"epsilon": 1.0},
    ...     "environment": {"type": "facility_location", "graph": "line", "nodes": 4, "k": 2},
    ...     "population": {"distribution": "uniform", "n": 6}}).parse().build()
    >>> built.profile.n, built.report.gap.gamma, built.report.least.q
    (6, 1.0, 0.0)
    """

    spec: NSTSpec
    seed: np.random.SeedSequence
    exponential: ObjectiveExponentialMechanism
    commitment: CommitmentMechanism
    profile: Profile
    moved: float
    report: NSTReport


def build(spec: NSTSpec, seed: np.random.SeedSequence) -> NSTRun:
    """The mechanisms, profile and NST report of a run with root ``seed`` (see
    :mod:`dpgames.scenarios.kind`): the population from the seed's first child stream (its second is
    the ``[scaling]`` table's).

    Parameters
    ----------
    spec : NSTSpec
    seed : numpy.random.SeedSequence
        The run's root seed (not advanced).

    Returns
    -------
    NSTRun

    Raises
    ------
    ScenarioError
        The environment or the mechanisms cannot be built from the spec (e.g. ``"balanced"`` eps
        with gamma = 0), naming the field.
    """
    em, profile, moved = mechanisms(
        spec, facility_environment(spec), None, child_streams(seed, 2)[0], spec.epsilon
    )
    cm = commitment(spec, em.environment)
    return NSTRun(spec, seed, em, cm, profile, moved, nst_report(em, cm, profile))
