import { describe, expect, it } from 'vitest';
import { minimumDetectableEffect, rateWithError, summarizeCalibration, twoSidedTestPower, withinNominal } from './calibration.js';

describe('calibration summaries', () => {
  it('computes rejection rates, coverage and bias per test', () => {
    const outcomes = [
      { test: 'a', p: 0.01, estimate: 0.2, ci: [0.1, 0.3] as const, truth: 0 },
      { test: 'a', p: 0.5, estimate: -0.1, ci: [-0.3, 0.1] as const, truth: 0 },
      { test: 'a', p: Number.NaN },
      { test: 'b', p: 0.2, estimate: 1, ci: [0.5, 1.5] as const, truth: 1, standardError: 0.25 },
    ];
    const [a, b] = summarizeCalibration(outcomes);
    expect(a?.test).toBe('a');
    expect(a?.replicates).toBe(2);
    expect(a?.refused).toBe(1);
    expect(a?.rejection?.rate).toBe(0.5);
    expect(a?.coverage?.rate).toBe(0.5);
    expect(a?.bias).toBeCloseTo(0.05, 12);
    expect(a?.meanHalfWidth).toBeCloseTo(0.15, 12);
    expect(b?.coverage?.rate).toBe(1);
    expect(b?.meanStandardError).toBe(0.25);
  });

  it('Monte Carlo error and the nominal check', () => {
    const rate = rateWithError(30, 400);
    expect(rate.mcSE).toBeCloseTo(Math.sqrt((0.075 * 0.925) / 400), 12);
    // 0.05 + 2 * sqrt(0.05*0.95/400) = 0.0718
    expect(withinNominal(rateWithError(28, 400))).toBe(true);
    expect(withinNominal(rateWithError(30, 400))).toBe(false);
    expect(() => rateWithError(5, 0)).toThrow(/positive/);
  });

  it('minimum detectable effect matches (z_.975 + z_.8)·SE', () => {
    expect(minimumDetectableEffect(0.1)).toBeCloseTo((1.959964 + 0.841621) * 0.1, 5);
    expect(minimumDetectableEffect(0.1, { df: 9 })).toBeGreaterThan(minimumDetectableEffect(0.1));
  });
});

describe('twoSidedTestPower', () => {
  it('is the inverse of minimumDetectableEffect near 80%, symmetric in the sign of the effect, and α at no effect', () => {
    for (const df of [10, 30, 200]) {
      const mde = minimumDetectableEffect(0.1, { df });
      expect(twoSidedTestPower(mde, 0.1, df)).toBeGreaterThan(0.78);
      expect(twoSidedTestPower(mde, 0.1, df)).toBeLessThan(0.82);
      expect(twoSidedTestPower(-mde, 0.1, df)).toBe(twoSidedTestPower(mde, 0.1, df));
    }
    // one tail of α at no effect (the far tail is left out)
    expect(twoSidedTestPower(0, 0.1, 1e6)).toBeCloseTo(0.025, 3);
    expect(twoSidedTestPower(0.3, 0, 10)).toBe(1);
    expect(() => twoSidedTestPower(0.3, -1, 10)).toThrow(/standardError/u);
    expect(() => twoSidedTestPower(0.3, 0.1, 0)).toThrow(/df/u);
  });
});
