import { attempt as attemptOr, isRefusal, type Maybe } from '../core/maybe.js';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { type DtwOptions, dtw } from '../metrics/dtw.js';
import { type BootstrapClaim, bhClaims, invertBootstrapTest } from '../stats/bootstrap-claims.js';
import { authorsDrift } from '../metrics/authors.js';
import { sriDrift } from '../metrics/sri.js';
import {
  benjaminiHochberg,
  bootstrapPValue,
  minimumDetectableEffect,
  normalTwoSidedP,
  type ClusteredValue,
  cohensD,
  compactLetterDisplay,
  dRel,
  type MixedModelMethod,
  type MixedModelResult,
  type ResamplingOptions,
  mixedModel,
  pearson,
  rng,
  spearman,
  welchTTest,
} from '../stats/index.js';
import { groupByCluster } from '../stats/cluster-bootstrap.js';
import { UNMAPPED } from './ontology.js';
import { NO_PERTURBATION, PERTURBATION_TIERS, type PerturbationTier } from './perturbations.js';
import type { CellLabels } from '../store/types.js';
import type { GenerationRole } from './plan.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * DriftLens analysis (§2.4 scoring, §2.5 statistics, §3 validity, §4 per-category drift), pure:
 * labelled samples in, every number of the paper out, under the stable keys of `MemoryReport`
 * (docs/memory-report-schema.md). A statistic the data cannot support is `{ error }` with the
 * reason, never a silent number.
 */

export const MEMORY_REPORT_SCHEMA = 'echolens.memory-report/1';

export type MemoryMetric = 'dtw' | 'sri';
export const MEMORY_METRICS: readonly MemoryMetric[] = ['dtw', 'sri'];

// ---------------------------------------------------------------------------------------------
// Scoring (docs/decisions.md#d8)

/** Outcome of one generation cell after labeling. */
export type LabelledSampleStatus = 'labelled' | 'empty' | 'failed' | 'invalid' | 'refused';

/** Which generation a sample or an observation comes from: target, question, condition, sample. */
export interface SampleKey {
  target: string;
  question: string;
  domain: string;
  condition: string;
  tier: PerturbationTier;
  stimulus: string;
  sample: number;
}

const SAMPLE_KEYS = ['target', 'question', 'domain', 'condition', 'tier', 'stimulus', 'sample'] as const satisfies ReadonlyArray<keyof SampleKey>;

/** One generation sample with its labelled symbol sequence (or why it has none). */
export interface LabelledSample extends SampleKey {
  /** From the generation plan: 'reference' = no-memory sample 0, the baseline trajectory. */
  role: GenerationRole;
  /** `empty` = dropout after retries; `failed` = never answered; `invalid` = labels unusable after re-asks; `refused` = the model declined (refusals.ts). */
  status: LabelledSampleStatus;
  /** `Category/Subcategory` symbols (or `unmapped`), one per step; required when `labelled`. */
  symbols: readonly string[] | null;
}

/**
 * Status of an observation: `scored` enters the statistics; the others are excluded and counted.
 * The sample's own outcome (`empty`, `failed`, `invalid`) takes precedence; `no_reference` = a
 * validly labelled sample whose (target, question) has no usable reference trajectory.
 */
export type ObservationStatus = 'scored' | 'empty' | 'failed' | 'invalid' | 'refused' | 'no_reference';

/** One perturbed, noise or further no-memory sample, scored against the baseline trajectory. */
export interface MemoryObservation extends SampleKey {
  status: ObservationStatus;
  /** The reference (no-memory sample 0) symbols; null when there is none. */
  baselineSymbols: readonly string[] | null;
  symbols: readonly string[] | null;
  /** σ_DTW (eq. 2, discrete cost unless configured), averaged over `baselines` comparisons. */
  dtw: number | null;
  /** SRI drift (eq. 16, α = 0.5 unless configured), averaged over `baselines` comparisons. */
  sri: number | null;
  /** Number of baseline trajectories compared with (1 under the reference policy). */
  baselines: number;
}

export type PairingPolicy = 'reference' | 'all-pairs';

export interface ScoreTrajectoriesOptions {
  /**
   * `reference` (default, docs/decisions.md#d8): every sample against no-memory sample 0.
   * `all-pairs`: against every labelled no-memory sample (reference and further no-memory
   * samples) of the same (target, question) other than itself, averaged.
   */
  pairing?: PairingPolicy;
  /** SRI α (eq. 5), default 0.5. */
  alpha?: number;
  /** DTW local cost (default the paper's discrete 0/1 cost). */
  dtwCost?: DtwOptions['cost'];
  /**
   * `exclude` (default): a sample without usable labels is excluded and counted. `authors` (the
   * reference procedure): as the DriftLens authors' pipeline, an invalid labeler output is an
   * empty sequence that is scored — DTW distance 1 (their dtw_score 0 for an empty side) and the
   * authors' SRI drift (metrics/authors.ts: their Jensen–Shannon, ≈ 0.8536 against an empty side),
   * and every SRI drift uses their definition.
   */
  emptySequences?: 'exclude' | 'authors';
}

/** The counts of an ExclusionCount, in report order; `refused` = answers that declined the question (excluded from drift, compared with the floor). */
const EXCLUSION_COUNTS = ['total', 'scored', 'empty', 'failed', 'invalid', 'refused', 'noReference'] as const;

export interface ExclusionCount extends Record<(typeof EXCLUSION_COUNTS)[number], number> {
  target: string;
  condition: string;
  tier: PerturbationTier;
}

export interface ScoredTrajectories {
  pairing: PairingPolicy;
  alpha: number;
  /** Every non-reference sample, scored or with the status that excluded it. */
  observations: MemoryObservation[];
  /** (target, question) pairs whose reference is missing or unusable, with the reason. */
  missingReferences: Array<{ target: string; question: string; reason: string }>;
  /** Per (target, condition) counts of the observations above. */
  excluded: ExclusionCount[];
}

const ROLES: readonly GenerationRole[] = ['reference', 'no_perturbation', 'perturbed'];

/**
 * A labelled sample from the labels of its generation cell (src/memory-drift/plan.ts:
 * target, question_id, domain, condition, tier, stimulus_id, sample, role) and its outcome.
 * `where` names the cell in error messages.
 */
export function sampleFromCellLabels(
  labels: CellLabels,
  outcome: { status: LabelledSampleStatus; symbols: readonly string[] | null },
  where = 'labels',
): LabelledSample {
  const { target, question_id: question, condition, tier, stimulus_id: stimulus, sample, role } = labels;
  const domain = typeof labels.domain === 'string' ? labels.domain : '';
  const built = { target, question, domain, condition, tier, stimulus, sample, role, ...outcome } as LabelledSample;
  checkSample(built, where, CELL_LABEL_NAMES);
  return built;
}
const SAMPLE_STATUSES: readonly LabelledSampleStatus[] = ['labelled', 'empty', 'failed', 'invalid', 'refused'];

/** `value` when it is one of `allowed`, else an error naming the argument, the choices and the value. */
function requireOneOf<T>(allowed: readonly T[], value: unknown, argument: string): T {
  if (!allowed.includes(value as T)) throw new InvalidArgumentError(argument, `must be one of ${allowed.join(', ')}, got ${String(value)}`);
  return value as T;
}

function requireText(value: unknown, argument: string): string {
  if (typeof value !== 'string' || value === '') throw new InvalidArgumentError(argument, `must be a non-empty string, got ${String(value)}`);
  return value;
}

function requireIndex(value: unknown, argument: string): number {
  if (!Number.isInteger(value) || (value as number) < 0) throw new InvalidArgumentError(argument, `must be an integer ≥ 0, got ${String(value)}`);
  return value as number;
}

