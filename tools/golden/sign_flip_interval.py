"""Golden values for src/stats/sign-flip-interval.ts: the exact paired sign-flip test of mean(d) = theta
(scipy.stats.permutation_test, permutation_type='samples' on (d - theta, 0), all 2^n patterns) and the
interval that inverts it, found by bisection on scipy's p(theta) (not by the pattern bounds the
TypeScript code uses). Writes src/stats/__fixtures__/sign-flip-interval.golden.json."""
import json
import numpy as np
from scipy import stats

ALPHA = 0.05


def p_at(d, theta):
    x = np.asarray(d, dtype=float) - theta
    res = stats.permutation_test((x, np.zeros_like(x)), lambda a, b, axis: np.mean(a - b, axis=axis),
                                 permutation_type='samples', alternative='two-sided', n_resamples=np.inf)
    return float(res.pvalue)


def end(d, inside, outside):
    # p(inside) > alpha >= p(outside): bisect to the last theta still inside.
    for _ in range(60):
        mid = (inside + outside) / 2
        if p_at(d, mid) > ALPHA:
            inside = mid
        else:
            outside = mid
    return inside


rng = np.random.default_rng(20261205)
cases = []
for n, shift in [(6, 0.8), (8, 0.3), (10, 0.0), (12, 0.5), (9, -0.4)]:
    d = np.round(rng.normal(shift, 1.0, n), 3).tolist()
    m = float(np.mean(d))
    span = 10 * (max(d) - min(d) + 1)
    cases.append({'deltas': d, 'p': p_at(d, 0.0), 'ci': [end(d, m, m - span), end(d, m, m + span)]})
with open('src/stats/__fixtures__/sign-flip-interval.golden.json', 'w') as f:
    json.dump({'alpha': ALPHA, 'source': 'scipy ' + __import__('scipy').__version__ + ' permutation_test (exact), bisection', 'cases': cases}, f, indent=1)
    f.write('\n')
