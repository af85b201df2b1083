import { mean as meanOf, tQuantile, tTwoSidedP } from '../stats/distributions.js';
import { welchTTest } from '../stats/welch.js';
import type { AnalysisDesign, Maybe, PersonaObservation, ResolvedOptions } from './analysis-types.js';
import { probeCell } from './analysis-effects.js';
import { driftUnits } from './consensus.js';
import { attempt, cellName, judgeTargets } from './contrasts.js';
import { clusteredInference, type UnitValue, unitInference } from './inference.js';

/**
 * Harness contrast (ContextEcho F6: Claude Code prefixes induce about twice the drift of Codex
 * CLI prefixes on the same target), pure. The harness is a property of a session, so the claim
 * is about sessions: each session's drift gap (its positions averaged) is one unit, Δ per harness
 * is the mean of its sessions, and the difference is tested by Welch's unequal-variance t test
 * over sessions with one degree of freedom less than Satterthwaite's (a small-sample correction:
 * with three sessions in the noisier harness the plain Welch test rejects 6.6% of nulls), whose
 * interval is the same test inverted (it excludes 0 exactly when p < α);
 * each harness's own Δ has the session-level interval of the headline. Harnesses rarely have
 * the same number of sessions or the same spread, and the raw-mean permutation test and
 * percentile bootstrap this replaced lost their level there (docs/statistics.md "Harness
 * contrast"). With fewer than three sessions in a harness the row says "underpowered" and why.
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
    /** Welch t interval over sessions (the Welch test inverted); null when a harness has fewer than three sessions. */
    ci: readonly [number, number] | null;
    /** Two-sided Welch t p over sessions (on `df`); null when a harness has fewer than three sessions. */
    p: number | null;
    /** `welch-t-df-1`: Welch's t on the Satterthwaite degrees of freedom less one (at least 1). */
    method: 'welch-t-df-1' | null;
    /** Degrees of freedom the test uses: max(Satterthwaite − 1, 1). */
    df: number | null;
    /** Welch–Satterthwaite degrees of freedom (before the correction). */
    dfSatterthwaite: number | null;
    /** The smallest p the test can give (0 for the Welch test: it is continuous); null without a test. */
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

/** Fewest sessions per harness for a test of the difference (2 + 10 sessions rejected 7.9% of nulls even with the correction). */
export const MIN_SESSIONS_PER_HARNESS = 3;

/**
 * Welch's unequal-variance t test of mean(a) − mean(b) on max(ν − 1, 1) degrees of freedom, ν
 * Satterthwaite's, and its inverted interval (the same t statistic, degrees of freedom and
 * quantile), so the interval excludes 0 exactly when p < 1 − level. The plug-in ν overstates the
 * degrees of freedom when a small group's variance is underestimated, which is where Welch's
 * test runs liberal; one degree less holds the level on the designs of docs/statistics.md
 * ("Harness contrast") and costs under a tenth of the power on equal groups.
 */
export function welchContrast(
  a: readonly number[],
  b: readonly number[],
  level = 0.95,
): { estimate: number; ci: readonly [number, number]; p: number; df: number; dfSatterthwaite: number; se: number } {
  const welch = welchTTest(a, b);
  const df = Math.max(welch.df - 1, 1);
  const test = { df, p: tTwoSidedP(welch.t, df) };
  const estimate = meanOf(a) - meanOf(b);
  const variance = (xs: readonly number[]) => {
    const m = meanOf(xs);
    return xs.reduce((s, v) => s + (v - m) ** 2, 0) / (xs.length - 1);
  };
  const se = Math.sqrt(variance(a) / a.length + variance(b) / b.length);
  const half = tQuantile(1 - (1 - level) / 2, test.df) * se;
  return { estimate, ci: [estimate - half, estimate + half], p: test.p, df: test.df, dfSatterthwaite: welch.df, se };
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
  for (const [judge, target] of judgeTargets(design)) {
    const filler = probeCell(design, target, judge, 'filler');
    const units = driftUnits(observations, design, target, judge);
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
    let difference: HarnessRow['difference'] = {
      contrast: 'claude-code − codex',
      estimate,
      ci: null,
      p: null,
      method: null,
      df: null,
      dfSatterthwaite: null,
      minAttainableP: null,
    };
    let reason: string | null = null;
    if (fewest < MIN_SESSIONS_PER_HARNESS) {
      reason = `${cc.sessions.length} Claude Code and ${cx.sessions.length} Codex session(s): sessions are the units of a harness claim, so each harness needs at least ${MIN_SESSIONS_PER_HARNESS} sessions for an interval and a test (with 2, one variance rests on one degree of freedom and the test loses its level); the difference shown is a description of these sessions only`;
    } else {
      const test: Maybe<ReturnType<typeof welchContrast>> = attempt(() => welchContrast(cc.gaps, cx.gaps, 1 - options.alpha));
      if ('error' in test) {
        reason = `the Welch test is undefined: ${test.error}`;
      } else {
        difference = { ...difference, ci: test.ci, p: test.p, method: 'welch-t-df-1', df: test.df, dfSatterthwaite: test.dfSatterthwaite, minAttainableP: 0 };
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
