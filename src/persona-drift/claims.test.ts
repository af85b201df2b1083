import { describe, expect, it } from 'vitest';
import { checkReplicate } from './testing/claims-sim.js';

/**
 * One procedure per claim (issue #39): in every claim of the persona report's JSON — the
 * headline (Holm across targets), mitigations (Holm within a target), design contrasts, the
 * consensus, each judge, the harness difference, per-session and per-position rows — the
 * interval excludes 0 exactly when the deciding p is below α; the verdict and the gate say the
 * same. Seeded replicates of a three-target, two-judge, eight-session design with one drifting
 * target. The slow tier repeats this over 400 replicates (claims.slow.test.ts).
 */

describe('one interval and one p per claim (persona report JSON)', () => {
  it('over 12 seeded replicates every claim agrees with its interval, the verdict and the gate', () => {
    let claims = 0;
    let holmClaims = 0;
    let adjusted = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const r = checkReplicate(seed);
      expect(r.disagreements).toEqual([]);
      expect(r.verdictMismatch).toBe(0);
      expect(r.gateMismatch).toBe(0);
      claims += r.checks.length;
      holmClaims += r.holm;
      adjusted += r.holmChanged;
    }
    // Not vacuous: in some claims the test alone and the Holm-adjusted claim decide differently.
    expect(adjusted).toBeGreaterThan(0);
    // The design has claims of every kind: Holm families across targets, mitigations, consensus, harness.
    expect(holmClaims).toBe(12 * 3 * 2);
    expect(claims).toBeGreaterThan(12 * 100);
  });

  it('a Holm family prints the Holm-consistent interval: wider than the test alone, at the step level', () => {
    const { report } = checkReplicate(5);
    const d = report.drift.find((x) => x.target === 'sim:t3' && x.judge === 'judge-1');
    if (!d || 'error' in d.gap) throw new Error('no headline for sim:t3');
    const c = d.gap.claim;
    expect(c.family).toBe(3);
    expect(c.p).toBe(d.gap.pHolm);
    expect(c.pRaw).toBe(d.gap.p);
    expect(c.confidence).toBeGreaterThan(0.95);
    expect(c.interval[0]).toBeLessThanOrEqual(d.gap.ci[0]);
    expect(c.interval[1]).toBeGreaterThanOrEqual(d.gap.ci[1]);
    expect(d.verdict.text).toContain('Holm-consistent over 3 targets');
    const consensus = report.consensus[0];
    expect(consensus).toBeDefined();
    expect(consensus).not.toHaveProperty('bootstrapCi');
  });
});
