import { sha256Hex } from '../core/canonical-json.js';
import { InvalidArgumentError } from '../core/errors.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { registerSimProfile, type SimProfile } from '../models/sim-registry.js';
import type { ChatMessage, ModelRequest } from '../models/types.js';
import { ALLOWED_LABELS_HEADER } from './labeler.js';
import { MEMORY_RESULT_CLOSE, MEMORY_RESULT_OPEN, QUESTION_MARKER, SYSTEM_MEMORY_HEADER } from './messages.js';
import { UNMAPPED } from './ontology.js';
import { matchTemplate, type StringPart } from '../materials/python-literal.js';
import { createRefusalJudgeSimProfile } from './refusal-judge.js';
import { listStimuli, loadBuiltinPerturbations, type PerturbationSet, type PerturbationStimulus, type PerturbationTier } from './perturbations.js';

/**
 * SIMULATION ONLY — these profiles measure nothing about any real model.
 * `sim:memory` answers in the step format with a planted ground truth: each
 * question has a baseline value sequence derived from its text; a recognised
 * perturbation flips each step's category with a configured probability per
 * tier; repeated samples add a little sampling noise. Every step carries a cue
 * word of its category, so `sim:labeler` recovers the categories exactly.
 */

/** One cue word per built-in symbol; each step sentence contains its word and no other cue word. */
export const SIM_STEP_CUES: Readonly<Record<string, { cue: string; sentences: readonly string[] }>> = Object.freeze({
  'Social/Cultural respect and tradition': {
    cue: 'tradition',
    sentences: [
      'Respecting the tradition and customs of everyone involved matters here.',
      'Honoring the relevant tradition shows courtesy toward the other people.',
      'A tactful approach keeps faith with the tradition others rely on.',
    ],
  },
  'Social/Social equity and justice': {
    cue: 'fairness',
    sentences: [
      'Fairness between the people affected should guide the choice.',
      'Each side deserves equal consideration, so fairness comes first.',
      'Treating everyone with the same fairness avoids favoring one group.',
    ],
  },
  'Practical/Efficiency and resource optimization': {
    cue: 'efficiency',
    sentences: [
      'Comparing cost and effort points to the option with better efficiency.',
      'Budgeting time and money for efficiency makes the plan workable.',
      'Listing the resources first, then choosing for efficiency, saves waste.',
    ],
  },
  'Practical/Professional advancement': {
    cue: 'skills',
    sentences: [
      'Building skills through this choice pays off in later work.',
      'Taking initiative here develops skills that open new opportunities.',
      'Practicing the relevant skills turns the decision into progress.',
    ],
  },
  'Protective/Security and stability': {
    cue: 'stability',
    sentences: [
      'Keeping a financial cushion preserves stability if things go wrong.',
      'Prudent restraint protects stability while the outcome is uncertain.',
      'Choosing the predictable path keeps stability for the household.',
    ],
  },
  'Protective/Protection of people and environment': {
    cue: 'safeguard',
    sentences: [
      'It is important to safeguard the people who could be hurt.',
      'Any option should safeguard health and avoid physical harm.',
      'The first duty is to safeguard others and the environment from damage.',
    ],
  },
  'Protective/Ethical responsibility': {
    cue: 'accountability',
    sentences: [
      'Accountability requires following the rules that apply.',
      'Owning the consequences shows accountability to everyone relying on you.',
      'Professional accountability means being transparent about the decision.',
    ],
  },
  'Personal/Artistic expression and appreciation': {
    cue: 'creativity',
    sentences: [
      'Leaving room for creativity makes the choice more expressive.',
      'Creativity and a sense of beauty can shape how this is done.',
      'The option that invites creativity adds an artistic dimension.',
    ],
  },
  'Personal/Emotional depth and authentic connection': {
    cue: 'emotionally',
    sentences: [
      'Being emotionally honest keeps the connection genuine.',
      'What feels emotionally true matters as much as the outcome.',
      'Staying emotionally open builds trust and closeness.',
    ],
  },
  'Personal/Spiritual fulfillment and meaning': {
    cue: 'purpose',
    sentences: [
      'The choice should fit a deeper sense of purpose.',
      'Acting from conviction gives the decision purpose.',
      'Reflecting on purpose clarifies which path is worth it.',
    ],
  },
  'Personal/Pleasure and enjoyment': {
    cue: 'enjoyment',
    sentences: [
      'Some enjoyment along the way is worth protecting.',
      'Rest and simple enjoyment are valid reasons in themselves.',
      'Choosing the path with more enjoyment keeps life balanced.',
    ],
  },
});

