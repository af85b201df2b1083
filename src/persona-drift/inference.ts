import { StatisticsError } from '../core/errors.js';
import { mean as meanOf, tQuantile } from '../stats/distributions.js';
import { holm } from '../stats/multiple-testing.js';
import { signFlipInference } from '../stats/test-inversion.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * Inference at the unit that was sampled (pure). A persona run samples sessions, positions
 * inside sessions, then probes/paraphrases/samples inside a position. Every contrast of the
 * report is first reduced to one number per (session, position) — the unit delta — and then:
 * - one session: the positions are the units (position-clustered);
 * - several sessions: the unit deltas are averaged within each session and the sessions are
 *   the units (a claim about sessions like these, not only about these positions).
 * The test is the sign-flip test of the unit means, exact when 2^units ≤ 2^20, otherwise Monte
 * Carlo with at least 20,000 patterns and p = (b + 1)/(B + 1); the interval is that test
 * inverted ({δ : sign-flip p of units − δ ≥ α}), so it excludes 0 exactly when p < α. When the
 * test cannot reach α with so few units the inverted set is the whole line; the interval shown
 * is then the Student-t interval widened to contain 0 (`ciMethod`), so it still never excludes
 * 0 beside a p that cannot be significant. Choices and their calibration are written in
 * docs/statistics.md ("Persona drift").
 */

export type InferenceLevel = 'position' | 'session' | 'item';

export interface UnitValue {
  session: string;
  position: string;
  value: number;
}

export interface UnitInference {
  estimate: number;
  ci: readonly [number, number];
  /**
   * How `ci` was formed: `sign-flip inversion` (the test inverted at the interval's level), or
   * `t ∪ 0` when the test cannot reject at all (the t interval widened to contain 0).
   */
  ciMethod: 'sign-flip inversion' | 't ∪ 0';
  /** Standard error of the estimate (sd of unit values / √units). */
  se: number;
  df: number;
  /** Two-sided sign-flip p over the units. */
  p: number;
  method: 'exact' | 'monte-carlo';
  /** The unit of inference: positions (one session), sessions (several), items (within one position). */
  level: InferenceLevel;
  units: number;
  sessions: number;
  positions: number;
  /** The smallest p the sign-flip test can give with this many units. */
  minAttainableP: number;
  /** Plain-language caveat when the design limits the claim (too few sessions, …). */
  note?: string;
  /**
   * Leave-one-session-out diagnostic of a significant session-level claim (absent otherwise):
   * `fragile` when removing one outlying session changes the verdict, `drivenBy` naming that session.
   */
  influence?: SessionInfluence;
  /**
   * The claim this estimate decides, as every surface should print it: one interval and one p
   * that agree (`interval` excludes 0 exactly when `p` < α). Alone, the test's own p and
   * interval; in a Holm family, the Holm-adjusted p and the Holm-consistent interval.
   */
  claim: Claim;
}

/** One verdict-deciding claim: its p, the interval that agrees with it, and whether it rests on one session. */
export interface Claim {
  /** The deciding p: Holm-adjusted within `family` tests when `family` > 1, else the test's p. */
  p: number;
  /** The test's own (unadjusted) p. */
  pRaw: number;
  /** Contains 0 exactly when p ≥ α: the test inverted at the Holm step's level (or t ∪ 0 when the test cannot reject at that level). */
  interval: readonly [number, number];
  /** Confidence level of `interval`: 1 − α alone; 1 − α/(m − r + 1) at Holm step r in a family of m. */
  confidence: number;
  /** Number of tests in the Holm family (1: no adjustment). */
  family: number;
  alpha: number;
  /** p < α. */
  significant: boolean;
  /** A significant session-level claim that removing one outlying session undoes (leave-one-session-out). */
  fragile: boolean;
  /** The session a fragile claim rests on. */
  drivenBy: string | null;
}

export interface SessionInfluence {
  /**
   * True when removing one session makes the claim not significant or reverses its direction and
   * that session is an outlier of the session estimates (studentized deleted residual above
   * `outlierThreshold`).
   */
  fragile: boolean;
  /** The outlying session whose removal weakens the claim most (null when the claim is not fragile). */
  drivenBy: string | null;
  /** Bonferroni t quantile t_{n−2}(1 − γ/(2n)), γ = OUTLIER_GAMMA: the deleted residual beyond which a session is an outlier. */
  outlierThreshold: number;
  /**
   * Per session: the estimate and p without it (p null when too few sessions remain to test),
   * whether the claim holds without it, its studentized deleted residual and whether it is an outlier.
   */
  leaveOneOut: Array<{ session: string; estimate: number; p: number | null; holds: boolean; residual: number; outlier: boolean }>;
}

