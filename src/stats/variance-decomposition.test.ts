import fc from 'fast-check';
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

describe('varianceDecomposition on balanced data', () => {
  // For k groups of equal size m, REML has a closed form (the ANOVA estimator, truncated at 0):
  // between = (MSB − MSW)/m and within = MSW when MSB > MSW, else between = 0, within = SST/(N − 1).
  it('equals the truncated ANOVA estimator', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 2, max: 6 }),
        fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 36, maxLength: 36 }),
        fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: 6, maxLength: 6 }),
        (k, m, noise, shifts) => {
          const values: number[] = [];
          const groups: string[] = [];
          for (let g = 0; g < k; g++) {
            for (let j = 0; j < m; j++) {
              values.push(shifts[g]! + noise[g * m + j]!);
              groups.push(`g${g}`);
            }
          }
          const grand = values.reduce((a, b) => a + b, 0) / values.length;
          let ssb = 0;
          let ssw = 0;
          for (let g = 0; g < k; g++) {
            const slice = values.slice(g * m, (g + 1) * m);
            const groupMean = slice.reduce((a, b) => a + b, 0) / m;
            ssb += m * (groupMean - grand) ** 2;
            for (const v of slice) ssw += (v - groupMean) ** 2;
          }
          if (ssw < 1e-6 * (ssb + ssw) || ssw + ssb < 1e-9) return;
          const msb = ssb / (k - 1);
          const msw = ssw / (k * (m - 1));
          const result = varianceDecomposition(values, groups);
          if (msb > msw) {
            expectClose(result.within, msw, 1e-7, 0, 'within');
            // where MSB ≈ MSW the optimum is flat to rounding: allow 1e-10 of the residual scale
            expectClose(result.between, (msb - msw) / m, 1e-6, 1e-10 * msw, 'between');
          } else {
            // at MSB = MSW exactly the boundary and the interior coincide up to rounding
            expect(result.between).toBeLessThanOrEqual(1e-10 * msw);
            expectClose(result.within, (ssb + ssw) / (k * m - 1), 1e-7, 0, 'within');
          }
        },
      ),
      { numRuns: 300, seed: 42 },
    );
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
    expect(() => varianceDecomposition([1, Number.NaN, 3, 4], ['a', 'a', 'b', 'b'])).toThrow(/values: item 1/);
    expect(() => varianceDecomposition([2, 2, 2, 2], ['a', 'a', 'b', 'b'])).toThrow(StatisticsError);
    expect(() => varianceDecomposition([1], ['a'])).toThrow(/needs at least 2/);
  });

  it('rejects data with no variance within groups (unbounded variance ratio)', () => {
    expect(() => varianceDecomposition([1, 1, 3, 3, 2, 2], ['a', 'a', 'b', 'b', 'c', 'c'])).toThrow(/no variance within groups/);
  });

  it('rejects groups made only of single observations', () => {
    expect(() => varianceDecomposition([1, 2, 3], ['a', 'b', 'c'])).toThrow(StatisticsError);
  });

  it('rejects missing group labels', () => {
    const groups = ['a', 'a', undefined, 'b'] as unknown as string[];
    expect(() => varianceDecomposition([1, 2, 3, 4], groups)).toThrow(/groups: item 2/);
  });
});
