"""Fixture negative controls (placeholder texts)."""
from __future__ import annotations

NEG_PROBES = [
    ("N01", "NEGATIVE CONTROL PLACEHOLDER 1?"),
    ("N02", "NEGATIVE CONTROL PLACEHOLDER 2?"),
]
