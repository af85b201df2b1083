import { InvalidArgumentError } from '../core/errors.js';
import { signFlipInference } from '../stats/test-inversion.js';
import { CONTINUATION_ARMS, type ContinuationArm } from './arms.js';
import { observedPower } from './power.js';
import type { CallStatus } from './scoring.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { mean } from '../stats/distributions.js';

/**
 * Paired analysis of argument fidelity (pure; docs/continuation.md).
 *
 * For each target and each pair of arms (a, b) the unit is the cutpoint:
 * - complete case (`completeCase`): cutpoints where both arms returned a parseable call;
 *   difference = fidelity(a) − fidelity(b);
 * - intention to treat (`itt`): every cutpoint where both arms were generated (a cell that
 *   failed to get any answer is not generated); an unparseable, prose or missing answer
 *   scores 0.
 * Estimate = mean difference; test = two-sided paired sign-flip test over cutpoints; interval
 * = that test inverted ({δ : p(differences − δ) ≥ α}), so the interval excludes 0 exactly when
 * p < α and the verdict, the printed p and the gate are one test. Exact enumeration when at most
 * `exactMax` (20) non-zero differences exist, otherwise `resamples` (≥ 20,000) seeded random sign
 * patterns with p = (b + 1)/(B + 1). Exact zeros never change sign (they do not move p at 0) but
 * do at other tested means, so they stay in (enumerated by their binomial weights). When the test cannot reach α at all the interval
 * is null (the whole line): no claim.
 * Strata: `sameTask` / `crossTask` — whether the recent window's task is the task of the
 * ground-truth call. Primary contrast: recent − cross.
 */

export interface ContinuationObservation {
  target: string;
  cutpoint: string;
  arm: ContinuationArm;
  /** False when the cell got no answer at all (call failed / never run). */
  generated: boolean;
  status: CallStatus;
  fidelity: number | null;
  /** Stratum of the cutpoint (null when unknown). */
  sameTask: boolean | null;
}

export interface PairedEstimate {
  n: number;
  mean: number | null;
  ci: [number, number] | null;
  standardError: number | null;
  p: number | null;
  method: 'exact' | 'monte-carlo' | null;
  resamples: number | null;
  /** Non-zero differences the test used. */
  nonZero: number;
  /**
   * `primary` for the pre-specified analyses (recent − cross over all cutpoints, complete case and
   * ITT); every other row is `exploratory`: its p-value is unadjusted, one of up to 36 per target
   * (docs/continuation.md, "Primary and exploratory rows").
   */
  role: 'primary' | 'exploratory';
  /** Smallest p-value the test can give with this many non-zero pairs (exact: 2^(1 − m); Monte Carlo: 1/(B + 1)). */
  minAttainableP: number | null;
  /** Set when the test cannot reach p < α at all (too few non-zero pairs). */
  warning?: string;
  /** Why there is no estimate or test (e.g. "no pairs"). */
  reason?: string;
  /** Clusters of cutpoints that were the units (absent when the cutpoints were). */
  clusters?: number;
}

export interface ContrastResult {
  a: ContinuationArm;
  b: ContinuationArm;
  primary: boolean;
  completeCase: PairedEstimate;
  itt: PairedEstimate;
  strata: { sameTask: EstimatePair; crossTask: EstimatePair };
}

/** A contrast's two analyses of one set of cutpoints. */
type EstimatePair = Pick<ContrastResult, 'completeCase' | 'itt'>;

export interface ArmAttrition {
  arm: ContinuationArm;
  attempted: number;
  generated: number;
  calls: number;
  unparseable: number;
  prose: number;
  missing: number;
  notGenerated: number;
  /** Mean fidelity over parseable calls. */
  meanFidelity: number | null;
  /** Mean with unparseable / prose / missing = 0, over generated cells. */
  meanFidelityItt: number | null;
}

export interface ContinuationTargetAnalysis {
  target: string;
  cutpoints: number;
  sameTaskCutpoints: number;
  crossTaskCutpoints: number;
  attrition: ArmAttrition[];
  contrasts: ContrastResult[];
  /** The primary contrast's minimum detectable |Δ| from its own standard error (null without the primary arms). */
  power: { completeCase: ObservedPower; itt: ObservedPower } | null;
  /** Strata and rows whose tests cannot reach p < α, said once per target. */
  warnings: string[];
}

export type ObservedPower = ReturnType<typeof observedPower>;

export interface ContinuationAnalysis {
  primary: { a: ContinuationArm; b: ContinuationArm };
  alpha: number;
  targets: ContinuationTargetAnalysis[];
}

