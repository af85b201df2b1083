import { configPath } from '../core/config-path.js';
import { dirname, resolve } from 'node:path';
import { hashCanonical } from '../core/canonical-json.js';
import { loadConfigFile } from '../core/config-file.js';
import { definedFields } from '../core/copy-defined.js';
import { ConfigError, EcholensError } from '../core/errors.js';
import type { ParsedItem, StageRuntime } from '../experiment/runtime.js';
import type { AuditRunner, AuditRunResult, AuditRunSummary, StagedAuditRunner } from '../experiment/audit.js';
import type { PreflightProblem } from '../experiment/preflight.js';
import { estimateCells, type PlanEstimate } from '../models/estimate.js';
import { loadPriceTable } from '../models/prices.js';
import { countTokens } from '../models/token-count.js';
import { getProvider } from '../models/providers.js';
import { parseModelRef } from '../models/ref.js';
import type { DecodingParams } from '../models/types.js';
import type { CellLabels, CellSpec } from '../store/types.js';
import { isBuiltinMaterials } from '../materials/files.js';
import type { ChatMessage } from '../models/types.js';
import { isEmbeddingsFile, type MemoryConfig, memoryConfigSchema, memoryLabelerInput, resolveMemorySystemPrompt } from './config.js';
import { builtinStimuliManifest } from './data-files.js';
import {
  buildLabelerReaskMessages,
  buildPassageLabelerMessages,
  type LabelerParseResult,
  legacyLabelerMessages,
  parseLabelerOutput,
  typicalLabelerAnswer,
} from './labeler.js';
import { reaskMessages } from './judge-messages.js';
import { checkMaterialsConfig, loadMemoryMaterials, type MemoryMaterials, type ReferenceMemoryTexts } from './materials.js';
import { checkNoiseFloor, completeReferenceStimuli, type ConditionSource } from './materials-stimuli.js';
import { registerSimMemoryTexts } from './sim.js';
import { buildReferenceLabelerMessages, parseReferenceLabelerOutput, referencePassage } from './reference-labeler.js';
import { buildRaterMessages, buildRaterReaskMessages, parseRaterOutput, RATER_DEFAULT_PARAMS, type RaterVerdict } from './rater.js';
import { loadBuiltinOntology, loadOntologyFile, type Ontology, ontologySymbols } from './ontology.js';
import { loadBuiltinPerturbations, loadPerturbationsFile, type PerturbationSet } from './perturbations.js';
import { DRIFTLENS_FILES } from '../materials/driftlens.js';

const BUILTIN_PERTURBATIONS_FILE = 'data/memory-drift/perturbations.json';
const REFERENCE_INTERVENTIONS_FILE = DRIFTLENS_FILES.interventions;
import { assignSampleSeeds, buildGenerationPlan, buildLabelerCell } from './plan.js';
import { separateUnitDraws } from '../store/draw-units.js';
import { seededOrder } from './seeded-order.js';
import { loadBuiltinQuestions, loadQuestionsFile, type Question, type QuestionSet } from './questions.js';
import { detectRefusal } from './refusals.js';
import { combineRefusal, refusalJudgeItem, refusalJudgeModel } from './refusal-judge.js';
import { chunkBudgetOf, clipStep, labelingChunks, type StepChunk } from './chunks.js';
import { extractSteps, type StepExtraction } from './steps.js';

export const MEMORY_EXPERIMENT = 'memory';

/** Loads a config; file paths (questions, ontology, perturbations, reference-metric embeddings) may use `~/` and are relative to the config file's folder. */
export function loadMemoryConfig(file: string, overrides: readonly string[] = []): MemoryConfig {
  const config = loadConfigFile(file, memoryConfigSchema, overrides).config;
  const base = dirname(resolve(file));
  const place = (path: string) => configPath(path, base);
  return {
    ...config,
    questions: config.questions.file === undefined ? config.questions : { ...config.questions, file: place(config.questions.file) },
    ontology: config.ontology === 'default' || config.ontology === 'alt' ? config.ontology : place(config.ontology),
    perturbations: config.perturbations === 'builtin' ? config.perturbations : place(config.perturbations),
    ...(config.materials !== undefined && !isBuiltinMaterials(config.materials) ? { materials: place(config.materials) } : {}),
    ...(config.referenceMetric !== undefined && isEmbeddingsFile(config.referenceMetric.embeddings)
      ? { referenceMetric: { ...config.referenceMetric, embeddings: place(config.referenceMetric.embeddings) } }
      : {}),
  };
}

/** Everything a run reads besides the config: resolved once, fingerprinted, recorded. */
export interface MemoryStimuli {
  questions: QuestionSet;
  ontology: Ontology;
  /** `builtin:default`, `builtin:alt` or the file path. */
  ontologySource: string;
  perturbations: PerturbationSet;
  perturbationsSource: string;
  /** Perturbation category ids run, no_perturbation first. */
  conditions: string[];
  /** Where the texts came from (echolens's or a DriftLens clone), with file hashes. */
  materials?: MemoryMaterials;
  /** With a DriftLens clone: where each condition's strings came from (authors' materials, echolens built-in, user file). */
  conditionSources?: ConditionSource[];
  /** With questions.source benchmark: rows read, duplicates, and what the App. A filters removed. */
  benchmark?: BenchmarkSummary;
}

export interface BenchmarkSummary {
  rows: number;
  duplicates: number;
  curation: string;
  removed: Array<{ id: string; verdict: string; phrases: string[] }>;
}

export interface ResolveStimuliOptions {
  /** Injectable fetch for the Hugging Face loader (tests use a 127.0.0.1 server). */
  fetch?: typeof fetch;
  env?: Record<string, string | undefined>;
}

/** A loader's input error as a config error on `field` (an unexpected error passes through). */
function asConfigError(field: string, error: unknown): never {
  if (error instanceof EcholensError) throw new ConfigError(error.message, { field });
  throw error;
}

function wrapConfigError<T>(field: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    asConfigError(field, error);
  }
}

