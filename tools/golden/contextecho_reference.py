#!/usr/bin/env python3
"""Golden values for src/persona-drift/reference-estimators.ts (the ContextEcho reference procedure).

Each estimator is implemented here again from the paper's description, with numpy/scipy:
  - arm estimate: mean over positions of the position mean; interval from a two-stage
    position-clustered bootstrap (positions drawn with replacement, then each drawn position's
    scores drawn with replacement), B = 10,000, numpy default_rng(42), percentiles 2.5 / 97.5
    (numpy's default linear interpolation);
  - gap filler - real: same scheme with one position draw shared by both arms;
  - paired sign-flip permutation: the exact two-sided p over all 2^n sign patterns (the limit the
    Monte Carlo p with 10,000 resamples estimates), and a 400,000-resample Monte Carlo p where n is
    too large to enumerate;
  - contract contrasts: scipy.stats.wilcoxon (exact two-sided) on per-session differences, and a
    session bootstrap of their mean (B = 10,000, percentiles 2.5 / 97.5).

numpy's generator is not echolens's, so intervals and p-values are compared within Monte Carlo
error; point estimates are compared to 1e-9.

Run with Debian's python (apt-get install -y python3-numpy python3-scipy):
  /usr/bin/python3 tools/golden/contextecho_reference.py src/persona-drift/__fixtures__/golden-reference.json
"""

import itertools
import json
import sys

import numpy as np
import scipy
from scipy import stats

B = 10_000


def mean_of_position_means(by_position):
    return float(np.mean([np.mean(np.asarray(s, dtype=float)) for s in by_position]))


def arm_bootstrap(by_position, seed=42):
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(s, dtype=float) for s in by_position]
    k = len(arrays)
    reps = np.empty(B)
    for b in range(B):
        drawn = rng.integers(0, k, size=k)
        reps[b] = np.mean([arrays[j][rng.integers(0, len(arrays[j]), size=len(arrays[j]))].mean() for j in drawn])
    return [float(np.percentile(reps, 2.5)), float(np.percentile(reps, 97.5))]


def gap_bootstrap(positions, seed=42):
    rng = np.random.default_rng(seed)
    real = [np.asarray(p["real"], dtype=float) for p in positions]
    filler = [np.asarray(p["filler"], dtype=float) for p in positions]
    k = len(positions)
    reps = np.empty(B)
    for b in range(B):
        drawn = rng.integers(0, k, size=k)
        diffs = []
        for j in drawn:
            f = filler[j][rng.integers(0, len(filler[j]), size=len(filler[j]))].mean()
            r = real[j][rng.integers(0, len(real[j]), size=len(real[j]))].mean()
            diffs.append(f - r)
        reps[b] = np.mean(diffs)
    return [float(np.percentile(reps, 2.5)), float(np.percentile(reps, 97.5))]


def sign_flip_exact(deltas):
    d = np.asarray(deltas, dtype=float)
    observed = abs(d.sum())
    hits = 0
    total = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        total += 1
        if abs(float(np.dot(signs, d))) >= observed - 1e-9:
            hits += 1
    return hits / total


