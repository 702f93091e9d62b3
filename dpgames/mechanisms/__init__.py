"""Mechanism design: auctions, environments and the commitment / punishing mixes."""
