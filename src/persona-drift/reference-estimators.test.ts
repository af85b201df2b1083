import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expectIntervalNear } from '../stats/testing/interval.js';
import {
  armClusterBootstrap,
  gapClusterBootstrap,
  meanOfPositionMeans,
  referenceSignFlip,
  sessionWilcoxon,
  unpairedGapClusterBootstrap,
} from './reference-estimators.js';

/**
 * Golden values from tools/golden/contextecho_reference.py (numpy/scipy, written from the paper's
 * description of each estimator). Point estimates agree to 1e-9; intervals and p-values come from
 * different random streams (numpy's vs echolens's), so they agree within Monte Carlo error.
 */
interface Golden {
  arms: Array<{ byPosition: number[][]; mean: number; ci: [number, number] }>;
  gaps: Array<{ positions: Array<{ real: number[]; filler: number[] }>; estimate: number; ci: [number, number] }>;
  signFlips: Array<{ deltas: number[]; mean: number; p: number }>;
  contracts: Array<{ differences: number[]; mean: number; p: number; ci: [number, number] }>;
}
const golden = JSON.parse(readFileSync(new URL('./__fixtures__/golden-reference.json', import.meta.url), 'utf8')) as Golden;

/** Binomial Monte Carlo error of a p estimated from R resamples, 4 standard errors plus the reference's own. */
const mcTolerance = (p: number, R: number) => 4 * Math.sqrt((p * (1 - p)) / R + (p * (1 - p)) / 400_000) + 1e-4;

describe('ContextEcho reference estimators against numpy/scipy', () => {
  it('arm: mean of position means to 1e-9, two-stage bootstrap interval within 0.05', () => {
    expect(golden.arms.length).toBeGreaterThan(3);
    for (const g of golden.arms) {
      const r = armClusterBootstrap(g.byPosition, { B: 10_000, seed: 42 });
      expect(r.mean).toBeCloseTo(g.mean, 9);
      expect(r.positions).toBe(g.byPosition.length);
      expect(r.n).toBe(g.byPosition.flat().length);
      expectIntervalNear(r.ci, g.ci, 0.05);
    }
  });

  it('gap filler − real: estimate to 1e-9, paired two-stage interval within 0.05', () => {
    for (const g of golden.gaps) {
      const r = gapClusterBootstrap(g.positions, { B: 10_000, seed: 42 });
      expect(r.estimate).toBeCloseTo(g.estimate, 9);
      expectIntervalNear(r.ci, g.ci, 0.05);
    }
  });

  it('paired sign-flip: mean to 1e-9, p within Monte Carlo error of the exact (or 400,000-resample) p', () => {
    for (const g of golden.signFlips) {
      const r = referenceSignFlip(g.deltas, { B: 10_000, seed: 42 });
      expect(r.mean).toBeCloseTo(g.mean, 9);
      expect(Math.abs(r.p - g.p)).toBeLessThan(mcTolerance(g.p, 10_000));
    }
  });

  it('contracts: Wilcoxon p equals scipy exact, session-bootstrap interval within 0.02', () => {
    for (const g of golden.contracts) {
      const r = sessionWilcoxon(g.differences, { B: 10_000, seed: 42 });
      expect(r.mean).toBeCloseTo(g.mean, 9);
      expect(r.p).toBeCloseTo(g.p, 9);
      expectIntervalNear(r.ci, g.ci, 0.02);
    }
  });

  it('the permutation p counts ties with the observed mean and can be 0 (no +1), as the authors define it', () => {
    // All differences equal: every pattern but the two all-same-sign ones has a smaller |mean|.
    const r = referenceSignFlip([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], { B: 10_000, seed: 1 });
    expect(r.p).toBe(0);
    expect(referenceSignFlip([0, 0, 0], { B: 100 }).p).toBe(1);
  });

  it('equal weighting of positions, not of scores', () => {
    expect(meanOfPositionMeans([[3, 3, 3, 3], [0]])).toBeCloseTo(1.5, 12);
    expect(() => meanOfPositionMeans([])).toThrow(/no position/);
    expect(() => sessionWilcoxon([0.1])).toThrow(/at least 2/);
  });
});

describe('reference gap when the arms cover different positions', () => {
  const unpaired = JSON.parse(readFileSync(new URL('./__fixtures__/golden-unpaired-gap.json', import.meta.url), 'utf8')) as {
    cases: Array<{ real: number[][]; filler: number[][]; estimate: number; ci: [number, number] }>;
  };
  it("estimate = filler mean − real mean over each arm's own positions (1e-9), interval within 0.05 of numpy (tools/golden/contextecho_unpaired_gap.py)", () => {
    expect(unpaired.cases.length).toBe(2);
    for (const g of unpaired.cases) {
      const r = unpairedGapClusterBootstrap(g.real, g.filler, { B: 10_000, seed: 42 });
      expect(r.estimate).toBeCloseTo(g.estimate, 9);
      expect(r.estimate).toBeCloseTo(meanOfPositionMeans(g.filler) - meanOfPositionMeans(g.real), 12);
      expectIntervalNear(r.ci, g.ci, 0.05);
    }
  });
});
