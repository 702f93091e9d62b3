"""dpgames-voting: an example plugin for dpgames (a private median vote as the scenario kind
``voting``).

Installed, it registers the kind in the entry-point group ``dpgames.kinds`` (see its
pyproject.toml); then ``dpgames run``, ``dpgames sweep``, ``dpgames.run_scenario`` and the app run
its scenario files.
"""

from dpgames_voting.mechanism import (
    least_dictator_weight,
    misreport_gains,
    vote_law,
    voting_mechanism,
)

__all__ = ["least_dictator_weight", "misreport_gains", "vote_law", "voting_mechanism"]
