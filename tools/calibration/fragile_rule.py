#!/usr/bin/env python3
"""Issue #39: which leave-one-session-out rule marks a verdict fragile. Independent numpy/scipy
code (nothing from echolens), seeded; a fragile verdict counts as not significant.

Unit values: S sessions x 4 positions, position noise SD 0.4, so a session's gap is its session
effect plus N(0, 0.2^2) -- the designs of dominant_session_tradeoff.py and verdicts.slow.test.ts.

Rules compared (all start from the exact two-sided sign-flip test of the session means at 0.05):
  today      no mark (the verdict's decision on main)
  LOO        fragile when, without some session, the others lose the sign or (>= 6 left) their
             sign-flip p reaches 0.05 -- the mark before the outlier condition
  LOO+outlier(g)  fragile when such a session is also an outlier of the session estimates: its
             studentized deleted residual |x_i - mean_-i| / (s_-i sqrt(1 + 1/(n-1))) exceeds the
             Bonferroni t quantile t_{n-2}(1 - g/(2n)) (under normal, symmetric session effects
             the chance that any session of the sample crosses it is at most g)
  LOO+MAD(c) as LOO+outlier but with |x_i - median| / (1.4826 MAD) > c (Iglewicz-Hoaglin)

Designs: null N(0, 0.3^2); the fixed one-dominant null (one session +1.4, the others -1.4/(S-1));
the rare-dominant population (+1.4 w.p. 1/8, else -0.2); a heavy-tailed symmetric null (t_3
session effects scaled to SD 0.3); power at +0.3 with N(0, 0.3^2) and with t_3 effects; power at
-0.2 with N(0, 0.1^2) ("tight"); and samples that one session carries (one at +1.4,
the others +0.1 + N(0, 0.1^2)), where the mark should fire.

Run: nice -n 10 python3 tools/calibration/fragile_rule.py [replicates] [sessions] (default 10000 8).
"""
import itertools
import sys

import numpy as np
from scipy import stats

R = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
S = int(sys.argv[2]) if len(sys.argv) > 2 else 8
P = 4
ALPHA = 0.05
MIN_UNITS = 6
SIGNS = {n: np.array(list(itertools.product([-1.0, 1.0], repeat=n))) for n in (S - 1, S)}


def signflip_p(x):
    n = x.shape[1]
    stat = np.abs(x.mean(axis=1))
    out = np.empty(x.shape[0])
    for lo in range(0, x.shape[0], 1000):
        chunk = x[lo : lo + 1000]
        flipped = np.abs(chunk @ SIGNS[n].T / n)
        out[lo : lo + 1000] = (flipped >= stat[lo : lo + 1000, None] * (1 - 1e-12)).mean(axis=1)
    return out


def loo_fails(x):
    """Boolean (R, S): removing session i undoes the claim."""
    sign = np.sign(x.mean(axis=1))
    fails = np.zeros(x.shape, dtype=bool)
    for i in range(S):
        rest = np.delete(x, i, axis=1)
        bad = np.sign(rest.mean(axis=1)) != sign
        if S - 1 >= MIN_UNITS:
            bad |= signflip_p(rest) >= ALPHA
        fails[:, i] = bad
    return fails


def deleted_residual(x):
    out = np.empty(x.shape)
    n = S
    for i in range(S):
        rest = np.delete(x, i, axis=1)
        s = rest.std(axis=1, ddof=1)
        with np.errstate(divide='ignore', invalid='ignore'):
            out[:, i] = np.abs(x[:, i] - rest.mean(axis=1)) / (s * np.sqrt(1 + 1 / (n - 1)))
    return np.nan_to_num(out, nan=0.0, posinf=np.inf)


def mad_z(x):
    med = np.median(x, axis=1, keepdims=True)
    mad = np.median(np.abs(x - med), axis=1, keepdims=True)
    with np.errstate(divide='ignore', invalid='ignore'):
        return np.nan_to_num(np.abs(x - med) / (1.4826 * mad), nan=0.0, posinf=np.inf)


