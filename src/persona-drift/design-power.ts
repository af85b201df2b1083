import { minimumDetectableEffect, twoSidedTestPower } from '../stats/calibration.js';
import { DEFAULT_VARIANCE, type VarianceKnobs } from './calibrate.js';

/**
 * What a persona design can detect, before any call (pure, analytic): the headline drift gap's
 * minimum detectable |Δ| at 80% power and its power at the strong-drift threshold, under the
 * variance model `persona calibrate` simulates (docs/statistics.md, "Persona drift"; defaults
 * between-session 0.2, between-position 0.2, within-cell 0.7 judge points).
 *
 * The headline is a mean over units (positions of one session, or sessions) of the per-unit gap
 * filler − real, each arm's mean over the m scored responses of the headline cell (probes of the
 * primary category × paraphrases × samples). Its variance per unit is
 *   one session:  σ²_position + 2σ²_cell / m
 *   S ≥ 6 sessions of P positions:  σ²_session + σ²_position / P + 2σ²_cell / (P m)
 * and the t interval over n units gives MDE = (t₀.₉₇₅ + t₀.₈) · SE on n − 1 df — the figure
 * `persona calibrate` reports (its simulation agrees within Monte Carlo error; the slow test
 * design-power.slow.test.ts checks it). Power uses the normal approximation to the noncentral t.
 * Several targets are Holm-adjusted in the report: α / targets here (conservative).
 */

export interface PersonaDesignCounts {
  /** Sessions (units after forks are merged). */
  sessions: number;
  /** Probed positions per session (the smallest count across sessions). */
  positionsPerSession: number;
  /** Scored responses per arm per position in the headline cell. */
  responsesPerCell: number;
  targets: number;
}

export interface PersonaDesignPower {
  unit: 'positions' | 'sessions' | null;
  units: number;
  /** Minimum detectable |Δ| at 80% power, or null when the test cannot reject at all. */
  mde: number | null;
  /** Power at |Δ| = the strong-drift threshold, or null when the test cannot reject. */
  power: number | null;
  effect: number;
  alpha: number;
  /** Why the design cannot test (too few units), or null. */
  refusal: string | null;
  /** The fewest positions (one session) or sessions that reach 80% power at `effect`, or null. */
  needed: number | null;
}

/** The sign-flip test over n units cannot reach p < 0.05 below 6 units (smallest p = 2 / 2ⁿ). */
const MIN_UNITS = 6;

function unitVariance(counts: PersonaDesignCounts, v: VarianceKnobs, positions = counts.positionsPerSession): number {
  const cell = (2 * v.withinCell ** 2) / counts.responsesPerCell;
  return counts.sessions <= 1 ? v.betweenPosition ** 2 + cell : v.betweenSession ** 2 + v.betweenPosition ** 2 / positions + cell / positions;
}

function powerAt(effect: number, se: number, df: number, alpha: number): number {
  return twoSidedTestPower(effect, se, df, alpha);
}

export function personaDesignPower(
  counts: PersonaDesignCounts,
  options: { effect?: number; alpha?: number; variance?: Partial<VarianceKnobs> } = {},
): PersonaDesignPower {
  const effect = options.effect ?? 0.3;
  const alpha = (options.alpha ?? 0.05) / Math.max(1, counts.targets);
  const v = { ...DEFAULT_VARIANCE, ...options.variance };
  const base = { effect, alpha };
  if (counts.sessions >= 2 && counts.sessions < MIN_UNITS) {
    return {
      ...base,
      unit: null,
      units: counts.sessions,
      mde: null,
      power: null,
      needed: MIN_UNITS,
      refusal: `${counts.sessions} sessions: no session-level claim is possible below ${MIN_UNITS} sessions (use one session, or at least ${MIN_UNITS})`,
    };
  }
  const unit = counts.sessions <= 1 ? 'positions' : 'sessions';
  const n = counts.sessions <= 1 ? counts.positionsPerSession : counts.sessions;
  const mdeFor = (units: number, positions = counts.positionsPerSession) =>
    minimumDetectableEffect(Math.sqrt(unitVariance(counts, v, positions) / units), { alpha, df: units - 1 });
  let needed: number | null = null;
  for (let k = MIN_UNITS; k <= 10_000; k++) {
    if (mdeFor(k) <= effect) {
      needed = k;
      break;
    }
  }
  if (n < MIN_UNITS || counts.responsesPerCell < 1) {
    return {
      ...base,
      unit,
      units: n,
      mde: null,
      power: null,
      needed,
      refusal: `${n} ${unit}: the sign-flip test cannot reach p < 0.05 below ${MIN_UNITS} units`,
    };
  }
  const se = Math.sqrt(unitVariance(counts, v) / n);
  return { ...base, unit, units: n, mde: mdeFor(n), power: powerAt(effect, se, n - 1, alpha), needed, refusal: null };
}

