"""Fixture anchor variants (placeholder texts)."""
from __future__ import annotations

# V0 placeholder
ANCHOR_V0_TEXT = (
    "[ANCHOR V0 PLACEHOLDER] first part, "
    "second part."
)

ANCHOR_V1_TEXT = (
    "[ANCHOR V1 PLACEHOLDER]"
)

ANCHOR_V2_USER = (
    "[ANCHOR V2 PLACEHOLDER] "
    "demo announcement:"
)
ANCHOR_V2_DEMO_USER = "DEMO REQUEST PLACEHOLDER"
ANCHOR_V2_DEMO_ASSISTANT = "DEMO ANSWER PLACEHOLDER"


def build_messages_v0(prefix: str, stressor: str) -> list[dict]:
    msgs = []
    msgs.append({"role": "user", "content": [{"type": "text", "text": ANCHOR_V0_TEXT}]})
    return msgs
