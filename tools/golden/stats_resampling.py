#!/usr/bin/env python3
"""Golden values for the resampling and agreement half of src/stats/.

Independent implementations:
  - Benjamini-Hochberg and Holm: statsmodels.stats.multitest.multipletests ('fdr_bh', 'holm')
  - Cohen's kappa (unweighted, quadratic): statsmodels.stats.inter_rater.cohens_kappa
  - Fleiss' kappa: statsmodels.stats.inter_rater.fleiss_kappa (method 'fleiss')
  - exact sign-flip p-values: brute force over every sign pattern (itertools.product)
  - percentile quantiles: numpy.quantile (method 'linear' = Hyndman-Fan type 7)
  - xoshiro128** 1.1 / SplitMix64: a plain-Python transcription of the reference C code; the
    jump is checked against the GF(2) transition matrix raised to the power 2^64, computed here
    without the published jump polynomial.

Inputs are drawn from numpy's default_rng with fixed seeds, so the output is reproducible.
Run with Debian's python (statsmodels: apt-get install -y python3-statsmodels):
  /usr/bin/python3 tools/golden/stats_resampling.py src/stats/__fixtures__/golden-resampling.json
"""

import itertools
import json
import sys

import numpy as np
import statsmodels
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa
from statsmodels.stats.multitest import multipletests

MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF


# ---------------------------------------------------------------- xoshiro128** / SplitMix64
def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31), state


def rotl(x, k):
    return ((x << k) | (x >> (32 - k))) & MASK32


def xoshiro_next(s):
    result = (rotl((s[1] * 5) & MASK32, 7) * 9) & MASK32
    t = (s[1] << 9) & MASK32
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = rotl(s[3], 11)
    return result


def seeded_state(seed):
    st = seed & MASK64
    z1, st = splitmix64(st)
    z2, st = splitmix64(st)
    return [z1 & MASK32, z1 >> 32, z2 & MASK32, z2 >> 32]


def state_to_int(s):
    return s[0] | (s[1] << 32) | (s[2] << 64) | (s[3] << 96)


def int_to_state(v):
    return [(v >> (32 * i)) & MASK32 for i in range(4)]


def transition_columns():
    """Column j = image of basis vector e_j under one state update (the update is GF(2)-linear)."""
    cols = []
    for j in range(128):
        s = int_to_state(1 << j)
        xoshiro_next(s)
        cols.append(state_to_int(s))
    return cols


def apply(cols, v):
    out = 0
    j = 0
    while v:
        if v & 1:
            out ^= cols[j]
        v >>= 1
        j += 1
    return out


def compose(a, b):
    """Matrix product A·B with matrices stored as column lists."""
    return [apply(a, col) for col in b]


def jump_by_matrix_power(state):
    m = transition_columns()
    for _ in range(64):  # T^(2^64) by 64 squarings
        m = compose(m, m)
    return int_to_state(apply(m, state_to_int(state)))


def next_double(s):
    a = xoshiro_next(s) >> 5
    b = xoshiro_next(s) >> 6
    return (a * 67108864 + b) / 9007199254740992.0


def xoshiro_cases():
    s = [1, 2, 3, 4]
    reference_outputs = [xoshiro_next(s) for _ in range(10)]
    seeds = {}
    for seed in (0, 1, 42, 123456789):
        st = seeded_state(seed)
        first_state = list(st)
        uints = [xoshiro_next(st) for _ in range(8)]
        st = list(first_state)
        doubles = [next_double(st) for _ in range(4)]
        seeds[str(seed)] = {"state": first_state, "uint32": uints, "next": doubles}
    return {
        "fromState1234": reference_outputs,
        "jumpFrom1234": jump_by_matrix_power([1, 2, 3, 4]),
        "jumpFromSeed42": jump_by_matrix_power(seeded_state(42)),
        "seeds": seeds,
    }


# ---------------------------------------------------------------- multiple testing
def multiple_testing_cases(rng):
    vectors = [
        [0.01, 0.04, 0.03, 0.005, 0.2],
        [0.5],
        [0.0, 1.0, 0.5, 0.5, 0.02, 0.02, 0.02],
        [0.001, 0.0012, 0.9, 0.95, 0.049, 0.051, 0.3, 0.0001],
        [1.0, 1.0, 1.0],
        rng.uniform(0, 0.1, 12).tolist(),
        rng.uniform(0, 1, 30).tolist(),
        (rng.beta(0.3, 4, 50)).tolist(),
    ]
    cases = []
    for p in vectors:
        bh = multipletests(p, method="fdr_bh")[1]
        ho = multipletests(p, method="holm")[1]
        cases.append({"p": list(map(float, p)), "bh": bh.tolist(), "holm": ho.tolist()})
    return cases


