import type { Maybe } from '../core/maybe.js';
import { isEcholensError, StatisticsError } from '../core/errors.js';
import { agreement, type AgreementResult } from '../stats/agreement.js';
import { bootstrapCI } from '../stats/bootstrap.js';
import { gapBootstrap } from '../stats/gap-bootstrap.js';
import { holm } from '../stats/multiple-testing.js';
import { signFlipTest } from '../stats/sign-flip.js';
import { tost } from '../stats/tost.js';
import { varianceDecomposition } from '../stats/variance-decomposition.js';
import { wilcoxonSignedRank } from '../stats/wilcoxon.js';
import { signAgreement } from '../stats/agreement.js';
import { type Fingerprint, fingerprint, fingerprintPca } from './fingerprint.js';

/**
 * ContextEcho analysis (§2.4, §3, appendices), pure: observations in, numbers
 * out. Every number sits under a stable key of `PersonaReport` (documented in
 * docs/persona-report-schema.md). A statistic that cannot be computed from the
 * data is reported as `{ error }` with the reason, never as a silent number.
 */

export type Surface = 'probe' | 'stressor' | 'contract';

/** One target response with everything the analysis needs (built from the store). */
export interface PersonaObservation {
  target: string;
  session: string;
  /** Position label, e.g. `P03`, `pre-C2`, `post-C2`, `T0025`. */
  position: string;
  /** Counter value of the position (for ordering and onset). */
  positionValue: number;
  /** Compaction event this position brackets, with its side. */
  compaction?: { index: number; side: 'pre' | 'post' };
  /** Context arm: real, filler, filler-flat, shuffled-real, unrelated-session, scratch. */
  arm: string;
  /** Mitigation arm: none, a-anchor, v0, placebo_iso_recipe, … */
  mitigation: string;
  /** Distance label after an insertion (d0, far, …). */
  distance: string;
  surface: Surface;
  /** Probe id, stressor id or contract id. */
  item: string;
  /** Probe category (probe surface) or the stressor/contract id. */
  category: string;
  paraphrase: number;
  sample: number;
  /** `done` responses are analysed; `empty` are dropouts; `failed` never answered. */
  status: 'done' | 'empty' | 'failed';
  text: string;
  /** Judge scores by judge model (probe surface); null = judge output invalid after re-asks. */
  scores: Record<string, number | null>;
  /** Deterministic check (stressor/contract surfaces). */
  check?: { pass: boolean; reason: string };
}

export interface Estimate {
  estimate: number;
  ci: readonly [number, number];
}

/** The shared Maybe (core/maybe.ts), re-exported under its old place. */
export type { Maybe };

export interface GapEstimate extends Estimate {
  p: number;
  nPositions: number;
  real: Estimate;
  filler: Estimate;
  nReal: number;
  nFiller: number;
}

export interface TargetDrift {
  target: string;
  judge: string;
  /** Position-averaged gap Δ = filler − real with the position-clustered CI on Δ. */
  gap: Maybe<GapEstimate>;
  strongDrift: boolean;
  /** Paired sign-flip test over (session, position, item, paraphrase, sample) deltas. */
  signFlip: Maybe<{ mean: number; p: number; n: number; pHolm: number }>;
  byPosition: Array<{ session: string; position: string; positionValue: number; gap: Maybe<GapEstimate> }>;
  byCategory: Array<{ category: string; gap: Maybe<GapEstimate> }>;
  bySession: Array<{ session: string; gap: Maybe<GapEstimate> }>;
  /** Other context arms against filler: gap = filler − arm. */
  referenceArms: Array<{ arm: string; gap: Maybe<GapEstimate> }>;
  onset: { position: string; positionValue: number } | null;
}

export interface MitigationResult {
  target: string;
  judge: string;
  mitigation: string;
  distance: string;
  mean: number;
  n: number;
  /** mitigation − control (real context, no mitigation). */
  vsControl: Maybe<GapEstimate>;
  /** mitigation − placebo_iso_recipe when that arm exists. */
  vsPlacebo: Maybe<GapEstimate> | null;
  /** (mitigated − real)/(filler − real), only when filler − real > 0.05. */
  recovery: number | null;
}