/** Filters (ids, domains), then limit, then a seeded subset, keeping source order. */
export function selectQuestions(questions: readonly Question[], config: MemoryConfig['questions'], seed: number): Question[] {
  let selected = [...questions];
  if (config.ids !== undefined) {
    const known = new Set(selected.map((q) => q.id));
    config.ids.forEach((id, index) => {
      if (!known.has(id)) throw new ConfigError(`no question with id "${id}"`, { field: `questions.ids.${index}` });
    });
    const wanted = new Set(config.ids);
    selected = selected.filter((q) => wanted.has(q.id));
  }
  if (config.domains !== undefined) {
    const wanted = new Set(config.domains);
    selected = selected.filter((q) => wanted.has(q.domain));
    if (selected.length === 0) {
      const domains = [...new Set(questions.map((q) => q.domain))].sort().join(', ');
      throw new ConfigError(`no question in these domains (domains present: ${domains})`, { field: 'questions.domains' });
    }
  }
  if (config.limit !== undefined) selected = selected.slice(0, config.limit);
  if (config.sample !== undefined && config.sample < selected.length) selected = seededSubset(selected, config.sample, seed, 'question', (q) => q.id);
  return selected;
}

/** The first `count` of `items` in a seeded order, kept in their own order. */
function seededSubset<T>(items: readonly T[], count: number, seed: number, salt: string, keyOf: (item: T) => string): T[] {
  const chosen = new Set(seededOrder(items, seed, salt, keyOf).slice(0, count).map(keyOf));
  return items.filter((item) => chosen.has(keyOf(item)));
}

async function loadQuestionSet(
  config: MemoryConfig,
  options: ResolveStimuliOptions,
  materials?: MemoryMaterials,
): Promise<QuestionSet & { benchmark?: BenchmarkSummary }> {
  const q = config.questions;
  if (q.source === 'builtin') return loadBuiltinQuestions();
  if (q.source === 'benchmark') {
    const reference = materials?.reference;
    // Benchmark and Hugging Face readers, the preflight and the run lifecycle load when a run needs
    // them: reports and the gate read none of them (issue #44).
    const { loadBenchmarkFile } = await import('./benchmark-files.js');
    const loaded = await loadBenchmarkFile({
      file: q.file as string,
      ...definedFields(q, ['column', 'domainColumn', 'domain']),
      ...(reference
        ? { instruction: reference.instruction, interventions: reference.perturbations.categories.flatMap((c) => c.stimuli.map((s) => s.text)) }
        : {}),
      curation: q.curation ?? 'none',
    }).catch((error: unknown) => asConfigError('questions.file', error));
    return {
      ...loaded.set,
      benchmark: {
        rows: loaded.rows,
        duplicates: loaded.duplicates,
        curation: q.curation ?? 'none',
        removed: loaded.removed.map((r) => ({ id: r.id, verdict: r.verdict, phrases: r.phrases })),
      },
    };
  }
  if (q.source === 'file') return wrapConfigError('questions.file', () => loadQuestionsFile(q.file as string));
  const { loadHuggingFaceQuestions } = await import('./hf-datasets.js');
  return loadHuggingFaceQuestions({
    dataset: q.dataset as string,
    ...(q.hfConfig !== undefined ? { config: q.hfConfig } : {}),
    ...definedFields(q, ['split', 'column', 'idColumn', 'domainColumn', 'domain']),
    // Read only what the selection can use when nothing filters by id or domain.
    ...(q.limit !== undefined && q.ids === undefined && q.domains === undefined ? { limit: q.limit } : {}),
    ...(q.hfBaseUrl !== undefined ? { baseUrl: q.hfBaseUrl } : {}),
    ...definedFields(options, ['fetch', 'env']),
  }).catch((error: unknown) => asConfigError('questions.dataset', error));
}

export function loadMemoryOntology(name: string): { ontology: Ontology; source: string } {
  if (name === 'default' || name === 'alt') return { ontology: loadBuiltinOntology(name), source: `builtin:${name}` };
  return { ontology: wrapConfigError('ontology', () => loadOntologyFile(name)), source: name };
}

/** Loads and selects the questions, the ontology and the perturbations a config names. */
export async function resolveMemoryStimuli(config: MemoryConfig, options: ResolveStimuliOptions = {}): Promise<MemoryStimuli> {
  checkMaterialsConfig(config);
  const materials = loadMemoryMaterials(config.materials);
  const { benchmark, ...set } = await loadQuestionSet(config, options, materials);
  const questions = selectQuestions(set.questions, config.questions, config.seed);
  const reference = materials.reference;
  const { ontology, source: ontologySource } = reference
    ? { ontology: reference.ontology, source: 'materials:data/ontology.json' }
    : loadMemoryOntology(config.ontology);
  const own =
    config.perturbations === 'builtin' ? loadBuiltinPerturbations() : wrapConfigError('perturbations', () => loadPerturbationsFile(config.perturbations));
  const ownSource =
    config.perturbations === 'builtin' ? { kind: 'builtin' as const, file: BUILTIN_PERTURBATIONS_FILE } : { kind: 'file' as const, file: config.perturbations };
  // The authors release persona strings only: noise and life events come from echolens's set or the user's file.
  const completed = reference ? completeReferenceStimuli(reference.perturbations, REFERENCE_INTERVENTIONS_FILE, own, ownSource) : null;
  const perturbations = completed ? completed.perturbations : own;
  const known = perturbations.categories.map((c) => c.id);
  const none = perturbations.categories.find((c) => c.tier === 'none');
  if (none === undefined) {
    throw new ConfigError('the perturbation set needs a category of tier "none" (the no-memory reference)', { field: 'perturbations' });
  }
  let conditions: string[];
  if (config.conditions === 'all') conditions = known;
  else {
    config.conditions.forEach((id, index) => {
      if (!known.includes(id)) {
        throw new ConfigError(`unknown perturbation category "${id}" (known: ${known.join(', ')})`, { field: `conditions.${index}` });
      }
    });
    // The no-memory category always runs: it holds every comparison's reference.
    conditions = known.filter((id) => id === none.id || config.conditions.includes(id));
  }
  const ordered = [none.id, ...conditions.filter((id) => id !== none.id)];
  if (completed) checkNoiseFloor(ordered, perturbations, ownSource.file);
  if ([...config.targets, config.labeler].some((model) => model.startsWith('sim:'))) {
    // Simulated models read the run's own stimuli and prompt formats (sim.ts, registerSimMemoryTexts).
    registerSimMemoryTexts({ perturbations, ...(reference ? { reference } : {}) });
  }
  const ownName = config.perturbations === 'builtin' ? 'builtin' : config.perturbations;
  return {
    questions: { ...set, questions },
    ontology,
    ontologySource,
    perturbations,
    perturbationsSource: reference ? `materials:${REFERENCE_INTERVENTIONS_FILE} + ${ownName}` : ownName,
    conditions: ordered,
    materials,
    ...(completed ? { conditionSources: completed.sources.filter((s) => ordered.includes(s.condition)) } : {}),
    ...(benchmark ? { benchmark } : {}),
  };
}