def designs(rng):
    noise = lambda: rng.normal(0, 0.4, size=(R, S, P)).mean(axis=2)  # noqa: E731
    t3 = lambda: rng.standard_t(3, size=(R, S)) * 0.3 / np.sqrt(3.0)  # noqa: E731  (t_3 has variance 3)
    fixed = np.full(S, -1.4 / (S - 1))
    fixed[0] = 1.4
    dominant = rng.random((R, S)) < 1 / 8
    return {
        'null N(0, 0.3²)': (rng.normal(0, 0.3, size=(R, S)) + noise(), 0.0),
        'null t₃ (SD 0.3)': (t3() + noise(), 0.0),
        'null one dominant (+1.4, rest −1.4/(S−1))': (fixed[None, :] + noise(), 0.0),
        'null rare dominant (+1.4 w.p. 1/8, else −0.2)': (np.where(dominant, 1.4, -0.2) + noise(), 0.0),
        'planted +0.3, N(0, 0.3²)': (0.3 + rng.normal(0, 0.3, size=(R, S)) + noise(), 0.3),
        'planted +0.3, t₃ (SD 0.3)': (0.3 + t3() + noise(), 0.3),
        'planted −0.2, N(0, 0.1²)': (-0.2 + rng.normal(0, 0.1, size=(R, S)) + noise(), -0.2),
        # One session carries a small common drift over the line: the case the mark exists for.
        'carried: one session +1.4, the others +0.1 + N(0, 0.1²)': (np.where(np.arange(S) == 0, 1.4, 0.1 + rng.normal(0, 0.1, size=(R, S))) + noise(), None),
    }


def main():
    rng = np.random.default_rng(20261207)
    data = designs(rng)
    se = lambda r: np.sqrt(r * (1 - r) / R)  # noqa: E731
    rows = {}
    for name, (x, truth) in data.items():
        sig = signflip_p(x) < ALPHA
        fails = loo_fails(x)
        dr = deleted_residual(x)
        mz = mad_z(x)
        rules = {'today (no mark)': sig, 'LOO (previous mark)': sig & ~fails.any(axis=1)}
        for g in (0.05, 0.10, 0.20):
            c = stats.t.ppf(1 - g / (2 * S), S - 2)
            rules[f'LOO + deleted residual > t_{S - 2}(1 − {g}/{2 * S}) = {c:.2f}'] = sig & ~(fails & (dr > c)).any(axis=1)
        for c in (3.5, 5.0):
            rules[f'LOO + MAD z > {c}'] = sig & ~(fails & (mz > c)).any(axis=1)
        rows[name] = (rules, truth)
    rules = list(next(iter(rows.values()))[0])
    print(f'{R} seeded replicates per design (seed 20261207), {S} sessions x {P} positions, position noise 0.4, alpha {ALPHA}')
    print('rate of significant, not-fragile verdicts (FPR on nulls, power on planted); vs today = ratio to the first row')
    for name, (res, truth) in rows.items():
        print()
        print(f'## {name}')
        base = res['today (no mark)'].mean()
        for r in rules:
            v = res[r].mean()
            ratio = f'{v / base:.3f}' if base > 0 else '—'
            print(f'| {r} | {v:.4f} ± {se(v):.4f} | {ratio} |')
    # Symmetric nulls: how often any session is an outlier at each threshold (the calibration of g).
    print()
    print('share of samples with any session beyond the deleted-residual threshold (symmetric nulls):')
    for name in ('null N(0, 0.3²)', 'null t₃ (SD 0.3)'):
        dr = deleted_residual(data[name][0])
        for g in (0.05, 0.10, 0.20):
            c = stats.t.ppf(1 - g / (2 * S), S - 2)
            print(f'  {name}, g = {g}: {(dr > c).any(axis=1).mean():.4f}')


if __name__ == '__main__':
    main()
