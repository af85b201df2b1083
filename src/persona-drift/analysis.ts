import type { PersonaUnits } from './units.js';
import type { Maybe } from '../core/maybe.js';
import { agreement, type AgreementResult, signAgreement } from '../stats/agreement.js';
import { varianceDecomposition } from '../stats/variance-decomposition.js';
import {
  analyzeCompaction,
  analyzeContractContrasts,
  analyzeDesignContrasts,
  analyzeDrift,
  analyzeMitigations,
  analyzeScratch,
  analyzeStressorContrasts,
  type DesignContrast,
  type ScratchResult,
  type StressorContrast,
} from './analysis-effects.js';
import { type AnalysisDesign, resolveDesign } from './analysis-design.js';
import { attempt, promptOf } from './contrasts.js';
import { type Fingerprint, type FingerprintPatterns, fingerprint, fingerprintPca } from './fingerprint.js';
import type { InferenceLevel, UnitInference } from './inference.js';
import { analyzeReference, type ReferenceBlock } from './reference-analysis.js';
import { type AnalysisExtras, analyzeExtras, type ExtraOptions, headlineObservations } from './analysis-extras.js';

export type { AnalysisDesign } from './analysis-design.js';
export type { DesignContrast, ScratchResult, StressorContrast } from './analysis-effects.js';

/**
 * ContextEcho analysis (§2.4, §3, appendices), pure: observations in, numbers out. Every
 * estimate lives in one named cell of the design (target × judge × system prompt × arm ×
 * mitigation × distance × surface × category); inference is at the sampled unit (positions
 * in one session, sessions when there are several). Every number sits under a stable key of
 * `PersonaReport` (docs/persona-report-schema.md); statistical choices are in
 * docs/statistics.md. A statistic the design cannot support is `{ error }` with what to change.
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
  /** The real continuation replayed after the position (distances > 0): timeline messages and why it was clipped. */
  continuation?: { messages: number; clipped: string | null };
  /** System prompt name the cell was sent with (absent in old runs: one prompt, `default`). */
  systemPrompt?: string;
  surface: Surface;
  /** Anchor-ablation cells: the grid levels (the `mitigation` label names the cell). */
  anchor?: { arm: string; size: number | null; tokens: number; placement: 'before-probe' | 'session-start' | 'both'; turns: number };
  /** Probe surface: whether the benchmark framing preceded the probe (absent = framed, the default). */
  framed?: boolean;
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

/**
 * A contrast between two cells (comparison − baseline) with clustered inference. `real` is the
 * baseline cell's mean and `filler` the comparison cell's mean (names kept from the drift gap).
 */
export interface GapEstimate extends UnitInference {
  /** Positions (session, position pairs) with data in both cells. */
  nPositions: number;
  real: Estimate;
  filler: Estimate;
  nReal: number;
  nFiller: number;
  /** Holm-adjusted p within the row's family, where the report adjusts. */
  pHolm?: number;
}

export type VerdictKind = 'drift' | 'no detectable drift' | 'underpowered for this design' | 'not computable';

export interface Verdict {
  target: string;
  judge: string;
  kind: VerdictKind;
  /** The headline cell the verdict rests on. */
  cell: string;
  /** One sentence with the numbers. */
  text: string;
  /** Minimum detectable |Δ| at 80% power for this design (normal approximation of the t interval); null when the test cannot reject. */
  mde: number | null;
}

export interface TargetDrift {
  target: string;
  judge: string;
  /** Name of the headline cell: primary prompt, primary distance, no mitigation, primary category. */
  cell: string;
  /** Position-averaged gap Δ = filler − real, clustered at the sampled unit. */
  gap: Maybe<GapEstimate>;
  strongDrift: boolean;
  /** Sign-flip test of the unit-level deltas (positions, or sessions when there are several); Holm across targets per judge. */
  signFlip: Maybe<{ mean: number; p: number; n: number; pHolm: number; level: InferenceLevel; method: 'exact' | 'monte-carlo' }>;
  /** Per position: probes are the units (trajectory and onset). */
  byPosition: Array<{ session: string; position: string; positionValue: number; gap: Maybe<GapEstimate> }>;
  /** Same cell, other probe categories. */
  byCategory: Array<{ category: string; gap: Maybe<GapEstimate> }>;
  /** Per session: its positions are the units. */
  bySession: Array<{ session: string; gap: Maybe<GapEstimate> }>;
  /** Other context arms against filler: gap = filler − arm (scratch is in `scratch`). */
  referenceArms: Array<{ arm: string; gap: Maybe<GapEstimate> }>;
  /** First position (counter order) whose probe-level test survives Holm across positions; only when the headline is significant. */
  onset: { session: string; position: string; positionValue: number; pHolm: number } | null;
  verdict: Verdict;
}