/** The dry run's line: MDE and power of the headline test, and UNDERPOWERED with what to add. */
export function personaPowerLine(p: PersonaDesignPower, strongThreshold: number): string {
  const assumed = `between-position SD ${DEFAULT_VARIANCE.betweenPosition}, within-cell SD ${DEFAULT_VARIANCE.withinCell}${p.unit === 'sessions' ? `, between-session SD ${DEFAULT_VARIANCE.betweenSession}` : ''} assumed, docs/statistics.md`;
  const add = (n: number | null) =>
    n === null
      ? ''
      : p.unit === 'sessions'
        ? ` — about ${n} sessions would reach 80%`
        : ` — about ${n} positions (or more probes × paraphrases × samples) would reach 80%`;
  if (p.refusal !== null) return `power: UNDERPOWERED — ${p.refusal}${add(p.needed)}`;
  const head = `power: drift gap over ${p.units} ${p.unit} → minimum detectable |Δ| ≈ ${(p.mde as number).toFixed(2)} at 80% power, power ${(p.power as number).toFixed(2)} at |Δ| = ${strongThreshold} (strong drift), α = ${Number(p.alpha.toFixed(4))} (${assumed})`;
  if ((p.mde as number) <= strongThreshold) return `${head}; adequately powered`;
  return `${head}; UNDERPOWERED${add(p.needed)}; \`echolens persona calibrate <config>\` simulates every test of this design`;
}

/**
 * The counts of a planned grid (its target cells' labels): positions per session and responses
 * per arm and position in the headline cell (first target, real arm, no mitigation, first
 * distance, first system prompt, primary probe category).
 */
export function personaDesignCounts(
  specs: ReadonlyArray<{ labels: Readonly<Record<string, unknown>> }>,
  options: { units: number; targets: number; primaryCategory: string | null },
): PersonaDesignCounts {
  const probes = specs.filter((s) => s.labels.surface === 'probe' && s.labels.arm === 'real' && s.labels.mitigation === 'none');
  const first = probes[0]?.labels;
  const headline = probes.filter(
    (s) =>
      s.labels.target === first?.target &&
      s.labels.distance === first?.distance &&
      s.labels.systemPrompt === first?.systemPrompt &&
      (options.primaryCategory === null || s.labels.category === options.primaryCategory),
  );
  const perPosition = new Map<string, number>();
  const positionsOf = new Map<string, Set<string>>();
  for (const s of headline) {
    const session = String(s.labels.session);
    const key = `${session}\u0000${String(s.labels.position)}`;
    perPosition.set(key, (perPosition.get(key) ?? 0) + 1);
    positionsOf.set(session, (positionsOf.get(session) ?? new Set<string>()).add(String(s.labels.position)));
  }
  const counts = [...perPosition.values()];
  return {
    sessions: options.units,
    positionsPerSession: positionsOf.size === 0 ? 0 : Math.min(...[...positionsOf.values()].map((p) => p.size)),
    responsesPerCell: counts.length === 0 ? 0 : Math.min(...counts),
    targets: options.targets,
  };
}
