"""Fixture persona strings (placeholder texts)."""
from __future__ import annotations


INTERVENTIONS: dict[str, list[str]] = {
    "no_intervention": [""],

    "persona_alpha": [
        "PERSONA PLACEHOLDER ALPHA 1. ",
        "PERSONA PLACEHOLDER SHARED. ",
    ],

    "persona_beta": [
        "PERSONA PLACEHOLDER SHARED. ",
        "PERSONA PLACEHOLDER BETA 2, with a comma. ",
    ],
}


PERSONA_CATEGORIES = frozenset(c for c in INTERVENTIONS if c.startswith("persona_"))


def flatten() -> tuple[dict[str, str], list[str], list[str]]:
    string_to_category: dict[str, str] = {}
    for category, strings in INTERVENTIONS.items():
        for s in strings:
            string_to_category[s] = category
    return string_to_category, list(string_to_category.keys()), sorted(set(string_to_category.values()))
