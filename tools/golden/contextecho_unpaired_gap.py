"""Golden values for the reference gap when the arms cover different positions.

Written from the ContextEcho paper's description of the forest figure: each arm's estimate is the
mean of its position means with a two-stage position-clustered bootstrap (positions with
replacement, then scores within each drawn position), and the gap is filler minus real. Here each
arm is resampled over its own positions, independently, and the gap replicate is the difference.

Run: /usr/bin/python3 tools/golden/contextecho_unpaired_gap.py
Writes src/persona-drift/__fixtures__/golden-unpaired-gap.json.
"""
import json
from pathlib import Path

import numpy as np

CASES = [
    {
        "real": [[2, 3, 1, 2, 3], [1, 2, 2, 3, 3], [0, 1, 2, 2, 1], [3, 3, 2, 3, 2]],
        "filler": [[0, 1, 0, 0, 1], [1, 0, 0, 2, 0], [0, 0, 1, 0, 0]],
    },
    {
        "real": [[1, 1, 2], [2, 2, 3], [0, 1, 1], [1, 2, 2], [3, 2, 2]],
        "filler": [[1, 2, 1], [2, 1, 1]],
    },
]


def two_stage(groups, rng):
    idx = rng.integers(0, len(groups), size=len(groups))
    means = []
    for j in idx:
        g = np.asarray(groups[j], dtype=float)
        means.append(g[rng.integers(0, len(g), size=len(g))].mean())
    return float(np.mean(means))


def main():
    rng = np.random.default_rng(20261202)
    out = []
    for case in CASES:
        estimate = float(np.mean([np.mean(g) for g in case["filler"]]) - np.mean([np.mean(g) for g in case["real"]]))
        reps = np.array([two_stage(case["filler"], rng) - two_stage(case["real"], rng) for _ in range(100_000)])
        out.append({**case, "estimate": estimate, "ci": [float(np.percentile(reps, 2.5)), float(np.percentile(reps, 97.5))]})
    path = Path(__file__).resolve().parents[2] / "src" / "persona-drift" / "__fixtures__" / "golden-unpaired-gap.json"
    path.write_text(json.dumps({"B": 100_000, "cases": out}, indent=2) + "\n")


if __name__ == "__main__":
    main()
