import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type PersonaObservation, analyzePersona } from './analysis.js';
import { consensusUnits, judgeEffectTest } from './consensus.js';
import { harnessOfTool, permutationTest, stratifiedBootstrapCi } from './harness.js';
import { personaCsvRows } from './report-csv.js';
import { rng } from '../stats/rng.js';

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
  bootstrapCi: [number, number];
  perJudge: Array<{ judge: string; estimate: number; ci: [number, number] }>;
  judgeEffect: { F: number; df1: number; df2: number; p: number };
}
interface GoldenHarness {
  judge: string;
  claudeCode: { estimate: number; ci: [number, number]; sessions: number };
  codex: { estimate: number; ci: [number, number]; sessions: number };
  difference: { estimate: number; ci: [number, number]; p: number; minAttainableP: number };
}
const golden = JSON.parse(readFileSync(join(import.meta.dirname, '__fixtures__', 'golden-consensus-harness.json'), 'utf8')) as {
  judges: string[];
  bootstrapTolerance: number;
  onePosition: { rows: GoldenRow[]; consensus: GoldenConsensus };
  manySessions: { rows: GoldenRow[]; harnessOf: Record<string, 'claude-code' | 'codex'>; consensus: GoldenConsensus; harness: GoldenHarness[] };
};
const tol = golden.bootstrapTolerance;

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
  expect(row.ci[0]).toBeCloseTo(want.ci[0], 9);
  expect(row.ci[1]).toBeCloseTo(want.ci[1], 9);
  expect(row.se).toBeCloseTo(want.se, 12);
  expect(row.p).toBeCloseTo(want.p, 12);
  expect(row.method).toBe('exact');
  row.perJudge.forEach((j, i) => {
    const w = want.perJudge[i]!;
    expect(j.judge).toBe(w.judge);
    expect(j.estimate).toBeCloseTo(w.estimate, 12);
    expect(j.ci[0]).toBeCloseTo(w.ci[0], 9);
    expect(j.ci[1]).toBeCloseTo(w.ci[1], 9);
  });
  if ('error' in row.judgeEffect) throw new Error(row.judgeEffect.error);
  expect(row.judgeEffect.F).toBeCloseTo(want.judgeEffect.F, 9);
  expect([row.judgeEffect.df1, row.judgeEffect.df2]).toEqual([want.judgeEffect.df1, want.judgeEffect.df2]);
  expect(row.judgeEffect.p).toBeCloseTo(want.judgeEffect.p, 7);
  expect(Math.abs(row.bootstrapCi![0] - want.bootstrapCi[0])).toBeLessThan(tol);
  expect(Math.abs(row.bootstrapCi![1] - want.bootstrapCi[1])).toBeLessThan(tol);
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

  it('under the null the judge-effect F test and the harness permutation test reject at about α (Monte Carlo, seeded)', () => {
    const random = rng(11);
    const normal = () => Math.sqrt(-2 * Math.log(1 - random.next())) * Math.cos(2 * Math.PI * random.next());
    const replicates = 4000;
    let fRejects = 0;
    let permRejects = 0;
    for (let r = 0; r < replicates; r++) {
      // 8 units × 3 judges: unit effects shared by the judges, no judge effect.
      const table = Array.from({ length: 8 }, () => {
        const unit = normal();
        return [unit + normal() * 0.5, unit + normal() * 0.5, unit + normal() * 0.5];
      });
      if (judgeEffectTest(table).p < 0.05) fRejects++;
      const sessions = Array.from({ length: 10 }, normal);
      if (permutationTest(sessions.slice(0, 5), sessions.slice(5), 2000, r).p < 0.05) permRejects++;
    }
    // 4,000 replicates: Monte Carlo SE of a 5% rate ≈ 0.0035.
    expect(fRejects / replicates).toBeGreaterThan(0.035);
    expect(fRejects / replicates).toBeLessThan(0.065);
    // Exact permutation test (C(10, 5) = 252 splits, ties impossible): size ≤ α.
    expect(permRejects / replicates).toBeLessThan(0.06);
    expect(permRejects / replicates).toBeGreaterThan(0.03);
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

  it('Δ per harness, difference, exact permutation p over sessions and bootstrap intervals', () => {
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
      expect(row.difference.p).toBeCloseTo(want.difference.p, 12);
      expect(row.difference.method).toBe('exact');
      expect(row.difference.minAttainableP).toBeCloseTo(want.difference.minAttainableP, 12);
      expect(row.underpowered).toBe(false);
      // Per harness: t interval over its sessions (exact); the difference: stratified session bootstrap (Monte Carlo error).
      expect(cc!.ci![0]).toBeCloseTo(want.claudeCode.ci[0], 9);
      expect(cc!.ci![1]).toBeCloseTo(want.claudeCode.ci[1], 9);
      expect(cx!.ci![0]).toBeCloseTo(want.codex.ci[0], 9);
      expect(cx!.ci![1]).toBeCloseTo(want.codex.ci[1], 9);
      expect(Math.abs(row.difference.ci![0] - want.difference.ci[0])).toBeLessThan(tol * 2);
      expect(Math.abs(row.difference.ci![1] - want.difference.ci[1])).toBeLessThan(tol * 2);
    }
  });

  it('says underpowered, and why, when the permutation test cannot reach the level', () => {
    const few = golden.manySessions.rows.filter((r) => ['S1', 'S2', 'S6', 'S7'].includes(r.session));
    const row = analyzePersona(observations(few), { ...options, harnesses }).harness[0]!;
    // 2 + 2 sessions: 6 splits, the smallest two-sided p is 2/6.
    expect(row.difference.minAttainableP).toBeCloseTo(2 / 6, 12);
    expect(row.underpowered).toBe(true);
    expect(row.reason).toMatch(/cannot reach p < 0.05 \(smallest possible p = 0.333\)/);
  });

  it('permutation test: exact and Monte Carlo agree; the bootstrap refuses a single session', () => {
    const a = [0.9, 1.2, 0.7, 1.1, 0.95, 1.3, 0.8, 1.0, 1.15, 0.85, 1.05, 0.75];
    const b = [0.3, 0.5, 0.1, 0.45, 0.2, 0.6, 0.35, 0.4, 0.25, 0.55, 0.15, 0.5];
    const exact = permutationTest(a.slice(0, 6), b.slice(0, 6), 20_000, 1);
    expect(exact.method).toBe('exact');
    expect(exact.p).toBeCloseTo(2 / 924, 12);
    const mc = permutationTest(a, b, 20_000, 1);
    expect(mc.method).toBe('monte-carlo');
    expect(mc.p).toBeCloseTo(1 / 20_001, 12);
    expect(() => stratifiedBootstrapCi([1], [2, 3], 100, 1)).toThrow(/at least 2 sessions/);
    expect(harnessOfTool('claude')).toBe('claude-code');
    expect(harnessOfTool('codex')).toBe('codex');
    expect(harnessOfTool('other')).toBeNull();
  });
});
