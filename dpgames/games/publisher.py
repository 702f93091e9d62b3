"""The billboard of the private mediator: each round's resource loads, published with noise.

The mediator (:mod:`dpgames.games.mediator`) publishes the loads ``y_t = sum_k n_k A_k^T p_t,k``
once per round; everything else it computes is a function of what was published and of each player's
own report (billboard lemma, Hsu et al. 2014), so the published loads carry the whole privacy cost.

**Neighbouring relation**: one player's reported type changes.  **Sensitivity**: her contribution
``q = A_k^T p_t,k`` lies in ``[0, 1]^m`` with ``||q||_1 <= L`` (``L``: the public bound on the
resources of an action), so a changed report moves each round's loads by ``||q - q'||_2 <=
sqrt(2L)``.

* :class:`GaussianPublisher`: ``N(0, sigma^2)`` per coordinate and round, ``sigma = sqrt(2L) sqrt(T
  / (2 rho))``: ``rho / T``-zCDP per round (Bun & Steinke 2016, Prop. 1.6), ``rho``-zCDP over ``T``
  rounds (Lemma 2.3).
* :class:`TreePublisher`: the binary-tree counter (:mod:`dpgames.privacy.tree_counter`) releases the
  running sums with every round's vector allowed to change (user-level relation, ``rho``-zCDP); the
  round's loads are differences of consecutive sums.  It needs more noise than per-round Gaussian
  noise here and is offered for comparison.
* :class:`ExactPublisher`: no noise, no privacy (the non-private dynamics).

The guarantee is stated as ``(epsilon, delta)`` by the accountant's best conversion.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dpgames.privacy import Accountant, BinaryTreeCounter, Neighbouring, PrivacyGuarantee
from dpgames.validation import choice, positive, positive_int, probability

#: The largest bound ``L`` on the links of a path accepted (integers beyond 2^53 are not exact
#: floats).
MAX_LINKS = 2**53


def load_relation(links: int) -> str:
    """The neighbouring relation of the published loads, with the l2 sensitivity it implies.

    Parameters
    ----------
    links : int
        ``L``, the public bound on the number of resources of any action.

    Returns
    -------
    str
        A sentence naming the relation, ``sqrt(2L)`` and ``L``.
    """
    return (
        f"one player's reported type changes (each round's loads move by <= sqrt(2L) = "
        f"{math.sqrt(2 * links):.4g} in l2, L = {links})"
    )


class Publisher:
    """Publishes one round's loads; ``sigma`` is the noise's standard deviation per coordinate (for
    the tree counter: per tree node) and ``guarantee`` the privacy of all ``rounds`` publications
    together."""

    sigma: float
    guarantee: PrivacyGuarantee

    def publish(self, loads: np.ndarray) -> np.ndarray:
        """The published version of this round's true ``loads`` (one entry per resource)."""
        raise NotImplementedError


class ExactPublisher(Publisher):
    """Publishes the true loads: no noise, ``epsilon = inf``.

    Examples
    --------
    >>> import numpy as np
    >>> pub = ExactPublisher(links=3)
    >>> pub.publish(np.array([1.0, 2.0])).tolist(), pub.sigma, pub.guarantee.epsilon
    ([1.0, 2.0], 0.0, inf)
    """

    def __init__(self, links: int):
        self.sigma = 0.0
        self.guarantee = PrivacyGuarantee(
            math.inf, 0.0, Neighbouring.REPLACE_ONE.described(load_relation(links))
        )

    def publish(self, loads: np.ndarray) -> np.ndarray:
        """The loads as they are (no noise: the mediator without privacy)."""
        return loads


