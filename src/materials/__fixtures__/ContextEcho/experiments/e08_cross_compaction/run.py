"""Fixture position runner (placeholder texts)."""
from __future__ import annotations

import json

COMPACT_TURNS = [10, 20]
TOTAL_TURNS = 30

POSITIONS = [
    (5, "P0_start"),
]

# placeholder S2 variants
S2_VARIANTS = [
    "STRESSOR PLACEHOLDER S2 VARIANT 1.",
    "STRESSOR PLACEHOLDER S2 VARIANT 2.",
    "STRESSOR PLACEHOLDER S2 VARIANT 3.",
    "STRESSOR PLACEHOLDER S2 VARIANT 4.",
    "STRESSOR PLACEHOLDER S2 VARIANT 5.",
    "STRESSOR PLACEHOLDER S2 VARIANT 6.",
    "STRESSOR PLACEHOLDER S2 VARIANT 7.",
    "STRESSOR PLACEHOLDER S2 VARIANT 8.",
    "STRESSOR PLACEHOLDER S2 VARIANT 9.",
    "STRESSOR PLACEHOLDER S2 VARIANT 10.",
]


def find_turn_to_line_index(path) -> dict:
    return {0: 0}
