import { ConfigError } from '../core/errors.js';
import { resolveReaskChain } from '../experiment/reask.js';
import { auditRunId } from '../experiment/analyze-run.js';
import type { RunCellRecord, RunCellResultRecord, RunStore } from '../store/run-store.js';
import {
  analyzeMemory,
  type LabelledSample,
  type LabelledSampleStatus,
  type MemoryAnalysisOptions,
  type MemoryObservation,
  type MemoryReport,
  type MemorySampling,
  type PairingPolicy,
  type ScoredTrajectories,
  sampleFromCellLabels,
  scoreTrajectories,
} from './analysis.js';
import { type MemoryConfig, memoryConfigSchema } from './config.js';
import { type LabelerParseResult, parseLabelerOutput } from './labeler.js';
import { parseReferenceLabelerOutput } from './reference-labeler.js';
import { detectRefusal } from './refusals.js';
import {
  combineRefusal,
  parseRefusalJudgeOutput,
  REFUSAL_JUDGE_STAGE,
  type RefusalAgreement,
  refusalAgreement,
  type RefusalSource,
  refusalJudgeModel,
} from './refusal-judge.js';
import { type ChunkOutcome, chunkBudgetOf, chunkChainKey, labelingChunks, reassembleChunks } from './chunks.js';
import { type Ontology, validateOntology } from './ontology.js';
import { SAMPLE_SEEDINGS, type SampleSeeding, sharedSeedCells } from './plan.js';
import type { LabelRecord } from './reliability.js';
import {
  type LabelerCheckConfig,
  type LabelerCheckPass,
  labelerCheckPasses,
  MEMORY_EXPERIMENT,
  MEMORY_LABELER_CHECK_EXPERIMENT,
  type MemoryRunOptions,
  type RelabelItem,
  selectRelabelItems,
  stepsOfGeneration,
} from './run.js';
import type { StepMethod } from './steps.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * Reads a memory run back from the store: each generation cell with its steps
 * and its labels (the first labeler attempt that parses), then the analysis
 * input — every sample scored against the no-memory sample 0 of the same model
 * and question (docs/decisions.md#d8).
 */

/** What happened to one generation cell, beyond what the analysis needs. */
export type SampleOutcome =
  | 'labelled'
  /** Empty output after the runner's retries (dropout, docs/decisions.md#d3). */
  | 'empty'
  /** The call failed (or never ran). */
  | 'failed'
  /** The answer had no extractable step. */
  | 'no_steps'
  /** Labeler output unusable after every re-ask (docs/decisions.md#d2). */
  | 'invalid'
  /** The labeler call ended empty or failed, or was not made yet (an interrupted run). */
  | 'unlabelled'
  /** The model declined to answer (refusals.ts): excluded from drift, counted and compared with the floor. */
  | 'refused';

export interface MemorySampleRecord {
  generationKey: string;
  sample: LabelledSample;
  outcome: SampleOutcome;
  stepMethod: StepMethod | null;
  stepSource: 'text' | 'reasoning' | null;
  steps: string[];
  /** Labeler attempts used (1 = first answer parsed), or null without labeling. */
  labelerAttempts: number | null;
  /** Unknown labels turned into `unmapped` (unknownLabel: unmapped). */
  coercedUnknown: string[];
  /** Why the last labeler attempt failed to parse (invalid labelings only). */
  labelerFailure: string | null;
  /** Who decided whether the answer is a refusal (null when there was no answer). */
  refusalSource?: RefusalSource | null;
}

/** The refusal judge of a run: its verdicts, those it could not give, and its agreement with the detector. */
export interface RefusalJudgeSummary {
  model: string;
  /** Answers sent to the judge. */
  answers: number;
  /** Verdicts still unparseable after the re-asks (the detector decided those). */
  invalid: number;
  /** Judge calls that ended empty, failed or were not made (the detector decided those). */
  unanswered: number;
  agreement: RefusalAgreement;
  /** Refusals counted under the combination rule (judge when it has a verdict, detector otherwise). */
  refusals: number;
}

export interface MemoryCollectionSummary {
  generations: number;
  outcomes: Record<SampleOutcome, number>;
  stepMethods: Record<string, number>;
  stepSources: Record<string, number>;
  /** Answers longer than `steps.maxSteps`, and the steps cut from them (not labeled). */
  stepCap: { maxSteps: number; answersCut: number; stepsCut: number };
  /** Labelled samples by the attempt that parsed (1, 2, 3 …). */
  labelerAttempts: Record<string, number>;
  coercedUnknownLabels: number;
  /** Per target: outcomes of its generation cells (dropouts visible per target). */
  perTarget: Array<{ target: string } & Record<SampleOutcome, number>>;
  /** Invalid labelings by the parse failure of their last attempt (e.g. `json: …`, `count: …`). */
  labelerFailures: Record<string, number>;
  /** Step extraction per target × condition: how often each method was used (format compliance). */
  formatCompliance: FormatCompliance[];
  /** Targets that mostly ignore the step format (fewer than half of their answers in `<step_N>` tags or a reasoning trace). */
  formatWarnings: string[];
  /** The refusal judge's verdicts and agreement (absent when the run has no `refusalJudge`). */
  refusalJudge?: RefusalJudgeSummary;
}

export interface FormatCompliance {
  target: string;
  condition: string;
  answered: number;
  methods: Record<string, number>;
  /** Share of answered cells whose steps came from `<step_N>` tags or the model's reasoning trace. */
  compliant: number | null;
}

export interface MemoryCollection {
  runId: string;
  config: MemoryConfig;
  ontology: Ontology;
  records: MemorySampleRecord[];
  summary: MemoryCollectionSummary;
  /** The run's seeding and whether its samples are independent (the report warns when not). */
  sampling: MemorySampling;
}

const OUTCOMES: readonly SampleOutcome[] = ['labelled', 'empty', 'failed', 'no_steps', 'invalid', 'unlabelled', 'refused'];
/** What the analysis sees of each outcome: an answer with no step is unusable like an invalid labeling (nothing to align), an unlabelled one is a failed call. */
const ANALYSIS_STATUS: Record<SampleOutcome, LabelledSampleStatus> = {
  labelled: 'labelled',
  empty: 'empty',
  failed: 'failed',
  no_steps: 'invalid',
  invalid: 'invalid',
  unlabelled: 'failed',
  refused: 'refused',
};
const noOutcomes = () => Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<SampleOutcome, number>;

/** The latest memory run in a store, or the one named. */
export const memoryRunId = (store: RunStore, runId?: string): Promise<string> => auditRunId(store, MEMORY_EXPERIMENT, runId);

/** The validated config and the ontology recorded in a run's manifest. */
export async function memoryRunSetup(store: RunStore, runId: string): Promise<{ config: MemoryConfig; ontology: Ontology; options: MemoryRunOptions }> {
  const run = await store.requireRun(runId);
  const parsed = memoryConfigSchema.safeParse(run.manifest.config);
  if (!parsed.success) {
    throw new ConfigError(`the config recorded in run ${runId} does not validate with this echolens version: ${parsed.error.issues[0]?.message}`, {
      field: 'manifest.config',
    });
  }
  // Runs recorded before the step cap existed labeled every step: read them back uncapped.
  const rawSteps = (run.manifest.config as { steps?: { maxSteps?: unknown } } | undefined)?.steps;
  if (rawSteps?.maxSteps === undefined) parsed.data.steps.maxSteps = Number.MAX_SAFE_INTEGER;
  const options = run.manifest.options as MemoryRunOptions | undefined;
  if (options?.ontology === undefined) throw new ConfigError(`run ${runId} records no ontology`, { field: 'manifest.options.ontology' });
  return { config: parsed.data, ontology: validateOntology(options.ontology, `run ${runId} manifest`), options };
}

/** The text of a re-ask chain's cell: its answer when it is done. */
const doneText = { text: (cell: RunCellResultRecord) => (cell.result.status === 'done' ? cell.result.text : null) };

/**
 * Resolves one labeling chain (attempt 0, then each re-ask) the way the run
 * did: the first output that parses wins; a failed parse moves to the next
 * attempt; after the last re-ask the item is invalid.
 */
export function resolveLabeling(
  chain: ReadonlyMap<number, RunCellResultRecord>,
  stepCount: number | null,
  ontology: Ontology,
  config: Pick<MemoryConfig, 'labelerReasks' | 'unknownLabel' | 'allowUnmapped'>,
  format: 'echolens' | 'reference' = 'echolens',
): ChunkOutcome {
  const options = { stepCount, ontology, unknownLabel: config.unknownLabel, allowUnmapped: config.allowUnmapped };
  const parseLabels = (text: string): LabelerParseResult =>
    format === 'reference' ? parseReferenceLabelerOutput(text, options) : parseLabelerOutput(text, options);
  const resolved = resolveReaskChain(
    chain,
    doneText,
    (text) => {
      const parsed = parseLabels(text);
      return parsed.ok ? { ok: true, value: parsed } : { ok: false, error: parsed.reason };
    },
    config.labelerReasks,
  );
  if (resolved.status === 'ok') {
    return { symbols: resolved.value.symbols, outcome: 'labelled', attempts: resolved.attempts, coercedUnknown: resolved.value.coercedUnknown };
  }
  if (resolved.status === 'invalid') {
    const cut = resolved.cell.result.finishReason === 'length' ? ' (output cut at labelerDecoding.maxTokens)' : '';
    return { symbols: null, outcome: 'invalid', attempts: resolved.attempts, coercedUnknown: [], failure: `${resolved.error}${cut}` };
  }
  return { symbols: null, outcome: 'unlabelled', attempts: null, coercedUnknown: [] };
}

/** Labeling cells of a run grouped by (purpose, labeler, ontology wording, sample) then generation key and attempt. */
export function labelingChains<C extends RunCellResultRecord>(cells: readonly C[]): Map<string, Map<string, Map<number, C>>> {
  const out = new Map<string, Map<string, Map<number, C>>>();
  for (const cell of cells) {
    const l = cell.labels;
    if (l.stage !== 'labeling' || typeof l.generationKey !== 'string') continue;
    const slice = chainSlice(String(l.purpose), String(l.labeler), String(l.ontology), cell.sample);
    const chunk = typeof l.chunk === 'number' && typeof l.chunks === 'number' ? { index: l.chunk, count: l.chunks } : null;
    const byGeneration = getOrInsert(out, slice, () => new Map<string, Map<number, C>>());
    getOrInsert(byGeneration, chunkChainKey(l.generationKey, chunk), () => new Map<number, C>()).set(Number(l.attempt ?? 0), cell);
  }
  return out;
}

/**
 * The labeling of one answer's steps: its one-cell chain when the store holds one (every run
 * before chunking existed, and every answer that fits one call), else its chunks (chunks.ts)
 * resolved one by one and joined.
 */
export function resolveStepsLabeling(
  chains: ReadonlyMap<string, ReadonlyMap<number, RunCellRecord>>,
  generationKey: string,
  steps: readonly string[],
  ontology: Ontology,
  config: Pick<MemoryConfig, 'labelerReasks' | 'unknownLabel' | 'allowUnmapped' | 'steps'>,
  format: 'echolens' | 'reference' = 'echolens',
): ChunkOutcome {
  const whole = chains.get(generationKey);
  const chunks = labelingChunks(steps, chunkBudgetOf(config.steps));
  if (whole !== undefined || chunks.length <= 1) return resolveLabeling(whole ?? new Map(), steps.length, ontology, config, format);
  return reassembleChunks(
    chunks.map((chunk) => resolveLabeling(chains.get(chunkChainKey(generationKey, chunk)) ?? new Map(), chunk.to - chunk.from, ontology, config, format)),
  );
}

export function chainSlice(purpose: string, labeler: string, ontology: string, sample: number): string {
  return JSON.stringify([purpose, labeler, ontology, sample]);
}

/** The refusal judge's verdict per generation key, resolved through its re-ask chain. */
function refusalJudgeVerdicts(
  cells: readonly RunCellResultRecord[],
  model: string,
  reasks: number,
): Map<string, { status: 'ok'; value: boolean } | { status: 'invalid' | 'unanswered' }> {
  const chains = new Map<string, Map<number, RunCellResultRecord>>();
  for (const cell of cells) {
    const l = cell.labels;
    if (l.stage !== REFUSAL_JUDGE_STAGE || l.judge !== model || typeof l.generationKey !== 'string') continue;
    getOrInsert(chains, l.generationKey, () => new Map<number, RunCellResultRecord>()).set(Number(l.attempt ?? 0), cell);
  }
  const out = new Map<string, { status: 'ok'; value: boolean } | { status: 'invalid' | 'unanswered' }>();
  for (const [key, chain] of chains) {
    const resolved = resolveReaskChain(chain, doneText, parseRefusalJudgeOutput, reasks);
    out.set(key, resolved.status === 'ok' ? { status: 'ok', value: resolved.value } : { status: resolved.status });
  }
  return out;
}

/** Every generation cell of a memory run with its steps and labels. */
export async function collectMemorySamples(store: RunStore, runId: string): Promise<MemoryCollection> {
  const { config, ontology, options } = await memoryRunSetup(store, runId);
  const cells = await store.cellResultsOfRun(runId);
  const chains = labelingChains(cells).get(chainSlice('main', config.labeler, options.ontologySource, 0)) ?? new Map();
  // The run's labeler read either the steps or the whole response, and answered in echolens's or the authors' format.
  const wholeResponse = options.labelerInput === 'whole-response';
  const format = options.materials?.source === 'reference' ? 'reference' : 'echolens';
  const records: MemorySampleRecord[] = [];
  const summary: MemoryCollectionSummary = {
    generations: 0,
    outcomes: noOutcomes(),
    stepMethods: {},
    stepSources: {},
    labelerAttempts: {},
    coercedUnknownLabels: 0,
    perTarget: [],
    labelerFailures: {},
    stepCap: { maxSteps: config.steps.maxSteps ?? 64, answersCut: 0, stepsCut: 0 },
    formatCompliance: [],
    formatWarnings: [],
  };
  const judgeModel = config.refusalJudge === undefined ? null : refusalJudgeModel(config.refusalJudge);
  const verdicts = judgeModel === null ? null : refusalJudgeVerdicts(cells, judgeModel, config.labelerReasks);
  const judgeTally = { answers: 0, invalid: 0, unanswered: 0, refusals: 0, pairs: [] as Array<{ detector: boolean; judge: boolean }> };
  const compliance = new Map<string, FormatCompliance>();
  const perTarget = new Map<string, { target: string } & Record<SampleOutcome, number>>();
  for (const cell of cells) {
    const l = cell.labels;
    if (l.stage !== 'generation' || l.experiment !== MEMORY_EXPERIMENT) continue;
    const base = sampleFromCellLabels(l, { status: 'failed', symbols: null }, `cell ${cell.key}`);
    const record: MemorySampleRecord = {
      generationKey: cell.key,
      sample: base,
      outcome: 'failed',
      stepMethod: null,
      stepSource: null,
      steps: [],
      labelerAttempts: null,
      coercedUnknown: [],
      labelerFailure: null,
    };
    const result = cell.result;
    const answered = result.status === 'done' && result.text !== null && result.text.trim() !== '';
    const detector = result.status === 'done' ? detectRefusal(result.text).refusal : false;
    let judgeVerdict: boolean | null = null;
    if (verdicts !== null && answered) {
      const verdict = verdicts.get(cell.key) ?? { status: 'unanswered' as const };
      judgeTally.answers += 1;
      if (verdict.status === 'ok') {
        judgeVerdict = verdict.value;
        judgeTally.pairs.push({ detector, judge: verdict.value });
      } else judgeTally[verdict.status] += 1;
    }
    const refusal = combineRefusal(detector, judgeVerdict);
    if (answered) record.refusalSource = refusal.source;
    if (verdicts !== null && answered && refusal.refusal) judgeTally.refusals += 1;
    let symbols: string[] | null = null;
    if (result.status === 'empty') record.outcome = 'empty';
    else if (result.status === 'done' && result.text !== null && refusal.refusal) record.outcome = 'refused';
    else if (result.status === 'done' && result.text !== null) {
      const extraction = stepsOfGeneration(result.text, result.reasoning, config);
      if (extraction.cut > 0) {
        summary.stepCap.answersCut += 1;
        summary.stepCap.stepsCut += extraction.cut;
      }
      const ckey = JSON.stringify([base.target, base.condition]);
      const entry = getOrInsert(compliance, ckey, () => ({ target: base.target, condition: base.condition, answered: 0, methods: {}, compliant: null }));
      entry.answered += 1;
      entry.methods[extraction.method] = (entry.methods[extraction.method] ?? 0) + 1;
      if (extraction.method === 'tags' || extraction.source === 'reasoning') entry.compliant = (entry.compliant ?? 0) + 1;
      record.stepMethod = extraction.method;
      record.stepSource = extraction.source;
      record.steps = extraction.steps;
      summary.stepMethods[extraction.method] = (summary.stepMethods[extraction.method] ?? 0) + 1;
      summary.stepSources[extraction.source] = (summary.stepSources[extraction.source] ?? 0) + 1;
      if (extraction.steps.length === 0 && !(wholeResponse && result.text.trim() !== '')) record.outcome = 'no_steps';
      else {
        const labeling = wholeResponse
          ? resolveLabeling(chains.get(cell.key) ?? new Map(), null, ontology, config, format)
          : resolveStepsLabeling(chains, cell.key, extraction.steps, ontology, config, format);
        record.outcome = labeling.outcome;
        record.labelerAttempts = labeling.attempts;
        record.coercedUnknown = labeling.coercedUnknown;
        summary.coercedUnknownLabels += labeling.coercedUnknown.length;
        if (labeling.outcome === 'labelled') {
          symbols = labeling.symbols;
          const key = String(labeling.attempts);
          summary.labelerAttempts[key] = (summary.labelerAttempts[key] ?? 0) + 1;
        } else if (labeling.failure !== undefined) {
          record.labelerFailure = labeling.failure;
          summary.labelerFailures[labeling.failure] = (summary.labelerFailures[labeling.failure] ?? 0) + 1;
        }
      }
    }
    record.sample = { ...base, status: ANALYSIS_STATUS[record.outcome], symbols };
    summary.generations += 1;
    summary.outcomes[record.outcome] += 1;
    getOrInsert(perTarget, base.target, () => ({ target: base.target, ...noOutcomes() }))[record.outcome] += 1;
    records.push(record);
  }
  if (judgeModel !== null) {
    const { pairs, refusals, ...counts } = judgeTally;
    summary.refusalJudge = { model: judgeModel, ...counts, agreement: refusalAgreement(pairs), refusals };
  }
  summary.perTarget = [...perTarget.values()].sort((a, b) => a.target.localeCompare(b.target));
  summary.formatCompliance = [...compliance.values()]
    .map((entry) => ({ ...entry, compliant: (entry.compliant ?? 0) / entry.answered }))
    .sort((a, b) => a.target.localeCompare(b.target) || a.condition.localeCompare(b.condition));
  for (const target of new Set(summary.formatCompliance.map((c) => c.target))) {
    const rows = summary.formatCompliance.filter((c) => c.target === target);
    const answered = rows.reduce((sum, c) => sum + c.answered, 0);
    const compliant = rows.reduce((sum, c) => sum + (c.compliant ?? 0) * c.answered, 0);
    if (answered > 0 && compliant / answered < 0.5) {
      summary.formatWarnings.push(
        `${target} gave its steps in <step_N> tags (or a reasoning trace) in only ${((100 * compliant) / answered).toFixed(0)} % of ${answered} answers: ` +
          'its steps were cut from lists, paragraphs or sentences, which changes what the labeler sees — check the system prompt and the per-condition counts',
      );
    }
  }
  return { runId, config, ontology, records, summary, sampling: await memorySampling(store, runId) };
}

const samplesOf = (collection: MemoryCollection) => collection.records.map((r) => r.sample);

/** A collection's samples scored; under `procedure: reference` an unusable labeler output is scored as the authors' empty sequence. */
const scoreCollection = (collection: MemoryCollection, pairing: PairingPolicy): ScoredTrajectories =>
  scoreTrajectories(samplesOf(collection), { pairing, emptySequences: collection.config.procedure === 'reference' ? 'authors' : 'exclude' });

/** A collection's samples scored under `pairing`, excluding unusable labels (what the document, viewer and compare read). */
export const collectionObservations = (collection: MemoryCollection, pairing: PairingPolicy): MemoryObservation[] =>
  scoreTrajectories(samplesOf(collection), { pairing }).observations;

export interface MemoryObservationOptions {
  /** `reference` (default, docs/decisions.md#d8) or `all-pairs`. */
  pairing?: PairingPolicy;
}

/** The scored trajectories of a run (observations plus missing references and exclusion counts). */
export async function scoreMemoryRun(store: RunStore, runId: string, options: MemoryObservationOptions = {}): Promise<ScoredTrajectories> {
  return scoreCollection(await collectMemorySamples(store, runId), options.pairing ?? 'reference');
}

export interface MemoryReportOptions extends MemoryAnalysisOptions, MemoryObservationOptions {}

/**
 * Which seeding a run used and whether its samples were drawn independently: the scheme
 * recorded in its config, checked against the seeds of the stored generation requests.
 */
export async function memorySampling(store: RunStore, runId: string): Promise<MemorySampling> {
  const raw = (await store.requireRun(runId)).manifest.config as { sampleSeeds?: unknown } | undefined;
  const recorded = raw?.sampleSeeds;
  const seeding = SAMPLE_SEEDINGS.includes(recorded as SampleSeeding) ? (recorded as SampleSeeding) : 'unrecorded';
  const seeds = (await store.cellsOfRun(runId))
    .filter((cell) => cell.labels.stage === 'generation' && cell.labels.experiment === MEMORY_EXPERIMENT)
    .map((cell) => ({ seed: cell.request.params.seed, target: String(cell.labels.target), question: String(cell.labels.question_id) }));
  const shared = sharedSeedCells(seeds);
  const note =
    shared === 0
      ? seeding === 'none'
        ? 'no seed was sent: samples are independent if the provider draws fresh ones'
        : 'every generation cell of a (target, question) has its own seed: samples are independent'
      : `${shared} generation cells share a seed with another cell of the same target and question (sampleSeeds: ${seeding}); ` +
        'with a provider that honours seeds those samples repeat each other (e.g. perturbed sample 0 repeats the no-memory reference), ' +
        'which biases elevation and d_rel — re-run with sampleSeeds: cell';
  return { seeding, sharedSeedCells: shared, independent: shared === 0, note };
}

/** Analyses a memory run: B and seed from the run's config unless given. */
export async function memoryReport(store: RunStore, runId: string, options: MemoryReportOptions = {}): Promise<MemoryReport> {
  return analyzeMemoryCollection(await collectMemorySamples(store, runId), options);
}

/**
 * The one analysis of a memory run (pure over what `collectMemorySamples` read): `memory report`,
 * the library's `memoryReport` and the audit's `analyze` (echolens report, gate, viewer) all
 * come here, so they carry the same numbers and the same sampling warning.
 */
export function analyzeMemoryCollection(collection: MemoryCollection, options: MemoryReportOptions = {}): MemoryReport {
  const { config } = collection;
  const { pairing, ...analysis } = options;
  const { observations } = scoreCollection(collection, pairing ?? config.analysis.pairing);
  const report = analyzeMemory(observations, { B: config.analysis.B, seed: config.seed, alpha: config.analysis.alpha, ...analysis });
  return { ...report, sampling: collection.sampling };
}

/** Generation cells of a memory run as relabel items (key, plan labels, steps). */
export async function relabelItems(collection: MemoryCollection, store: RunStore): Promise<RelabelItem[]> {
  const labelsByKey = new Map<string, RunCellRecord['labels']>();
  for (const cell of await store.cellResultsOfRun(collection.runId)) if (cell.labels.stage === 'generation') labelsByKey.set(cell.key, cell.labels);
  return collection.records.map((r) => ({ generationKey: r.generationKey, labels: labelsByKey.get(r.generationKey) ?? {}, steps: r.steps }));
}

/** One relabelling pass (its names) with what became of its items. */
export type LabelerCheckPassCounts = Pick<LabelerCheckPass, 'labeler' | 'run' | 'wording'> & Record<'items' | ChunkOutcome['outcome'], number>;

export interface LabelerCheckCollection {
  checkRunId: string;
  memoryRunId: string;
  check: LabelerCheckConfig;
  records: LabelRecord[];
  passes: LabelerCheckPassCounts[];
}

/**
 * Reads a labeler check back as reliability records: one per step and pass;
 * `label: null` for a response whose labels stayed invalid after the re-asks
 * (unanswered labelings are left out and counted).
 */
export async function collectLabelerCheck(store: RunStore, checkRunId: string): Promise<LabelerCheckCollection> {
  const run = await store.requireRun(checkRunId);
  if (run.experiment !== MEMORY_LABELER_CHECK_EXPERIMENT) {
    throw new ConfigError(`run ${checkRunId} is a ${run.experiment} run, not a labeler check`, { field: 'run' });
  }
  const check = run.manifest.config as LabelerCheckConfig;
  const collection = await collectMemorySamples(store, check.run);
  const { options } = await memoryRunSetup(store, check.run);
  const passes: LabelerCheckPass[] = labelerCheckPasses(collection.config, { ontology: collection.ontology, source: options.ontologySource }, check);
  const selected = selectRelabelItems(await relabelItems(collection, store), check.limit, check.seed);
  const chains = labelingChains(await store.cellResultsOfRun(checkRunId));
  const records: LabelRecord[] = [];
  const counts: LabelerCheckPassCounts[] = [];
  for (const pass of passes) {
    const slice = chains.get(chainSlice(pass.purpose, pass.labeler, pass.ontologySource, pass.sample)) ?? new Map();
    const count: LabelerCheckPassCounts = {
      labeler: pass.labeler,
      run: pass.run,
      wording: pass.wording,
      items: selected.length,
      labelled: 0,
      invalid: 0,
      unlabelled: 0,
    };
    for (const item of selected) {
      const outcome = resolveStepsLabeling(slice, item.generationKey, item.steps, pass.ontology, collection.config);
      count[outcome.outcome] += 1;
      if (outcome.outcome === 'unlabelled') continue;
      item.steps.forEach((_, step) => {
        records.push({
          item: item.generationKey,
          step: step + 1,
          labeler: pass.labeler,
          run: pass.run,
          wording: pass.wording,
          label: outcome.symbols?.[step] ?? null,
        });
      });
    }
    counts.push(count);
  }
  return { checkRunId, memoryRunId: check.run, check, records, passes: counts };
}
