import { describe, expect, it } from 'vitest';
import { clusteredInference, deletedResiduals, OUTLIER_GAMMA, sessionInfluence } from './inference.js';

const bySession = (values: readonly number[]) => values.map((value, i) => ({ session: `S${i + 1}`, position: 'P1', value }));

describe('studentized deleted residuals of the session estimates', () => {
  it('match the externally studentized OLS residuals of an intercept-only model (numpy)', () => {
    // Golden values: tools/golden/deleted_residuals.py (hat-matrix formula
    // e_i / (s_(i) √(1 − h_ii)), s_(i)² = ((n − 1)s² − e_i²/(1 − h_ii))/(n − 2), h_ii = 1/n).
    const golden = [5.2963483124, 0.2758297589, 0.5955049835, 0.7869109735, 0.64902791, 0.0304576219, 0.7588191165, 0.1525714436];
    const got = deletedResiduals([1.2, 0.4, 0.05, -0.02, 0.03, 0.3, -0.01, 0.35]);
    for (const [i, v] of got.entries()) expect(v).toBeCloseTo(golden[i] as number, 9);
    const golden2 = [0.221574913, 1.4834208129, 0.0827999818, 2.1128192795, 1.2749879712, 0.0275859882, 1.1974519259, 0.4486912178];
    for (const [i, v] of deletedResiduals([0.28, 0.82, 0.39, -0.22, 0.77, 0.35, -0.03, 0.52]).entries()) expect(v).toBeCloseTo(golden2[i] as number, 9);
  });

  it('are infinite for a session that differs from others that are all equal, 0 when all are equal', () => {
    const got = deletedResiduals([0.2, 0.2, 0.2, 0.2, 1.0]);
    expect(got[4]).toBe(Number.POSITIVE_INFINITY);
    // Without one 0.2 the rest are 0.2, 0.2, 0.2, 1.0: mean 0.4, SD 0.4, so 0.2 / (0.4 √(5/4)).
    for (const v of got.slice(0, 4)) expect(v).toBeCloseTo(0.2 / (0.4 * Math.sqrt(1.25)), 12);
    expect(deletedResiduals([0.3, 0.3, 0.3, 0.3])).toEqual([0, 0, 0, 0]);
  });
});

describe('the fragile mark: one outlying session that the claim rests on', () => {
  it('marks a claim that one outlying session carries and names it; the threshold is the Bonferroni t quantile', () => {
    const values = [1.2, 0.4, 0.05, -0.02, 0.03, 0.3, -0.01, 0.35];
    const inf = clusteredInference(bySession(values));
    expect(inf.p).toBeCloseTo(10 / 256, 12);
    // scipy: t.ppf(1 − 0.05/16, 6) = 4.115170117595701
    expect(OUTLIER_GAMMA).toBe(0.05);
    expect(inf.influence?.outlierThreshold).toBeCloseTo(4.115170117595701, 8);
    expect(inf.influence?.fragile).toBe(true);
    expect(inf.influence?.drivenBy).toBe('S1');
    expect(inf.claim.fragile).toBe(true);
    const s1 = inf.influence!.leaveOneOut.find((l) => l.session === 'S1')!;
    expect(s1).toEqual(expect.objectContaining({ holds: false, outlier: true }));
    expect(inf.influence!.leaveOneOut.filter((l) => l.outlier).map((l) => l.session)).toEqual(['S1']);
  });

  it('leaves alone a borderline claim that fails without several sessions when none is an outlier', () => {
    // p = 8/256; without any of six sessions the seven left give p ≥ 0.05, but the largest deleted
    // residual is 2.11 (S4): no one session carries it. The previous rule marked it fragile.
    const values = [0.28, 0.82, 0.39, -0.22, 0.77, 0.35, -0.03, 0.52];
    const inf = clusteredInference(bySession(values));
    expect(inf.p).toBeCloseTo(8 / 256, 12);
    expect(inf.influence!.leaveOneOut.filter((l) => !l.holds).length).toBe(6);
    expect(Math.max(...inf.influence!.leaveOneOut.map((l) => l.residual))).toBeCloseTo(2.113, 3);
    expect(inf.influence).toEqual(expect.objectContaining({ fragile: false, drivenBy: null }));
    expect(inf.claim.fragile).toBe(false);
  });

  it('the threshold follows the number of sessions (scipy t.ppf)', () => {
    const twelve = Array.from({ length: 12 }, (_, i) => 0.4 + 0.01 * i);
    const inf = sessionInfluence(
      twelve.map((_, i) => `S${i + 1}`),
      twelve,
      { estimate: 0.455 },
    );
    // scipy: t.ppf(1 − 0.05/24, 10) = 3.6914783871392585
    expect(inf.outlierThreshold).toBeCloseTo(3.6914783871392585, 8);
    expect(inf.fragile).toBe(false);
  });

  it('an outlier that the claim does not rest on is not a reason to mark it', () => {
    // Seven sessions near +0.5 and one far above: without S8 the other seven still give p = 2/128.
    const values = [0.5, 0.45, 0.55, 0.5, 0.48, 0.52, 0.47, 3];
    const inf = sessionInfluence(
      values.map((_, i) => `S${i + 1}`),
      values,
      { estimate: values.reduce((a, b) => a + b, 0) / values.length },
    );
    const s8 = inf.leaveOneOut.find((l) => l.session === 'S8')!;
    expect(s8.outlier).toBe(true);
    expect(s8.holds).toBe(true);
    expect(inf.fragile).toBe(false);
  });
});
