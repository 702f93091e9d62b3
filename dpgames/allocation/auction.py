"""The ascending-price auction with copies, private through binary-tree demand counters.

**Source and what is followed.**  Hsu, Huang, Roth, Roughgarden & Wu (2014), "Private matchings and
allocations" (STOC 2014; arXiv 1311.2828).  Only the paper's abstract and introduction were
available to us, not its algorithm box or theorems: the abstract states the problem ("each agent is
told what good to receive", the full allocation is not published), that "if there are several
identical copies of each good, it is possible to efficiently and accurately solve the matching
problem while guaranteeing joint differential privacy", and its key words "Ascending Auction".  What
follows is therefore **dpgames' variant** of an ascending auction driven by private counters, with
its own proofs (below) and numerical tests; no constant or bound of the paper is used or printed.
The holding rule is that of the standard ascending auction for unit demand (Demange, Gale &
Sotomayor 1986; Kelso & Crawford 1982): a bidder keeps her good until she is outbid, prices rise
only on over-demanded goods.

**The auction** (round-synchronous, one public *ask* ``a_j = l_j alpha`` per good, level ``l_j``,
from 0). Each round:

1. every bidder holding no good and not out bids on her favourite good at the asks,
   ``argmax_j v_ij - a_j`` (lowest index on ties), if its utility is ``>= 0``; otherwise she is out
   for good (asks only rise).  A bid on ``j`` is made at the ask ``b_i = a_j`` of its round: her
   price if she keeps the good;
2. each good's counter receives the round's number of bids on it; the *level count* of good ``j`` is
   its (noisy) number of bids since its level last rose;
3. every good whose level count exceeds ``s_j + 1/2 - margin`` (and whose ask is at most 1) rises by
   one level (*over-demand*);
4. a holder of ``j`` is **displaced** (she bids again next round) iff she bid below the current ask
   and the number of bids on ``j`` after hers exceeds ``s_j - 1/2 - margin``: first in, first out,
   and only new bids at a higher price outbid her.  Non-private, "bids after hers" is exact (bids of
   later rounds, then later bidders of her round by index).  Private, it is the counter's noisy
   count of later rounds plus ``(1 - tau_it) N - 1/2``, ``N`` the noisy count of her own round ``t``
   and ``tau_it`` uniform on ``[0, 1)``, her own coin for that bid (:func:`round_coins`: a lottery
   for her place in her round, fresh for every bid and independent of all values).

The non-private auction counts exactly and stops when nobody is left to bid: within ``n (B + 1)``
rounds (``B`` below), as every round with a bidder left spends one of her at most ``B`` bids or her
exit.  The private auction runs a fixed public number of rounds ``T`` (default ``k (L + 1) + 2``,
``L = floor(1 / alpha)``) with the counts of :class:`~dpgames.privacy.BinaryTreeCounter` (Laplace
noise, ``k`` coordinates, horizon ``T``); a longer horizon lets more displacement chains settle but
widens the margin (the counter's error grows with the tree's depth).  In the noiseless limit the
lottery of rule 4 stands in for the exact order of a round, so a few copies can be held twice
(trimmed from :attr:`AllocationOutcome.served`): the exact theorem below is the non-private
auction's.

**Bids per bidder (dpgames' proof).**  Bidder ``i`` stops holding ``j`` only when displaced, which
needs the ask of ``j`` above her bid; asks never fall; so her successive bids on ``j`` are at
strictly rising levels, each with ``a_j <= v_ij <= 1``: at most ``L + 1`` bids on each good, ``B = k
(L + 1)`` in all. This holds for both rules (exact and noisy), whatever the noise.

**Privacy (joint, dpgames' proof).**  Fix the public history (the counters' outputs, hence asks and
displacements) and every bidder's coin: every other bidder's bids are then functions of the public
history, her values and her coin, so changing one bidder's values changes the bid stream by at most
``2B`` unit bids, and the counter's node sums by at most ``2B`` times the number of levels ``L_T``
of the tree, in l1.  The counter is built with ``sensitivity = 2B`` (node sensitivity ``2B L_T``),
so the public history is ``epsilon``-DP in any one bidder's values (the Laplace mechanism on the
node sums, composed adaptively).  Each bidder's own good and price are functions of the public
history, her values and her coin (billboard construction), so the outcome is ``(epsilon,
0)``-**jointly** DP.

**Over-demand and the fix.**  With ``margin = "auto"`` both thresholds are lowered by ``E``, twice
the counter's simultaneous error bound at ``beta``
(:meth:`~dpgames.privacy.BinaryTreeCounter.max_error_bound`), so a good over-demanded at its level
rises, and holders who should be outbid are, whenever every running sum is within its bound
(probability ``>= 1 - beta``).  ``margin = 0`` shows the over-demand without it. Oversold copies are
not handed out: :attr:`AllocationOutcome.served` keeps each good's first ``s_j`` holders (earliest
bids, then lowest index).

**Theorem (non-private: Walrasian up to alpha, dpgames' proof).**  At the end of the non-private
auction, with prices the final asks ``a``:

(i)  no good is oversold, and every good with an unsold copy is at the reserve ``a_j = 0``.  A
    good's
     level rises only when it has more than ``s_j`` bids at its level, none displaced (only lower
     bids are); then its holders are exactly its last ``s_j`` bids (FIFO), and a new bid displaces
     exactly one older holder, so from its first rise on it stays full; before it, it has at most
     ``s_j`` holders.
(ii) every holder ``i`` of ``g`` paid ``b_i in {a_g - alpha, a_g}`` (its last ``s_g`` bids are at
its last
     two levels: the level before the last rise had more than ``s_g`` bids), and
     ``v_ig - b_i >= max(0, max_j v_ij - a_j)`` (``g`` was her favourite at the asks of her round,
     with utility ``>= 0``; asks only rose since, hers not above ``b_i``); so at the asks her demand
     gap is at most ``alpha``, and 0 at her own price.  Every bidder out has ``v_ij < a_j`` for all
     ``j``.
(iii) **welfare.**  For any feasible allocation ``mu*``, summing (ii) over holders and
     ``0 >= v_{i,mu*(i)} - a_{mu*(i)}`` over the rest: ``W - sum_i b_i >= OPT - sum_j s_j a_j``, so
     ``W >= OPT - alpha x (holders who paid a_g - alpha) >= OPT - alpha x copies sold``, and by (i)
     ``sum_j s_j a_j - sum_i b_i`` is exactly that count times ``alpha``.

**Welfare certificate (any run, dpgames' proof).**  Every served bidder satisfies (ii)'s inequality
in every run (private or not), so the same sum gives ``W >= OPT - [sum_j s_j a_j - sum_served b_i +
sum_unserved max(0, max_j v_ij - a_j)]`` (:attr:`AllocationOutcome.welfare_certificate`), exact from
the run alone; non-private it equals ``alpha`` times the holders at the lower level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from dpgames.allocation.market import Market
from dpgames.privacy.accounting import Accountant
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.privacy.neighbouring import Neighbouring
from dpgames.privacy.rng import RNGLike, as_generator
from dpgames.privacy.tree_counter import BinaryTreeCounter
from dpgames.validation import (
    ValidationError,
    non_negative,
    positive,
    positive_int,
    probability,
)

#: The most goods the auction's bounds are stated for (a market's values are n x k floats: far
#: beyond memory).
MAX_GOODS = 10**9
#: The smallest price increment accepted (a run takes of the order of ``1 / alpha`` rounds).
MIN_ALPHA = 1e-4


def top_level(alpha: float) -> int:
    """``L``: the largest ``l`` with ``l * alpha <= 1`` in floating point (prices ``l * alpha``
    above 1 attract no bid).

    Parameters
    ----------
    alpha : float
        In ``(0, 1]`` (validated by the caller).

    Returns
    -------
    int
    """
    level = math.floor(1.0 / alpha)
    while (level + 1) * alpha <= 1.0:
        level += 1
    while level > 0 and level * alpha > 1.0:
        level -= 1
    return level


@dataclass(frozen=True, eq=False)
class AllocationOutcome:
    """What an :class:`AscendingAuction` run returns.  Bidder ``i`` is told only ``assignment[i]``
    and the price of that good; the price path is public.

    Attributes
    ----------
    market : Market
    assignment : numpy.ndarray
        ``(n,)``: the good each bidder holds at the end (``-1``: none); may oversell without the
        fix.
    served : numpy.ndarray
        ``(n,)``: the feasible allocation handed out (each good's first ``s_j`` holders).
    prices : numpy.ndarray
        ``(k,)``: final asks (public).
    paid : numpy.ndarray
        ``(n,)``: the price each bidder pays for her good (her bid: the ask when she bid; 0 without
        one).
    price_path : numpy.ndarray
        ``(rounds + 1, k)``: asks before round 1 and after each round.
    cumulative : numpy.ndarray
        ``(rounds, k)``: each good's (noisy) number of bids up to each round (the counters'
        outputs).
    coin_key : int or None
        The key of the bidders' coins (private run; ``None`` non-private): bidder ``i``'s coin for a
        bid in round ``t`` is ``round_coins(coin_key, t, n)[i]``, drawn independently of all values.
    bids : numpy.ndarray
        ``(rounds, k)``: bids on each good in each round (the counters' input).
    level_counts : numpy.ndarray
        ``(rounds, k)``: each good's (noisy) level count, as the rise rule saw it.
    threshold : numpy.ndarray
        ``(k,)``: ``s_j + 1/2 - margin``.
    margin : float
    rounds : int
        Rounds run.
    bids_per_bidder : numpy.ndarray
        ``(n,)``: how many bids each bidder made.
    bid_bound : int
        ``B = k (L + 1)``, the most bids any bidder can make.
    guarantee : PrivacyGuarantee or None
        ``epsilon``-joint DP (``None``: non-private).
    accountant : Accountant or None
        The ledger of the run's privacy spending.

    Examples
    --------
    >>> out = AscendingAuction(0.1).run(Market([[0.9, 0.2], [0.3, 0.8], [0.7, 0.1]], supply=1))
    >>> out.served.tolist(), out.prices.round(2).tolist(), out.utilities().round(2).tolist()
    ([0, 1, -1], [0.7, 0.2], [0.2, 0.6, 0.0])
    >>> (
    ...     out.paid.round(2).tolist(),
    ...     round(out.welfare, 2),
    ...     round(out.welfare_certificate, 2),
    ...     out.rounds,
    ... )
    ([0.7, 0.2, 0.0], 1.7, 0.0, 19)
    """

    market: Market
    assignment: np.ndarray
    served: np.ndarray
    prices: np.ndarray
    paid: np.ndarray
    price_path: np.ndarray
    cumulative: np.ndarray
    coin_key: int | None
    bids: np.ndarray
    level_counts: np.ndarray
    threshold: np.ndarray
    margin: float
    rounds: int
    bids_per_bidder: np.ndarray
    bid_bound: int
    guarantee: PrivacyGuarantee | None
    accountant: Accountant | None

    @property
    def holders(self) -> np.ndarray:
        """Bidders holding each good at the end (``(k,)``; may exceed the supply without the
        fix)."""
        return self.market.sold(self.assignment)

    @property
    def oversold(self) -> np.ndarray:
        """``max(0, holders_j - s_j)`` for each good: the over-demand left at the end."""
        return np.maximum(self.holders - self.market.supply, 0)

    @property
    def welfare(self) -> float:
        """Welfare of the feasible allocation :attr:`served`."""
        return self.market.welfare(self.served)

    def utilities(self) -> np.ndarray:
        """Each bidder's utility ``v_{i,served(i)} - paid_i`` (0 without a good)."""
        u = np.zeros(self.market.n)
        idx = np.flatnonzero(self.served >= 0)
        u[idx] = self.market.values[idx, self.served[idx]] - self.paid[idx]
        return u

    @property
    def revenue(self) -> float:
        """What the served bidders pay in all."""
        return float(self.paid[self.served >= 0].sum())

    @property
    def welfare_certificate(self) -> float:
        """An exact bound from the run alone: ``welfare >= OPT - certificate`` with ``certificate =
        sum_j s_j a_j - sum_served paid_i + sum over unserved bidders of max(0, max_j v_ij - a_j)``,
        ``a`` the final asks (dpgames' proof, module docstring: each served bidder's utility at her
        price is at least her best utility at the asks; the unserved could gain at most their best
        utility)."""
        unserved = np.flatnonzero(self.served < 0)
        best = (
            (self.market.values[unserved] - self.prices).max(axis=1)
            if unserved.size
            else np.zeros(0)
        )
        return (
            float(np.dot(self.market.supply, self.prices))
            - self.revenue
            + float(np.maximum(best, 0.0).sum())
        )


class AscendingAuction:
    """The ascending-price auction with copies (dpgames' variant of Hsu et al. 2014; module
    docstring), non-private (``epsilon=None``) or with ``epsilon``-DP binary-tree counters (joint
    DP).

    Parameters
    ----------
    alpha : float
        Price increment, in ``[MIN_ALPHA, 1]`` (``MIN_ALPHA = 1e-4``).
    epsilon : float, optional
        Privacy of the counters (Laplace noise); ``None`` for the exact, non-private auction.
    margin : "auto" or float, default "auto"
        Lowers every threshold to ``s_j + 1/2 - margin``; ``"auto"``: twice the counter's
        simultaneous error bound at ``beta`` (0 when non-private).  ``0`` shows the over-demand
        before the fix.
    beta : float, default 0.05
        Failure probability of the fix, in ``(0, 1)``.
    rounds : int, optional
        Horizon ``T`` of the private auction (public); default ``k (L + 1) + 2``.

    Raises
    ------
    ValidationError
        On an ``alpha`` outside ``[MIN_ALPHA, 1]``, a bad ``epsilon``, ``margin``, ``beta`` or
        ``rounds``.

    Examples
    --------
    >>> market = Market([[0.9, 0.5], [0.8, 0.1], [0.7, 0.6]], supply=1)
    >>> out = AscendingAuction(alpha=0.05).run(market)
    >>> (
    ...     out.served.tolist(),
    ...     out.prices.round(2).tolist(),
    ...     out.paid.round(2).tolist(),
    ...     out.oversold.tolist(),
    ... )
    ([0, -1, 1], [0.85, 0.5], [0.85, 0.0, 0.5], [0, 0])
    >>> private = AscendingAuction(alpha=0.1, epsilon=1.0).run(
    ...     Market.random(200, 3, 50, rng=0), rng=1
    ... )
    >>> print(private.guarantee.epsilon, private.market.is_feasible(private.served))
    1.0 True
    """

    def __init__(
        self,
        alpha: float,
        epsilon: float | None = None,
        *,
        margin: float | str = "auto",
        beta: float = 0.05,
        rounds: int | None = None,
    ):
        self.alpha = positive("alpha", alpha)
        if not MIN_ALPHA <= self.alpha <= 1:
            raise ValidationError(
                "alpha",
                f"must be in [{MIN_ALPHA:g}, 1] (prices above 1 attract no bid; the auction "
                f"takes of the order of 1/alpha rounds), got {alpha!r}",
            )
        self.epsilon = None if epsilon is None else positive("epsilon", epsilon)
        if isinstance(margin, str):
            if margin != "auto":
                raise ValidationError("margin", f"must be 'auto' or a number >= 0, got {margin!r}")
            self.margin: float | str = margin
        else:
            self.margin = non_negative("margin", margin)
        self.beta = probability("beta", beta)
        self.rounds = None if rounds is None else positive_int("rounds", rounds, high=10**7)
        self.levels = top_level(self.alpha)

    def bid_bound(self, k: int) -> int:
        """``B = k (L + 1)``: the most bids one bidder can make with ``k`` goods.

        Parameters
        ----------
        k : int

        Returns
        -------
        int

        Raises
        ------
        ValidationError
            ``k`` not an integer in ``1 .. MAX_GOODS``.
        """
        return positive_int("k", k, high=MAX_GOODS) * (self.levels + 1)

    def horizon(self, k: int) -> int:
        """The number of rounds ``T`` of the private auction for ``k`` goods (``rounds`` if given,
        else ``k (L + 1) + 2``; the non-private auction stops when nobody is left to bid).

        Parameters
        ----------
        k : int

        Returns
        -------
        int

        Raises
        ------
        ValidationError
            ``k`` not an integer in ``1 .. MAX_GOODS``.
        """
        bids = self.bid_bound(k)
        return self.rounds if self.rounds is not None else bids + 2

    def counter(self, k: int) -> BinaryTreeCounter | None:
        """The demand counters' :class:`BinaryTreeCounter` for ``k`` goods (``None`` when
        non-private): horizon ``T``, Laplace noise, ``sensitivity = 2B`` (module docstring).

        Parameters
        ----------
        k : int

        Returns
        -------
        BinaryTreeCounter or None
        """
        horizon = self.horizon(k)
        if self.epsilon is None:
            return None
        return BinaryTreeCounter(horizon, epsilon=self.epsilon, sensitivity=2.0 * self.bid_bound(k))

    def margin_for(self, k: int) -> float:
        """The margin ``E`` subtracted from every threshold (module docstring).

        Parameters
        ----------
        k : int

        Returns
        -------
        float
        """
        counter = self.counter(k)  # (checks k)
        if self.margin != "auto":
            return float(self.margin)
        return 0.0 if counter is None else 2.0 * counter.max_error_bound(self.beta, dim=k)

    def guarantee(self, k: int) -> PrivacyGuarantee | None:
        """``epsilon``-joint DP in one bidder's values (``None`` when non-private).

        Parameters
        ----------
        k : int
            Number of goods (the guarantee does not depend on it; kept for a uniform interface).

        Returns
        -------
        PrivacyGuarantee or None
        """
        positive_int("k", k, high=MAX_GOODS)
        if self.epsilon is None:
            return None
        relation = Neighbouring.REPLACE_ONE.described(
            "one bidder's values change; joint DP: the goods told to all other bidders "
            "(billboard construction)"
        )
        return PrivacyGuarantee(self.epsilon, 0.0, relation)

    def run(self, market: Market, rng: RNGLike = None) -> AllocationOutcome:
        """Run the auction on ``market`` (the counters' noise from ``rng``; same ``rng``, same
        noise).

        Parameters
        ----------
        market : Market
        rng : Generator, int or None

        Returns
        -------
        AllocationOutcome

        Raises
        ------
        ValidationError
            If ``market`` is not a :class:`Market`.
        """
        if not isinstance(market, Market):
            raise ValidationError("market", f"must be a Market, got {type(market).__name__}")
        n, k = market.n, market.k
        counter = self.counter(k)
        generator = as_generator(rng)
        coin_key = None if counter is None else int(generator.integers(2**63))
        online = None if counter is None else counter.start(k, generator)
        horizon = self.horizon(k) if counter is not None else n * (self.bid_bound(k) + 1) + 1
        margin = self.margin_for(k)
        rise_at, outbid_at = market.supply + 0.5 - margin, market.supply - 0.5 - margin
        values = market.values
        level = np.zeros(k, dtype=np.int64)
        holding = np.full(n, -1, dtype=np.int64)
        bid_level = np.zeros(n, dtype=np.int64)
        bid_round = np.full(n, -1, dtype=np.int64)
        coins = np.zeros(n)  # private: each holder's coin for her bid
        # exact: each good's holders, first in first out
        queues = None if online is not None else _Queues(k)
        bids_made = np.zeros(n, dtype=np.int64)
        waiting = np.arange(n)
        cumulative = np.zeros(k)
        level_start = np.zeros(k)
        # history[t]: counts before round t (grown by doubling)
        history = np.zeros((min(horizon, 1024) + 1, k))
        paths, bid_rows, count_rows = [level.copy()], [], []
        for t in range(horizon):
            bids = np.zeros(k, dtype=np.int64)
            if waiting.size:
                utility = values[waiting] - level * self.alpha
                best = utility.argmax(axis=1)
                stays = utility[np.arange(waiting.size), best] >= 0
                bidders, goods = waiting[stays], best[stays]
                holding[bidders], bid_round[bidders], bid_level[bidders] = goods, t, level[goods]
                bids_made[bidders] += 1
                bids = np.bincount(goods, minlength=k)
                if queues is None:
                    coins[bidders] = round_coins(cast(int, coin_key), t, n)[bidders]
                else:
                    queues.push(bidders, goods, bids)
            cumulative = (
                cumulative + bids if online is None else np.array(online.update(bids), dtype=float)
            )
            if t + 2 > history.shape[0]:
                history = np.vstack([history, np.zeros_like(history)])
            history[t + 1] = cumulative
            counts = cumulative - level_start
            rise = (counts > rise_at) & (level <= self.levels)
            level = level + rise
            level_start = np.where(rise, cumulative, level_start)
            if queues is None:
                waiting = self._outbid(
                    holding, bid_level, bid_round, coins, level, history[: t + 2], outbid_at
                )
            else:
                waiting = queues.pop_outbid(bids > 0, rise, cumulative, level_start, outbid_at)
            holding[waiting] = -1
            bid_rows.append(bids)
            count_rows.append(counts)
            paths.append(level.copy())
            if online is None and not waiting.size:
                break
        served = _serve(holding, bid_round, market.supply)
        paid = np.where(served >= 0, bid_level * self.alpha, 0.0)
        guarantee = self.guarantee(k)
        accountant = (
            None
            if guarantee is None
            else Accountant().spend("ascending auction counters", guarantee)
        )
        return AllocationOutcome(
            market=market,
            assignment=holding,
            served=served,
            prices=level * self.alpha,
            paid=paid,
            price_path=np.array(paths) * self.alpha,
            cumulative=history[1 : len(bid_rows) + 1].copy(),
            coin_key=coin_key,
            bids=np.array(bid_rows),
            level_counts=np.array(count_rows, dtype=float),
            threshold=np.asarray(rise_at),
            margin=margin,
            rounds=len(bid_rows),
            bids_per_bidder=bids_made,
            bid_bound=self.bid_bound(k),
            guarantee=guarantee,
            accountant=accountant,
        )

    @staticmethod
    def _outbid(
        holding: np.ndarray,
        bid_level: np.ndarray,
        bid_round: np.ndarray,
        coins: np.ndarray,
        level: np.ndarray,
        history: np.ndarray,
        outbid_at: np.ndarray,
    ) -> np.ndarray:
        """The holders displaced this round in the private auction (rule 4 of the module docstring),
        sorted."""
        candidates = np.flatnonzero(holding >= 0)
        goods = holding[candidates]
        below = bid_level[candidates] < level[goods]
        candidates, goods = candidates[below], goods[below]
        rounds = bid_round[candidates]
        own = history[rounds + 1, goods] - history[rounds, goods]
        later = (
            history[-1, goods] - history[rounds + 1, goods] + (1.0 - coins[candidates]) * own - 0.5
        )
        return candidates[later > outbid_at[goods]]


class _Queues:
    """The exact auction's holders of each good, in the order of their bids (by round, then by
    index): the ``q``-th bid on good ``g`` is its bid number ``q``, and its holders are the bids
    from ``head[g]`` on (a holder leaves only when displaced, and rule 4 displaces the oldest
    first).

    Rule 4, exact: the holder of bid number ``q`` on ``g`` has ``total_g - q - 1`` bids after hers,
    and bid below the ask iff ``q < level_start_g`` (the bids on ``g`` before its level last rose);
    both conditions hold for a prefix of the queue, so a round displaces a prefix, found in O(1) per
    good and read in O(displaced): the round costs O(goods + bidders waiting + displaced), not
    O(holders)."""

    def __init__(self, k: int):
        self.bidders = [np.empty(0, dtype=np.int64) for _ in range(k)]
        self.size = [0] * k
        self.head = [0] * k

    def push(self, bidders: np.ndarray, goods: np.ndarray, bids: np.ndarray) -> None:
        """Append a round's bids (``bidders`` in index order, on ``goods``; ``bids`` per good) to
        the queues."""
        active = np.flatnonzero(bids)
        if active.size == 1:
            self._append(int(active[0]), bidders)
            return
        grouped = bidders[np.argsort(goods, kind="stable")]
        ends = np.cumsum(bids[active]).tolist()
        for g, first, last in zip(active.tolist(), [0, *ends[:-1]], ends):
            self._append(g, grouped[first:last])

    def _append(self, g: int, bidders: np.ndarray) -> None:
        buffer, used, m = self.bidders[g], self.size[g], bidders.size
        if used + m > buffer.size:
            buffer = np.concatenate(
                [buffer[:used], np.empty(max(used + m, 2 * buffer.size), dtype=np.int64)]
            )
            self.bidders[g] = buffer
        buffer[used : used + m] = bidders
        self.size[g] = used + m

    def pop_outbid(
        self,
        bid_on: np.ndarray,
        rose: np.ndarray,
        total: np.ndarray,
        level_start: np.ndarray,
        outbid_at: np.ndarray,
    ) -> np.ndarray:
        """Remove and return (sorted) the holders displaced this round: only a good bid on or risen
        this round can displace anyone (otherwise neither the bids after a holder nor the ask
        changed since the last round, which displaced every holder it could).  A few goods a round:
        a Python step each."""
        out = []
        for g in np.flatnonzero(bid_on | rose).tolist():
            bids, below = float(total[g]), float(outbid_at[g])
            cut = math.ceil(bids - 1.0 - below)  # bid q is outbid iff bids - q - 1 > below ...
            if not bids - cut > below:  # ... decided exactly (not by the rounding of ceil)
                cut -= 1
            if bids - cut - 1.0 > below:
                cut += 1
            cut = min(cut, int(level_start[g]))  # and iff it was made below the ask
            if cut > self.head[g]:
                out.append(self.bidders[g][self.head[g] : cut])
                self.head[g] = cut
        if not out:
            return np.empty(0, dtype=np.int64)
        return np.sort(out[0] if len(out) == 1 else np.concatenate(out))


def round_coins(key: int, t: int, n: int) -> np.ndarray:
    """The bidders' coins ``tau`` for bids in round ``t``: ``n`` uniforms on ``[0, 1)`` from the
    seed ``(key, t)``, fresh for every round and independent of all values.

    Parameters
    ----------
    key : int
    t : int
    n : int

    Returns
    -------
    numpy.ndarray
    """
    return np.random.default_rng([key, t]).random(n)


def _serve(holding: np.ndarray, bid_round: np.ndarray, supply: np.ndarray) -> np.ndarray:
    """Each good's first ``s_j`` holders by bid round, then index; the rest get nothing."""
    served = np.full(holding.size, -1, dtype=np.int64)
    idx = np.flatnonzero(holding >= 0)
    order = idx[np.lexsort((idx, bid_round[idx], holding[idx]))]  # by good, then round, then index
    goods = holding[order]
    starts = np.searchsorted(goods, goods, side="left")
    rank = np.arange(order.size) - starts
    keep = rank < supply[goods]
    served[order[keep]] = goods[keep]
    return served
