"""Large games in aggregate form: congestion and routing games, baselines, no-regret dynamics, the private mediator."""

from dpgames.games.assignment import Assignment, price_of_anarchy, system_optimum, user_equilibrium
from dpgames.games.atomic import RegretTracker, UnilateralCosts, pure_regret, round_players
from dpgames.games.costs import PolynomialCosts
from dpgames.games.dynamics import BlumMansour, Hedge
from dpgames.games.game import CongestionGame
from dpgames.games.incentives import IncentiveAudit, audit_incentives
from dpgames.games.mediator import MediatorOutcome, PrivateMediator
from dpgames.games.network import RoutingGame, RoutingNetwork, grid_network
from dpgames.games.tntp import TntpError, load_tntp

__all__ = [
    "Assignment", "BlumMansour", "CongestionGame", "Hedge", "IncentiveAudit", "MediatorOutcome", "PolynomialCosts",
    "PrivateMediator", "RegretTracker", "RoutingGame", "RoutingNetwork", "TntpError", "UnilateralCosts",
    "audit_incentives", "grid_network", "load_tntp", "price_of_anarchy", "pure_regret", "round_players",
    "system_optimum", "user_equilibrium",
]
