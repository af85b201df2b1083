import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../core/errors.js';
import { benjaminiHochberg, holm } from './multiple-testing.js';

interface Case {
  p: number[];
  bh: number[];
  holm: number[];
}
const golden = JSON.parse(readFileSync(new URL('./__fixtures__/golden-resampling.json', import.meta.url), 'utf8')).multipleTesting as Case[];

function expectAllClose(actual: number[], expected: number[], relative: number): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((value, i) => {
    const e = expected[i] as number;
    expect(Math.abs(value - e)).toBeLessThanOrEqual(relative * Math.abs(e) + 1e-300);
  });
}

describe('benjaminiHochberg and holm', () => {
  it.each(golden.map((c, i) => [i, c] as const))('match statsmodels multipletests #%i', (_, c) => {
    expectAllClose(benjaminiHochberg(c.p), c.bh, 1e-9);
    expectAllClose(holm(c.p), c.holm, 1e-9);
  });

  it('hand example: BH and Holm of [0.01, 0.04, 0.03, 0.005]', () => {
    expectAllClose(benjaminiHochberg([0.01, 0.04, 0.03, 0.005]), [0.02, 0.04, 0.04, 0.02], 1e-12);
    expectAllClose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02], 1e-12);
  });

  it('adjusted values are ≥ raw, ≤ 1, and monotone in the raw order (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 }), (p) => {
        for (const adjust of [benjaminiHochberg, holm]) {
          const adjusted = adjust(p);
          const order = p.map((_, i) => i).sort((a, b) => (p[a] as number) - (p[b] as number));
          for (let r = 0; r < order.length; r++) {
            const i = order[r] as number;
            expect(adjusted[i]).toBeGreaterThanOrEqual(p[i] as number);
            expect(adjusted[i]).toBeLessThanOrEqual(1);
            if (r > 0) expect(adjusted[i]).toBeGreaterThanOrEqual(adjusted[order[r - 1] as number] as number);
          }
        }
        // Holm is never less conservative than BH.
        const bh = benjaminiHochberg(p);
        holm(p).forEach((h, i) => {
          expect(h).toBeGreaterThanOrEqual((bh[i] as number) - 1e-15);
        });
      }),
    );
  });

  it('an empty family gives an empty list', () => {
    expect(benjaminiHochberg([])).toEqual([]);
    expect(holm([])).toEqual([]);
  });

  it('rejects NaN and values outside [0, 1] naming the index', () => {
    expect(() => benjaminiHochberg([0.1, Number.NaN])).toThrow(/p\[1\]/);
    expect(() => holm([1.5])).toThrow(InvalidArgumentError);
    expect(() => holm([-0.01])).toThrow(InvalidArgumentError);
  });
});
