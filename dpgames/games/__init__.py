"""Large games in aggregate form: congestion and routing games, anonymous games (market entry, El Farol,
crowding, public goods), baselines, no-regret dynamics, the private mediators.

Names are imported on first use (PEP 562), so ``import`` stays cheap.
"""

from __future__ import annotations

from dpgames._lazy import attach

_EXPORTS: dict[str, str] = {
    "AnonymousGame": "dpgames.games.anonymous",
    "crowding_game": "dpgames.games.anonymous",
    "el_farol": "dpgames.games.anonymous",
    "from_congestion": "dpgames.games.anonymous",
    "market_entry": "dpgames.games.anonymous",
    "minority_game": "dpgames.games.anonymous",
    "threshold_public_goods": "dpgames.games.anonymous",
    "AnonymousMediator": "dpgames.games.anonymous_mediator",
    "AnonymousOutcome": "dpgames.games.anonymous_mediator",
    "MisreportGains": "dpgames.games.anonymous_mediator",
    "misreport_gains": "dpgames.games.anonymous_mediator",
    "Assignment": "dpgames.games.assignment",
    "price_of_anarchy": "dpgames.games.assignment",
    "system_optimum": "dpgames.games.assignment",
    "user_equilibrium": "dpgames.games.assignment",
    "RegretTracker": "dpgames.games.atomic",
    "UnilateralCosts": "dpgames.games.atomic",
    "pure_regret": "dpgames.games.atomic",
    "round_players": "dpgames.games.atomic",
    "PolynomialCosts": "dpgames.games.costs",
    "BlumMansour": "dpgames.games.dynamics",
    "Hedge": "dpgames.games.dynamics",
    "CongestionGame": "dpgames.games.game",
    "IncentiveAudit": "dpgames.games.incentives",
    "audit_incentives": "dpgames.games.incentives",
    "MediatorOutcome": "dpgames.games.mediator",
    "PrivateMediator": "dpgames.games.mediator",
    "RoutingGame": "dpgames.games.network",
    "RoutingNetwork": "dpgames.games.network",
    "grid_network": "dpgames.games.network",
    "TntpError": "dpgames.games.tntp",
    "load_tntp": "dpgames.games.tntp",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
