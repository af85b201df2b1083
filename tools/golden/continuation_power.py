#!/usr/bin/env python3
"""Golden values for src/continuation/power.ts, from scipy.

Minimum detectable |Δ| of a paired mean over n cutpoints at 80% power, two-sided α:
(t.ppf(1 − α/2, n − 1) + t.ppf(0.8, n − 1)) · sd / √n; the fewest cutpoints whose MDE is at
most an effect; and, as a check of what the MDE means, the exact power of the paired t test at
the MDE and at Δ = 0.15 (noncentral t). Run from the repository root:

    /usr/bin/python3 tools/golden/continuation_power.py

Output: src/continuation/__fixtures__/golden-power.json.
"""
import json
import math
from pathlib import Path

from scipy import stats

OUT = Path(__file__).resolve().parents[2] / "src/continuation/__fixtures__/golden-power.json"


def mde(n, sd, alpha):
    df = n - 1
    return (stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(0.8, df)) * sd / math.sqrt(n)


def power(n, sd, alpha, delta):
    df = n - 1
    crit = stats.t.ppf(1 - alpha / 2, df)
    nc = delta * math.sqrt(n) / sd
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def needed(effect, sd, alpha):
    n = 2
    while mde(n, sd, alpha) > effect:
        n += 1
    return n


cases = []
for n in (2, 6, 10, 25, 50, 100, 400):
    for sd in (0.3, 0.55):
        for alpha in (0.05, 0.01):
            m = mde(n, sd, alpha)
            cases.append({"n": n, "sd": sd, "alpha": alpha, "mde": float(m), "powerAtMde": power(n, sd, alpha, m), "powerAt015": power(n, sd, alpha, 0.15)})
needs = [{"effect": e, "sd": sd, "alpha": 0.05, "cutpoints": needed(e, sd, 0.05)} for e in (0.1, 0.15, 0.3) for sd in (0.3, 0.55)]
OUT.write_text(json.dumps({"mde": cases, "needed": needs}, indent=1) + "\n")
print(f"wrote {OUT}")
