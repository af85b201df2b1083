import { StatisticsError } from '../core/errors.js';
import { percentileInterval } from '../stats/resampling-common.js';
import { rng } from '../stats/rng.js';
import type { Maybe, PersonaObservation, ResolvedOptions } from './analysis-types.js';
import type { AnalysisDesign } from './analysis-types.js';
import { probeCell } from './analysis-effects.js';
import { attempt, cellName, combineUnits, inCell } from './contrasts.js';
import { clusteredInference, type UnitValue, unitInference } from './inference.js';

/**
 * Harness contrast (ContextEcho F6: Claude Code prefixes induce about twice the drift of Codex
 * CLI prefixes on the same target), pure. The harness is a property of a session, so the claim
 * is about sessions: each session's drift gap (its positions averaged) is one unit, Δ per harness
 * is the mean of its sessions, and the difference is tested by permuting the harness labels over
 * sessions (exact when the splits can be enumerated) with a bootstrap interval that resamples
 * sessions within each harness; each harness's own Δ has the t interval over its sessions. With fewer than two sessions in a harness, or too few for the
 * permutation test to reach the significance level at all, the row says "underpowered" and why
 * (docs/statistics.md "Harness contrast").
 */

export type HarnessName = 'claude-code' | 'codex';

export interface HarnessLevel {
  harness: HarnessName;
  sessions: string[];
  /** Mean over this harness's sessions of the session gap Δ (filler − real). */
  estimate: number;
  /** t interval over the harness's sessions (≥ 2 sessions) or, for a single session, over its positions (a claim about that session only); null when neither exists. */
  ci: readonly [number, number] | null;
  level: 'session' | 'position' | null;
  /** Why the interval is missing or what it covers. */
  note?: string;
}

export interface HarnessRow {
  target: string;
  judge: string;
  cell: string;
  harnesses: HarnessLevel[];
  difference: {
    contrast: 'claude-code − codex';
    estimate: number;
    /** Stratified session bootstrap (sessions resampled within each harness); null when a harness has one session. */
    ci: readonly [number, number] | null;
    /** Two-sided permutation p over sessions (harness labels shuffled); null when a harness has one session. */
    p: number | null;
    method: 'exact' | 'monte-carlo' | null;
    /** The smallest p the permutation test can give with these session counts. */
    minAttainableP: number | null;
  };
  /** Δ claude-code / Δ codex, when Δ codex ≥ 0.05 (the paper's "twice the drift"). */
  ratio: number | null;
  underpowered: boolean;
  /** Why the contrast is underpowered, in words (null when it is not). */
  reason: string | null;
  B: number;
}

const HARNESS_OF_TOOL: Record<string, HarnessName> = { claude: 'claude-code', 'claude-code': 'claude-code', codex: 'codex' };

/** The harness of a session's recorded tool (`claude`, `codex`), or null for anything else. */
export function harnessOfTool(tool: string | undefined): HarnessName | null {
  return tool === undefined ? null : (HARNESS_OF_TOOL[tool] ?? null);
}

const meanOf = (values: readonly number[]) => values.reduce((s, v) => s + v, 0) / values.length;

function binomial(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}

const EXACT_SPLITS = 200_000;

/**
 * Two-sided permutation test of mean(a) − mean(b) over the pooled values: every way of choosing
 * |a| of them as group a (exact) or B random relabellings (p = (b + 1)/(B + 1)).
 */
export function permutationTest(
  a: readonly number[],
  b: readonly number[],
  B: number,
  seed: number,
): { p: number; method: 'exact' | 'monte-carlo'; minAttainableP: number } {
  if (a.length === 0 || b.length === 0) throw new StatisticsError('a permutation test needs sessions in both groups');
  const all = [...a, ...b];
  const n = all.length;
  const na = a.length;
  const total = all.reduce((s, v) => s + v, 0);
  const observed = Math.abs(meanOf(a) - meanOf(b));
  const tolerance = 1e-9 * all.reduce((s, v) => s + Math.abs(v), 1);
  const stat = (sumA: number) => Math.abs(sumA / na - (total - sumA) / (n - na));
  const splits = binomial(n, na);
  // Swapping the groups gives the same |difference| only when they have the same size.
  const minAttainableP = Math.min(1, (na === n - na ? 2 : 1) / splits);
  if (splits <= EXACT_SPLITS) {
    let extreme = 0;
    const choose = (start: number, left: number, sum: number) => {
      if (left === 0) {
        if (stat(sum) >= observed - tolerance) extreme++;
        return;
      }
      for (let i = start; i <= n - left; i++) choose(i + 1, left - 1, sum + (all[i] as number));
    };
    choose(0, na, 0);
    return { p: extreme / splits, method: 'exact', minAttainableP };
  }
  const random = rng(seed);
  const index = all.map((_, i) => i);
  let extreme = 0;
  for (let r = 0; r < B; r++) {
    let sum = 0;
    for (let i = 0; i < na; i++) {
      const j = i + random.int(n - i);
      const t = index[i] as number;
      index[i] = index[j] as number;
      index[j] = t;
      sum += all[index[i] as number] as number;
    }
    if (stat(sum) >= observed - tolerance) extreme++;
  }
  return { p: (extreme + 1) / (B + 1), method: 'monte-carlo', minAttainableP: 1 / (B + 1) };
}

