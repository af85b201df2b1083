#!/usr/bin/env python3
"""Golden values for src/stats/special-functions.ts: the t, normal, chi-square and F CDFs
and the t quantile on a grid that covers small and huge degrees of freedom, far tails and
values next to the median, from scipy.stats (1.17). The t quantiles are refined with mpmath
at 40 digits from scipy's value (scipy's t.ppf loses about 8 digits next to the median:
t.ppf(0.49997, 4) is off by 4e-8 relative).

    python3 tools/golden/distributions_grid.py

Output: src/stats/__fixtures__/golden-distributions.json (the grid is fixed, so re-running
reproduces the file).
"""
import json
from pathlib import Path

from scipy import stats

OUT = Path(__file__).resolve().parents[2] / "src/stats/__fixtures__/golden-distributions.json"

DFS = [0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 7, 10, 19, 30, 47, 100, 168, 500, 1000, 1e4, 1e5, 1e6, 1e7]
TS = [-200, -40, -9, -5, -3.3, -2, -1.2, -0.5, -1e-3, -1e-6, 0, 1e-4, 0.3, 1, 2, 4.5, 12]
PS = [1e-12, 1e-8, 1e-5, 0.001, 0.01, 0.025, 0.05, 0.1, 0.3, 0.49997, 0.5, 0.6, 0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-6]
ZS = [-37, -30, -12, -8, -5, -3, -1.96, -1, -0.1, -1e-8, 0, 0.5, 1.645, 3, 6, 8.2]
F_DFS = [(1, 1), (2, 30), (3, 10), (5, 5), (10, 1000), (40, 3), (200, 200), (1e5, 50), (9e6, 1.4e4)]
F_XS = [1e-4, 0.05, 0.2, 0.5, 0.887, 1, 1.5, 4.2, 30]
CHI_DFS = [0.5, 1, 2, 3, 7, 15, 50, 300, 5000, 57383.3]


def finite(v):
    return float(v)


def t_ppf(p, df):
    """The t quantile to 40 digits: the root of the lower-tail probability, from scipy's start."""
    import mpmath as mp

    mp.mp.dps = 40
    start = stats.t.ppf(p, df)
    if p == 0.5:
        return 0.0
    q = mp.mpf(p) if p < 0.5 else 1 - mp.mpf(p)
    s0 = -abs(mp.mpf(start))

    def tail(s):
        x = df / (df + s * s)
        return mp.betainc(mp.mpf(df) / 2, mp.mpf(1) / 2, 0, x, regularized=True) / 2 - q

    s = mp.findroot(tail, (s0 * (1 - mp.mpf(10) ** -6), s0 * (1 + mp.mpf(10) ** -6)), solver="secant")
    return float(s if p < 0.5 else -s)


def main():
    t_cdf = [[t, df, finite(stats.t.cdf(t, df))] for df in DFS for t in TS]
    t_quantiles = [[p, df, t_ppf(p, df)] for df in DFS for p in PS]
    norm = [[z, finite(stats.norm.cdf(z))] for z in ZS]
    chi = []
    for df in CHI_DFS:
        for k in [0.01, 0.2, 0.5, 0.9, 1.0, 1.1, 1.5, 3, 6]:
            x = df * k
            chi.append([x, df, finite(stats.chi2.cdf(x, df))])
    f = [[x, d1, d2, finite(stats.f.cdf(x, d1, d2))] for (d1, d2) in F_DFS for x in F_XS]
    data = {"scipy": __import__("scipy").__version__, "mpmath": __import__("mpmath").__version__, "tCdf": t_cdf, "tQuantile": t_quantiles, "normalCdf": norm, "chisquareCdf": chi, "fCdf": f}
    OUT.write_text(json.dumps(data, indent=0) + "\n")
    print(f"wrote {OUT}: {len(t_cdf)} t, {len(t_quantiles)} t quantiles, {len(norm)} normal, {len(chi)} chi-square, {len(f)} F")


if __name__ == "__main__":
    main()
