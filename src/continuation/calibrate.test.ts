import { describe, expect, it } from 'vitest';
import { calibrateContinuation } from './calibrate.js';
import { CONTINUATION_NULL_SIM, CONTINUATION_SIM, plantedGain } from './sim.js';

describe('continuation calibrate', () => {
  it('the null profile is flagged at most alpha + 2 MC SE of the time (complete case and ITT)', () => {
    const result = calibrateContinuation(CONTINUATION_NULL_SIM, { cutpoints: 25, replicates: 400, seed: 7, analysis: { resamples: 2000 } });
    expect(result.planted).toEqual({ completeCase: 0, itt: 0 });
    for (const test of result.tests) {
      expect(test.replicates).toBe(400);
      expect(test.rejection!.rate, test.test).toBeLessThanOrEqual(0.05 + 2 * Math.sqrt((0.05 * 0.95) / 400));
      console.log(`continuation null ${test.test}: FPR ${test.rejection!.rate.toFixed(4)}, coverage ${test.coverage?.rate.toFixed(4)}`);
    }
    expect(Object.values(result.withinNominal!)).toEqual([true, true]);
    // Every replicate inverts its tests (interval = sign-flip test inverted): minutes on a shared machine.
  }, 600_000);

  it('the planted gain is recovered: small bias, 95% intervals cover it, the test has power', () => {
    const result = calibrateContinuation(CONTINUATION_SIM, { cutpoints: 25, replicates: 200, seed: 11, analysis: { resamples: 2000 } });
    const planted = plantedGain(CONTINUATION_SIM, 'recent', 'cross');
    expect(planted.completeCase).toBeCloseTo(0.3, 10);
    expect(planted.itt).toBeCloseTo(0.24, 10);
    for (const test of result.tests) {
      expect(Math.abs(test.bias!), test.test).toBeLessThan(0.03);
      expect(test.coverage!.rate, test.test).toBeGreaterThanOrEqual(0.93);
      console.log(`continuation planted ${test.test}: power ${test.rejection!.rate.toFixed(4)}, coverage ${test.coverage!.rate.toFixed(4)}`);
      // 25 cutpoints detect a +0.3 / +0.24 gain about half to two thirds of the time.
      expect(test.rejection!.rate, test.test).toBeGreaterThan(0.4);
    }
    expect(result.withinNominal).toBeNull();
  }, 600_000);
});
