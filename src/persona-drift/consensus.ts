import { StatisticsError } from '../core/errors.js';
import { fCdf, mean as meanOf } from '../stats/distributions.js';
import type { AnalysisDesign, Maybe, PersonaObservation, ResolvedOptions } from './analysis-types.js';
import { probeCell } from './analysis-effects.js';
import { attempt, cellName, combineUnits, inCell } from './contrasts.js';
import { clusteredInference, type UnitInference, type UnitValue, unitInference } from './inference.js';

/**
 * Pooled multi-judge consensus (ContextEcho F6, Table 5 pools five judges), pure. The judge is a
 * factor of the design: each judge gives its own drift gap Δ_j(u) = filler − real at every unit u
 * (session, position) of the headline cell. The consensus at a unit is the mean of the judges'
 * Δ_j(u), so all judges' scores of one unit stay together when the units are resampled or their
 * signs flipped: the judges scored the same responses, and treating their scores as independent
 * would count every response several times. The pooled estimate then goes through the same
 * clustered inference as every other contrast (positions in one session, sessions when there are
 * several; docs/statistics.md "Pooled multi-judge consensus").
 */

/** The clustered inference of the pooled Δ (its influence: leave-one-session-out of a significant session-level consensus), and the judges beside it. */
export interface ConsensusRow extends Omit<UnitInference, 'ciMethod'> {
  target: string;
  /** The judges pooled (every judge with scores for this target), sorted. */
  judges: string[];
  /** The headline cell the consensus is computed in. */
  cell: string;
  /** Pooled Δ (mean over judges of filler − real), with sessions weighted equally. */
  estimate: number;
  /** 95% interval over the units: the sign-flip test inverted (contains 0 exactly when p ≥ α), or t ∪ 0 when the test cannot reject. */
  ci: readonly [number, number];
  /** Two-sided sign-flip p over the units (each unit's judges flipped together). */
  p: number;
  /** Positions left out because at least one judge had no valid score there (the pooled units are complete). */
  droppedPositions: number;
  /** Each judge's Δ on the same units, with its own interval (the same inversion). */
  perJudge: Array<{ judge: string; estimate: number; ci: readonly [number, number] }>;
  /** Does Δ differ between judges? Two-way repeated-measures ANOVA of units × judges (judge main effect on Δ). */
  /** Repeated-measures F with the Greenhouse–Geisser correction (p on ε·df1, ε·df2). */
  judgeEffect: Maybe<ReturnType<typeof judgeEffectTest>>;
  /** Largest minus smallest judge estimate. */
  spread: number;
  /** Do all judges give Δ the same sign (zeros count as agreeing with either)? */
  signsAgree: boolean;
}

export interface ConsensusResult {
  rows: ConsensusRow[];
  /** Targets with several judges but no consensus row, and why. */
  skipped: Array<{ target: string; reason: string }>;
}

/**
 * The units of inference: positions in one session, else session means of positions. Each entry
 * carries one value per judge (same order as `judges`).
 */
export function consensusUnits(perJudge: ReadonlyArray<readonly UnitValue[]>): {
  level: 'position' | 'session';
  rows: Array<{ key: string; values: number[] }>;
  pooled: UnitValue[];
  dropped: number;
} {
  const maps = perJudge.map((units) => new Map(units.map((u) => [`${u.session}\u0000${u.position}`, u])));
  const all = new Set(perJudge.flatMap((units) => units.map((u) => `${u.session}\u0000${u.position}`)));
  const complete = [...all].filter((k) => maps.every((m) => m.has(k))).sort();
  const positionRows = complete.map((k) => {
    const first = maps[0]?.get(k) as UnitValue;
    return { session: first.session, position: first.position, key: k, values: maps.map((m) => (m.get(k) as UnitValue).value) };
  });
  const pooled = positionRows.map((r) => ({ session: r.session, position: r.position, value: meanOf(r.values) }));
  const sessions = [...new Set(positionRows.map((r) => r.session))].sort();
  if (sessions.length < 2)
    return { level: 'position', rows: positionRows.map((r) => ({ key: r.key, values: r.values })), pooled, dropped: all.size - complete.length };
  const rows = sessions.map((session) => {
    const mine = positionRows.filter((r) => r.session === session);
    return { key: session, values: perJudge.map((_, j) => meanOf(mine.map((r) => r.values[j] as number))) };
  });
  return { level: 'session', rows, pooled, dropped: all.size - complete.length };
}

/**
 * Judge main effect in a units × judges table without replication (two-way repeated-measures
 * ANOVA): F = MS_judge / MS_residual, referred to F with both degrees of freedom, (k − 1) and
 * (k − 1)(n − 1), multiplied by the Greenhouse–Geisser ε. ε = tr(M)² / ((k − 1) tr(M²)) for the
 * double-centred covariance M = H S H of the judges' columns (H = I − J/k); it is 1 when the
 * judges are equally noisy (sphericity) and shrinks the degrees of freedom when they are not,
 * which is what kept the uncorrected F from its level with one noisy judge (issue #39).
 */
