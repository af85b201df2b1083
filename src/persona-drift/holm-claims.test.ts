import { describe, expect, it } from 'vitest';
import { holm } from '../stats/multiple-testing.js';
import { rng } from '../stats/rng.js';
import { holmClaims, unitInference } from './inference.js';
import { normalDraws } from '../stats/testing/normal.js';

/**
 * Holm-consistent intervals (`holmClaims`): over random families of sign-flip claims — some
 * drifting, some not, ties, too few units — the adjusted p is statsmodels' Holm (via `holm`,
 * itself checked against statsmodels), the interval excludes 0 exactly when that p < α, and it is
 * the test inverted at the Holm step level (never narrower than the claim's own interval).
 */

describe('Holm-consistent claim intervals', () => {
  it('over 300 random families: interval excludes 0 ⇔ Holm p < α, at the step level', () => {
    const random = rng(4242);
    const normal = normalDraws(random);
    let rejected = 0;
    let splits = 0;
    for (let f = 0; f < 300; f++) {
      const m = 2 + (f % 4);
      const inferences = Array.from({ length: m }, (_, i) => {
        const n = i === 0 && f % 7 === 0 ? 5 : 6 + ((f + i) % 10);
        const shift = random.next() < 0.4 ? 0.8 : 0;
        const values = Array.from({ length: n }, () => shift + normal());
        return unitInference(values, 'position', { sessions: 1, positions: n }, { seed: f });
      });
      const claims = holmClaims(inferences.map((x) => x.claim));
      const adjusted = holm(inferences.map((x) => x.p));
      claims.forEach((c, i) => {
        const own = inferences[i]!;
        expect(c.p).toBe(adjusted[i]);
        expect(c.pRaw).toBe(own.p);
        expect(c.family).toBe(m);
        expect(c.significant).toBe(c.p < 0.05);
        expect(c.interval[0] > 0 || c.interval[1] < 0).toBe(c.significant);
        expect(c.interval[0]).toBeLessThanOrEqual(own.ci[0] + 1e-12);
        expect(c.interval[1]).toBeGreaterThanOrEqual(own.ci[1] - 1e-12);
        expect(c.confidence).toBeGreaterThanOrEqual(0.95);
        if (c.significant) rejected++;
        if ((own.ci[0] > 0 || own.ci[1] < 0) !== c.significant) splits++;
      });
    }
    // Not vacuous: families with rejections, and claims whose own interval would disagree with Holm.
    expect(rejected).toBeGreaterThan(50);
    expect(splits).toBeGreaterThan(5);
  });

  it('a family of one is the claim itself; ties keep Holm’s order', () => {
    const one = unitInference([0.5, 0.7, 0.9, 1.1, 0.4, 0.8, 0.6], 'position', { sessions: 1, positions: 7 });
    expect(holmClaims([one.claim])[0]).toBe(one.claim);
    const tied = holmClaims([one.claim, one.claim]);
    expect(tied[0]!.p).toBe(tied[1]!.p);
    expect(tied[0]!.p).toBeCloseTo(Math.min(1, 2 * one.p), 15);
    // 2/2^7 = 0.0156: 2 × 0.0156 < 0.05, both rejected; the first at α/2, the second at α.
    expect(tied.map((c) => c.confidence)).toEqual([0.975, 0.95]);
    expect(tied.every((c) => c.interval[0] > 0)).toBe(true);
  });
});