/** The cell labels (plan.ts) that hold a sample's question and stimulus. */
const CELL_LABEL_NAMES: Partial<Record<keyof LabelledSample, string>> = { question: 'question_id', stimulus: 'stimulus_id' };

/** Throws on a malformed sample, naming `${at}.<field>` (under its cell label name when `names` has one). */
function checkSample(sample: LabelledSample, at: string, names?: typeof CELL_LABEL_NAMES): void {
  const field = (key: keyof LabelledSample) => `${at}.${names?.[key] ?? key}`;
  if (sample === null || typeof sample !== 'object') throw new InvalidArgumentError(at, 'expected a labelled sample');
  for (const key of ['target', 'question', 'condition', 'stimulus'] as const) requireText(sample[key], field(key));
  if (typeof sample.domain !== 'string') throw new InvalidArgumentError(field('domain'), 'must be a string');
  requireOneOf(PERTURBATION_TIERS, sample.tier, field('tier'));
  requireIndex(sample.sample, field('sample'));
  requireOneOf(ROLES, sample.role, field('role'));
  // Only scoring needs the plan's pairing of roles and tiers; reading a cell's labels does not.
  if (names === undefined && sample.role !== 'perturbed' && sample.tier !== 'none') {
    throw new InvalidArgumentError(field('role'), `'${sample.role}' is a no-memory role but the tier is '${sample.tier}'`);
  }
  requireOneOf(SAMPLE_STATUSES, sample.status, field('status'));
  if (sample.status === 'labelled') {
    if (!Array.isArray(sample.symbols)) throw new InvalidArgumentError(field('symbols'), 'a labelled sample needs its symbols');
    sample.symbols.forEach((symbol, j) => {
      if (typeof symbol !== 'string' || symbol === '') {
        throw new InvalidArgumentError(`${at}.symbols[${j}]`, 'must be a non-empty string');
      }
    });
  }
}

/** A labelled sample with no symbols has nothing to align: it counts as invalid. */
const usableLabels = (sample: LabelledSample): boolean => sample.status === 'labelled' && sample.symbols !== null && sample.symbols.length > 0;

/**
 * Scores every labelled sample against its (target, question) baseline trajectory (docs/decisions.md#d8):
 * σ_DTW and SRI drift. Samples whose reference is missing or unusable, and samples that are
 * empty, failed or without usable labels, are kept as excluded observations and counted per
 * condition.
 */
export function scoreTrajectories(input: readonly LabelledSample[], options: ScoreTrajectoriesOptions = {}): ScoredTrajectories {
  if (!Array.isArray(input)) throw new InvalidArgumentError('samples', 'expected an array of labelled samples');
  const pairing = requireOneOf<PairingPolicy>(['reference', 'all-pairs'], options.pairing ?? 'reference', 'pairing');
  const alpha = options.alpha ?? 0.5;
  if (typeof alpha !== 'number' || !(alpha >= 0 && alpha <= 1)) {
    throw new InvalidArgumentError('alpha', `must lie in [0, 1], got ${String(alpha)}`);
  }
  const dtwOptions = { cost: options.dtwCost ?? 'discrete', path: false } as const;
  for (const [i, sample] of input.entries()) checkSample(sample, `samples[${i}]`);
  const authors = options.emptySequences === 'authors';
  // The authors' pipeline: an unusable labeler output is an empty label sequence, scored like any other.
  const samples = authors
    ? input.map((s) =>
        s.status === 'invalid' || (s.status === 'labelled' && (s.symbols === null || s.symbols.length === 0))
          ? { ...s, status: 'labelled' as const, symbols: [] }
          : s,
      )
    : input;
  const usable = authors ? (sample: LabelledSample) => sample.status === 'labelled' && sample.symbols !== null : usableLabels;
  const drift = (a: readonly string[], b: readonly string[]) => (authors ? authorsDrift(a, b, alpha) : sriDrift(a, b, alpha));
  const dtwDistance = (a: readonly string[], b: readonly string[]) => (authors && (a.length === 0 || b.length === 0) ? 1 : dtw(a, b, dtwOptions).normalized);

  const groupKey = (s: LabelledSample) => JSON.stringify([s.target, s.question]);
  const references = new Map<string, LabelledSample>();
  const noMemory = new Map<string, LabelledSample[]>();
  samples.forEach((sample, i) => {
    const key = groupKey(sample);
    if (sample.role === 'reference') {
      if (references.has(key)) {
        throw new InvalidArgumentError(`samples[${i}]`, `a second reference sample for target '${sample.target}', question '${sample.question}'`);
      }
      references.set(key, sample);
    }
    if (sample.role !== 'perturbed' && usable(sample)) {
      getOrInsert(noMemory, key, () => []).push(sample);
    }
  });

  const missing = new Map<string, { target: string; question: string; reason: string }>();
  const observations: MemoryObservation[] = [];
  for (const sample of samples) {
    if (sample.role === 'reference') continue;
    const key = groupKey(sample);
    const reference = references.get(key);
    const base: MemoryObservation = {
      ...(Object.fromEntries(SAMPLE_KEYS.map((k) => [k, sample[k]])) as unknown as SampleKey),
      status: 'scored',
      baselineSymbols: reference !== undefined && usable(reference) ? reference.symbols : null,
      symbols: sample.status === 'labelled' ? sample.symbols : null,
      dtw: null,
      sri: null,
      baselines: 0,
    };
    // The sample's own outcome first, so dropout and invalid rates do not depend on the reference.
    if (sample.status !== 'labelled' || !usable(sample)) {
      observations.push({ ...base, status: sample.status === 'labelled' ? 'invalid' : sample.status });
      continue;
    }
    if (reference === undefined || !usable(reference)) {
      if (!missing.has(key)) {
        missing.set(key, {
          target: sample.target,
          question: sample.question,
          reason:
            reference === undefined
              ? 'no reference sample'
              : `reference sample is ${reference.status === 'labelled' ? 'labelled with no steps' : reference.status}`,
        });
      }
      observations.push({ ...base, status: 'no_reference' });
      continue;
    }
    const baselines = pairing === 'reference' ? [reference] : (noMemory.get(key) ?? []).filter((other) => other !== sample);
    const symbols = sample.symbols as readonly string[];
    let dtwSum = 0;
    let sriSum = 0;
    for (const baseline of baselines) {
      const baseSymbols = baseline.symbols as readonly string[];
      dtwSum += dtwDistance(baseSymbols, symbols);
      sriSum += drift(baseSymbols, symbols);
    }
    observations.push({
      ...base,
      dtw: dtwSum / baselines.length,
      sri: sriSum / baselines.length,
      baselines: baselines.length,
    });
  }
  return {
    pairing,
    alpha,
    observations,
    missingReferences: [...missing.values()],
    excluded: exclusionCounts(observations),
  };
}

function exclusionCounts(observations: readonly MemoryObservation[]): ExclusionCount[] {
  const counts = new Map<string, ExclusionCount>();
  const zeros = Object.fromEntries(EXCLUSION_COUNTS.map((k) => [k, 0])) as Record<(typeof EXCLUSION_COUNTS)[number], number>;
  for (const o of observations) {
    const key = JSON.stringify([o.target, o.condition]);
    const entry = getOrInsert(counts, key, () => ({ target: o.target, condition: o.condition, tier: o.tier, ...zeros }));
    entry.total += 1;
    entry[o.status === 'no_reference' ? 'noReference' : o.status] += 1;
  }
  return [...counts.values()];
}

// ---------------------------------------------------------------------------------------------
// Report types

export interface IntervalEstimate {
  estimate: number;
  /**
   * The bootstrap test of `p` inverted at 1 − level: order statistics of the replicates, so it
   * excludes 0 exactly when p < 1 − level (stats/bootstrap-claims.ts, `invertBootstrapTest`).
   * Infinite ends when the replicates are too few for the test to reach that level.
   */
  ci: readonly [number, number];
  /** Two-sided bootstrap p for the null value 0 ((b + 1)/(B + 1) form, see bootstrapPValue). */
  p: number;
  /** Standard deviation of the bootstrap replicates (the estimate's standard error). */
  se: number;
  B: number;
  invalidReplicates: number;
  nQuestions: number;
}