export interface MitigationResult {
  target: string;
  judge: string;
  mitigation: string;
  distance: string;
  systemPrompt: string;
  cell: string;
  mean: number;
  n: number;
  /** mitigation − control (real context, no mitigation, same prompt and distance). */
  vsControl: Maybe<GapEstimate>;
  /** mitigation − placebo_iso_recipe at the same prompt and distance, when that arm exists. */
  vsPlacebo: Maybe<GapEstimate> | null;
  /** (mitigated − real)/(filler − real) at the same prompt and distance, only when filler − real > 0.05. */
  recovery: number | null;
}

export interface StressorResult {
  target: string;
  item: string;
  arm: string;
  mitigation: string;
  distance: string;
  systemPrompt: string;
  n: number;
  complianceRate: number;
  meanLength: number;
}

export interface VerbosityResult {
  target: string;
  item: string;
  cell: string;
  pairs: number;
  /** filler compliance − real compliance, percentage points. */
  complianceGapPp: number;
  medianRatio: number | null;
  /** Mean real length / mean filler length over pairs where both arms comply. */
  conditionalRatio: number | null;
  conditionalPairs: number;
  /** Between-session share of the log verbosity ratio (random-effects REML). */
  heterogeneity: Maybe<{ between: number; within: number; betweenShare: number }> | null;
  /** The same ratios per session (paper Table 1 and its conditional-on-compliance paragraph). */
  bySession: Array<{ session: string; pairs: number; medianRatio: number | null; conditionalRatio: number | null; conditionalPairs: number }>;
}

export interface ContractContrast {
  target: string;
  item: string;
  contrast: string;
  distance: string;
  systemPrompt: string;
  cell: string;
  sessions: number;
  /** Pass-rate difference per position, clustered like every other contrast. */
  difference: Maybe<GapEstimate>;
  signFlip: Maybe<{ p: number; level: InferenceLevel; units: number }>;
  pHolm: number | null;
}

export interface CompactionResult {
  target: string;
  judge: string;
  cell: string;
  events: Array<{ session: string; index: number; pre: number; post: number; change: number }>;
  meanChange: number | null;
  /** TOST over units: compaction events in one session, session means of events with several. */
  tost: Maybe<{
    mean: number;
    ci: [number, number];
    /** 95% t interval of the mean change (the TOST's own `ci` is the 90% one). */
    ci95: [number, number];
    p: number;
    equivalent: boolean;
    margin: number;
    level: 'event' | 'session';
    units: number;
  }> | null;
}

export interface JudgeAgreementResult {
  judgeA: string;
  judgeB: string;
  pairs: Maybe<AgreementResult>;
  signs: Maybe<{ agree: number; flip: number; nullVsSmall: number; labels: Array<{ target: string; gapA: number; gapB: number; label: string }> }>;
}

export interface PersonaReport extends AnalysisExtras {
  schema: 'echolens.persona-report/1';
  options: Required<Pick<AnalysisOptions, 'B' | 'seed' | 'strongThreshold' | 'tostMargin'>> & { primaryCategory: string | null };
  design: AnalysisDesign;
  /** One verdict per target × judge, in the headline cell. */
  verdicts: Verdict[];
  counts: {
    observations: number;
    byArm: Array<{ target: string; arm: string; mitigation: string; surface: Surface; done: number; empty: number; failed: number; dropoutRate: number }>;
    invalidJudgements: Array<{ judge: string; arm: string; mitigation: string; invalid: number; judged: number }>;
  };
  drift: TargetDrift[];
  /** Drift gaps in the other cells, distance contrasts and system-prompt contrasts. */
  contrasts: DesignContrast[];
  mitigations: MitigationResult[];
  stressors: StressorResult[];
  stressorContrasts: StressorContrast[];
  verbosity: VerbosityResult[];
  contracts: Array<{ target: string; item: string; arm: string; mitigation: string; distance: string; systemPrompt: string; n: number; passRate: number; failures: Record<string, number> }>;
  contractContrasts: ContractContrast[];
  compaction: CompactionResult[];
  /** The scratch arm (no context), analysed once per target: its answers do not depend on the session or position. */
  scratch: ScratchResult[];
  judgeAgreement: JudgeAgreementResult[];
  /** Forks merged into one unit and requests drawn per unit, from the run manifest (absent in runs planned before). */
  units?: PersonaUnits;
  fingerprint: Maybe<{
    features: readonly string[];
    components: [number[], number[]];
    explainedVarianceRatio: [number, number];
    centroids: Array<{ arm: string; mitigation: string; pc1: number; pc2: number; n: number }>;
    /** One per response; `target` tells targets apart on the chart. */
    points: Array<{ target: string; arm: string; mitigation: string; pc1: number; pc2: number }>;
  }> | null;
  /** The authors' own estimators (runs with `procedure: reference`); reported beside, never the verdict. */
  reference?: ReferenceBlock;
}

