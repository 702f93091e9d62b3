"""The public API: the trimmed top-level entry points, the lazy (PEP 562) re-exports of every
package, and that a name left out of the top level is still reachable from its subpackage."""

import importlib
import subprocess
import sys

import pytest

PACKAGES = [
    "dpgames",
    "dpgames.privacy",
    "dpgames.games",
    "dpgames.sweep",
    "dpgames.mechanisms",
    "dpgames.analysis",
    "dpgames.scenarios",
    "dpgames.markets",
    "dpgames.allocation",
]

# The entry points a user starts from (dpgames/__init__.py); written out here so that a change is
# deliberate.
TOP_LEVEL = {
    "Beta",
    "Discrete",
    "Population",
    "Uniform",
    "CommitmentMechanism",
    "CustomMechanism",
    "DigitalGoodsAuction",
    "Environment",
    "HuangKannan",
    "NSTMix",
    "ObjectiveExponentialMechanism",
    "misreport_audit",
    "nst_report",
    "truthfulness_audit",
    "audit_privacy",
    "audit_finite",
    "audit_black_box",
    "neighbouring_inputs",
    "assert_private",
    "assert_truthful",
    "Accountant",
    "ExponentialMechanism",
    "FiniteDistribution",
    "PrivateMediator",
    "load_tntp",
    "Scenario",
    "ScenarioError",
    "run_scenario",
    "ValidationError",
}

# Names that were top-level before the trim: each must still be public in the subpackage named.
MOVED = {
    "dpgames.analysis": ["MisreportAudit", "least_q"],
    "dpgames.mechanisms": [
        "AuctionOutcome",
        "f2_benchmark",
        "optimal_fixed_price",
        "rsop_revenue",
        "Profile",
        "facility_location_environment",
        "grid_graph",
        "line_graph",
        "theorem_q",
        "AuctionPricing",
        "pricing_environment",
        "public_project_environment",
    ],
    "dpgames.privacy": [
        "AboveThreshold",
        "BinaryTreeCounter",
        "BudgetExceededError",
        "DiscreteGaussianMechanism",
        "DiscreteLaplaceMechanism",
        "GaussianMechanism",
        "KaryResponse",
        "LaplaceMechanism",
        "PrivateMultiplicativeWeights",
        "ReportNoisyMax",
        "SparseVector",
        "WarnerResponse",
        "PrivacyGuarantee",
    ],
    "dpgames.games": ["CongestionGame", "RoutingGame", "system_optimum", "user_equilibrium"],
    "dpgames.scenarios": ["Result"],
    "dpgames.sweep": ["load_results", "plan_sweep", "run_sweep"],
}


def _run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves(package):
    module = importlib.import_module(package)
    assert module.__all__ == sorted(set(module.__all__)), "__all__ is sorted, without repeats"
    for name in module.__all__:
        assert getattr(module, name) is not None, name
        assert name in dir(module)
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018 - the attribute access is what is tested


def test_the_top_level_is_the_entry_points():
    import dpgames

    assert set(dpgames.__all__) == TOP_LEVEL


@pytest.mark.parametrize("package", sorted(MOVED))
def test_names_left_out_of_the_top_level_stay_in_their_subpackage(package):
    import dpgames

    module = importlib.import_module(package)
    for name in MOVED[package]:
        assert name in module.__all__ and name not in dpgames.__all__, name
        with pytest.raises(AttributeError):
            getattr(dpgames, name)


@pytest.mark.parametrize("package", PACKAGES)
def test_a_top_level_name_is_the_object_of_its_defining_module(package):
    """A re-export is the same object as in the module that defines it (no copies, no wrappers)."""
    module = importlib.import_module(package)
    for name in module.__all__:
        obj = getattr(module, name)
        home = getattr(obj, "__module__", None)
        if home and home.startswith("dpgames") and hasattr(sys.modules[home], name):
            assert getattr(sys.modules[home], name) is obj, f"{package}.{name}"


def test_import_is_cheap():
    """The re-exports are lazy: importing dpgames (or a subpackage) must not load the heavy
    stacks."""
    code = (
        "import sys, dpgames, dpgames.mechanisms, dpgames.analysis, dpgames.games, "
        "dpgames.scenarios, dpgames.sweep, "
        "dpgames.markets; "
        "print(sorted(m for m in ('scipy.stats', 'networkx', 'matplotlib', 'dask') if m "
        "in sys.modules))"
    )
    assert _run(code) == "[]"


def test_a_name_imports_only_its_own_module_on_first_use():
    """PEP 562: ``dpgames.Population`` loads dpgames.agents, not the mechanisms, the games or the
    scenarios; the value is then cached on the package."""
    code = (
        "import sys, dpgames; p = dpgames.Population; "
        "print('dpgames.agents' in sys.modules, any(m in sys.modules for m in "
        "('dpgames.mechanisms.digital_goods', 'dpgames.games.mediator', "
        "'dpgames.scenarios.loader')), "
        "'Population' in vars(dpgames))"
    )
    assert _run(code) == "True False True"


def test_the_version_is_the_installed_distributions():
    """One source of truth: pyproject.toml, read back through the installed metadata."""
    import importlib.metadata
    import tomllib
    from pathlib import Path

    import dpgames

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert (
        dpgames.__version__
        == importlib.metadata.version("dpgames")
        == pyproject["project"]["version"]
    )