/** Percentile interval of mean(a) − mean(b) (or of mean(a) alone when b is empty), resampling within each group. */
export function stratifiedBootstrapCi(a: readonly number[], b: readonly number[], B: number, seed: number, level = 0.95): readonly [number, number] {
  if (a.length < 2 || (b.length > 0 && b.length < 2)) throw new StatisticsError('a session bootstrap needs at least 2 sessions in each harness');
  const random = rng(seed);
  const replicates = new Float64Array(B);
  const draw = (values: readonly number[]) => {
    let s = 0;
    for (let i = 0; i < values.length; i++) s += values[random.int(values.length)] as number;
    return s / values.length;
  };
  for (let r = 0; r < B; r++) replicates[r] = draw(a) - (b.length > 0 ? draw(b) : 0);
  return percentileInterval(replicates, level);
}

export interface HarnessOptions {
  /** Harness of each session id (from the run manifest's recorded tool). */
  harnesses?: Readonly<Record<string, HarnessName>>;
}

export function analyzeHarness(
  observations: readonly PersonaObservation[],
  design: AnalysisDesign,
  options: ResolvedOptions,
  harnessOptions: HarnessOptions,
): HarnessRow[] {
  const harnessOf = harnessOptions.harnesses ?? {};
  const present = new Set(design.sessions.map((s) => harnessOf[s]).filter((h) => h !== undefined));
  if (!present.has('claude-code') || !present.has('codex')) return [];
  const B = Math.min(Math.max(options.B, 2000), 10_000);
  const inf = { B: options.B, seed: options.seed, alpha: options.alpha };
  const rows: HarnessRow[] = [];
  for (const judge of design.judges) {
    for (const target of design.targets) {
      const filler = probeCell(design, target, judge, 'filler');
      const units = combineUnits(
        [
          { observations: inCell(observations, filler), weight: 1 },
          { observations: inCell(observations, probeCell(design, target, judge, 'real')), weight: -1 },
        ],
        judge,
      );
      if (units.length === 0) continue;
      const bySession = new Map<string, UnitValue[]>();
      for (const u of units) bySession.set(u.session, [...(bySession.get(u.session) ?? []), u]);
      const levels = (['claude-code', 'codex'] as const).map((harness) => {
        const sessions = [...bySession.keys()].filter((s) => harnessOf[s] === harness).sort();
        const gaps = sessions.map((s) => meanOf((bySession.get(s) as UnitValue[]).map((u) => u.value)));
        return { harness, sessions, gaps };
      });
      if (levels.some((l) => l.sessions.length === 0)) continue;
      const [cc, cx] = levels as [(typeof levels)[number], (typeof levels)[number]];
      const harnesses: HarnessLevel[] = levels.map((l) => levelSummary(l.harness, l.sessions, l.gaps, bySession, inf));
      const estimate = meanOf(cc.gaps) - meanOf(cx.gaps);
      const fewest = Math.min(cc.sessions.length, cx.sessions.length);
      let difference: HarnessRow['difference'] = { contrast: 'claude-code − codex', estimate, ci: null, p: null, method: null, minAttainableP: null };
      let reason: string | null = null;
      if (fewest < 2) {
        reason = `${cc.sessions.length} Claude Code and ${cx.sessions.length} Codex session(s): sessions are the units of a harness claim, so each harness needs at least 2 sessions for an interval and about 4 for the permutation test to reach p < ${options.alpha}; the difference shown is a description of these sessions only`;
      } else {
        const test = permutationTest(cc.gaps, cx.gaps, B, options.seed);
        const ci: Maybe<readonly [number, number]> = attempt(() => stratifiedBootstrapCi(cc.gaps, cx.gaps, B, options.seed));
        difference = { ...difference, ci: 'error' in ci ? null : ci, p: test.p, method: test.method, minAttainableP: test.minAttainableP };
        if (test.minAttainableP >= options.alpha) {
          reason = `with ${cc.sessions.length} Claude Code and ${cx.sessions.length} Codex sessions the permutation test cannot reach p < ${options.alpha} (smallest possible p = ${test.minAttainableP.toFixed(3)}): add sessions`;
        }
      }
      const codexGap = meanOf(cx.gaps);
      rows.push({
        target,
        judge,
        cell: `${cellName(filler).replace(' arm=filler', '')} (filler − real) by harness`,
        harnesses,
        difference,
        ratio: codexGap >= 0.05 ? meanOf(cc.gaps) / codexGap : null,
        underpowered: reason !== null,
        reason,
        B,
      });
    }
  }
  return rows;
}

function levelSummary(
  harness: HarnessName,
  sessions: string[],
  gaps: number[],
  bySession: ReadonlyMap<string, UnitValue[]>,
  inf: { B: number; seed: number; alpha: number },
): HarnessLevel {
  const estimate = meanOf(gaps);
  if (sessions.length >= 2) {
    const t = unitInference(
      gaps,
      'session',
      { sessions: sessions.length, positions: [...sessions].reduce((n, s) => n + (bySession.get(s)?.length ?? 0), 0) },
      inf,
    );
    return { harness, sessions, estimate, ci: t.ci, level: 'session' };
  }
  const single = attempt(() => clusteredInference(bySession.get(sessions[0] as string) ?? [], inf));
  if ('error' in single) return { harness, sessions, estimate, ci: null, level: null, note: single.error };
  return {
    harness,
    sessions,
    estimate,
    ci: single.ci,
    level: 'position',
    note: `one session: the interval is over its ${single.units} positions, a claim about that session only`,
  };
}
