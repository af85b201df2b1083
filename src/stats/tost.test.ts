import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { expectClose, loadGolden } from './__fixtures__/golden.js';
import { tost } from './tost.js';

interface TostCase {
  diffs: number[];
  margin: number;
  alpha: number;
  p: number;
  tLower: number;
  pLower: number;
  tUpper: number;
  pUpper: number;
  df: number;
  ci: [number, number];
}
const golden = loadGolden<{ tost: TostCase[] }>('golden-tests.json');

describe('tost', () => {
  it.each(golden.tost.map((c, i) => [i, c.diffs.length, c] as const))('matches statsmodels DescrStatsW.ttost_mean #%i (n = %i)', (_, __, c) => {
    const result = tost(c.diffs, { margin: c.margin, alpha: c.alpha });
    expect(result.df).toBe(c.df);
    expectClose(result.tLower, c.tLower, 1e-9, 0, 'tLower');
    expectClose(result.tUpper, c.tUpper, 1e-9, 0, 'tUpper');
    expectClose(result.pLower, c.pLower, 1e-6, 0, 'pLower');
    expectClose(result.pUpper, c.pUpper, 1e-6, 0, 'pUpper');
    expectClose(result.p, c.p, 1e-6, 0, 'p');
    expectClose(result.ci[0], c.ci[0], 1e-9, 1e-15, 'ci low');
    expectClose(result.ci[1], c.ci[1], 1e-9, 1e-15, 'ci high');
    expect(result.equivalent).toBe(c.p < c.alpha);
  });

  it('declares equivalence exactly when the (1 − 2α) CI lies inside ±margin', () => {
    for (const c of golden.tost) {
      const result = tost(c.diffs, { margin: c.margin, alpha: c.alpha });
      const inside = result.ci[0] > -c.margin && result.ci[1] < c.margin;
      expect(result.equivalent).toBe(inside);
    }
  });

  it('defaults to the pre-registered ±0.08 margin and α = 0.05', () => {
    expect(tost([0.01, -0.02, 0.03])).toMatchObject({ margin: 0.08, alpha: 0.05 });
  });

  it('rejects zero variance, fewer than two differences and NaN', () => {
    expect(() => tost([0.1, 0.1, 0.1])).toThrow(StatisticsError);
    expect(() => tost([0.1])).toThrow(/diffs: needs at least 2/);
    expect(() => tost([0.1, Number.NaN])).toThrow(InvalidArgumentError);
  });

  it('rejects a non-positive margin and α outside (0, 0.5)', () => {
    expect(() => tost([0.1, 0.2], { margin: 0 })).toThrow(/margin/);
    expect(() => tost([0.1, 0.2], { margin: Number.NaN })).toThrow(InvalidArgumentError);
    expect(() => tost([0.1, 0.2], { alpha: 0.5 })).toThrow(/alpha/);
  });
});
