"""Fixture anchor candidates (placeholder texts)."""
from __future__ import annotations

# Candidate A placeholder
ANCHOR_A_USER = (
    "[ANCHOR A PLACEHOLDER] first part, "
    "second part:"
)
ANCHOR_A_DEMO_USER = "ANCHOR A DEMO REQUEST PLACEHOLDER"
ANCHOR_A_DEMO_ASSISTANT = "ANCHOR A DEMO ANSWER PLACEHOLDER"
