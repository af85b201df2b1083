import { describe, expect, it } from 'vitest';
import { CLAIMS_DESIGN, checkReplicate } from './testing/claims-sim.js';

/**
 * Issue #39 done-when, end to end through analyzePersona (slow tier): 400 seeded replicates of
 * three targets × two judges × eight sessions (two harnesses) with mitigations. Every claim's
 * interval and p agree (and the verdict and the gate with them); under the null the Holm family
 * across targets holds its family-wise rate and the Holm-consistent intervals cover 0. Figures
 * are printed and copied to docs/statistics.md ("One procedure per claim").
 */

const REPLICATES = 400;

describe('one procedure per claim, 400 end-to-end replicates', () => {
  it('null design: no disagreement, family-wise rate and coverage of the Holm-consistent intervals', () => {
    let disagreements = 0;
    let mismatches = 0;
    let familyRejections = 0;
    let families = 0;
    let intervals = 0;
    let covered = 0;
    let holmChanged = 0;
    const nullDesign = { ...CLAIMS_DESIGN, drift: [0, 0, 0] };
    for (let seed = 1; seed <= REPLICATES; seed++) {
      const r = checkReplicate(10_000 + seed, nullDesign);
      disagreements += r.disagreements.length;
      mismatches += r.verdictMismatch + r.gateMismatch;
      holmChanged += r.holmChanged;
      for (const judge of ['judge-1', 'judge-2']) {
        const rows = r.report.drift.filter((d) => d.judge === judge);
        families++;
        if (rows.some((d) => !('error' in d.gap) && d.gap.claim.significant && !d.gap.claim.fragile)) familyRejections++;
        for (const d of rows) {
          if ('error' in d.gap) continue;
          intervals++;
          if (d.gap.claim.interval[0] <= 0 && d.gap.claim.interval[1] >= 0) covered++;
        }
      }
    }
    const fwer = familyRejections / families;
    console.log(
      `claims null: ${families} Holm families of 3 targets, family-wise rate ${fwer.toFixed(4)} (fragile = not significant), coverage of the Holm-consistent intervals ${(covered / intervals).toFixed(4)}, interval/p disagreements ${disagreements}, verdict/gate mismatches ${mismatches}, claims where Holm changed the decision ${holmChanged}`,
    );
    expect(disagreements).toBe(0);
    expect(mismatches).toBe(0);
    expect(fwer).toBeLessThanOrEqual(0.06);
    expect(covered / intervals).toBeGreaterThanOrEqual(0.93);
  }, 900_000);

  it('one drifting target of three: power of the Holm claim, coverage of the planted gap, no disagreement', () => {
    let disagreements = 0;
    let detected = 0;
    let covered = 0;
    let n = 0;
    for (let seed = 1; seed <= REPLICATES; seed++) {
      const r = checkReplicate(20_000 + seed);
      disagreements += r.disagreements.length + r.verdictMismatch + r.gateMismatch;
      for (const d of r.report.drift.filter((x) => x.target === 'sim:t3')) {
        if ('error' in d.gap) continue;
        n++;
        if (d.gap.claim.significant) detected++;
        const truth = CLAIMS_DESIGN.drift[2] as number;
        if (d.gap.claim.interval[0] <= truth && d.gap.claim.interval[1] >= truth) covered++;
      }
    }
    console.log(
      `claims planted +${CLAIMS_DESIGN.drift[2]}: power of the Holm claim ${(detected / n).toFixed(4)}, coverage ${(covered / n).toFixed(4)}, disagreements ${disagreements}`,
    );
    expect(disagreements).toBe(0);
    expect(covered / n).toBeGreaterThanOrEqual(0.93);
  }, 900_000);
});