export const SIM_SYMBOLS: readonly string[] = Object.keys(SIM_STEP_CUES);

const SIM_ANSWER = 'Weighing these considerations, the better choice is the one that respects the points above in proportion to what is at stake.';

/** Uniform number in [0, 1) from a hash of the parts (deterministic, platform-independent). */
function hashUnit(...parts: (string | number)[]): number {
  return Number.parseInt(sha256Hex(parts.join('\u0001')).slice(0, 13), 16) / 2 ** 52;
}

function hashIndex(count: number, ...parts: (string | number)[]): number {
  return Math.min(count - 1, Math.floor(hashUnit(...parts) * count));
}

export interface BaselineOptions {
  minSteps?: number;
  maxSteps?: number;
}

/** The planted no-memory value sequence of a question: a pure function of its (trimmed) text. */
export function simBaselineSequence(question: string, options: BaselineOptions = {}): string[] {
  const min = options.minSteps ?? 3;
  const max = options.maxSteps ?? 6;
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max < min) {
    throw new InvalidArgumentError('minSteps/maxSteps', 'need integers with 1 ≤ minSteps ≤ maxSteps');
  }
  const text = question.trim();
  const length = min + hashIndex(max - min + 1, 'length', text);
  return Array.from({ length }, (_, i) => SIM_SYMBOLS[hashIndex(SIM_SYMBOLS.length, 'baseline', text, i)]!);
}

export type SimOutputFormat = 'tags' | 'numbered' | 'paragraphs';

/** Default sampling noise of the seed-honouring profiles (a step differs from the baseline this often, on average). */
export const DEFAULT_SEEDED_NOISE = 0.2;

/** One draw of a seed-honouring sampler: what it depends on, and nothing else. */
export interface SeededDraw {
  /** The question (text or id): fixes the baseline trajectory and the question's own noise rate. */
  question: string;
  /** The memory text (or stimulus id); '' without memory. Only matters when flipProbability > 0. */
  memory: string;
  /** Probability that memory flips a step (0 under a null). */
  flipProbability: number;
  /** The seed the provider received. */
  seed: number;
  /** Mean per-step sampling noise over questions; a question's own rate is noise × (0.5 … 1.5). */
  samplingNoise: number;
}

/** A question's own per-step noise rate under a seed-honouring sampler: mean noise × (0.5 … 1.5). */
export function seededNoiseRate(question: string, samplingNoise: number): number {
  return Math.min(1, samplingNoise * (0.5 + hashUnit('seeded-rate', question)));
}

/**
 * The symbol sequence of a seed-honouring sampler (SIMULATION): a pure function of the seed,
 * the question and — only when memory has an effect — the memory text. Same seed + same
 * question + no memory effect = the same answer, as a seeded vLLM gives. Questions differ in
 * baseline length and in how noisy they are (a per-question rate), so drift varies by question.
 */
export function seededSimSymbols(
  draw: SeededDraw,
  options: BaselineOptions & { baseline?: readonly string[]; rate?: number } = {},
): { baseline: string[]; symbols: string[]; flipped: boolean[] } {
  const baseline = options.baseline !== undefined ? [...options.baseline] : simBaselineSequence(draw.question, options);
  const rate = options.rate ?? seededNoiseRate(draw.question, draw.samplingNoise);
  const memory = { p: draw.flipProbability, key: [draw.seed, draw.question, draw.memory] };
  return { baseline, ...flipSteps(baseline, 'seeded-', memory, { p: rate, key: [draw.seed, draw.question] }) };
}

type StepDraws = { p: number; key: readonly (string | number)[] };
/**
 * `baseline` with steps flipped by memory or by sampling noise: a step flips when the hash of a draw's
 * `key` and the step index is below its `p`; `prefix` keeps the seed-honouring sampler's hashes apart.
 */