export function judgeEffectTest(table: ReadonlyArray<readonly number[]>) {
  const n = table.length;
  const k = table[0]?.length ?? 0;
  if (n < 2 || k < 2) throw new StatisticsError(`the judge effect needs at least 2 units and 2 judges (got ${n} units, ${k} judges)`);
  const grand = meanOf(table.flatMap((r) => [...r]));
  const rowMeans = table.map((r) => meanOf(r));
  const colMeans = Array.from({ length: k }, (_, j) => meanOf(table.map((r) => r[j] as number)));
  let ssJudge = 0;
  for (const c of colMeans) ssJudge += n * (c - grand) ** 2;
  let ssResidual = 0;
  table.forEach((r, i) => {
    r.forEach((x, j) => {
      ssResidual += (x - (rowMeans[i] as number) - (colMeans[j] as number) + grand) ** 2;
    });
  });
  const df1 = k - 1;
  const df2 = (k - 1) * (n - 1);
  const msResidual = ssResidual / df2;
  if (!(msResidual > 1e-12 * Math.max(1, ssJudge))) {
    throw new StatisticsError('the judges differ by a constant at every unit (no residual variance): the judge effect F is undefined');
  }
  const F = ssJudge / df1 / msResidual;
  // Double-centred covariance of the judge columns: M_ab = S_ab − S_a· − S_·b + S_··.
  const cov = Array.from({ length: k }, (_, a) =>
    Array.from(
      { length: k },
      (_, b) => table.reduce((s, r) => s + ((r[a] as number) - (colMeans[a] as number)) * ((r[b] as number) - (colMeans[b] as number)), 0) / (n - 1),
    ),
  );
  const rowAvg = cov.map((r) => meanOf(r));
  const allAvg = meanOf(rowAvg);
  let trace = 0;
  let traceSquared = 0;
  for (let a = 0; a < k; a++) {
    for (let b = 0; b < k; b++) {
      const m = (cov[a]?.[b] as number) - (rowAvg[a] as number) - (rowAvg[b] as number) + allAvg;
      if (a === b) trace += m;
      traceSquared += m * m;
    }
  }
  const epsilon = Math.min(1, Math.max(1 / df1, (trace * trace) / (df1 * traceSquared)));
  return { F, df1, df2, p: 1 - fCdf(F, df1 * epsilon, df2 * epsilon), epsilon, method: 'greenhouse-geisser' as const };
}

/** The drift gap filler − real of one target and judge in the headline cell, per (session, position). */
export function driftUnits(observations: readonly PersonaObservation[], design: AnalysisDesign, target: string, judge: string): UnitValue[] {
  const arm = (name: string) => inCell(observations, probeCell(design, target, judge, name));
  return combineUnits(
    [
      { observations: arm('filler'), weight: 1 },
      { observations: arm('real'), weight: -1 },
    ],
    judge,
  );
}

export function analyzeConsensus(observations: readonly PersonaObservation[], design: AnalysisDesign, options: ResolvedOptions): ConsensusResult {
  const rows: ConsensusRow[] = [];
  const skipped: ConsensusResult['skipped'] = [];
  if (design.judges.length < 2) return { rows, skipped };
  const inf = { B: options.B, seed: options.seed, alpha: options.alpha };
  for (const target of design.targets) {
    const judges = design.judges.filter((judge) =>
      observations.some((o) => o.target === target && o.surface === 'probe' && typeof o.scores[judge] === 'number'),
    );
    if (judges.length < 2) continue;
    const firstFiller = probeCell(design, target, judges[0] as string, 'filler');
    const cell = `${cellName({ ...firstFiller, judge: null }).replace(' arm=filler', '')} judges=${judges.join(',')} (filler − real)`;
    const perJudgeUnits = judges.map((judge) => driftUnits(observations, design, target, judge));
    const result = attempt(() => {
      const units = consensusUnits(perJudgeUnits);
      if (units.pooled.length === 0) throw new StatisticsError('no position has valid scores from every judge in both arms');
      const pooled = clusteredInference(units.pooled, inf);
      const unitValues = units.rows.map((r) => meanOf(r.values));
      // Each judge on the same unit table (session means when there are several sessions).
      const counts = { sessions: pooled.sessions, positions: pooled.positions };
      const perJudgeRows = judges.map((judge, j) => {
        const values = units.rows.map((r) => r.values[j] as number);
        return { judge, estimate: meanOf(values), ci: unitInference(values, units.level, counts, inf).ci };
      });
      const estimates = perJudgeRows.map((r) => r.estimate);
      const row: ConsensusRow = {
        target,
        judges,
        cell,
        estimate: meanOf(unitValues),
        ci: pooled.ci,
        se: pooled.se,
        df: pooled.df,
        p: pooled.p,
        method: pooled.method,
        level: pooled.level,
        units: pooled.units,
        sessions: pooled.sessions,
        positions: pooled.positions,
        minAttainableP: pooled.minAttainableP,
        ...(pooled.note ? { note: pooled.note } : {}),
        ...(pooled.influence ? { influence: pooled.influence } : {}),
        claim: pooled.claim,
        droppedPositions: units.dropped,
        perJudge: perJudgeRows,
        judgeEffect: attempt(() => judgeEffectTest(units.rows.map((r) => r.values))),
        spread: Math.max(...estimates) - Math.min(...estimates),
        signsAgree: estimates.every((e) => e >= 0) || estimates.every((e) => e <= 0),
      };
      return row;
    });
    if ('error' in result) skipped.push({ target, reason: result.error });
    else rows.push(result);
  }
  return { rows, skipped };
}
