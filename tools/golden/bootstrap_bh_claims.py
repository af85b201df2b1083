"""Golden values for src/stats/bootstrap-claims.ts: BH-adjusted p (scipy.stats.false_discovery_control,
method 'bh') and, per test, the bootstrap test of theta inverted at q = max(R, 1) * alpha / m, found by
evaluating p(theta) = min(1, 2 * min(#{r <= theta} + 1, #{r >= theta} + 1) / (n + 1)) directly at every
replicate value (the ends are replicates) rather than by the order-statistic formula the TypeScript code
uses. Writes src/stats/__fixtures__/bootstrap-bh-claims.golden.json."""
import json
import numpy as np
from scipy import stats

ALPHA = 0.05
rng = np.random.default_rng(20261205)


def p_at(r, theta):
    below = np.sum(r <= theta)
    above = np.sum(r >= theta)
    return min(1.0, 2 * min(below + 1, above + 1) / (len(r) + 1))


def inverted(r, q):
    candidates = np.unique(r)
    inside = [t for t in candidates if p_at(r, t) >= q]
    if p_at(r, -1e300) >= q:
        return [None, None]  # unbounded: every theta is inside
    return [float(min(inside)), float(max(inside))]


families = []
for m, n, shifts in [
    (4, 199, [0.0, 0.1, 0.35, 0.6]),
    (6, 999, [0.0, 0.05, 0.12, 0.2, 0.3, -0.25]),
    (3, 99, [0.5, 0.0, 0.9]),
    (5, 500, [0.0, 0.0, 0.02, -0.03, 0.01]),
]:
    tests = []
    for s in shifts[:m]:
        r = np.round(rng.normal(s, 0.15, size=n), 6)
        tests.append({'replicates': r.tolist(), 'p': p_at(r, 0.0)})
    p = np.array([t['p'] for t in tests])
    adjusted = stats.false_discovery_control(p, method='bh')
    significant = int(np.sum(adjusted < ALPHA))
    q = max(significant, 1) * ALPHA / m
    for t, a in zip(tests, adjusted):
        t['pAdjusted'] = float(a)
        t['interval'] = inverted(np.array(t['replicates']), q)
    families.append({'alpha': ALPHA, 'q': q, 'significant': significant, 'tests': tests})

out = 'src/stats/__fixtures__/bootstrap-bh-claims.golden.json'
with open(out, 'w') as f:
    json.dump({'families': families}, f)
print(out, [(f['significant'], round(f['q'], 5)) for f in families])
