import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type PersonaObservation, analyzePersona } from './analysis.js';
import { consensusUnits, judgeEffectTest } from './consensus.js';
import { harnessOfTool, welchContrast } from './harness.js';
import { personaCsvRows } from './report-csv.js';
import { rng } from '../stats/rng.js';
import { welchTTest } from '../stats/welch.js';
import { normalDraws } from '../stats/testing/normal.js';

/**
 * Pooled multi-judge consensus and the harness contrast against numpy/scipy
 * (tools/golden/persona_consensus_harness.py): the same integer judge scores go through
 * analyzePersona; estimates, t intervals, exact sign-flip and permutation p and the judge-effect
 * F must match to rounding, bootstrap intervals to Monte Carlo error.
 */

interface GoldenRow {
  session: string;
  position: string;
  positionValue: number;
  arm: 'real' | 'filler';
  item: string;
  scores: Record<string, number>;
}
interface GoldenConsensus {
  level: string;
  units: number;
  unitValues: number[];
  estimate: number;
  ci: [number, number];
  se: number;
  p: number;
  perJudge: Array<{ judge: string; estimate: number; ci: [number, number] }>;
  judgeEffect: { F: number; df1: number; df2: number; p: number; epsilon: number };
}
interface GoldenHarness {
  judge: string;
  claudeCode: { estimate: number; ci: [number, number]; sessions: number };
  codex: { estimate: number; ci: [number, number]; sessions: number };
  difference: { estimate: number; ci: [number, number]; p: number; df: number; dfSatterthwaite: number };
}
const golden = JSON.parse(readFileSync(join(import.meta.dirname, '__fixtures__', 'golden-consensus-harness.json'), 'utf8')) as {
  judges: string[];
  onePosition: { rows: GoldenRow[]; consensus: GoldenConsensus };
  manySessions: { rows: GoldenRow[]; harnessOf: Record<string, 'claude-code' | 'codex'>; consensus: GoldenConsensus; harness: GoldenHarness[] };
};

function observations(rows: readonly GoldenRow[]): PersonaObservation[] {
  return rows.map((r) => ({
    target: 'sim:t',
    session: r.session,
    position: r.position,
    positionValue: r.positionValue,
    arm: r.arm,
    mitigation: 'none',
    distance: 'd0',
    surface: 'probe',
    item: r.item,
    category: 'coding_self',
    paraphrase: 0,
    sample: 0,
    status: 'done',
    text: 'x',
    scores: { ...r.scores },
  }));
}

const options = { B: 10_000, seed: 3, primaryCategory: 'coding_self' } as const;

function expectConsensus(row: ReturnType<typeof analyzePersona>['consensus'][number], want: GoldenConsensus) {
  expect(row.judges).toEqual(golden.judges);
  expect(row.level).toBe(want.level);
  expect(row.units).toBe(want.units);
  expect(row.estimate).toBeCloseTo(want.estimate, 12);
  // The inverted sign-flip interval: echolens bisects, the golden script enumerates breakpoints.
  expect(row.ci[0]).toBeCloseTo(want.ci[0], 6);
  expect(row.ci[1]).toBeCloseTo(want.ci[1], 6);
  expect(row.ci[0] > 0 || row.ci[1] < 0).toBe(row.p < 0.05);
  expect(row.se).toBeCloseTo(want.se, 12);
  expect(row.p).toBeCloseTo(want.p, 12);
  expect(row.method).toBe('exact');
  row.perJudge.forEach((j, i) => {
    const w = want.perJudge[i]!;
    expect(j.judge).toBe(w.judge);
    expect(j.estimate).toBeCloseTo(w.estimate, 12);
    expect(j.ci[0]).toBeCloseTo(w.ci[0], 6);
    expect(j.ci[1]).toBeCloseTo(w.ci[1], 6);
  });
  if ('error' in row.judgeEffect) throw new Error(row.judgeEffect.error);
  expect(row.judgeEffect.F).toBeCloseTo(want.judgeEffect.F, 9);
  expect([row.judgeEffect.df1, row.judgeEffect.df2]).toEqual([want.judgeEffect.df1, want.judgeEffect.df2]);
  expect(row.judgeEffect.p).toBeCloseTo(want.judgeEffect.p, 7);
  expect(row.judgeEffect.method).toBe('greenhouse-geisser');
  expect(row.judgeEffect.epsilon).toBeCloseTo(want.judgeEffect.epsilon, 9);
  // One interval and one p per claim: no second (bootstrap) interval beside them.
  expect(row).not.toHaveProperty('bootstrapCi');
  expect(row.claim.interval).toEqual(row.ci);
  expect(row.claim.p).toBe(row.p);
}