/** A report's elevation: the test alone (`ci`, `p`) and the claim every surface prints. */
export interface ElevationEstimate extends IntervalEstimate {
  /**
   * The deciding p and the interval that agrees with it. A condition row's family is the
   * conditions of its tier under this metric (BH, as d_rel): `claim.p` is BH-adjusted and the
   * interval is the bootstrap test inverted at max(R, 1)·α/m, so it excludes 0 exactly when
   * `claim.p` < α. A pooled tier row is a family of one (`claim.p` = `p`, the interval inverted at α).
   */
  claim: BootstrapClaim;
}

export interface ConditionSummary {
  condition: string;
  tier: PerturbationTier;
  /** Scored observations (the n of every statistic of this row). */
  n: number;
  nQuestions: number;
  mean: number;
  /** Sample SD (n − 1); null when n < 2. */
  sd: number | null;
  /** Cohen's d (pooled SD) against the no_perturbation distribution; null on the floor row. */
  cohensD: Maybe<number> | null;
  /** μ_condition / μ_floor − 1 with its question-cluster bootstrap CI, p and BH claim; null on the floor row. */
  elevation: Maybe<ElevationEstimate> | null;
}

export interface TierSummary {
  tier: Exclude<PerturbationTier, 'none'>;
  conditions: string[];
  n: number;
  nQuestions: number;
  mean: number;
  cohensD: Maybe<number>;
  /** A family of one: `claim.p` is `p`, `claim.interval` the test inverted at α. */
  elevation: Maybe<ElevationEstimate>;
}

export interface DRelEstimate {
  dRel: number;
  ci: readonly [number, number];
  p: number;
  /** BH-adjusted p within the condition's tier (persona categories form one family, life events another). */
  pAdjusted: number;
  /**
   * What every surface prints: the BH-adjusted p and the bootstrap test inverted at max(R, 1)·α/m
   * (R significant of m in the tier), so the interval excludes 0 exactly when pAdjusted < α. `ci`
   * is the test-alone 95% percentile interval.
   */
  claim: BootstrapClaim;
  /** pAdjusted < alpha, and false when the design is underpowered (see `verdict`). */
  significant: boolean;
  /** `underpowered` below the minimum design (no significance is claimed), else by pAdjusted. */
  verdict: 'significant' | 'not significant' | 'underpowered';
  /** Standard deviation of the bootstrap replicates of d_rel. */
  se: number;
  muTreat: number;
  muNoise: number;
  sdNoise: number;
  nQuestions: number;
  nTreat: number;
  nNoise: number;
  B: number;
  invalidReplicates: number;
}

export interface DRelEntry {
  condition: string;
  tier: 'persona' | 'life_event';
  result: Maybe<DRelEstimate>;
}

/** The mixed model's fit as reported: always with its reference level (the floor condition). */
export interface MixedModelSummary extends Omit<MixedModelResult, 'reference'> {
  reference: string;
}

export interface PairwiseComparison {
  a: string;
  b: string;
  /** mean(a) − mean(b). */
  difference: number;
  test: Maybe<{ t: number; df: number; p: number; pAdjusted: number; significant: boolean }>;
}

export interface PairwiseSummary {
  /**
   * Conditions in display order: ascending mean, so the lowest-drift group gets letter 'a'.
   * `letters` is null when the letter display could not be built (see `letters` below).
   */
  order: Array<{ condition: string; mean: number; letters: string | null }>;
  /** 'ok', or why the compact letter display failed (e.g. more than 52 letters needed). */
  letters: Maybe<'ok'>;
  comparisons: PairwiseComparison[];
  /** Conditions left out (fewer than 2 scored observations). */
  skipped: string[];
}

export interface MetricAnalysis {
  metric: MemoryMetric;
  /** The no_perturbation floor: the model's own sampling noise against the reference. */
  floor: Maybe<{ condition: string; mean: number; sd: number | null; n: number; nQuestions: number }>;
  /** Pooled pragmatic noise (μ_noise, σ_noise of d_rel). */
  noise: Maybe<{ conditions: string[]; mean: number; sd: number | null; n: number; nQuestions: number }>;
  mixedModel: Maybe<MixedModelSummary>;
  conditions: ConditionSummary[];
  tiers: TierSummary[];
  dRel: DRelEntry[];
  pairwise: Maybe<PairwiseSummary>;
  /** What this design can detect (normal approximation from the bootstrap standard errors). */
  power: MetricPower;
}

/** Minimum detectable effects at 80% power, two-sided alpha: (z(1 − α/2) + z(0.8)) × mean SE. */
export interface MetricPower {
  /** Mean bootstrap SE of the per-condition elevations; null when none was computed. */
  elevationSE: number | null;
  /** Smallest elevation (a fraction: 0.15 = +15 %) detected 80% of the time. */
  minimumDetectableElevation: number | null;
  dRelSE: number | null;
  minimumDetectableDRel: number | null;
}

export interface Convergence {
  /** Conditions whose DTW and SRI means are correlated, in order. */
  conditions: string[];
  dtwMeans: number[];
  sriMeans: number[];
  spearman: Maybe<{ rho: number; p: number }>;
  pearson: Maybe<{ r: number; p: number }>;
  /** Pooled tiers by ascending mean under each metric (Fig. 5: the same order under both). */
  tierOrder: { dtw: string[]; sri: string[]; identical: boolean };
}

export type Verdict = 'pass' | 'fail' | 'undetermined';

export interface ValidityCheck {
  metric: MemoryMetric | 'dtw~sri';
  /** Condition id, `tier:<tier>` for a pooled tier, or `spearman` for convergent validity. */
  subject: string;
  estimate: number | null;
  p: number | null;
  /** Whether this check is met; null when its statistic could not be computed. */
  met: boolean | null;
  error?: string;
}

export interface ValidityVerdict {
  verdict: Verdict;
  reason: string;
  checks: ValidityCheck[];
}

export interface InstrumentValidity {
  /** No noise condition (nor pooled noise) significantly elevated over the floor, under either metric. */
  specificity: ValidityVerdict;
  /** Pooled life events significantly elevated over the floor, under both metrics. */
  sensitivity: ValidityVerdict;
  /** Spearman ρ(DTW means, SRI means) ≥ threshold and p < alpha. */
  convergent: ValidityVerdict;
  overall: Verdict;
}

/**
 * Whether the design is large enough for the significance calls of the report. Below
 * MIN_QUESTIONS questions the question-level bootstrap and the mixed model's normal reference
 * are not calibrated (`memory calibrate` shows it), so the report says `underpowered` instead
 * of listing significance: d_rel `significant` is false with `verdict: "underpowered"`, and the
 * validity checks are undetermined.
 */
export interface DesignAdequacy {
  nQuestions: number;
  minimumQuestions: number;
  underpowered: boolean;
  reason: string;
}

/** Fewest questions with scored observations for the report to list significance. */
export const MIN_QUESTIONS = 30;

export interface TargetAnalysis {
  target: string;
  nQuestions: number;
  design: DesignAdequacy;
  metrics: Record<MemoryMetric, MetricAnalysis>;
  convergence: Maybe<Convergence>;
  validity: InstrumentValidity;
}

export interface ConditionCounts extends ExclusionCount {
  /** empty / total. */
  dropoutRate: number;
  /** invalid / (total − empty − failed): labeler outputs unusable after re-asks. */
  invalidRate: number | null;
  /** Labelled steps of the scored observations. */
  steps: number;
  unmappedSteps: number;
  /** unmappedSteps / steps (docs/decisions.md#d6). */
  unmappedRate: number | null;
}

