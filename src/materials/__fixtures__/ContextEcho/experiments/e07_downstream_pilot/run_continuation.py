"""Fixture continuation runner (placeholder texts)."""
from __future__ import annotations

ACK_MESSAGE = "ACKNOWLEDGEMENT PLACEHOLDER."

SYSTEM_PROMPT = (
    "CONTINUATION SYSTEM PROMPT PLACEHOLDER."
)
