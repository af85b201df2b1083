import { describe, expect, it } from 'vitest';
import { type DistributionGrid, expectClose, loadGolden } from './__fixtures__/golden.js';
import { chisquareCdfOf, fCdfOf, normalCdfOf, tCdfOf, tQuantileOf } from './special-functions.js';

const grid = loadGolden<DistributionGrid>('golden-distributions.json');

describe('special functions against scipy.stats (t quantiles refined with mpmath)', () => {
  it('t CDF: df 0.5 to 1e7, tails to 1e-300 and values next to the median', () => {
    expect(grid.tCdf.length).toBeGreaterThan(300);
    for (const [t, df, p] of grid.tCdf) expectClose(tCdfOf(t, df), p, 1e-9, 0, `t.cdf(${t}, ${df})`);
  });
  it('t quantile: p from 1e-12 to 1 − 1e-6', () => {
    for (const [p, df, x] of grid.tQuantile) expectClose(tQuantileOf(p, df), x, 1e-9, 0, `t.ppf(${p}, ${df})`);
  });
  it('normal, chi-square and F CDFs', () => {
    for (const [z, p] of grid.normalCdf) expectClose(normalCdfOf(z), p, 1e-9, 0, `norm.cdf(${z})`);
    for (const [x, df, p] of grid.chisquareCdf) expectClose(chisquareCdfOf(x, df), p, 1e-9, 0, `chi2.cdf(${x}, ${df})`);
    for (const [x, d1, d2, p] of grid.fCdf) expectClose(fCdfOf(x, d1, d2), p, 1e-9, 0, `f.cdf(${x}, ${d1}, ${d2})`);
  });
  it('edges: infinities, the median, invalid arguments', () => {
    expect(tCdfOf(Number.NEGATIVE_INFINITY, 3)).toBe(0);
    expect(tCdfOf(Number.POSITIVE_INFINITY, 3)).toBe(1);
    expect(tCdfOf(0, 3)).toBe(0.5);
    expect(tCdfOf(1.5, Number.POSITIVE_INFINITY)).toBe(normalCdfOf(1.5));
    expect(tQuantileOf(0.5, 7)).toBe(0);
    expect(tQuantileOf(0, 7)).toBe(Number.NEGATIVE_INFINITY);
    expect(tQuantileOf(1, 7)).toBe(Number.POSITIVE_INFINITY);
    expect(tQuantileOf(0.975, 10)).toBeCloseTo(-tQuantileOf(0.025, 10), 12);
    expect(tCdfOf(tQuantileOf(0.3, 2.5), 2.5)).toBeCloseTo(0.3, 13);
    expect(Number.isNaN(tCdfOf(1, 0))).toBe(true);
    expect(Number.isNaN(tQuantileOf(1.2, 3))).toBe(true);
    expect(Number.isNaN(chisquareCdfOf(Number.NaN, 2))).toBe(true);
    expect(chisquareCdfOf(-1, 2)).toBe(0);
    expect(fCdfOf(0, 2, 3)).toBe(0);
  });
});