/** How the run's generation cells were seeded (added by `memoryReport` from the store). */
export interface MemorySampling {
  /** The `sampleSeeds` scheme recorded with the run; `unrecorded` for a run whose config has none. */
  seeding: 'cell' | 'offset' | 'fixed' | 'none' | 'unrecorded';
  /** Generation cells that share their seed with another cell of the same (target, question), read from the stored requests. */
  sharedSeedCells: number;
  /** No two generation cells of a (target, question) share a seed (or no seed was sent). */
  independent: boolean;
  note: string;
}

/**
 * Refusals of one condition against the no-memory floor (a finding of its own: memory that
 * makes a model decline is a change of behaviour even though it has no trajectory).
 */
export interface RefusalFinding {
  target: string;
  condition: string;
  tier: PerturbationTier;
  /** Answered samples (total − empty − failed). */
  answered: number;
  refused: number;
  /** refused / answered; null when nothing was answered. */
  rate: number | null;
  floorRate: number | null;
  /** rate − floorRate with a Wald 95 % interval; p from the pooled two-proportion z-test (1 when neither arm refuses). */
  difference: Maybe<{ estimate: number; ci: readonly [number, number]; p: number }>;
}

export interface MemoryReport {
  schema: typeof MEMORY_REPORT_SCHEMA;
  options: Required<MemoryAnalysisOptions>;
  /** Per target × condition (floor excluded): refusal rate and its difference from the floor. */
  refusals: RefusalFinding[];
  /** Present when the report was made from a run store (memoryReport). */
  sampling?: MemorySampling;
  counts: {
    observations: number;
    scored: number;
    byCondition: ConditionCounts[];
  };
  targets: TargetAnalysis[];
}

export interface MemoryAnalysisOptions {
  /** Bootstrap replicates (default 10,000). */
  B?: number;
  /** Bootstrap seed (default 42); every bootstrap of the report uses it. */
  seed?: number;
  /** Confidence level of the percentile intervals (default 0.95). */
  level?: number;
  /** Significance level of every test and verdict (default 0.05). */
  alpha?: number;
  /** Convergent validity needs Spearman ρ at or above this (default 0.8). */
  convergenceThreshold?: number;
  /**
   * Conditions of the DTW–SRI correlation: `paper` (default) = each noise category, each persona
   * category and the pooled life events (14 with the built-in set); `all` = every condition but
   * the floor.
   */
  convergenceConditions?: 'paper' | 'all';
  /** The floor condition and mixed-model reference level (default no_perturbation). */
  floorCondition?: string;
  method?: MixedModelMethod;
}

// ---------------------------------------------------------------------------------------------
// Helpers

const attempt = <T>(compute: () => T): Maybe<T> => attemptOr(compute, withAdvice);

/**
 * What to change in the design for a statistic that could not be computed: every `{ error }`
 * of the report ends with it (more questions, larger k, a higher temperature).
 */
export function designAdvice(message: string): string | null {
  const m = message.toLowerCase();
  if (/question|cluster|too sparse|drew no observation/.test(m)) {
    return 'run more questions (questions.limit / questions.sample, at least 30) or more samples per question (k)';
  }
  if (/floor mean is 0|mean is 0|zero variance|σ_noise = 0|constant/.test(m)) {
    return 'the no-memory or noise samples never differ from the reference: raise decoding.temperature, raise k, or add noise conditions';
  }
  if (/no scored observations|no pragmatic-noise|no life-event|fewer than 2 conditions|condition\(s\)/.test(m)) {
    return 'include the missing conditions (conditions: all) and check the run counts for dropouts and invalid labelings';
  }
  if (/singular|converge|rank/.test(m)) return 'run more questions or larger k so that every condition has several observations per question';
  return null;
}

function withAdvice(message: string): string {
  const advice = designAdvice(message);
  return advice === null || message.includes(' — to fix: ') ? message : `${message} — to fix: ${advice}`;
}

function meanOf(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] as number;
  return sum / values.length;
}

/** SD of the finite values (bootstrap replicates may hold NaN for invalid draws). */
function finiteSd(values: ArrayLike<number>): number {
  const kept: number[] = [];
  for (let i = 0; i < values.length; i++) if (Number.isFinite(values[i])) kept.push(values[i] as number);
  return sdOf(kept) ?? 0;
}

function sdOf(values: ArrayLike<number>): number | null {
  if (values.length < 2) return null;
  const m = meanOf(values);
  let sq = 0;
  for (let i = 0; i < values.length; i++) sq += ((values[i] as number) - m) ** 2;
  return Math.sqrt(sq / (values.length - 1));
}

const questionCount = (rows: readonly ClusteredValue[]) => new Set(rows.map((row) => row.cluster)).size;
const valuesOf = (rows: readonly ClusteredValue[]) => rows.map((row) => row.value);

const TIER_RANK: Record<PerturbationTier, number> = { none: 0, noise: 1, persona: 2, life_event: 3 };

/** Bootstrap settings of `elevationBootstrap` (defaults B 10,000, seed 42, level 0.95). */
export type ElevationOptions = Pick<ResamplingOptions, 'B' | 'seed' | 'level'>;

type Resampling = Required<ElevationOptions>;

const MAX_INVALID_FRACTION = 0.01;

/**
 * Percent elevation μ_treat / μ_floor − 1 with a question-level cluster bootstrap: each replicate
 * draws as many questions as there are (with replacement) and re-estimates both means from every
 * treat and floor row of the drawn questions. Per-question sums make a replicate O(#questions).
 */
export function elevationBootstrap(treat: readonly ClusteredValue[], floor: readonly ClusteredValue[], options: ElevationOptions = {}): IntervalEstimate {
  const resampling = resolveResampling(options);
  checkRows(treat, 'treat');
  checkRows(floor, 'floor');
  return elevationWithDraws(treat, floor, resampling, null).estimate;
}

/** Largest draw matrix (B × #questions indices) kept for reuse: 32 MB. */
const MAX_CACHED_DRAWS = 1 << 23;

/**
 * The question draws of every replicate for k questions, as one B × k matrix: the same stream
 * of `rng(seed)` that B successive `fillInt(draw, k)` calls would consume, so results do not
 * depend on whether it is cached. Analyses reuse it across conditions with the same k.
 */
type DrawSource = (k: number) => Int32Array | null;

function drawCache(resampling: Resampling): DrawSource {
  const cache = new Map<number, Int32Array>();
  return (k) => {
    if (resampling.B * k > MAX_CACHED_DRAWS) return null;
    return getOrInsert(cache, k, () => rng(resampling.seed).fillInt(new Int32Array(resampling.B * k), k));
  };
}

