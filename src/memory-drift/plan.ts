import { sha256Hex } from '../core/canonical-json.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { DecodingParams } from '../models/types.js';
import type { CellLabels, CellSpec } from '../store/types.js';
import { buildLabelerMessages, LABELER_DEFAULT_PARAMS, type LabelerPromptOptions } from './labeler.js';
import { buildGenerationMessages, type GenerationMessageOptions, INJECTION_MODES, type InjectionMode } from './messages.js';
import type { Ontology } from './ontology.js';
import { listStimuli, type PerturbationSet, type PerturbationStimulus } from './perturbations.js';
import type { Question } from './questions.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { seededOrder } from './seeded-order.js';

/** The paper's inference settings (App. I.3): T 0.7, top-p 0.98, top-k 50, 2,048 new tokens. */
export const PAPER_GENERATION_PARAMS: Readonly<DecodingParams> = Object.freeze({
  temperature: 0.7,
  topP: 0.98,
  topK: 50,
  maxTokens: 2048,
});

export interface GenerationPlanOptions {
  questions: readonly Question[];
  perturbations: PerturbationSet;
  /** Model references, e.g. `openai:gpt-4.1-mini`, `sim:memory`. */
  targets: readonly string[];
  /** Samples per (question, stimulus). The no_perturbation condition gets k more after the reference sample 0. */
  k: number;
  /** Category ids to include (default: every category in the set). */
  conditions?: readonly string[];
  /** How many stimuli of each category each question sees: a number (chosen deterministically per question) or `all`. Default 1. */
  stimuliPerCategory?: number | 'all';
  mode?: InjectionMode;
  params?: DecodingParams;
  messageOptions?: GenerationMessageOptions;
  /** Seed of the deterministic stimulus choice (default 42). */
  seed?: number;
}

/** Role of a generation cell in the analysis (docs/decisions.md#d8). */
export type GenerationRole = 'reference' | 'no_perturbation' | 'perturbed';

/** Picks `count` stimuli of a category for a question: a seeded, order-free choice, stable when other questions change. */
function chooseStimuli(stimuli: readonly PerturbationStimulus[], count: number | 'all', seed: number, questionId: string): PerturbationStimulus[] {
  if (count === 'all' || count >= stimuli.length) return [...stimuli];
  return seededOrder(stimuli, seed, questionId, (stimulus) => stimulus.id)
    .slice(0, count)
    .sort((a, b) => stimuli.indexOf(a) - stimuli.indexOf(b));
}

/**
 * The generation stage as cells (pure, deterministic): for every target,
 * question, condition and chosen stimulus, k samples; for no_perturbation,
 * the reference sample 0 plus k further samples.
 */
export function buildGenerationPlan(options: GenerationPlanOptions): CellSpec[] {
  const { questions, perturbations, targets, k } = options;
  if (!Number.isInteger(k) || k < 1) throw new InvalidArgumentError('k', 'must be a positive integer');
  if (targets.length === 0) throw new InvalidArgumentError('targets', 'needs at least one model');
  if (questions.length === 0) throw new InvalidArgumentError('questions', 'needs at least one question');
  const mode = options.mode ?? 'prepend';
  if (!INJECTION_MODES.includes(mode)) throw new InvalidArgumentError('mode', `must be one of ${INJECTION_MODES.join(', ')}`);
  const perCategory = options.stimuliPerCategory ?? 1;
  if (perCategory !== 'all' && (!Number.isInteger(perCategory) || perCategory < 1)) {
    throw new InvalidArgumentError('stimuliPerCategory', 'must be a positive integer or "all"');
  }
  const seed = options.seed ?? 42;
  const params = { ...(options.params ?? PAPER_GENERATION_PARAMS) };
  const known = new Set(perturbations.categories.map((category) => category.id));
  for (const condition of options.conditions ?? []) {
    if (!known.has(condition)) throw new InvalidArgumentError('conditions', `unknown perturbation category "${condition}"`);
  }
  const wanted = options.conditions === undefined ? null : new Set(options.conditions);
  const categories = perturbations.categories.filter((category) => wanted === null || wanted.has(category.id));
  const all = listStimuli(perturbations);

  const cells: CellSpec[] = [];
  for (const target of targets) {
    for (const question of questions) {
      for (const category of categories) {
        const stimuli = chooseStimuli(
          all.filter((stimulus) => stimulus.category === category.id),
          category.tier === 'none' ? 'all' : perCategory,
          seed,
          question.id,
        );
        for (const stimulus of stimuli) {
          const messages = buildGenerationMessages(question.text, stimulus.text, mode, options.messageOptions);
          const sampleCount = category.tier === 'none' ? k + 1 : k;
          for (let sample = 0; sample < sampleCount; sample += 1) {
            const role: GenerationRole = category.tier !== 'none' ? 'perturbed' : sample === 0 ? 'reference' : 'no_perturbation';
            const labels: CellLabels = {
              experiment: 'memory',
              stage: 'generation',
              target,
              question_id: question.id,
              domain: question.domain,
              subdomain: question.subdomain ?? null,
              condition: category.id,
              tier: category.tier,
              stimulus_id: stimulus.id,
              sample,
              role,
              mode,
            };
            // Message objects shared (read-only); params copied, the seed step below sets them per cell.
            cells.push({ request: { model: target, messages: [...messages], params: { ...params }, sample }, labels });
          }
        }
      }
    }
  }
  return cells;
}

