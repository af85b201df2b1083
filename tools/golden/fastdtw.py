#!/usr/bin/env python3
"""Golden values for src/metrics/fastdtw.ts (FastDTW and the `dtw-reference` variant).

Writes src/metrics/__fixtures__/golden-fastdtw.json, read by src/metrics/fastdtw.test.ts.
Run from the repository root:  python3 tools/golden/fastdtw.py

Debian has no python3-fastdtw package and this machine cannot reach PyPI, so the two
implementations fastdtw 0.3.4 ships are re-derived here in their own shape, from the
algorithm of Salvador & Chan (2007) and the behaviour of the library:

* pure-python: the window is a *set* of cells -- every coarse path cell widened to a
  (2r+1)^2 square, each square cell split into its four fine cells -- and the DP is a dict
  defaulting to infinity; ties take the first of (i-1, j), (i, j-1), (i-1, j-1).
* compiled (the Cython/C++ extension): per-row y bounds (path bounds, widened by r over rows and
  columns, doubled), a flat window list whose predecessors are found by index arithmetic as
  the extension does (including its rule that a diagonal predecessor needs y <= the previous
  row's upper bound, and its copy of the last coarse row's bounds into the extra rows); ties
  prefer (i-1, j) only when strictly cheapest, then (i, j-1) when strictly cheaper than the
  diagonal, else the diagonal.

Published outputs of fastdtw 0.3.4 that both must reproduce are asserted below (docstring
example; slaypni/fastdtw issue #46). Exact DTW (full matrix) cross-checks the cases whose
window covers everything. Cosine costs are computed with a left-to-right sum (the order the
TypeScript uses) and asserted to agree with scipy.spatial.distance.cosine to 1e-14, so path
ties resolve identically; embeddings are random unit vectors rounded to float32, like the
all-MiniLM-L6-v2 outputs the authors' code feeds to fastdtw.
"""

import json
import math
import os
from collections import defaultdict

import numpy as np
from scipy.spatial.distance import cosine as scipy_cosine

SEED = 20261130
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "src", "metrics", "__fixtures__", "golden-fastdtw.json")
INF = float("inf")


# ---------------------------------------------------------------- costs


def cosine_sequential(u, v):
    uv = uu = vv = 0.0
    for a, b in zip(u, v):
        uv += a * b
        uu += a * a
        vv += b * b
    d = 1.0 - uv / math.sqrt(uu * vv)
    return min(2.0, max(0.0, d))


def checked_cosine(u, v):
    d = cosine_sequential(u, v)
    assert abs(d - float(scipy_cosine(u, v))) <= 1e-14, (d, scipy_cosine(u, v))
    return d


def abs_cost(u, v):
    return abs(u[0] - v[0])


def halve(series):
    return [[(p + q) / 2 for p, q in zip(series[k], series[k + 1])] for k in range(0, len(series) - 1, 2)]


# ---------------------------------------------------------------- pure-python flavour


def python_dtw(x, y, cost, cells=None):
    if cells is None:
        cells = [(i, j) for i in range(len(x)) for j in range(len(y))]
    acc = defaultdict(lambda: (INF, -1, -1))
    acc[(-1, -1)] = (0.0, -1, -1)
    for i, j in cells:
        options = [(acc[(i - 1, j)][0], i - 1, j), (acc[(i, j - 1)][0], i, j - 1), (acc[(i - 1, j - 1)][0], i - 1, j - 1)]
        best = options[0]
        for option in options[1:]:
            if option[0] < best[0]:
                best = option
        acc[(i, j)] = (best[0] + cost(x[i], y[j]), best[1], best[2])
    path = []
    i, j = len(x) - 1, len(y) - 1
    while (i, j) != (-1, -1):
        path.append((i, j))
        _, i, j = acc[(i, j)]
    path.reverse()
    return acc[(len(x) - 1, len(y) - 1)][0], path


def python_window(path, n, m, radius):
    widened = set()
    for a, b in path:
        for da in range(-radius, radius + 1):
            for db in range(-radius, radius + 1):
                widened.add((a + da, b + db))
    fine = set()
    for a, b in widened:
        fine.update({(2 * a, 2 * b), (2 * a, 2 * b + 1), (2 * a + 1, 2 * b), (2 * a + 1, 2 * b + 1)})
    cells = []
    for i in range(n):
        row = sorted(j for (r, j) in fine if r == i and 0 <= j < m)
        assert row and row == list(range(row[0], row[-1] + 1)), "window row not contiguous"
        cells.extend((i, j) for j in row)
    return cells