function elevationWithDraws(
  treat: readonly ClusteredValue[],
  floor: readonly ClusteredValue[],
  resampling: Resampling,
  drawSource: DrawSource | null,
): { estimate: IntervalEstimate; replicates: Float64Array } {
  if (treat.length === 0) throw new StatisticsError('elevation: the condition has no scored observations');
  if (floor.length === 0) throw new StatisticsError('elevation: the floor condition has no scored observations');
  const treatQuestions = questionCount(treat);
  if (treatQuestions < 2) {
    throw new StatisticsError(`elevation: the condition has observations from ${treatQuestions} question; the question-level bootstrap needs at least 2`);
  }
  // Questions in order of first appearance (treat rows, then floor rows); within a question the
  // treat rows come first, each arm in its own order.
  const arms = [...treat.map((row) => ({ row, offset: 0 })), ...floor.map((row) => ({ row, offset: 2 }))];
  const questions = groupByCluster(arms, (arm) => arm.row.cluster, 'elevation');
  const k = questions.length;
  // Per question: treat n, treat Σ, floor n, floor Σ.
  const stats = new Float64Array(k * 4);
  questions.forEach((members, question) => {
    for (const { row, offset } of members) {
      const at = question * 4 + offset;
      stats[at] = (stats[at] as number) + 1;
      stats[at + 1] = (stats[at + 1] as number) + row.value;
    }
  });
  const muTreat = meanOf(valuesOf(treat));
  const muFloor = meanOf(valuesOf(floor));
  if (!(muFloor > 0)) {
    throw new StatisticsError(`elevation: the floor mean is ${muFloor}; percent elevation μ/μ_floor − 1 is undefined`);
  }
  const cached = drawSource?.(k) ?? null;
  const random = cached === null ? rng(resampling.seed) : null;
  const draw = cached ?? new Int32Array(k);
  const kept = new Float64Array(resampling.B);
  let valid = 0;
  for (let b = 0; b < resampling.B; b++) {
    const offset = cached === null ? 0 : b * k;
    random?.fillInt(draw, k);
    let tn = 0;
    let ts = 0;
    let fn = 0;
    let fs = 0;
    for (let c = offset; c < offset + k; c++) {
      const at = (draw[c] as number) * 4;
      tn += stats[at] as number;
      ts += stats[at + 1] as number;
      fn += stats[at + 2] as number;
      fs += stats[at + 3] as number;
    }
    if (tn > 0 && fn > 0 && fs > 0) kept[valid++] = ts / tn / (fs / fn) - 1;
  }
  const invalid = resampling.B - valid;
  if (invalid > MAX_INVALID_FRACTION * resampling.B) {
    throw new StatisticsError(
      `elevation: ${invalid} of ${resampling.B} bootstrap replicates drew no observation of the condition or a zero floor; ` +
        'the data are too sparse for the question-level bootstrap',
    );
  }
  const replicates = kept.subarray(0, valid);
  return {
    estimate: {
      estimate: muTreat / muFloor - 1,
      // The test of `p` inverted (issue #39: one procedure per claim), not a percentile interval,
      // which can exclude 0 beside p ≥ 0.05 by interpolation between order statistics.
      ci: invertBootstrapTest(replicates, 1 - resampling.level),
      p: bootstrapPValue(replicates, 0),
      se: sdOf(replicates) ?? 0,
      B: resampling.B,
      invalidReplicates: invalid,
      nQuestions: treatQuestions,
    },
    replicates,
  };
}

/** Elevations with their claims: BH over each family of computed elevations (stats/bootstrap-claims.ts). */
function elevationClaims<K>(
  family: ReadonlyArray<{ key: K; result: Maybe<{ estimate: IntervalEstimate; replicates: Float64Array }> }>,
  alpha: number,
): Map<K, Maybe<ElevationEstimate>> {
  const computed = family.flatMap((f) => (isRefusal(f.result) ? [] : [{ key: f.key, ...f.result }]));
  const claims = bhClaims(
    computed.map((c) => ({ p: c.estimate.p, replicates: c.replicates })),
    alpha,
  );
  const out = new Map<K, Maybe<ElevationEstimate>>();
  for (const f of family) if (isRefusal(f.result)) out.set(f.key, f.result);
  computed.forEach((c, i) => {
    out.set(c.key, { ...c.estimate, claim: claims[i] as BootstrapClaim });
  });
  return out;
}

function resolveResampling(options: ElevationOptions): Resampling {
  const resampling = { B: options.B ?? 10_000, seed: options.seed ?? 42, level: options.level ?? 0.95 };
  if (!Number.isSafeInteger(resampling.B) || resampling.B < 2) {
    throw new InvalidArgumentError('B', `must be an integer ≥ 2, got ${String(resampling.B)}`);
  }
  if (!Number.isSafeInteger(resampling.seed) || resampling.seed < 0) {
    throw new InvalidArgumentError('seed', `must be a non-negative safe integer, got ${String(resampling.seed)}`);
  }
  if (typeof resampling.level !== 'number' || !(resampling.level > 0 && resampling.level < 1)) {
    throw new InvalidArgumentError('level', `must lie strictly between 0 and 1, got ${String(resampling.level)}`);
  }
  return resampling;
}

function checkRows(rows: readonly ClusteredValue[], argument: string): void {
  if (!Array.isArray(rows)) throw new InvalidArgumentError(argument, 'expected an array of { value, cluster } rows');
  rows.forEach((row, i) => {
    if (row === null || typeof row !== 'object' || typeof row.value !== 'number' || !Number.isFinite(row.value)) {
      throw new InvalidArgumentError(`${argument}[${i}].value`, 'must be a finite number');
    }
    const key = row.cluster;
    if (typeof key === 'number' ? !Number.isFinite(key) : typeof key !== 'string') {
      throw new InvalidArgumentError(`${argument}[${i}].cluster`, 'must be a string or a finite number');
    }
  });
}

function resolveOptions(options: MemoryAnalysisOptions): Required<MemoryAnalysisOptions> {
  const resolved: Required<MemoryAnalysisOptions> = {
    ...resolveResampling(options),
    alpha: options.alpha ?? 0.05,
    convergenceThreshold: options.convergenceThreshold ?? 0.8,
    convergenceConditions: options.convergenceConditions ?? 'paper',
    floorCondition: options.floorCondition ?? NO_PERTURBATION,
    method: options.method ?? 'REML',
  };
  if (typeof resolved.alpha !== 'number' || !(resolved.alpha > 0 && resolved.alpha < 1)) {
    throw new InvalidArgumentError('alpha', `must lie strictly between 0 and 1, got ${String(resolved.alpha)}`);
  }
  const threshold = resolved.convergenceThreshold;
  if (typeof threshold !== 'number' || !(threshold >= -1 && threshold <= 1)) {
    throw new InvalidArgumentError('convergenceThreshold', `must lie in [-1, 1], got ${String(threshold)}`);
  }
  requireOneOf(['paper', 'all'], resolved.convergenceConditions, 'convergenceConditions');
  requireText(resolved.floorCondition, 'floorCondition');
  requireOneOf(['REML', 'ML'], resolved.method, 'method');
  return resolved;
}

const OBSERVATION_STATUSES: readonly ObservationStatus[] = ['scored', 'empty', 'failed', 'invalid', 'refused', 'no_reference'];

function checkObservations(observations: readonly MemoryObservation[]): void {
  if (!Array.isArray(observations)) throw new InvalidArgumentError('observations', 'expected an array of observations');
  const tierOf = new Map<string, PerturbationTier>();
  observations.forEach((o, i) => {
    const at = `observations[${i}]`;
    if (o === null || typeof o !== 'object') throw new InvalidArgumentError(at, 'expected an observation');
    for (const key of ['target', 'question', 'condition'] as const) requireText(o[key], `${at}.${key}`);
    requireOneOf(PERTURBATION_TIERS, o.tier, `${at}.tier`);
    requireOneOf(OBSERVATION_STATUSES, o.status, `${at}.status`);
    if (o.status === 'scored') {
      for (const metric of MEMORY_METRICS) {
        const value = o[metric];
        if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
          throw new InvalidArgumentError(`${at}.${metric}`, `a scored observation needs a finite drift ≥ 0, got ${String(value)}`);
        }
      }
    }
    const known = tierOf.get(o.condition);
    if (known !== undefined && known !== o.tier) {
      throw new InvalidArgumentError(`${at}.tier`, `condition '${o.condition}' appears with tiers '${known}' and '${o.tier}'`);
    }
    tierOf.set(o.condition, o.tier);
  });
}

