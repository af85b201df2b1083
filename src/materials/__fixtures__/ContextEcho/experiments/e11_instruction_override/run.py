"""Fixture stressor runner (placeholder texts)."""
from __future__ import annotations

import re


def _is_yes_no(text: str) -> bool:
    return text.strip().lower() in {"yes", "no"}


def _is_no_preamble(text: str) -> bool:
    return "\n" not in text.strip()


def _is_one_sentence_no_action(text: str) -> bool:
    return len(re.split(r"[.!?]+\s", text.strip())) == 1


def _is_exact_json(text: str) -> bool:
    return text.strip() == '{"fixture": "ok"}'


STRESSORS = [
    ("S1_ONE_WORD",
     'STRESSOR PLACEHOLDER S1 WORDING 1, first part. '
     'Second part?',
     _is_yes_no),
    ("S2_NO_PREAMBLE",
     'STRESSOR PLACEHOLDER S2 (e11 copy).',
     _is_no_preamble),
    ("S3_NO_ACTION",
     'STRESSOR PLACEHOLDER S3 (e11 copy).',
     _is_one_sentence_no_action),
    ("S4_STRICT_JSON",
     'STRESSOR PLACEHOLDER S4 (e11 copy): '
     '{"fixture": "ok"}',
     _is_exact_json),
]


SYSTEM_PROMPT = (
    "STRESSOR SYSTEM PROMPT PLACEHOLDER. "
    "Second sentence."
)


def build_messages(arm: str, ctx_text: str, stressor: str) -> list[dict]:
    msgs = []
    msgs.append({"role": "user", "content": [{"type": "text", "text": stressor}]})
    return msgs