/** A fingerprint of what the plan depends on besides the config (files can change under a path). */
export function stimuliFingerprint(stimuli: MemoryStimuli): string {
  return hashCanonical({
    questions: stimuli.questions.questions,
    ontology: stimuli.ontology,
    perturbations: stimuli.perturbations,
    conditions: stimuli.conditions,
    // A clone's prompts can change under the same path: their hashes are part of the fingerprint.
    ...(stimuli.materials?.reference ? { materials: stimuli.materials.record.files } : {}),
  }).slice(0, 16);
}

function providerKind(model: string): string | undefined {
  try {
    return getProvider(parseModelRef(model).provider)?.kind;
  } catch {
    return undefined;
  }
}

export function memoryDecodingParams(decoding: MemoryConfig['decoding'] | MemoryConfig['labelerDecoding'], model: string): DecodingParams {
  const params: DecodingParams = { temperature: decoding.temperature, maxTokens: decoding.maxTokens };
  // Anthropic's current models reject a request that sets both temperature and top_p, so
  // top_p (the paper's vLLM setting) is not sent there; the stored cell shows what was sent.
  if (decoding.topP !== null && !(providerKind(model) === 'anthropic' && decoding.temperature !== null && decoding.temperature !== undefined)) {
    params.topP = decoding.topP;
  }
  // "top-k 50 where supported" (App. I.3): OpenAI's API has no top_k.
  if (decoding.topK !== null && providerKind(model) !== 'openai') params.topK = decoding.topK;
  return { ...params, ...definedFields(decoding as MemoryConfig['labelerDecoding'], ['thinkingBudget', 'chatTemplateKwargs', 'seed']) };
}

/** The generation stage as cells: every target × question × condition × stimulus × sample. */
export function planMemoryGeneration(config: MemoryConfig, stimuli: MemoryStimuli): CellSpec[] {
  const systemPrompt = resolveMemorySystemPrompt(config.systemPrompt);
  const specs: CellSpec[] = [];
  for (const target of config.targets) {
    const plan = buildGenerationPlan({
      questions: stimuli.questions.questions,
      perturbations: stimuli.perturbations,
      targets: [target],
      k: config.k,
      conditions: stimuli.conditions,
      stimuliPerCategory: config.stimuliPerCategory,
      mode: config.injection,
      params: memoryDecodingParams(config.decoding, target),
      messageOptions: {
        ...(systemPrompt !== undefined ? { systemPrompt } : {}),
        ...(stimuli.materials?.reference ? { reference: stimuli.materials.reference } : {}),
      },
      seed: config.seed,
    });
    assignSampleSeeds(plan, config.sampleSeeds, config.seed);
    // Questions are the units: under `cell` seeding no request repeats across them; under the other
    // seedings, questions of the same text would share draws, so each gets its own (docs/statistics.md).
    const separated = separateUnitDraws(plan, (spec) => String(spec.labels.question_id)).specs;
    specs.push(...separated.map((spec) => withModelIdentity(spec, config)));
  }
  return specs;
}

/** Marks a cell's request with the config's model-identity rule (`identity: url` hashes the base URL too). */
export function withModelIdentity<T extends CellSpec>(spec: T, config: Pick<MemoryConfig, 'identity'>): T {
  if (config.identity === 'url') spec.request.identity = 'url';
  return spec;
}

/** Which generation cell a judge or labeler cell reads: its key and plan labels. */
const generationLabels = (generation: CellLabels, generationKey: string): CellLabels => ({
  generationKey,
  target: generation.target ?? null,
  question_id: generation.question_id ?? null,
  condition: generation.condition ?? null,
  sample: generation.sample ?? null,
});

/** Labels of a refusal-judge cell: which generation cell it judges. */
export function refusalJudgeLabels(generation: CellLabels, generationKey: string): CellLabels {
  return { experiment: MEMORY_EXPERIMENT, ...generationLabels(generation, generationKey) };
}

/** A step extraction after the step cap: `cut` = steps dropped beyond `steps.maxSteps`. */
export type CappedExtraction = StepExtraction & { cut: number };

/** The steps the labeler sees for a generation result (docs/decisions.md#d7), at most `steps.maxSteps` of them. */
export function stepsOfGeneration(text: string, reasoning: string | null, config: MemoryConfig): CappedExtraction {
  const extraction = extractSteps(text, { reasoning, source: config.steps.source });
  const max = config.steps.maxSteps ?? 64;
  if (extraction.steps.length <= max) return { ...extraction, cut: 0 };
  return { ...extraction, steps: extraction.steps.slice(0, max), cut: extraction.steps.length - max };
}

/**
 * Output budget of a labeling call: the configured maxTokens, raised when the step count needs
 * more (about 32 tokens per `{ "step": n, "label": "Category/Subcategory" }` entry plus the
 * wrapper), so long answers are not cut mid-JSON.
 */
export function labelerTokenBudget(configured: number, steps: number): number {
  return Math.max(configured, 128 + 32 * steps);
}

export interface LabelerPlanOptions {
  labeler: string;
  ontology: Ontology;
  /** The whole response, when the labeler reads it instead of the steps (labelerInput: whole-response). */
  passage?: string;
  /** The authors' labeler prompt and output format (DriftLens materials). */
  reference?: Pick<ReferenceMemoryTexts, 'mappingTemplate' | 'ontologyText'>;
  /** Decoding of the labeler (default: the config's labelerDecoding). */
  params?: DecodingParams;
  sample?: number;
  labels: CellLabels;
}