export interface AnalysisOptions extends ExtraOptions {
  /** Monte Carlo patterns of sign-flip tests that are not exact (at least 20,000 are used). */
  B?: number;
  seed?: number;
  /** |Δ| at or above this is strong drift (paper: 0.30). */
  strongThreshold?: number;
  /** Equivalence margin of the compaction TOST (paper: ±0.08). */
  tostMargin?: number;
  /** The headline probe category (paper's primary battery: coding_self); null = all categories pooled (named `all`). */
  primaryCategory?: string | null;
  /** The fingerprint's word patterns (default: echolens's; the authors' when a run used their materials). */
  fingerprintPatterns?: FingerprintPatterns;
  /** The headline system prompt (default: the first in `systemPrompts`, else the first name in sort order). */
  primarySystemPrompt?: string;
  /** The headline distance (default: the first in `distances`, else the one the filler arm has). */
  primaryDistance?: string;
  /** Configured system prompts, in config order (fixes the primary one). */
  systemPrompts?: readonly string[];
  /** Configured distance names, in config order. */
  distances?: readonly string[];
  alpha?: number;
  /** `reference` adds the authors' estimators as the report's `reference` block. */
  procedure?: 'echolens' | 'reference';
}

export type ResolvedOptions = Required<Pick<AnalysisOptions, 'B' | 'seed' | 'strongThreshold' | 'tostMargin' | 'alpha'>> & {
  primaryCategory: string | null;
};

function resolveOptions(options: AnalysisOptions): ResolvedOptions {
  return {
    B: options.B ?? 20_000,
    seed: options.seed ?? 42,
    strongThreshold: options.strongThreshold ?? 0.3,
    tostMargin: options.tostMargin ?? 0.08,
    alpha: options.alpha ?? 0.05,
    primaryCategory: options.primaryCategory === undefined ? null : options.primaryCategory,
  };
}

/** The inferential part of the report (everything a calibration replicate needs). */
export interface PersonaInference {
  design: AnalysisDesign;
  verdicts: Verdict[];
  drift: TargetDrift[];
  contrasts: DesignContrast[];
  mitigations: MitigationResult[];
  stressorContrasts: StressorContrast[];
  contractContrasts: ContractContrast[];
  compaction: CompactionResult[];
  scratch: ScratchResult[];
}

/** Design resolution and every test of the report, without the descriptive tables. */
export function analyzePersonaInference(observations: readonly PersonaObservation[], options: AnalysisOptions = {}): PersonaInference {
  const resolved = resolveOptions(options);
  const design = resolveDesign(observations, options, resolved.primaryCategory);
  const { drift, verdicts } = analyzeDrift(observations, design, resolved);
  return {
    design,
    verdicts,
    drift,
    contrasts: analyzeDesignContrasts(observations, design, resolved),
    mitigations: analyzeMitigations(observations, design, resolved),
    stressorContrasts: analyzeStressorContrasts(observations, design, resolved),
    contractContrasts: analyzeContractContrasts(observations, design, resolved),
    compaction: analyzeCompaction(observations, design, resolved),
    scratch: analyzeScratch(observations, design, resolved),
  };
}

