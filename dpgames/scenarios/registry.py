"""Scenario kinds: the value of a scenario file's ``kind`` -> the module that runs it.

Each module defines ``parse(top: Table) -> spec`` (reads and validates every field, calling
``done()`` on each sub-table, before anything heavy runs) and ``run(spec, seed: SeedSequence) -> Result``
(see :mod:`dpgames.scenarios.digital_goods`).  Modules are imported only when a scenario of their kind runs.
"""

KINDS: dict[str, str] = {
    "digital_goods": "dpgames.scenarios.digital_goods",
    "nst_mix": "dpgames.scenarios.nst_mix",
    "huang_kannan": "dpgames.scenarios.huang_kannan",
    "large_game": "dpgames.scenarios.large_game",
}
