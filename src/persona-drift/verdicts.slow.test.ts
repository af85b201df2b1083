import { describe, expect, it } from 'vitest';
import { rng } from '../stats/rng.js';
import { clusteredInference, sessionInfluence, type UnitValue } from './inference.js';
import { normalDraws } from '../stats/testing/normal.js';

/**
 * Issue #39 done-when, persona headline at the session level: seeded null simulations of the
 * unit deltas the headline is computed from (8 sessions × 4 positions), through the report's own
 * clustered inference (sign-flip test, its inverted interval, leave-one-session-out). A verdict
 * marked fragile counts as not significant. Figures are printed and copied to docs/statistics.md.
 */

const REPLICATES = 2000;

function simulate(seed: number, sessionEffect: (s: number, normal: () => number) => number, truth: number) {
  const random = rng(seed);
  const normal = normalDraws(random);
  let rejects = 0;
  let rejectsIgnoringFragility = 0;
  let covered = 0;
  let disagreements = 0;
  for (let r = 0; r < REPLICATES; r++) {
    const units: UnitValue[] = [];
    for (let s = 0; s < 8; s++) {
      const effect = truth + sessionEffect(s, normal);
      for (let p = 0; p < 4; p++) units.push({ session: `S${s}`, position: `P${p}`, value: effect + 0.4 * normal() });
    }
    const inf = clusteredInference(units, { seed: r });
    const significant = inf.p < 0.05;
    if ((inf.ci[0] > 0 || inf.ci[1] < 0) !== significant) disagreements++;
    if (significant) rejectsIgnoringFragility++;
    if (significant && !inf.influence?.fragile) rejects++;
    if (inf.ci[0] <= truth && inf.ci[1] >= truth) covered++;
  }
  return { rate: rejects / REPLICATES, raw: rejectsIgnoringFragility / REPLICATES, coverage: covered / REPLICATES, disagreements };
}

describe('persona headline over 8 sessions (2,000 seeded replicates per design)', () => {
  it('normal session effects: nominal size and coverage, interval and p agree', () => {
    const out = simulate(3901, (_s, normal) => 0.3 * normal(), 0);
    console.log(
      `persona 8 sessions, normal session effects: FPR ${out.rate.toFixed(4)} (before the fragility mark ${out.raw.toFixed(4)}), coverage ${out.coverage.toFixed(4)}`,
    );
    expect(out.disagreements).toBe(0);
    expect(out.rate).toBeLessThanOrEqual(0.06);
    expect(out.coverage).toBeGreaterThanOrEqual(0.93);
  });

  it('one dominant session (+1.4, the other seven −0.2, mean 0): fragile verdicts are not claims', () => {
    const out = simulate(3902, (s, normal) => (s === 0 ? 1.4 : -0.2) + 0.1 * normal(), 0);
    console.log(
      `persona 8 sessions, one dominant: FPR ${out.rate.toFixed(4)} (before the fragility mark ${out.raw.toFixed(4)}), coverage ${out.coverage.toFixed(4)}`,
    );
    expect(out.disagreements).toBe(0);
    expect(out.rate).toBeLessThanOrEqual(0.06);
    expect(out.coverage).toBeGreaterThanOrEqual(0.93);
  });

  it('a rare dominant session (each session +1.4 with probability 1/8, else −0.2): measured, not claimed', () => {
    const random = rng(77);
    const out = simulate(3903, (_s, normal) => (random.next() < 1 / 8 ? 1.4 : -0.2) + 0.1 * normal(), 0);
    // No test over 8 sessions can hold its level here: in a third of the samples no session is the
    // dominant one and all eight agree. Printed for docs/statistics.md; asserted only to be finite.
    console.log(
      `persona 8 sessions, rare dominant (mixture): FPR ${out.rate.toFixed(4)} (before the fragility mark ${out.raw.toFixed(4)}), coverage ${out.coverage.toFixed(4)}`,
    );
    expect(out.disagreements).toBe(0);
    expect(out.rate).toBeLessThanOrEqual(out.raw);
  });

  it('planted drift (+0.3, normal session effects): power with and without the fragility mark', () => {
    const out = simulate(3904, (_s, normal) => 0.3 * normal(), 0.3);
    // The verdict "drift" keeps the sign-flip test of before (its power is today's); counted with a
    // fragile verdict as not significant it must keep at least 80% of it (issue #39). The
    // leave-one-out rule alone kept 71%; requiring the session to be an outlier keeps about 99%.
    console.log(
      `persona 8 sessions, planted +0.3: power of the verdict ${out.raw.toFixed(4)}, of which not marked fragile ${out.rate.toFixed(4)}, coverage ${out.coverage.toFixed(4)}`,
    );
    // The exact sign-flip over 8 sessions with effect/SD = 0.3/√(0.3² + 0.4²/4) ≈ 0.83: about one half.
    expect(out.raw).toBeGreaterThan(0.42);
    expect(out.rate).toBeLessThanOrEqual(out.raw);
    expect(out.rate).toBeGreaterThanOrEqual(0.8 * out.raw);
    expect(out.coverage).toBeGreaterThanOrEqual(0.93);
  });
});