function flipSteps(baseline: readonly string[], prefix: string, memory: StepDraws, noise: StepDraws): { symbols: string[]; flipped: boolean[] } {
  const flipped: boolean[] = [];
  const symbols = baseline.map((symbol, i) => {
    const perturbed = memory.p > 0 && hashUnit(`${prefix}flip`, ...memory.key, i) < memory.p;
    const noisy = noise.p > 0 && hashUnit(`${prefix}noise`, ...noise.key, i) < noise.p;
    flipped.push(perturbed || noisy);
    if (!perturbed && !noisy) return symbol;
    const others = SIM_SYMBOLS.filter((other) => other !== symbol);
    return others[hashIndex(others.length, ...(perturbed ? [`${prefix}to`, ...memory.key, i] : [`${prefix}to-noise`, ...noise.key, i]))]!;
  });
  return { symbols, flipped };
}

export interface MemorySimOptions extends BaseOptionsWithName {
  /** Probability that a step's category flips under a perturbation of each tier. */
  flipProbability?: Partial<Record<Exclude<PerturbationTier, 'none'>, number>>;
  /** Per-category override of the flip probability (e.g. `{ disability: 0.5 }`). */
  categoryFlipProbability?: Record<string, number>;
  /** Per-sample probability that a step flips regardless of the condition (sampling noise). */
  samplingNoise?: number;
  /** Ignore every perturbation (the null profile). */
  ignorePerturbations?: boolean;
  /** Tier assumed for a memory text that is not in the catalogue (system / memory-tool modes). */
  unknownMemoryTier?: Exclude<PerturbationTier, 'none'>;
  /** Catalogue the perturbation is looked up in (default: the built-in set). */
  perturbations?: PerturbationSet;
  format?: SimOutputFormat;
  /** Put the steps in the separate reasoning channel (like a reasoning model) and only the answer in text. */
  reasoningChannel?: boolean;
  /**
   * Honour the request seed like a seeded vLLM: the answer is a function of `params.seed`, the
   * question and the memory effect only — not of the sample index (seededSimSymbols). Without a
   * seed in the request, the sample index stands in (an unseeded provider's fresh draw).
   */
  seedHonouring?: boolean;
  /**
   * Probability of declining to answer, per tier of the injected memory (default 0: never). A
   * refusal is a short "I'm sorry, but I can't help with that." or, with probability
   * `softRefusals`, a soft "I would rather not weigh in…" that the deterministic detector misses.
   */
  refusals?: Partial<Record<PerturbationTier, number>>;
  softRefusals?: number;
  description?: string;
}

export const SIM_HARD_REFUSAL = "I'm sorry, but I can't help with that.";
export const SIM_SOFT_REFUSAL = 'I would rather not weigh in on a personal decision like this one.';

interface BaseOptionsWithName extends BaselineOptions {
  name: string;
}

export const DEFAULT_FLIP_PROBABILITY: Readonly<Record<Exclude<PerturbationTier, 'none'>, number>> = Object.freeze({
  noise: 0,
  persona: 0.3,
  life_event: 0.6,
});
export const DEFAULT_SAMPLING_NOISE = 0.03;

function checkProbability(name: string, value: number): void {
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new InvalidArgumentError(name, 'must be a probability in [0, 1]');
}

/** What the sim read from a generation request. */
export interface ParsedGenerationRequest {
  question: string;
  /** The recognised perturbation, or null (no memory, or an unrecognised prepended line). */
  stimulus: PerturbationStimulus | null;
  /** Memory text found in a system block or memory lookup that is not in the catalogue. */
  unknownMemory: string | null;
}

interface PreparedCatalogue {
  byText: Map<string, PerturbationStimulus>;
  /** Longest text first, so a prefix never shadows a longer stimulus that starts with it. */
  longestFirst: PerturbationStimulus[];
}

const prepared = new WeakMap<readonly PerturbationStimulus[], PreparedCatalogue>();

function prepareCatalogue(catalogue: readonly PerturbationStimulus[]): PreparedCatalogue {
  return getOrInsert(prepared, catalogue, () => {
    const byText = new Map(catalogue.filter((s) => s.text !== '').map((s) => [s.text, s]));
    return { byText, longestFirst: [...byText.values()].sort((a, b) => b.text.length - a.text.length) };
  });
}

/**
 * Reads the question and the perturbation from the prompt text alone: the
 * system memory block, the memory lookup result, or a catalogue string on the
 * line before the question.
 */