export interface InferenceOptions {
  /** Monte Carlo patterns when the sign-flip is not exact (at least 20,000 are used). */
  B?: number;
  seed?: number;
  alpha?: number;
  /** Level of the interval (default 0.95). */
  level?: number;
}

/**
 * Fewest units with which the exact two-sided sign-flip test can reach p < 0.05: its smallest
 * p is 2/2^n (the observed sign pattern and its mirror), 0.0625 for 5 units, 0.031 for 6.
 */
export const MIN_UNITS_FOR_CLAIM = 6;

const MIN_MC_PATTERNS = 20_000;
const EXACT_LIMIT = 20;

/** The Monte Carlo patterns (never fewer than MIN_MC_PATTERNS) and seed of the sign-flip tests. */
const patterns = (options: InferenceOptions) => ({ B: Math.max(options.B ?? MIN_MC_PATTERNS, MIN_MC_PATTERNS), seed: options.seed ?? 42 });

const quantiles = new Map<string, number>();
/** Student-t quantile, memoized (calibration evaluates the same few thousands of times). */
export function tQuantileCached(probability: number, df: number): number {
  return getOrInsert(quantiles, `${probability}|${df}`, () => tQuantile(probability, df));
}

/**
 * Sign-flip test and t interval over independent unit values. Throws StatisticsError when
 * fewer than two units exist (no interval is possible).
 */
export function unitInference(
  values: readonly number[],
  level: InferenceLevel,
  counts: { sessions: number; positions: number },
  options: InferenceOptions = {},
): UnitInference {
  const n = values.length;
  const alpha = options.alpha ?? 0.05;
  const confidence = options.level ?? 0.95;
  const { B, seed } = patterns(options);
  if (n < 2) {
    throw new StatisticsError(
      level === 'session'
        ? `only ${n} session has data in this cell; a session-level interval needs at least 2 sessions`
        : level === 'position'
          ? `only ${n} position has data in this cell; a position-clustered interval needs at least 2 positions (add positions, e.g. uniform: 12)`
          : `only ${n} probe has data at this position; an interval needs at least 2 probes`,
    );
  }
  const m = meanOf(values);
  let ss = 0;
  for (const v of values) ss += (v - m) ** 2;
  const se = Math.sqrt(ss / (n - 1) / n);
  const df = n - 1;
  const exact = n <= EXACT_LIMIT;
  const flip = signFlipInference(values, { alpha: 1 - confidence, B, seed, exact });
  let ci: readonly [number, number] = flip.ci;
  let ciMethod: UnitInference['ciMethod'] = 'sign-flip inversion';
  if (!flip.bounded) {
    const half = tQuantileCached(1 - (1 - confidence) / 2, df) * se;
    ci = [Math.min(m - half, 0), Math.max(m + half, 0)];
    ciMethod = 't ∪ 0';
  }
  const minAttainableP = exact ? Math.min(1, 2 / 2 ** n) : 1 / (B + 1);
  const claim: Claim = {
    p: flip.p,
    pRaw: flip.p,
    interval: ci,
    confidence,
    family: 1,
    alpha,
    significant: flip.p < alpha,
    fragile: false,
    drivenBy: null,
  };
  claimSources.set(claim, { values: [...values], exact, B, seed, mean: m, se, df });
  const result: UnitInference = {
    estimate: m,
    ci,
    ciMethod,
    se,
    df,
    p: flip.p,
    method: flip.method,
    level,
    units: n,
    sessions: counts.sessions,
    positions: counts.positions,
    minAttainableP,
    claim,
  };
  if (minAttainableP >= alpha) {
    const unit = level === 'session' ? 'sessions' : level === 'position' ? 'positions' : 'probes';
    result.note =
      `with ${n} ${unit} the sign-flip test cannot reach p < ${alpha} (smallest possible p = ${minAttainableP.toFixed(3)}); ` +
      (level === 'session'
        ? `a session-level claim needs at least ${MIN_UNITS_FOR_CLAIM} sessions (use more sessions, or one session for a claim about that session only)`
        : `add ${unit}`);
  }
  return result;
}

/**
 * Clustered inference over unit deltas: positions are the units in one session; with several
 * sessions the positions are averaged within their session and sessions are the units.
 */
