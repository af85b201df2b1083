import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { expectClose, loadGolden } from './__fixtures__/golden.js';
import { cohensD } from './cohens-d.js';
import { welchTTest } from './welch.js';

interface WelchCase {
  x: number[];
  y: number[];
  t: number;
  df: number;
  p: number;
  cohensD: number;
}
const golden = loadGolden<{ welch: WelchCase[] }>('golden-tests.json');

describe('welchTTest', () => {
  it.each(golden.welch.map((c, i) => [i, c] as const))('matches scipy ttest_ind(equal_var=False) #%i', (_, c) => {
    const result = welchTTest(c.x, c.y);
    expectClose(result.t, c.t, 1e-9, 0, 't');
    expectClose(result.df, c.df, 1e-9, 0, 'df');
    expectClose(result.p, c.p, 1e-6, 0, 'p');
  });

  it('is antisymmetric in its arguments', () => {
    const a = welchTTest([1, 2, 3, 4], [2, 5, 7]);
    const b = welchTTest([2, 5, 7], [1, 2, 3, 4]);
    expect(b.t).toBeCloseTo(-a.t, 12);
    expect(b.p).toBeCloseTo(a.p, 12);
  });

  it('rejects samples with fewer than two observations', () => {
    expect(() => welchTTest([1], [1, 2])).toThrow(StatisticsError);
    expect(() => welchTTest([1, 2], [])).toThrow(/y: needs at least 2/);
  });

  it('rejects NaN and infinities, naming the item', () => {
    expect(() => welchTTest([1, Number.NaN], [1, 2])).toThrow(InvalidArgumentError);
    expect(() => welchTTest([1, 2], [1, Number.POSITIVE_INFINITY])).toThrow(/y: item 1/);
  });

  it('rejects two constant samples (zero variance)', () => {
    expect(() => welchTTest([1, 1, 1], [2, 2])).toThrow(/zero variance/);
  });
});

describe('cohensD', () => {
  it.each(golden.welch.map((c, i) => [i, c] as const))('matches the pooled-SD closed form #%i', (_, c) => {
    expectClose(cohensD(c.x, c.y), c.cohensD, 1e-9, 0, 'd');
  });

  it('equals the mean difference over the pooled SD on a hand example', () => {
    // means 2 and 4; variances 1 and 4 with n = 3 each → pooled = 2.5
    expect(cohensD([1, 2, 3], [2, 4, 6])).toBeCloseTo(-2 / Math.sqrt(2.5), 14);
  });

  it('rejects zero pooled variance, short samples and NaN', () => {
    expect(() => cohensD([3, 3], [3, 3, 3])).toThrow(StatisticsError);
    expect(() => cohensD([1], [1, 2])).toThrow(/x: needs at least 2/);
    expect(() => cohensD([1, 2], [Number.NaN, 1])).toThrow(InvalidArgumentError);
  });
});
