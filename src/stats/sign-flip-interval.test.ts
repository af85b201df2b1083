import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signFlipTest } from './sign-flip.js';
import { signFlipInterval } from './sign-flip-interval.js';

const golden = JSON.parse(readFileSync(new URL('./__fixtures__/sign-flip-interval.golden.json', import.meta.url), 'utf8')) as {
  cases: Array<{ deltas: number[]; p: number; ci: [number, number] }>;
};

describe('signFlipInterval', () => {
  it('matches scipy’s exact permutation test and the interval found by bisection on its p (tools/golden/sign_flip_interval.py)', () => {
    for (const c of golden.cases) {
      const r = signFlipInterval(c.deltas);
      expect(r.method).toBe('exact');
      expect(r.p).toBeCloseTo(c.p, 10);
      expect(r.ci[0]).toBeCloseTo(c.ci[0], 6);
      expect(r.ci[1]).toBeCloseTo(c.ci[1], 6);
    }
  });

  it('gives the same p as the sign-flip test, exact and Monte Carlo', () => {
    const d = [0.4, -0.1, 0.9, 0.3, 0.2, -0.05, 0.7, 0.15];
    expect(signFlipInterval(d).p).toBeCloseTo(signFlipTest(d).p, 12);
    const long = Array.from({ length: 40 }, (_, i) => Math.sin(i * 1.7) + 0.3);
    const mc = signFlipInterval(long, { B: 4000, seed: 7 });
    expect(mc.method).toBe('monte-carlo');
    expect(mc.patterns).toBe(4000);
    // One implementation: the same patterns and the same p as the verdicts' sign-flip test.
    expect(mc.p).toBeCloseTo(signFlipTest(long, { B: 4000, seed: 7, exact: false }).p, 12);
  });

  it('p ≤ α exactly when 0 lies outside the interval (one procedure), over shifted data', () => {
    for (let shift = -1.5; shift <= 1.5; shift += 0.05) {
      const d = [0.3, -0.8, 0.5, 1.1, -0.2, 0.4, 0.9, -0.6, 0.1, 0.7].map((x) => x + shift);
      const r = signFlipInterval(d);
      const outside = r.ci[0] > 0 || r.ci[1] < 0;
      expect(outside).toBe(r.p <= 0.05);
    }
  });

  it('is unbounded with too few units, a point with no spread, and refuses bad options', () => {
    const few = signFlipInterval([1, 2, 3, 4, 5]);
    expect(few.ci).toEqual([Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]);
    expect(few.p).toBeCloseTo(2 / 32, 12);
    const flat = signFlipInterval([0, 0, 0, 0, 0, 0]);
    expect(flat.p).toBe(1);
    expect(flat.ci).toEqual([0, 0]);
    expect(() => signFlipInterval([1, 2], { level: 1 })).toThrow(/level/);
    expect(() => signFlipInterval([])).toThrow();
  });

  it('holds its level: the interval covers the true mean in about 95% of symmetric samples', () => {
    let covered = 0;
    let seed = 1;
    const normal = () => {
      // Box–Muller over a small LCG: the test's own stream, independent of the procedure's.
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const u = (seed + 1) / 2147483649;
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const v = (seed + 1) / 2147483649;
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    };
    const reps = 400;
    for (let r = 0; r < reps; r++) {
      const d = Array.from({ length: 10 }, () => 0.5 + normal());
      const ci = signFlipInterval(d).ci;
      if (ci[0] <= 0.5 && 0.5 <= ci[1]) covered++;
    }
    // Binomial SE at 0.95 over 400 draws ≈ 0.011: 0.92 is more than 2.5 SE below.
    expect(covered / reps).toBeGreaterThan(0.92);
  });
});