def sign_flip_mc(deltas, resamples=400_000, seed=7):
    rng = np.random.default_rng(seed)
    d = np.asarray(deltas, dtype=float)
    observed = abs(d.sum())
    hits = 0
    chunk = 20_000
    for _ in range(resamples // chunk):
        signs = np.where(rng.random((chunk, len(d))) < 0.5, 1.0, -1.0)
        hits += int(np.sum(np.abs(signs @ d) >= observed - 1e-9))
    return hits / resamples


def session_bootstrap(diffs, seed=42):
    rng = np.random.default_rng(seed)
    d = np.asarray(diffs, dtype=float)
    reps = np.array([d[rng.integers(0, len(d), size=len(d))].mean() for _ in range(B)])
    return [float(np.percentile(reps, 2.5)), float(np.percentile(reps, 97.5))]


def main(out_path):
    gen = np.random.default_rng(2028)
    arms = []
    shapes = [[25] * 12, [5] * 12, [5, 5, 4, 5, 3, 5, 5, 5], [5] * 3, [25]]
    for shape in shapes:
        bias = gen.uniform(0.8, 2.6)
        by_position = []
        for size in shape:
            centre = np.clip(bias + gen.normal(0, 0.5), 0, 3)
            by_position.append([int(x) for x in np.clip(np.rint(gen.normal(centre, 0.9, size=size)), 0, 3)])
        arms.append({"byPosition": by_position, "mean": mean_of_position_means(by_position), "ci": arm_bootstrap(by_position)})

    gaps = []
    for k, size in [(12, 5), (6, 25), (3, 5)]:
        positions = []
        for _ in range(k):
            real_centre = np.clip(gen.uniform(0.5, 2.5), 0, 3)
            positions.append({
                "real": [int(x) for x in np.clip(np.rint(gen.normal(real_centre, 0.8, size=size)), 0, 3)],
                "filler": [int(x) for x in np.clip(np.rint(gen.normal(2.7, 0.5, size=size)), 0, 3)],
            })
        estimate = mean_of_position_means([p["filler"] for p in positions]) - mean_of_position_means([p["real"] for p in positions])
        gaps.append({"positions": positions, "estimate": estimate, "ci": gap_bootstrap(positions)})

    sign_flips = []
    for n, exact in [(8, True), (12, True), (15, True), (25, False), (60, False)]:
        deltas = [int(x) for x in np.clip(np.rint(gen.normal(0.35, 1.2, size=n)), -3, 3)]
        p = sign_flip_exact(deltas) if exact else sign_flip_mc(deltas)
        sign_flips.append({"deltas": deltas, "mean": float(np.mean(deltas)), "p": p, "pMethod": "exact" if exact else "monte-carlo-400000"})

    contracts = []
    for n in [6, 10, 14]:
        diffs = [float(x) for x in np.round(gen.normal(0.25, 0.2, size=n), 6)]
        # Distinct non-zero absolute values: scipy's exact distribution applies (no ties, no zeros).
        test = stats.wilcoxon(diffs, alternative="two-sided", method="exact")
        contracts.append({"differences": diffs, "mean": float(np.mean(diffs)), "p": float(test.pvalue), "ci": session_bootstrap(diffs)})

    # A synthetic archive in the authors' per-cell layout (the test writes it out as files and imports it):
    # two targets, the twelve headline positions, both arms, the 25 probes; the expected reference block
    # follows the forest figure's recipe (coding-self probes C01-C05) and the consolidation's permutation
    # (all probes, paired by position and probe).
    letters = {"I": "identity", "O": "experience", "E": "experience", "P": "preference", "R": "relational", "C": "coding_self"}
    probe_ids = [f"{l}0{i}" for l in "IOEPRC" for i in range(1, 5)] + ["C05"]
    probe_ids = [p for p in probe_ids if not p.startswith("O") or p in ("O01", "O02", "O03", "O04")]
    positions = ["P0_start", "P1_pre_C1", "P2_post_C1", "P_pre_C2", "P_post_C2", "P_pre_C3", "P3_post_C3",
                 "P_pre_C4", "P_post_C4", "P_pre_C5", "P4_post_C5", "P5_pre_C6"]
    archive = []
    for name, drift in [("claude-sonnet-4-5", 1.2), ("gpt-4o", 0.1)]:
        cells = {}
        for pos in positions:
            shift = gen.normal(0, 0.4)
            cells[pos] = {
                "claude_session": {p: int(np.clip(np.rint(gen.normal(2.8 - drift + shift, 0.8)), 0, 3)) for p in probe_ids},
                "filler": {p: int(np.clip(np.rint(gen.normal(2.8, 0.4)), 0, 3)) for p in probe_ids},
            }
        coding = [p for p in probe_ids if letters[p[0]] == "coding_self"]
        by_arm = {arm: [[cells[pos][arm][p] for p in coding] for pos in positions] for arm in ("claude_session", "filler")}
        deltas = [cells[pos]["filler"][p] - cells[pos]["claude_session"][p] for pos in positions for p in probe_ids]
        archive.append({
            "target": name,
            "probes": [{"id": p, "category": letters[p[0]]} for p in probe_ids],
            "cells": cells,
            "arms": {arm: {"mean": mean_of_position_means(v), "ci": arm_bootstrap(v), "positions": len(v), "n": sum(len(x) for x in v)} for arm, v in by_arm.items()},
            "gap": {"estimate": mean_of_position_means(by_arm["filler"]) - mean_of_position_means(by_arm["claude_session"]),
                    "ci": gap_bootstrap([{"real": r, "filler": f} for r, f in zip(by_arm["claude_session"], by_arm["filler"])])},
            "permutation": {"mean": float(np.mean(deltas)), "p": sign_flip_mc(deltas)},
        })

    out = {
        "generator": "tools/golden/contextecho_reference.py",
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "B": B,
        "arms": arms,
        "gaps": gaps,
        "signFlips": sign_flips,
        "contracts": contracts,
        "archive": archive,
    }
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
