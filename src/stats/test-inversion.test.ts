import { describe, expect, it } from 'vitest';
import { rng } from './rng.js';
import { normalDraws } from './testing/normal.js';
import { signFlipTest } from './sign-flip.js';
import { invertShiftTest, signFlipInference } from './test-inversion.js';

const normalOf = (seed: number) => normalDraws(rng(seed));

describe('signFlipInference', () => {
  it('gives signFlipTest’s p (exact and Monte Carlo) and an interval that excludes 0 exactly when p < α', () => {
    const normal = normalOf(5);
    let significant = 0;
    for (let r = 0; r < 120; r++) {
      const n = [6, 7, 8, 9, 10, 12, 14, 16, 21, 24][r % 10] as number;
      const values = Array.from({ length: n }, () => normal() + 0.5);
      const exact = n <= 20;
      const inf = signFlipInference(values, { B: 4000, seed: r, exact });
      expect(inf.p).toBe(signFlipTest(values, { B: 4000, seed: r, exact }).p);
      expect(inf.ci[0] > 0 || inf.ci[1] < 0).toBe(inf.p < 0.05);
      expect(inf.ci[0]).toBeLessThanOrEqual(inf.mean);
      expect(inf.ci[1]).toBeGreaterThanOrEqual(inf.mean);
      if (inf.p < 0.05) significant++;
    }
    // Both sides of α occur, so the agreement above was checked both ways.
    expect(significant).toBeGreaterThan(10);
    expect(significant).toBeLessThan(115);
  });

  it('the ends are where p(δ) crosses α: subset means, found to 1e-8', () => {
    const values = [0.4, 1.1, -0.2, 0.9, 0.7, 1.5, 0.3];
    const inf = signFlipInference(values);
    // Brute force: every subset mean is a possible end; keep those accepted and take the hull.
    const means: number[] = [];
    for (let mask = 1; mask < 2 ** values.length; mask++) {
      const chosen = values.filter((_, i) => (mask >>> i) & 1);
      means.push(chosen.reduce((s, v) => s + v, 0) / chosen.length);
    }
    const accepted = means.filter((d) => inf.pAt(d) >= 0.05);
    expect(inf.ci[0]).toBeCloseTo(Math.min(...accepted), 7);
    expect(inf.ci[1]).toBeCloseTo(Math.max(...accepted), 7);
    expect(inf.pAt(inf.ci[0] - 1e-6)).toBeLessThan(0.05);
    expect(inf.pAt(inf.ci[1] + 1e-6)).toBeLessThan(0.05);
  });

  it('exact zeros enter by their binomial weights: the same p and interval as enumerating them', () => {
    const withZeros = [0.5, 0, 1.2, 0.3, 0, 0.8, -0.1, 0.6, 0, 0.9];
    const inf = signFlipInference(withZeros);
    expect(inf.method).toBe('exact');
    expect(inf.resamples).toBe(2 ** 10);
    expect(inf.p).toBe(signFlipTest(withZeros.filter((v) => v !== 0)).p);
    // A value of 1e-300 is not a zero, so every pattern is enumerated the ordinary way.
    const tiny = signFlipInference(withZeros.map((v) => (v === 0 ? 1e-300 : v)));
    expect(inf.p).toBeCloseTo(tiny.p, 12);
    expect(inf.ci[0]).toBeCloseTo(tiny.ci[0], 12);
    expect(inf.ci[1]).toBeCloseTo(tiny.ci[1], 12);
    // 25 differences of which 17 are zero (a continuation run): still exact (2^8 × 18 weighted patterns).
    const many = [...Array.from({ length: 17 }, () => 0), 0.2, 0.5, 0.1, 0.4, 0.3, 0.6, 0.2, 0.5];
    const big = signFlipInference(many);
    expect(big.method).toBe('exact');
    expect(big.p).toBe(signFlipTest(many.filter((v) => v !== 0)).p);
    expect(big.ci[0] > 0 || big.ci[1] < 0).toBe(big.p < 0.05);
    expect(big.pAt(big.ci[0])).toBeGreaterThanOrEqual(0.05);
    expect(big.pAt(big.ci[0] - 1e-9)).toBeLessThan(0.05);
    expect(big.pAt(big.ci[1])).toBeGreaterThanOrEqual(0.05);
    expect(big.pAt(big.ci[1] + 1e-9)).toBeLessThan(0.05);
  });

  it('is unbounded when the test cannot reach α (5 units or fewer)', () => {
    const inf = signFlipInference([1, 2, 3, 4, 5]);
    expect(inf.bounded).toBe(false);
    expect(inf.ci).toEqual([Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]);
    expect(inf.p).toBeCloseTo(2 / 32, 12);
  });

  it('covers the true mean at about 95% (symmetric noise, 12 units)', () => {
    const normal = normalOf(9);
    let covered = 0;
    const runs = 400;
    for (let r = 0; r < runs; r++) {
      const values = Array.from({ length: 12 }, () => 0.3 + normal());
      const inf = signFlipInference(values);
      if (inf.ci[0] <= 0.3 && inf.ci[1] >= 0.3) covered++;
    }
    // Exact test inverted: coverage ≥ 0.95 up to Monte Carlo error (SE ≈ 0.011).
    expect(covered / runs).toBeGreaterThan(0.925);
    expect(covered / runs).toBeLessThan(0.985);
  });
});

describe('invertShiftTest', () => {
  it('keeps 0 on the side the test puts it, even for a non-monotone p', () => {
    // p dips below α on (0.2, 0.4) and again beyond 2: a bisection from the estimate alone could
    // land inside the dip; anchored at 0 the interval contains 0 because p(0) ≥ α.
    const pOf = (d: number) => (d > 0.2 && d < 0.4 ? 0.01 : Math.abs(d - 1) > 1 ? 0.01 : 0.5);
    const out = invertShiftTest(pOf, 1, 0.5, 0.05);
    expect(out.ci[0]).toBeLessThanOrEqual(0);
    expect(out.ci[1]).toBeCloseTo(2, 6);
    const never = invertShiftTest(() => 1, 0, 1, 0.05);
    expect(never.bounded).toBe(false);
  });
});

describe('signFlipInference answers the same test once', () => {
  it('gives each caller its own copy, unchanged by what a caller or the input array does afterwards', () => {
    const values = [0.4, -0.1, 0.7, 0.2, 0.9, 0.3, -0.2, 0.5];
    const first = signFlipInference(values, { alpha: 0.05 });
    const input = [...values];
    const second = signFlipInference(input, { alpha: 0.05 });
    expect(second).toEqual(first);
    expect(second).not.toBe(first);
    // A caller changing its answer, or the array it passed, changes no later answer.
    (second.ci as [number, number])[0] = 99;
    input[0] = 5;
    const third = signFlipInference(values, { alpha: 0.05 });
    expect(third.ci).toEqual(first.ci);
    expect(third.pAt(0)).toBe(first.p);
    // Other options or values are other tests.
    expect(signFlipInference(values, { alpha: 0.2 }).ci[0]).toBeGreaterThan(first.ci[0]);
    expect(signFlipInference(input, { alpha: 0.05 }).mean).toBeCloseTo(first.mean + (5 - 0.4) / values.length, 12);
  });
});