describe('pooled multi-judge consensus (golden: numpy/scipy)', () => {
  it('one session: positions are the units, all judges of a position kept together', () => {
    const report = analyzePersona(observations(golden.onePosition.rows), options);
    expect(report.consensus).toHaveLength(1);
    expectConsensus(report.consensus[0]!, golden.onePosition.consensus);
    // No harness recorded: no harness rows.
    expect(report.harness).toEqual([]);
  });

  it('several sessions: session means of the pooled position deltas are the units', () => {
    const report = analyzePersona(observations(golden.manySessions.rows), options);
    expectConsensus(report.consensus[0]!, golden.manySessions.consensus);
    const csv = personaCsvRows(report).find((r) => r[0] === 'consensus')!;
    expect(csv.slice(1, 6)).toEqual(['sim:t', golden.judges.join('+'), 'session', 'pooled', report.consensus[0]!.estimate]);
  });

  it('the judge effect holds its level with equal and with unequal judge noise at the session level (2,000 seeded nulls each)', () => {
    const random = rng(11);
    const normal = normalDraws(random);
    const replicates = 2000;
    // 8 sessions × 3 judges: a session effect shared by the judges, each judge its own noise.
    const rate = (noise: readonly number[], bias: readonly number[]) => {
      let rejects = 0;
      for (let r = 0; r < replicates; r++) {
        const table = Array.from({ length: 8 }, () => {
          const unit = normal();
          return noise.map((sd, j) => unit + (bias[j] as number) + sd * normal());
        });
        if (judgeEffectTest(table).p < 0.05) rejects++;
      }
      return rejects / replicates;
    };
    const equal = rate([0.5, 0.5, 0.5], [0, 0, 0]);
    const oneNoisy = rate([0.3, 0.3, 1.2], [0, 0, 0]);
    const fiveMixed = (() => {
      let rejects = 0;
      for (let r = 0; r < replicates; r++) {
        const table = Array.from({ length: 8 }, () => {
          const unit = normal();
          return [0.2, 0.4, 0.6, 0.9, 1.2].map((sd) => unit + sd * normal());
        });
        if (judgeEffectTest(table).p < 0.05) rejects++;
      }
      return rejects / replicates;
    })();
    const planted = rate([0.5, 0.5, 0.5], [0, 0, 0.6]);
    console.log(
      `judge effect (Greenhouse–Geisser) 8 sessions: null equal noise ${equal.toFixed(4)}, one noisy judge ${oneNoisy.toFixed(4)}, five mixed judges ${fiveMixed.toFixed(4)}; power at a 0.6 bias of one judge ${planted.toFixed(4)}`,
    );
    // Monte Carlo SE of a 5% rate at 2,000 replicates ≈ 0.005.
    for (const fpr of [equal, oneNoisy, fiveMixed]) {
      expect(fpr).toBeLessThan(0.06);
      expect(fpr).toBeGreaterThan(0.03);
    }
    // The uncorrected F had about 0.59 here (scipy, 4,000 replicates); ≥ 80% of it is kept.
    expect(planted).toBeGreaterThan(0.47);
  });

  it('the unit table keeps only positions every judge scored, and a single judge gives no consensus', () => {
    const units = consensusUnits([
      [
        { session: 'S1', position: 'P1', value: 1 },
        { session: 'S1', position: 'P2', value: 2 },
      ],
      [{ session: 'S1', position: 'P2', value: 4 }],
    ]);
    expect(units.level).toBe('position');
    expect(units.rows).toEqual([{ key: 'S1\u0000P2', values: [2, 4] }]);
    expect(units.pooled).toEqual([{ session: 'S1', position: 'P2', value: 3 }]);
    expect(units.dropped).toBe(1);
    const oneJudge = observations(golden.onePosition.rows).map((o) => ({ ...o, scores: { 'judge-a': o.scores['judge-a'] as number } }));
    expect(analyzePersona(oneJudge, options).consensus).toEqual([]);
  });

  it('the judge effect refuses a table without residual variance', () => {
    expect(() =>
      judgeEffectTest([
        [1, 2],
        [3, 4],
        [0, 1],
      ]),
    ).toThrow(/no residual variance/);
    expect(() => judgeEffectTest([[1, 2]])).toThrow(/at least 2 units/);
  });
});