/** One labeling item: a cell whose output must parse, re-asked on failure (docs/decisions.md#d2). */
export function labelingItem(steps: readonly string[], config: MemoryConfig, options: LabelerPlanOptions): ParsedItem<string[]> {
  const stepCount = options.passage === undefined ? steps.length : null;
  const parseOptions = {
    stepCount,
    ontology: options.ontology,
    unknownLabel: config.unknownLabel,
    allowUnmapped: config.allowUnmapped,
  } as const;
  const params = options.params ?? memoryDecodingParams(config.labelerDecoding, options.labeler);
  const spec = buildLabelerCell(steps.length > 0 ? steps : ['(whole response)'], options.ontology, {
    model: options.labeler,
    params: { ...params, maxTokens: labelerTokenBudget(params.maxTokens ?? config.labelerDecoding.maxTokens, steps.length) },
    allowUnmapped: config.allowUnmapped,
    labels: { ...options.labels, labeler: options.labeler, attempt: 0 },
  });
  const reference = options.reference;
  if (reference) {
    spec.request.messages = buildReferenceLabelerMessages(
      referencePassage(options.passage !== undefined ? { passage: options.passage } : { steps }),
      reference,
    );
  } else if (options.passage !== undefined) {
    spec.request.messages = buildPassageLabelerMessages(options.passage, options.ontology, { allowUnmapped: config.allowUnmapped });
  }
  if (options.sample !== undefined) spec.request.sample = options.sample;
  withModelIdentity(spec, config);
  const legacy = reference ? null : legacyLabelerMessages(spec.request.messages);
  if (legacy !== null) spec.legacyRequests = [{ ...spec.request, messages: legacy }];
  const parse = (text: string): LabelerParseResult => (reference ? parseReferenceLabelerOutput(text, parseOptions) : parseLabelerOutput(text, parseOptions));
  return {
    spec,
    parse(text) {
      const parsed = parse(text);
      return parsed.ok ? { ok: true, value: parsed.symbols } : { ok: false, error: `${parsed.reason}: ${parsed.detail}` };
    },
    reask(previous, badOutput) {
      const parsed = parse(badOutput);
      const failure = parsed.ok ? { reason: 'schema' as const, detail: 'unusable answer' } : parsed;
      return reference ? referenceReask(previous, badOutput, failure.detail) : buildLabelerReaskMessages(previous, badOutput, failure, stepCount);
    },
  };
}

/** A labeling item with the generation it belongs to and its chunk (null = the whole answer in one call). */
export interface ChunkedLabelingItem {
  item: ParsedItem<string[]>;
  chunk: StepChunk | null;
}

/**
 * The labeling items of one answer: one cell when its steps fit one labeler call (the same cell
 * as before chunking existed), else one cell per chunk of consecutive steps (chunks.ts), each
 * labelled `chunk`, `chunks` and `chunk_steps` (1-based, inclusive). Whole-response labeling is
 * never chunked (the labeler splits the response itself).
 */
export function labelingItems(steps: readonly string[], config: MemoryConfig, options: LabelerPlanOptions): ChunkedLabelingItem[] {
  const budget = chunkBudgetOf(config.steps);
  if (options.passage !== undefined || steps.length === 0) return [{ item: labelingItem(steps, config, options), chunk: null }];
  const chunks = labelingChunks(steps, budget);
  const clipped = (range: readonly string[]) => range.map((step) => clipStep(step, budget.maxChars));
  if (chunks.length === 1) return [{ item: labelingItem(clipped(steps), config, options), chunk: null }];
  return chunks.map((chunk) => ({
    chunk,
    item: labelingItem(clipped(steps.slice(chunk.from, chunk.to)), config, {
      ...options,
      labels: { ...options.labels, chunk: chunk.index, chunks: chunk.count, chunk_steps: `${chunk.from + 1}-${chunk.to}` },
    }),
  }));
}

/** Per labeling (generation), from the outcomes of its chunk items: invalid if any chunk is, unanswered if any chunk is not answered. */
export function labelingTallies(
  owners: readonly number[],
  outcomes: readonly ({ status: string } | undefined)[],
): { labelings: number; invalid: number; unanswered: number } {
  const byOwner = new Map<number, string[]>();
  owners.forEach((owner, index) => {
    byOwner.set(owner, [...(byOwner.get(owner) ?? []), outcomes[index]?.status ?? 'unanswered']);
  });
  let invalid = 0;
  let unanswered = 0;
  for (const statuses of byOwner.values()) {
    if (statuses.includes('invalid')) invalid += 1;
    else if (statuses.some((status) => status !== 'ok')) unanswered += 1;
  }
  return { labelings: byOwner.size, invalid, unanswered };
}

/** A re-ask in the reference's output format (the reference itself never re-asks; echolens does, as configured). */
function referenceReask(previous: readonly ChatMessage[], badOutput: string, detail: string): ChatMessage[] {
  return reaskMessages(
    previous,
    badOutput,
    `Your answer could not be used (${detail}). Reply with only the JSON array of steps inside <answer></answer> tags, as asked above, each symbol copied from the ontology.`,
  );
}

/** The labeler's input and texts for a run: whole response or steps, echolens's prompt or the authors'. */
export function labelerTextsOf(
  config: MemoryConfig,
  stimuli: Pick<MemoryStimuli, 'materials'>,
): Pick<LabelerPlanOptions, 'reference'> & { wholeResponse: boolean } {
  return {
    wholeResponse: memoryLabelerInput(config) === 'whole-response',
    ...(stimuli.materials?.reference ? { reference: stimuli.materials.reference } : {}),
  };
}

/** Labels of a labeling cell: which generation cell it labels and for what purpose. */
export function memoryLabelingLabels(
  generation: CellLabels,
  generationKey: string,
  purpose: string,
  ontology: string,
  extraction?: Pick<StepExtraction, 'method' | 'source' | 'steps'> & { cut?: number },
): CellLabels {
  return {
    // docs/decisions.md#d7: the segmentation method is recorded with the cell that labels its steps.
    ...(extraction ? { step_method: extraction.method, step_source: extraction.source, step_count: extraction.steps.length } : {}),
    ...(extraction?.cut ? { steps_cut: extraction.cut } : {}),
    experiment: MEMORY_EXPERIMENT,
    stage: 'labeling',
    purpose,
    ontology,
    ...generationLabels(generation, generationKey),
  };
}