export function parseGenerationRequest(messages: readonly ChatMessage[], catalogue: readonly PerturbationStimulus[]): ParsedGenerationRequest {
  const questionMessage = messages.find((message) => message.role === 'user' && message.content.includes(QUESTION_MARKER));
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const block = questionMessage
    ? questionMessage.content.slice(questionMessage.content.lastIndexOf(QUESTION_MARKER) + QUESTION_MARKER.length)
    : (lastUser?.content ?? '');
  let memory: string | null = null;
  for (const message of messages) {
    if (message.role === 'system') {
      const at = message.content.indexOf(`${SYSTEM_MEMORY_HEADER}\n`);
      if (at !== -1) memory = message.content.slice(at + SYSTEM_MEMORY_HEADER.length + 1);
    }
    if (message.role === 'user' && message.content.startsWith(`${MEMORY_RESULT_OPEN}\n`)) {
      const body = message.content.slice(MEMORY_RESULT_OPEN.length + 1);
      const end = body.lastIndexOf(`\n${MEMORY_RESULT_CLOSE}`);
      memory = end === -1 ? body : body.slice(0, end);
    }
  }
  const { byText, longestFirst } = prepareCatalogue(catalogue);
  if (memory !== null) {
    const stimulus = byText.get(memory) ?? null;
    return { question: block.trim(), stimulus, unknownMemory: stimulus === null ? memory : null };
  }
  for (const stimulus of longestFirst) {
    if (block.startsWith(`${stimulus.text}\n`)) {
      return { question: block.slice(stimulus.text.length + 1).trim(), stimulus, unknownMemory: null };
    }
  }
  return { question: block.trim(), stimulus: null, unknownMemory: null };
}

function renderSteps(texts: string[], format: SimOutputFormat): string {
  if (format === 'numbered') return texts.map((text, i) => `${i + 1}. ${text}`).join('\n');
  if (format === 'paragraphs') return texts.join('\n\n');
  return `<think>\n${texts.map((text, i) => `<step_${i + 1}>${text}</step_${i + 1}>`).join('\n')}\n</think>`;
}

/** The symbols a memory-sim profile plants for a request (exposed so tests can check the labels against it). */
export interface SimTrajectory {
  question: string;
  stimulus: PerturbationStimulus | null;
  tier: PerturbationTier;
  baseline: string[];
  symbols: string[];
  flipped: boolean[];
}

/**
 * What the simulated models know of the run in this process beyond echolens's built-in texts:
 * the run's perturbation strings (a user file, the authors' persona strings) and the authors'
 * generation and labeler templates when the run reads a DriftLens clone. A run registers them
 * when it resolves its stimuli (run.ts), so `sim:memory` can tell the memory from the question
 * in the authors' completeness prompt and `sim:labeler` can read the authors' mapping prompt.
 * Registration only adds: earlier runs' texts stay known (texts are matched exactly).
 */
export interface SimMemoryTexts {
  perturbations: PerturbationSet;
  reference?: { instruction: readonly StringPart[]; mappingTemplate: readonly StringPart[] };
}

const simRegistry = {
  version: 0,
  stimuli: [] as PerturbationStimulus[],
  instructions: [] as Array<readonly StringPart[]>,
  mappingTemplates: [] as Array<readonly StringPart[]>,
};

const templateKey = (parts: readonly StringPart[]) => JSON.stringify(parts);

export function registerSimMemoryTexts(texts: SimMemoryTexts): void {
  const known = new Set(simRegistry.stimuli.map((s) => s.text));
  for (const stimulus of listStimuli(texts.perturbations)) {
    if (stimulus.text !== '' && !known.has(stimulus.text)) {
      simRegistry.stimuli.push(stimulus);
      known.add(stimulus.text);
    }
  }
  if (texts.reference) {
    const add = (list: Array<readonly StringPart[]>, parts: readonly StringPart[]) => {
      if (!list.some((p) => templateKey(p) === templateKey(parts))) list.push(parts);
    };
    add(simRegistry.instructions, texts.reference.instruction);
    add(simRegistry.mappingTemplates, texts.reference.mappingTemplate);
  }
  simRegistry.version += 1;
}

/**
 * Reads a generation request made from a registered authors' completeness template: the
 * template's question field holds the memory string directly followed by the question.
 */
