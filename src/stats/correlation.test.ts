import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { expectClose, loadGolden } from './__fixtures__/golden.js';
import { averageRanks, pearson, spearman } from './correlation.js';

interface CorrelationCase {
  x: number[];
  y: number[];
  r: number;
  pPearson: number;
  rho: number;
  pSpearman: number;
}
const golden = loadGolden<{ correlation: CorrelationCase[] }>('golden-tests.json');
const cases = golden.correlation.map((c, i) => [i, c.x.length, c] as const);

/** A coefficient to 1e-9 relative (1e-15 absolute) and its p to 1e-6 relative of scipy's. */
function expectLikeScipy(name: string, coefficient: number, p: number, expectedCoefficient: number, expectedP: number): void {
  expectClose(coefficient, expectedCoefficient, 1e-9, 1e-15, name);
  expectClose(p, expectedP, 1e-6, 0, 'p');
}

describe('pearson', () => {
  it.each(cases)('matches scipy.stats.pearsonr #%i (n = %i)', (_, __, c) => {
    const result = pearson(c.x, c.y);
    expectLikeScipy('r', result.r, result.p, c.r, c.pPearson);
  });

  it('gives p = 0 for a perfect linear relation', () => {
    expect(pearson([1, 2, 3, 4], [3, 5, 7, 9])).toEqual({ r: 1, p: 0 });
  });
});

describe('spearman', () => {
  it.each(cases)('matches scipy.stats.spearmanr with average ranks #%i (n = %i)', (_, __, c) => {
    const result = spearman(c.x, c.y);
    expectLikeScipy('rho', result.rho, result.p, c.rho, c.pSpearman);
  });

  it('is invariant under strictly increasing transforms', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -50, max: 50 }), fc.integer({ min: -50, max: 50 })), {
          minLength: 4,
          maxLength: 30,
        }),
        (pairs) => {
          const x = pairs.map(([a]) => a);
          const y = pairs.map(([, b]) => b);
          if (new Set(x).size < 2 || new Set(y).size < 2) return;
          const direct = spearman(x, y).rho;
          const transformed = spearman(
            x.map((v) => v ** 3 + 7),
            y.map(Math.exp),
          ).rho;
          expect(transformed).toBeCloseTo(direct, 12);
        },
      ),
    );
  });
});

describe('averageRanks', () => {
  it('gives tied values the average of their ranks', () => {
    expect(averageRanks([10, 20, 20, 5, 20])).toEqual([2, 4, 4, 1, 4]);
  });
});

describe('correlation input checks', () => {
  for (const [name, fn] of [
    ['pearson', pearson],
    ['spearman', spearman],
  ] as const) {
    it(`${name} rejects mismatched lengths`, () => {
      expect(() => fn([1, 2, 3], [1, 2, 3, 4])).toThrow(InvalidArgumentError);
      expect(() => fn([1, 2, 3], [1, 2, 3, 4])).toThrow(/lengths differ/);
    });
    it(`${name} rejects fewer than three pairs`, () => {
      expect(() => fn([1, 2], [2, 1])).toThrow(StatisticsError);
    });
    it(`${name} rejects a constant variable`, () => {
      expect(() => fn([1, 1, 1, 1], [1, 2, 3, 4])).toThrow(/x is constant/);
      expect(() => fn([1, 2, 3, 4], [2, 2, 2, 2])).toThrow(/y is constant/);
    });
    it(`${name} rejects NaN`, () => {
      expect(() => fn([1, Number.NaN, 3], [1, 2, 3])).toThrow(/x: item 1 is NaN/);
    });
  }
});