function conditionCounts(observations: readonly MemoryObservation[]): ConditionCounts[] {
  const base = exclusionCounts(observations);
  const steps = new Map<string, { steps: number; unmapped: number }>();
  for (const o of observations) {
    if (o.status !== 'scored' || o.symbols === null) continue;
    const key = JSON.stringify([o.target, o.condition]);
    const entry = getOrInsert(steps, key, () => ({ steps: 0, unmapped: 0 }));
    entry.steps += o.symbols.length;
    for (const symbol of o.symbols) if (symbol === UNMAPPED) entry.unmapped += 1;
  }
  return base
    .map((entry) => {
      const s = steps.get(JSON.stringify([entry.target, entry.condition])) ?? { steps: 0, unmapped: 0 };
      const labelled = entry.total - entry.empty - entry.failed;
      return {
        ...entry,
        dropoutRate: entry.empty / entry.total,
        invalidRate: labelled > 0 ? entry.invalid / labelled : null,
        steps: s.steps,
        unmappedSteps: s.unmapped,
        unmappedRate: s.steps > 0 ? s.unmapped / s.steps : null,
      };
    })
    .sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : compareConditions(a, b)));
}

function compareConditions(a: { condition: string; tier: PerturbationTier }, b: { condition: string; tier: PerturbationTier }): number {
  const byTier = TIER_RANK[a.tier] - TIER_RANK[b.tier];
  if (byTier !== 0) return byTier;
  return a.condition < b.condition ? -1 : a.condition > b.condition ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Analysis

/**
 * Every number of DriftLens §2.5, §3 and §4 from scored observations, per target and per metric
 * (DTW and SRI). Observations that are not `scored` only enter the counts.
 */
export function analyzeMemory(observations: readonly MemoryObservation[], options: MemoryAnalysisOptions = {}): MemoryReport {
  const settings = resolveOptions(options);
  checkObservations(observations);
  const scored = observations.filter((o) => o.status === 'scored');
  const draws = drawCache(settings);
  const targets = [...new Set(observations.map((o) => o.target))].sort();
  return {
    schema: MEMORY_REPORT_SCHEMA,
    options: settings,
    refusals: refusalFindings(observations, settings.floorCondition),
    counts: {
      observations: observations.length,
      scored: scored.length,
      byCondition: conditionCounts(observations),
    },
    targets: targets.map((target) =>
      analyzeTarget(
        target,
        scored.filter((o) => o.target === target),
        settings,
        draws,
      ),
    ),
  };
}

function refusalFindings(observations: readonly MemoryObservation[], floorCondition: string): RefusalFinding[] {
  const counts = exclusionCounts(observations);
  const out: RefusalFinding[] = [];
  for (const entry of counts) {
    if (entry.condition === floorCondition) continue;
    const floor = counts.find((c) => c.target === entry.target && c.condition === floorCondition);
    const answered = entry.total - entry.empty - entry.failed;
    const floorAnswered = floor === undefined ? 0 : floor.total - floor.empty - floor.failed;
    const rate = answered > 0 ? entry.refused / answered : null;
    const floorRate = floorAnswered > 0 ? (floor as ExclusionCount).refused / floorAnswered : null;
    let difference: RefusalFinding['difference'];
    if (rate === null || floorRate === null) {
      difference = { error: withAdvice(`refusals: ${rate === null ? 'the condition' : 'the floor'} has no answered samples`) };
    } else {
      const estimate = rate - floorRate;
      const se = Math.sqrt((rate * (1 - rate)) / answered + (floorRate * (1 - floorRate)) / floorAnswered);
      const pooled = (entry.refused + (floor as ExclusionCount).refused) / (answered + floorAnswered);
      const pooledSe = Math.sqrt(pooled * (1 - pooled) * (1 / answered + 1 / floorAnswered));
      const p = pooledSe > 0 ? normalTwoSidedP(estimate / pooledSe) : 1;
      difference = { estimate, ci: [estimate - 1.959963984540054 * se, estimate + 1.959963984540054 * se], p };
    }
    out.push({ target: entry.target, condition: entry.condition, tier: entry.tier, answered, refused: entry.refused, rate, floorRate, difference });
  }
  return out.sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : compareConditions(a, b)));
}

interface ConditionRows {
  condition: string;
  tier: PerturbationTier;
  rows: ClusteredValue[];
}

function analyzeTarget(
  target: string,
  observations: readonly MemoryObservation[],
  settings: Required<MemoryAnalysisOptions>,
  draws: DrawSource,
): TargetAnalysis {
  const metrics = {} as Record<MemoryMetric, MetricAnalysis>;
  for (const metric of MEMORY_METRICS) metrics[metric] = analyzeMetric(metric, observations, settings, draws);
  const convergence = attempt(() => convergenceOf(metrics, settings));
  const nQuestions = new Set(observations.map((o) => o.question)).size;
  const design = adequacyOf(nQuestions);
  if (design.underpowered) markUnderpowered(metrics);
  return {
    target,
    nQuestions,
    design,
    metrics,
    convergence,
    validity: validityOf(metrics, convergence, settings, design),
  };
}

function groupRows(metric: MemoryMetric, observations: readonly MemoryObservation[]): ConditionRows[] {
  const groups = new Map<string, ConditionRows>();
  for (const o of observations) {
    getOrInsert(groups, o.condition, () => ({ condition: o.condition, tier: o.tier, rows: [] })).rows.push({ value: o[metric] as number, cluster: o.question });
  }
  return [...groups.values()].sort(compareConditions);
}

function analyzeMetric(
  metric: MemoryMetric,
  observations: readonly MemoryObservation[],
  settings: Required<MemoryAnalysisOptions>,
  draws: DrawSource,
): MetricAnalysis {
  const groups = groupRows(metric, observations);
  const floorGroup = groups.find((g) => g.condition === settings.floorCondition);
  const floorRows = floorGroup?.rows ?? [];
  const noiseGroups = groups.filter((g) => g.tier === 'noise');
  const noiseRows = noiseGroups.flatMap((g) => g.rows);
  const noFloor = `the floor condition '${settings.floorCondition}' has no scored observations`;

  const spread = (rows: readonly ClusteredValue[]) => ({
    mean: meanOf(valuesOf(rows)),
    sd: sdOf(valuesOf(rows)),
    n: rows.length,
    nQuestions: questionCount(rows),
  });
  const floor: MetricAnalysis['floor'] = floorRows.length === 0 ? { error: noFloor } : { condition: settings.floorCondition, ...spread(floorRows) };
  const noise: MetricAnalysis['noise'] =
    noiseRows.length === 0
      ? { error: 'no pragmatic-noise condition has scored observations' }
      : { conditions: noiseGroups.map((g) => g.condition), ...spread(noiseRows) };

  const againstFloor = <T>(compute: () => T) =>
    attempt(() => {
      if (floorRows.length === 0) throw new StatisticsError(noFloor);
      return compute();
    });
  const cohensDOf = (rows: readonly ClusteredValue[]) => againstFloor(() => cohensD(valuesOf(rows), valuesOf(floorRows)));
  const elevationOf = (rows: readonly ClusteredValue[]) => againstFloor(() => elevationWithDraws(rows, floorRows, settings, draws));

  // Condition elevations: one BH family per tier (as d_rel), so the printed interval agrees with the adjusted p.
  const conditionElevation = new Map<string, Maybe<ElevationEstimate>>();
  for (const tier of PERTURBATION_TIERS) {
    const members = groups.filter((g) => g.tier === tier && g.condition !== settings.floorCondition);
    const family = members.map((g) => ({ key: g.condition, result: elevationOf(g.rows) }));
    for (const [condition, elevation] of elevationClaims(family, settings.alpha)) conditionElevation.set(condition, elevation);
  }

  const conditions: ConditionSummary[] = groups.map((g) => {
    const isFloor = g.condition === settings.floorCondition;
    const against = isFloor
      ? { cohensD: null, elevation: null }
      : { cohensD: cohensDOf(g.rows), elevation: conditionElevation.get(g.condition) as Maybe<ElevationEstimate> };
    return {
      condition: g.condition,
      tier: g.tier,
      n: g.rows.length,
      nQuestions: questionCount(g.rows),
      mean: meanOf(valuesOf(g.rows)),
      sd: sdOf(valuesOf(g.rows)),
      ...against,
    };
  });

  const tiers: TierSummary[] = [];
  for (const tier of ['noise', 'persona', 'life_event'] as const) {
    const members = groups.filter((g) => g.tier === tier);
    if (members.length === 0) continue;
    const rows = members.flatMap((g) => g.rows);
    tiers.push({
      tier,
      conditions: members.map((g) => g.condition),
      n: rows.length,
      nQuestions: questionCount(rows),
      mean: meanOf(valuesOf(rows)),
      cohensD: cohensDOf(rows),
      // A pooled tier is a claim of its own (a family of one).
      elevation: elevationClaims([{ key: tier, result: elevationOf(rows) }], settings.alpha).get(tier) as Maybe<ElevationEstimate>,
    });
  }

  const dRel = dRelEntries(groups, noiseRows, settings, settings.alpha);
  return {
    metric,
    floor,
    noise,
    mixedModel: attempt(() => mixedModelOf(metric, groups, settings)),
    conditions,
    tiers,
    dRel,
    pairwise: attempt(() => pairwiseOf(groups, settings.alpha)),
    power: powerOf(conditions, dRel, settings.alpha),
  };
}

