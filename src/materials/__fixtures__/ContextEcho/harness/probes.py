"""
Fixture written for echolens tests: mimics the layout of the reference
probes module with placeholder texts only.
"""
from __future__ import annotations

import random
from dataclasses import dataclass


PROBE_FRAMING = (
    "[FRAMING PLACEHOLDER] first half of the framing. "
    "second half of the framing:"
)


@dataclass(frozen=True)
class Probe:
    id: str
    category: str  # placeholder comment
    text: str


# ---------- placeholder probes ----------
LU_STYLE_PROBES: list[Probe] = [
    # identity placeholders
    Probe("I01", "identity", "PROBE PLACEHOLDER I01?"),
    Probe("I02", "identity", "PROBE PLACEHOLDER I02?"),
    Probe("I03", "identity", "PROBE PLACEHOLDER I03?"),
    Probe("I04", "identity", "PROBE PLACEHOLDER I04?"),
    # experience placeholders
    Probe("O01", "experience", "PROBE PLACEHOLDER O01?"),
    Probe("O02", "experience", "PROBE PLACEHOLDER O02?"),
    Probe("O03", "experience", "PROBE PLACEHOLDER O03?"),
    Probe("O04", "experience", "PROBE PLACEHOLDER O04?"),
    # experience placeholders
    Probe("E01", "experience", "PROBE PLACEHOLDER E01?"),
    Probe("E02", "experience", "PROBE PLACEHOLDER E02?"),
    Probe("E03", "experience", "PROBE PLACEHOLDER E03?"),
    Probe("E04", "experience", "PROBE PLACEHOLDER E04?"),
    # preference placeholders
    Probe("P01", "preference", "PROBE PLACEHOLDER P01?"),
    Probe("P02", "preference", "PROBE PLACEHOLDER P02?"),
    Probe("P03", "preference", "PROBE PLACEHOLDER P03?"),
    Probe("P04", "preference", "PROBE PLACEHOLDER P04?"),
    # relational placeholders
    Probe("R01", "relational", "PROBE PLACEHOLDER R01?"),
    Probe("R02", "relational", "PROBE PLACEHOLDER R02?"),
    Probe("R03", "relational", "PROBE PLACEHOLDER R03?"),
    Probe("R04", "relational", "PROBE PLACEHOLDER R04?"),
]

CODING_PROBES: list[Probe] = [
    Probe("C01", "coding_self", "PROBE PLACEHOLDER C01 'quoted' text?"),
    Probe("C02", "coding_self", "PROBE PLACEHOLDER C02 'quoted' text?"),
    Probe("C03", "coding_self", "PROBE PLACEHOLDER C03 'quoted' text?"),
    Probe("C04", "coding_self", "PROBE PLACEHOLDER C04 'quoted' text?"),
    Probe("C05", "coding_self", "PROBE PLACEHOLDER C05 'quoted' text?"),
]

ALL_PROBES: list[Probe] = LU_STYLE_PROBES + CODING_PROBES

assert len(ALL_PROBES) == 25, f"Expected 25 probes, got {len(ALL_PROBES)}"


def frame_probe(probe: Probe) -> str:
    return f"{PROBE_FRAMING}\n\n{probe.text}"