describe('the headline test is exact for independent, symmetric sessions of unequal spread (20,000 replicates)', () => {
  // verdict-designs.ts printed 0.0580 and 0.0570 (2,000 replicates) for the headline of the harness
  // designs, whose session gaps are independent and symmetric about 0 but not equally spread. The
  // exact sign-flip test holds α whatever each session's spread (given |x|, the signs are fair
  // coins), so those rows can only be Monte Carlo error; this checks the code at the session level
  // with ten times the replicates: 3 sessions at SD 0.3 and 9 at 1.2 (the 3 + 9 design, 4×), and
  // 10 equal ones (5 + 5), each with 3 positions of noise SD 0.37 (the calibration's position gap).
  const run = (seed: number, spreads: readonly number[]) => {
    const random = rng(seed);
    const normal = normalDraws(random);
    const reps = 20_000;
    let rejects = 0;
    let covered = 0;
    for (let r = 0; r < reps; r++) {
      const units: UnitValue[] = [];
      spreads.forEach((sd, s) => {
        const effect = sd * normal();
        for (let p = 0; p < 3; p++) units.push({ session: `S${s}`, position: `P${p}`, value: effect + 0.37 * normal() });
      });
      const inf = clusteredInference(units, { seed: r });
      if (inf.p < 0.05) rejects++;
      if (inf.claim.interval[0] <= 0 && inf.claim.interval[1] >= 0) covered++;
    }
    return { fpr: rejects / reps, coverage: covered / reps, se: Math.sqrt((0.05 * 0.95) / reps) };
  };

  it('3 + 9 sessions, the nine 4× as spread', () => {
    const out = run(3906, [0.3, 0.3, 0.3, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2]);
    console.log(`headline, 3 + 9 at 4× spread: FPR ${out.fpr.toFixed(4)} ± ${out.se.toFixed(4)}, coverage ${out.coverage.toFixed(4)}`);
    expect(out.fpr).toBeLessThanOrEqual(0.05 + 2 * out.se);
    expect(out.coverage).toBeGreaterThanOrEqual(0.95 - 2 * out.se);
  });

  it('5 + 5 equal sessions', () => {
    const out = run(
      3907,
      Array.from({ length: 10 }, () => 0.3),
    );
    console.log(`headline, 10 equal sessions: FPR ${out.fpr.toFixed(4)} ± ${out.se.toFixed(4)}, coverage ${out.coverage.toFixed(4)}`);
    expect(out.fpr).toBeLessThanOrEqual(0.05 + 2 * out.se);
    expect(out.coverage).toBeGreaterThanOrEqual(0.95 - 2 * out.se);
  });
});