function powerOf(conditions: readonly ConditionSummary[], dRel: readonly DRelEntry[], alpha: number): MetricPower {
  const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
  const elevationSE = mean(conditions.flatMap((c) => (c.elevation === null || isRefusal(c.elevation) ? [] : [c.elevation.se])));
  const dRelSE = mean(dRel.flatMap((d) => (isRefusal(d.result) ? [] : [d.result.se])));
  const mde = (se: number | null) => (se === null ? null : minimumDetectableEffect(se, { alpha }));
  return { elevationSE, minimumDetectableElevation: mde(elevationSE), dRelSE, minimumDetectableDRel: mde(dRelSE) };
}

function adequacyOf(nQuestions: number): DesignAdequacy {
  const underpowered = nQuestions < MIN_QUESTIONS;
  return {
    nQuestions,
    minimumQuestions: MIN_QUESTIONS,
    underpowered,
    reason: underpowered
      ? `underpowered: ${nQuestions} question(s) with scored observations, fewer than the ${MIN_QUESTIONS} the question-level tests need to hold their false-positive rate; no significance is claimed — run more questions (questions.limit / questions.sample) and check the design with \`echolens memory calibrate\``
      : `${nQuestions} questions with scored observations (minimum ${MIN_QUESTIONS})`,
  };
}

/** Below the minimum design: no d_rel is called significant and no validity check is met or failed. */
function markUnderpowered(metrics: Record<MemoryMetric, MetricAnalysis>): void {
  for (const metric of MEMORY_METRICS) {
    for (const entry of metrics[metric].dRel) {
      if (!isRefusal(entry.result)) entry.result = { ...entry.result, significant: false, verdict: 'underpowered' };
    }
    const pairwise = metrics[metric].pairwise;
    if (!isRefusal(pairwise)) {
      for (const c of pairwise.comparisons) if (!isRefusal(c.test)) c.test = { ...c.test, significant: false };
      for (const o of pairwise.order) o.letters = null;
      pairwise.letters = { error: 'underpowered design: no compact letter display' };
    }
  }
}

function mixedModelOf(metric: MemoryMetric, groups: readonly ConditionRows[], settings: Required<MemoryAnalysisOptions>): MixedModelSummary {
  if (!groups.some((g) => g.condition === settings.floorCondition)) {
    throw new StatisticsError(`mixed model: the reference level '${settings.floorCondition}' has no scored observations`);
  }
  const rows = groups.flatMap((g) => g.rows.map((row) => ({ [metric]: row.value, condition: g.condition, question: String(row.cluster) })));
  const fit = mixedModel(rows, {
    response: metric,
    fixed: 'condition',
    group: 'question',
    reference: settings.floorCondition,
    method: settings.method,
  });
  // Key order of the report: method, reference, levels, then the fit's own.
  const { reference: _, method, levels, ...rest } = fit;
  return { method, reference: settings.floorCondition, levels, ...rest };
}

function dRelEntries(groups: readonly ConditionRows[], noiseRows: readonly ClusteredValue[], resampling: Resampling, alpha: number): DRelEntry[] {
  const entries: DRelEntry[] = [];
  for (const tier of ['persona', 'life_event'] as const) {
    const members = groups.filter((g) => g.tier === tier);
    const raw = members.map((g) =>
      attempt(() => {
        if (noiseRows.length === 0) throw new StatisticsError('d_rel: no pragmatic-noise observations for μ_noise and σ_noise');
        const questions = questionCount(g.rows);
        if (questions < 2) {
          throw new StatisticsError(`d_rel: the condition has observations from ${questions} question; the question-level bootstrap needs at least 2`);
        }
        return dRel({ treat: g.rows, noise: noiseRows }, resampling);
      }),
    );
    // BH over the tier's categories that produced a bootstrap p, with the interval that agrees with
    // the BH decision (stats/bootstrap-claims.ts); the claim's p is the BH-adjusted p.
    const computed = raw.flatMap((r, i) => (isRefusal(r) ? [] : [i]));
    const claims = bhClaims(
      computed.map((i) => raw[i] as { p: number; replicates: { dRel: Float64Array } }).map((r) => ({ p: r.p, replicates: r.replicates.dRel })),
      alpha,
    );
    const claimOf = new Map(computed.map((i, j) => [i, claims[j] as BootstrapClaim]));
    members.forEach((g, i) => {
      const r = raw[i]!;
      if (isRefusal(r)) {
        entries.push({ condition: g.condition, tier, result: r });
        return;
      }
      const claim = claimOf.get(i) as BootstrapClaim;
      entries.push({
        condition: g.condition,
        tier,
        result: {
          dRel: r.dRel,
          ci: r.ci,
          p: r.p,
          pAdjusted: claim.p,
          claim,
          significant: claim.significant,
          verdict: claim.significant ? 'significant' : 'not significant',
          se: finiteSd(r.replicates.dRel),
          muTreat: r.muTreat,
          muNoise: r.muNoise,
          sdNoise: r.sdNoise,
          nQuestions: questionCount(g.rows),
          nTreat: r.nTreat,
          nNoise: r.nNoise,
          B: r.B,
          invalidReplicates: r.invalidReplicates.dRel,
        },
      });
    });
  }
  return entries;
}

function pairwiseOf(groups: readonly ConditionRows[], alpha: number): PairwiseSummary {
  const eligible = groups.filter((g) => g.rows.length >= 2);
  const skipped = groups.filter((g) => g.rows.length < 2).map((g) => g.condition);
  if (eligible.length < 2) throw new StatisticsError('pairwise tests: fewer than 2 conditions have 2 or more scored observations');
  const means = new Map(eligible.map((g) => [g.condition, meanOf(valuesOf(g.rows))]));
  const raw: Array<{ a: string; b: string; difference: number; test: Maybe<{ t: number; df: number; p: number }> }> = [];
  for (let i = 0; i < eligible.length; i++) {
    for (let j = i + 1; j < eligible.length; j++) {
      const a = eligible[i]!;
      const b = eligible[j]!;
      raw.push({
        a: a.condition,
        b: b.condition,
        difference: (means.get(a.condition) as number) - (means.get(b.condition) as number),
        test: attempt(() => welchTTest(valuesOf(a.rows), valuesOf(b.rows))),
      });
    }
  }
  const tested = raw.flatMap((r, i) => (isRefusal(r.test) ? [] : [i]));
  const adjusted = tested.length > 0 ? benjaminiHochberg(tested.map((i) => (raw[i]!.test as { p: number }).p)) : [];
  const adjustedOf = new Map(tested.map((i, j) => [i, adjusted[j] as number]));
  const comparisons: PairwiseComparison[] = raw.map((r, i) => {
    if (isRefusal(r.test)) return { a: r.a, b: r.b, difference: r.difference, test: r.test };
    const pAdjusted = adjustedOf.get(i) as number;
    return { a: r.a, b: r.b, difference: r.difference, test: { ...r.test, pAdjusted, significant: pAdjusted < alpha } };
  });
  // Ascending mean, ties by id: the lowest-drift group (the noise tier in the paper) gets 'a'.
  const order = [...eligible]
    .map((g) => ({ condition: g.condition, mean: means.get(g.condition) as number }))
    .sort((x, y) => x.mean - y.mean || (x.condition < y.condition ? -1 : x.condition > y.condition ? 1 : 0));
  const significantPairs = comparisons.filter((c) => !isRefusal(c.test) && c.test.significant).map((c) => [c.a, c.b] as const);
  const letters = attempt(() =>
    compactLetterDisplay(
      order.map((o) => o.condition),
      significantPairs,
    ),
  );
  return {
    order: order.map((o, i) => ({ ...o, letters: isRefusal(letters) ? null : (letters[i] as string) })),
    letters: isRefusal(letters) ? letters : 'ok',
    comparisons,
    skipped,
  };
}