export function parseReferenceGenerationRequest(messages: readonly ChatMessage[], catalogue: readonly PerturbationStimulus[]): ParsedGenerationRequest | null {
  const user = [...messages].reverse().find((message) => message.role === 'user');
  if (user === undefined) return null;
  for (const instruction of simRegistry.instructions) {
    const values = matchTemplate(instruction, user.content);
    const field = values?.question;
    if (field === undefined) continue;
    const { longestFirst } = prepareCatalogue(catalogue);
    const stimulus = longestFirst.find((s) => field.startsWith(s.text) && field.length > s.text.length) ?? null;
    return { question: (stimulus ? field.slice(stimulus.text.length) : field).trim(), stimulus, unknownMemory: null };
  }
  return null;
}

export interface MemorySimProfile extends SimProfile {
  /** The planted trajectory for a request and seed (what `answer` renders). */
  trajectory(request: ModelRequest, seed: number): SimTrajectory;
  /** Probability that a step differs from the baseline under a tier (for planted-effect checks). */
  expectedMismatchRate(tier: PerturbationTier, category?: string): number;
}

/** Creates a `sim:memory`-family profile with planted per-tier drift (SIMULATION, measures nothing). */
export function createMemorySimProfile(options: MemorySimOptions): MemorySimProfile {
  const flip = { ...DEFAULT_FLIP_PROBABILITY, ...options.flipProbability };
  for (const [tier, value] of Object.entries(flip)) checkProbability(`flipProbability.${tier}`, value);
  for (const [category, value] of Object.entries(options.categoryFlipProbability ?? {})) {
    checkProbability(`categoryFlipProbability.${category}`, value);
  }
  const samplingNoise = options.samplingNoise ?? (options.seedHonouring ? DEFAULT_SEEDED_NOISE : DEFAULT_SAMPLING_NOISE);
  checkProbability('samplingNoise', samplingNoise);
  const format = options.format ?? 'tags';
  let catalogue: PerturbationStimulus[] | undefined;
  let catalogueVersion = -1;
  const getCatalogue = () => {
    if (options.perturbations !== undefined) {
      catalogue ??= listStimuli(options.perturbations);
      return catalogue;
    }
    // The built-in strings, then whatever runs of this process registered (registerSimMemoryTexts).
    if (catalogue === undefined || catalogueVersion !== simRegistry.version) {
      const builtin = listStimuli(loadBuiltinPerturbations());
      const texts = new Set(builtin.map((s) => s.text));
      catalogue = [...builtin, ...simRegistry.stimuli.filter((s) => !texts.has(s.text))];
      catalogueVersion = simRegistry.version;
    }
    return catalogue;
  };

  const flipFor = (tier: PerturbationTier, category: string | undefined): number => {
    if (options.ignorePerturbations || tier === 'none') return 0;
    const override = category === undefined ? undefined : options.categoryFlipProbability?.[category];
    return override ?? flip[tier];
  };

  const trajectory = (request: ModelRequest, seed: number): SimTrajectory => {
    const parsed = parseReferenceGenerationRequest(request.messages, getCatalogue()) ?? parseGenerationRequest(request.messages, getCatalogue());
    const baseline = simBaselineSequence(parsed.question, options);
    const tier: PerturbationTier = parsed.stimulus?.tier ?? (parsed.unknownMemory !== null ? (options.unknownMemoryTier ?? 'persona') : 'none');
    const memoryText = parsed.stimulus?.text ?? parsed.unknownMemory ?? '';
    const p = flipFor(tier, parsed.stimulus?.category);
    if (options.seedHonouring) {
      const drawn = seededSimSymbols(
        { question: parsed.question, memory: memoryText, flipProbability: p, seed: request.params.seed ?? seed, samplingNoise },
        options,
      );
      return { question: parsed.question, stimulus: parsed.stimulus, tier, ...drawn };
    }
    // The perturbation effect depends on the run seed (request.params.seed), not on the sample
    // seed the sim adapter mixes per sample: memory shifts reasoning consistently across samples.
    const runSeed = request.params.seed ?? 0;
    const noise = { p: samplingNoise, key: [seed, request.sample, parsed.question, memoryText] };
    const drawn = flipSteps(baseline, '', { p, key: [runSeed, parsed.question, memoryText] }, noise);
    return { question: parsed.question, stimulus: parsed.stimulus, tier, baseline, ...drawn };
  };

  return {
    name: options.name,
    description:
      options.description ??
      `Simulation (measures nothing): DriftLens step-format answers with planted drift — flip probability noise ${flip.noise}, persona ${flip.persona}, life_event ${flip.life_event}; sampling noise ${samplingNoise}${options.ignorePerturbations ? '; ignores perturbations (null profile)' : ''}${options.seedHonouring ? '; honours the request seed (same seed + same question = same answer)' : ''}.`,
    trajectory,
    expectedMismatchRate(tier, category) {
      const p = flipFor(tier, category);
      return 1 - (1 - p) * (1 - samplingNoise);
    },
    answer(request, seed) {
      const planned = trajectory(request, seed);
      const refuseRate = options.refusals?.[planned.tier] ?? 0;
      if (refuseRate > 0) {
        const drawSeed = options.seedHonouring ? (request.params.seed ?? seed) : seed;
        const draw = ['refuse', drawSeed, options.seedHonouring ? 0 : request.sample, planned.question, planned.stimulus?.id ?? ''] as const;
        if (hashUnit(...draw) < refuseRate) {
          return { text: `<answer>${hashUnit('refuse-soft', ...draw) < (options.softRefusals ?? 0) ? SIM_SOFT_REFUSAL : SIM_HARD_REFUSAL}</answer>` };
        }
      }
      const texts = planned.symbols.map((symbol, i) => {
        const cue = SIM_STEP_CUES[symbol]!;
        return cue.sentences[hashIndex(cue.sentences.length, 'sentence', planned.question, symbol, i)]!;
      });
      const steps = renderSteps(texts, format);
      if (options.reasoningChannel) return { text: SIM_ANSWER, reasoning: steps.replace(/<\/?think>\n?/g, '') };
      return { text: `${steps}\n<answer>${SIM_ANSWER}</answer>` };
    },
  };
}

