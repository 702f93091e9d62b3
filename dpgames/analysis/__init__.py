"""Measurements: revenue, welfare, the incentive to misreport, privacy audits."""