export function clusteredInference(units: readonly UnitValue[], options: InferenceOptions = {}): UnitInference {
  if (units.length === 0) throw new StatisticsError('no position has data in every arm of this contrast');
  const bySession = valuesBySession(units);
  const counts = { sessions: bySession.size, positions: units.length };
  if (bySession.size >= 2) {
    const sessions = [...bySession.keys()].sort();
    const sessionMeans = sessions.map((s) => meanOf(bySession.get(s) as number[]));
    const result = unitInference(sessionMeans, 'session', counts, options);
    if (result.p < (options.alpha ?? 0.05)) {
      const influence = sessionInfluence(sessions, sessionMeans, result, options);
      result.influence = influence;
      result.claim = withInfluence(result.claim, influence);
    }
    return result;
  }
  return unitInference(
    units.map((u) => u.value),
    'position',
    counts,
    options,
  );
}

/** Mean of unit values with sessions weighted equally (positions equally within a session). */
export function clusteredMean(units: readonly UnitValue[]): number {
  return meanOf([...valuesBySession(units).values()].map(meanOf));
}

function valuesBySession(units: readonly UnitValue[]): Map<string, number[]> {
  const bySession = new Map<string, number[]>();
  for (const u of units) getOrInsert(bySession, u.session, () => []).push(u.value);
  return bySession;
}

/**
 * Share of samples of normal, symmetric session effects in which some session's deleted residual
 * crosses the outlier threshold (Bonferroni over the sessions, so at most this). Chosen in
 * tools/calibration/fragile_rule.py: it keeps 99.6% of the headline's power on a symmetric
 * 8-session design, where the leave-one-out rule alone kept 71%.
 */
export const OUTLIER_GAMMA = 0.05;

/**
 * Studentized deleted residual of each value: |x_i − mean_{−i}| / (s_{−i} √(1 + 1/(n − 1))), which
 * is t-distributed on n − 2 degrees of freedom when the values are i.i.d. normal. Infinite when the
 * others are all equal and x_i differs; 0 when all are equal. Needs n ≥ 4 (s_{−i} on ≥ 2 df).
 */
export function deletedResiduals(values: readonly number[]): number[] {
  const n = values.length;
  // Values equal up to rounding of their magnitude count as equal.
  const tiny = 1e-12 * Math.max(...values.map(Math.abs), Number.MIN_VALUE);
  return values.map((x, i) => {
    const rest = values.filter((_, j) => j !== i);
    const m = meanOf(rest);
    const s = Math.sqrt(rest.reduce((acc, v) => acc + (v - m) ** 2, 0) / (rest.length - 1));
    const gap = Math.abs(x - m);
    if (s <= tiny) return gap <= tiny ? 0 : Number.POSITIVE_INFINITY;
    return gap / (s * Math.sqrt(1 + 1 / (n - 1)));
  });
}

/**
 * Leave-one-session-out: the claim is recomputed without each session. It holds without a
 * session when the remaining sessions' estimate keeps the claim's sign and, if at least
 * MIN_UNITS_FOR_CLAIM sessions remain, their own sign-flip test is still below α (with fewer,
 * no test can reach α, so only the direction is asked). A significant claim is fragile when it
 * fails to hold without a session that is also an outlier of the session estimates (deleted
 * residual beyond the Bonferroni t quantile at OUTLIER_GAMMA): it rests on that one session. A
 * claim that merely sits near α fails without almost any session, which says nothing about one
 * session; marking those cost 29% of the power (docs/statistics.md, "Influence").
 */
export function sessionInfluence(
  sessions: readonly string[],
  sessionMeans: readonly number[],
  full: { estimate: number },
  options: InferenceOptions = {},
): SessionInfluence {
  const alpha = options.alpha ?? 0.05;
  const sign = Math.sign(full.estimate);
  const n = sessionMeans.length;
  const outlierThreshold = n >= 4 ? tQuantileCached(1 - OUTLIER_GAMMA / (2 * n), n - 2) : Number.POSITIVE_INFINITY;
  const residuals = n >= 4 ? deletedResiduals(sessionMeans) : sessionMeans.map(() => 0);
  const leaveOneOut = sessions.map((session, i) => {
    const rest = sessionMeans.filter((_, j) => j !== i);
    const estimate = meanOf(rest);
    const p = rest.length >= MIN_UNITS_FOR_CLAIM ? signFlipInference(rest, { ...patterns(options), alpha, exact: rest.length <= EXACT_LIMIT }).p : null;
    const holds = Math.sign(estimate) === sign && (p === null || p < alpha);
    const residual = residuals[i] as number;
    return { session, estimate, p, holds, residual, outlier: residual > outlierThreshold };
  });
  const failing = leaveOneOut.filter((l) => !l.holds && l.outlier);
  if (failing.length === 0) return { fragile: false, drivenBy: null, outlierThreshold, leaveOneOut };
  // The session whose removal weakens the claim most: the largest p, then the estimate furthest toward the other sign.
  const worst = [...failing].sort((a, b) => (b.p ?? 1) - (a.p ?? 1) || sign * (a.estimate - b.estimate))[0] as (typeof failing)[number];
  return { fragile: true, drivenBy: worst.session, outlierThreshold, leaveOneOut };
}