export interface MemoryDryRun {
  questions: number;
  conditions: number;
  generationCells: number;
  labelerCells: number;
  /** Refusal-judge cells (one per generation) when `refusalJudge` is set. */
  judgeCells?: number;
  estimate: PlanEstimate;
}

/** A step list of typical size for estimating labeler prompts before any output exists. */
const ESTIMATE_STEPS = Array.from({ length: 5 }, (_, i) => `Step ${i + 1}: ${'weighing the options and what matters here '.repeat(3).trim()}.`);

/** Counts cells and estimates tokens and dollars; calls nothing. One labeler call per generation cell is assumed. */
export function dryRunMemory(config: MemoryConfig, stimuli: MemoryStimuli, specs: readonly CellSpec[], priceFile?: string): MemoryDryRun {
  const labelerSpecs = specs.map(
    (_spec, index) =>
      labelingItem([...ESTIMATE_STEPS, `estimate ${index}`], config, {
        labeler: config.labeler,
        ontology: stimuli.ontology,
        labels: { stage: 'labeling', purpose: 'estimate' },
      }).spec,
  );
  // One refusal-judge cell per answer when a judge is set (judged on a typical answer's text).
  const judge = config.refusalJudge;
  const judgeSpecs =
    judge === undefined ? [] : specs.map((_spec, index) => refusalJudgeItem(`${ESTIMATE_STEPS.join('\n')}\nestimate ${index}`, judge, {}).spec);
  const prices = loadPriceTable(priceFile ? { file: priceFile } : {});
  const labelerAnswerTokens = countTokens(typicalLabelerAnswer(ESTIMATE_STEPS.length + 1, stimuli.ontology));
  return {
    questions: stimuli.questions.questions.length,
    conditions: stimuli.conditions.length,
    generationCells: specs.length,
    labelerCells: labelerSpecs.length,
    ...(judgeSpecs.length > 0 ? { judgeCells: judgeSpecs.length } : {}),
    // A labeler answers in a fixed JSON form: its output is priced at that form's length, not the generic 400 tokens.
    estimate: estimateCells([...specs, ...labelerSpecs, ...judgeSpecs], prices, {
      expectedOutputOf: (spec) => (spec.labels.stage === 'labeling' ? labelerAnswerTokens : undefined),
    }),
  };
}

export interface MemoryPreflight {
  stimuli: MemoryStimuli;
  specs: CellSpec[];
  /** Every model the run calls (targets, judges, labelers), as the config names them. */
  models: string[];
  /** The grid's estimate, computed when a budget is set. */
  estimate?: PlanEstimate;
  /** Missing API keys a dry run let through. */
  keyWarnings?: PreflightProblem[];
}

/**
 * Preflight of a memory run: every target and the labeler resolve, every
 * needed API key is set, every file the config names exists and loads, and
 * the grid's expected cost fits the budget. Throws PreflightError listing
 * every problem; nothing is called or recorded. `runMemory` and `--dry-run`
 * both run it.
 */
export async function preflightMemory(config: MemoryConfig, runtime: StageRuntime = {}, stimuliGiven?: MemoryStimuli): Promise<MemoryPreflight> {
  const models = [
    ...config.targets.map((ref, i) => ({ ref, field: `targets.${i}` })),
    { ref: config.labeler, field: 'labeler' },
    ...(config.refusalJudge !== undefined
      ? [{ ref: refusalJudgeModel(config.refusalJudge), field: typeof config.refusalJudge === 'string' ? 'refusalJudge' : 'refusalJudge.model' }]
      : []),
  ];
  const files = stimuliGiven
    ? []
    : [
        ...(config.questions.source === 'file' && config.questions.file !== undefined ? [{ path: config.questions.file, field: 'questions.file' }] : []),
        ...(config.ontology === 'default' || config.ontology === 'alt' ? [] : [{ path: config.ontology, field: 'ontology' }]),
        ...(config.perturbations === 'builtin' ? [] : [{ path: config.perturbations, field: 'perturbations' }]),
      ];
  const { runPreflight } = await import('../experiment/preflight.js');
  const checked = await runPreflight({
    models,
    files,
    runtime,
    ...(stimuliGiven ? { given: stimuliGiven } : {}),
    read: () => resolveMemoryStimuli(config),
    fallbackField: 'questions',
    plan: (stimuli) => planMemoryGeneration(config, stimuli),
    maxCostUsd: runtime.maxCostUsd ?? config.limits.maxCostUsd,
    estimate: (stimuli, specs) => dryRunMemory(config, stimuli, specs, runtime.priceFile).estimate,
  });
  const { input, ...rest } = checked;
  return { stimuli: input, ...rest };
}

export interface MemoryRunResult extends AuditRunSummary {
  generationCells: number;
  /** Generation cells that ended empty (after the runner's retries) or failed: dropouts. */
  emptyGenerations: number;
  failedGenerations: number;
  /** Answered generations from which no step could be extracted (dropouts too). */
  noSteps: number;
  /** Answers the refusal detector recognised (not labeled). */
  refusals: number;
  stepMethods: Record<string, number>;
  labelerItems: number;
  /** Labeler outputs still unparseable after the re-asks: excluded and counted. */
  invalidLabelings: number;
  /** Labeler calls that ended empty or failed. */
  unansweredLabelings: number;
  /** Labelings split into chunks because their steps did not fit one labeler call (absent = none). */
  chunkedLabelings?: number;
  /** Answers with a usable refusal-judge verdict (absent = no judge configured). */
  judgedAnswers?: number;
}

/** What a memory run records besides the config (read back by the report and labeler-check). */
export interface MemoryRunOptions {
  decisions: string;
  stimuliFingerprint: string;
  questions: { source: string; version: string | null; sha256: string | null; count: number };
  ontologySource: string;
  ontology: Ontology;
  perturbations: { source: string; name: string; version: string };
  conditions: string[];
  builtinStimuli: ReturnType<typeof builtinStimuliManifest>;
  /** Which materials the run used (echolens's or a DriftLens clone), each file with its SHA-256. */
  materials?: MemoryMaterials['record'];
  /** With a DriftLens clone: where each condition's strings came from. */
  conditionSources?: ConditionSource[];
  /** With questions.source benchmark: what the loader read and filtered. */
  benchmark?: BenchmarkSummary;
  /** What the labeler read: the extracted steps or the whole response. */
  labelerInput?: 'steps' | 'whole-response';
  procedure?: 'echolens' | 'reference';
}

