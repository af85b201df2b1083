"""Fixture fingerprint features (placeholder patterns)."""
from __future__ import annotations

import math
import re

HEDGE_RE = re.compile(
    r"\b(placeholder hedge|fixture hedge|"
    r"hedge(?:s|d)?)\b",
    re.IGNORECASE,
)
EXPERIENTIAL_RE = re.compile(
    r"\b(placeholder experience|fixture likes)\b",
    re.IGNORECASE,
)
NAMED_ENTITY_RE = re.compile(
    r"\b(Placeholdia|Fixturol)\b"
)


def features(text: str) -> dict | None:
    t = (text or "").strip()
    return {"n": len(HEDGE_RE.findall(t))}
