"""dpgames: mechanism design with differential privacy, simulated and measured exactly.

Public API (everything else may change):
"""

__version__ = "0.1.0"

from dpgames.agents import Beta, Discrete, Population, Uniform
from dpgames.analysis.misreport import MisreportAudit, misreport_audit
from dpgames.analysis.truthfulness import least_q, nst_report, truthfulness_audit
from dpgames.mechanisms.baselines import f2_benchmark, optimal_fixed_price, rsop_revenue
from dpgames.mechanisms.commitment import CommitmentMechanism
from dpgames.mechanisms.digital_goods import AuctionOutcome, DigitalGoodsAuction
from dpgames.mechanisms.environment import Environment, Profile
from dpgames.mechanisms.facility_location import facility_location_environment, grid_graph, line_graph
from dpgames.mechanisms.huang_kannan import HuangKannan
from dpgames.mechanisms.nst_mix import NSTMix, theorem_q
from dpgames.mechanisms.objective_em import ObjectiveExponentialMechanism
from dpgames.mechanisms.pricing import AuctionPricing, pricing_environment
from dpgames.mechanisms.public_project import public_project_environment
from dpgames.privacy import (
    AboveThreshold, Accountant, BinaryTreeCounter, BudgetExceededError, DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism, GaussianMechanism, KaryResponse, LaplaceMechanism, PrivateMultiplicativeWeights,
    ReportNoisyMax, SparseVector, WarnerResponse, audit_black_box, audit_finite,
)
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.exponential import ExponentialMechanism
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.games import CongestionGame, PrivateMediator, RoutingGame, load_tntp, system_optimum, user_equilibrium
from dpgames.scenarios import Result, Scenario, ScenarioError, run_scenario
from dpgames.sweep import load_results, plan_sweep, run_sweep

__all__ = [
    "CongestionGame", "PrivateMediator", "RoutingGame", "load_tntp", "system_optimum", "user_equilibrium",
    "AuctionOutcome", "Beta", "DigitalGoodsAuction", "Discrete", "ExponentialMechanism",
    "FiniteDistribution", "MisreportAudit", "Population", "PrivacyGuarantee", "Result", "Scenario",
    "ScenarioError", "Uniform", "f2_benchmark", "misreport_audit", "optimal_fixed_price", "rsop_revenue",
    "run_scenario",
    # exact truthfulness
    "AuctionPricing", "CommitmentMechanism", "Environment", "HuangKannan", "NSTMix", "ObjectiveExponentialMechanism",
    "Profile", "facility_location_environment", "grid_graph", "least_q", "line_graph", "nst_report",
    "pricing_environment", "public_project_environment", "theorem_q", "truthfulness_audit",
    # parameter sweeps
    "load_results", "plan_sweep", "run_sweep",
    # differential-privacy toolkit
    "AboveThreshold", "Accountant", "BinaryTreeCounter", "BudgetExceededError", "DiscreteGaussianMechanism",
    "DiscreteLaplaceMechanism", "GaussianMechanism", "KaryResponse", "LaplaceMechanism",
    "PrivateMultiplicativeWeights", "ReportNoisyMax", "SparseVector", "WarnerResponse", "audit_black_box",
    "audit_finite",
]