export interface LabelerSimOptions {
  name: string;
  /** Probability of a malformed output (to exercise re-asks); deterministic per prompt and seed. */
  malformedProbability?: number;
  description?: string;
}

/** Parses the labeler prompt built by buildLabelerMessages: allowed labels and numbered steps. */
export function readLabelerPrompt(messages: readonly ChatMessage[]): { allowed: string[]; steps: string[] } | null {
  // The allowed labels sit in the system message (the cacheable part) or, in the earlier shape, in the user turn.
  const rules = messages.find((message) => (message.role === 'system' || message.role === 'user') && message.content.includes(ALLOWED_LABELS_HEADER));
  if (rules === undefined) return null;
  const afterHeader = rules.content.slice(rules.content.indexOf(ALLOWED_LABELS_HEADER) + ALLOWED_LABELS_HEADER.length);
  const allowed: string[] = [];
  for (const line of afterHeader.split('\n').slice(1)) {
    if (!line.startsWith('- ')) break;
    allowed.push(line.slice(2));
  }
  const prompt = messages.find((message) => message.role === 'user' && message.content.includes('<step number="')) ?? rules;
  const steps = [...prompt.content.matchAll(/<step number="(\d+)">\n([\s\S]*?)\n<\/step>/g)].map((match) => match[2]!);
  return { allowed, steps };
}

/** Each cue's word pattern, compiled once (a reward server's sim labeller meets 128 steps per response). */
const cuePatterns = new Map<string, RegExp>();
const cuePattern = (cue: string) => getOrInsert(cuePatterns, cue, () => new RegExp(`\\b${cue}\\b`));

/** The label the sim labeler gives one step: the single cue word present, else `unmapped`. */
export function simLabelForStep(step: string, allowed: readonly string[]): string {
  const lower = step.toLowerCase();
  const found = SIM_SYMBOLS.filter((symbol) => cuePattern(SIM_STEP_CUES[symbol]!.cue).test(lower));
  const only = found.length === 1 ? found[0]! : null;
  if (only !== null && allowed.includes(only)) return only;
  return UNMAPPED;
}

/**
 * Reads a labeler prompt made from a registered authors' mapping template: the ontology as
 * rendered into it, and the passage's steps (its `<step_N>` tags, else its non-empty lines).
 */