describe('the rare dominant session: where its false positives come from (issue #39)', () => {
  it('practically every false positive comes from a sample without a dominant session, which no diagnostic can see', () => {
    // 2,000 seeded samples of 8 sessions × 4 positions from the rare-dominant population (each
    // session +1.4 with probability 1/8, else −0.2): the rejections are counted by how many
    // dominant sessions the sample holds (tools/calibration/dominant_session.py has the full table).
    const random = rng(3905);
    const normal = normalDraws(random);
    let rejects = 0;
    let withoutDominant = 0;
    let samplesWithout = 0;
    for (let r = 0; r < REPLICATES; r++) {
      const units: UnitValue[] = [];
      let dominant = 0;
      for (let s = 0; s < 8; s++) {
        const isDominant = random.next() < 1 / 8;
        if (isDominant) dominant++;
        const effect = (isDominant ? 1.4 : -0.2) + 0.1 * normal();
        for (let p = 0; p < 4; p++) units.push({ session: `S${s}`, position: `P${p}`, value: effect + 0.4 * normal() });
      }
      if (dominant === 0) samplesWithout++;
      const inf = clusteredInference(units, { seed: r });
      if (inf.p < 0.05) {
        rejects++;
        if (dominant === 0) withoutDominant++;
      }
    }
    console.log(
      `rare dominant: FPR ${(rejects / REPLICATES).toFixed(4)}, from samples without a dominant session ${(withoutDominant / REPLICATES).toFixed(4)} (such samples: ${(samplesWithout / REPLICATES).toFixed(4)})`,
    );
    // About a third of the samples hold no dominant session ((7/8)^8 = 0.344) …
    expect(Math.abs(samplesWithout / REPLICATES - 0.3436)).toBeLessThan(4 * Math.sqrt((0.3436 * 0.6564) / REPLICATES));
    // … and they carry at least 95% of the false positives.
    expect(rejects).toBeGreaterThan(0);
    expect(withoutDominant / rejects).toBeGreaterThanOrEqual(0.95);
  });
});

describe('leave-one-session-out (fragile verdicts)', () => {
  it('marks a significant claim that one session carries, names it, and leaves a robust one alone', () => {
    // Eight sessions, one large (S1), two slightly below 0.
    const fragile = [1.2, 0.4, 0.05, -0.02, 0.03, 0.3, -0.01, 0.35];
    const all = clusteredInference(fragile.map((value, i) => ({ session: `S${i + 1}`, position: 'P1', value })));
    const robust = clusteredInference([0.5, 0.4, 0.6, 0.45, 0.55, 0.5, 0.35, 0.65].map((value, i) => ({ session: `S${i + 1}`, position: 'P1', value })));
    expect(robust.p).toBeLessThan(0.05);
    expect(robust.influence).toEqual(expect.objectContaining({ fragile: false, drivenBy: null }));
    // p = 10/256; without S1 (or S2, S3, S5, S6, S8) the seven left give p ≥ 0.0625: the verdict
    // changes, and S1 — the only outlier among them — is named.
    expect(all.p).toBeCloseTo(10 / 256, 12);
    expect(all.influence?.fragile).toBe(true);
    expect(all.influence?.drivenBy).toBe('S1');
    const s1 = all.influence!.leaveOneOut.find((l) => l.session === 'S1')!;
    expect(s1.p).toBeCloseTo(10 / 128, 12);
    expect(s1.holds).toBe(false);
    // S1 is also the one outlier (deleted residual 5.30 > t_6(1 − 0.05/16) = 4.12): the mark's second condition.
    expect(all.influence!.leaveOneOut.filter((l) => l.outlier).map((l) => l.session)).toEqual(['S1']);
    expect(all.influence!.leaveOneOut.filter((l) => l.holds).map((l) => l.session)).toEqual(['S4', 'S7']);
    const direct = sessionInfluence(
      fragile.map((_, i) => `S${i + 1}`),
      fragile,
      { estimate: fragile.reduce((s, v) => s + v, 0) / fragile.length },
    );
    expect(direct).toEqual(all.influence);
  });
});