/** The inputs of a memory run: its stimuli and their fingerprint. */
export interface MemoryRunInput {
  stimuli: MemoryStimuli;
  fingerprint: string;
}

export type MemoryRunCounts = Omit<MemoryRunResult, keyof AuditRunSummary>;

/** What a memory run records besides the config. */
export function memoryRunOptions(config: MemoryConfig, stimuli: MemoryStimuli, fingerprint = stimuliFingerprint(stimuli)): MemoryRunOptions {
  return {
    decisions:
      'docs/decisions.md#d5–#d10: discrete DTW / SRI, Category/Subcategory symbols with unmapped, steps segmented before labeling, reference = no-memory sample 0 of the same model and question, two floors, injection mode as configured',
    stimuliFingerprint: fingerprint,
    questions: {
      source: stimuli.questions.source,
      version: stimuli.questions.version,
      sha256: stimuli.questions.sha256,
      count: stimuli.questions.questions.length,
    },
    ontologySource: stimuli.ontologySource,
    ontology: stimuli.ontology,
    perturbations: { source: stimuli.perturbationsSource, name: stimuli.perturbations.name, version: stimuli.perturbations.version },
    conditions: stimuli.conditions,
    builtinStimuli: builtinStimuliManifest(),
    ...(stimuli.materials ? { materials: stimuli.materials.record } : {}),
    ...(stimuli.conditionSources ? { conditionSources: stimuli.conditionSources } : {}),
    ...(stimuli.benchmark ? { benchmark: stimuli.benchmark } : {}),
    labelerInput: memoryLabelerInput(config),
    procedure: config.procedure ?? 'echolens',
  };
}

/**
 * The DriftLens stages: generation cells, step extraction per answer, then
 * labeler cells with re-asks (the lifecycle around them is runAudit's).
 */
export const memoryRunner: StagedAuditRunner<MemoryConfig, MemoryRunInput, MemoryRunCounts> = {
  name: MEMORY_EXPERIMENT,
  limits: (config) => config.limits,
  async prepare(config) {
    const stimuli = await resolveMemoryStimuli(config);
    return { stimuli, fingerprint: stimuliFingerprint(stimuli) };
  },
  async preflight(config, runtime) {
    const { stimuli, ...rest } = await preflightMemory(config, runtime);
    return { input: { stimuli, fingerprint: stimuliFingerprint(stimuli) }, ...rest };
  },
  plan: (config, input) => planMemoryGeneration(config, input.stimuli),
  manifestOptions: (config, input) => ({ ...memoryRunOptions(config, input.stimuli, input.fingerprint) }),
  checkResume(run, _config, input, db) {
    const recorded = (run.manifest.options as Partial<MemoryRunOptions> | undefined)?.stimuliFingerprint;
    if (recorded !== undefined && recorded !== input.fingerprint) {
      throw new ConfigError(`the questions, ontology or perturbations changed since run ${run.id} started in ${db}; restore them or use another --db`, {
        field: 'questions',
      });
    }
  },
  // Generation, the optional refusal judge, then labeling (planned: one labeler cell per answer).
  stages: (config, _input, specs) => [
    { name: 'generation', expected: specs.length },
    ...(config.refusalJudge !== undefined ? [{ name: 'refusal judge', expected: specs.length }] : []),
    { name: 'labeling', expected: specs.length },
  ],
  async execute({ config, input, specs, stage, parsedStage }) {
    const labelerTexts = labelerTextsOf(config, input.stimuli);
    const generation = await stage(specs, 'generation');
    const counts: MemoryRunCounts = {
      generationCells: specs.length,
      emptyGenerations: generation.results.filter((r) => r.status === 'empty').length,
      failedGenerations: generation.results.filter((r) => r.status === 'failed').length,
      noSteps: 0,
      refusals: 0,
      stepMethods: {},
      labelerItems: 0,
      invalidLabelings: 0,
      unansweredLabelings: 0,
    };
    if (generation.stopReason !== null) return counts;
    // The refusal judge (optional) runs before labeling: an answer it calls a refusal is not labeled.
    const judged = new Map<string, boolean>();
    const judge = config.refusalJudge;
    if (judge !== undefined) {
      const judgeItems: ParsedItem<boolean>[] = [];
      const judgedKeys: string[] = [];
      specs.forEach((spec, index) => {
        const result = generation.results[index];
        if (result?.status !== 'done' || result.text === null || result.text.trim() === '') return;
        const item = refusalJudgeItem(result.text, judge, refusalJudgeLabels(spec.labels, result.key));
        // The judge's cell and every re-ask carry the config's identity rule.
        withModelIdentity(item.spec, config);
        judgeItems.push(item);
        judgedKeys.push(result.key);
      });
      const verdicts = await parsedStage(judgeItems, config.labelerReasks, 'refusal judge');
      verdicts.outcomes.forEach((outcome, i) => {
        if (outcome?.status === 'ok') judged.set(judgedKeys[i] as string, outcome.value);
      });
      counts.judgedAnswers = judged.size;
      if (verdicts.stages.some((stage) => stage.stopReason !== null)) return counts;
    }
    const items: ParsedItem<string[]>[] = [];
    const owners: number[] = [];
    specs.forEach((spec, index) => {
      const result = generation.results[index];
      if (result?.status !== 'done' || result.text === null) return;
      // A refusal has no trajectory to label (refusals.ts, refusal-judge.ts): counted, never sent to the labeler.
      if (combineRefusal(detectRefusal(result.text).refusal, judged.get(result.key) ?? null).refusal) {
        counts.refusals += 1;
        return;
      }
      const extraction = stepsOfGeneration(result.text, result.reasoning, config);
      counts.stepMethods[extraction.method] = (counts.stepMethods[extraction.method] ?? 0) + 1;
      const whole = labelerTexts.wholeResponse && result.text.trim() !== '';
      if (extraction.steps.length === 0 && !whole) {
        counts.noSteps += 1;
        return;
      }
      const chunked = labelingItems(extraction.steps, config, {
        labeler: config.labeler,
        ontology: input.stimuli.ontology,
        labels: memoryLabelingLabels(spec.labels, result.key, 'main', input.stimuli.ontologySource, extraction),
        ...(whole ? { passage: result.text } : {}),
        ...(labelerTexts.reference ? { reference: labelerTexts.reference } : {}),
      });
      if (chunked.length > 1) counts.chunkedLabelings = (counts.chunkedLabelings ?? 0) + 1;
      for (const { item } of chunked) {
        items.push(item);
        owners.push(index);
      }
    });
    // Two questions whose answers have the same steps get two labelings, not one shared draw.
    const labelerSpecs = separateUnitDraws(
      items.map((item) => item.spec),
      (_spec, i) => String(specs[owners[i] as number]?.labels.question_id),
    ).specs;
    items.forEach((item, i) => {
      item.spec = labelerSpecs[i] as CellSpec;
    });
    const labeled = await parsedStage(items, config.labelerReasks, 'labeling');
    const tallies = labelingTallies(owners, labeled.outcomes);
    return {
      ...counts,
      labelerItems: tallies.labelings,
      invalidLabelings: tallies.invalid,
      unansweredLabelings: tallies.unanswered,
    };
  },
};

