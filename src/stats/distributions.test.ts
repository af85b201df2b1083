import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { type DistributionGrid, expectClose, loadGolden } from './__fixtures__/golden.js';
import {
  assertFiniteSample,
  assertSameLength,
  chisquareCdf,
  fCdf,
  normalTwoSidedP,
  sampleVariance,
  standardNormalCdf,
  tCdf,
  tQuantile,
  tTwoSidedP,
} from './distributions.js';

const golden = loadGolden<{ distributions: DistributionGrid }>('golden-tests.json').distributions;

describe('distribution wrappers against scipy.stats', () => {
  it('t CDF, including far tails', () => {
    for (const [x, df, p] of golden.tCdf) expectClose(tCdf(x, df), p, 1e-9, 0, `t.cdf(${x}, ${df})`);
  });
  it('t quantile', () => {
    for (const [q, df, x] of golden.tQuantile) expectClose(tQuantile(q, df), x, 1e-9, 0, `t.ppf(${q}, ${df})`);
  });
  it('standard normal CDF, including far tails', () => {
    for (const [z, p] of golden.normalCdf) expectClose(standardNormalCdf(z), p, 1e-9, 0, `norm.cdf(${z})`);
  });
  it('chi-square and F CDFs', () => {
    for (const [x, df, p] of golden.chisquareCdf) expectClose(chisquareCdf(x, df), p, 1e-9, 0, 'chi2');
    for (const [x, d1, d2, p] of golden.fCdf) expectClose(fCdf(x, d1, d2), p, 1e-9, 0, 'F');
  });
  it('two-sided p-values are symmetric and capped at 1', () => {
    expect(tTwoSidedP(2.5, 7)).toBe(tTwoSidedP(-2.5, 7));
    expect(tTwoSidedP(0, 7)).toBe(1);
    expect(normalTwoSidedP(0)).toBe(1);
    expect(normalTwoSidedP(1.959963984540054)).toBeCloseTo(0.05, 12);
  });
});

describe('shared input checks', () => {
  it('sampleVariance uses n − 1', () => {
    expect(sampleVariance([1, 2, 3, 4])).toBeCloseTo(5 / 3, 14);
  });
  it('assertFiniteSample names the argument and the bad item', () => {
    expect(() => assertFiniteSample([1, Number.NaN], 'scores', 1)).toThrow(/scores: item 1 is NaN/);
    expect(() => assertFiniteSample([1, Number.NEGATIVE_INFINITY], 'scores', 1)).toThrow(InvalidArgumentError);
    expect(() => assertFiniteSample([1], 'scores', 2)).toThrow(StatisticsError);
    expect(() => assertFiniteSample('12' as unknown as number[], 'scores', 1)).toThrow(/expected an array/);
    expect(() => assertFiniteSample(['1'] as unknown as number[], 'scores', 1)).toThrow(/item 0/);
  });
  it('assertSameLength reports both lengths', () => {
    expect(() => assertSameLength([1], [1, 2], 'pair')).toThrow(/pair: lengths differ \(1 vs 2\)/);
  });
});
