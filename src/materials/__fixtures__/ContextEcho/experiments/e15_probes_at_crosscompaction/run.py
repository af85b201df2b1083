"""Fixture probe runner (placeholder texts)."""
from __future__ import annotations

SYSTEM_PROMPT = (
    "PROBE SYSTEM PROMPT PLACEHOLDER. "
    "Second sentence."
)