export interface AnalysisOptions {
  resamples?: number;
  seed?: number;
  exactMax?: number;
  alpha?: number;
  /** |Δ| worth detecting: the primary contrast is `underpowered` when its MDE exceeds it (default 0.15). */
  effectOfInterest?: number;
  /**
   * Cluster of each cutpoint (by task or turn proximity, `analysis.clusterBy`): when given, the
   * differences are averaged within each cluster and the clusters are the units of the test and
   * its interval, so neighbouring cutpoints that repeat one answer count once.
   */
  clusterOf?: (cutpoint: string) => string;
  /**
   * With several cross donors (`crossSessions`): the donor of each cutpoint's cross window. A
   * contrast with the cross arm then clusters cutpoints that share a donor (joined with the
   * `clusterOf` clusters), so the donor is a sampled unit and its own effect is in the error.
   */
  crossDonorOf?: (cutpoint: string) => string;
}

/**
 * Clusters joining two partitions of the cutpoints (pure): cutpoints that share a key of either
 * are in one cluster (connected components, union–find). Returns a key per cutpoint.
 */
export function joinClusters(cuts: readonly string[], ...keyOf: Array<(cutpoint: string) => string>): Map<string, string> {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    while (parent.get(root) !== root) root = parent.get(root) as string;
    let node = x;
    while (node !== root) {
      const next = parent.get(node) as string;
      parent.set(node, root);
      node = next;
    }
    return root;
  };
  for (const cut of cuts) parent.set(`c\u0000${cut}`, `c\u0000${cut}`);
  keyOf.forEach((key, k) => {
    for (const cut of cuts) {
      const label = `k${k}\u0000${key(cut)}`;
      if (!parent.has(label)) parent.set(label, label);
      const a = find(`c\u0000${cut}`);
      const b = find(label);
      if (a !== b) parent.set(a, b);
    }
  });
  // Name each cluster by its first cutpoint (input order), so keys are stable and readable.
  const names = new Map<string, string>();
  const out = new Map<string, string>();
  for (const cut of cuts) {
    const root = find(`c\u0000${cut}`);
    if (!names.has(root)) names.set(root, cut);
    out.set(cut, names.get(root) as string);
  }
  return out;
}

export type ClusterBy = 'none' | 'task' | { turns: number } | { consecutive: number };

/**
 * Cluster key per cutpoint (pure): `task` groups the cutpoints of one task; `{ consecutive: k }` puts each run of k cutpoints in timeline
 * order together; `{ turns: t }` chains cutpoints whose context ends lie within t timeline
 * messages of the previous one. Cutpoints are given in timeline order.
 */
export function cutpointClusters(cutpoints: ReadonlyArray<{ id: string; end: number; task?: string }>, by: ClusterBy): Map<string, string> {
  const out = new Map<string, string>();
  if (by === 'none' || by === 'task') {
    for (const c of cutpoints) out.set(c.id, by === 'task' ? `task:${c.task ?? c.id}` : c.id);
    return out;
  }
  let cluster = 0;
  let size = 0;
  let previousEnd: number | null = null;
  for (const c of cutpoints) {
    const start = 'consecutive' in by ? size >= by.consecutive : previousEnd !== null && c.end - previousEnd > by.turns;
    if (start && size > 0) {
      cluster++;
      size = 0;
    }
    out.set(c.id, `K${String(cluster + 1).padStart(2, '0')}`);
    size++;
    previousEnd = c.end;
  }
  return out;
}

export const MIN_RESAMPLES = 20_000;
export const PRIMARY_CONTRAST = { a: 'recent', b: 'cross' } as const;

/** Every ordered pair (a, b) with a before b in recent, cross, filler, scratch order: a − b. */
export function contrastPairs(arms: readonly ContinuationArm[] = CONTINUATION_ARMS): Array<[ContinuationArm, ContinuationArm]> {
  const order: ContinuationArm[] = ['recent', 'cross', 'filler', 'scratch'];
  const present = order.filter((a) => arms.includes(a));
  const pairs: Array<[ContinuationArm, ContinuationArm]> = [];
  for (let i = 0; i < present.length; i += 1) for (let j = i + 1; j < present.length; j += 1) pairs.push([present[i]!, present[j]!]);
  return pairs;
}

