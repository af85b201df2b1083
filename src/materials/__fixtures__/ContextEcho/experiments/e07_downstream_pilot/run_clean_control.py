"""Fixture filler control (placeholder texts)."""
from __future__ import annotations


FILLER_TEMPLATE = (
    "FILLER TEMPLATE PLACEHOLDER first line. "
    "FILLER TEMPLATE PLACEHOLDER second line. "
)


def make_filler(target_chars: int) -> str:
    chunks = []
    total = 0
    while total < target_chars:
        chunks.append(FILLER_TEMPLATE)
        total += len(FILLER_TEMPLATE)
    return "".join(chunks)[:target_chars]
