import { describe, expect, it } from 'vitest';
import { withinNominal } from '../stats/calibration.js';
import { calibratePersona } from './calibrate.js';
import { REFERENCE_DESIGNS } from './calibrate-designs.js';

/**
 * SLOW (tens of seconds on a shared machine): the done-when calibration of the persona report.
 * For each reference design, 400 simulated nulls: every reported test keeps its false-positive
 * rate within 0.05 + 2 Monte Carlo SE and every 95% interval covers the truth at least 93% of
 * the time. Between-session heterogeneity is doubled for the three-session design.
 */
describe('slow: persona calibration over 400 nulls per design', () => {
  for (const [name, design] of Object.entries(REFERENCE_DESIGNS)) {
    it(`${name}: FPR ≤ 0.05 + 2 MC SE and 95% CI coverage ≥ 0.93 for every test`, { timeout: 600_000 }, () => {
      const result = calibratePersona(design, {
        replicates: 400,
        worlds: ['null'],
        seed: 20261201,
        ...(design.sessions > 1 ? { variance: { betweenSession: 0.4 } } : {}),
      });
      expect(result.tests.length).toBeGreaterThan(0);
      for (const test of result.tests) {
        if (test.fpr) {
          expect(test.fpr.n, test.test).toBeGreaterThanOrEqual(400);
          expect(withinNominal(test.fpr), `${test.test}: FPR ${test.fpr.rate}`).toBe(true);
        }
        if (test.coverage) expect(test.coverage.rate, `${test.test}: coverage`).toBeGreaterThanOrEqual(0.93);
      }
    });
  }
});