/** Mean, t interval and sign-flip test of paired differences. */
export function pairedEstimate(diffs: readonly number[], options: AnalysisOptions = {}): PairedEstimate {
  const n = diffs.length;
  const resamples = options.resamples ?? MIN_RESAMPLES;
  const exactMax = options.exactMax ?? 20;
  const alpha = options.alpha ?? 0.05;
  if (n === 0) {
    return {
      n,
      mean: null,
      ci: null,
      standardError: null,
      p: null,
      method: null,
      resamples: null,
      nonZero: 0,
      reason: 'no pairs',
      role: 'exploratory',
      minAttainableP: null,
    };
  }
  const mean = diffs.reduce((s, d) => s + d, 0) / n;
  let standardError: number | null = null;
  if (n >= 2) {
    const variance = diffs.reduce((s, d) => s + (d - mean) ** 2, 0) / (n - 1);
    standardError = Math.sqrt(variance / n);
  }
  const nonZero = diffs.filter((d) => d !== 0);
  if (nonZero.length === 0) {
    // Every pair tied: no sign pattern can be more extreme than the observed one.
    return withReachability(
      { n, mean, ci: null, standardError, p: 1, method: 'exact', resamples: 1, nonZero: 0, role: 'exploratory', minAttainableP: 1 },
      alpha,
    );
  }
  // Exact when the non-zero differences can be enumerated (the zeros enter by their binomial
  // weights); otherwise seeded Monte Carlo over all differences.
  const test = signFlipInference(diffs, { ...(nonZero.length <= exactMax ? {} : { exact: false }), B: resamples, seed: options.seed ?? 42, alpha });
  const exact = test.method === 'exact';
  const ci: [number, number] | null = n >= 2 && test.bounded ? [test.ci[0], test.ci[1]] : null;
  // Two-sided: the observed pattern and its mirror are always as extreme, so p ≥ 2 / 2^m exactly.
  const minAttainableP = Math.max(Math.min(1, 2 ** (1 - nonZero.length)), exact ? 0 : 1 / (resamples + 1));
  const out: PairedEstimate = {
    n,
    mean,
    ci,
    standardError,
    p: test.p,
    method: test.method,
    resamples: test.resamples,
    nonZero: nonZero.length,
    role: 'exploratory',
    minAttainableP,
  };
  if (n < 2) out.reason = 'one pair: no interval';
  else if (ci === null) out.reason = 'the sign-flip test cannot reach p < α with these pairs: no interval (any mean is compatible)';
  return withReachability(out, alpha);
}

function withReachability(e: PairedEstimate, alpha: number): PairedEstimate {
  if (e.minAttainableP !== null && e.minAttainableP >= alpha) {
    e.warning = `${e.nonZero} non-zero pair(s): the sign-flip test cannot reach p < ${alpha} (smallest attainable p ${e.minAttainableP.toFixed(3)})`;
  }
  return e;
}

const pairDifference = ([, d]: readonly [string, number]) => d;

function ittScore(o: ContinuationObservation): number {
  return o.status === 'call' && o.fidelity !== null ? o.fidelity : 0;
}

/** One target's observations by cutpoint and arm. */
export function byCutpoint(observations: readonly ContinuationObservation[]): Map<string, Map<ContinuationArm, ContinuationObservation>> {
  const out = new Map<string, Map<ContinuationArm, ContinuationObservation>>();
  for (const o of observations) getOrInsert(out, o.cutpoint, () => new Map()).set(o.arm, o);
  return out;
}

/**
 * The paired differences a − b of the kept cutpoints: intention to treat where both arms were
 * generated, complete case where both returned a parseable call.
 */
export function pairedDifferences(
  byCut: ReadonlyMap<string, ReadonlyMap<ContinuationArm, ContinuationObservation>>,
  a: ContinuationArm,
  b: ContinuationArm,
  keep: (cut: string) => boolean = () => true,
): { completeCase: Array<[string, number]>; itt: Array<[string, number]> } {
  const completeCase: Array<[string, number]> = [];
  const itt: Array<[string, number]> = [];
  for (const [cut, arms] of byCut) {
    if (!keep(cut)) continue;
    const x = arms.get(a);
    const y = arms.get(b);
    if (!x?.generated || !y?.generated) continue;
    itt.push([cut, ittScore(x) - ittScore(y)]);
    if (x.status === 'call' && y.status === 'call' && x.fidelity !== null && y.fidelity !== null) completeCase.push([cut, x.fidelity - y.fidelity]);
  }
  return { completeCase, itt };
}

function estimates(
  byCut: Map<string, Map<ContinuationArm, ContinuationObservation>>,
  a: ContinuationArm,
  b: ContinuationArm,
  keep: (cut: string) => boolean,
  options: AnalysisOptions,
): EstimatePair {
  const pairs = pairedDifferences(byCut, a, b, keep);
  let clusterOf = options.clusterOf;
  if (options.crossDonorOf && (a === 'cross' || b === 'cross')) {
    const cuts = [...byCut.keys()].filter(keep);
    const joined = joinClusters(cuts, ...(options.clusterOf ? [options.clusterOf] : []), options.crossDonorOf);
    clusterOf = (cut) => joined.get(cut) ?? cut;
  }
  const estimate = (pairs: ReadonlyArray<[string, number]>): PairedEstimate => {
    if (!clusterOf) return pairedEstimate(pairs.map(pairDifference), options);
    const groups = new Map<string, number[]>();
    for (const [cut, d] of pairs) getOrInsert(groups, clusterOf(cut), () => []).push(d);
    const clusterMeans = [...groups.keys()].sort().map((k) => mean(groups.get(k) as number[]));
    const e = pairedEstimate(clusterMeans, options);
    e.clusters = groups.size;
    return e;
  };
  return { completeCase: estimate(pairs.completeCase), itt: estimate(pairs.itt) };
}

