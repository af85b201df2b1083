#!/usr/bin/env python3
"""Golden values for the human check of step labels (src/memory-drift/label-sheet.ts).

Writes src/memory-drift/__fixtures__/golden-step-kappa.json, read by
src/memory-drift/label-sheet.test.ts. Run from the repository root:
    python3 tools/golden/step_label_kappa.py

Independent of the TypeScript code: a seeded set of (labeler, human) symbol pairs is drawn
here; Cohen's kappa is computed from its definition with numpy (confusion matrix, observed
agreement p_o, chance agreement p_e from the two marginals, kappa = (p_o - p_e) / (1 - p_e)),
and checked against statsmodels.stats.inter_rater.cohens_kappa when statsmodels is installed
(Debian: python3-statsmodels). Levels: full symbols, root categories (the part before '/';
'unmapped' is its own root), and one-versus-rest per root category and per symbol.
"""

import json
import os
import random

import numpy as np

try:
    from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
except ImportError:  # the numpy value stands alone
    sm_cohens_kappa = None

SYMBOLS = [
    "Social/Cultural respect and tradition",
    "Social/Social equity and justice",
    "Practical/Efficiency and resource optimization",
    "Practical/Professional advancement",
    "Protective/Security and stability",
    "Protective/Protection of people and environment",
    "Protective/Ethical responsibility",
    "Personal/Artistic expression and appreciation",
    "Personal/Emotional depth and authentic connection",
    "Personal/Spiritual fulfillment and meaning",
    "Personal/Pleasure and enjoyment",
]
ALL = SYMBOLS + ["unmapped"]
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "src", "memory-drift", "__fixtures__", "golden-step-kappa.json")


def root(symbol):
    return symbol.split("/", 1)[0] if "/" in symbol else symbol


def kappa(a, b):
    """Cohen's kappa from the confusion matrix; None when chance agreement is 1."""
    cats = sorted(set(a) | set(b))
    if len(cats) < 2:
        return None
    idx = {c: i for i, c in enumerate(cats)}
    table = np.zeros((len(cats), len(cats)))
    for x, y in zip(a, b):
        table[idx[x], idx[y]] += 1
    n = table.sum()
    p_o = np.trace(table) / n
    p_e = float((table.sum(axis=1) / n) @ (table.sum(axis=0) / n))
    if p_e >= 1:
        return None
    value = (p_o - p_e) / (1 - p_e)
    if sm_cohens_kappa is not None:
        check = float(sm_cohens_kappa(table, return_results=False))
        assert abs(check - value) < 1e-12, (check, value)
    return float(value)


def one_vs_rest(a, b, category):
    x = ["in" if v == category else "out" for v in a]
    y = ["in" if v == category else "out" for v in b]
    if "in" not in x and "in" not in y:
        return None
    return kappa(x, y)


def main():
    rng = random.Random(20261202)
    items = []
    for i in range(80):
        model = rng.choice(ALL[:-1]) if rng.random() > 0.05 else "unmapped"
        r = rng.random()
        if r < 0.70:
            human = model  # agrees
        elif r < 0.82:
            # same root category, another subcategory when there is one
            siblings = [s for s in ALL if root(s) == root(model) and s != model]
            human = rng.choice(siblings) if siblings else model
        elif r < 0.92:
            human = rng.choice(ALL)
        else:
            human = "ambiguous"
        items.append({"item_id": f"i{i:03d}#1", "model": model, "human": human})
    compared = [it for it in items if it["human"] != "ambiguous"]
    a = [it["model"] for it in compared]
    b = [it["human"] for it in compared]
    ra = [root(s) for s in a]
    rb = [root(s) for s in b]
    roots = []
    for s in ALL:
        if root(s) not in roots:
            roots.append(root(s))
    result = {
        "symbols": SYMBOLS,
        "items": items,
        "statsmodels": sm_cohens_kappa is not None,
        "compared": len(compared),
        "agreed": sum(1 for x, y in zip(a, b) if x == y),
        "kappa": kappa(a, b),
        "rootKappa": kappa(ra, rb),
        "perRoot": {c: one_vs_rest(ra, rb, c) for c in roots},
        "perSymbol": {c: one_vs_rest(a, b, c) for c in ALL},
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}: {len(compared)} compared, kappa {result['kappa']:.6f}, statsmodels {result['statsmodels']}")


if __name__ == "__main__":
    main()