export interface StressorResult {
  target: string;
  item: string;
  arm: string;
  mitigation: string;
  n: number;
  complianceRate: number;
  meanLength: number;
}

export interface VerbosityResult {
  target: string;
  item: string;
  pairs: number;
  /** filler compliance − real compliance, percentage points. */
  complianceGapPp: number;
  medianRatio: number | null;
  /** Mean real length / mean filler length over pairs where both arms comply. */
  conditionalRatio: number | null;
  conditionalPairs: number;
  /** Between-session share of the log verbosity ratio (random-effects REML). */
  heterogeneity: Maybe<{ between: number; within: number; betweenShare: number }> | null;
}

export interface ContractContrast {
  target: string;
  contrast: string;
  distance: string;
  sessions: number;
  /** Mean over sessions of the per-session pass-rate difference, with a session bootstrap CI. */
  difference: Maybe<Estimate>;
  wilcoxon: Maybe<{ statistic: number; p: number }>;
  pHolm: number | null;
}

export interface CompactionResult {
  target: string;
  judge: string;
  events: Array<{ session: string; index: number; pre: number; post: number; change: number }>;
  meanChange: number | null;
  tost: Maybe<{ mean: number; ci: [number, number]; p: number; equivalent: boolean; margin: number }> | null;
}

export interface JudgeAgreementResult {
  judgeA: string;
  judgeB: string;
  pairs: Maybe<AgreementResult>;
  signs: Maybe<{ agree: number; flip: number; nullVsSmall: number; labels: Array<{ target: string; gapA: number; gapB: number; label: string }> }>;
}

export interface PersonaReport {
  schema: 'echolens.persona-report/1';
  options: Required<Pick<AnalysisOptions, 'B' | 'seed' | 'strongThreshold' | 'tostMargin'>> & { primaryCategory: string | null };
  counts: {
    observations: number;
    byArm: Array<{ target: string; arm: string; mitigation: string; surface: Surface; done: number; empty: number; failed: number; dropoutRate: number }>;
    invalidJudgements: Array<{ judge: string; arm: string; mitigation: string; invalid: number; judged: number }>;
  };
  drift: TargetDrift[];
  mitigations: MitigationResult[];
  stressors: StressorResult[];
  verbosity: VerbosityResult[];
  contracts: Array<{ target: string; item: string; arm: string; mitigation: string; distance: string; n: number; passRate: number; failures: Record<string, number> }>;
  contractContrasts: ContractContrast[];
  compaction: CompactionResult[];
  judgeAgreement: JudgeAgreementResult[];
  fingerprint: Maybe<{
    features: readonly string[];
    components: [number[], number[]];
    explainedVarianceRatio: [number, number];
    centroids: Array<{ arm: string; mitigation: string; pc1: number; pc2: number; n: number }>;
    points: Array<{ arm: string; mitigation: string; pc1: number; pc2: number }>;
  }> | null;
}

export interface AnalysisOptions {
  B?: number;
  seed?: number;
  /** |Δ| at or above this is strong drift (paper: 0.30). */
  strongThreshold?: number;
  /** Equivalence margin of the compaction TOST (paper: ±0.08). */
  tostMargin?: number;
  /** Restrict the probe surface to one category (paper's primary battery: coding_self); null = all. */
  primaryCategory?: string | null;
}

function attempt<T>(compute: () => T): Maybe<T> {
  try {
    return compute();
  } catch (error) {
    if (isEcholensError(error)) return { error: error.message };
    throw error;
  }
}