function attritionOf(arm: ContinuationArm, observations: readonly ContinuationObservation[]): ArmAttrition {
  const list = observations.filter((o) => o.arm === arm);
  const generated = list.filter((o) => o.generated);
  const calls = generated.filter((o) => o.status === 'call' && o.fidelity !== null);
  return {
    arm,
    attempted: list.length,
    generated: generated.length,
    calls: calls.length,
    unparseable: generated.filter((o) => o.status === 'unparseable').length,
    prose: generated.filter((o) => o.status === 'prose').length,
    missing: generated.filter((o) => o.status === 'missing').length,
    notGenerated: list.length - generated.length,
    meanFidelity: calls.length === 0 ? null : mean(calls.map((o) => o.fidelity as number)),
    meanFidelityItt: generated.length === 0 ? null : mean(generated.map(ittScore)),
  };
}

/** One line per stratum that cannot reach p < α in any test, and per primary row that cannot. */
function reachabilityWarnings(contrasts: readonly ContrastResult[], stratum: ReadonlyMap<string, boolean | null>, alpha: number): string[] {
  const warnings: string[] = [];
  for (const [name, value] of [
    ['same-task', true],
    ['cross-task', false],
  ] as const) {
    const count = [...stratum.values()].filter((s) => s === value).length;
    if (count > 0 && 2 ** (1 - count) >= alpha) {
      warnings.push(
        `${name} stratum: ${count} cutpoint(s) — too few for its sign-flip tests to reach p < ${alpha} (at least ${Math.floor(1 + Math.log2(1 / alpha)) + 1} needed); its rows describe, they cannot test`,
      );
    }
  }
  for (const c of contrasts.filter((x) => x.primary)) {
    for (const [label, e] of [
      ['complete case', c.completeCase],
      ['ITT', c.itt],
    ] as const) {
      if (e.warning) warnings.push(`primary ${c.a} − ${c.b} (${label}): ${e.warning}`);
    }
  }
  return warnings;
}

export function analyzeContinuation(observations: readonly ContinuationObservation[], options: AnalysisOptions = {}): ContinuationAnalysis {
  if ((options.resamples ?? MIN_RESAMPLES) < 1) throw new InvalidArgumentError('resamples', 'must be positive');
  const targets = [...new Set(observations.map((o) => o.target))];
  const out: ContinuationTargetAnalysis[] = [];
  for (const target of targets) {
    const mine = observations.filter((o) => o.target === target);
    const byCut = byCutpoint(mine);
    const stratum = new Map(mine.map((o) => [o.cutpoint, o.sameTask]));
    const arms = CONTINUATION_ARMS.filter((a) => mine.some((o) => o.arm === a));
    const contrasts = contrastPairs(arms).map(([a, b]): ContrastResult => {
      const all = estimates(byCut, a, b, () => true, options);
      const primary = a === PRIMARY_CONTRAST.a && b === PRIMARY_CONTRAST.b;
      if (primary) {
        all.completeCase.role = 'primary';
        all.itt.role = 'primary';
      }
      return {
        a,
        b,
        primary,
        ...all,
        strata: {
          sameTask: estimates(byCut, a, b, (c) => stratum.get(c) === true, options),
          crossTask: estimates(byCut, a, b, (c) => stratum.get(c) === false, options),
        },
      };
    });
    const alpha = options.alpha ?? 0.05;
    const primaryContrast = contrasts.find((c) => c.primary);
    const settings = { alpha, ...(options.effectOfInterest === undefined ? {} : { effectOfInterest: options.effectOfInterest }) };
    out.push({
      target,
      power: primaryContrast
        ? { completeCase: observedPower(primaryContrast.completeCase, settings), itt: observedPower(primaryContrast.itt, settings) }
        : null,
      warnings: reachabilityWarnings(contrasts, stratum, alpha),
      cutpoints: byCut.size,
      sameTaskCutpoints: [...stratum.values()].filter((s) => s === true).length,
      crossTaskCutpoints: [...stratum.values()].filter((s) => s === false).length,
      attrition: arms.map((arm) => attritionOf(arm, mine)),
      contrasts,
    });
  }
  return { primary: { ...PRIMARY_CONTRAST }, alpha: options.alpha ?? 0.05, targets: out };
}
