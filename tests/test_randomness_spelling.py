"""Randomness is spelled one way in the public API: a random source is a parameter named ``rng``
typed :data:`dpgames.privacy.rng.RNGLike` (a seed, a SeedSequence, a BitGenerator, a Generator or
None).

``seed`` is a different thing, and only where listed below: the integer root seed that a scenario,
a sweep or a sampled audit *records* in its result so that the run can be repeated (a Generator's
state cannot be written into a result file); ``seeds`` is a number of seeds (replications), not a
source.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

from test_public_api import PACKAGES

#: Parameters named ``seed``: the recorded root seed of a scenario run, a sweep or a sampled audit.
RECORDED_SEED = {
    "Scenario.parse",
    "Scenario.run",
    "run_scenario",
    "ScenarioKind.build",
    "plan_sweep",
    "SampledAudit.__init__",
}
#: Other spellings of a random source that the public API must not use.
FORBIDDEN = {"random_state", "random_seed", "generator", "prng", "rand", "seed_sequence"}


def public_callables():
    """(qualified name, function) for every public function and public method of a public class."""
    found = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    func = getattr(value, "__func__", value)
                    if inspect.isfunction(func):
                        found[f"{name}.{attr}"] = func
            elif inspect.isfunction(obj):
                found[name] = obj
    return sorted(found.items())


CALLABLES = public_callables()


def test_the_walk_sees_the_public_api():
    names = dict(CALLABLES)
    assert {"audit_privacy", "truthfulness_audit", "CustomMechanism.random_profile"} <= set(names)
    assert len(names) > 200


@pytest.mark.parametrize("name, func", CALLABLES, ids=[n for n, _ in CALLABLES])
def test_a_random_source_is_named_rng_and_typed_rnglike(name, func):
    parameters = inspect.signature(func).parameters.values()
    for p in parameters:
        if p.name == "rng":
            assert p.annotation in ("RNGLike", "RNGLike | None"), f"{name}: rng: {p.annotation}"
        assert p.name not in FORBIDDEN, f"{name}: a random source named {p.name!r}"
        if p.name == "seed":
            assert name in RECORDED_SEED, f"{name}: a random source must be `rng: RNGLike`"
        if p.name == "seeds":
            assert "int" in str(p.annotation), f"{name}: seeds is a count: {p.annotation}"


@pytest.mark.parametrize("name", sorted(RECORDED_SEED))
def test_every_recorded_seed_listed_is_still_there(name):
    assert "seed" in inspect.signature(dict(CALLABLES)[name]).parameters