def python_fastdtw(x, y, cost, radius):
    if len(x) < radius + 2 or len(y) < radius + 2:
        return python_dtw(x, y, cost)
    _, coarse = python_fastdtw(halve(x), halve(y), cost, radius)
    return python_dtw(x, y, cost, python_window(coarse, len(x), len(y), radius))


# ---------------------------------------------------------------- compiled flavour


def compiled_dp(x, y, cost, bounds):
    """bounds[i] = (low, high) of row i. Flat window list; predecessors by index arithmetic."""
    cells = []  # (i, j, up, left, corner) as indices into the cost list (0 = start, -1 = none)
    for i, (low, high) in enumerate(bounds):
        for j in range(low, high + 1):
            k = len(cells)
            if i == 0 and j == 0:
                cells.append((i, j, -1, -1, 0))
                continue
            left = -1 if j == low else k
            if i == 0 or j > bounds[i - 1][1]:
                up = -1
            else:
                up = k - (bounds[i - 1][1] - low + 1) + 1
                if up == 0:
                    up = -1
            if i == 0 or j < bounds[i - 1][0] + 1 or j > bounds[i - 1][1]:
                corner = -1
            else:
                corner = up - 1
            cells.append((i, j, up, left, corner))
    acc = [(0.0, -1)] + [(INF, -1)] * len(cells)
    for k, (i, j, up, left, corner) in enumerate(cells):
        local = cost(x[i], y[j])
        d_up = acc[up][0] if up != -1 else INF
        d_left = acc[left][0] if left != -1 else INF
        d_corner = acc[corner][0] if corner != -1 else INF
        if d_up < d_left and d_up < d_corner:
            acc[k + 1] = (d_up + local, up)
        elif d_left < d_corner:
            acc[k + 1] = (d_left + local, left)
        else:
            acc[k + 1] = (d_corner + local, corner)
    assert cells[-1][:2] == (len(x) - 1, len(y) - 1)
    path = []
    k = len(cells)
    while k != 0:
        path.append(cells[k - 1][:2])
        k = acc[k][1]
    path.reverse()
    return acc[len(cells)][0], path


def compiled_bounds(path, n, m, radius):
    max_a, max_b = path[-1]
    path_low, path_high = {}, {}
    for a, b in path:
        path_low.setdefault(a, b)
        path_high[a] = b
    widened = []
    for a in range(max_a + 1):
        widened.append((max(0, path_low[max(0, a - radius)] - radius), min(max_b + radius, path_high[min(max_a, a + radius)] + radius)))
    for _ in range(radius):
        widened.append(widened[-1])
    bounds = []
    for a, (low, high) in enumerate(widened):
        for i in (2 * a, 2 * a + 1):
            if i < n:
                bounds.append((2 * low, min(m - 1, 2 * high + 1)))
    assert len(bounds) == n
    return bounds


def compiled_fastdtw(x, y, cost, radius):
    if len(x) < radius + 2 or len(y) < radius + 2:
        return compiled_dp(x, y, cost, [(0, len(y) - 1)] * len(x))
    _, coarse = compiled_fastdtw(halve(x), halve(y), cost, radius)
    return compiled_dp(x, y, cost, compiled_bounds(coarse, len(x), len(y), radius))


FLAVOURS = {"compiled": compiled_fastdtw, "pure-python": python_fastdtw}


def exact_dtw_distance(x, y, cost):
    n, m = len(x), len(y)
    acc = np.full((n + 1, m + 1), np.inf)
    acc[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            acc[i, j] = cost(x[i - 1], y[j - 1]) + min(acc[i - 1, j], acc[i, j - 1], acc[i - 1, j - 1])
    return float(acc[n, m])


def check_path(path, n, m):
    assert path[0] == (0, 0) and path[-1] == (n - 1, m - 1)
    for (i0, j0), (i1, j1) in zip(path, path[1:]):
        assert (i1 - i0, j1 - j0) in {(1, 0), (0, 1), (1, 1)}


# ---------------------------------------------------------------- published outputs


def published_checks():
    scalar = lambda xs: [[float(v)] for v in xs]
    # fastdtw docstring: fastdtw([1, 2, 3, 4, 5], [2, 3, 4]) == (2.0, [(0, 0), (1, 0), (2, 1), (3, 2), (4, 2)])
    for run in FLAVOURS.values():
        assert run(scalar([1, 2, 3, 4, 5]), scalar([2, 3, 4]), abs_cost, 1) == (2.0, [(0, 0), (1, 0), (2, 1), (3, 2), (4, 2)])
    # Issue #46: radius=len(x), x == y == [1, 6, 6, 33, 35]; the pure-python module and the compiled one differ.
    same = scalar([1, 6, 6, 33, 35])
    assert python_fastdtw(same, same, abs_cost, 5) == (0.0, [(0, 0), (1, 1), (1, 2), (2, 2), (3, 3), (4, 4)])
    assert compiled_fastdtw(same, same, abs_cost, 5) == (0.0, [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)])