function convergenceOf(metrics: Record<MemoryMetric, MetricAnalysis>, settings: Required<MemoryAnalysisOptions>): Convergence {
  const pick = (analysis: MetricAnalysis): Map<string, number> => {
    const means = new Map<string, number>();
    for (const c of analysis.conditions) {
      if (c.condition === settings.floorCondition) continue;
      if (settings.convergenceConditions === 'paper' && c.tier === 'life_event') continue;
      means.set(c.condition, c.mean);
    }
    if (settings.convergenceConditions === 'paper') {
      const lifeEvents = analysis.tiers.find((t) => t.tier === 'life_event');
      if (lifeEvents !== undefined) means.set('tier:life_event', lifeEvents.mean);
    }
    return means;
  };
  const dtwMeans = pick(metrics.dtw);
  const sriMeans = pick(metrics.sri);
  const conditions = [...dtwMeans.keys()].filter((c) => sriMeans.has(c));
  if (conditions.length < 3) {
    throw new StatisticsError(`convergent validity: ${conditions.length} condition(s) with both metrics; a correlation needs at least 3`);
  }
  const x = conditions.map((c) => dtwMeans.get(c) as number);
  const y = conditions.map((c) => sriMeans.get(c) as number);
  const tierOrder = (analysis: MetricAnalysis) =>
    [...analysis.tiers].sort((a, b) => a.mean - b.mean || TIER_RANK[a.tier] - TIER_RANK[b.tier]).map((t) => t.tier as string);
  const dtwOrder = tierOrder(metrics.dtw);
  const sriOrder = tierOrder(metrics.sri);
  return {
    conditions,
    dtwMeans: x,
    sriMeans: y,
    spearman: attempt(() => spearman(x, y)),
    pearson: attempt(() => pearson(x, y)),
    tierOrder: {
      dtw: dtwOrder,
      sri: sriOrder,
      identical: dtwOrder.length === sriOrder.length && dtwOrder.every((tier, i) => tier === sriOrder[i]),
    },
  };
}

function combine(checks: readonly ValidityCheck[]): Verdict {
  if (checks.length === 0) return 'undetermined';
  if (checks.some((c) => c.met === false)) return 'fail';
  if (checks.some((c) => c.met === null)) return 'undetermined';
  return 'pass';
}

function validityOf(
  metrics: Record<MemoryMetric, MetricAnalysis>,
  convergence: Maybe<Convergence>,
  settings: Required<MemoryAnalysisOptions>,
  design?: DesignAdequacy,
): InstrumentValidity {
  const { alpha } = settings;
  const specificityChecks: ValidityCheck[] = [];
  const sensitivityChecks: ValidityCheck[] = [];
  const elevationCheck = (metric: MemoryMetric, subject: string, elevation: Maybe<ElevationEstimate> | null, wantElevated: boolean): ValidityCheck => {
    const estimated = elevation !== null && !isRefusal(elevation);
    // The claim's p: BH within the tier for a condition row, the test's own for a pooled tier.
    const check = { metric, subject, estimate: estimated ? elevation.estimate : null, p: estimated ? elevation.claim.p : null };
    if (design?.underpowered) return { ...check, met: null, error: design.reason };
    if (!estimated) return { ...check, met: null, error: elevation === null ? 'no elevation on the floor row' : elevation.error };
    const elevated = elevation.claim.p < alpha && elevation.estimate > 0;
    return { ...check, met: wantElevated ? elevated : !elevated };
  };
  for (const metric of MEMORY_METRICS) {
    const analysis = metrics[metric];
    for (const c of analysis.conditions) {
      if (c.tier === 'noise') specificityChecks.push(elevationCheck(metric, c.condition, c.elevation, false));
    }
    const noiseTier = analysis.tiers.find((t) => t.tier === 'noise');
    if (noiseTier !== undefined) specificityChecks.push(elevationCheck(metric, 'tier:noise', noiseTier.elevation, false));
    const lifeTier = analysis.tiers.find((t) => t.tier === 'life_event');
    sensitivityChecks.push(
      lifeTier === undefined
        ? { metric, subject: 'tier:life_event', estimate: null, p: null, met: null, error: 'no life-event observations' }
        : elevationCheck(metric, 'tier:life_event', lifeTier.elevation, true),
    );
  }
  const fit = isRefusal(convergence) ? convergence : convergence.spearman;
  const spearman = { metric: 'dtw~sri', subject: 'spearman' } as const;
  const convergentCheck: ValidityCheck = isRefusal(fit)
    ? { ...spearman, estimate: null, p: null, met: null, error: fit.error }
    : design?.underpowered
      ? { ...spearman, estimate: fit.rho, p: fit.p, met: null, error: design.reason }
      : { ...spearman, estimate: fit.rho, p: fit.p, met: fit.rho >= settings.convergenceThreshold && fit.p < alpha };
  const specificity = verdictOf(
    specificityChecks,
    `no noise condition significantly elevated over the floor (bootstrap p < ${alpha}, BH across the noise conditions, with a positive elevation) and the pooled noise tier not either, under either metric`,
  );
  const sensitivity = verdictOf(
    sensitivityChecks,
    `pooled life events significantly elevated over the floor (bootstrap p < ${alpha}, positive) under both metrics`,
  );
  const convergent = verdictOf([convergentCheck], `Spearman ρ between DTW and SRI condition means ≥ ${settings.convergenceThreshold} with p < ${alpha}`);
  const verdicts = [specificity.verdict, sensitivity.verdict, convergent.verdict];
  const overall: Verdict = verdicts.includes('fail') ? 'fail' : verdicts.includes('undetermined') ? 'undetermined' : 'pass';
  return { specificity, sensitivity, convergent, overall };
}

function verdictOf(checks: ValidityCheck[], criterion: string): ValidityVerdict {
  const verdict = combine(checks);
  return { verdict, reason: reasonFor(verdict, criterion, checks), checks };
}

function reasonFor(verdict: Verdict, criterion: string, checks: readonly ValidityCheck[]): string {
  if (verdict === 'pass') return `Criterion met: ${criterion}.`;
  if (verdict === 'fail') {
    const failing = checks.filter((c) => c.met === false).map((c) => `${c.metric} ${c.subject}`);
    return `Criterion not met (${failing.join(', ')}): ${criterion}.`;
  }
  const missing = checks.filter((c) => c.met === null).map((c) => `${c.metric} ${c.subject}: ${c.error ?? 'not computed'}`);
  return missing.length > 0 ? `Cannot decide (${missing.join('; ')}): ${criterion}.` : `Cannot decide, nothing to check: ${criterion}.`;
}