interface ClaimSource {
  values: number[];
  exact: boolean;
  B: number;
  seed: number;
  mean: number;
  se: number;
  df: number;
}

/** The unit values behind each claim, so a family adjustment can invert the same test at another level (no I/O, no JSON). */
const claimSources = new WeakMap<Claim, ClaimSource>();

function withInfluence(claim: Claim, influence: SessionInfluence | undefined): Claim {
  const next: Claim = {
    ...claim,
    fragile: claim.significant && (influence?.fragile ?? false),
    drivenBy: claim.significant && influence?.fragile ? influence.drivenBy : null,
  };
  const source = claimSources.get(claim);
  if (source) claimSources.set(next, source);
  return next;
}

/**
 * The sign-flip test of a claim's units inverted at `alpha` (≤ the claim's own α, so the set
 * contains the claim's own interval). When the test cannot reject at that level the set is the
 * whole line; the stand-in is then the t interval at that level joined with 0 and with the
 * claim's own interval (`own`), so it is never narrower than what the test alone printed.
 */
function invertClaim(source: ClaimSource, alpha: number, own: readonly [number, number]): readonly [number, number] {
  const flip = signFlipInference(source.values, { alpha, B: source.B, seed: source.seed, exact: source.exact });
  if (flip.bounded) return flip.ci;
  const half = tQuantileCached(1 - alpha / 2, source.df) * source.se;
  return [Math.min(source.mean - half, 0, own[0]), Math.max(source.mean + half, 0, own[1])];
}

/**
 * Holm's step-down procedure over a family of claims, with intervals that agree with it: with
 * the raw p sorted ascending, p_(1) ≤ … ≤ p_(m), and r* the first step that fails
 * ((m − r* + 1)·p_(r*) ≥ α), the claim at step r gets the Holm-adjusted p and its test inverted at
 * α/(m − min(r, r*) + 1). A claim Holm rejects (r < r*) has p_(r) < α/(m − r + 1), so that
 * interval excludes 0; every other claim has p ≥ p_(r*) ≥ α/(m − r* + 1), so its interval
 * contains 0. Hence "interval excludes 0" ⇔ "Holm-adjusted p < α", and each interval's own
 * coverage is at least 1 − α. Returns new claims in input order (fragility kept when still
 * significant). A family of one is returned unchanged.
 */
export function holmClaims(claims: readonly Claim[]): Claim[] {
  const m = claims.length;
  if (m <= 1) return [...claims];
  const alpha = claims[0]?.alpha ?? 0.05;
  const order = claims.map((_, i) => i).sort((a, b) => (claims[a] as Claim).pRaw - (claims[b] as Claim).pRaw || a - b);
  const adjusted = holm(claims.map((c) => c.pRaw));
  // Step r (1-based) fails when min(1, (m − r + 1)·p_(r)) ≥ α; m + 1 when none fails.
  const failIndex = order.findIndex((index, k) => !(Math.min(1, (m - k) * (claims[index] as Claim).pRaw) < alpha));
  const firstFail = failIndex === -1 ? m + 1 : failIndex + 1;
  const out = new Array<Claim>(m);
  order.forEach((index, k) => {
    const r = k + 1;
    const claim = claims[index] as Claim;
    const p = adjusted[index] as number;
    const significant = p < alpha;
    const stepAlpha = alpha / (m - Math.min(r, firstFail) + 1);
    const source = claimSources.get(claim);
    let interval = claim.interval;
    if (source) {
      interval = invertClaim(source, stepAlpha, claim.interval);
      // The inversion decides p_(r) < stepAlpha; Holm decides (m − r + 1)·p_(r) < α. They differ
      // only when p sits within rounding of the step level; nudge the level to Holm's side.
      const excludes = (ci: readonly [number, number]) => ci[0] > 0 || ci[1] < 0;
      if (excludes(interval) !== significant) interval = invertClaim(source, stepAlpha * (significant ? 1 + 1e-9 : 1 - 1e-9), claim.interval);
    }
    const next: Claim = {
      ...claim,
      p,
      interval,
      confidence: 1 - stepAlpha,
      family: m,
      significant,
      fragile: significant && claim.fragile,
      drivenBy: significant ? claim.drivenBy : null,
    };
    if (source) claimSources.set(next, source);
    out[index] = next;
  });
  return out;
}
