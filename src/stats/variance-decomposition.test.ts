import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { expectClose, loadGolden } from './__fixtures__/golden.js';
import { sampleVariance } from './distributions.js';
import { varianceDecomposition } from './variance-decomposition.js';

interface DecompositionCase {
  name: string;
  kind: 'mixed' | 'decomposition';
  rows: { y: number; group: string }[];
  lme4: { groupVariance: number; residualVariance: number; singular: boolean };
}
const golden = loadGolden<{ cases: DecompositionCase[] }>('golden-mixed.json');
const cases = golden.cases.filter((c) => c.kind === 'decomposition').map((c) => [c.name, c] as const);

describe('varianceDecomposition against lme4 lmer(y ~ 1 + (1 | group), REML)', () => {
  it.each(cases)('%s', (_, c) => {
    const result = varianceDecomposition(
      c.rows.map((r) => r.y),
      c.rows.map((r) => r.group),
    );
    const scale = c.lme4.residualVariance;
    expectClose(result.between, c.lme4.groupVariance, 1e-4, 1e-8 * scale, 'between');
    expectClose(result.within, c.lme4.residualVariance, 1e-4, 0, 'within');
    expect(result.total).toBeCloseTo(result.between + result.within, 14);
    expect(result.betweenShare).toBeCloseTo(result.between / result.total, 14);
    expect(result.boundary).toBe(c.lme4.singular);
    expect(result.sampleVariance).toBeCloseTo(sampleVariance(c.rows.map((r) => r.y)), 12);
  });
});

describe('varianceDecomposition behaviour', () => {
  it('puts all variance within when every group has the same mean', () => {
    const result = varianceDecomposition([1, 3, 2, 2, 0, 4], ['a', 'a', 'b', 'b', 'c', 'c']);
    expect(result).toMatchObject({ between: 0, betweenShare: 0, boundary: true });
    expect(result.within).toBeGreaterThan(0);
  });

  it('accepts numeric group labels', () => {
    const result = varianceDecomposition([1, 1.2, 3, 3.3, 5, 5.1], [1, 1, 2, 2, 3, 3]);
    expect(result.nGroups).toBe(3);
    expect(result.betweenShare).toBeGreaterThan(0.9);
  });

  it('rejects a single group, mismatched lengths, NaN and zero variance', () => {
    expect(() => varianceDecomposition([1, 2, 3], ['a', 'a', 'a'])).toThrow(/at least 2 groups/);
    expect(() => varianceDecomposition([1, 2, 3], ['a', 'b'])).toThrow(InvalidArgumentError);
    expect(() => varianceDecomposition([1, Number.NaN, 3, 4], ['a', 'a', 'b', 'b'])).toThrow(
      /values: item 1/,
    );
    expect(() => varianceDecomposition([2, 2, 2, 2], ['a', 'a', 'b', 'b'])).toThrow(StatisticsError);
    expect(() => varianceDecomposition([1], ['a'])).toThrow(/needs at least 2/);
  });

  it('rejects groups made only of single observations', () => {
    expect(() => varianceDecomposition([1, 2, 3], ['a', 'b', 'c'])).toThrow(StatisticsError);
  });

  it('rejects missing group labels', () => {
    const groups = ['a', 'a', undefined, 'b'] as unknown as string[];
    expect(() => varianceDecomposition([1, 2, 3, 4], groups)).toThrow(/groups: item 2/);
  });
});
