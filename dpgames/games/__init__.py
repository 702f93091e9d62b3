"""Large games in aggregate form: congestion and routing games, anonymous games (market entry, El
Farol, crowding, public goods), baselines, no-regret dynamics, the private mediators.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgames._lazy import attach, declared_exports

if TYPE_CHECKING:  # the public names, read by type checkers and, at run time, by declared_exports
    from dpgames.games.anonymous import (
        AnonymousGame as AnonymousGame,
        from_congestion as from_congestion,
    )
    from dpgames.games.anonymous_generators import (
        crowding_game as crowding_game,
        el_farol as el_farol,
        market_entry as market_entry,
        minority_game as minority_game,
        threshold_public_goods as threshold_public_goods,
    )
    from dpgames.games.anonymous_mediator import (
        AnonymousMediator as AnonymousMediator,
        AnonymousOutcome as AnonymousOutcome,
        MisreportGains as MisreportGains,
        misreport_gains as misreport_gains,
    )
    from dpgames.games.assignment import (
        Assignment as Assignment,
        price_of_anarchy as price_of_anarchy,
        system_optimum as system_optimum,
        user_equilibrium as user_equilibrium,
    )
    from dpgames.games.atomic import (
        RegretTracker as RegretTracker,
        UnilateralCosts as UnilateralCosts,
        pure_regret as pure_regret,
        round_players as round_players,
    )
    from dpgames.games.costs import PolynomialCosts as PolynomialCosts
    from dpgames.games.dynamics import BlumMansour as BlumMansour, Hedge as Hedge
    from dpgames.games.game import CongestionGame as CongestionGame
    from dpgames.games.incentives import (
        IncentiveAudit as IncentiveAudit,
        audit_incentives as audit_incentives,
    )
    from dpgames.games.mediator import (
        MediatorOutcome as MediatorOutcome,
        PrivateMediator as PrivateMediator,
    )
    from dpgames.games.network import (
        RoutingGame as RoutingGame,
        RoutingNetwork as RoutingNetwork,
        ShortestPathTrees as ShortestPathTrees,
        grid_network as grid_network,
    )
    from dpgames.games.tntp import TntpError as TntpError, load_tntp as load_tntp

_EXPORTS = declared_exports(__file__)

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