const mean = (values: readonly number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

const pairKey = (o: PersonaObservation) => `${o.session}\u0000${o.position}\u0000${o.item}\u0000${o.paraphrase}\u0000${o.sample}`;

function countRows(observations: readonly PersonaObservation[], judges: readonly string[]): PersonaReport['counts'] {
  const done = observations.filter((o) => o.status === 'done');
  const byArm = [...groupBy(observations, (o) => `${o.target}\u0000${o.arm}\u0000${o.mitigation}\u0000${o.surface}`).values()].map((group) => {
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
  });
  const invalidJudgements = judges.flatMap((judge) =>
    [...groupBy(done.filter((o) => o.surface === 'probe' && judge in o.scores), (o) => `${o.arm}\u0000${o.mitigation}`).values()].map((group) => ({
      judge,
      arm: (group[0] as PersonaObservation).arm,
      mitigation: (group[0] as PersonaObservation).mitigation,
      invalid: group.filter((o) => o.scores[judge] === null).length,
      judged: group.length,
    })),
  );
  return { observations: observations.length, byArm, invalidJudgements };
}

/**
 * The checked responses of a stressor or contract surface grouped by cell (target × item × arm ×
 * mitigation × distance × prompt), each group with its cell's levels.
 */
function checkedCells(done: readonly PersonaObservation[], surface: 'stressor' | 'contract') {
  const cells = done.filter((o) => o.surface === surface && o.check);
  return [...groupBy(cells, (o) => `${o.target}\u0000${o.item}\u0000${o.arm}\u0000${o.mitigation}\u0000${o.distance}\u0000${promptOf(o)}`).values()].map((group) => {
    const first = group[0] as PersonaObservation;
    const levels = {
      target: first.target,
      item: first.item,
      arm: first.arm,
      mitigation: first.mitigation,
      distance: first.distance,
      systemPrompt: promptOf(first),
    };
    return { levels, group };
  });
}

function stressorRows(done: readonly PersonaObservation[]): StressorResult[] {
  return checkedCells(done, 'stressor').map(({ levels, group }) => ({
    ...levels,
    n: group.length,
    complianceRate: group.filter((o) => o.check?.pass).length / group.length,
    meanLength: mean(group.map((o) => o.text.length)),
  }));
}

/** Verbosity in the headline prompt and distance, no mitigation (descriptive; the tested contrast is in stressorContrasts). */
function verbosityRows(done: readonly PersonaObservation[], design: AnalysisDesign): VerbosityResult[] {
  const prompt = stressorHeadlinePrompt(done, design);
  const cells = done.filter(
    (o) => o.surface === 'stressor' && o.check && o.mitigation === 'none' && o.distance === design.primaryDistance && promptOf(o) === prompt,
  );
  const out: VerbosityResult[] = [];
  for (const group of groupBy(cells, (o) => `${o.target}\u0000${o.item}`).values()) {
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
    const lengthRatio = (list: typeof pairs) => {
      const both = list.filter((p) => p.real.check?.pass && p.filler.check?.pass);
      return {
        medianRatio: list.length > 0 ? median(list.map((p) => p.real.text.trim().length / p.filler.text.trim().length)) : null,
        conditionalRatio: both.length > 0 ? mean(both.map((p) => p.real.text.trim().length)) / mean(both.map((p) => p.filler.text.trim().length)) : null,
        conditionalPairs: both.length,
      };
    };
    const bySession = [...sessions].sort().map((session) => {
      const mine = withLength.filter((p) => p.real.session === session);
      return { session, pairs: mine.length, ...lengthRatio(mine) };
    });
    out.push({
      target: first.target,
      item: first.item,
      cell: `target=${first.target} prompt=${prompt} mitigation=none distance=${design.primaryDistance} surface=stressor category=${first.item}`,
      pairs: pairs.length,
      complianceGapPp: 100 * (fillerRate - realRate),
      medianRatio: ratios.length > 0 ? median(ratios) : null,
      conditionalRatio:
        compliant.length > 0 ? mean(compliant.map((p) => p.real.text.trim().length)) / mean(compliant.map((p) => p.filler.text.trim().length)) : null,
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
      bySession,
    });
  }
  return out;
}

/**
 * The prompt of the verbosity table: the headline prompt when stressor cells were sent with it,
 * else the first prompt (config order) that has stressor cells. A run whose stressors use their own
 * system prompt (the reference procedure's format-strict prompt) still gets its table.
 */
function stressorHeadlinePrompt(done: readonly PersonaObservation[], design: AnalysisDesign): string {
  const used = new Set(done.filter((o) => o.surface === 'stressor').map(promptOf));
  if (used.has(design.primarySystemPrompt)) return design.primarySystemPrompt;
  return design.systemPrompts.find((p) => used.has(p)) ?? design.primarySystemPrompt;
}

function contractRows(done: readonly PersonaObservation[]): PersonaReport['contracts'] {
  return checkedCells(done, 'contract').map(({ levels, group }) => {
    const failures: Record<string, number> = {};
    for (const o of group) if (!o.check?.pass) failures[o.check?.reason ?? 'unknown'] = (failures[o.check?.reason ?? 'unknown'] ?? 0) + 1;
    return {
      ...levels,
      n: group.length,
      passRate: group.filter((o) => o.check?.pass).length / group.length,
      failures,
    };
  });
}

function judgeAgreementRows(probes: readonly PersonaObservation[], judges: readonly string[], drift: readonly TargetDrift[]): JudgeAgreementResult[] {
  const out: JudgeAgreementResult[] = [];
  const isGap = (g: Maybe<GapEstimate>): g is GapEstimate => !('error' in g);
  for (let i = 0; i < judges.length; i++) {
    for (let j = i + 1; j < judges.length; j++) {
      const judgeA = judges[i] as string;
      const judgeB = judges[j] as string;
      const both = probes.filter((o) => typeof o.scores[judgeA] === 'number' && typeof o.scores[judgeB] === 'number');
      const gapsB = new Map(drift.filter((d) => d.judge === judgeB).map((d) => [d.target, d]));
      const signRows = drift
        .filter((d) => d.judge === judgeA && isGap(d.gap) && gapsB.has(d.target) && isGap((gapsB.get(d.target) as TargetDrift).gap))
        .map((d) => ({
          target: d.target,
          gapA: (d.gap as GapEstimate).estimate,
          gapB: ((gapsB.get(d.target) as TargetDrift).gap as GapEstimate).estimate,
        }));
      out.push({
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
  return out;
}

function fingerprintRows(probes: readonly PersonaObservation[], patterns?: FingerprintPatterns): PersonaReport['fingerprint'] {
  const printed = probes.map((o) => ({ o, f: fingerprint(o.text, patterns) })).filter((x): x is { o: PersonaObservation; f: Fingerprint } => x.f !== null);
  if (printed.length < 3) return null;
  return attempt(() => {
    const pca = fingerprintPca(
      printed.map((x) => x.f),
      printed.map((x) => x.o.arm === 'real'),
    );
    const points = printed.map((x, k) => ({
      target: x.o.target,
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
  });
}

export function analyzePersona(all: readonly PersonaObservation[], options: AnalysisOptions = {}): PersonaReport {
  const resolved = resolveOptions(options);
  // A design factor the cells do not name (probe framing) keeps the headline to its first level.
  const observations = headlineObservations(all, options);
  const inference = analyzePersonaInference(observations, options);
  const { design } = inference;
  const done = observations.filter((o) => o.status === 'done');
  // Descriptive views keep to the headline prompt and distance (no silent pooling of those factors).
  const headlineProbes = done.filter(
    (o) =>
      o.surface === 'probe' &&
      promptOf(o) === design.primarySystemPrompt &&
      o.distance === design.primaryDistance &&
      (design.primaryCategory === 'all' || o.category === design.primaryCategory),
  );
  return {
    schema: 'echolens.persona-report/1',
    options: {
      B: resolved.B,
      seed: resolved.seed,
      strongThreshold: resolved.strongThreshold,
      tostMargin: resolved.tostMargin,
      primaryCategory: resolved.primaryCategory,
    },
    design,
    verdicts: inference.verdicts,
    counts: countRows(all, design.judges),
    drift: inference.drift,
    contrasts: inference.contrasts,
    mitigations: inference.mitigations,
    stressors: stressorRows(done),
    stressorContrasts: inference.stressorContrasts,
    verbosity: verbosityRows(done, design),
    contracts: contractRows(done),
    contractContrasts: inference.contractContrasts,
    compaction: inference.compaction,
    scratch: inference.scratch,
    judgeAgreement: judgeAgreementRows(headlineProbes, design.judges, inference.drift),
    fingerprint: fingerprintRows(headlineProbes, options.fingerprintPatterns),
    ...analyzeExtras(all, observations, inference, resolved, options),
    // The paper's B = 10,000 for every reference resampling, whatever B the calibrated tests use.
    ...(options.procedure === 'reference' ? { reference: analyzeReference(observations, design, { B: 10_000, seed: resolved.seed }) } : {}),
  };
}