const mean = (values: readonly number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

const positionKey = (o: PersonaObservation) => `${o.session}\u0000${o.position}`;
const pairKey = (o: PersonaObservation) => `${o.session}\u0000${o.position}\u0000${o.item}\u0000${o.paraphrase}\u0000${o.sample}`;

/**
 * Gap between two groups of observations (`treated` − `baseline` by default
 * orientation: filler − real), positions weighted equally, position-clustered.
 */
function positionGap(
  baseline: readonly PersonaObservation[],
  comparison: readonly PersonaObservation[],
  judge: string,
  options: Required<Pick<AnalysisOptions, 'B' | 'seed'>>,
): Maybe<GapEstimate> {
  return attempt(() => {
    const base = groupBy(baseline.filter((o) => typeof o.scores[judge] === 'number'), positionKey);
    const comp = groupBy(comparison.filter((o) => typeof o.scores[judge] === 'number'), positionKey);
    const positions = [...base.keys()].filter((k) => comp.has(k)).sort();
    if (positions.length === 0) throw new StatisticsError('no position has scored cells in both arms');
    const input = positions.map((k) => ({
      real: (base.get(k) ?? []).map((o) => o.scores[judge] as number),
      filler: (comp.get(k) ?? []).map((o) => o.scores[judge] as number),
    }));
    const result = gapBootstrap({ positions: input }, { B: options.B, seed: options.seed, allowSinglePosition: true });
    return {
      estimate: result.gap,
      ci: result.ci,
      p: result.p,
      nPositions: result.nPositions,
      real: { estimate: result.real.estimate, ci: result.real.ci },
      filler: { estimate: result.filler.estimate, ci: result.filler.ci },
      nReal: input.reduce((s, p) => s + p.real.length, 0),
      nFiller: input.reduce((s, p) => s + p.filler.length, 0),
    };
  });
}

function isGap(value: Maybe<GapEstimate>): value is GapEstimate {
  return !('error' in value);
}

export function analyzePersona(observations: readonly PersonaObservation[], options: AnalysisOptions = {}): PersonaReport {
  const B = options.B ?? 10_000;
  const seed = options.seed ?? 42;
  const strongThreshold = options.strongThreshold ?? 0.3;
  const tostMargin = options.tostMargin ?? 0.08;
  const primaryCategory = options.primaryCategory === undefined ? null : options.primaryCategory;
  const boot = { B, seed };

  const done = observations.filter((o) => o.status === 'done');
  const judges = [...new Set(observations.flatMap((o) => Object.keys(o.scores)))].sort();
  const targets = [...new Set(observations.map((o) => o.target))].sort();
  const probes = done.filter((o) => o.surface === 'probe' && (primaryCategory === null || o.category === primaryCategory));

  // Counts, dropouts and invalid judgements per arm.
  const byArm = [...groupBy(observations, (o) => `${o.target}\u0000${o.arm}\u0000${o.mitigation}\u0000${o.surface}`).values()].map(
    (group) => {
      const first = group[0] as PersonaObservation;
      const count = (status: PersonaObservation['status']) => group.filter((o) => o.status === status).length;
      return {
        target: first.target,
        arm: first.arm,
        mitigation: first.mitigation,
        surface: first.surface,
        done: count('done'),
        empty: count('empty'),
        failed: count('failed'),
        dropoutRate: count('empty') / group.length,
      };
    },
  );
  const invalidJudgements = judges.flatMap((judge) =>
    [...groupBy(done.filter((o) => o.surface === 'probe' && judge in o.scores), (o) => `${o.arm}\u0000${o.mitigation}`).values()].map(
      (group) => ({
        judge,
        arm: (group[0] as PersonaObservation).arm,
        mitigation: (group[0] as PersonaObservation).mitigation,
        invalid: group.filter((o) => o.scores[judge] === null).length,
        judged: group.length,
      }),
    ),
  );

  // Drift gaps per target × judge.
  const drift: TargetDrift[] = [];
  for (const judge of judges) {
    for (const target of targets) {
      const mine = probes.filter((o) => o.target === target && o.mitigation === 'none');
      const real = mine.filter((o) => o.arm === 'real');
      const filler = mine.filter((o) => o.arm === 'filler');
      if (real.length === 0 || filler.length === 0) continue;
      const gap = positionGap(real, filler, judge, boot);
      const fillerByPair = new Map(filler.filter((o) => typeof o.scores[judge] === 'number').map((o) => [pairKey(o), o]));
      const deltas = real
        .filter((o) => typeof o.scores[judge] === 'number' && fillerByPair.has(pairKey(o)))
        .map((o) => (fillerByPair.get(pairKey(o))?.scores[judge] as number) - (o.scores[judge] as number));
      const flip = attempt(() => {
        const r = signFlipTest(deltas, { B, seed });
        return { mean: r.mean, p: r.p, n: r.n, pHolm: Number.NaN };
      });
      const positions = [...groupBy(real, positionKey).values()]
        .map((group) => group[0] as PersonaObservation)
        .sort((a, b) => a.session.localeCompare(b.session) || a.positionValue - b.positionValue);
      const byPosition = positions.map((p) => ({
        session: p.session,
        position: p.position,
        positionValue: p.positionValue,
        gap: positionGap(
          real.filter((o) => positionKey(o) === positionKey(p)),
          filler.filter((o) => positionKey(o) === positionKey(p)),
          judge,
          boot,
        ),
      }));
      const categories = [...new Set(done.filter((o) => o.surface === 'probe').map((o) => o.category))].sort();
      const allProbes = done.filter((o) => o.surface === 'probe' && o.target === target && o.mitigation === 'none');
      const byCategory = categories.map((category) => ({
        category,
        gap: positionGap(
          allProbes.filter((o) => o.arm === 'real' && o.category === category),
          allProbes.filter((o) => o.arm === 'filler' && o.category === category),
          judge,
          boot,
        ),
      }));
      const sessions = [...new Set(real.map((o) => o.session))].sort();
      const bySession = sessions.map((session) => ({
        session,
        gap: positionGap(
          real.filter((o) => o.session === session),
          filler.filter((o) => o.session === session),
          judge,
          boot,
        ),
      }));
      const referenceArms = [...new Set(mine.map((o) => o.arm))]
        .filter((arm) => arm !== 'real' && arm !== 'filler')
        .sort()
        .map((arm) => ({ arm, gap: positionGap(mine.filter((o) => o.arm === arm), filler, judge, boot) }));
      // Onset: the first position (per session, in counter order) whose CI excludes 0 with |Δ| ≥ threshold.
      const onsetAt = byPosition.find(
        (p) => isGap(p.gap) && Math.abs(p.gap.estimate) >= strongThreshold && (p.gap.ci[0] > 0 || p.gap.ci[1] < 0),
      );
      drift.push({
        target,
        judge,
        gap,
        strongDrift: isGap(gap) && Math.abs(gap.estimate) >= strongThreshold,
        signFlip: flip,
        byPosition,
        byCategory,
        bySession,
        referenceArms,
        onset: onsetAt ? { position: onsetAt.position, positionValue: onsetAt.positionValue } : null,
      });
    }
  }
  // Holm across targets, per judge.
  for (const judge of judges) {
    const rows = drift.filter((d) => d.judge === judge && !('error' in d.signFlip));
    const adjusted = rows.length > 0 ? holm(rows.map((d) => (d.signFlip as { p: number }).p)) : [];
    rows.forEach((row, i) => {
      (row.signFlip as { pHolm: number }).pHolm = adjusted[i] as number;
    });
  }

  // Mitigations on the probe surface (real context).
  const mitigations: MitigationResult[] = [];
  for (const judge of judges) {
    for (const target of targets) {
      const mine = probes.filter((o) => o.target === target && o.arm === 'real');
      const control = mine.filter((o) => o.mitigation === 'none');
      const filler = probes.filter((o) => o.target === target && o.arm === 'filler' && o.mitigation === 'none');
      for (const group of groupBy(
        mine.filter((o) => o.mitigation !== 'none'),
        (o) => `${o.mitigation}\u0000${o.distance}`,
      ).values()) {
        const first = group[0] as PersonaObservation;
        const scored = group.map((o) => o.scores[judge]).filter((s): s is number => typeof s === 'number');
        if (scored.length === 0) continue;
        const placebo = mine.filter((o) => o.mitigation === 'placebo_iso_recipe' && o.distance === first.distance);
        const controlMean = meanScore(control, judge);
        const fillerMean = meanScore(filler, judge);
        const mitigatedMean = mean(scored);
        const recovery =
          controlMean !== null && fillerMean !== null && fillerMean - controlMean > 0.05
            ? (mitigatedMean - controlMean) / (fillerMean - controlMean)
            : null;
        mitigations.push({
          target,
          judge,
          mitigation: first.mitigation,
          distance: first.distance,
          mean: mitigatedMean,
          n: scored.length,
          vsControl: positionGap(control, group, judge, boot),
          vsPlacebo: placebo.length > 0 && first.mitigation !== 'placebo_iso_recipe' ? positionGap(placebo, group, judge, boot) : null,
          recovery,
        });
      }
    }
  }

  // Stressor surface: compliance, length, verbosity ratios.
  const stressorCells = done.filter((o) => o.surface === 'stressor' && o.check);
  const stressors: StressorResult[] = [...groupBy(stressorCells, (o) => `${o.target}\u0000${o.item}\u0000${o.arm}\u0000${o.mitigation}`).values()].map(
    (group) => {
      const first = group[0] as PersonaObservation;
      return {
        target: first.target,
        item: first.item,
        arm: first.arm,
        mitigation: first.mitigation,
        n: group.length,
        complianceRate: group.filter((o) => o.check?.pass).length / group.length,
        meanLength: mean(group.map((o) => o.text.length)),
      };
    },
  );
  const verbosity: VerbosityResult[] = [];
  for (const group of groupBy(stressorCells.filter((o) => o.mitigation === 'none'), (o) => `${o.target}\u0000${o.item}`).values()) {
    const first = group[0] as PersonaObservation;
    const fillerByPair = new Map(group.filter((o) => o.arm === 'filler').map((o) => [pairKey(o), o]));
    const pairs = group
      .filter((o) => o.arm === 'real' && fillerByPair.has(pairKey(o)))
      .map((o) => ({ real: o, filler: fillerByPair.get(pairKey(o)) as PersonaObservation }));
    if (pairs.length === 0) continue;
    const realRate = pairs.filter((p) => p.real.check?.pass).length / pairs.length;
    const fillerRate = pairs.filter((p) => p.filler.check?.pass).length / pairs.length;
    const withLength = pairs.filter((p) => p.real.text.trim().length > 0 && p.filler.text.trim().length > 0);
    const ratios = withLength.map((p) => p.real.text.trim().length / p.filler.text.trim().length);
    const compliant = withLength.filter((p) => p.real.check?.pass && p.filler.check?.pass);
    const sessions = new Set(withLength.map((p) => p.real.session));
    verbosity.push({
      target: first.target,
      item: first.item,
      pairs: pairs.length,
      complianceGapPp: 100 * (fillerRate - realRate),
      medianRatio: ratios.length > 0 ? median(ratios) : null,
      conditionalRatio:
        compliant.length > 0
          ? mean(compliant.map((p) => p.real.text.trim().length)) / mean(compliant.map((p) => p.filler.text.trim().length))
          : null,
      conditionalPairs: compliant.length,
      heterogeneity:
        sessions.size >= 2
          ? attempt(() => {
              const v = varianceDecomposition(
                ratios.map((r) => Math.log(r)),
                withLength.map((p) => p.real.session),
              );
              return { between: v.between, within: v.within, betweenShare: v.betweenShare };
            })
          : null,
    });
  }

  // Contract surface: pass rates and session-paired contrasts.
  const contractCells = done.filter((o) => o.surface === 'contract' && o.check);
  const contracts = [...groupBy(contractCells, (o) => `${o.target}\u0000${o.item}\u0000${o.arm}\u0000${o.mitigation}\u0000${o.distance}`).values()].map(
    (group) => {
      const first = group[0] as PersonaObservation;
      const failures: Record<string, number> = {};
      for (const o of group) if (!o.check?.pass) failures[o.check?.reason ?? 'unknown'] = (failures[o.check?.reason ?? 'unknown'] ?? 0) + 1;
      return {
        target: first.target,
        item: first.item,
        arm: first.arm,
        mitigation: first.mitigation,
        distance: first.distance,
        n: group.length,
        passRate: group.filter((o) => o.check?.pass).length / group.length,
        failures,
      };
    },
  );
  const contractContrasts: ContractContrast[] = [];
  for (const target of targets) {
    const mine = contractCells.filter((o) => o.target === target && o.arm === 'real');
    const arms = [...new Set(mine.map((o) => o.mitigation))].filter((m) => m !== 'none').sort();
    const distances = [...new Set(mine.map((o) => o.distance))].sort();
    const contrasts: Array<[string, string]> = arms.map((m) => [m, 'none']);
    if (arms.includes('a-anchor') && arms.includes('placebo_iso_recipe')) contrasts.push(['a-anchor', 'placebo_iso_recipe']);
    for (const distance of distances) {
      for (const [treated, baseline] of contrasts) {
        const sessionRate = (mitigation: string) => {
          const rates = new Map<string, number>();
          for (const [session, group] of groupBy(
            mine.filter((o) => o.mitigation === mitigation && o.distance === distance),
            (o) => o.session,
          )) {
            rates.set(session, group.filter((o) => o.check?.pass).length / group.length);
          }
          return rates;
        };
        const a = sessionRate(treated);
        const b = sessionRate(baseline);
        const sessions = [...a.keys()].filter((s) => b.has(s)).sort();
        const diffs = sessions.map((s) => (a.get(s) as number) - (b.get(s) as number));
        contractContrasts.push({
          target,
          contrast: `${treated} - ${baseline}`,
          distance,
          sessions: sessions.length,
          difference: attempt(() => {
            const r = bootstrapCI(diffs, (sample) => sample.reduce((s, v) => s + v, 0) / sample.length, { B, seed });
            return { estimate: r.estimate, ci: r.ci };
          }),
          wilcoxon: attempt(() => {
            const w = wilcoxonSignedRank(diffs);
            return { statistic: w.statistic, p: w.p };
          }),
          pHolm: null,
        });
      }
    }
  }
  const testable = contractContrasts.filter((c) => !('error' in c.wilcoxon));
  const adjustedContracts = testable.length > 0 ? holm(testable.map((c) => (c.wilcoxon as { p: number }).p)) : [];
  testable.forEach((c, i) => {
    c.pHolm = adjustedContracts[i] as number;
  });

  // Compaction: post − pre gap change per event, TOST for equivalence.
  const compaction: CompactionResult[] = [];
  for (const judge of judges) {
    for (const target of targets) {
      const mine = probes.filter((o) => o.target === target && o.mitigation === 'none' && o.compaction);
      const events = [...groupBy(mine, (o) => `${o.session}\u0000${o.compaction?.index}`).values()].flatMap((group) => {
        const first = group[0] as PersonaObservation;
        const side = (s: 'pre' | 'post') => {
          const real = group.filter((o) => o.compaction?.side === s && o.arm === 'real');
          const filler = group.filter((o) => o.compaction?.side === s && o.arm === 'filler');
          const r = meanScore(real, judge);
          const f = meanScore(filler, judge);
          return r === null || f === null ? null : f - r;
        };
        const pre = side('pre');
        const post = side('post');
        if (pre === null || post === null) return [];
        return [{ session: first.session, index: first.compaction?.index as number, pre, post, change: post - pre }];
      });
      if (events.length === 0) continue;
      compaction.push({
        target,
        judge,
        events,
        meanChange: mean(events.map((e) => e.change)),
        tost:
          events.length >= 2
            ? attempt(() => {
                const t = tost(
                  events.map((e) => e.change),
                  { margin: tostMargin },
                );
                return { mean: t.mean, ci: t.ci, p: t.p, equivalent: t.equivalent, margin: t.margin };
              })
            : { error: 'TOST needs at least two compaction events' },
      });
    }
  }

  // Cross-judge agreement.
  const judgeAgreement: JudgeAgreementResult[] = [];
  for (let i = 0; i < judges.length; i++) {
    for (let j = i + 1; j < judges.length; j++) {
      const judgeA = judges[i] as string;
      const judgeB = judges[j] as string;
      const both = probes.filter((o) => typeof o.scores[judgeA] === 'number' && typeof o.scores[judgeB] === 'number');
      const gapsA = drift.filter((d) => d.judge === judgeA);
      const gapsB = new Map(drift.filter((d) => d.judge === judgeB).map((d) => [d.target, d]));
      const signRows = gapsA
        .filter((d) => isGap(d.gap) && gapsB.has(d.target) && isGap((gapsB.get(d.target) as TargetDrift).gap))
        .map((d) => ({
          target: d.target,
          gapA: (d.gap as GapEstimate).estimate,
          gapB: ((gapsB.get(d.target) as TargetDrift).gap as GapEstimate).estimate,
        }));
      judgeAgreement.push({
        judgeA,
        judgeB,
        pairs: attempt(() =>
          agreement(
            both.map((o) => o.scores[judgeA] as number),
            both.map((o) => o.scores[judgeB] as number),
            { categories: [0, 1, 2, 3] },
          ),
        ),
        signs: attempt(() => {
          const s = signAgreement(signRows.map((r) => [r.gapA, r.gapB] as const));
          return {
            agree: s.agree,
            flip: s.flip,
            nullVsSmall: s.nullVsSmall,
            labels: signRows.map((r, k) => ({ ...r, label: s.labels[k] as string })),
          };
        }),
      });
    }
  }

  // Behavioural fingerprint of probe responses, PCA by arm.
  const printed = probes
    .map((o) => ({ o, f: fingerprint(o.text) }))
    .filter((x): x is { o: PersonaObservation; f: Fingerprint } => x.f !== null);
  const fingerprintResult =
    printed.length >= 3
      ? attempt(() => {
          const pca = fingerprintPca(
            printed.map((x) => x.f),
            printed.map((x) => x.o.arm === 'real'),
          );
          const points = printed.map((x, k) => ({
            arm: x.o.arm,
            mitigation: x.o.mitigation,
            pc1: (pca.points[k] as [number, number])[0],
            pc2: (pca.points[k] as [number, number])[1],
          }));
          const centroids = [...groupBy(points, (p) => `${p.arm}\u0000${p.mitigation}`).values()].map((group) => ({
            arm: (group[0] as (typeof points)[number]).arm,
            mitigation: (group[0] as (typeof points)[number]).mitigation,
            pc1: mean(group.map((p) => p.pc1)),
            pc2: mean(group.map((p) => p.pc2)),
            n: group.length,
          }));
          return {
            features: ['hedgeDensity', 'experientialDensity', 'committedPreference', 'emDashCount', 'paragraphBreaks', 'logLength'],
            components: pca.components,
            explainedVarianceRatio: pca.explainedVarianceRatio,
            centroids,
            points,
          };
        })
      : null;

  return {
    schema: 'echolens.persona-report/1',
    options: { B, seed, strongThreshold, tostMargin, primaryCategory },
    counts: { observations: observations.length, byArm, invalidJudgements },
    drift,
    mitigations,
    stressors,
    verbosity,
    contracts,
    contractContrasts,
    compaction,
    judgeAgreement,
    fingerprint: fingerprintResult,
  };
}

function meanScore(group: readonly PersonaObservation[], judge: string): number | null {
  const scores = group.map((o) => o.scores[judge]).filter((s): s is number => typeof s === 'number');
  return scores.length > 0 ? mean(scores) : null;
}
