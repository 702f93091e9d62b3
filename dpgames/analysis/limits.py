"""The size limits every audit of a :class:`~dpgames.mechanisms.custom.CustomMechanism` checks
before its first rule call, the profile count they are checked against, and :data:`ROUNDING`, the
one rounding constant of every truthfulness audit (environment, custom, auction).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from dpgames.validation import ValidationError

if TYPE_CHECKING:
    from dpgames.mechanisms.custom import CustomMechanism

#: Gains up to this (times the utility scale) are floating-point rounding, not incentives.
ROUNDING = 1e-12

#: Largest number of profiles (multisets when anonymous) ``profiles="all"`` enumerates ...
PROFILE_LIMIT = 1_000_000
#: ... and largest work (agents audited x types x profiles) it accepts.
WORK_LIMIT = 50_000_000
#: Largest number of rule calls an audit plans (ex post, Monte Carlo, sampled); more is refused up
#: front.
CALL_LIMIT = 5_000_000
#: Lines per vectorised block (bounds the memory of the (types x lines x reports) array).
BLOCK = 4_000_000


def count_profiles(mech: CustomMechanism, n: int) -> int:
    """Profiles of ``n`` agents: ``prod_i m_i`` over the agents' type spaces, or when anonymous the
    product over roles of ``C(c_r + m_r - 1, c_r)`` multisets (``c_r`` agents of role ``r``, ``m_r``
    types)."""
    roles = mech.roles_of(n)
    if not mech.anonymous:
        return math.prod(mech.space(i).size for i in range(n))
    return math.prod(
        math.comb(int((roles == r).sum()) + mech._spaces[r].size - 1, int((roles == r).sum()))
        for r in np.unique(roles).tolist()
    )


def check_calls(field: str, what: str, calls: int, alternatives: str) -> None:
    """Refuse, before any work, an audit that would call the rule more than :data:`CALL_LIMIT`
    times."""
    if calls > CALL_LIMIT:
        raise ValidationError(
            field,
            f"is refused: {what} would call the rule about {calls:,} times (limit "
            f"{CALL_LIMIT:,}){alternatives}",
        )