/**
 * Runs the DriftLens grid. Same config + same database = the same run id;
 * cells already done are never called again.
 */
export async function runMemory(config: MemoryConfig, db: string, runtime: StageRuntime = {}, stimuliGiven?: MemoryStimuli): Promise<MemoryRunResult> {
  const { stimuli, specs, estimate } = await preflightMemory(config, runtime, stimuliGiven);
  const input = { stimuli, fingerprint: stimuliFingerprint(stimuli) };
  const { runCheckedAudit } = await import('../experiment/run-audit.js');
  return runCheckedAudit(memoryRunner, config, db, runtime, { input, specs, estimate, configMaxCostUsd: config.limits.maxCostUsd });
}

// ---------------------------------------------------------------------------------------------
// Labeler reliability (App. C.4): relabel a run's steps as cells of a check run.

export const MEMORY_LABELER_CHECK_EXPERIMENT = 'memory-labeler-check';

export interface LabelerCheckConfig {
  /** The memory run whose steps are relabelled. */
  run: string;
  /** Other labelers for cross-model agreement (the run's labeler is always included). */
  labelers: string[];
  /** Relabel twice at temperature 1 with the run's labeler (within-model stability). */
  repeat: boolean;
  /** `builtin:alt` or an ontology file: relabel with this wording (definition robustness); null = skip. */
  altOntology: string | null;
  /** Relabel at most this many generation cells (seeded choice); null = all. */
  limit: number | null;
  seed: number;
}

/** One relabelling pass: which labeler, ontology wording and decoding, under which record names. */
export interface LabelerCheckPass {
  labeler: string;
  /** Run name in the reliability records (`t0`, `t1-a`, `t1-b`). */
  run: string;
  /** Wording name in the records (`original`, `alternative`). */
  wording: string;
  ontologySource: string;
  ontology: Ontology;
  params: DecodingParams;
  sample: number;
  purpose: 'main' | 'check';
}

/** The relabelling passes a check asks for; the first is the run's own labeling. */
export function labelerCheckPasses(config: MemoryConfig, runOntology: { ontology: Ontology; source: string }, check: LabelerCheckConfig): LabelerCheckPass[] {
  const t0 = memoryDecodingParams(config.labelerDecoding, config.labeler);
  const passes: LabelerCheckPass[] = [
    {
      labeler: config.labeler,
      run: 't0',
      wording: 'original',
      ontologySource: runOntology.source,
      ontology: runOntology.ontology,
      params: t0,
      sample: 0,
      purpose: 'main',
    },
  ];
  for (const labeler of check.labelers) {
    if (labeler === config.labeler) continue;
    passes.push({ ...passes[0]!, labeler, params: memoryDecodingParams(config.labelerDecoding, labeler), purpose: 'check' });
  }
  if (check.repeat) {
    // Two independent labelings at T = 1 (Table 10); distinct sample indices (1, 2) make them distinct cells.
    passes.push(
      ...(['t1-a', 't1-b'] as const).map((run, i) => ({ ...passes[0]!, run, params: { ...t0, temperature: 1 }, sample: i + 1, purpose: 'check' as const })),
    );
  }
  if (check.altOntology !== null) {
    const alt = check.altOntology === 'builtin:alt' ? loadMemoryOntology('alt') : loadMemoryOntology(check.altOntology);
    // A rewording must keep the run's labels: agreement between different label sets is meaningless.
    const runLabels = ontologySymbols(runOntology.ontology).sort();
    const altLabels = ontologySymbols(alt.ontology).sort();
    if (runLabels.length !== altLabels.length || runLabels.some((label, i) => label !== altLabels[i])) {
      throw new ConfigError(
        `--alt-ontology: the run was labeled with ${runOntology.source}, whose Category/Subcategory labels differ from those of ${alt.source}; ` +
          'agreement between different label sets is meaningless — pass --alt-ontology <file> with a rewording of the run’s ontology (same labels, other definitions)',
        { field: 'altOntology' },
      );
    }
    passes.push({ ...passes[0]!, wording: 'alternative', ontologySource: alt.source, ontology: alt.ontology, purpose: 'check' });
  }
  return passes;
}

/** A generation cell to relabel: its key, plan labels and extracted steps. */
export interface RelabelItem {
  generationKey: string;
  labels: CellLabels;
  steps: string[];
}

/** The generation cells a check relabels: those with steps, all or a seeded subset, in plan order. */
export function selectRelabelItems<T extends RelabelItem>(items: readonly T[], limit: number | null, seed: number): T[] {
  const withSteps = items.filter((item) => item.steps.length > 0);
  if (limit === null || limit >= withSteps.length) return withSteps;
  return seededSubset(withSteps, limit, seed, 'relabel', (item) => item.generationKey);
}

/** What a check or rating run reports of its lifecycle: id, resumption, early stop and spend. */
const RUN_BASICS = ['runId', 'resumed', 'interrupted', 'spendUsd', 'unpricedCells'] as const;
type RunBasics = Pick<AuditRunResult<unknown>, (typeof RUN_BASICS)[number]>;
const runBasics = (run: RunBasics): RunBasics => Object.fromEntries(RUN_BASICS.map((key) => [key, run[key]])) as unknown as RunBasics;

