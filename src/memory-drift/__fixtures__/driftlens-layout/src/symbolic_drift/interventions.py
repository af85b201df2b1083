"""Synthetic fixture in the layout of the DriftLens repository: persona strings only
(the published repository has no noise or life-event strings either). Written for echolens tests."""
from __future__ import annotations


INTERVENTIONS: dict[str, list[str]] = {
    "no_intervention": [""],

    "persona_fixture_age": [
        "FIXTURE PERSONA: I am in my twenties. ",
        "FIXTURE PERSONA: I am retired. ",
    ],

    "persona_fixture_job": [
        "FIXTURE PERSONA: I work as a nurse. ",
        "FIXTURE PERSONA: I am a carpenter. ",
    ],

    "persona_fixture_place": [
        "FIXTURE PERSONA: I live in a small village. ",
        "FIXTURE PERSONA: I live in a large city. ",
    ],
}


PERSONA_CATEGORIES = frozenset(c for c in INTERVENTIONS if c.startswith("persona_"))
