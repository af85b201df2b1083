"""Synthetic fixture in the layout of the DriftLens repository (placeholder wording written
for echolens tests; same names and template fields as the published file)."""
from __future__ import annotations

from typing import Any


SYSTEM_PROMPT = "FIXTURE SYSTEM PROMPT: reply in the format below. "


def serialize_ontology(ontology: dict[str, Any] | str) -> str:
    if isinstance(ontology, str):
        return ontology
    return str(ontology).replace("'", "").replace("{", "").replace("}", "")


def build_completeness_prompt(question: str) -> str:
    """Fixture step-format instruction."""
    return (
        "\nFIXTURE INSTRUCTION: reason in steps, then answer.\n"
        "<think>\n"
        "<step_1>...</step_1>\n"
        "<step_2>...</step_2>\n"
        "</think>\n"
        "<answer>...</answer>\n\n"
        f"* fixture question: {question}\n"
        "* fixture answer:<think>"
    )


_MAPPING_TEMPLATE = """# FIXTURE MAPPER

<ontology>
{ontology}
</ontology>

<reasoning_passage>
{reasoning}
</reasoning_passage>

Reply as:
<answer>[
  {{"step_index": 1, "category": "category_name", "symbol": "symbol_name"}}
]</answer>
"""


def build_mapping_prompt(reasoning: str, ontology: dict[str, Any] | str) -> str:
    return _MAPPING_TEMPLATE.format(reasoning=reasoning, ontology=serialize_ontology(ontology))
