#!/usr/bin/env python3
"""Golden values for src/stats closed-form tests, from independent implementations.

Run from the repository root with a Python that has numpy + scipy 1.17 (the
Wilcoxon rule matched is scipy 1.17's method='auto'):

    python3 tools/golden/stats_tests.py

The TOST references come from statsmodels (DescrStatsW.ttost_mean), its CI from
scipy (mean ± t.ppf(1 − α, n − 1)·sem); when the
running Python has no statsmodels, the script re-runs that part under
/usr/bin/python3 (Debian's python3-statsmodels). Output:
src/stats/__fixtures__/golden-tests.json. Data sets are seeded, so re-running
reproduces the file.
"""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[2] / "src/stats/__fixtures__/golden-tests.json"


def floats(a):
    return [float(v) for v in a]


def statsmodels_tost(cases):
    from statsmodels.stats.weightstats import DescrStatsW

    out = []
    for case in cases:
        d = np.asarray(case["diffs"], dtype=float)
        m, a = case["margin"], case["alpha"]
        p, lower, upper = DescrStatsW(d).ttost_mean(-m, m)
        out.append({
            "p": float(p), "tLower": float(lower[0]), "pLower": float(lower[1]),
            "tUpper": float(upper[0]), "pUpper": float(upper[1]), "df": float(lower[2]),
        })
    return out


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--tost-only":
        print(json.dumps(statsmodels_tost(json.load(sys.stdin))))
        return

    import scipy
    from scipy import stats

    rng = np.random.default_rng(20260530)
    result = {"generator": "tools/golden/stats_tests.py", "scipy": scipy.__version__,
              "numpy": np.__version__}

    # Welch t and Cohen's d (d is a closed form computed here with numpy).
    welch = []
    shapes = [(2, 2, 1, 1, 0.5), (3, 5, 1, 4, 1.0), (10, 12, 2, 0.5, 0.3), (25, 40, 1, 1, 0.0),
              (200, 150, 3, 1, 0.2), (1000, 900, 1, 2, 0.05), (30, 30, 1, 1, 3.0)]
    for n1, n2, s1, s2, shift in shapes:
        x = rng.normal(shift, s1, n1)
        y = rng.normal(0, s2, n2)
        welch.append((x, y))
    # integer data with ties, and one sample constant (the other is not)
    welch.append((rng.integers(0, 4, 20).astype(float), rng.integers(1, 5, 25).astype(float)))
    welch.append((np.full(6, 2.0), rng.normal(0, 1, 8)))
    result["welch"] = []
    for x, y in welch:
        r = stats.ttest_ind(x, y, equal_var=False)
        n1, n2 = len(x), len(y)
        pooled = ((n1 - 1) * x.var(ddof=1) + (n2 - 1) * y.var(ddof=1)) / (n1 + n2 - 2)
        result["welch"].append({
            "x": floats(x), "y": floats(y), "t": float(r.statistic), "df": float(r.df),
            "p": float(r.pvalue), "cohensD": float((x.mean() - y.mean()) / np.sqrt(pooled)),
        })

    # Pearson and Spearman.
    corr = []
    for n, rho_true, ties in [(3, 0.5, False), (5, 0.9, False), (10, -0.4, False), (10, 0.0, True),
                              (50, 0.3, True), (200, 0.95, False), (1000, 0.1, True),
                              (14, 0.7, True)]:
        x = rng.normal(0, 1, n)
        y = rho_true * x + np.sqrt(1 - rho_true ** 2) * rng.normal(0, 1, n)
        if ties:
            x, y = np.round(x * 2) / 2, np.round(y * 2) / 2
        corr.append((x, y))
    result["correlation"] = []
    for x, y in corr:
        pr = stats.pearsonr(x, y)
        sr = stats.spearmanr(x, y)
        result["correlation"].append({
            "x": floats(x), "y": floats(y), "r": float(pr.statistic), "pPearson": float(pr.pvalue),
            "rho": float(sr.statistic), "pSpearman": float(sr.pvalue),
        })

    # Wilcoxon signed rank: each branch of scipy 1.17's method='auto'.
    wil = []
    for n in [5, 8, 12, 20, 35, 50]:                       # exact (no ties, no zeros)
        wil.append({"x": floats(rng.normal(0.3, 1, n))})
    for n in [51, 80, 300]:                                 # n > 50, normal
        wil.append({"x": floats(rng.normal(0.2, 1, n))})
    for n in [6, 10, 13]:                                   # ties/zeros, n <= 13: sign-flip
        wil.append({"x": floats(rng.integers(-2, 5, n).astype(float))})
    for n in [14, 30, 50, 120]:                             # ties/zeros, n > 13: normal
        wil.append({"x": floats(rng.integers(-3, 6, n).astype(float))})
    x = rng.normal(0, 1, 15)                                # paired form, one zero
    y = x - rng.normal(0.4, 1, 15)
    y[3] = x[3]
    wil.append({"x": floats(x), "y": floats(y)})
    x = rng.normal(0, 1, 9)                                 # paired, no ties: exact
    wil.append({"x": floats(x), "y": floats(x + rng.normal(0.5, 1, 9))})
    wil.append({"x": [1.0, -1.0, 2.0, -2.0, 3.0, -3.0]})    # symmetric: p = 1
    wil.append({"x": floats(np.arange(1, 21))})             # all positive: smallest exact p
    for case in wil:
        y = case.get("y")
        r = stats.wilcoxon(case["x"], y) if y is not None else stats.wilcoxon(case["x"])
        case.update({"statistic": float(r.statistic), "p": float(r.pvalue)})
    result["wilcoxon"] = wil

    # TOST on paired differences (statsmodels).
    tost_cases = []
    for n, mu, sd, margin, alpha in [(5, 0.0, 0.05, 0.08, 0.05), (30, -0.03, 0.2, 0.08, 0.05),
                                     (169, -0.03, 0.35, 0.08, 0.05), (12, 0.1, 0.1, 0.08, 0.05),
                                     (40, 0.01, 0.3, 0.2, 0.025), (2, 0.02, 0.01, 0.08, 0.05)]:
        tost_cases.append({"diffs": floats(rng.normal(mu, sd, n)), "margin": margin, "alpha": alpha})
    try:
        refs = statsmodels_tost(tost_cases)
        import statsmodels
        sm_version = statsmodels.__version__
    except ImportError:
        done = subprocess.run(["/usr/bin/python3", __file__, "--tost-only"],
                              input=json.dumps(tost_cases), capture_output=True, text=True,
                              check=True)
        refs = json.loads(done.stdout)
        sm_version = subprocess.run(
            ["/usr/bin/python3", "-c", "import statsmodels; print(statsmodels.__version__)"],
            capture_output=True, text=True, check=True).stdout.strip()
    result["statsmodels"] = sm_version
    # The CI comes from this scipy's t.ppf: Debian's scipy 1.10 behind statsmodels has a
    # t quantile good to only ~5e-9, which would make the reference the less precise side.
    for case, ref in zip(tost_cases, refs):
        d = np.asarray(case["diffs"])
        half = stats.t.ppf(1 - case["alpha"], len(d) - 1) * stats.sem(d)
        ref["ci"] = [float(d.mean() - half), float(d.mean() + half)]
    result["tost"] = [dict(case, **ref) for case, ref in zip(tost_cases, refs)]

    # Distribution functions the tests above rely on (tails included).
    result["distributions"] = {
        "tCdf": [[x, df, float(stats.t.cdf(x, df))] for x, df in
                 [(-40.0, 3), (-6.5, 10), (-1.2, 1), (0.3, 2.5), (2.0, 5), (-3.3, 168), (-9.0, 1000)]],
        "tQuantile": [[q, df, float(stats.t.ppf(q, df))] for q, df in
                      [(0.95, 1), (0.95, 4), (0.975, 39), (0.975, 168), (0.999, 3), (0.05, 7)]],
        "normalCdf": [[z, float(stats.norm.cdf(z))] for z in [-30.0, -8.0, -1.96, 0.0, 0.5, 3.0]],
        "chisquareCdf": [[x, df, float(stats.chi2.cdf(x, df))] for x, df in
                         [(3.84, 1), (0.5, 2), (20.0, 7), (100.0, 50)]],
        "fCdf": [[x, d1, d2, float(stats.f.cdf(x, d1, d2))] for x, d1, d2 in
                 [(1.0, 3, 10), (4.2, 2, 30), (0.2, 5, 5)]],
    }

    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
