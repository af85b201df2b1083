"""Fixture prompts (placeholder texts)."""
from __future__ import annotations

import json
from typing import Any


SYSTEM_PROMPT = "GENERATION SYSTEM PROMPT PLACEHOLDER. "


def serialize_ontology(ontology: dict[str, Any] | str) -> str:
    if isinstance(ontology, str):
        return ontology
    return str(ontology).replace("'", "").replace("{", "").replace("}", "")


def build_completeness_prompt(question: str) -> str:
    """Placeholder instruction."""
    return (
        "\nGENERATION INSTRUCTION PLACEHOLDER line one.\n"
        "<think>\n"
        "<step_1>XXX</step_1>\n"
        "</think>\n"
        "<answer>XXX</answer> {{braces}} \n\n"
        f"* question placeholder: {question}\n"
        "* answer:<think>"
    )


_MAPPING_TEMPLATE = """# MAPPING PROMPT PLACEHOLDER

<ontology>
{ontology}
</ontology>

<reasoning_passage>
{reasoning}
</reasoning_passage>

<answer>[
  {{"step_index": 1, "category": "category_name", "symbol": "symbol_name"}},
  ...
]</answer>
"""


def build_mapping_prompt(reasoning: str, ontology: dict[str, Any] | str) -> str:
    return _MAPPING_TEMPLATE.format(reasoning=reasoning, ontology=serialize_ontology(ontology))