/**
 * How generation cells get the seed sent to the provider:
 * - `cell` (default): a seed derived from the cell's identity (base seed, question, condition,
 *   stimulus, sample index); no two cells of a (target, question) share one, so a provider that
 *   honours seeds draws every sample independently.
 * - `offset`: base seed + sample index (the scheme of earlier versions: sample i of every
 *   condition shares seed + i with the no-memory sample i — the reference included).
 * - `fixed`: the base seed for every call.
 * - `none`: no seed sent.
 */
export type SampleSeeding = 'cell' | 'offset' | 'fixed' | 'none';
export const SAMPLE_SEEDINGS: readonly SampleSeeding[] = ['cell', 'offset', 'fixed', 'none'];

/** Largest seed sent (2^31 − 1: accepted as a signed 32-bit integer by every provider we speak to). */
const MAX_CELL_SEED = 0x7fffffff;

/** The identity a `cell` seed is derived from. */
export interface CellSeedIdentity {
  question: string;
  condition: string;
  stimulus: string;
  sample: number;
}

/**
 * The seed of one generation cell under `cell` seeding: the first 31 bits of
 * SHA-256(base seed, question, condition, stimulus, sample, attempt). `attempt` > 0 only
 * resolves a collision inside one (target, question) (see assignCellSeeds).
 */
export function cellSeed(base: number, identity: CellSeedIdentity, attempt = 0): number {
  const digest = sha256Hex(
    JSON.stringify(['echolens.memory.seed/1', base, identity.question, identity.condition, identity.stimulus, identity.sample, attempt]),
  );
  return Number.parseInt(digest.slice(0, 8), 16) & MAX_CELL_SEED;
}

/**
 * Sets `request.params.seed` of generation cells under a seeding scheme (mutates the cells).
 * Under `cell`, a seed already taken within the same (target, question) is re-derived with the
 * next attempt number, in plan order, so no two cells of a (target, question) share a seed.
 */
export function assignSampleSeeds(cells: readonly CellSpec[], seeding: SampleSeeding, base: number): void {
  if (!SAMPLE_SEEDINGS.includes(seeding)) throw new InvalidArgumentError('sampleSeeds', `must be one of ${SAMPLE_SEEDINGS.join(', ')}`);
  const taken = new Map<string, Set<number>>();
  for (const cell of cells) {
    const sample = cell.request.sample;
    if (seeding !== 'cell') {
      if (seeding === 'none') delete cell.request.params.seed;
      else cell.request.params.seed = seeding === 'fixed' ? base : base + sample;
      continue;
    }
    const l = cell.labels;
    const identity: CellSeedIdentity = {
      question: String(l.question_id),
      condition: String(l.condition),
      stimulus: String(l.stimulus_id),
      sample,
    };
    const group = JSON.stringify([String(l.target ?? cell.request.model), identity.question]);
    const used = getOrInsert(taken, group, () => new Set());
    let attempt = 0;
    let seed = cellSeed(base, identity, attempt);
    while (used.has(seed)) {
      attempt += 1;
      seed = cellSeed(base, identity, attempt);
    }
    used.add(seed);
    cell.request.params.seed = seed;
  }
}

/** Generation cells of a (target, question) that share a seed with another of them (0 = independent sampling). */
export function sharedSeedCells(cells: ReadonlyArray<{ seed: number | null | undefined; target: string; question: string }>): number {
  const counts = new Map<string, number>();
  for (const cell of cells) {
    if (cell.seed === null || cell.seed === undefined) continue;
    const key = JSON.stringify([cell.target, cell.question, cell.seed]);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  let shared = 0;
  for (const count of counts.values()) if (count > 1) shared += count;
  return shared;
}

export interface LabelerCellOptions extends LabelerPromptOptions {
  /** Labeler model reference. */
  model: string;
  params?: DecodingParams;
  labels?: CellLabels;
}

/** One labeling call as a cell (docs/decisions.md#d1: labelers are cells, temperature 0 by default). */
export function buildLabelerCell(steps: readonly string[], ontology: Ontology, options: LabelerCellOptions): CellSpec {
  return {
    request: {
      model: options.model,
      messages: buildLabelerMessages(steps, ontology, options),
      params: { ...(options.params ?? LABELER_DEFAULT_PARAMS) },
      sample: 0,
    },
    labels: { experiment: 'memory', stage: 'labeling', ...options.labels },
  };
}
