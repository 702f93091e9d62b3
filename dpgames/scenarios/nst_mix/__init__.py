"""Scenario kind ``nst_mix``: exact truthfulness by mixing the exponential and the commitment
mechanisms.

One module per concept: :mod:`~dpgames.scenarios.nst_mix.spec` (the file's fields),
:mod:`~dpgames.scenarios.nst_mix.memory` (the memory and work model),
:mod:`~dpgames.scenarios.nst_mix.build` (the population and the mechanisms) and
:mod:`~dpgames.scenarios.nst_mix.metrics` (the declared metrics, the invariants and the
measurements); this package is the kind (:class:`~dpgames.scenarios.kind.ScenarioKind`).

```toml
kind = "nst_mix"
[environment]
type = "pricing"            # or "facility_location" (see dpgames.scenarios.environments)
types = "midpoints"         # pricing: the value grid, "midpoints" between prices or a list in [0, 1]
[population]                # pricing: as for digital_goods (values are moved to the nearest type);
                            # facility location: see dpgames.scenarios.environments
[mechanism]
epsilon = 0.5               # > 0, or "balanced": the eps balancing the two losses (needs gamma > 0)
prices = "grid"             # pricing only, as for digital_goods ("continuous" is refused: |O| must be finite)
alpha = 0.05                # pricing only
reactions = "forced"        # "forced" (default for pricing: the auction sells by the bids) | "free" (NST)
punishing = "all"           # or a list of outcome indices for M^P
[scaling]                   # optional: the whole analysis again at several population sizes
n = [100, 1000, 10000]
epsilon = "same"            # "same" as [mechanism] or "balanced" at each n (the sqrt(1/n) regime)
```
"""

from __future__ import annotations

from pathlib import Path

from dpgames.scenarios.nst_mix.build import NSTRun as NSTRun, build as build
from dpgames.scenarios.nst_mix.memory import estimate as estimate
from dpgames.scenarios.nst_mix.metrics import (
    INVARIANTS as INVARIANTS,
    METRICS as METRICS,
    run as run,
)
from dpgames.scenarios.nst_mix.spec import NSTSpec as NSTSpec, parse as parse

DESCRIPTION = (
    "Exact truthfulness by mixing the exponential and commitment mechanisms "
    "(Nissim-Smorodinsky-Tennenholtz): gap, theorem q, exact least q"
)
EXAMPLES: tuple[Path, ...] = ()


def data_roots() -> tuple[Path, ...]:
    """No data folder of its own: an edge list lies beside the scenario or in a ``--data-dir``."""
    return ()
