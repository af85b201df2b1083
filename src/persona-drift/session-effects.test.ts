import { describe, expect, it } from 'vitest';
import { rng } from '../stats/rng.js';
import { calibratePersona, type SESSION_EFFECT_SHAPES, sessionEffectDraw } from './calibrate.js';
import { BASE_DESIGN } from './calibrate-designs.js';

/**
 * `persona calibrate --session-effects`: the session deviations are standardized (mean 0, SD 1)
 * whatever their shape, so a shape changes only the symmetry the sign-flip test assumes. The
 * 400-replicate figures per shape are in docs/statistics.md (session-effects.slow.test.ts).
 */

function moments(shape: (typeof SESSION_EFFECT_SHAPES)[number]) {
  const random = rng(7);
  const n = 200_000;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = 0; i < n; i++) {
    const x = sessionEffectDraw(shape, random);
    s1 += x;
    s2 += x * x;
    s3 += x * x * x;
  }
  const mean = s1 / n;
  const variance = s2 / n - mean * mean;
  return { mean, sd: Math.sqrt(variance), skew: (s3 / n - 3 * mean * variance - mean ** 3) / variance ** 1.5 };
}

describe('simulated session-effect shapes', () => {
  it('every shape has mean 0 and SD 1; skewed and dominant are skewed, normal is not', () => {
    const normal = moments('normal');
    const skewed = moments('skewed');
    const dominant = moments('dominant');
    for (const m of [normal, skewed, dominant]) {
      expect(Math.abs(m.mean)).toBeLessThan(0.01);
      expect(Math.abs(m.sd - 1)).toBeLessThan(0.01);
    }
    expect(Math.abs(normal.skew)).toBeLessThan(0.05);
    expect(skewed.skew).toBeGreaterThan(1.8);
    // +1.4 w.p. 1/8, −0.2 otherwise: skewness (1/8·1.4³ + 7/8·(−0.2)³)/0.28^1.5 ≈ 2.27.
    expect(dominant.skew).toBeGreaterThan(2);
  });

  it('one-dominant is fixed by the session: the first +1.4, the rest sharing −1.4, mean exactly 0 and SD 1 over 8', () => {
    const random = rng(1);
    const eight = Array.from({ length: 8 }, (_, s) => sessionEffectDraw('one-dominant', random, s, 8));
    const sd = Math.sqrt(eight.reduce((a, x) => a + x * x, 0) / 8);
    expect(Math.abs(eight.reduce((a, x) => a + x, 0))).toBeLessThan(1e-12);
    expect(sd).toBeCloseTo(1, 12);
    // On the 0.28-variance scale: +1.4 and seven at −0.2.
    expect((eight[0] as number) * Math.sqrt(0.28)).toBeCloseTo(1.4, 12);
    for (const x of eight.slice(1)) expect(x * Math.sqrt(0.28)).toBeCloseTo(-0.2, 12);
    // Twelve sessions: still one at +1.4, mean 0.
    const twelve = Array.from({ length: 12 }, (_, s) => sessionEffectDraw('one-dominant', random, s, 12));
    expect(Math.abs(twelve.reduce((a, x) => a + x, 0))).toBeLessThan(1e-12);
    expect((twelve[0] as number) * Math.sqrt(0.28)).toBeCloseTo(1.4, 12);
  });

  it('calibratePersona records the shape and refuses an unknown one', () => {
    const design = { ...BASE_DESIGN, sessions: 8, positionsPerSession: 4 };
    const result = calibratePersona(design, { replicates: 20, seed: 5, worlds: ['null'], sessionEffects: 'dominant', variance: { betweenSession: 0.5 } });
    expect(result.sessionEffects).toBe('dominant');
    const headline = result.tests.find((t) => t.test.startsWith('drift verdict'));
    expect(headline?.nullReplicates).toBe(20);
    expect(() => calibratePersona(design, { replicates: 1, worlds: ['null'], sessionEffects: 'lumpy' as 'normal' })).toThrow(/sessionEffects/);
  });
});