# ---------------------------------------------------------------- cases


def unit_float32(rng, dim):
    v = rng.standard_normal(dim)
    v = v / np.linalg.norm(v)
    return [float(c) for c in v.astype(np.float32)]


def main():
    published_checks()
    rng = np.random.default_rng(SEED)
    vector_cases = []
    # Scalar series under |a - b| (fastdtw's default cost), including integer-valued ties.
    for k in range(24):
        n, m = int(rng.integers(1, 41)), int(rng.integers(1, 41))
        if k % 3 == 0:
            x = [[float(v)] for v in rng.integers(0, 4, n)]
            y = [[float(v)] for v in rng.integers(0, 4, m)]
        else:
            x = [[float(v)] for v in rng.standard_normal(n)]
            y = [[float(v)] for v in rng.standard_normal(m)]
        radius = [1, 1, 2, 3][k % 4]
        for flavour, run in FLAVOURS.items():
            distance, path = run(x, y, abs_cost, radius)
            check_path(path, n, m)
            assert abs(sum(abs_cost(x[i], y[j]) for i, j in path) - distance) <= 1e-9
            exact = exact_dtw_distance(x, y, abs_cost)
            assert distance >= exact - 1e-12
            vector_cases.append({"cost": "abs", "x": x, "y": y, "radius": radius, "flavor": flavour, "distance": distance, "path": path, "exact": exact})

    # Symbol sequences over a small vocabulary: repeated symbols give exact-zero costs and ties.
    vocabulary = [f"Category{c}/Sub{s}" for c in range(4) for s in range(3)] + ["unmapped"]
    embeddings = {symbol: unit_float32(rng, 16) for symbol in vocabulary}
    reference_cases = []
    for k in range(40):
        n, m = int(rng.integers(1, 31)), int(rng.integers(1, 31))
        if k == 0:
            n = m = 0
        size = int(rng.integers(2, len(vocabulary) + 1))
        pool = vocabulary[:size]
        a = [pool[int(i)] for i in rng.integers(0, size, n)]
        b = list(a) if k % 5 == 1 else [pool[int(i)] for i in rng.integers(0, size, m)]
        if k % 5 == 2 and b:
            b = a[: max(1, len(a) // 2)] + b[len(b) // 2 :]
        radius = 1 if k % 4 else 2
        for flavour, run in FLAVOURS.items():
            if not a or not b:
                reference_cases.append({"a": a, "b": b, "radius": radius, "flavor": flavour, "distance": None, "normalized": None, "path": []})
                continue
            x = [embeddings[s] for s in a]
            y = [embeddings[s] for s in b]
            distance, path = run(x, y, checked_cosine, radius)
            check_path(path, len(a), len(b))
            normalized = distance / len(path)
            assert 0.0 <= normalized <= 2.0
            if 2 * radius >= max(len(a), len(b)):
                assert distance == exact_dtw_distance(x, y, cosine_sequential)
            reference_cases.append({"a": a, "b": b, "radius": radius, "flavor": flavour, "distance": distance, "normalized": normalized, "path": path})

    out = {
        "seed": SEED,
        "generator": "tools/golden/fastdtw.py",
        "note": "pure-python and compiled flavours of fastdtw 0.3.4 re-derived in Python; see the script docstring",
        "vectorCases": vector_cases,
        "embeddings": embeddings,
        "referenceCases": reference_cases,
    }
    # One case per line keeps the fixture small and its diffs readable.
    lines = []
    for key, value in out.items():
        if isinstance(value, list):
            body = ",\n".join("  " + json.dumps(case, separators=(",", ":")) for case in value)
            lines.append(f"{json.dumps(key)}: [\n{body}\n ]")
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value, separators=(',', ':'))}")
    with open(OUT, "w") as f:
        f.write("{\n " + ",\n ".join(lines) + "\n}\n")
    print(f"wrote {len(vector_cases)} vector cases and {len(reference_cases)} reference cases to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