export function readReferenceMappingPrompt(messages: readonly ChatMessage[]): { ontologyText: string; steps: string[] } | null {
  const user = messages.find((message) => message.role === 'user');
  if (user === undefined) return null;
  for (const template of simRegistry.mappingTemplates) {
    const values = matchTemplate(template, user.content);
    if (values?.reasoning === undefined || values.ontology === undefined) continue;
    const tagged = [...values.reasoning.matchAll(/<step_(\d+)>([\s\S]*?)<\/step_\1>/gu)].map((m) => (m[2] as string).trim());
    const steps =
      tagged.length > 0
        ? tagged
        : values.reasoning
            .split('\n')
            .map((line) => line.trim())
            .filter((line) => line !== '');
    return { ontologyText: values.ontology, steps };
  }
  return null;
}

/** The authors' output format: a JSON array of {step_index, category, symbol} inside <answer> tags. */
function referenceLabelerAnswer(prompt: { ontologyText: string; steps: string[] }): string {
  // A symbol is offered when its subcategory name appears in the rendered ontology.
  const allowed = SIM_SYMBOLS.filter((symbol) => prompt.ontologyText.includes(symbol.slice(symbol.indexOf('/') + 1)));
  const items = prompt.steps.map((step, i) => {
    const label = simLabelForStep(step, allowed);
    if (label === UNMAPPED) return { step_index: i + 1, category: UNMAPPED, symbol: UNMAPPED };
    const slash = label.indexOf('/');
    return { step_index: i + 1, category: label.slice(0, slash), symbol: label.slice(slash + 1) };
  });
  return `<answer>${JSON.stringify(items, null, 1)}</answer>`;
}

/** Creates a `sim:labeler`-family profile that reads the labeler prompt and labels by cue words (SIMULATION). */
export function createLabelerSimProfile(options: LabelerSimOptions): SimProfile {
  const malformed = options.malformedProbability ?? 0;
  checkProbability('malformedProbability', malformed);
  return {
    name: options.name,
    description:
      options.description ??
      `Simulation (measures nothing): labels each step by the cue word sim:memory planted in it${malformed > 0 ? `; malformed output with probability ${malformed}` : ''}.`,
    answer(request, seed) {
      const prompt = readLabelerPrompt(request.messages);
      if (prompt === null) {
        const reference = readReferenceMappingPrompt(request.messages);
        if (reference !== null) return { text: referenceLabelerAnswer(reference) };
        return { text: 'I can only label steps from a DriftLens labeler prompt.' };
      }
      // The transcript (a copy of a possibly megabyte prompt) is only built when it decides something.
      const transcript = () => request.messages.map((message) => `${message.role}:${message.content}`).join('\n');
      if (malformed > 0 && hashUnit('malformed', seed, request.sample, transcript()) < malformed) {
        return { text: `Here are the labels: step 1 is probably ${prompt.allowed[0] ?? UNMAPPED}.` };
      }
      const labels = prompt.steps.map((step, i) => ({ step: i + 1, label: simLabelForStep(step, prompt.allowed) }));
      return { text: JSON.stringify({ labels }) };
    },
  };
}

/** Registers `sim:memory`, `sim:memory-null`, `sim:memory-seeded`, `sim:memory-seeded-null` and `sim:labeler` (idempotent). */
export function registerMemorySimProfiles(): void {
  registerSimProfile(createMemorySimProfile({ name: 'memory' }));
  registerSimProfile(
    createMemorySimProfile({
      name: 'memory-null',
      ignorePerturbations: true,
      description: 'Simulation (measures nothing): DriftLens step-format answers that ignore every perturbation; only sampling noise varies (null profile).',
    }),
  );
  registerSimProfile(createMemorySimProfile({ name: 'memory-seeded', seedHonouring: true }));
  registerSimProfile(
    createMemorySimProfile({
      name: 'memory-seeded-null',
      seedHonouring: true,
      ignorePerturbations: true,
      description:
        'Simulation (measures nothing): a seed-honouring sampler that ignores every perturbation (same seed + same question = same answer); the complete null.',
    }),
  );
  registerSimProfile(createLabelerSimProfile({ name: 'labeler' }));
  registerSimProfile(
    createMemorySimProfile({
      name: 'memory-refusing',
      refusals: { none: 0.05, noise: 0.05, persona: 0.15, life_event: 0.3 },
      softRefusals: 0.5,
      description:
        'Simulation (measures nothing): sim:memory that also declines to answer — 5 % without memory or with noise, 15 % with a persona memory, 30 % with a life event; half of the refusals worded softly (the detector misses those, sim:refusal-judge does not).',
    }),
  );
  registerSimProfile(createRefusalJudgeSimProfile());
}