# ---------------------------------------------------------------- agreement
def table_of(a, b, categories):
    idx = {c: i for i, c in enumerate(categories)}
    t = np.zeros((len(categories), len(categories)))
    for x, y in zip(a, b):
        t[idx[x], idx[y]] += 1
    return t


def kappa_cases(rng):
    cases = []
    specs = [(25, 0.6), (60, 0.3), (250, 0.55), (12, 0.0), (40, 0.9)]
    for n, p_same in specs:
        a = rng.integers(0, 4, n)
        noise = rng.integers(-1, 2, n)
        b = np.where(rng.uniform(size=n) < p_same, a, np.clip(a + noise, 0, 3))
        cases.append((a.tolist(), b.tolist(), [0, 1, 2, 3], None))
    # A 1-5 scale with inferred categories.
    a = rng.integers(1, 6, 80)
    b = np.clip(a + rng.integers(-2, 3, 80), 1, 5)
    cases.append((a.tolist(), b.tolist(), [1, 2, 3, 4, 5], "infer"))
    # Categories 0-3 where one category is never used by either rater.
    a = rng.choice([0, 1, 3], 30)
    b = np.where(rng.uniform(size=30) < 0.5, a, rng.choice([0, 1, 3], 30))
    cases.append((a.tolist(), b.tolist(), [0, 1, 2, 3], None))
    out = []
    for a, b, categories, mode in cases:
        t = table_of(a, b, categories)
        k_plain = cohens_kappa(t, return_results=False)
        k_quad = cohens_kappa(t, wt="quadratic", return_results=False)
        a_arr = np.array(a)
        b_arr = np.array(b)
        out.append({
            "a": [int(v) for v in a],
            "b": [int(v) for v in b],
            "categories": mode if mode else categories,
            "usedCategories": categories,
            "kappa": float(k_plain),
            "kappaQuadratic": float(k_quad),
            "exact": float(np.mean(a_arr == b_arr)),
            "withinOne": float(np.mean(np.abs(a_arr - b_arr) <= 1)),
        })
    return out


def fleiss_cases(rng):
    out = []
    for subjects, raters, k in [(10, 3, 4), (30, 5, 4), (8, 2, 3), (50, 7, 5)]:
        table = np.zeros((subjects, k), dtype=int)
        for i in range(subjects):
            # Raters lean toward a subject-specific category so kappa is clearly positive.
            favourite = rng.integers(0, k)
            probs = np.full(k, 0.4 / (k - 1))
            probs[favourite] = 0.6
            for c in rng.choice(k, raters, p=probs):
                table[i, c] += 1
        out.append({"table": table.tolist(), "kappa": float(fleiss_kappa(table, method="fleiss"))})
    return out


# ---------------------------------------------------------------- sign flip
def brute_force_sign_flip(d):
    d = np.asarray(d, dtype=float)
    n = len(d)
    observed = abs(d.sum())
    tol = 1e-9 * np.abs(d).sum()
    count = 0
    for signs in itertools.product((1.0, -1.0), repeat=n):
        if abs(float(np.dot(signs, d))) >= observed - tol:
            count += 1
    return count / 2**n


def sign_flip_cases(rng):
    vectors = [
        [0.5, 1.0, -0.25, 0.75, 0.5],
        [1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 0.0, 0.0],  # ties and zeros
        [0.0, 0.0, 0.0],
        [2.0],
        rng.normal(0.3, 1.0, 9).tolist(),
        (rng.integers(-3, 4, 14) / 4).tolist(),
        rng.normal(0.0, 1.0, 12).tolist(),
        rng.normal(0.5, 1.0, 16).tolist(),
    ]
    return [{"deltas": [float(v) for v in d], "mean": float(np.mean(d)), "p": brute_force_sign_flip(d)} for d in vectors]


# ---------------------------------------------------------------- quantiles
def quantile_cases(rng):
    qs = [0.0, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 1.0]
    samples = [
        [3.0],
        [1.0, 2.0],
        rng.normal(size=7).tolist(),
        rng.exponential(size=100).tolist(),
        rng.integers(0, 4, 41).astype(float).tolist(),
        rng.normal(size=1000).tolist(),
    ]
    return [{"values": s, "q": qs, "quantiles": np.quantile(np.asarray(s), qs).tolist()} for s in samples]


def main():
    rng = np.random.default_rng(20261130)
    golden = {
        "generator": "tools/golden/stats_resampling.py",
        "numpy": np.__version__,
        "statsmodels": statsmodels.__version__,
        "xoshiro": xoshiro_cases(),
        "multipleTesting": multiple_testing_cases(rng),
        "kappa": kappa_cases(rng),
        "fleiss": fleiss_cases(rng),
        "signFlip": sign_flip_cases(rng),
        "quantiles": quantile_cases(rng),
    }
    text = json.dumps(golden, indent=1) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
