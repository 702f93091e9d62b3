"""dpgames: mechanism design with differential privacy, simulated and measured exactly.

Public API (everything else may change):
"""

__version__ = "0.1.0"

from dpgames.agents import Beta, Discrete, Population, Uniform
from dpgames.analysis.misreport import MisreportAudit, misreport_audit
from dpgames.mechanisms.baselines import f2_benchmark, optimal_fixed_price, rsop_revenue
from dpgames.mechanisms.digital_goods import AuctionOutcome, DigitalGoodsAuction
from dpgames.privacy.distribution import FiniteDistribution
from dpgames.privacy.exponential import ExponentialMechanism
from dpgames.privacy.guarantee import PrivacyGuarantee
from dpgames.scenarios import Result, Scenario, ScenarioError, run_scenario

__all__ = [
    "AuctionOutcome", "Beta", "DigitalGoodsAuction", "Discrete", "ExponentialMechanism",
    "FiniteDistribution", "MisreportAudit", "Population", "PrivacyGuarantee", "Result", "Scenario",
    "ScenarioError", "Uniform", "f2_benchmark", "misreport_audit", "optimal_fixed_price", "rsop_revenue",
    "run_scenario",
]
