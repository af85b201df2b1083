import { InvalidArgumentError } from '../core/errors.js';
import type { ChatMessage, DecodingParams } from '../models/types.js';
import { findJsonObjects } from '../core/json-extract.js';
import { promptMessages, reaskMessages } from './judge-messages.js';
import { type Ontology, ontologySymbols, renderOntology, UNMAPPED } from './ontology.js';

/** Labelers default to temperature 0 (docs/decisions.md#d1). */
export const LABELER_DEFAULT_PARAMS: Readonly<DecodingParams> = Object.freeze({ temperature: 0, maxTokens: 1024 });

export const LABELER_SYSTEM_PROMPT = 'You label reasoning steps with a value ontology. You answer with one JSON object and nothing else.';

export const ALLOWED_LABELS_HEADER = 'Allowed labels (copy exactly):';

export interface LabelerPromptOptions {
  /** Offer `unmapped` for steps no definition fits (default true; docs/decisions.md#d6). */
  allowUnmapped?: boolean;
}

/** Removes step tags from a step so the rendering below cannot be broken by its content. */
function cleanStep(step: string): string {
  return step.replace(/<\/?step[^>]*>/gi, '').trim();
}

/** Renders the numbered steps the labeler sees (and the sim labeler reads back). */
export function renderNumberedSteps(steps: readonly string[]): string {
  return steps.map((step, index) => `<step number="${index + 1}">\n${cleanStep(step)}\n</step>`).join('\n');
}

/**
 * The labeler prompt: ontology definitions, the numbered steps, and a demand for
 * exactly one `Category/Subcategory` label per step as strict JSON.
 */
export function buildLabelerMessages(steps: readonly string[], ontology: Ontology, options: LabelerPromptOptions = {}): ChatMessage[] {
  if (steps.length === 0) throw new InvalidArgumentError('steps', 'needs at least one step to label');
  const n = steps.length;
  const example = Array.from({ length: Math.min(n, 2) }, (_, i) => `{"step":${i + 1},"label":"<label>"}`).join(',');
  return labelerPrompt(
    ['Assign each reasoning step below to exactly one value in the ontology.', '', ...ontologyAndRules(ontology, options, [])],
    [
      `Steps (${n}):`,
      '<steps>',
      renderNumberedSteps(steps),
      '</steps>',
      '',
      `Answer with only this JSON object, with exactly ${n} entries numbered 1 to ${n} in order:`,
      `{"labels":[${example}${n > 2 ? ',…' : ''}]}`,
    ],
  );
}

/**
 * The labeler prompt as a cacheable prefix and a varying turn (docs/decisions.md#labeler-prompt-cache):
 * the system message holds everything that is the same on every call of a run (instructions,
 * ontology, rules, allowed labels), the user turn only the steps and the answer format. A
 * provider can then cache the system message (Anthropic: the adapter puts a breakpoint on a
 * system prompt long enough for the model's minimum; OpenAI caches a shared prefix on its own).
 */
function labelerPrompt(staticLines: readonly string[], varyingLines: readonly string[]): ChatMessage[] {
  return promptMessages(`${LABELER_SYSTEM_PROMPT}\n\n${staticLines.join('\n')}`, varyingLines);
}

/**
 * The same prompt in the shape echolens sent before the static part moved into the system
 * message (one short system line, then instructions and steps in one user turn), or null when
 * `messages` is not a labeler prompt of the current shape. A store written before the change
 * holds its labeler cells under the keys of this shape; the plan gives it as the cells'
 * `legacyRequests`, so such a store resumes without calling again.
 */
export function legacyLabelerMessages(messages: readonly ChatMessage[]): ChatMessage[] | null {
  const [system, user, ...rest] = messages;
  const head = `${LABELER_SYSTEM_PROMPT}\n\n`;
  if (system?.role !== 'system' || user?.role !== 'user' || !system.content.startsWith(head)) return null;
  return [{ role: 'system', content: LABELER_SYSTEM_PROMPT }, { role: 'user', content: `${system.content.slice(head.length)}\n\n${user.content}` }, ...rest];
}

/**
 * What both labeler prompts share: the ontology, the labeling rules (after any rules of the
 * prompt's own) and the allowed labels.
 */
function ontologyAndRules(ontology: Ontology, options: LabelerPromptOptions, ownRules: readonly string[]): string[] {
  const allowUnmapped = options.allowUnmapped ?? true;
  const labels = ontologySymbols(ontology);
  if (allowUnmapped) labels.push(UNMAPPED);
  return [
    '<ontology>',
    renderOntology(ontology),
    '</ontology>',
    '',
    'Rules:',
    ...ownRules,
    '- Label every step on its own, by what the step itself argues, not by the topic of the question.',
    '- First decide the category from its definition, inclusion cues, trigger verbs and exclusions; then pick the subcategory within it.',
    allowUnmapped
      ? `- Use "${UNMAPPED}" only when no category fits at all (for example a bare restatement of the question).`
      : '- Every step must get a category/subcategory label; there is no "unmapped" option.',
    '- Give exactly one label per step, using the exact label text from the list.',
    '',
    ALLOWED_LABELS_HEADER,
    ...labels.map((label) => `- ${label}`),
  ];
}