describe('harness contrast (golden: numpy/scipy)', () => {
  const harnesses = golden.manySessions.harnessOf;
  const report = analyzePersona(observations(golden.manySessions.rows), { ...options, harnesses });

  it('Δ per harness, difference: Welch p and its own interval (scipy), per-harness inverted sign-flip intervals', () => {
    expect(report.harness.map((h) => h.judge)).toEqual(golden.judges);
    for (const want of golden.manySessions.harness) {
      const row = report.harness.find((h) => h.judge === want.judge)!;
      const [cc, cx] = row.harnesses;
      expect(cc!.harness).toBe('claude-code');
      expect(cc!.sessions).toHaveLength(want.claudeCode.sessions);
      expect(cx!.sessions).toHaveLength(want.codex.sessions);
      expect(cc!.estimate).toBeCloseTo(want.claudeCode.estimate, 12);
      expect(cx!.estimate).toBeCloseTo(want.codex.estimate, 12);
      expect(row.difference.estimate).toBeCloseTo(want.difference.estimate, 12);
      expect(row.difference.p).toBeCloseTo(want.difference.p, 10);
      expect(row.difference.method).toBe('welch-t-df-1');
      expect(row.difference.df).toBeCloseTo(want.difference.df, 9);
      expect(row.difference.dfSatterthwaite).toBeCloseTo(want.difference.dfSatterthwaite, 9);
      expect(row.underpowered).toBe(false);
      expect(row.difference.ci![0]).toBeCloseTo(want.difference.ci[0], 9);
      expect(row.difference.ci![1]).toBeCloseTo(want.difference.ci[1], 9);
      expect(row.difference.ci![0] > 0 || row.difference.ci![1] < 0).toBe(row.difference.p! < 0.05);
      // Per harness: 4 and 5 sessions cannot reach p < 0.05 by sign flips, so the interval is t ∪ 0.
      expect(cc!.ci![0]).toBeCloseTo(want.claudeCode.ci[0], 6);
      expect(cc!.ci![1]).toBeCloseTo(want.claudeCode.ci[1], 6);
      expect(cx!.ci![0]).toBeCloseTo(want.codex.ci[0], 6);
      expect(cx!.ci![1]).toBeCloseTo(want.codex.ci[1], 6);
    }
  });

  it('3 + 3 sessions are tested; a harness with two sessions or one is underpowered, and says why', () => {
    const three = golden.manySessions.rows.filter((r) => ['S1', 'S2', 'S3', 'S6', 'S7', 'S8'].includes(r.session));
    const row = analyzePersona(observations(three), { ...options, harnesses }).harness[0]!;
    expect(row.underpowered).toBe(false);
    expect(row.difference.method).toBe('welch-t-df-1');
    expect(row.difference.df).toBeCloseTo(Math.max(row.difference.dfSatterthwaite! - 1, 1), 12);
    expect(row.difference.ci![0] > 0 || row.difference.ci![1] < 0).toBe(row.difference.p! < 0.05);
    const few = golden.manySessions.rows.filter((r) => ['S1', 'S2', 'S6', 'S7'].includes(r.session));
    const two = analyzePersona(observations(few), { ...options, harnesses }).harness[0]!;
    expect(two.underpowered).toBe(true);
    expect(two.difference.p).toBeNull();
    expect(two.reason).toMatch(/2 Claude Code and 2 Codex session.*at least 3 sessions/);
    const one = golden.manySessions.rows.filter((r) => ['S1', 'S6', 'S7'].includes(r.session));
    const single = analyzePersona(observations(one), { ...options, harnesses }).harness[0]!;
    expect(single.underpowered).toBe(true);
    expect(single.difference.p).toBeNull();
    expect(single.reason).toMatch(/1 Claude Code and 2 Codex session/);
  });

  it('under the null the harness contrast holds its level and covers with unequal groups and spreads (4,000 seeded replicates per design)', () => {
    const random = rng(39);
    const normal = normalDraws(random);
    // [Claude Code sessions, Codex sessions, SD of Claude Code gaps, SD of Codex gaps]
    const designs = [
      [5, 5, 0.3, 0.3],
      [3, 9, 0.3, 1.2],
      [9, 3, 0.3, 1.2],
      [4, 12, 0.3, 1.2],
      [12, 4, 0.3, 1.2],
      [3, 9, 0.3, 0.3],
    ] as const;
    const replicates = 4000;
    for (const [na, nb, sa, sb] of designs) {
      let rejects = 0;
      let covered = 0;
      for (let r = 0; r < replicates; r++) {
        const truth = 0.2;
        const a = Array.from({ length: na }, () => 0.5 + truth + sa * normal());
        const b = Array.from({ length: nb }, () => 0.5 + sb * normal());
        const w = welchContrast(a, b);
        // The test of the planted difference: rejecting it is a false positive, missing it from the interval a miss.
        const atTruth = welchContrast(
          a.map((v) => v - truth),
          b,
        );
        if (atTruth.p < 0.05) rejects++;
        if (w.ci[0] <= truth && w.ci[1] >= truth) covered++;
        expect(atTruth.p < 0.05).toBe(w.ci[0] > truth || w.ci[1] < truth);
      }
      console.log(`harness null ${na} + ${nb}, SD ${sa} vs ${sb}: FPR ${(rejects / replicates).toFixed(4)}, coverage ${(covered / replicates).toFixed(4)}`);
      // Monte Carlo SE of a 5% rate at 4,000 replicates ≈ 0.0034. The plain Welch test (Satterthwaite
      // df) gave 0.065 at 9 + 3 with the 3 sessions the noisy ones; one degree of freedom less holds it.
      expect(rejects / replicates).toBeLessThanOrEqual(0.06);
      expect(covered / replicates).toBeGreaterThanOrEqual(0.93);
    }
  });

  it('the correction keeps at least 80% of the plain Welch test power on equal groups (5 + 5, a planted difference of one SD; 4,000 replicates)', () => {
    const random = rng(391);
    const normal = normalDraws(random);
    let corrected = 0;
    let plain = 0;
    const replicates = 4000;
    for (let r = 0; r < replicates; r++) {
      const a = Array.from({ length: 5 }, () => 0.3 + 0.3 * normal());
      const b = Array.from({ length: 5 }, () => 0.3 * normal());
      if (welchContrast(a, b).p < 0.05) corrected++;
      if (welchTTest(a, b).p < 0.05) plain++;
    }
    console.log(`harness power 5 + 5 at one SD: corrected ${(corrected / replicates).toFixed(4)}, plain Welch ${(plain / replicates).toFixed(4)}`);
    expect(corrected / plain).toBeGreaterThanOrEqual(0.8);
    expect(corrected).toBeLessThanOrEqual(plain);
  });

  it('Welch contrast: the interval is the test inverted; harness of a recorded tool', () => {
    const w = welchContrast([0.9, 1.2, 0.7, 1.1], [0.3, 0.5, 0.1, 0.45, 0.2, 0.6, 0.35, 0.4, 0.25]);
    // At the interval's ends the Welch t of (a − end, b) sits at the 97.5% quantile: p = 0.05 there.
    const shifted = welchContrast(
      [0.9, 1.2, 0.7, 1.1].map((v) => v - w.ci[0]),
      [0.3, 0.5, 0.1, 0.45, 0.2, 0.6, 0.35, 0.4, 0.25],
    );
    expect(shifted.p).toBeCloseTo(0.05, 9);
    expect(w.ci[0]).toBeGreaterThan(0);
    expect(w.p).toBeLessThan(0.05);
    expect(harnessOfTool('claude')).toBe('claude-code');
    expect(harnessOfTool('codex')).toBe('codex');
    expect(harnessOfTool('other')).toBeNull();
  });
});
