#!/usr/bin/env python3
"""Golden values for src/persona-drift/influence.test.ts: the studentized deleted residuals of the
session estimates (the externally studentized residuals of an intercept-only least-squares fit,
computed here from the hat-matrix formula, not from echolens's leave-one-out definition) and the
outlier threshold t_{n-2}(1 - 0.05/(2n)) from scipy.

Run: python3 tools/golden/deleted_residuals.py
"""
import numpy as np
from scipy import stats


def externally_studentized(x):
    x = np.asarray(x, dtype=float)
    n = len(x)
    X = np.ones((n, 1))
    h = np.diag(X @ np.linalg.inv(X.T @ X) @ X.T)  # 1/n each
    e = x - X @ np.linalg.lstsq(X, x, rcond=None)[0]
    s2 = (e**2).sum() / (n - 1)
    s2_del = ((n - 1) * s2 - e**2 / (1 - h)) / (n - 2)
    return np.abs(e) / np.sqrt(s2_del * (1 - h))


if __name__ == '__main__':
    for values in ([1.2, 0.4, 0.05, -0.02, 0.03, 0.3, -0.01, 0.35], [0.28, 0.82, 0.39, -0.22, 0.77, 0.35, -0.03, 0.52]):
        print(values, '->', [round(float(v), 10) for v in externally_studentized(values)])
    for n in (6, 8, 12):
        print(f'threshold n = {n}: t_{n - 2}(1 - 0.05/{2 * n}) = {stats.t.ppf(1 - 0.05 / (2 * n), n - 2)!r}')
