// The coverage simulation of gap-bootstrap.test.ts (about 55 s under load): slow tier.
import { describe, expect, it } from 'vitest';
import { gapBootstrap } from './gap-bootstrap.js';
import { simulateGapScores } from './__fixtures__/gap-scores.js';
import { rng } from './rng.js';

const simulate = simulateGapScores;

describe('gapBootstrap', () => {
  it('covers the true gap and the real-arm mean 93–97% of the time (600 trajectories of 20 positions, B = 1,000)', () => {
    const r = rng(4242);
    let coveredGap = 0;
    let coveredReal = 0;
    const sims = 600;
    for (let s = 0; s < sims; s++) {
      const result = gapBootstrap({ positions: simulate(r, 20, 10, 0.5, 0.8) }, { B: 1000, seed: s });
      if (result.ci[0] <= 0.5 && 0.5 <= result.ci[1]) coveredGap++;
      if (result.real.ci[0] <= 1 && 1 <= result.real.ci[1]) coveredReal++;
    }
    for (const covered of [coveredGap, coveredReal]) {
      expect(covered / sims).toBeGreaterThanOrEqual(0.93);
      expect(covered / sims).toBeLessThanOrEqual(0.97);
    }
  }, 180_000);
});