/**
 * The labeler prompt when it reads the whole response (labelerInput: whole-response, as the
 * reference's labeler does): the labeler splits the passage into steps itself, then labels
 * each; the answer has the same JSON form, with as many entries as it found steps.
 */
export function buildPassageLabelerMessages(passage: string, ontology: Ontology, options: LabelerPromptOptions = {}): ChatMessage[] {
  if (passage.trim() === '') throw new InvalidArgumentError('passage', 'needs a non-empty response to label');
  return labelerPrompt(
    [
      'Split the reasoning in the response below into its steps, in order, and assign each step to exactly one value in the ontology.',
      '',
      ...ontologyAndRules(ontology, options, ['- A step is one idea the response argues; keep the order in which the response gives them.']),
    ],
    [
      '<response>',
      passage.trim(),
      '</response>',
      '',
      'Answer with only this JSON object, one entry per step, numbered from 1 in order:',
      '{"labels":[{"step":1,"label":"<label>"},{"step":2,"label":"<label>"},…]}',
    ],
  );
}

/**
 * A well-formed labeler answer for `stepCount` steps (every step given the ontology's first
 * label): what a dry run prices a labeler call's output as, since the format fixes its length.
 */
export function typicalLabelerAnswer(stepCount: number, ontology: Ontology): string {
  const label = ontologySymbols(ontology)[0] ?? UNMAPPED;
  return JSON.stringify({ labels: Array.from({ length: stepCount }, (_, i) => ({ step: i + 1, label })) });
}

export type LabelerFailureReason = 'empty' | 'no_json' | 'multiple_json' | 'schema' | 'wrong_count' | 'step_numbers' | 'unknown_label';

export type LabelerParseResult =
  | { ok: true; symbols: string[]; unmappedCount: number; coercedUnknown: string[] }
  | { ok: false; reason: LabelerFailureReason; detail: string };

export interface LabelerParseOptions {
  /** Number of steps sent to the labeler; null = the labeler split a whole response (any count ≥ 1). */
  stepCount: number | null;
  /** The ontology (or its list of symbols) the labels must come from. */
  ontology: Ontology | readonly string[];
  /** An unknown label fails the parse (`error`, default) or becomes `unmapped`. */
  unknownLabel?: 'error' | 'unmapped';
  /** Whether `unmapped` is an accepted label (default true). */
  allowUnmapped?: boolean;
}

/** A label compared ignoring case, runs of spaces and spaces around "/". */
export function normalizeLabel(label: string): string {
  return label
    .trim()
    .replace(/\s*\/\s*/g, '/')
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

/**
 * Strict parser of the labeler output. Prose or code fences around the JSON are
 * tolerated only when exactly one JSON object is present. Labels are matched
 * to the ontology ignoring case and spacing around "/".
 */
export function parseLabelerOutput(text: string, options: LabelerParseOptions): LabelerParseResult {
  if (options.stepCount !== null && (!Number.isInteger(options.stepCount) || options.stepCount < 1)) {
    throw new InvalidArgumentError('stepCount', 'must be a positive integer or null');
  }
  if (text.trim() === '') return { ok: false, reason: 'empty', detail: 'empty output' };
  const search = findJsonObjects(text);
  if (search.kind === 'none') return { ok: false, reason: 'no_json', detail: 'no JSON object found' };
  if (search.kind === 'many') {
    return { ok: false, reason: 'multiple_json', detail: `${search.count} JSON objects found, expected one` };
  }
  const labels = search.value.labels;
  if (!Array.isArray(labels)) return { ok: false, reason: 'schema', detail: '"labels" must be an array' };
  if (options.stepCount === null ? labels.length === 0 : labels.length !== options.stepCount) {
    return {
      ok: false,
      reason: 'wrong_count',
      detail: options.stepCount === null ? 'no labels' : `${labels.length} labels for ${options.stepCount} steps`,
    };
  }
  const symbols = Array.isArray(options.ontology) ? [...options.ontology] : ontologySymbols(options.ontology as Ontology);
  const known = new Map(symbols.map((symbol) => [normalizeLabel(symbol), symbol]));
  const allowUnmapped = options.allowUnmapped ?? true;
  if (allowUnmapped) known.set(UNMAPPED, UNMAPPED);

  const out: string[] = [];
  const coercedUnknown: string[] = [];
  for (let i = 0; i < labels.length; i += 1) {
    const entry = labels[i] as unknown;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      return { ok: false, reason: 'schema', detail: `labels[${i}] must be an object {step, label}` };
    }
    const { step, label } = entry as { step?: unknown; label?: unknown };
    const stepNumber = typeof step === 'string' && /^\d+$/.test(step.trim()) ? Number(step) : step;
    if (typeof stepNumber !== 'number' || !Number.isInteger(stepNumber)) {
      return { ok: false, reason: 'schema', detail: `labels[${i}].step must be an integer` };
    }
    if (stepNumber !== i + 1) {
      return { ok: false, reason: 'step_numbers', detail: `labels[${i}].step is ${stepNumber}, expected ${i + 1}` };
    }
    if (typeof label !== 'string' || label.trim() === '') {
      return { ok: false, reason: 'schema', detail: `labels[${i}].label must be a non-empty string` };
    }
    const symbol = known.get(normalizeLabel(label));
    if (symbol !== undefined) {
      out.push(symbol);
      continue;
    }
    if (options.unknownLabel === 'unmapped' && allowUnmapped) {
      out.push(UNMAPPED);
      coercedUnknown.push(label);
      continue;
    }
    return { ok: false, reason: 'unknown_label', detail: `labels[${i}].label "${label}" is not in the ontology` };
  }
  return { ok: true, symbols: out, unmappedCount: out.filter((s) => s === UNMAPPED).length, coercedUnknown };
}