class GaussianPublisher(Publisher):
    """Adds ``N(0, sigma^2)`` to every coordinate of every round's loads, ``sigma = sqrt(2L) sqrt(T
    / (2 rho))`` (``rho / T``-zCDP per round, ``rho``-zCDP in all; see the module docstring).

    Parameters
    ----------
    rounds : int
        ``T``, the number of publications the guarantee covers.
    rho : float
        The total zCDP budget (> 0).
    delta : float
        The ``delta`` at which the guarantee is converted to ``(epsilon, delta)``.
    links : int
        ``L``, the public bound on the resources of an action.
    rng : numpy.random.Generator
        The noise source (drawn from in :meth:`publish`, one vector per call).

    Raises
    ------
    ValidationError
        If ``rounds`` or ``links`` is not a positive integer, ``rho`` not > 0 or ``delta`` not in
        [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> pub = GaussianPublisher(
    ...     rounds=100, rho=0.5, delta=1e-6, links=2, rng=np.random.default_rng(0)
    ... )
    >>> round(pub.sigma, 6)  # sqrt(2 * 2) * sqrt(100 / (2 * 0.5))
    20.0
    >>> pub.publish(np.zeros(3)).shape
    (3,)
    >>> round(pub.guarantee.epsilon, 3) > 0
    True
    """

    def __init__(self, rounds: int, rho: float, delta: float, links: int, rng: np.random.Generator):
        rounds, rho = positive_int("rounds", rounds), positive("rho", rho)
        links, delta = positive_int("links", links, high=MAX_LINKS), probability("delta", delta)
        self.sigma = math.sqrt(2 * links) * math.sqrt(rounds / (2 * rho))
        relation = Neighbouring.REPLACE_ONE.described(load_relation(links))
        ledger = Accountant().spend(
            "published loads, one round", PrivacyGuarantee.from_zcdp(rho / rounds, relation), rounds
        )
        self.guarantee = ledger.best_total(delta)
        self._rng = rng

    def publish(self, loads: np.ndarray) -> np.ndarray:
        """The loads plus independent Gaussian noise of standard deviation ``sigma`` per
        resource."""
        return loads + self._rng.normal(0.0, self.sigma, loads.shape)


class TreePublisher(Publisher):
    """Publishes the differences of the binary-tree counter's noisy running sums of the loads
    (user-level relation: every round's vector may change; ``rho``-zCDP in all).

    Parameters
    ----------
    rounds, rho, delta, links, rng
        As for :class:`GaussianPublisher`.
    resources : int
        The number of coordinates of the loads.

    Raises
    ------
    ValidationError
        As for :class:`GaussianPublisher`, or if ``resources`` is not a positive integer.

    Examples
    --------
    >>> import numpy as np
    >>> pub = TreePublisher(
    ...     rounds=4, rho=1.0, delta=1e-6, links=1, resources=2, rng=np.random.default_rng(0)
    ... )
    >>> [pub.publish(np.ones(2)).shape for _ in range(4)]
    [(2,), (2,), (2,), (2,)]
    """

    def __init__(
        self,
        rounds: int,
        rho: float,
        delta: float,
        links: int,
        resources: int,
        rng: np.random.Generator,
    ):
        rounds, rho = positive_int("rounds", rounds), positive("rho", rho)
        links, delta = positive_int("links", links, high=MAX_LINKS), probability("delta", delta)
        counter = BinaryTreeCounter(
            rounds, rho=rho, sensitivity=math.sqrt(2 * links), relation="user"
        )
        self._online = counter.start(positive_int("resources", resources), rng)
        self._last = np.zeros(resources)
        self.sigma = counter.noise_scale
        tree = counter.guarantee
        relation = Neighbouring.REPLACE_ONE.described(
            f"{load_relation(links)}; for the counter: {tree.neighbouring}"
        )
        stated = replace(tree, neighbouring=relation)
        self.guarantee = Accountant().spend("tree counter of the loads", stated).best_total(delta)

    def publish(self, loads: np.ndarray) -> np.ndarray:
        """This round's loads as the tree counter's running total releases them (the difference of
        totals)."""
        total = self._online.update(loads)
        step, self._last = total - self._last, total
        return step


def make_publisher(
    noise: str,
    *,
    rounds: int,
    rho: float,
    delta: float,
    links: int,
    resources: int,
    rng: np.random.Generator,
) -> Publisher:
    """The publisher for a mediator's ``noise`` setting.

    Parameters
    ----------
    noise : {"gaussian", "tree", "none"}
        Which publisher (see the module docstring).
    rounds, rho, delta, links, resources, rng
        As for :class:`GaussianPublisher` and :class:`TreePublisher` (``rho`` is ignored for
        ``"none"``).

    Returns
    -------
    Publisher

    Raises
    ------
    ValidationError
        If ``noise`` is none of the three, or a parameter is out of range.
    """
    noise = choice("noise", noise, ("gaussian", "tree", "none"))
    if noise == "none":
        return ExactPublisher(positive_int("links", links, high=MAX_LINKS))
    if noise == "gaussian":
        return GaussianPublisher(rounds, rho, delta, links, rng)
    return TreePublisher(rounds, rho, delta, links, resources, rng)
