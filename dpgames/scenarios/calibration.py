"""How long the kinds' work estimates take on this machine: one small run timed against its
estimate.

The estimates (``estimate(spec)`` of each kind) count elementary operations at a nominal 1e9 a
second; a machine under load, or a slower one, runs fewer.  :func:`seconds_per_operation` times a
small digital-goods run (:data:`CALIBRATION`, about a second) once per process and divides by its
estimated work; :func:`machine_seconds` turns an estimate into seconds with it.  ``dpgames check``
and the app print this one figure.
"""

from __future__ import annotations

import functools
import time

#: The calibration run: a digital-goods auction of 20,000 bidders without its audit.
CALIBRATION = {
    "kind": "digital_goods",
    "seed": 1,
    "population": {"distribution": "uniform", "n": 20_000},
    "mechanism": {"epsilon": 0.5},
    "baselines": {"rsop_samples": 200},
    "audit": {"enabled": False},
}
#: The estimates' nominal rate (seconds per operation); a calibration never reports a faster one.
NOMINAL = 1e-9
#: Below this many operations the nominal rate is used (a tenth of a second or less: not worth
#: timing).
TIMED_ABOVE = 1e8


@functools.cache
def seconds_per_operation() -> float:
    """Seconds per elementary operation on this machine under its present load (timed once per
    process).

    Returns
    -------
    float
        At least :data:`NOMINAL`.
    """
    from dpgames.scenarios.loader import Scenario

    work = sum(stage.work for stage in Scenario.from_dict(CALIBRATION).parse().estimate())
    start = time.perf_counter()
    Scenario.from_dict(CALIBRATION).run()
    return max((time.perf_counter() - start) / work, NOMINAL)


def machine_seconds(work: float) -> float:
    """The time ``work`` operations take here: the calibrated rate above :data:`TIMED_ABOVE`
    operations, the nominal one below.

    Parameters
    ----------
    work : float
        Operations, as a kind's estimate counts them.

    Returns
    -------
    float
    """
    return work * (seconds_per_operation() if work > TIMED_ABOVE else NOMINAL)