/**
 * Messages for a re-ask after an invalid labeler output (docs/decisions.md#d2): the
 * original conversation, the bad answer, and a short format reminder.
 */
export function buildLabelerReaskMessages(
  original: readonly ChatMessage[],
  badOutput: string,
  failure: { reason: LabelerFailureReason; detail: string },
  stepCount: number | null,
): ChatMessage[] {
  const reminder = [
    `Your answer could not be used (${failure.detail}).`,
    `Reply with only one JSON object of the form {"labels":[{"step":1,"label":"Category/Subcategory"},…]}`,
    stepCount === null
      ? 'with one entry per step, steps numbered from 1 in order, each label copied exactly from the allowed list. No other text.'
      : `with exactly ${stepCount} entries, steps numbered 1 to ${stepCount} in order, each label copied exactly from the allowed list. No other text.`,
  ].join(' ');
  return reaskMessages(original, badOutput, reminder);
}

/** Re-asks after the first labeler answer (docs/decisions.md#d2: default 2 more times). */
export const DEFAULT_LABELER_REASKS = 2;

export type LabelingNext =
  | { kind: 'done'; symbols: string[]; unmappedCount: number; coercedUnknown: string[]; attempts: number }
  | { kind: 'reask'; messages: ChatMessage[]; attempt: number; failure: { reason: LabelerFailureReason; detail: string } }
  | { kind: 'invalid'; failures: { reason: LabelerFailureReason; detail: string }[]; attempts: number };

/**
 * What to do after the labeler outputs so far (pure; the calls are cells run
 * elsewhere). `outputs[0]` answers the original prompt, `outputs[i]` the i-th
 * re-ask. The first valid output wins; each re-ask carries every earlier bad
 * answer and reminder, so every attempt is a distinct request (a distinct cell
 * key even at temperature 0). After `maxReasks` failed re-asks the item is
 * invalid: excluded from means and counted.
 */
export function nextLabelingStep(
  original: readonly ChatMessage[],
  outputs: readonly string[],
  options: LabelerParseOptions & { maxReasks?: number },
): LabelingNext {
  const maxReasks = options.maxReasks ?? DEFAULT_LABELER_REASKS;
  if (!Number.isInteger(maxReasks) || maxReasks < 0) throw new InvalidArgumentError('maxReasks', 'must be a non-negative integer');
  if (outputs.length === 0) throw new InvalidArgumentError('outputs', 'needs the answer to the original prompt');
  if (outputs.length > maxReasks + 1) {
    throw new InvalidArgumentError('outputs', `at most ${maxReasks + 1} attempts are allowed, got ${outputs.length}`);
  }
  const failures: { reason: LabelerFailureReason; detail: string }[] = [];
  let conversation: ChatMessage[] = [...original];
  for (const [index, output] of outputs.entries()) {
    const parsed = parseLabelerOutput(output, options);
    if (parsed.ok) {
      const { ok: _, ...labels } = parsed;
      return { kind: 'done', ...labels, attempts: index + 1 };
    }
    const failure = { reason: parsed.reason, detail: parsed.detail };
    failures.push(failure);
    conversation = buildLabelerReaskMessages(conversation, output, failure, options.stepCount);
  }
  if (outputs.length > maxReasks) return { kind: 'invalid', failures, attempts: outputs.length };
  return { kind: 'reask', messages: conversation, attempt: outputs.length, failure: failures.at(-1)! };
}