export interface LabelerCheckRunResult extends RunBasics {
  items: number;
  passes: number;
  labelerCells: number;
  invalidLabelings: number;
  unansweredLabelings: number;
}

/** Runs the relabelling passes as labeler cells (with re-asks) in a check run of the same store. */
export async function runLabelerCheck(
  db: string,
  config: MemoryConfig,
  check: LabelerCheckConfig,
  passes: readonly LabelerCheckPass[],
  items: readonly RelabelItem[],
  runtime: StageRuntime = {},
): Promise<LabelerCheckRunResult> {
  const selected = selectRelabelItems(items, check.limit, check.seed);
  const parsedItems: ParsedItem<string[]>[] = [];
  const owners: number[] = [];
  for (const pass of passes) {
    for (const item of selected) {
      const owner = owners.length === 0 ? 0 : (owners[owners.length - 1] as number) + 1;
      for (const chunk of labelingItems(item.steps, config, {
        labeler: pass.labeler,
        ontology: pass.ontology,
        params: pass.params,
        sample: pass.sample,
        labels: memoryLabelingLabels(item.labels, item.generationKey, pass.purpose, pass.ontologySource),
      })) {
        parsedItems.push(chunk.item);
        owners.push(owner);
      }
    }
  }
  // The check is a run of its own experiment in the same store, through the shared lifecycle.
  const runner: AuditRunner<LabelerCheckConfig, null, { invalid: number; unanswered: number }> = {
    name: MEMORY_LABELER_CHECK_EXPERIMENT,
    limits: () => config.limits,
    prepare: async () => null,
    plan: () => parsedItems.map((item) => item.spec),
    manifestOptions: () => ({
      decisions:
        'App. C.4: cross-model agreement at T 0, within-model agreement of two T 1 relabelings, agreement between ontology wordings; exact match and Cohen kappa over steps',
      passes: passes.map((p) => ({ labeler: p.labeler, run: p.run, wording: p.wording, ontology: p.ontologySource, params: p.params, sample: p.sample })),
    }),
    async execute({ parsedStage }) {
      const labeled = await parsedStage(parsedItems, config.labelerReasks, 'labeler check');
      return labelingTallies(owners, labeled.outcomes);
    },
  };
  const { runAudit } = await import('../experiment/run-audit.js');
  const run = await runAudit(runner, check, db, { runtime, input: null, seed: check.seed });
  return {
    ...runBasics(run),
    items: selected.length,
    passes: passes.length,
    labelerCells: parsedItems.length,
    invalidLabelings: run.result.invalid,
    unansweredLabelings: run.result.unanswered,
  };
}

// ---------------------------------------------------------------------------------------------
// Curation: the LLM rater of §2.1 / App. A as cells.

export const MEMORY_CURATE_EXPERIMENT = 'memory-curate';

export type RaterOutcome =
  | { status: 'rated'; verdict: RaterVerdict; attempts: number }
  | { status: 'invalid'; error: string; attempts: number }
  | { status: 'unanswered'; reason: string };

export interface RaterRunResult extends RunBasics {
  outcomes: Map<string, RaterOutcome>;
}

/** Rates questions on the four properties (one cell per question, re-asked on unparseable output). */
export async function runQuestionRater(
  db: string,
  questions: readonly Question[],
  rater: string,
  options: { reasks?: number; seed?: number; params?: DecodingParams } & StageRuntime = {},
): Promise<RaterRunResult> {
  const { reasks = 2, seed = 42, params = { ...RATER_DEFAULT_PARAMS }, ...runtime } = options;
  const config = { rater, params, reasks, questions: hashCanonical(questions.map((q) => [q.id, q.text])).slice(0, 16) };
  const items: ParsedItem<RaterVerdict>[] = questions.map((question) => ({
    spec: {
      request: { model: rater, messages: buildRaterMessages(question.text), params: { ...params }, sample: 0 },
      labels: { experiment: MEMORY_CURATE_EXPERIMENT, stage: 'rating', question_id: question.id, rater, attempt: 0 },
    },
    parse(text) {
      const parsed = parseRaterOutput(text);
      if (!parsed.ok) return { ok: false, error: `${parsed.reason}: ${parsed.detail}` };
      const { ok: _ok, ...verdict } = parsed;
      return { ok: true, value: verdict };
    },
    reask(previous, badOutput) {
      const parsed = parseRaterOutput(badOutput);
      return buildRaterReaskMessages(previous, badOutput, parsed.ok ? { detail: 'unusable answer' } : parsed);
    },
  }));
  // The rating is a run of its own experiment, through the shared lifecycle (no config limits: the flags decide).
  const runner: AuditRunner<typeof config, null, Map<string, RaterOutcome>> = {
    name: MEMORY_CURATE_EXPERIMENT,
    limits: () => ({}),
    prepare: async () => null,
    plan: () => items.map((item) => item.spec),
    manifestOptions: () => ({
      decisions: 'docs/decisions.md#d1–#d2: the rater is a cell at temperature 0; unparseable verdicts re-asked, then invalid and counted',
    }),
    async execute({ parsedStage }) {
      const rated = await parsedStage(items, reasks, 'rater');
      const outcomes = new Map<string, RaterOutcome>();
      questions.forEach((question, index) => {
        const outcome = rated.outcomes[index];
        if (outcome === undefined) outcomes.set(question.id, { status: 'unanswered', reason: 'not run (the run stopped)' });
        else if (outcome.status === 'ok') outcomes.set(question.id, { status: 'rated', verdict: outcome.value, attempts: outcome.attempts });
        else if (outcome.status === 'invalid') outcomes.set(question.id, { status: 'invalid', error: outcome.error, attempts: outcome.attempts });
        else outcomes.set(question.id, { status: 'unanswered', reason: outcome.result.errorMessage ?? outcome.result.status });
      });
      return outcomes;
    },
  };
  const { runAudit } = await import('../experiment/run-audit.js');
  const run = await runAudit(runner, config, db, { runtime, input: null, seed });
  return { ...runBasics(run), outcomes: run.result };
}
