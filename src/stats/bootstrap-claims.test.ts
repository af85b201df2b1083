import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bhClaims, invertBootstrapTest } from './bootstrap-claims.js';
import { bootstrapPValue } from './resampling-common.js';
import { rng } from './rng.js';
import { normalDraws } from './testing/normal.js';

const golden = JSON.parse(readFileSync(new URL('./__fixtures__/bootstrap-bh-claims.golden.json', import.meta.url), 'utf8')) as {
  families: Array<{
    alpha: number;
    q: number;
    significant: number;
    tests: Array<{ replicates: number[]; p: number; pAdjusted: number; interval: [number | null, number | null] }>;
  }>;
};

describe('BH-consistent bootstrap intervals (memory d_rel claims)', () => {
  it('match scipy’s BH and the interval found by evaluating p(θ) at every replicate (tools/golden/bootstrap_bh_claims.py)', () => {
    for (const family of golden.families) {
      const tests = family.tests.map((t) => ({ p: bootstrapPValue(Float64Array.from(t.replicates), 0), replicates: t.replicates }));
      tests.forEach((t, i) => {
        expect(t.p).toBeCloseTo(family.tests[i]!.p, 12);
      });
      const claims = bhClaims(tests, family.alpha);
      expect(claims.filter((c) => c.significant)).toHaveLength(family.significant);
      claims.forEach((c, i) => {
        const want = family.tests[i]!;
        expect(c.p).toBeCloseTo(want.pAdjusted, 12);
        expect(c.confidence).toBeCloseTo(1 - family.q, 12);
        if (want.interval[0] === null) expect(c.interval).toEqual([Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]);
        else expect(c.interval).toEqual(want.interval);
      });
    }
  });

  it('over 600 random families: the interval excludes 0 exactly when the BH-adjusted p is below α', () => {
    const random = rng(3907);
    const normal = normalDraws(random);
    let changed = 0;
    for (let f = 0; f < 600; f++) {
      const m = 2 + Math.floor(random.next() * 8);
      const n = 100 + Math.floor(random.next() * 900);
      const tests = Array.from({ length: m }, () => {
        const shift = random.next() < 0.5 ? 0 : 0.4 * random.next();
        const replicates = Float64Array.from({ length: n }, () => shift + 0.15 * normal());
        return { p: bootstrapPValue(replicates, 0), replicates };
      });
      for (const [i, c] of bhClaims(tests).entries()) {
        const excludes = c.interval[0] > 0 || c.interval[1] < 0;
        expect(excludes).toBe(c.p < 0.05);
        // Not vacuous: the test alone (its own p at 0.05) and the BH claim often decide differently.
        if (tests[i]!.p < 0.05 !== c.significant) changed++;
      }
    }
    expect(changed).toBeGreaterThan(30);
  });

  it('inverts the test: 0 is inside exactly when p(0) ≥ q, and the ends are replicates', () => {
    const r = [0.3, -0.1, 0.2, 0.25, 0.4, 0.05, 0.15, 0.35, 0.1, 0.22];
    // q = 0.5: k = ceil(0.5 · 11/2 − 1) = 2, so the second smallest and the second largest.
    expect(invertBootstrapTest(r, 0.5)).toEqual([0.05, 0.35]);
    expect(invertBootstrapTest(r, 0.05)).toEqual([Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]);
    expect(() => invertBootstrapTest([], 0.05)).toThrow(/at least one/u);
  });
});
